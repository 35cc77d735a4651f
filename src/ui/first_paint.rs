//! A chat's last messages as the server draws them on its address's first load, so the page
//! shows the chat at once instead of "Opening the chat…" until it has asked for it. The drawing
//! is a still picture (`inert`: nothing in it is pressed or read aloud) that stands where the
//! chat will be, from its end, until the chat itself is shown: the server's HTML is kept
//! through hydration (a string `inner_html` is not rewritten there), and the page keeps a copy
//! for the moment its scrolling view replaces the plain one.

use leptos::html::Div;
use leptos::prelude::*;

use crate::client::controller::ChatController;

/// What the first load drew, and for which conversation, while that chat is still opening.
#[derive(Clone, Copy)]
pub struct FirstPaint(StoredValue<Option<(String, String)>>);

impl FirstPaint {
    /// Given to the conversation's place on the page: the server's drawing on the server, the
    /// copy the page took of it in the browser, forgotten once the chat has opened.
    pub fn provide() {
        let chat = expect_context::<ChatController>();
        let drawn = StoredValue::new(served());
        Effect::new(move |_| {
            if !chat.opening.get() {
                drawn.set_value(None);
            }
        });
        provide_context(FirstPaint(drawn));
    }
}

/// The drawing of the chat being opened, or nothing (a new chat, history kept in the browser,
/// another chat than the one the page was served for).
#[component]
pub fn FirstPaintView() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let drawn = use_context::<FirstPaint>().map(|f| f.0);
    let html = drawn
        .and_then(|d| d.get_value())
        .filter(|(id, _)| page_chat().as_deref() == Some(id.as_str()))
        .map(|(_, html)| html)
        .unwrap_or_default();
    let el = NodeRef::<Div>::new();
    Effect::new(move |_| {
        let (Some(drawn), Some(el)) = (drawn, el.get()) else {
            return;
        };
        if drawn.with_value(Option::is_none) && chat.opening.get_untracked() {
            let html = el.inner_html();
            if let (false, Some(id)) = (html.is_empty(), page_chat()) {
                drawn.set_value(Some((id, html)));
            }
        }
    });
    view! { <div class="first-paint" inert=true node_ref=el inner_html=html></div> }
}

fn page_chat() -> Option<String> {
    crate::client::browser::page_address()
        .chat()
        .map(str::to_owned)
}

#[cfg(feature = "ssr")]
fn served() -> Option<(String, String)> {
    let found = crate::client::browser::served_chat()?;
    let html = transcript::draw(&found.0, crate::ui::locale::locale());
    Some((found.0.id.clone(), html))
}

#[cfg(not(feature = "ssr"))]
fn served() -> Option<(String, String)> {
    None
}

/// The drawing itself: the bubbles' own classes, the reader's text as text, each answer's
/// reasoning as its closed block's header, the answer's markdown through the one renderer.
#[cfg(feature = "ssr")]
mod transcript {
    use leptos::prelude::*;

    use crate::client::labels;
    use crate::client::saved_chat::turn_from_stored;
    use crate::client::turn_state::{BlockStatus, TurnPhase};
    use crate::domain::history::{Conversation, Version, VersionStatus};
    use crate::domain::message::Role;
    use crate::i18n::Locale;

    pub fn draw(conversation: &Conversation, l: Locale) -> String {
        conversation
            .messages
            .iter()
            .filter_map(|m| {
                let version = m.shown()?;
                Some(match m.role {
                    Role::User => user(version, l),
                    Role::Assistant => assistant(version, l),
                })
            })
            .collect()
    }

    fn user(v: &Version, l: Locale) -> String {
        let t = l.catalogue();
        view! {
            <article class="bubble user" aria-label=t.message_from_you>
                <div class="bubble-col">
                    {(!v.files.is_empty()).then(|| view! {
                        <ul class="sent-files">
                            {v.files.iter().map(|f| view! {
                                <li class="sent-file file-chip"><span class="file-name" dir="auto">{f.name.clone()}</span></li>
                            }).collect_view()}
                        </ul>
                    })}
                    <div class="bubble-body" dir="auto">{v.content.clone()}</div>
                </div>
            </article>
        }
        .to_html()
    }

    /// An answer as stored; one still being written draws as running (its unfinished blocks
    /// thinking, for as long as they had been when the server answered), never as cut.
    fn assistant(v: &Version, l: Locale) -> String {
        let t = l.catalogue();
        let mut turn = turn_from_stored(v);
        if v.status == VersionStatus::Streaming {
            turn.phase = TurnPhase::Streaming;
            turn.error = None;
            for (block, header) in turn.blocks.iter_mut().zip(&v.blocks) {
                if header.duration_ms.is_none() {
                    block.status = BlockStatus::Streaming;
                    block.ended_at = None;
                    block.started_at = -(header.running_ms.unwrap_or(0) as f64);
                }
            }
        }
        let blocks = turn
            .blocks
            .iter()
            .filter(|b| b.has_text() || b.status == BlockStatus::Streaming)
            .map(|b| {
                let mut status = String::from(match b.status {
                    BlockStatus::Interrupted => "thinking interrupted",
                    BlockStatus::Streaming => "thinking streaming",
                    BlockStatus::Done => "thinking done",
                });
                if turn.phase == TurnPhase::Stopped {
                    status.push_str(" stopped");
                }
                view! {
                    <details class=status>
                        <summary>
                            <span class="thinking-indicator" aria-hidden="true"></span>
                            <span class="thinking-label">{labels::header(b, 0.0, l)}</span>
                        </summary>
                    </details>
                }
            })
            .collect_view();
        let waiting = (turn.phase == TurnPhase::Streaming
            && turn.answer.is_empty()
            && !turn.blocks.iter().any(|b| b.status == BlockStatus::Streaming))
        .then(|| view! { <div class="typing" aria-hidden="true"><span></span><span></span><span></span></div> });
        let answer = crate::markdown::render(&turn.answer);
        let error = turn
            .error
            .as_ref()
            .map(|e| view! { <p class="error-message">{labels::failure_text(e, l)}</p> });
        let stopped = (turn.phase == TurnPhase::Stopped)
            .then(|| view! { <p class="stopped-note">{t.stopped}</p> });
        view! {
            <article class="bubble assistant" aria-label=t.message_from_assistant>
                <div class="avatar" aria-hidden="true">"P"</div>
                <div class="bubble-col">
                    <div class="bubble-main">
                        {blocks}
                        {waiting}
                        <div class="markdown answer" dir="auto">
                            <div class="md-done" inner_html=answer></div>
                        </div>
                        {error}
                        {stopped}
                    </div>
                </div>
            </article>
        }
        .to_html()
    }

    #[cfg(test)]
    mod tests {
        use super::draw;
        use crate::domain::history::{BlockHeader, Conversation, Message, Version, VersionStatus};
        use crate::domain::message::Role;
        use crate::domain::ThinkingKind;
        use crate::i18n::Locale;

        fn version(content: &str, status: VersionStatus, blocks: Vec<BlockHeader>) -> Version {
            Version {
                id: "v".into(),
                content: content.into(),
                status,
                error: None,
                model: None,
                settings: Default::default(),
                created_at: 0,
                blocks,
                tools: Vec::new(),
                sources: Vec::new(),
                files: Vec::new(),
                usage: None,
                turn: None,
            }
        }

        fn message(role: Role, v: Version) -> Message {
            Message {
                id: "m".into(),
                role,
                created_at: 0,
                active: 0,
                versions: vec![v],
            }
        }

        #[test]
        fn a_stored_chat_draws_as_bubbles_with_closed_blocks_and_inert_markup() {
            let block = BlockHeader {
                id: "b1".into(),
                kind: ThinkingKind::Raw,
                duration_ms: Some(4200),
                words: 12,
                chars: 60,
                reader_open: None,
                interrupted: false,
                cut_short: false,
                running_ms: None,
                text: None,
            };
            let conversation = Conversation {
                id: "c".into(),
                title: "t".into(),
                workspace_id: "w".into(),
                created_at: 0,
                updated_at: 0,
                rev: 0,
                model: None,
                settings: Default::default(),
                messages: vec![
                    message(
                        Role::User,
                        version(
                            "<img src=x onerror=alert(1)> *hi*",
                            VersionStatus::Done,
                            vec![],
                        ),
                    ),
                    message(
                        Role::Assistant,
                        version(
                            "**Bold** <script>alert(1)</script>",
                            VersionStatus::Done,
                            vec![block],
                        ),
                    ),
                ],
                first: 0,
            };
            let html = draw(&conversation, Locale::En);
            assert!(html.contains(r#"class="bubble user""#), "{html}");
            assert!(
                html.contains("&lt;img src=x onerror=alert(1)&gt; *hi*"),
                "{html}"
            );
            assert!(
                html.contains(r#"<details class="thinking done">"#),
                "{html}"
            );
            assert!(html.contains("Thought for 4.2s"), "{html}");
            assert!(html.contains("<strong>Bold</strong>"), "{html}");
            assert!(!html.contains("<script"), "{html}");
            assert!(!html.contains("<img"), "{html}");
            assert!(html.find("bubble user") < html.find("bubble assistant"));
        }

        #[test]
        fn an_answer_still_being_written_draws_as_running_not_as_cut() {
            let block = BlockHeader {
                id: "b1".into(),
                kind: ThinkingKind::Raw,
                duration_ms: None,
                words: 0,
                chars: 0,
                reader_open: None,
                interrupted: false,
                cut_short: false,
                running_ms: Some(3000),
                text: None,
            };
            let conversation = Conversation {
                id: "c".into(),
                title: "t".into(),
                workspace_id: "w".into(),
                created_at: 0,
                updated_at: 0,
                rev: 0,
                model: None,
                settings: Default::default(),
                messages: vec![
                    message(
                        Role::User,
                        version("think long", VersionStatus::Done, vec![]),
                    ),
                    message(
                        Role::Assistant,
                        version("", VersionStatus::Streaming, vec![block]),
                    ),
                ],
                first: 0,
            };
            let html = draw(&conversation, Locale::En);
            assert!(html.contains(r#"class="thinking streaming""#), "{html}");
            assert!(html.contains("Thinking… (3s)"), "{html}");
            assert!(!html.contains("interrupted"), "{html}");
            assert!(!html.contains("error-message"), "{html}");
        }
    }
}
