//! The conversation list: a sidebar on wide screens, a drawer on narrow ones. New chat, switch,
//! rename, delete (with a confirmation), most recent first.

use leptos::prelude::*;

use crate::client::controller::ChatController;
use crate::client::saved_chat::ConversationSummary;

/// The saved conversations (a drawer on narrow screens): new chat, open, rename, delete.
#[component]
pub fn Sidebar(
    /// Whether the drawer is open on a narrow screen.
    open: RwSignal<bool>,
) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    view! {
        <div class="drawer-backdrop" class:open=move || open.get() on:click=move |_| open.set(false)></div>
        <nav id="conversations" class="sidebar" class:open=move || open.get() aria-label="Conversations">
            <button
                type="button"
                class="new-chat"
                on:click=move |_| {
                    chat.new_chat();
                    open.set(false);
                }
            >
                "+ New chat"
            </button>
            <ul class="conversation-list">
                <For each=move || chat.conversations.get() key=|c| (c.id.clone(), c.title.clone()) let:item>
                    <ConversationItem item close=move || open.set(false)/>
                </For>
            </ul>
        </nav>
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    Renaming,
    ConfirmDelete,
}

#[component]
fn ConversationItem(
    item: ConversationSummary,
    close: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let mode = RwSignal::new(Mode::Normal);
    let draft = RwSignal::new(item.title.clone());
    let id = StoredValue::new(item.id.clone());
    let current = move || chat.conversation_id.with(|c| id.with_value(|id| c == id));
    let title = if item.title.is_empty() {
        "New chat".to_string()
    } else {
        item.title.clone()
    };
    let title_for_label = title.clone();

    view! {
        <li class="conversation-item" class:current=current>
            {move || match mode.get() {
                Mode::Normal => view! {
                    <button
                        type="button"
                        class="conversation-open"
                        aria-current=move || current().then_some("page")
                        on:click=move |_| {
                            id.with_value(|id| chat.open(id));
                            close();
                        }
                    >
                        {title.clone()}
                    </button>
                    <button type="button" class="action" aria-label=format!("Rename {title_for_label}") on:click=move |_| mode.set(Mode::Renaming)>
                        "Rename"
                    </button>
                    <button type="button" class="action danger" aria-label=format!("Delete {title_for_label}") on:click=move |_| mode.set(Mode::ConfirmDelete)>
                        "Delete"
                    </button>
                }
                .into_any(),
                Mode::Renaming => view! {
                    <form
                        class="rename-form"
                        on:submit=move |ev| {
                            ev.prevent_default();
                            id.with_value(|id| chat.rename(id, draft.get_untracked()));
                            mode.set(Mode::Normal);
                        }
                    >
                        <label class="visually-hidden" for=move || id.with_value(|id| format!("rename-{id}"))>"New title"</label>
                        <input
                            id=move || id.with_value(|id| format!("rename-{id}"))
                            type="text"
                            prop:value=move || draft.get()
                            on:input=move |ev| draft.set(event_target_value(&ev))
                            on:keydown=move |ev| {
                                if ev.key() == "Escape" {
                                    mode.set(Mode::Normal);
                                }
                            }
                        />
                        <button type="submit" class="action">"Save"</button>
                        <button type="button" class="action" on:click=move |_| mode.set(Mode::Normal)>"Cancel"</button>
                    </form>
                }
                .into_any(),
                Mode::ConfirmDelete => view! {
                    <div class="confirm-delete" role="group" aria-label="Confirm delete">
                        <span>"Delete this chat?"</span>
                        <button
                            type="button"
                            class="action danger"
                            on:click=move |_| {
                                id.with_value(|id| chat.delete(id));
                                mode.set(Mode::Normal);
                            }
                        >
                            "Yes, delete"
                        </button>
                        <button type="button" class="action" on:click=move |_| mode.set(Mode::Normal)>"Keep"</button>
                    </div>
                }
                .into_any(),
            }}
        </li>
    }
}
