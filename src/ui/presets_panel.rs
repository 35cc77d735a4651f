//! Presets in the model picker: the shared ones and the reader's own, each picked in one
//! click (model, reasoning, parameters and instructions), and the current settings saved as a
//! new one. Part of the `menu_panels` chunk; the list loads when the picker first opens.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::client::controller::ChatController;
use crate::domain::preset::{Preset, MAX_PRESET_NAME};

/// The presets, above the model list; picking one closes the picker.
#[component]
pub fn PresetList(
    /// The picker's menu, closed once a preset is picked.
    menu: NodeRef<leptos::html::Details>,
) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    spawn_local(async move {
        if let Ok(list) = crate::api::presets::list_presets().await {
            chat.presets.set(list);
        }
    });
    let pick = move |preset: Preset| {
        chat.apply_preset(&preset);
        if let Some(menu) = menu.get_untracked() {
            menu.set_open(false);
        }
    };
    let delete = move |id: String| {
        spawn_local(async move {
            match crate::api::presets::delete_preset(id.clone()).await {
                Ok(()) => chat.presets.update(|list| list.retain(|p| p.id != id)),
                Err(e) => chat
                    .status
                    .set(crate::client::labels::failure_text(&e.0, chat.locale)),
            }
        });
    };
    view! {
        <Show when=move || chat.presets.with(|p| !p.is_empty())>
            <h3 class="presets-title" id="presets-title">{t.presets}</h3>
            <ul class="preset-list" aria-labelledby="presets-title">
                <For
                    each=move || chat.presets.get()
                    key=|p| (p.id.clone(), p.name.clone())
                    children=move |preset| {
                        let label = crate::i18n::fill(t.preset_delete, &[("name", &preset.name)]);
                        let id = preset.id.clone();
                        let editable = preset.editable;
                        let shared = preset.shared;
                        let name = preset.name.clone();
                        view! {
                            <li class="preset">
                                <button type="button" class="preset-option" on:click=move |_| pick(preset.clone())>
                                    <span dir="auto">{name}</span>
                                    {shared.then(|| view! { <span class="model-tag">{t.preset_shared_tag}</span> })}
                                </button>
                                {editable.then(|| view! {
                                    <button type="button" class="preset-delete" aria-label=label.clone() title=label
                                        on:click=move |_| delete(id.clone())>"×"</button>
                                })}
                            </li>
                        }
                    }
                />
            </ul>
        </Show>
    }
}

/// "Save these settings as a preset…": a name, the instructions (the chat's own to start
/// with) and, for an administrator, whether everyone gets it.
#[component]
pub fn PresetSave() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let name = RwSignal::new(String::new());
    let instructions = RwSignal::new(String::new());
    let shared = RwSignal::new(false);
    let failed = RwSignal::new(None::<String>);
    let admin = move || {
        chat.me.with(|m| {
            m.as_ref()
                .and_then(|m| m.account.as_ref())
                .is_some_and(|a| a.is_admin)
        })
    };
    let open = RwSignal::new(false);
    let toggle = move |_| {
        if !open.get_untracked() {
            instructions.set(chat.instructions.get_untracked().unwrap_or_default());
        }
        open.update(|o| *o = !*o);
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let preset = Preset {
            name: name.get_untracked(),
            model: Some(chat.current_model()).filter(|m| !m.is_empty()),
            settings: chat.composer_settings(),
            instructions: Some(instructions.get_untracked()),
            shared: shared.get_untracked() && admin(),
            ..Preset::default()
        };
        spawn_local(async move {
            match crate::api::presets::save_preset(preset).await {
                Ok(kept) => {
                    failed.set(None);
                    name.set(String::new());
                    open.set(false);
                    chat.presets.update(|list| list.push(kept));
                    chat.status.set(t.preset_saved.to_string());
                }
                Err(e) => failed.set(Some(crate::client::labels::failure_text(&e.0, chat.locale))),
            }
        });
    };
    view! {
        <div class="preset-new">
            <button type="button" class="preset-new-toggle" aria-expanded=move || open.get().to_string()
                aria-controls="preset-form" on:click=toggle>{t.preset_save}</button>
            <Show when=move || open.get()>
            <form class="preset-form" id="preset-form" on:submit=save>
                <label for="preset-name">{t.preset_name}</label>
                <input id="preset-name" type="text" required maxlength=MAX_PRESET_NAME dir="auto"
                    prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/>
                <label for="preset-instructions">{t.preset_instructions}</label>
                <textarea id="preset-instructions" rows="2" dir="auto"
                    maxlength=crate::domain::instructions::MAX_INSTRUCTION_CHARS
                    prop:value=move || instructions.get() on:input=move |ev| instructions.set(event_target_value(&ev))></textarea>
                <Show when=admin>
                    <div class="checkbox">
                        <input type="checkbox" id="preset-shared" prop:checked=move || shared.get()
                            on:change=move |ev| shared.set(event_target_checked(&ev))/>
                        <label for="preset-shared">{t.preset_shared}</label>
                    </div>
                </Show>
                {move || failed.get().map(|e| view! { <p class="error-message" role="alert">{e}</p> })}
                <button type="submit" class="action primary">{t.save}</button>
            </form>
            </Show>
        </div>
    }
}
