//! The message bubbles' code is not in the page's first download: `make site` splits the
//! conversation's scrolling view with its bubbles (the thinking blocks, tool steps, sources, the
//! markdown renderer and the rest of what only a message shows) into a WebAssembly chunk of its
//! own, `pkg/<stem>.messages.wasm`. An empty chat page never runs it, so it is fetched once, when
//! the first text is typed or the first message is shown ([`want`]). Until it arrives the
//! conversation shows no messages, and they all come in at once; if it cannot be fetched they
//! show as plain text ([`PlainBubble`]: nothing is lost) and the next wish fetches it again.

use std::cell::Cell;

use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use crate::client::controller::Entry;
use crate::client::turn_state::TurnState;
use crate::domain::Role;
use crate::i18n::Locale;
use crate::ui::locale::{locale, tr};

/// What the chunk gives the page.
#[derive(Clone, Copy)]
pub struct MessageCode {
    /// Builds the scrolling conversation with its bubbles
    /// ([`super::scrolling_conversation::ScrollingConversation`]).
    pub conversation: fn() -> AnyView,
    /// The second markdown layer alone, for [`crate::sanitize_markup`].
    pub sanitize: fn(&str, bool) -> String,
}

/// Where the bubbles' code is.
#[derive(Clone, Copy)]
pub enum Fetch {
    Absent,
    Loading,
    Ready(MessageCode),
    Failed,
}

thread_local! {
    static STATE: Cell<Fetch> = const { Cell::new(Fetch::Absent) };
    static CHANGED: ArcTrigger = ArcTrigger::new();
}

/// The split point: in the browser, calling it fetches and instantiates the chunk (once; a
/// failure is not remembered, so a later call tries again).
#[leptos::wasm_split::wasm_split(messages, wasm_split_path = leptos::wasm_split, fallible)]
fn message_code() -> Result<MessageCode, SplitLoaderError> {
    Ok(MessageCode {
        conversation: || {
            view! { <super::scrolling_conversation::ScrollingConversation/> }.into_any()
        },
        sanitize: super::sanitize::sanitized_markup,
    })
}

/// The chunk's code, fetched if it is not here yet.
pub async fn loaded() -> Result<MessageCode, SplitLoaderError> {
    message_code().await
}

/// Where the code is now. Until it is ready the caller also tracks its arrival (or failure).
pub fn state() -> Fetch {
    let now = STATE.get();
    if !matches!(now, Fetch::Ready(_)) {
        CHANGED.with(|changed| changed.track());
    }
    now
}

/// Starts fetching the bubbles' code unless it is here or on its way.
pub fn want() {
    if matches!(STATE.get(), Fetch::Loading | Fetch::Ready(_)) {
        return;
    }
    STATE.set(Fetch::Loading);
    leptos::task::spawn_local(async {
        let now = match message_code().await {
            Ok(code) => Fetch::Ready(code),
            Err(e) => {
                leptos::logging::warn!("the message bubbles could not be fetched: {e}");
                Fetch::Failed
            }
        };
        STATE.set(now);
        CHANGED.with(|changed| changed.notify());
    });
}

/// A message as plain text: the reader's words, or the assistant's reasoning and answer as they
/// arrive, with nothing rendered as markup.
#[component]
pub fn PlainBubble(entry: Entry) -> impl IntoView {
    let t = tr();
    let id = format!("message-{}", entry.id);
    if entry.role == Role::User {
        return view! {
            <article class="bubble user plain" id=id aria-label=t.message_from_you>
                <div class="bubble-col"><div class="bubble-body" dir="auto">{entry.text}</div></div>
            </article>
        }
        .into_any();
    }
    let (versions, active) = (entry.versions, entry.active);
    let shown = move || {
        let i = active.get();
        versions.with(|v| v.get(i).or(v.last()).copied())
    };
    let l = locale();
    let read = move |f: fn(&TurnState, Locale) -> String| {
        shown().map(|t| t.with(|t| f(t, l))).unwrap_or_default()
    };
    let running = move || read(|t, _| t.phase.is_running().to_string());
    let thinking = move || {
        read(|t, _| {
            t.blocks
                .iter()
                .map(|b| b.text.as_str())
                .collect::<Vec<_>>()
                .join("\n\n")
        })
    };
    let failure = move || {
        read(|t, l| {
            t.error
                .as_ref()
                .map(|e| crate::client::labels::failure_text(e, l))
                .unwrap_or_default()
        })
    };
    view! {
        <article class="bubble assistant plain" id=id aria-label=t.message_from_assistant aria-busy=running>
            <div class="bubble-col">
                <Show when=move || !thinking().is_empty()>
                    <details class="thinking">
                        <summary>{t.thinking}</summary>
                        <div class="thinking-text plain-text" dir="auto">{thinking}</div>
                    </details>
                </Show>
                <div class="markdown answer plain-text" dir="auto">{move || read(|t, _| t.answer.clone())}</div>
                <Show when=move || !failure().is_empty()>
                    <p class="error-message">{failure}</p>
                </Show>
            </div>
        </article>
    }
    .into_any()
}
