//! Google's Interactions API (`POST /v1beta/interactions`, `stream: true`, header
//! `Api-Revision`), the format Google's documentation now leads with.
//!
//! The response is an ordered list of steps, streamed as SSE events named in `event_type`:
//! `step.start` opens step `index` (`thought`, `model_output`, `function_call`, a server
//! tool's call or result), `step.delta` adds to it (`thought_summary` text, a
//! `thought_signature`, answer `text`, `arguments_delta`, citations), `step.stop` ends it, and
//! `interaction.completed` carries the status and usage. A `thought` step always carries a
//! signature and has summary text only when `thinking_summaries` asks for it: one that ends
//! without text is a `hidden` block. Ponder asks for summaries, so a thought's text is a
//! `summary` block. Each thought's signature goes to the turn's reasoning state and comes back
//! the next turn as a `thought` step before the answer it preceded.

use crate::domain::FinishReason;
use crate::server::config::ProviderKind;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{FrameHandler, Piece, Sse, StateText, TurnOptions, UpstreamRequest};
use crate::domain::{ChatMessage, Role, ThinkingKind, Usage};
use crate::server::config::Config;

/// The API revision Ponder speaks (the header pins the wire against breaking changes).
pub const API_REVISION: &str = "2026-05-20";

/// How much of a function call's streamed arguments is kept to summarize it.
const MAX_ARGUMENTS: usize = 64 * 1024;

/// The request: streamed, not stored upstream, the history as steps, thought summaries asked
/// for and the depth as `generation_config.thinking_level` (Gemini 3's levels; a Gemini 2.5
/// model takes the same field through this API).
pub fn request(
    config: &Config,
    base_url: &str,
    messages: &[ChatMessage],
    options: &TurnOptions,
) -> UpstreamRequest {
    let mut headers = vec![
        ("content-type", "application/json".to_string()),
        ("api-revision", API_REVISION.to_string()),
    ];
    if let Some(key) = &config.api_key {
        headers.push(("x-goog-api-key", key.clone()));
    }
    let model = options
        .model
        .strip_prefix("models/")
        .unwrap_or(&options.model);
    let input: Vec<Value> = messages
        .iter()
        .map(|m| {
            let kind = match m.role {
                Role::User => "user_input",
                Role::Assistant => "model_output",
            };
            let content = if m.files.is_empty() {
                json!([{"type": "text", "text": m.content}])
            } else {
                super::files::user_content(ProviderKind::Interactions, &m.content, &m.files)
            };
            json!({"type": kind, "content": content})
        })
        .zip(messages)
        .flat_map(|(step, m)| m.replay.iter().cloned().chain([step]))
        .collect();
    let mut generation = json!({
        "max_output_tokens": options.max_tokens(config),
        "thinking_summaries": "auto",
    });
    options.put_sampling(&mut generation, "temperature", "top_p");
    let settings = super::effective_settings(options);
    let thinking = super::gemini::thinking_config(model, settings);
    if let Some(level) = thinking.get("thinkingLevel") {
        generation["thinking_level"] = level.clone();
    } else if let Some(effort) = settings.effort {
        generation["thinking_level"] = json!(effort.as_str());
    } else if settings.thinking == Some(false) {
        generation["thinking_level"] = json!("low");
    }
    let mut body = json!({
        "model": model,
        "input": input,
        "stream": true,
        "store": false,
        "generation_config": generation,
    });
    if let Some(text) = &options.instructions {
        body["system_instruction"] = json!(text);
    }
    UpstreamRequest {
        url: format!("{base_url}/interactions"),
        headers,
        body,
    }
}

#[derive(Deserialize)]
struct Event {
    #[serde(default)]
    event_type: Option<String>,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    step: Option<StepIn>,
    #[serde(default)]
    delta: Option<DeltaIn>,
    #[serde(default)]
    interaction: Option<InteractionIn>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StepIn {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    summary: Option<Value>,
    #[serde(default)]
    signature: Option<String>,
}

#[derive(Deserialize)]
struct DeltaIn {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    annotations: Option<Vec<Value>>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    signature: Option<String>,
}

#[derive(Deserialize)]
struct InteractionIn {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    usage: Option<UsageIn>,
}

#[derive(Deserialize)]
struct UsageIn {
    #[serde(default)]
    total_input_tokens: Option<u64>,
    #[serde(default)]
    total_output_tokens: Option<u64>,
    #[serde(default)]
    total_thought_tokens: Option<u64>,
    #[serde(default)]
    total_cached_tokens: Option<u64>,
    /// The input's count by modality: the files are what is not text.
    #[serde(default)]
    input_tokens_by_modality: Option<Vec<ModalityCount>>,
}

#[derive(Deserialize)]
struct ModalityCount {
    #[serde(default)]
    modality: String,
    #[serde(default)]
    tokens: u64,
}

impl UsageIn {
    /// Output counts the thoughts too: `total_output_tokens` leaves them out.
    fn normalize(&self) -> Usage {
        Usage {
            input_tokens: self.total_input_tokens,
            output_tokens: self
                .total_output_tokens
                .map(|n| n + self.total_thought_tokens.unwrap_or(0)),
            reasoning_tokens: self.total_thought_tokens,
            file_tokens: self.input_tokens_by_modality.as_ref().map(|by| {
                by.iter()
                    .filter(|m| !m.modality.eq_ignore_ascii_case("text"))
                    .map(|m| m.tokens)
                    .sum()
            }),
            cached_input_tokens: self.total_cached_tokens,
            ..Default::default()
        }
    }
}

/// What a step under way is.
enum StepState {
    /// A thought: whether readable summary text arrived, and its signature so far.
    Thought {
        readable: bool,
        signature: StateText,
    },
    /// A function the app is to run, its arguments still streaming.
    Call {
        id: String,
        name: String,
        arguments: String,
    },
    /// A server tool's call (`google_search_call`, `code_execution_call`, …): its id and name.
    ToolCall { id: String, name: String },
    /// A server tool's result, for the call with this id.
    ToolResult { id: String, name: String },
    /// The answer, or a step Ponder does not show.
    Other,
}

/// The name of the tool a server tool step is about: `google_search_call` → `google_search`.
fn tool_name(kind: &str) -> Option<(&str, bool)> {
    if let Some(name) = kind.strip_suffix("_call") {
        return Some((name, false));
    }
    kind.strip_suffix("_result").map(|name| (name, true))
}

/// Frame handling for one Interactions stream.
#[derive(Default)]
pub struct InteractionFrames {
    steps: HashMap<u64, StepState>,
    /// `interaction.completed` (or a failure) arrived: nothing after it counts.
    done: bool,
    /// A function the app is to run was called: the interaction stopped for it.
    function_called: bool,
}

/// Parser for one Interactions stream.
pub type InteractionsParser = Sse<InteractionFrames>;

impl InteractionFrames {
    fn keep(&mut self, index: u64, state: StepState) {
        if self.steps.len() < super::MAX_PENDING || self.steps.contains_key(&index) {
            self.steps.insert(index, state);
        }
    }

    fn step_start(&mut self, index: u64, step: StepIn, out: &mut Vec<Piece>) {
        let state = match step.kind.as_str() {
            "thought" => {
                out.push(Piece::BlockStart {
                    kind: ThinkingKind::Summary,
                });
                let text = summary_text(step.summary.as_ref());
                let readable = !text.is_empty();
                if readable {
                    out.push(Piece::Reasoning {
                        text,
                        kind: ThinkingKind::Summary,
                    });
                }
                let mut signature = StateText::default();
                signature.push(step.signature.as_deref().unwrap_or_default());
                StepState::Thought {
                    readable,
                    signature,
                }
            }
            "function_call" => {
                let arguments = step
                    .arguments
                    .filter(|a| !a.as_object().is_some_and(|m| m.is_empty()))
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                StepState::Call {
                    id: step.id.unwrap_or_default(),
                    name: step.name.unwrap_or_default(),
                    arguments,
                }
            }
            kind => match tool_name(kind) {
                Some((name, false)) => StepState::ToolCall {
                    id: step.id.unwrap_or_default(),
                    name: name.to_string(),
                },
                Some((name, true)) => StepState::ToolResult {
                    id: step.call_id.or(step.id).unwrap_or_default(),
                    name: name.to_string(),
                },
                None => StepState::Other,
            },
        };
        self.keep(index, state);
    }

    fn step_delta(&mut self, index: u64, delta: DeltaIn, out: &mut Vec<Piece>) {
        let kind = delta.kind.as_deref().unwrap_or_default();
        match (kind, self.steps.get_mut(&index)) {
            ("text", state) if !matches!(state, Some(StepState::Thought { .. })) => {
                if let Some(text) = delta.text.filter(|t| !t.is_empty()) {
                    out.push(Piece::Answer(text));
                }
            }
            ("thought_signature", Some(StepState::Thought { signature, .. })) => {
                signature.push(delta.signature.as_deref().unwrap_or_default());
            }
            ("thought_summary", Some(StepState::Thought { readable, .. })) => {
                let text = summary_text(delta.content.as_ref());
                if !text.is_empty() {
                    *readable = true;
                    out.push(Piece::Reasoning {
                        text,
                        kind: ThinkingKind::Summary,
                    });
                }
            }
            ("arguments_delta", Some(StepState::Call { arguments, .. })) => {
                if let Some(part) = delta.arguments.as_ref().and_then(Value::as_str) {
                    if arguments.len() + part.len() <= MAX_ARGUMENTS {
                        arguments.push_str(part);
                    }
                }
            }
            ("text_annotation_delta", _) => {
                for a in delta.annotations.iter().flatten() {
                    if let Some(url) = a.get("url").and_then(Value::as_str) {
                        out.push(Piece::Source {
                            url: url.to_string(),
                            title: a.get("title").and_then(Value::as_str).map(str::to_string),
                        });
                    }
                }
            }
            (_, Some(StepState::ToolCall { id, name })) => {
                out.push(Piece::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: super::input_of(delta.arguments.as_ref().unwrap_or(&Value::Null)),
                });
            }
            (_, Some(StepState::ToolResult { id, name })) => {
                out.push(Piece::ToolResult {
                    id: id.clone(),
                    name: name.clone(),
                    ok: delta.is_error != Some(true),
                    output: result_summary(delta.result.as_ref()),
                });
                super::sources_from(delta.result.as_ref(), out);
            }
            _ => {}
        }
    }

    fn step_stop(&mut self, index: u64, out: &mut Vec<Piece>) {
        match self.steps.remove(&index) {
            Some(StepState::Thought {
                readable,
                signature,
            }) => {
                if signature.lost {
                    out.push(Piece::StateLost);
                } else if !signature.text.is_empty() {
                    out.push(Piece::State(
                        json!({"type": "thought", "signature": signature.text}),
                    ));
                }
                if !readable {
                    out.push(Piece::BlockKind {
                        kind: ThinkingKind::Hidden,
                    });
                }
                out.push(Piece::BlockEnd);
            }
            Some(StepState::Call {
                id,
                name,
                arguments,
            }) => {
                self.function_called = true;
                out.push(Piece::ToolCall {
                    id,
                    name,
                    input: super::tool_input(&arguments),
                });
            }
            _ => {}
        }
    }

    fn completed(&mut self, interaction: Option<InteractionIn>, out: &mut Vec<Piece>) {
        let Some(interaction) = interaction else {
            out.push(Piece::End);
            return;
        };
        if let Some(usage) = &interaction.usage {
            out.push(Piece::Usage(usage.normalize()));
        }
        let status = interaction.status.as_deref().unwrap_or("completed");
        match status {
            "failed" | "cancelled" => out.push(super::error_piece(
                &json!({"message": format!("the interaction ended {status}")}),
            )),
            _ => out.push(Piece::Finish(finish_reason(status, self.function_called))),
        }
        out.push(Piece::End);
    }
}

/// The finish reason of a completed interaction's status.
fn finish_reason(status: &str, function_called: bool) -> FinishReason {
    match status {
        "requires_action" => FinishReason::ToolCalls,
        "incomplete" | "budget_exceeded" => FinishReason::Length,
        _ if function_called => FinishReason::ToolCalls,
        _ => FinishReason::Stop,
    }
}

/// The text of a summary: one content (`{"type":"text","text":…}`) or a list of them; images
/// are not shown in the block.
fn summary_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::Array(items)) => items.iter().map(|c| summary_text(Some(c))).collect(),
        Some(c) if c.get("type").and_then(Value::as_str) == Some("text") => c
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

/// What a server tool's result card says: its text output, or how many results it had.
fn result_summary(result: Option<&Value>) -> String {
    match result {
        Some(Value::String(text)) => text.chars().take(2_000).collect(),
        Some(Value::Array(items)) => match items.len() {
            1 => "1 result".into(),
            n => format!("{n} results"),
        },
        Some(other) => super::input_of(other).chars().take(2_000).collect(),
        None => String::new(),
    }
}

impl FrameHandler for InteractionFrames {
    fn is_over(&self) -> bool {
        self.done
    }

    fn on_frame(&mut self, event: Option<&str>, data: &str, out: &mut Vec<Piece>) {
        let parsed: Event = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => {
                super::skip_unparseable("interactions", &e, data.len());
                return;
            }
        };
        let kind = parsed.event_type.as_deref().or(event).unwrap_or_default();
        let index = parsed.index.unwrap_or(0);
        match kind {
            "step.start" => {
                if let Some(step) = parsed.step {
                    self.step_start(index, step, out);
                }
            }
            "step.delta" => {
                if let Some(delta) = parsed.delta {
                    self.step_delta(index, delta, out);
                }
            }
            "step.stop" => self.step_stop(index, out),
            "interaction.status_update"
                if matches!(parsed.status.as_deref(), Some("failed" | "cancelled")) =>
            {
                let status = parsed.status.unwrap_or_default();
                out.push(super::error_piece(
                    &json!({"message": format!("the interaction ended {status}")}),
                ));
                self.done = true;
            }
            "interaction.completed" => {
                self.completed(parsed.interaction, out);
                self.done = true;
            }
            "error" => {
                out.push(super::error_piece(&parsed.error.unwrap_or(Value::Null)));
                self.done = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(events: &[Value]) -> Vec<Piece> {
        let body: String = events
            .iter()
            .map(|e| {
                format!(
                    "event: {}\ndata: {e}\n\n",
                    e["event_type"].as_str().unwrap_or("")
                )
            })
            .collect();
        super::super::parse_whole(InteractionsParser::default(), body.as_bytes())
    }

    #[test]
    fn a_thought_with_a_summary_then_the_answer_and_usage() {
        let out = parse(&[
            json!({"event_type":"interaction.created","interaction":{"id":"v1_x","status":"in_progress"}}),
            json!({"event_type":"step.start","index":0,"step":{"type":"thought"}}),
            json!({"event_type":"step.delta","index":0,"delta":{"type":"thought_summary","content":{"type":"text","text":"Weighing it."}}}),
            json!({"event_type":"step.delta","index":0,"delta":{"type":"thought_signature","signature":"c2ln"}}),
            json!({"event_type":"step.stop","index":0}),
            json!({"event_type":"step.start","index":1,"step":{"type":"model_output"}}),
            json!({"event_type":"step.delta","index":1,"delta":{"type":"text","text":"Blue."}}),
            json!({"event_type":"step.stop","index":1}),
            json!({"event_type":"interaction.completed","interaction":{"status":"completed","usage":{"total_input_tokens":7,"total_output_tokens":26,"total_thought_tokens":115}}}),
            json!({"event_type":"step.delta","index":1,"delta":{"type":"text","text":"late"}}),
        ]);
        assert_eq!(
            super::super::shown(out.clone()),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Summary
                },
                Piece::Reasoning {
                    text: "Weighing it.".into(),
                    kind: ThinkingKind::Summary
                },
                Piece::BlockEnd,
                Piece::Answer("Blue.".into()),
                Piece::Usage(Usage {
                    input_tokens: Some(7),
                    output_tokens: Some(141),
                    reasoning_tokens: Some(115),
                    file_tokens: None,
                    ..Default::default()
                }),
                Piece::Finish("stop".into()),
                Piece::End,
            ]
        );
    }

    #[test]
    fn a_thought_with_only_a_signature_is_hidden_and_a_function_call_stops_the_turn() {
        let out = parse(&[
            json!({"event_type":"step.start","index":0,"step":{"type":"thought"}}),
            json!({"event_type":"step.delta","index":0,"delta":{"type":"thought_signature","signature":"c2ln"}}),
            json!({"event_type":"step.stop","index":0}),
            json!({"event_type":"step.start","index":1,"step":{"id":"61nz","signature":"","type":"function_call","name":"getWeather","arguments":{}}}),
            json!({"event_type":"step.delta","index":1,"delta":{"type":"arguments_delta","arguments":"{\"location\":"}}),
            json!({"event_type":"step.delta","index":1,"delta":{"type":"arguments_delta","arguments":"\"Paris\"}"}}),
            json!({"event_type":"step.stop","index":1}),
            json!({"event_type":"interaction.completed","interaction":{"status":"requires_action"}}),
        ]);
        assert_eq!(
            super::super::shown(out.clone()),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Summary
                },
                Piece::BlockKind {
                    kind: ThinkingKind::Hidden
                },
                Piece::BlockEnd,
                Piece::ToolCall {
                    id: "61nz".into(),
                    name: "getWeather".into(),
                    input: "{\"location\":\"Paris\"}".into()
                },
                Piece::Finish("tool_calls".into()),
                Piece::End,
            ]
        );
    }

    #[test]
    fn server_tools_citations_and_errors() {
        let out = parse(&[
            json!({"event_type":"step.start","index":2,"step":{"id":"s1","type":"google_search_call"}}),
            json!({"event_type":"step.delta","index":2,"delta":{"type":"google_search_call","arguments":{"queries":["a","b"]}}}),
            json!({"event_type":"step.stop","index":2}),
            json!({"event_type":"step.start","index":3,"step":{"call_id":"s1","type":"google_search_result"}}),
            json!({"event_type":"step.delta","index":3,"delta":{"type":"google_search_result","result":[{"search_suggestions":"<b>x</b>"}]}}),
            json!({"event_type":"step.delta","index":1,"delta":{"type":"text_annotation_delta","annotations":[{"type":"url_citation","url":"https://a.example/","title":"a"}]}}),
            json!({"event_type":"error","error":{"code":"resource_exhausted","message":"quota"}}),
        ]);
        assert_eq!(
            out[..3],
            [
                Piece::ToolCall {
                    id: "s1".into(),
                    name: "google_search".into(),
                    input: "a · b".into()
                },
                Piece::ToolResult {
                    id: "s1".into(),
                    name: "google_search".into(),
                    ok: true,
                    output: "1 result".into()
                },
                Piece::Source {
                    url: "https://a.example/".into(),
                    title: Some("a".into())
                },
            ]
        );
        assert!(
            matches!(&out[3], Piece::Error(f) if f.message.contains("quota")),
            "{out:?}"
        );
    }

    #[test]
    fn the_request_asks_for_summaries_and_a_level() {
        use crate::domain::{Effort, ReasoningSettings};
        let c = Config::from_lookup(|v| (v == "PONDER_API_KEY").then(|| "k".to_string())).unwrap();
        let options = TurnOptions {
            model: "gemini-3-flash-preview".into(),
            settings: ReasoningSettings::reasoning(None, Some(Effort::Medium)),
            ..Default::default()
        };
        let req = request(
            &c,
            "https://generativelanguage.googleapis.com/v1beta",
            &[ChatMessage::user("hi")],
            &options,
        );
        assert_eq!(
            req.url,
            "https://generativelanguage.googleapis.com/v1beta/interactions"
        );
        assert!(req.headers.contains(&("api-revision", API_REVISION.into())));
        assert!(req.headers.contains(&("x-goog-api-key", "k".into())));
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["store"], false);
        assert_eq!(req.body["generation_config"]["thinking_summaries"], "auto");
        assert_eq!(req.body["generation_config"]["thinking_level"], "medium");
        assert_eq!(
            req.body["input"],
            json!([{"type": "user_input", "content": [{"type": "text", "text": "hi"}]}])
        );
    }

    #[test]
    fn thought_signatures_go_back_as_thought_steps_before_their_answer() {
        let out = parse(&[
            json!({"event_type":"step.start","index":0,"step":{"type":"thought"}}),
            json!({"event_type":"step.delta","index":0,"delta":{"type":"thought_signature","signature":"c2"}}),
            json!({"event_type":"step.delta","index":0,"delta":{"type":"thought_signature","signature":"ln"}}),
            json!({"event_type":"step.stop","index":0}),
        ]);
        let thought = json!({"type": "thought", "signature": "c2ln"});
        assert_eq!(super::super::states(&out), std::slice::from_ref(&thought));
        let config =
            Config::from_lookup(|n| (n == "PONDER_PROVIDER").then(|| "gemini-interactions".into()))
                .unwrap();
        let messages = [
            ChatMessage::user("q"),
            ChatMessage {
                replay: vec![thought.clone()],
                ..ChatMessage::assistant("a")
            },
            ChatMessage::user("q2"),
        ];
        let body = request(&config, "http://u", &messages, &TurnOptions::default()).body;
        let input = body["input"].as_array().unwrap();
        assert_eq!(input.len(), 4);
        assert_eq!(input[1], thought);
        assert_eq!(input[2]["type"], "model_output");
    }

    #[test]
    fn the_files_tokens_are_the_prompt_s_count_that_is_not_text() {
        let with: UsageIn = serde_json::from_str(r#"{"total_input_tokens":783,"total_output_tokens":5,"input_tokens_by_modality":[{"modality":"text","tokens":9},{"modality":"image","tokens":258},{"modality":"document","tokens":516}]}"#).unwrap();
        let usage = with.normalize();
        assert_eq!(
            (usage.input_tokens, usage.file_tokens),
            (Some(783), Some(774))
        );
        let without: UsageIn = serde_json::from_str(r#"{"total_input_tokens":4}"#).unwrap();
        assert_eq!(
            without.normalize().file_tokens,
            None,
            "not reported: unknown"
        );
    }
}
