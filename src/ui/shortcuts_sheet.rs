//! The sheet of keyboard shortcuts `?` opens: a modal dialog listing each shortcut's keys (with
//! the system's name for the command key) and what it does, in the page's language. It is a
//! chunk of its own (`shortcuts`), fetched the first time it opens.

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use crate::client::shortcuts::Shortcut;

/// Builds the sheet.
pub type SheetCode = fn() -> AnyView;

/// The sheet, from its chunk.
#[leptos::wasm_split::wasm_split(shortcuts, wasm_split_path = leptos::wasm_split, fallible)]
pub fn sheet_code() -> Result<SheetCode, SplitLoaderError> {
    Ok(|| view! { <ShortcutSheet/> }.into_any())
}

/// The sheet's id: the page opens it by this.
pub const SHEET_ID: &str = "shortcuts-sheet";

#[component]
fn ShortcutSheet() -> impl IntoView {
    let t = crate::ui::locale::tr();
    let apple = web_sys::window()
        .and_then(|w| w.navigator().platform().ok())
        .is_some_and(|p| p.starts_with("Mac") || p.starts_with("iP"));
    let command = if apple { "⌘" } else { "Ctrl" };
    let what = move |s: Shortcut| match s {
        Shortcut::Sheet => t.shortcut_sheet,
        Shortcut::NewChat => t.new_chat,
        Shortcut::Search => t.search_chats,
        Shortcut::FocusComposer => t.shortcut_focus,
        Shortcut::ToggleThinking => t.shortcut_thinking,
        Shortcut::Stop => t.stop_generating,
        Shortcut::Regenerate => t.regenerate_answer,
        Shortcut::Compare => t.compare_models,
    };
    view! {
        <dialog id=SHEET_ID class="disclaimer-dialog shortcuts-sheet" aria-labelledby="shortcuts-title">
            <h2 id="shortcuts-title">{t.shortcuts_title}</h2>
            <table>
                <tbody>
                    {Shortcut::ALL
                        .into_iter()
                        .map(|s| {
                            let keys = s
                                .keys(command)
                                .into_iter()
                                .map(|k| view! { <kbd>{k}</kbd> })
                                .collect_view();
                            view! {
                                <tr>
                                    <td class="shortcut-keys" dir="ltr">{keys}</td>
                                    <td>{what(s)}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <form method="dialog">
                <button type="submit" autofocus>{t.close}</button>
            </form>
        </dialog>
    }
}
