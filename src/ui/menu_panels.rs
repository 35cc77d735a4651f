//! The contents of the header's menus that show only once a menu opens: the settings and the
//! model picker's list. They are a chunk of their own (`menu_panels`), fetched when a menu is
//! first about to open (pointer over it, or keyboard focus), so the first load carries only the
//! menu buttons.

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use crate::client::controller::ChatController;
use crate::client::thinking_view::ThinkingPref;
use crate::domain::reasoning::{filter_models, search_text};

/// Builds the settings panel's contents.
pub type SettingsPanelCode = fn() -> AnyView;

/// Builds the model picker's panel; picking a model closes the menu it is in.
pub type ModelPanelCode = fn(NodeRef<leptos::html::Details>) -> AnyView;

/// The settings' contents, from the `menu_panels` chunk.
#[leptos::wasm_split::wasm_split(menu_panels, wasm_split_path = leptos::wasm_split, fallible, preload(prefetch_settings_panel))]
pub fn settings_panel_code() -> Result<SettingsPanelCode, SplitLoaderError> {
    Ok(|| view! { <SettingsPanel/> }.into_any())
}

/// The model picker's search and list, from the `menu_panels` chunk.
#[leptos::wasm_split::wasm_split(menu_panels, wasm_split_path = leptos::wasm_split, fallible, preload(prefetch_model_panel))]
pub fn model_panel_code() -> Result<ModelPanelCode, SplitLoaderError> {
    Ok(|menu| view! { <ModelPanel menu/> }.into_any())
}

/// Models listed at once; the search narrows a longer list.
const SHOWN: usize = 50;

/// How thinking blocks show, which model a new chat starts with, the language, and (once the
/// chat has a block) expanding or collapsing every block.
#[component]
fn SettingsPanel() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    view! {
        <fieldset>
            <legend>{t.thinking_blocks}</legend>
            {ThinkingPref::ALL
                .into_iter()
                .map(|pref| {
                    let id = format!("pref-{}", pref.key());
                    view! {
                        <div class="radio">
                            <input
                                type="radio"
                                name="thinking-pref"
                                id=id.clone()
                                value=pref.key()
                                prop:checked=move || chat.pref.get() == pref
                                on:change=move |_| chat.set_pref(pref)
                            />
                            <label for=id>{pref.label(t)}</label>
                        </div>
                    }
                })
                .collect_view()}
        </fieldset>
        <NewChatModelSetting/>
        <Show when=move || chat.server.get()>
            <TitlesSetting/>
        </Show>
        <LanguageSetting/>
        <UsageOpener/>
        <super::compare_bar::RecordOpener/>
        <Show when=move || chat.me.with(|me| me.as_ref().is_some_and(|me| me.account.is_some()))>
            <super::instructions_panel::InstructionsPanel/>
        </Show>
        // Only once the chat has a block to expand.
        <Show when=move || chat.entries.with(|e| e.iter().any(|e| e.turn().is_some_and(|t| t.with(|t| !t.blocks.is_empty()))))>
            <ExpandAll on_set_all=Callback::new(move |open| chat.set_all_blocks(open))/>
        </Show>
    }
}

/// Opens Settings → Usage, fetching its chunk the first time; the page is drawn over
/// everything (a modal dialog in the body), and closing it takes it away.
#[component]
fn UsageOpener() -> impl IntoView {
    use super::usage_page::{usage_code, UsageCode};
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let open = RwSignal::new(false);
    let code = RwSignal::new(None::<UsageCode>);
    let show = move |_| {
        // The page is a modal of its own: the menu it came from closes under it.
        if let Some(menu) = crate::ui::dom::find("#settings-menu") {
            use leptos::wasm_bindgen::JsCast;
            if let Ok(menu) = menu.dyn_into::<web_sys::HtmlDetailsElement>() {
                menu.set_open(false);
            }
        }
        if code.get_untracked().is_some() {
            open.set(true);
            return;
        }
        chat.when_loaded(usage_code(), move |c| {
            code.set(Some(c));
            open.set(true);
        });
    };
    view! {
        <button type="button" class="usage-open" on:click=show>{t.usage_title}</button>
        <Show when=move || open.get()>
            <leptos::portal::Portal>{move || code.get().map(|c| c(open))}</leptos::portal::Portal>
        </Show>
    }
}

/// Whether the model names this reader's new chats after their first answer (kept with the
/// reader's preferences on the server, for every device).
#[component]
fn TitlesSetting() -> impl IntoView {
    use leptos::task::spawn_local;
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let on = RwSignal::new(true);
    spawn_local(async move {
        if let Ok(prefs) = crate::api::history::get_preferences(None).await {
            on.set(prefs.titles.as_deref() != Some("off"));
        }
    });
    let change = move |wanted: bool| {
        on.set(wanted);
        spawn_local(async move {
            let kept = match crate::api::history::get_preferences(None).await {
                Ok(mut prefs) => {
                    prefs.titles = Some(if wanted { "model" } else { "off" }.to_string());
                    crate::api::history::set_preferences(None, prefs).await
                }
                Err(e) => Err(e),
            };
            if let Err(e) = kept {
                on.set(!wanted);
                chat.status
                    .set(crate::client::labels::failure_text(&e.0, chat.locale));
            }
        });
    };
    view! {
        <div class="checkbox">
            <input type="checkbox" id="titles-by-model" prop:checked=move || on.get()
                on:change=move |ev| change(event_target_checked(&ev))/>
            <label for="titles-by-model">{t.titles_setting}</label>
        </div>
    }
}

/// Which model a new chat starts with: the one used last, or the server's default.
#[component]
fn NewChatModelSetting() -> impl IntoView {
    use crate::client::local_store;
    use crate::domain::reasoning::NewChatModel;
    let rule = RwSignal::new(NewChatModel::LastUsed);
    let t = crate::ui::locale::tr();
    Effect::new(move |_| rule.set(local_store::new_chat_rule(&local_store::BROWSER)));
    let choice = move |value: NewChatModel, id: &'static str, text: &'static str| {
        view! {
            <div class="radio">
                <input type="radio" name="new-chat-model" id=id
                    prop:checked=move || rule.get() == value
                    on:change=move |_| {
                        rule.set(value);
                        local_store::set_new_chat_rule(&local_store::BROWSER, value);
                    }
                />
                <label for=id>{text}</label>
            </div>
        }
    };
    view! {
        <fieldset>
            <legend>{t.new_chats_use}</legend>
            {choice(NewChatModel::LastUsed, "new-chat-last", t.model_used_last)}
            {choice(NewChatModel::Default, "new-chat-default", t.default_model)}
        </fieldset>
    }
}

/// The interface's language: each listed in its own name. The choice is kept in a cookie (and
/// in the user's preferences when signed in) and the page reloads in it, rendered by the
/// server in the new language from its first byte.
#[component]
fn LanguageSetting() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let current = crate::ui::locale::locale();
    let t = current.catalogue();
    let choose = move |ev: leptos::ev::Event| {
        let Some(chosen) = crate::i18n::Locale::from_tag(&event_target_value(&ev)) else {
            return;
        };
        if chosen != current {
            chat.set_locale(chosen);
        }
    };
    view! {
        <label class="choice language-picker">
            {t.language}
            <select on:change=choose>
                {crate::i18n::Locale::ALL
                    .into_iter()
                    .map(|l| view! {
                        <option value=l.tag() lang=l.tag() selected=l == current>{l.own_name()}</option>
                    })
                    .collect_view()}
            </select>
        </label>
    }
}

/// Shows every block of the conversation in detail, or as one-line summaries, for a reader who
/// wants to read (or skip) all the reasoning at once.
#[component]
fn ExpandAll(
    /// Every block is to be open (`true`) or closed, as the reader's own choice.
    on_set_all: Callback<bool>,
) -> impl IntoView {
    let t = crate::ui::locale::tr();
    view! {
        <div class="expand-all" role="group" aria-label=t.all_thinking_blocks>
            <button type="button" class="action" on:click=move |_| on_set_all.run(true)>{t.expand_all}</button>
            <button type="button" class="action" on:click=move |_| on_set_all.run(false)>{t.collapse_all}</button>
        </div>
    }
}

/// The picker's search box, the matching models (a page of a list of any length) and their count.
#[component]
fn ModelPanel(
    /// The picker's menu, closed once a model is picked.
    menu: NodeRef<leptos::html::Details>,
) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let query = RwSignal::new(String::new());
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
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
    <>
        <super::presets_panel::PresetList menu/>
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
        <super::sampling_panel::SamplingControls/>
        <super::presets_panel::PresetSave/>
    </>
    }
}
