//! The top bar's menus: thinking settings, expand/collapse all, export.

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use super::account_panel::AccountSection;
use super::chunks::prefetch;
use super::dom;
use super::icons::{icon, Icon};
use super::menu_panels::{prefetch_settings_panel, settings_panel_code, SettingsPanelCode};
use crate::client::controller::ChatController;
use crate::client::saved_chat::{self, SavedChat};
use crate::domain::history::Conversation;
use crate::i18n::Locale;

/// The reader's settings. The panel's contents are their own chunk (`menu_panels`), fetched
/// when the menu is first about to open; the account section (`account_panel`) follows for a
/// signed-in reader.
#[component]
pub fn SettingsMenu() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let panel = RwSignal::new(None::<SettingsPanelCode>);
    let section = RwSignal::new(None::<AccountSectionCode>);
    view! {
        <details class="menu" id="settings-menu" on:toggle=move |ev| {
            if !menu_toggled(ev) {
                return;
            }
            if panel.get_untracked().is_none() {
                chat.when_loaded(settings_panel_code(), move |code| panel.set(Some(code)));
            }
            if section.get_untracked().is_none()
                && chat.me.with_untracked(|me| me.as_ref().is_some_and(|me| me.account.is_some()))
            {
                chat.when_loaded(account_section_code(), move |code| section.set(Some(code)));
            }
        }>
            <summary class="menu-button" on:pointerenter=|_| prefetch(prefetch_settings_panel()) on:focus=|_| prefetch(prefetch_settings_panel())>
                {icon(Icon::Settings)}<span class="menu-label">{t.settings}</span>
            </summary>
            <div class="menu-panel">
                {move || panel.get().map(|code| code())}
                // Fetched the first time the settings open for a signed-in reader.
                {move || section.get().map(|code| code())}
            </div>
        </details>
    }
}

/// Builds the account section (who is signed in, Sign out, the account panel).
type AccountSectionCode = fn() -> AnyView;

/// The account section and its panel (tokens, users) in a chunk of their own: only a
/// signed-in reader has them, and they show only once the settings open.
#[leptos::wasm_split::wasm_split(account_panel, wasm_split_path = leptos::wasm_split, fallible)]
fn account_section_code() -> Result<AccountSectionCode, SplitLoaderError> {
    Ok(|| view! { <AccountSection/> }.into_any())
}

/// Downloads the conversation as Markdown or JSON, with or without thinking.
#[component]
pub fn ExportMenu() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let with_thinking = RwSignal::new(true);
    let with_instructions = RwSignal::new(false);
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let export = move |json: bool| {
        let with_thinking = with_thinking.get_untracked();
        let with_instructions = with_instructions.get_untracked();
        chat.when_loaded(chat_files_code(), move |files| {
            chat.exportable(move |mut record| {
                if !with_instructions {
                    record.chat.instructions = None;
                }
                let base = export_name(&crate::i18n::title(t, &record.chat.title));
                if json {
                    (files.carry)(
                        chat,
                        record,
                        Box::new(move |record| {
                            dom::download(
                                &format!("{base}.json"),
                                "application/json",
                                &(files.to_json)(&record, with_thinking),
                            )
                        }),
                    );
                } else {
                    dom::download(
                        &format!("{base}.md"),
                        "text/markdown",
                        &(files.to_markdown)(&record.chat, with_thinking, l),
                    );
                }
            })
        });
    };
    let import = move |ev: leptos::ev::Event| {
        leptos::task::spawn_local(async move {
            if let Some(text) = dom::chosen_file_text(&ev).await {
                chat.when_loaded(chat_files_code(), move |files| (files.import)(chat, text));
            }
        });
    };
    view! {
        <details class="menu" on:toggle=move |ev| {
            if menu_toggled(ev) {
                prefetch(prefetch_chat_files());
            }
        }>
            <summary class="menu-button">{icon(Icon::Download)}<span class="menu-label">{t.export}</span></summary>
            <div class="menu-panel">
                <div class="checkbox">
                    <input
                        type="checkbox"
                        id="export-thinking"
                        prop:checked=move || with_thinking.get()
                        on:change=move |ev| with_thinking.set(event_target_checked(&ev))
                    />
                    <label for="export-thinking">{t.include_thinking}</label>
                </div>
                <div class="checkbox" hidden=move || chat.instructions.with(Option::is_none)>
                    <input
                        type="checkbox"
                        id="export-instructions"
                        prop:checked=move || with_instructions.get()
                        on:change=move |ev| with_instructions.set(event_target_checked(&ev))
                    />
                    <label for="export-instructions">{t.include_instructions}</label>
                </div>
                <button type="button" class="action" disabled=move || chat.entries.with(Vec::is_empty) on:click=move |_| export(false)>
                    {t.download_markdown}
                </button>
                <button type="button" class="action" disabled=move || chat.entries.with(Vec::is_empty) on:click=move |_| export(true)>
                    {t.download_json}
                </button>
                <label class="action import-file">
                    {t.import_json}
                    <input type="file" accept="application/json,.json" class="visually-hidden" on:change=import/>
                </label>
            </div>
        </details>
    }
}

/// Writing and reading chat files.
#[derive(Clone, Copy)]
struct ChatFiles {
    to_json: fn(&SavedChat, bool) -> String,
    /// Puts the files' bytes into a record before it is written as JSON.
    carry: fn(ChatController, SavedChat, Then),
    to_markdown: fn(&Conversation, bool, Locale) -> String,
    import: fn(ChatController, String),
}

/// What is done with a record once its files are in it.
type Then = Box<dyn FnOnce(SavedChat)>;

/// Chat files in a chunk of their own, fetched when the Export menu first opens.
#[leptos::wasm_split::wasm_split(chat_files, wasm_split_path = leptos::wasm_split, fallible, preload(prefetch_chat_files))]
fn chat_files_code() -> Result<ChatFiles, SplitLoaderError> {
    Ok(ChatFiles {
        to_json: saved_chat::export_json,
        carry: |chat, record, done| chat.carry_files(record, done),
        to_markdown: saved_chat::export_markdown,
        import: |chat, raw| chat.import_export(raw),
    })
}

/// A menu that opens closes the other one: one is open at a time.
/// On a menu's `toggle`: the menu that opened closes every other one.
pub fn one_menu_open(ev: leptos::ev::Event) {
    menu_toggled(ev);
}

/// [`one_menu_open`], telling whether the menu opened.
pub fn menu_toggled(ev: leptos::ev::Event) -> bool {
    let opened = ev
        .target()
        .and_then(|t| leptos::wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlDetailsElement>(t).ok())
        .filter(web_sys::HtmlDetailsElement::open);
    if let Some(menu) = &opened {
        dom::close_menus_outside(Some(menu));
    }
    opened.is_some()
}

/// A file name from a title: letters, digits and dashes.
fn export_name(title: &str) -> String {
    let slug: String = title
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    if slug.is_empty() {
        "ponder-chat".into()
    } else {
        format!("ponder-{}", slug.chars().take(40).collect::<String>())
    }
}
