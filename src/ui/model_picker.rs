//! Which model answers and how hard it thinks: the model picker (searchable, showing a page of
//! a list of any length) and the reasoning controls, shown only for a model that takes them.

use leptos::prelude::*;

use super::menus::one_menu_open;
use crate::client::controller::ChatController;
use crate::domain::reasoning::{filter_models, search_text};
use crate::domain::Effort;

/// Models listed at once; the search narrows a longer list.
const SHOWN: usize = 50;

/// The picker: a menu button naming the model, a search box and the matching models.
#[component]
pub fn ModelPicker() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let query = RwSignal::new(String::new());
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let menu = NodeRef::<leptos::html::Details>::new();
    let label = move || {
        let id = chat.current_model();
        chat.models
            .with(|m| m.find(&id).map(|m| m.label().to_string()))
            .unwrap_or(id)
    };
    let pick = move |id: String| {
        chat.pick_model(id);
        query.set(String::new());
        if let Some(menu) = menu.get_untracked() {
            menu.set_open(false);
        }
    };
    let texts = Memo::new(move |_| {
        chat.models.with(|list| {
            list.models
                .iter()
                .map(|m| search_text(m, super::dom::lowercase))
                .collect::<Vec<_>>()
        })
    });
    let matches = Memo::new(move |_| {
        let q = query.get();
        chat.models.with(|list| {
            let (shown, total) = if q.trim().is_empty() {
                (list.models.iter().take(SHOWN).collect(), list.models.len())
            } else {
                texts.with(|texts| {
                    filter_models(&list.models, texts, &q, super::dom::lowercase, SHOWN)
                })
            };
            let shown: Vec<(String, String, bool)> = shown
                .into_iter()
                .map(|m| (m.id.clone(), m.label().to_string(), m.controls.reasons))
                .collect();
            (shown, total)
        })
    });
    view! {
        <details class="menu model-picker" node_ref=menu on:toggle=one_menu_open>
            <summary class="menu-button model-button" aria-label=move || crate::i18n::fill(t.model_named, &[("model", &label())])>
                <span class="model-name">{label}</span>
            </summary>
            <div class="menu-panel model-panel">
                <label class="visually-hidden" for="model-search">{t.search_models}</label>
                <input
                    id="model-search"
                    type="search"
                    placeholder=t.search_models_placeholder
                    autocomplete="off"
                    prop:value=move || query.get()
                    on:input=move |ev| query.set(event_target_value(&ev))
                />
                <ul class="model-list" aria-label=t.models>
                    <For
                        each=move || matches.get().0
                        key=|(id, ..)| id.clone()
                        children=move |(id, name, reasons)| {
                            let selected = {
                                let id = id.clone();
                                move || chat.current_model() == id
                            };
                            let chosen = id.clone();
                            view! {
                                <li>
                                    <button type="button" class="model-option" aria-pressed=move || selected().to_string() on:click=move |_| pick(chosen.clone())>
                                        <span>{name}</span>
                                        {reasons.then(|| view! { <span class="model-tag">{t.model_tag_reasons}</span> })}
                                    </button>
                                </li>
                            }
                        }
                    />
                </ul>
                <p class="model-count" role="status">
                    {move || {
                        let (shown, total) = matches.get();
                        match total {
                            0 => t.no_model_matches.to_string(),
                            n if n > shown.len() => crate::i18n::fill(t.showing_models, &[("shown", &l.integer(shown.len() as u64)), ("total", &l.integer(n as u64))]),
                            n => l.count(&t.model_count, n as u64),
                        }
                    }}
                </p>
                {move || chat.models.with(|m| m.note.clone()).map(|note| view! { <p class="model-note">{note}</p> })}
            </div>
        </details>
    }
}

/// Thinking on/off and the effort, for the current model; nothing for a model without them.
#[component]
pub fn ReasoningControls() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let controls = Memo::new(move |_| chat.controls());
    let thinking_on = move || chat.thinking.get() != Some(false);
    let t = crate::ui::locale::tr();
    view! {
        <Show when=move || controls.get().toggle>
            <button
                type="button"
                class="chip thinking-toggle"
                aria-pressed=move || thinking_on().to_string()
                on:click=move |_| chat.thinking.set(Some(!thinking_on()))
            >{move || if thinking_on() { t.thinking_on } else { t.thinking_off }}</button>
        </Show>
        <Show when=move || {
            let c = controls.get();
            c.effort && chat.thinking.get().filter(|_| c.toggle) != Some(false)
        }>
            <label class="effort">
                <span>{t.effort}</span>
                <select
                    on:change=move |ev| chat.effort.set(Effort::parse(&event_target_value(&ev)))
                    prop:value=move || chat.effort.get().map(|e| e.as_str()).unwrap_or("")
                >
                    <option value="">{t.effort_default}</option>
                    <option value="low">{t.effort_low}</option>
                    <option value="medium">{t.effort_medium}</option>
                    <option value="high">{t.effort_high}</option>
                </select>
            </label>
        </Show>
    }
}
