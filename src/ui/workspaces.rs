//! The workspaces of server-side history: the one shown, a switcher between them, and making or
//! renaming one. Part of the sidebar's `server_sidebar` chunk (see [`super::sidebar`]).

use leptos::prelude::*;

use crate::client::controller::ChatController;

/// The workspace shown, a switcher between them, and making or renaming one.
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
    view! {
        <div class="workspaces">
            <label class="workspace-picker">
                {t.workspace}
                <select
                    prop:value=move || chat.workspace.get().unwrap_or_default()
                    on:change=move |ev| chat.switch_workspace(event_target_value(&ev))
                >
                    <For each=move || chat.workspaces.get() key=|w| (w.id.clone(), w.name.clone()) let:w>
                        <option value=w.id.clone() selected=move || chat.workspace.get().as_deref() == Some(w.id.as_str())>{workspace_name(&w.name, t)}</option>
                    </For>
                </select>
            </label>
            {move || match naming.get() {
                None => view! {
                    <div class="workspace-actions">
                        <button type="button" class="action" on:click=move |_| { draft.set(String::new()); naming.set(Some(true)); chat.want_list_actions(); }>{t.new_workspace}</button>
                        <button type="button" class="action" on:click=move |_| {
                            let name = chat.workspaces.with_untracked(|l| {
                                let id = chat.workspace.get_untracked();
                                l.iter().find(|w| Some(&w.id) == id.as_ref()).map(|w| workspace_name(&w.name, t))
                            });
                            draft.set(name.unwrap_or_default());
                            naming.set(Some(false));
                            chat.want_list_actions();
                        }>{t.rename_workspace}</button>
                    </div>
                }.into_any(),
                Some(creating) => view! {
                    <form class="rename-form" on:submit=submit>
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
    }
}

/// A workspace's name as the reader reads it: the first workspace's stored name in their
/// language, any other as its owner wrote it.
fn workspace_name(name: &str, t: &crate::i18n::Catalogue) -> String {
    if name == crate::domain::history::FIRST_WORKSPACE {
        t.first_workspace.to_string()
    } else {
        name.to_string()
    }
}
