//! A stored conversation drawn as still HTML on the server, with the bubbles' own classes: the
//! chat's first paint (its last messages, blocks closed, while the chat opens) and the shared
//! page (every message, blocks openable with their text, tool steps, sources and files). The
//! reader's text is text; an answer's markdown and its reasoning go through the one renderer,
//! then (with their formulas and code dressed, on the shared page) through ammonia
//! ([`crate::markdown::sanitize`]): no script on the page checks them there.

use leptos::prelude::*;

use crate::client::labels;
use crate::client::saved_chat::turn_from_stored;
use crate::client::turn_state::{BlockStatus, TurnPhase, TurnState};
use crate::domain::attachment::{FileRef, Kind};
use crate::domain::history::{Conversation, Version, VersionStatus};
use crate::domain::message::Role;
use crate::i18n::{fill, Locale};

/// What a drawing shows besides the messages.
#[derive(Default)]
pub struct Drawing<'a> {
    /// Each block's reasoning inside it (openable, closed at first), not its header alone.
    pub reasoning: bool,
    /// The tool steps and the Sources list of each answer, and the answer's model.
    pub details: bool,
    /// The address of a file the messages show (an image is drawn, any other file is a
    /// download); without it a file is its name and size.
    pub file_href: Option<fn(&FileRef, &str) -> String>,
    /// Handed to `file_href`: where the files are served from.
    pub file_base: String,
    /// Puts typeset formulas and highlighted code in place of their source in rendered
    /// markdown (the shared link keeps them); without it they stay source.
    pub dress: Option<&'a crate::markdown::Dress<'a>>,
}

/// A text's markdown as the drawing shows it: rendered, dressed, through ammonia.
fn markup(text: &str, drawing: &Drawing) -> String {
    let html = crate::markdown::render(text);
    match drawing.dress {
        Some(dress) => crate::markdown::sanitize(&dress(&html)),
        None => crate::markdown::sanitize(&html),
    }
}

/// The conversation's shown versions as bubbles.
pub fn draw(conversation: &Conversation, l: Locale, drawing: &Drawing) -> String {
    conversation
        .messages
        .iter()
        .filter_map(|m| {
            let version = m.shown()?;
            Some(match m.role {
                Role::User => user(version, l, drawing),
                Role::Assistant => assistant(version, l, drawing),
            })
        })
        .collect()
}

fn user(v: &Version, l: Locale, drawing: &Drawing) -> String {
    let t = l.catalogue();
    view! {
        <article class="bubble user" aria-label=t.message_from_you>
            <div class="bubble-col">
                {(!v.files.is_empty()).then(|| view! {
                    <ul class="sent-files">
                        {v.files.iter().map(|f| file(f, l, drawing)).collect_view()}
                    </ul>
                })}
                <div class="bubble-body" dir="auto">{v.content.clone()}</div>
            </div>
        </article>
    }
    .to_html()
}

fn file(f: &FileRef, l: Locale, drawing: &Drawing) -> AnyView {
    let t = l.catalogue();
    let about = labels::file_about(f.size, Some(f.kind), f.pages, f.sent_as, l);
    match drawing.file_href.map(|href| href(f, &drawing.file_base)) {
        Some(url) if f.kind == Kind::Image => {
            let (width, height) = f.pixels.unwrap_or_default();
            let src = url.clone();
            view! {
                <li class="sent-file image">
                    <a class="file-thumb" href=url>
                        <img src=src alt=f.name.clone() loading="lazy" width=width height=height/>
                    </a>
                    <span class="file-about">{about}</span>
                </li>
            }
            .into_any()
        }
        Some(url) => view! {
            <li class="sent-file file-chip">
                <a class="file-text" href=url download=f.name.clone() aria-label=fill(t.download_file, &[("name", &f.name)])>
                    <span class="file-name" dir="auto">{f.name.clone()}</span>
                    <span class="file-about">{about}</span>
                </a>
            </li>
        }
        .into_any(),
        None => view! {
            <li class="sent-file file-chip">
                <span class="file-name" dir="auto">{f.name.clone()}</span>
            </li>
        }
        .into_any(),
    }
}

/// An answer as stored; one still being written draws as running (its unfinished blocks
/// thinking, for as long as they had been when the server answered), never as cut.
fn assistant(v: &Version, l: Locale, drawing: &Drawing) -> String {
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
    let mut parts = String::new();
    for (i, b) in turn.blocks.iter().enumerate() {
        if drawing.details {
            parts.push_str(&tools_before(&turn, i, l));
        }
        if b.has_text() || b.status == BlockStatus::Streaming {
            parts.push_str(&block(&turn, i, l, drawing));
        }
    }
    if drawing.details {
        parts.push_str(&tools_before(&turn, usize::MAX, l));
    }
    let waiting = (turn.phase == TurnPhase::Streaming
        && turn.answer.is_empty()
        && !turn.blocks.iter().any(|b| b.status == BlockStatus::Streaming))
    .then(|| view! { <div class="typing" aria-hidden="true"><span></span><span></span><span></span></div> });
    let answer = markup(&turn.answer, drawing);
    let sources = drawing.details.then(|| sources(&turn, l));
    let error = turn
        .error
        .as_ref()
        .map(|e| view! { <p class="error-message">{labels::failure_text(e, l)}</p> });
    let stopped = (turn.phase == TurnPhase::Stopped)
        .then(|| view! { <p class="stopped-note">{t.stopped}</p> });
    let model = turn
        .model
        .clone()
        .filter(|_| drawing.details)
        .map(|m| view! { <div class="bubble-meta"><span class="answer-model" title=t.model_of_answer>{m}</span></div> });
    view! {
        <article class="bubble assistant" aria-label=t.message_from_assistant>
            <div class="avatar" aria-hidden="true">"P"</div>
            <div class="bubble-col">
                <div class="bubble-main">
                    <div inner_html=parts class="bubble-parts"></div>
                    {waiting}
                    <div class="markdown answer" dir="auto">
                        <div class="md-done" inner_html=answer></div>
                    </div>
                    {sources}
                    {error}
                    {stopped}
                </div>
                {model}
            </div>
        </article>
    }
    .to_html()
}

fn block(turn: &TurnState, i: usize, l: Locale, drawing: &Drawing) -> String {
    let t = l.catalogue();
    let Some(b) = turn.blocks.get(i) else {
        return String::new();
    };
    let mut status = String::from(match b.status {
        BlockStatus::Interrupted => "thinking interrupted",
        BlockStatus::Streaming => "thinking streaming",
        BlockStatus::Done => "thinking done",
    });
    if turn.phase == TurnPhase::Stopped {
        status.push_str(" stopped");
    }
    let text = (drawing.reasoning && b.has_text()).then(|| {
        let html = markup(&b.text, drawing);
        view! {
            <div class="thinking-scroll" tabindex="0" role="region" aria-label=t.reasoning_text>
                {(b.kind == crate::domain::ThinkingKind::Summary)
                    .then(|| view! { <p class="thinking-summary-note">{t.summary_of_reasoning}</p> })}
                <div class="markdown thinking-text" dir="auto">
                    <div class="md-done" inner_html=html></div>
                </div>
            </div>
        }
    });
    view! {
        <details class=status>
            <summary>
                <span class="thinking-indicator" aria-hidden="true"></span>
                <span class="thinking-label">{labels::header(b, 0.0, l)}</span>
            </summary>
            {text}
        </details>
    }
    .to_html()
}

/// The tool steps that came before block `i` and after the one before it (`usize::MAX`: after
/// the last block).
fn tools_before(turn: &TurnState, i: usize, l: Locale) -> String {
    let since = if i == usize::MAX {
        turn.blocks.len()
    } else {
        i
    };
    let owner = Owner::new();
    owner.with(|| {
        provide_context(l);
        let signal = RwSignal::new(turn.clone());
        turn.tools
            .iter()
            .enumerate()
            .filter(|(_, step)| {
                let at = (step.after_blocks as usize).min(turn.blocks.len());
                if i == usize::MAX {
                    at == since
                } else {
                    at == i
                }
            })
            .map(|(index, _)| {
                view! { <crate::ui::tool_step::ToolStepCard turn=signal index/> }.to_html()
            })
            .collect()
    })
}

fn sources(turn: &TurnState, l: Locale) -> AnyView {
    let owner = Owner::new();
    let html = owner.with(|| {
        provide_context(l);
        let signal = RwSignal::new(turn.clone());
        view! { <crate::ui::sources::SourcesList turn=signal/> }.to_html()
    });
    view! { <div inner_html=html></div> }.into_any()
}

#[cfg(test)]
mod tests {
    use super::{draw, Drawing};
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
            compared: None,
        }
    }

    fn block() -> BlockHeader {
        BlockHeader {
            id: "b1".into(),
            kind: ThinkingKind::Raw,
            duration_ms: None,
            words: 0,
            chars: 0,
            reader_open: None,
            interrupted: false,
            cut_short: false,
            running_ms: None,
            text: None,
        }
    }

    fn chat(messages: Vec<Message>) -> Conversation {
        Conversation {
            id: "c".into(),
            title: "t".into(),
            workspace_id: "w".into(),
            created_at: 0,
            updated_at: 0,
            rev: 0,
            model: None,
            instructions: None,
            settings: Default::default(),
            messages,
            first: 0,
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
            duration_ms: Some(4200),
            words: 12,
            chars: 60,
            running_ms: None,
            text: None,
            ..block()
        };
        let conversation = chat(vec![
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
        ]);
        let html = draw(&conversation, Locale::En, &Drawing::default());
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

    /// What the dressing puts in passes through ammonia with the rest: a converter that went
    /// wrong cannot put a handler, an image or a script on the shared page.
    #[test]
    fn dressed_markdown_passes_through_ammonia() {
        let mut v = version("**Bold** and `code`", VersionStatus::Done, vec![]);
        v.blocks.push(BlockHeader {
            duration_ms: Some(1000),
            words: 2,
            chars: 10,
            running_ms: None,
            text: Some("**Thinking** hard".into()),
            ..block()
        });
        let conversation = chat(vec![message(Role::Assistant, v)]);
        let dress = |html: &str| {
            html.replace(
                "<strong>",
                "<strong onclick=\"x()\"><img src=x onerror=alert(1)><script>alert(2)</script>",
            )
        };
        let drawing = Drawing {
            reasoning: true,
            dress: Some(&dress),
            ..Drawing::default()
        };
        let html = draw(&conversation, Locale::En, &drawing);
        assert_eq!(html.matches("<strong>").count(), 2, "{html}");
        assert!(html.contains("<strong>Bold</strong>"), "{html}");
        assert!(html.contains("<strong>Thinking</strong>"), "{html}");
        for hostile in ["onclick", "<img", "<script", "alert"] {
            assert!(!html.contains(hostile), "{hostile} in {html}");
        }
    }

    #[test]
    fn an_answer_still_being_written_draws_as_running_not_as_cut() {
        let block = BlockHeader {
            duration_ms: None,
            words: 0,
            chars: 0,
            running_ms: Some(3000),
            text: None,
            ..block()
        };
        let conversation = chat(vec![
            message(
                Role::User,
                version("think long", VersionStatus::Done, vec![]),
            ),
            message(
                Role::Assistant,
                version("", VersionStatus::Streaming, vec![block]),
            ),
        ]);
        let html = draw(&conversation, Locale::En, &Drawing::default());
        assert!(html.contains(r#"class="thinking streaming""#), "{html}");
        assert!(html.contains("Thinking… (3s)"), "{html}");
        assert!(!html.contains("interrupted"), "{html}");
        assert!(!html.contains("error-message"), "{html}");
    }
}
