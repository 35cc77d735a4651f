//! The workspaces of server-side history: the one shown, a switcher between them, and making or
//! renaming one. Part of the sidebar's `server_sidebar` chunk (see [`super::sidebar`]).

use leptos::prelude::*;

use crate::client::controller::ChatController;

/// The workspace shown, as one line of the sidebar that opens to the others and to making or
/// renaming one.
#[component]
pub fn Workspaces() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let naming = RwSignal::new(None::<bool>);
    let draft = RwSignal::new(String::new());
    let t = crate::ui::locale::tr();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let name = draft.get_untracked();
        if !name.trim().is_empty() {
            match naming.get_untracked() {
                Some(true) => chat.create_workspace(name),
                Some(false) => chat.rename_workspace(name),
                None => {}
            }
        }
        naming.set(None);
    };
    let current = move || {
        chat.workspaces.with(|l| {
            let id = chat.workspace.get();
            l.iter()
                .find(|w| Some(&w.id) == id.as_ref())
                .or(l.first())
                .map(|w| workspace_name(&w.name, t))
        })
    };
    let menu = NodeRef::<leptos::html::Details>::new();
    let close = move || {
        if let Some(m) = menu.get_untracked() {
            m.set_open(false);
        }
    };
    view! {
        // One line above the chats: the workspace shown, which opens to the others and to
        // making or renaming one.
        <details class="menu workspace-menu" node_ref=menu>
            <summary class="workspace-button">
                <span class="workspace-label">{t.workspace}</span>
                <span class="workspace-current" dir="auto">{current}</span>
            </summary>
            <div class="menu-panel workspace-panel">
                <ul class="workspace-list" aria-label=t.workspace>
                    <For each=move || chat.workspaces.get() key=|w| (w.id.clone(), w.name.clone()) let:w>
                        {
                            let id = w.id.clone();
                            let shown = {
                                let id = id.clone();
                                move || chat.workspace.get().as_deref() == Some(id.as_str())
                            };
                            view! {
                                <li>
                                    <button
                                        type="button"
                                        class="workspace-option"
                                        dir="auto"
                                        aria-current=move || shown().then_some("true")
                                        on:click=move |_| {
                                            chat.switch_workspace(id.clone());
                                            close();
                                        }
                                    >
                                        {workspace_name(&w.name, t)}
                                    </button>
                                </li>
                            }
                        }
                    </For>
                </ul>
                {move || match naming.get() {
                    None => view! {
                        <div class="workspace-actions">
                            <button type="button" class="action" on:click=move |_| { draft.set(String::new()); naming.set(Some(true)); chat.want_list_actions(); }>{t.new_workspace}</button>
                            <button type="button" class="action" on:click=move |_| {
                                draft.set(current().unwrap_or_default());
                                naming.set(Some(false));
                                chat.want_list_actions();
                            }>{t.rename_workspace}</button>
                        </div>
                    }.into_any(),
                    Some(creating) => view! {
                        <form class="rename-form" on:submit=move |ev| { submit(ev); close(); }>
                            <input
                                type="text"
                                aria-label=if creating { t.new_workspace_name } else { t.workspace_name }
                                prop:value=move || draft.get()
                                on:input=move |ev| draft.set(event_target_value(&ev))
                            />
                            <button type="submit" class="action">{if creating { t.create } else { t.save }}</button>
                            <button type="button" class="action" on:click=move |_| naming.set(None)>{t.cancel}</button>
                        </form>
                    }.into_any(),
                }}
            </div>
        </details>
    }
}

/// A workspace's name as the reader reads it: the first workspace's stored name in their
/// language, any other as its owner wrote it.
pub fn workspace_name(name: &str, t: &crate::i18n::Catalogue) -> String {
    if name == crate::domain::history::FIRST_WORKSPACE {
        t.first_workspace.to_string()
    } else {
        name.to_string()
    }
}
