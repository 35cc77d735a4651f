//! The conversation list itself: the pinned chats, then the rest under Today, Yesterday,
//! Previous 7 days and Older, narrowed by a tag when one is chosen; each with its menu (rename,
//! instructions, pin, tags, move to another workspace, delete with a confirmation). A page with nothing to list never
//! runs this code, so it is a chunk of its own (`conversation_list`), fetched once the first chat
//! is listed.

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use super::icons::{icon, Icon};
use super::menus::one_menu_open;
use crate::client::browser::local_day;
use crate::client::controller::{now_ms, ChatController};
use crate::client::date_groups::{group_by_date, DateGroup};
use crate::client::saved_chat::ConversationSummary;

/// Builds the list; its callback closes the drawer once a chat is opened.
pub type ConversationListCode = fn(Callback<()>) -> AnyView;

/// The list, from the `conversation_list` chunk.
#[leptos::wasm_split::wasm_split(conversation_list, wasm_split_path = leptos::wasm_split, fallible)]
pub fn conversation_list_code() -> Result<ConversationListCode, SplitLoaderError> {
    Ok(|close| view! { <ConversationGroups close/> }.into_any())
}

/// The conversations, most recent first, under Today, Yesterday, Previous 7 days and Older.
#[component]
fn ConversationGroups(close: Callback<()>) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let groups = Memo::new(move |_| {
        let tag = chat.tag_filter.get();
        chat.conversations.with(|list| match &tag {
            Some(tag) => {
                let shown: Vec<ConversationSummary> = list
                    .iter()
                    .filter(|c| c.tags.contains(tag))
                    .cloned()
                    .collect();
                group_by_date(&shown, now_ms(), local_day)
            }
            None => group_by_date(list, now_ms(), local_day),
        })
    });
    let items_of = move |group: DateGroup| {
        groups.with(|g| {
            g.iter()
                .find(|(g, _)| *g == group)
                .map(|(_, items)| items.clone())
                .unwrap_or_default()
        })
    };
    view! {
        <TagFilter/>
        <For each=move || groups.with(|g| g.iter().map(|(g, _)| *g).collect::<Vec<_>>()) key=|g| *g let:group>
            <section class="conversation-group" aria-labelledby=format!("group-{group:?}")>
                <h2 class="group-label" id=format!("group-{group:?}")>{group.label(crate::ui::locale::tr())}</h2>
                <ul class="conversation-list">
                    <For each=move || items_of(group) key=|c| (c.id.clone(), c.title.clone(), c.pinned, c.tags.clone()) let:item>
                        <ConversationItem item close/>
                    </For>
                </ul>
            </section>
        </For>
    }
}

/// Every tag in the list, each a toggle that narrows the list to its chats; nothing when no
/// chat has a tag.
#[component]
fn TagFilter() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let tags = Memo::new(move |_| {
        let mut all: Vec<String> = Vec::new();
        chat.conversations.with(|list| {
            for tag in list.iter().flat_map(|c| &c.tags) {
                if !all.contains(tag) {
                    all.push(tag.clone());
                }
            }
        });
        all.sort_by_key(|t| t.to_lowercase());
        all
    });
    view! {
        <Show when=move || tags.with(|t| !t.is_empty())>
            <div class="tag-filter" role="group" aria-label=t.filter_by_tag>
                <button type="button" class="tag-chip" aria-pressed=move || chat.tag_filter.with(Option::is_none).to_string()
                    on:click=move |_| chat.tag_filter.set(None)>{t.all_chats}</button>
                <For each=move || tags.get() key=|t| t.clone() let:tag>
                    {
                        let pressed = tag.clone();
                        let chosen = tag.clone();
                        view! {
                            <button type="button" class="tag-chip" dir="auto"
                                aria-pressed=move || chat.tag_filter.with(|f| f.as_ref() == Some(&pressed)).to_string()
                                on:click=move |_| chat.tag_filter.set(Some(chosen.clone()))>{tag}</button>
                        }
                    }
                </For>
            </div>
        </Show>
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    Renaming,
    Tagging,
    ConfirmDelete,
}

#[component]
fn ConversationItem(item: ConversationSummary, close: Callback<()>) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let mode = RwSignal::new(Mode::Normal);
    let t = crate::ui::locale::tr();
    let title = crate::i18n::title(t, &item.title);
    // The field holds the title as the reader reads it; an untitled chat starts empty.
    let original = if item.title.is_empty() {
        String::new()
    } else {
        title.clone()
    };
    let draft = RwSignal::new(original.clone());
    let tags_draft = RwSignal::new(item.tags.join(", "));
    let pinned = item.pinned;
    let tags = item.tags.clone();
    let id = StoredValue::new(item.id.clone());
    let on_server = move || chat.server.get();
    let elsewhere = move || {
        let here = chat.workspace.get();
        chat.workspaces.with(|all| {
            all.iter()
                .filter(|w| here.as_ref() != Some(&w.id))
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    let current = move || chat.conversation_id.with(|c| id.with_value(|id| c == id));
    let title_for_label = title.clone();
    let rename_input = NodeRef::<leptos::html::Input>::new();
    // Renaming starts in the field, its text selected; leaving it puts the focus back on the
    // row's menu button.
    Effect::new(move |_| {
        if let Some(el) = rename_input.get() {
            // The value is put in here, before selecting: the binding that also sets it may run
            // later, and a value set after the selection would collapse it to the end.
            let text = if mode.get_untracked() == Mode::Tagging {
                tags_draft
            } else {
                draft
            };
            el.set_value(&text.get_untracked());
            let _ = el.focus();
            el.select();
            request_animation_frame(move || el.select());
        }
    });
    let tags_before = item.tags.join(", ");
    let stop_renaming = move || {
        draft.set(original.clone());
        tags_draft.set(tags_before.clone());
        mode.set(Mode::Normal);
        let label = id.with_value(|id| format!("row-menu-{id}"));
        request_animation_frame(move || {
            if let Some(el) = document().get_element_by_id(&label) {
                if let Some(el) = leptos::wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlElement>(&el)
                {
                    let _ = el.focus();
                }
            }
        });
    };
    let stop_renaming = StoredValue::new(stop_renaming);

    view! {
        <li class="conversation-item" class:current=current>
            {move || match mode.get() {
                Mode::Normal => view! {
                    <button
                        type="button"
                        class="conversation-open"
                        dir="auto"
                        aria-current=move || current().then_some("page")
                        on:click=move |_| {
                            id.with_value(|id| chat.open(id));
                            close.run(());
                        }
                    >
                        {title.clone()}
                        {(!tags.is_empty()).then(|| view! { <span class="row-tags">{tags.join(" · ")}</span> })}
                    </button>
                    <details class="menu row-menu" on:toggle=one_menu_open>
                        <summary
                            class="icon-button"
                            id=move || id.with_value(|id| format!("row-menu-{id}"))
                            aria-label=crate::i18n::fill(t.options_for, &[("title", &title_for_label)])
                        >
                            {icon(Icon::More)}
                        </summary>
                        <div class="menu-panel">
                            <button type="button" class="menu-item" on:click=move |_| { mode.set(Mode::Renaming); chat.want_list_actions(); }>
                                {icon(Icon::Edit)}
                                {t.rename}
                            </button>
                            <button type="button" class="menu-item" on:click=move |_| {
                                if !current() {
                                    id.with_value(|id| chat.open(id));
                                }
                                close.run(());
                                super::instructions_panel::open_at_chat_instructions(chat);
                            }>
                                {icon(Icon::Edit)}
                                {t.instructions_title}
                            </button>
                            <Show when=on_server>
                                <button type="button" class="menu-item" on:click=move |_| id.with_value(|id| chat.pin(id.clone(), !pinned))>
                                    {icon(Icon::Check)}
                                    {if pinned { t.unpin } else { t.pin }}
                                </button>
                                <button type="button" class="menu-item" on:click=move |_| { mode.set(Mode::Tagging); chat.want_list_actions(); }>
                                    {icon(Icon::Edit)}
                                    {t.tags}
                                </button>
                                <For each=elsewhere key=|w| w.id.clone() let:space>
                                    {
                                        let name = super::workspaces::workspace_name(&space.name, t);
                                        view! {
                                            <button type="button" class="menu-item" on:click=move |_| id.with_value(|id| chat.move_to(id.clone(), space.id.clone()))>
                                                {icon(Icon::Next)}
                                                {crate::i18n::fill(t.move_to, &[("workspace", &name)])}
                                            </button>
                                        }
                                    }
                                </For>
                            </Show>
                            <button type="button" class="menu-item danger" on:click=move |_| { mode.set(Mode::ConfirmDelete); chat.want_list_actions(); }>
                                {icon(Icon::Trash)}
                                {t.delete}
                            </button>
                        </div>
                    </details>
                }
                .into_any(),
                m @ (Mode::Renaming | Mode::Tagging) => {
                    let tagging = m == Mode::Tagging;
                    let (prefix, label, text) = if tagging {
                        ("tags", t.tags_field, tags_draft)
                    } else {
                        ("rename", t.new_title, draft)
                    };
                    view! {
                        <form
                            class="rename-form"
                            on:submit=move |ev| {
                                ev.prevent_default();
                                let value = text.get_untracked();
                                id.with_value(|id| if tagging { chat.set_tags(id.clone(), &value) } else { chat.rename(id, value) });
                                mode.set(Mode::Normal);
                            }
                        >
                            <label class="visually-hidden" for=move || id.with_value(|id| format!("{prefix}-{id}"))>{label}</label>
                            <input
                                node_ref=rename_input
                                id=move || id.with_value(|id| format!("{prefix}-{id}"))
                                type="text"
                                prop:value=move || text.get()
                                on:input=move |ev| text.set(event_target_value(&ev))
                                on:keydown=move |ev| {
                                    if ev.key() == "Escape" {
                                        ev.prevent_default();
                                        stop_renaming.with_value(|stop| stop());
                                    }
                                }
                            />
                            <button type="submit" class="action">{t.save}</button>
                            <button type="button" class="action" on:click=move |_| stop_renaming.with_value(|stop| stop())>{t.cancel}</button>
                        </form>
                    }
                    .into_any()
                }
                Mode::ConfirmDelete => view! {
                    <div class="confirm-delete" role="group" aria-label=t.confirm_delete>
                        <span>{t.delete_this_chat}</span>
                        <button
                            type="button"
                            class="action danger"
                            on:click=move |_| {
                                id.with_value(|id| chat.delete(id));
                                mode.set(Mode::Normal);
                            }
                        >
                            {t.yes_delete}
                        </button>
                        <button type="button" class="action" on:click=move |_| stop_renaming.with_value(|back| back())>{t.keep}</button>
                    </div>
                }
                .into_any(),
            }}
        </li>
    }
}
