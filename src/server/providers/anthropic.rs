//! Anthropic Messages (`POST /v1/messages`, `stream: true`, extended thinking).
//!
//! Content blocks are keyed by their `index`: `thinking` blocks stream `thinking_delta`s (and a
//! `signature_delta` Ponder does not need), `redacted_thinking` blocks carry no text at all,
//! `text` blocks stream the answer, tool blocks are skipped. A message may hold several
//! thinking blocks, and a text block may come first. `message_delta` carries the stop reason
//! and cumulative usage (with `thinking_tokens` on newer models), `message_stop` ends the
//! stream, `ping` is noise and `error` is a failure in the middle of it.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    budget_for, effective_settings, FrameHandler, Piece, Sse, TurnOptions, UpstreamRequest,
};
use crate::domain::{ChatMessage, Failure, ThinkingKind, Usage};
use crate::server::config::Config;

/// The API version Ponder speaks; the header is required.
pub const API_VERSION: &str = "2023-06-01";

/// The smallest thinking budget Anthropic accepts.
const MIN_BUDGET: u32 = 1024;

/// The request: streaming, with extended thinking at the configured budget when the output
/// limit leaves room for it (the budget must stay below `max_tokens`).
///
/// Thinking off sends `thinking: {type: disabled}`; an effort becomes a `budget_tokens`
/// ([`budget_for`]); with neither, `PONDER_THINKING_BUDGET` as before.
pub fn request(
    config: &Config,
    base_url: &str,
    messages: &[ChatMessage],
    options: &TurnOptions,
) -> UpstreamRequest {
    let mut headers = vec![
        ("content-type", "application/json".to_string()),
        ("anthropic-version", API_VERSION.to_string()),
    ];
    if let Some(key) = &config.api_key {
        headers.push(("x-api-key", key.clone()));
    }
    let mut body = json!({
        "model": options.model,
        "max_tokens": config.max_output_tokens,
        "messages": super::openai::role_content(messages),
        "stream": true,
    });
    let settings = effective_settings(options);
    let asked = settings
        .effort
        .map(budget_for)
        .unwrap_or(config.thinking_budget);
    let budget = asked.min(config.max_output_tokens.saturating_sub(1));
    if settings.thinking == Some(false) {
        body["thinking"] = json!({"type": "disabled"});
    } else if budget >= MIN_BUDGET {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    UpstreamRequest {
        url: format!("{base_url}/messages"),
        headers,
        body,
    }
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    content_block: Option<BlockIn>,
    #[serde(default)]
    delta: Option<DeltaIn>,
    #[serde(default)]
    message: Option<MessageIn>,
    #[serde(default)]
    usage: Option<UsageIn>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct BlockIn {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
}

#[derive(Deserialize)]
struct DeltaIn {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct MessageIn {
    #[serde(default)]
    usage: Option<UsageIn>,
}

#[derive(Deserialize)]
struct UsageIn {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    thinking_tokens: Option<u64>,
}

impl UsageIn {
    /// Input counts the cached part of the prompt too: `input_tokens` alone leaves it out.
    fn normalize(&self) -> Usage {
        let input = self.input_tokens.map(|n| {
            n + self.cache_creation_input_tokens.unwrap_or(0)
                + self.cache_read_input_tokens.unwrap_or(0)
        });
        Usage {
            input_tokens: input,
            output_tokens: self.output_tokens,
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.thinking_tokens),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    Thinking,
    Text,
    Other,
}

/// Frame handling for one Messages stream.
#[derive(Default)]
pub struct MessagesFrames {
    blocks: HashMap<u64, BlockKind>,
    /// Whitespace-only answer text before any real answer (Opus sends `"\n\n"` before its
    /// thinking block): held so it does not open an empty answer above the reasoning.
    leading_ws: String,
    answered: bool,
    done: bool,
}

/// Parser for one Anthropic Messages stream.
pub type MessagesParser = Sse<MessagesFrames>;

/// Anthropic's stop reasons in the words the turn contract uses.
fn finish_reason(reason: &str) -> String {
    match reason {
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" => "length",
        "tool_use" => "tool_calls",
        other => other,
    }
    .to_string()
}

impl MessagesFrames {
    fn answer(&mut self, text: String, out: &mut Vec<Piece>) {
        if text.is_empty() {
            return;
        }
        if !self.answered && text.trim().is_empty() {
            self.leading_ws.push_str(&text);
            return;
        }
        self.answered = true;
        if self.leading_ws.is_empty() {
            out.push(Piece::Answer(text));
        } else {
            let mut all = std::mem::take(&mut self.leading_ws);
            all.push_str(&text);
            out.push(Piece::Answer(all));
        }
    }

    fn reasoning(text: Option<String>, out: &mut Vec<Piece>) {
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.push(Piece::Reasoning {
                text,
                kind: ThinkingKind::Raw,
            });
        }
    }

    fn block_start(&mut self, index: u64, block: BlockIn, out: &mut Vec<Piece>) {
        let kind = match block.kind.as_str() {
            "thinking" => {
                out.push(Piece::BlockStart {
                    kind: ThinkingKind::Raw,
                });
                Self::reasoning(block.thinking, out);
                BlockKind::Thinking
            }
            "redacted_thinking" => {
                out.push(Piece::BlockStart {
                    kind: ThinkingKind::Redacted,
                });
                BlockKind::Thinking
            }
            "text" => {
                self.answer(block.text.unwrap_or_default(), out);
                BlockKind::Text
            }
            _ => BlockKind::Other,
        };
        self.blocks.insert(index, kind);
    }

    fn block_delta(&mut self, index: u64, delta: DeltaIn, out: &mut Vec<Piece>) {
        let block = self.blocks.get(&index).copied();
        match delta.kind.as_deref() {
            Some("thinking_delta") if block != Some(BlockKind::Text) => {
                Self::reasoning(delta.thinking, out)
            }
            Some("text_delta") if block != Some(BlockKind::Thinking) => {
                self.answer(delta.text.unwrap_or_default(), out)
            }
            _ => {}
        }
    }
}

impl FrameHandler for MessagesFrames {
    fn is_over(&self) -> bool {
        self.done
    }

    fn on_frame(&mut self, event: Option<&str>, data: &str, out: &mut Vec<Piece>) {
        let parsed: Event = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => {
                super::skip_unparseable("anthropic", &e, data.len());
                if event == Some("error") {
                    out.push(Piece::Error(Failure {
                        message: "The model server reported an error.".into(),
                        retryable: true,
                    }));
                }
                return;
            }
        };
        let kind = parsed.kind.as_deref().or(event).unwrap_or("");
        let index = parsed.index.unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(u) = parsed.message.and_then(|m| m.usage) {
                    out.push(Piece::Usage(u.normalize()));
                }
            }
            "content_block_start" => {
                if let Some(block) = parsed.content_block {
                    self.block_start(index, block, out);
                }
            }
            "content_block_delta" => {
                if let Some(delta) = parsed.delta {
                    self.block_delta(index, delta, out);
                }
            }
            "content_block_stop" if self.blocks.get(&index) == Some(&BlockKind::Thinking) => {
                out.push(Piece::BlockEnd);
            }
            "message_delta" => {
                if let Some(reason) = parsed.delta.and_then(|d| d.stop_reason) {
                    out.push(Piece::Finish(finish_reason(&reason)));
                }
                if let Some(u) = parsed.usage {
                    out.push(Piece::Usage(u.normalize()));
                }
            }
            "message_stop" => {
                if !self.leading_ws.is_empty() {
                    out.push(Piece::Answer(std::mem::take(&mut self.leading_ws)));
                }
                self.done = true;
                out.push(Piece::End);
            }
            "error" => {
                let error = parsed.error.unwrap_or(Value::Null);
                out.push(super::error_piece(&error));
                self.done = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Vec<Piece> {
        crate::server::providers::parse_whole(MessagesParser::default(), body.as_bytes())
    }

    fn frame(event: &str, data: &str) -> String {
        format!("event: {event}\ndata: {data}\n\n")
    }

    #[test]
    fn thinking_then_text_with_usage_and_stop() {
        let body = [
            frame("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#),
            frame("ping", r#"{"type": "ping"}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}  "#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":0   }"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            frame("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":20,"output_tokens_details":{"thinking_tokens":12}}}"#),
            frame("message_stop", r#"{"type":"message_stop"}"#),
        ]
        .concat();
        assert_eq!(
            parse(&body),
            [
                Piece::Usage(Usage {
                    input_tokens: Some(15),
                    output_tokens: Some(1),
                    reasoning_tokens: None
                }),
                Piece::BlockStart {
                    kind: ThinkingKind::Raw
                },
                Piece::Reasoning {
                    text: "hm".into(),
                    kind: ThinkingKind::Raw
                },
                Piece::BlockEnd,
                Piece::Answer("Hi".into()),
                Piece::Finish("length".into()),
                Piece::Usage(Usage {
                    input_tokens: None,
                    output_tokens: Some(20),
                    reasoning_tokens: Some(12)
                }),
                Piece::End,
            ]
        );
    }

    #[test]
    fn several_thinking_blocks_in_one_message_are_separate_blocks() {
        let start = |i: u32, block: &str| {
            frame(
                "content_block_start",
                &format!(r#"{{"type":"content_block_start","index":{i},"content_block":{block}}}"#),
            )
        };
        let thinking = |i: u32, t: &str| {
            frame(
                "content_block_delta",
                &format!(
                    r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"thinking_delta","thinking":"{t}"}}}}"#
                ),
            )
        };
        let stop = |i: u32| {
            frame(
                "content_block_stop",
                &format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
            )
        };
        let body = [
            start(0, r#"{"type":"thinking","thinking":""}"#),
            thinking(0, "a"),
            stop(0),
            start(1, r#"{"type":"server_tool_use","id":"t","name":"web_search","input":{}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#),
            stop(1),
            start(2, r#"{"type":"thinking","thinking":""}"#),
            thinking(2, "b"),
            stop(2),
        ]
        .concat();
        let open = Piece::BlockStart {
            kind: ThinkingKind::Raw,
        };
        let r = |t: &str| Piece::Reasoning {
            text: t.into(),
            kind: ThinkingKind::Raw,
        };
        assert_eq!(
            parse(&body),
            [
                open.clone(),
                r("a"),
                Piece::BlockEnd,
                open,
                r("b"),
                Piece::BlockEnd
            ]
        );
    }

    #[test]
    fn redacted_blocks_start_and_end_without_text() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"opaque"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
        ]
        .concat();
        assert_eq!(
            parse(&body),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Redacted
                },
                Piece::BlockEnd
            ]
        );
    }

    #[test]
    fn whitespace_text_before_thinking_joins_the_answer() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\n\n"}}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"t"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"A"}}"#),
        ]
        .concat();
        let out = parse(&body);
        assert_eq!(
            out[0],
            Piece::BlockStart {
                kind: ThinkingKind::Raw
            }
        );
        assert_eq!(out.last(), Some(&Piece::Answer("\n\nA".into())));
    }

    #[test]
    fn error_events_end_the_stream() {
        let body = [
            frame(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
            frame("message_stop", r#"{"type":"message_stop"}"#),
        ]
        .concat();
        assert_eq!(
            parse(&body),
            [Piece::Error(Failure {
                message: "The model server reported an error: Overloaded".into(),
                retryable: true
            })]
        );
        let out = parse(&frame(
            "error",
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"no"}}"#,
        ));
        assert!(matches!(
            out.as_slice(),
            [Piece::Error(Failure {
                retryable: false,
                ..
            })]
        ));
    }

    #[test]
    fn the_request_asks_for_thinking_within_the_output_limit() {
        let config = |vars: &'static [(&'static str, &'static str)]| {
            Config::from_lookup(|n| {
                vars.iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            })
            .unwrap()
        };
        let c = config(&[
            ("PONDER_API_KEY", "sk-ant"),
            ("PONDER_THINKING_BUDGET", "2048"),
        ]);
        let req = request(
            &c,
            "https://api.anthropic.com/v1",
            &[ChatMessage::user("hi")],
            &super::super::TurnOptions::default_for(&c),
        );
        assert_eq!(req.url, "https://api.anthropic.com/v1/messages");
        assert_eq!(req.body["thinking"]["budget_tokens"], 2048);
        assert_eq!(req.body["stream"], true);
        assert!(req.headers.contains(&("x-api-key", "sk-ant".into())));
        assert!(req
            .headers
            .contains(&("anthropic-version", API_VERSION.into())));
        assert!(!req.body.to_string().contains("sk-ant"));

        let c = config(&[
            ("PONDER_MAX_OUTPUT_TOKENS", "4000"),
            ("PONDER_THINKING_BUDGET", "8000"),
        ]);
        let req = request(&c, "u", &[], &super::super::TurnOptions::default_for(&c));
        assert_eq!(req.body["thinking"]["budget_tokens"], 3999);
        let c = config(&[("PONDER_MAX_OUTPUT_TOKENS", "1000")]);
        assert!(
            request(&c, "u", &[], &super::super::TurnOptions::default_for(&c))
                .body
                .get("thinking")
                .is_none()
        );
    }
}
