//! The top bar's menus: thinking settings, expand/collapse all, export.

use leptos::prelude::*;

use super::dom;
use crate::client::controller::{now_ms, ChatController};
use crate::client::saved_chat;
use crate::client::thinking_view::ThinkingPref;

/// The reader's thinking preference, kept in localStorage.
#[component]
pub fn SettingsMenu() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    view! {
        <details class="menu">
            <summary class="menu-button">"Settings"</summary>
            <div class="menu-panel">
                <fieldset>
                    <legend>"Thinking blocks"</legend>
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
                                    <label for=id>{pref.label()}</label>
                                </div>
                            }
                        })
                        .collect_view()}
                </fieldset>
                <AccountSection/>
            </div>
        </details>
    }
}

/// Who is signed in, with Sign out and Sign out everywhere, when this Ponder has accounts.
#[component]
fn AccountSection() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let signed_in = move || {
        chat.me
            .get()
            .filter(|me| me.auth == "password")
            .and_then(|me| me.account)
    };
    let sign_out = move |everywhere: bool| {
        leptos::task::spawn_local(async move {
            let done = if everywhere {
                crate::api::account::sign_out_everywhere().await
            } else {
                crate::api::account::sign_out().await
            };
            if done.is_ok() {
                if let Some(w) = web_sys::window() {
                    let _ = w.location().reload();
                }
            }
        });
    };
    move || {
        signed_in().map(|account| {
            view! {
                <fieldset class="account">
                    <legend>"Account"</legend>
                    <p class="account-name">"Signed in as " <strong>{account.name}</strong></p>
                    <button type="button" class="action" on:click=move |_| sign_out(false)>"Sign out"</button>
                    <button type="button" class="action" on:click=move |_| sign_out(true)>"Sign out everywhere"</button>
                </fieldset>
            }
        })
    }
}

/// Shows every block of the conversation in detail, or as one-line summaries, for a reader who
/// wants to read (or skip) all the reasoning at once.
#[component]
pub fn ExpandAll(
    /// Every block is to be open (`true`) or closed, as the reader's own choice.
    on_set_all: Callback<bool>,
) -> impl IntoView {
    view! {
        <div class="expand-all" role="group" aria-label="All thinking blocks">
            <button type="button" class="action" on:click=move |_| on_set_all.run(true)>"Expand all"</button>
            <button type="button" class="action" on:click=move |_| on_set_all.run(false)>"Collapse all"</button>
        </div>
    }
}

/// Downloads the conversation as Markdown or JSON, with or without thinking.
#[component]
pub fn ExportMenu() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let with_thinking = RwSignal::new(true);
    let export = move |json: bool| {
        let record = chat.record(now_ms());
        let base = export_name(&record.title);
        if json {
            dom::download(
                &format!("{base}.json"),
                "application/json",
                &saved_chat::export_json(&record, with_thinking.get_untracked()),
            );
        } else {
            dom::download(
                &format!("{base}.md"),
                "text/markdown",
                &saved_chat::export_markdown(&record, with_thinking.get_untracked()),
            );
        }
    };
    view! {
        <details class="menu">
            <summary class="menu-button">"Export"</summary>
            <div class="menu-panel">
                <div class="checkbox">
                    <input
                        type="checkbox"
                        id="export-thinking"
                        prop:checked=move || with_thinking.get()
                        on:change=move |ev| with_thinking.set(event_target_checked(&ev))
                    />
                    <label for="export-thinking">"Include thinking"</label>
                </div>
                <button type="button" class="action" disabled=move || chat.entries.with(Vec::is_empty) on:click=move |_| export(false)>
                    "Download Markdown"
                </button>
                <button type="button" class="action" disabled=move || chat.entries.with(Vec::is_empty) on:click=move |_| export(true)>
                    "Download JSON"
                </button>
            </div>
        </details>
    }
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
