//! Which model answers and how hard it thinks: the model picker (searchable, showing a page of
//! a list of any length) and the reasoning controls, shown only for a model that takes them.

use leptos::prelude::*;

use super::chunks::prefetch;
use super::menu_panels::{model_panel_code, prefetch_model_panel, ModelPanelCode};
use super::menus::menu_toggled;
use crate::client::controller::ChatController;
use crate::client::labels::effort_word;
use crate::domain::Effort;

/// The picker: a menu button naming the model and what it can do (it reasons); its search box and list (the `menu_panels`
/// chunk) render once it first opens.
#[component]
pub fn ModelPicker() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let menu = NodeRef::<leptos::html::Details>::new();
    let panel = RwSignal::new(None::<ModelPanelCode>);
    let label = move || {
        let id = chat.current_model();
        chat.models
            .with(|m| m.find(&id).map(|m| m.label().to_string()))
            .unwrap_or(id)
    };
    let reasons = move || chat.controls().reasons;
    view! {
        <details class="menu model-picker" node_ref=menu on:toggle=move |ev| {
            if menu_toggled(ev) && panel.get_untracked().is_none() {
                chat.when_loaded(model_panel_code(), move |code| panel.set(Some(code)));
            }
        }>
            <summary
                class="menu-button model-button"
                aria-label=move || crate::i18n::fill(t.model_named, &[("model", &label())])
                on:pointerenter=|_| prefetch(prefetch_model_panel())
                on:focus=|_| prefetch(prefetch_model_panel())
            >
                <span class="model-name">{label}</span>
                {move || reasons().then(|| view! { <span class="model-tag" aria-hidden="true">{t.model_tag_reasons}</span> })}
            </summary>
            <div class="menu-panel model-panel">{move || panel.get().map(|code| code(menu))}</div>
        </details>
    }
}

/// Thinking on/off and the effort, for the current model; nothing for a model without them, nor
/// while comparing (each model compared has its own).
#[component]
pub fn ReasoningControls() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let controls = Memo::new(move |_| chat.controls());
    let thinking_on = move || chat.thinking.get() != Some(false);
    let t = crate::ui::locale::tr();
    view! {
        <Show when=move || controls.get().toggle && chat.compare.with(Option::is_none)>
            <button
                type="button"
                class="chip thinking-toggle"
                aria-pressed=move || thinking_on().to_string()
                on:click=move |_| chat.thinking.set(Some(!thinking_on()))
            >{move || if thinking_on() { t.thinking_on } else { t.thinking_off }}</button>
        </Show>
        <Show when=move || {
            let c = controls.get();
            c.effort
                && chat.thinking.get().filter(|_| c.toggle) != Some(false)
                && chat.compare.with(Option::is_none)
        }>
            <label class="choice effort">
                <span>{t.effort}</span>
                <select
                    on:change=move |ev| chat.effort.set(Effort::parse(&event_target_value(&ev)))
                    prop:value=move || chat.effort.get().map(|e| e.as_str()).unwrap_or("")
                >
                    <option value="">{t.effort_default}</option>
                    {move || {
                        controls
                            .get()
                            .levels
                            .iter()
                            .map(|e| view! { <option value=e.as_str()>{effort_word(e, t)}</option> })
                            .collect::<Vec<_>>()
                    }}
                </select>
            </label>
        </Show>
    }
}
