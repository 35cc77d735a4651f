//! `ponder ask --models a,b "question"`: the question to each model at once; then, model by
//! model in the order named, its thinking's summary line, its answer and its figures (how long
//! it thought, its reasoning tokens, when its answer began, the time in all, the cost). With
//! `--json`, each event as `{"model": …, "event": …}`, one per line.

use std::io::Write;
use std::time::{Duration, Instant};

use super::client::Server;
use super::error::ClientError;
use super::follow::{self, Source};
use super::text;
use crate::client::compare::{figures_line, Figures};
use crate::client::labels;
use crate::client::turn_state::TurnState;
use crate::domain::{ChatRequest, TurnEvent};

/// One model's turn, played to its end.
struct Played {
    model: String,
    turn: TurnState,
    events: Vec<TurnEvent>,
    /// Client time the turn's last event came.
    now: f64,
}

async fn play(server: Server, request: ChatRequest, model: String, since: Instant) -> Played {
    let request = ChatRequest {
        model: Some(model.clone()),
        ..request
    };
    let (task, mut progress) = follow::spawn(
        &server,
        Source::Send(Box::new(request)),
        Duration::from_secs(120),
    );
    let now = || since.elapsed().as_secs_f64() * 1000.0;
    let mut turn = TurnState::started(0.0);
    let mut events = Vec::new();
    while let Some(p) = progress.recv().await {
        match follow::next(p, &mut turn, now()) {
            follow::Next::Wait => {}
            follow::Next::Events(got) => {
                for e in &got {
                    turn.apply(e, now());
                }
                let ended = got.iter().any(TurnEvent::is_terminal);
                events.extend(got);
                if ended {
                    break;
                }
            }
            follow::Next::End => break,
        }
    }
    task.abort();
    Played {
        model,
        turn,
        events,
        now: now(),
    }
}

/// Where a comparison's thinking shows: nowhere, its headers, or its text too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thinking {
    Off,
    Headers,
    Inline,
}

/// Asks every model of `models` at once; the exit code (0 when every turn ended well).
pub async fn run(
    server: &Server,
    request: ChatRequest,
    models: &[String],
    thinking: Thinking,
    json: bool,
) -> Result<i32, ClientError> {
    let since = Instant::now();
    let tasks: Vec<_> = models
        .iter()
        .map(|model| tokio::spawn(play(server.clone(), request.clone(), model.clone(), since)))
        .collect();
    let mut played = Vec::new();
    for task in tasks {
        played.push(
            task.await
                .map_err(|e| ClientError::Unreadable(e.to_string()))?,
        );
    }
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    let mut failed = false;
    for p in &played {
        if json {
            for e in &p.events {
                let line =
                    serde_json::to_string(&serde_json::json!({"model": p.model, "event": e}))
                        .map_err(|e| ClientError::Unreadable(e.to_string()))?;
                let _ = writeln!(out, "{line}");
            }
        } else {
            let _ = write!(out, "{}", section(p, thinking, super::locale()));
        }
        if let Some(failure) = &p.turn.error {
            failed = true;
            if !json {
                let _ = writeln!(
                    err,
                    "ponder ask: {}: {}",
                    text::sanitize(&p.model),
                    text::sanitize(&labels::failure_text(failure, super::locale()))
                );
            }
        }
    }
    let _ = out.flush();
    Ok(i32::from(failed))
}

/// One model's part of the output: its name, its thinking (the header of each block, and with
/// `--thinking=inline` the text too), its answer, its figures.
fn section(p: &Played, thinking: Thinking, l: crate::i18n::Locale) -> String {
    let mut s = format!("━━ {} ━━\n", text::sanitize(&p.model));
    if thinking != Thinking::Off {
        for b in &p.turn.blocks {
            if thinking == Thinking::Inline {
                s.push_str(&text::sanitize(b.text.trim()));
                s.push('\n');
            }
            s.push_str(&labels::header(b, p.now, l));
            s.push('\n');
        }
    }
    let answer = text::sanitize(p.turn.answer.trim());
    if !answer.is_empty() {
        s.push_str(&answer);
        s.push('\n');
    }
    s.push_str(&figures_line(&Figures::of(&p.turn, p.now), l));
    s.push_str("\n\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{FinishReason, ThinkingKind};
    use crate::i18n::Locale;

    fn played(model: &str, events: &[(f64, TurnEvent)]) -> Played {
        let mut turn = TurnState::started(0.0);
        for (at, e) in events {
            turn.apply(e, *at);
        }
        Played {
            model: model.into(),
            turn,
            events: Vec::new(),
            now: 5000.0,
        }
    }

    #[test]
    fn each_model_s_section_has_its_thinking_line_answer_and_figures() {
        let deep = played(
            "deep",
            &[
                (
                    100.0,
                    TurnEvent::ThinkingStart {
                        block: 0,
                        kind: ThinkingKind::Raw,
                        at_ms: None,
                    },
                ),
                (
                    200.0,
                    TurnEvent::Thinking {
                        block: 0,
                        text: "one two three".into(),
                    },
                ),
                (
                    2100.0,
                    TurnEvent::ThinkingEnd {
                        block: 0,
                        duration_ms: Some(2000),
                        cut_short: false,
                    },
                ),
                (
                    2300.0,
                    TurnEvent::Delta {
                        text: "Blue\u{1b}[31m.".into(),
                    },
                ),
                (
                    2500.0,
                    TurnEvent::Done {
                        finish_reason: FinishReason::Stop,
                        usage: None,
                        thinking_chars: 13,
                        total_ms: 2500,
                    },
                ),
            ],
        );
        assert_eq!(
            section(&deep, Thinking::Headers, Locale::En),
            "━━ deep ━━\nThought for 2.0s · 3 words\nBlue.\nthought 2.0s · first answer token at 2.3s · 2.5s in all\n\n"
        );
        assert!(section(&deep, Thinking::Inline, Locale::En).contains("one two three\nThought for"));
        assert!(!section(&deep, Thinking::Off, Locale::En).contains("Thought for"));
        let mini = played("mini", &[(400.0, TurnEvent::Delta { text: "Hi".into() })]);
        assert_eq!(
            section(&mini, Thinking::Headers, Locale::En),
            "━━ mini ━━\nHi\nno thinking · first answer token at 0.4s\n\n"
        );
    }
}
