//! The settings' Instructions section: every level of system instructions that applies to the
//! chat shown, in one place. The administrator's level for the chat's model (read only), the
//! reader's own, the workspace's and the chat's (each editable), and the text the model is sent.
//! It is part of the settings panel's chunk (`menu_panels`).

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::client::controller::ChatController;
use crate::domain::instructions::{Instructions, Level};
use crate::domain::Failure;

/// Opens the settings at the chat's instructions (a row menu's "Instructions"): the field takes
/// the focus now if the section is drawn, else when it is.
pub fn open_at_chat_instructions(chat: ChatController) {
    chat.to_instructions.set_value(true);
    if let Some(menu) = crate::ui::dom::find("#settings-menu") {
        use leptos::wasm_bindgen::JsCast;
        if let Ok(menu) = menu.dyn_into::<web_sys::HtmlDetailsElement>() {
            menu.set_open(true);
        }
    }
    request_animation_frame(move || take_focus(chat));
}

/// Gives the chat's instructions field the focus, if it was asked for and is drawn.
fn take_focus(chat: ChatController) {
    if chat.to_instructions.get_value() && crate::ui::dom::find("#instructions-chat").is_some() {
        chat.to_instructions.set_value(false);
        crate::ui::dom::focus_by_id("instructions-chat");
    }
}

/// The texts as loaded, to send only what the reader changed.
#[derive(Clone, Default, PartialEq)]
struct Loaded {
    admin: Option<String>,
    personal: String,
    workspace: String,
    chat: String,
}

/// The section, for a signed-in reader (the server keeps the reader's own level).
#[component]
pub fn InstructionsPanel() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let loaded = RwSignal::new(Loaded::default());
    let personal = RwSignal::new(String::new());
    let workspace = RwSignal::new(String::new());
    let own = RwSignal::new(String::new());
    let failed = RwSignal::new(None::<Failure>);
    let busy = RwSignal::new(false);
    let load = move || {
        let on_server = chat.chat_on_server();
        let conversation = on_server.then(|| chat.conversation_id.get_untracked());
        let space = chat.workspace.get_untracked();
        let model = chat.model.get_untracked();
        spawn_local(async move {
            match crate::api::instructions::get_instructions(conversation, space, model).await {
                Ok(set) => {
                    let text = |level| set.get(level).unwrap_or_default().to_string();
                    let now = Loaded {
                        admin: set.get(Level::Model).map(str::to_string),
                        personal: text(Level::Personal),
                        workspace: text(Level::Workspace),
                        chat: if on_server {
                            text(Level::Conversation)
                        } else {
                            chat.instructions.get_untracked().unwrap_or_default()
                        },
                    };
                    // A field the reader has changed since the last load keeps their text: a
                    // load again (the model list arrived, the chat changed) must not undo typing.
                    let before = loaded.get_untracked();
                    for (field, was, is) in [
                        (personal, &before.personal, &now.personal),
                        (workspace, &before.workspace, &now.workspace),
                        (own, &before.chat, &now.chat),
                    ] {
                        if field.with_untracked(|f| f == was) {
                            field.set(is.clone());
                        }
                    }
                    loaded.set(now);
                    failed.set(None);
                }
                Err(e) => failed.set(Some(e.0)),
            }
        });
    };
    Effect::new(move |_| take_focus(chat));
    Effect::new(move |_| {
        chat.conversation_id.track();
        chat.workspace.track();
        chat.model.track();
        load();
    });
    let sent = move || {
        Instructions::of([
            (Level::Model, loaded.with(|l| l.admin.clone())),
            (Level::Personal, Some(personal.get())),
            (Level::Workspace, Some(workspace.get())),
            (Level::Conversation, Some(own.get())),
        ])
        .combined()
    };
    let save = move |_| {
        let before = loaded.get_untracked();
        let (mine, space, ours) = (
            personal.get_untracked(),
            workspace.get_untracked(),
            own.get_untracked(),
        );
        let on_server = chat.chat_on_server();
        let conversation = chat.conversation_id.get_untracked();
        let workspace_id = chat.workspace.get_untracked();
        let own_text = Some(ours.trim().to_string()).filter(|t| !t.is_empty());
        if !on_server && ours != before.chat {
            chat.keep_own_instructions(own_text.clone());
        }
        busy.set(true);
        failed.set(None);
        spawn_local(async move {
            use crate::api::instructions::set_instructions;
            let mut changes = Vec::new();
            if mine != before.personal {
                changes.push((Level::Personal, None, mine));
            }
            if space != before.workspace && chat.server.get_untracked() {
                changes.push((Level::Workspace, workspace_id, space));
            }
            if on_server && ours != before.chat {
                changes.push((Level::Conversation, Some(conversation), ours));
            }
            let mut result = Ok(());
            for (level, id, text) in changes {
                result = set_instructions(level, id, text).await.map_err(|e| e.0);
                if result.is_err() {
                    break;
                }
            }
            match result {
                Ok(()) => {
                    if on_server {
                        chat.instructions.set(own_text);
                    }
                    chat.status.set(t.instructions_saved.to_string());
                }
                Err(e) => failed.set(Some(e)),
            }
            busy.set(false);
            load();
        });
    };
    let field = move |id: &'static str, label: &'static str, text: RwSignal<String>| {
        view! {
            <label class="instructions-label" for=id>{label}</label>
            <textarea id=id class="instructions-text" rows="3" dir="auto"
                maxlength=crate::domain::instructions::MAX_INSTRUCTION_CHARS
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))></textarea>
        }
    };
    view! {
        <fieldset class="instructions-panel">
            <legend>{t.instructions_title}</legend>
            {move || loaded.with(|l| l.admin.clone()).map(|admin| view! {
                <div class="instructions-admin">
                    <p class="menu-note">{t.instructions_admin}</p>
                    <p class="instructions-admin-text" dir="auto">{admin}</p>
                </div>
            })}
            {field("instructions-personal", t.instructions_personal, personal)}
            <Show when=move || chat.server.get()>
                {field("instructions-workspace", t.instructions_workspace, workspace)}
            </Show>
            {field("instructions-chat", t.instructions_chat, own)}
            <button type="button" class="action primary instructions-save"
                disabled=move || busy.get() on:click=save>{t.save}</button>
            {move || failed.get().map(|e| view! { <p class="error-message" role="alert">{crate::client::labels::failure_text(&e, l)}</p> })}
            <h3 class="instructions-sent-title">{t.instructions_sent}</h3>
            {move || match sent() {
                Some(text) => view! { <pre class="instructions-sent" dir="auto">{text}</pre> }.into_any(),
                None => view! { <p class="menu-note">{t.instructions_none}</p> }.into_any(),
            }}
        </fieldset>
    }
}
