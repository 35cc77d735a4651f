//! OpenAI Responses (`POST /v1/responses`, `stream: true`), from api.openai.com and the servers
//! that copy it (OpenRouter, DeepSeek, LM Studio, xAI, GitHub Copilot).
//!
//! Every event has a `type`; state is keyed by `output_index` because some servers change item
//! ids on every event. A `reasoning` item becomes one block: its summary parts joined by a blank
//! line, or its `reasoning_text`. Items may close out of order (OpenRouter ends the reasoning
//! item after the message). `response.completed` / `incomplete` end the turn,
//! `response.failed` and `error` (nested or flat) fail it; `[DONE]` means nothing.
//!
//! The block's kind is fixed when it starts, and it starts when the reasoning item appears: the
//! model then reasons silently, often for many seconds, before any summary (or none, when the
//! reasoning stays encrypted), and the reader should see "Thinking…" and its true duration.
//! An item that lists a `content` array (DeepSeek, LM Studio) streams raw `reasoning_text`
//! right away: its block waits for that first part and is `raw`. Any other item is announced
//! as `summary`, what Ponder asks for; an item of that kind that never shows text is a
//! summary-less block, and a raw text in it keeps the announced kind (OpenRouter). A waiting
//! item that ends with no text reasoned in encrypted form only: a `hidden` block.
//!
//! Each finished reasoning item goes whole to the turn's reasoning state, and comes back in
//! the next request's `input` before its answer: with `store: false` its encrypted content is
//! the only way the model sees its earlier reasoning.

use crate::domain::FinishReason;
use crate::server::config::ProviderKind;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    effective_settings, FrameHandler, Piece, Sse, TurnOptions, UpstreamRequest, MAX_STATE_BYTES,
};
use crate::domain::{ChatMessage, ThinkingKind, Usage};
use crate::server::config::Config;

/// The summary a model is asked for: `detailed` for OpenAI's reasoning models that document it
/// (GPT-5 and later, o3, o4-mini), `auto` (the most detailed the model has) for the rest.
pub fn summary_for(model: &str) -> &'static str {
    let model = model.to_ascii_lowercase();
    let name = model.rsplit('/').next().unwrap_or(&model);
    let detailed = name.starts_with("gpt-5")
        || name.starts_with("gpt-6")
        || name.starts_with("o3")
        || name.starts_with("o4");
    if detailed {
        "detailed"
    } else {
        "auto"
    }
}

/// The request: streaming, not stored upstream (`store: false`), with reasoning summaries
/// ([`summary_for`]) and the reasoning's encrypted state included, since with nothing stored
/// upstream it is the only form a later request could carry it in.
///
/// An effort goes as `reasoning.effort`.
pub fn request(
    config: &Config,
    base_url: &str,
    messages: &[ChatMessage],
    options: &TurnOptions,
) -> UpstreamRequest {
    let mut headers = vec![("content-type", "application/json".to_string())];
    if let Some(key) = &config.api_key {
        headers.push(("authorization", format!("Bearer {key}")));
    }
    let mut reasoning = json!({"summary": summary_for(&options.model)});
    let settings = effective_settings(options);
    // The wire has no "off": thinking off asks for the least reasoning there is.
    let effort = match settings.thinking {
        Some(false) => Some(crate::domain::Effort::Low),
        _ => settings.effort,
    };
    if let Some(effort) = effort {
        reasoning["effort"] = json!(effort.as_str());
    }
    let mut body = json!({
        "model": options.model,
        "input": input_with_replay(messages),
        "stream": true,
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": options.max_tokens(config),
        "reasoning": reasoning,
    });
    options.put_sampling(&mut body, "temperature", "top_p");
    if let Some(text) = &options.instructions {
        body["instructions"] = json!(text);
    }
    UpstreamRequest {
        url: format!("{base_url}/responses"),
        headers,
        body,
    }
}

/// The input items: each answer with reasoning state to send back is preceded by its reasoning
/// items as they came (with `store: false` they carry their encrypted content).
fn input_with_replay(messages: &[ChatMessage]) -> Vec<Value> {
    let list = super::openai::role_content(ProviderKind::Responses, messages);
    let mut input = Vec::with_capacity(list.len());
    for (item, message) in list.into_iter().zip(messages) {
        input.extend(message.replay.iter().cloned());
        input.push(item);
    }
    input
}

/// A finished reasoning item (`response.output_item.done`), whole, to send back next turn.
fn reasoning_state(data: &str) -> Piece {
    if data.len() > MAX_STATE_BYTES {
        return Piece::StateLost;
    }
    match serde_json::from_str::<Value>(data) {
        Ok(mut frame) => Piece::State(frame["item"].take()),
        Err(_) => Piece::StateLost,
    }
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    item: Option<ItemIn>,
    #[serde(default)]
    part: Option<PartIn>,
    #[serde(default)]
    annotation: Option<Value>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    response: Option<ResponseIn>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

#[derive(Deserialize)]
struct ItemIn {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    content: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    server_label: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    action: Option<Value>,
    #[serde(default)]
    queries: Option<Value>,
    #[serde(default)]
    outputs: Option<Value>,
    #[serde(default)]
    output: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

impl ItemIn {
    /// A tool call item (`web_search_call`, `code_interpreter_call`, `mcp_call`,
    /// `function_call`, `file_search_call`, …).
    fn is_tool(&self) -> bool {
        self.kind.ends_with("_call")
    }

    fn tool_name(&self) -> String {
        match (&self.name, &self.server_label) {
            (Some(name), Some(server)) => format!("{name} ({server})"),
            (Some(name), None) => name.clone(),
            _ => self.kind.trim_end_matches("_call").to_string(),
        }
    }

    fn tool_input(&self) -> String {
        if let Some(code) = self.code.as_deref().filter(|c| !c.is_empty()) {
            return code.to_string();
        }
        if let Some(args) = self.arguments.as_deref().filter(|a| !a.is_empty()) {
            return super::tool_input(args);
        }
        if let Some(queries) = &self.queries {
            return super::input_of(&json!({ "queries": queries }));
        }
        self.action
            .as_ref()
            .map(super::input_of)
            .unwrap_or_default()
    }

    fn tool_call(&self) -> Piece {
        Piece::ToolCall {
            id: self.id.clone().unwrap_or_default(),
            name: self.tool_name(),
            input: self.tool_input(),
        }
    }

    /// The end of a server tool: failed when its status or error says so; a code run's logs, an
    /// MCP tool's output, or an error's message as its summary. Sources a web search lists
    /// come first.
    fn tool_result(&self, out: &mut Vec<Piece>) {
        let error = self.error.as_ref().filter(|e| !e.is_null());
        let ok =
            error.is_none() && !matches!(self.status.as_deref(), Some("failed" | "incomplete"));
        super::sources_from(self.action.as_ref().and_then(|a| a.get("sources")), out);
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| other.to_string(), str::to_string),
        };
        let output = if let Some(error) = error {
            text(error)
        } else if let Some(outputs) = self.outputs.as_ref().and_then(Value::as_array) {
            outputs
                .iter()
                .filter_map(|o| o.get("logs").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            self.output.as_ref().map(text).unwrap_or_default()
        };
        out.push(Piece::ToolResult {
            id: self.id.clone().unwrap_or_default(),
            name: self.tool_name(),
            ok,
            output,
        });
    }
}

#[derive(Deserialize)]
struct PartIn {
    #[serde(rename = "type", default)]
    kind: String,
}

#[derive(Deserialize)]
struct ResponseIn {
    #[serde(default)]
    usage: Option<UsageIn>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<IncompleteIn>,
}

#[derive(Deserialize)]
struct IncompleteIn {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct UsageIn {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl UsageIn {
    fn normalize(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens),
            file_tokens: None,
            cached_input_tokens: self
                .input_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens),
            ..Default::default()
        }
    }
}

#[derive(Debug, Default)]
struct Item {
    reasoning: bool,
    /// The kind announced with the block's start, once the item showed what it carries.
    announced: Option<ThinkingKind>,
    /// Text arrived for the current part; the next part starts after a blank line.
    has_text: bool,
    separate_next: bool,
    /// Deltas arrived: the `.done` events repeat them and are ignored.
    streamed: bool,
}

/// Frame handling for one Responses stream.
#[derive(Default)]
pub struct ResponsesFrames {
    items: HashMap<u64, Item>,
    /// Stands in for an item past [`super::MAX_PENDING`] distinct ones, so a hostile stream
    /// naming endless item indices holds bounded memory.
    overflow: Item,
    /// The reasoning item whose block is open, as far as this parser knows.
    open: Option<u64>,
    done: bool,
    /// The model asked for a function the app is to run: the response stopped for it.
    function_called: bool,
}

/// Parser for one Responses stream.
pub type ResponsesParser = Sse<ResponsesFrames>;

fn finish_reason(incomplete: Option<&str>) -> FinishReason {
    match incomplete {
        Some("max_output_tokens") | None => FinishReason::Length,
        Some(other) => FinishReason::parse(other),
    }
}

impl ResponsesFrames {
    fn item(&mut self, index: u64) -> &mut Item {
        if self.items.len() >= super::MAX_PENDING && !self.items.contains_key(&index) {
            self.overflow = Item::default();
            return &mut self.overflow;
        }
        self.items.entry(index).or_default()
    }

    fn start_block(&mut self, index: u64, kind: ThinkingKind, out: &mut Vec<Piece>) {
        let item = self.item(index);
        item.reasoning = true;
        if item.announced.is_none() {
            item.announced = Some(kind);
            out.push(Piece::BlockStart { kind });
            self.open = Some(index);
        }
    }

    fn new_part(&mut self, index: u64) {
        let item = self.item(index);
        item.separate_next = item.has_text;
    }

    fn reasoning(&mut self, index: u64, kind: ThinkingKind, text: String, out: &mut Vec<Piece>) {
        self.start_block(index, kind, out);
        if text.is_empty() {
            return;
        }
        let item = self.item(index);
        if item.announced == Some(ThinkingKind::Summary)
            && kind == ThinkingKind::Raw
            && !item.has_text
        {
            item.announced = Some(kind);
            out.push(Piece::BlockKind { kind });
        }
        let kind = item.announced.unwrap_or(kind);
        item.streamed = true;
        item.has_text = true;
        let text = if std::mem::take(&mut item.separate_next) {
            format!("\n\n{text}")
        } else {
            text
        };
        self.open = Some(index);
        out.push(Piece::Reasoning { text, kind });
    }

    fn answer(&mut self, index: u64, text: String, out: &mut Vec<Piece>) {
        if text.is_empty() {
            return;
        }
        self.item(index).streamed = true;
        self.open = None;
        out.push(Piece::Answer(text));
    }

    fn item_done(&mut self, index: u64, out: &mut Vec<Piece>) {
        let Some(item) = self.items.get(&index) else {
            return;
        };
        if !item.reasoning {
            return;
        }
        let readable = item.has_text;
        if item.announced.is_none() {
            self.start_block(index, ThinkingKind::Hidden, out);
        } else if !readable && self.open == Some(index) {
            out.push(Piece::BlockKind {
                kind: ThinkingKind::Hidden,
            });
        }
        if self.open == Some(index) {
            self.open = None;
            out.push(Piece::BlockEnd);
        }
    }

    fn end(
        &mut self,
        response: Option<ResponseIn>,
        finish: Option<FinishReason>,
        out: &mut Vec<Piece>,
    ) {
        if let Some(u) = response.as_ref().and_then(|r| r.usage.as_ref()) {
            out.push(Piece::Usage(u.normalize()));
        }
        if let Some(reason) = finish {
            out.push(Piece::Finish(super::finished(reason, self.function_called)));
        }
        out.push(Piece::End);
        self.done = true;
    }
}

impl FrameHandler for ResponsesFrames {
    fn is_over(&self) -> bool {
        self.done
    }

    fn on_frame(&mut self, event: Option<&str>, data: &str, out: &mut Vec<Piece>) {
        if data == "[DONE]" {
            return;
        }
        let parsed: Event = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => {
                super::skip_unparseable("responses", &e, data.len());
                return;
            }
        };
        let index = parsed.output_index.unwrap_or(0);
        let kind = parsed.kind.as_deref().or(event).unwrap_or("");
        match kind {
            "response.output_item.added" if parsed.item.as_ref().is_some_and(ItemIn::is_tool) => {
                if let Some(item) = parsed.item {
                    self.function_called |= item.kind == "function_call";
                    out.push(item.tool_call());
                }
            }
            "response.output_item.done" if parsed.item.as_ref().is_some_and(ItemIn::is_tool) => {
                if let Some(item) = parsed.item {
                    out.push(item.tool_call());
                    if item.kind != "function_call" {
                        item.tool_result(out);
                    }
                }
            }
            "response.output_text.annotation.added" => {
                let annotation = parsed.annotation.unwrap_or(Value::Null);
                let field = |k: &str| annotation.get(k).and_then(Value::as_str);
                if let (Some("url_citation"), Some(url)) = (field("type"), field("url")) {
                    out.push(Piece::Cite {
                        url: url.to_string(),
                        title: field("title").map(str::to_string),
                    });
                }
            }
            "response.output_item.added" => {
                let item = parsed.item;
                let reasoning = item.as_ref().is_some_and(|i| i.kind == "reasoning");
                let raw_content = item.is_some_and(|i| i.content.is_some());
                if self.items.len() < super::MAX_PENDING || self.items.contains_key(&index) {
                    self.items.insert(
                        index,
                        Item {
                            reasoning,
                            ..Item::default()
                        },
                    );
                }
                if reasoning && !raw_content {
                    self.start_block(index, ThinkingKind::Summary, out);
                }
            }
            "response.reasoning_summary_part.added" => {
                self.start_block(index, ThinkingKind::Summary, out);
                self.new_part(index);
            }
            "response.reasoning_summary_text.delta" => {
                let text = parsed.delta.unwrap_or_default();
                self.reasoning(index, ThinkingKind::Summary, text, out);
            }
            "response.content_part.added"
                if parsed.part.is_some_and(|p| p.kind == "reasoning_text") =>
            {
                self.start_block(index, ThinkingKind::Raw, out);
                self.new_part(index);
            }
            "response.reasoning_text.delta" => {
                let text = parsed.delta.unwrap_or_default();
                self.reasoning(index, ThinkingKind::Raw, text, out);
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.answer(index, parsed.delta.unwrap_or_default(), out);
            }
            "response.reasoning_summary_text.done"
            | "response.reasoning_text.done"
            | "response.output_text.done"
                if !self.items.get(&index).is_some_and(|i| i.streamed) =>
            {
                let text = parsed.text.unwrap_or_default();
                match kind {
                    "response.output_text.done" => self.answer(index, text, out),
                    "response.reasoning_text.done" => {
                        self.reasoning(index, ThinkingKind::Raw, text, out)
                    }
                    _ => self.reasoning(index, ThinkingKind::Summary, text, out),
                }
            }
            "response.output_item.done"
                if parsed.item.as_ref().is_some_and(|i| i.kind == "reasoning") =>
            {
                out.push(reasoning_state(data));
                self.item_done(index, out)
            }
            "response.output_item.done" => self.item_done(index, out),
            "response.completed" => self.end(parsed.response, Some(FinishReason::Stop), out),
            "response.incomplete" => {
                let reason = parsed
                    .response
                    .as_ref()
                    .and_then(|r| r.incomplete_details.as_ref())
                    .and_then(|d| d.reason.clone());
                self.end(parsed.response, Some(finish_reason(reason.as_deref())), out);
            }
            "response.failed" => {
                let error = parsed.response.and_then(|r| r.error).unwrap_or(Value::Null);
                out.push(super::error_piece(&error));
                self.done = true;
            }
            "error" => {
                let error = match parsed.error {
                    Some(nested) if nested.is_object() => nested,
                    _ => json!({"message": parsed.message, "code": parsed.code}),
                };
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
    use crate::domain::Failure;

    fn parse(events: &[Value]) -> Vec<Piece> {
        let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
        crate::server::providers::parse_whole(ResponsesParser::default(), body.as_bytes())
    }

    fn s(t: &str) -> Piece {
        Piece::Reasoning {
            text: t.into(),
            kind: ThinkingKind::Summary,
        }
    }

    /// A stream naming endless item indices keeps at most MAX_PENDING of them.
    #[test]
    fn summaries_are_detailed_where_documented_and_encrypted_state_is_included() {
        assert_eq!(summary_for("gpt-5.4"), "detailed");
        assert_eq!(summary_for("openai/o4-mini"), "detailed");
        assert_eq!(summary_for("o3"), "detailed");
        assert_eq!(summary_for("ponder-demo"), "auto");
        assert_eq!(summary_for("grok-4"), "auto");
        let c = Config::from_lookup(|_| None).unwrap();
        let options = TurnOptions {
            model: "gpt-5.4".into(),
            ..Default::default()
        };
        let body = request(&c, "u", &[ChatMessage::user("hi")], &options).body;
        assert_eq!(body["store"], false);
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["reasoning"]["summary"], "detailed");
    }

    #[test]
    fn endless_item_indices_hold_bounded_memory() {
        let mut frames = ResponsesFrames::default();
        let mut out = Vec::new();
        for i in 0..5_000u64 {
            for event in [
                json!({"type":"response.output_item.added","output_index":i,"item":{"type":"reasoning"}}),
                json!({"type":"response.reasoning_summary_part.added","output_index":i,"summary_index":0}),
                json!({"type":"response.output_text.delta","output_index":i,"delta":"a"}),
            ] {
                frames.on_frame(None, &event.to_string(), &mut out);
            }
        }
        assert!(frames.items.len() <= crate::server::providers::MAX_PENDING);
        let answer: String = out
            .iter()
            .filter_map(|p| match p {
                Piece::Answer(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(answer.len(), 5_000, "no text is lost past the bound");
    }

    #[test]
    fn summary_parts_make_one_block_separated_by_blank_lines() {
        let out = parse(&[
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning"}}),
            json!({"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":0}),
            json!({"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"One"}),
            json!({"type":"response.reasoning_summary_text.done","output_index":0,"text":"One"}),
            json!({"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":1}),
            json!({"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"Two"}),
            json!({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning"}}),
            json!({"type":"response.output_item.added","output_index":1,"item":{"type":"message"}}),
            json!({"type":"response.output_text.delta","output_index":1,"delta":"A"}),
            json!({"type":"response.completed","response":{"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":2},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":5}}}}),
            json!({"type":"response.output_text.delta","output_index":1,"delta":"late"}),
        ]);
        assert_eq!(
            super::super::shown(out.clone()),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Summary
                },
                s("One"),
                s("\n\nTwo"),
                Piece::BlockEnd,
                Piece::Answer("A".into()),
                Piece::Usage(Usage {
                    input_tokens: Some(3),
                    output_tokens: Some(9),
                    reasoning_tokens: Some(5),
                    file_tokens: None,
                    cached_input_tokens: Some(2),
                    ..Default::default()
                }),
                Piece::Finish("stop".into()),
                Piece::End,
            ]
        );
    }

    #[test]
    fn a_reasoning_item_opens_its_block_as_soon_as_it_appears() {
        let out = parse(&[
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","summary":[],"encrypted_content":"x"}}),
            json!({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning"}}),
        ]);
        let summary = Piece::BlockStart {
            kind: ThinkingKind::Summary,
        };
        let hidden = Piece::BlockKind {
            kind: ThinkingKind::Hidden,
        };
        assert_eq!(
            super::super::shown(out.clone()),
            [summary.clone(), hidden, Piece::BlockEnd]
        );
        // OpenRouter's raw text in such an item stays in its one block, which becomes raw.
        let out = parse(&[
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","summary":[]}}),
            json!({"type":"response.content_part.added","output_index":0,"part":{"type":"reasoning_text"}}),
            json!({"type":"response.reasoning_text.delta","output_index":0,"delta":"r"}),
        ]);
        let raw = Piece::BlockKind {
            kind: ThinkingKind::Raw,
        };
        let text = Piece::Reasoning {
            text: "r".into(),
            kind: ThinkingKind::Raw,
        };
        assert_eq!(out, [summary, raw, text]);
    }

    #[test]
    fn a_raw_capable_item_without_text_is_a_hidden_block() {
        let out = parse(&[
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","content":[],"summary":[]}}),
            json!({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning"}}),
        ]);
        assert_eq!(
            super::super::shown(out.clone()),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Hidden
                },
                Piece::BlockEnd
            ]
        );
    }

    #[test]
    fn raw_reasoning_closed_after_the_message_does_not_close_anything_else() {
        let out = parse(&[
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","content":[]}}),
            json!({"type":"response.content_part.added","output_index":0,"part":{"type":"reasoning_text"}}),
            json!({"type":"response.reasoning_text.delta","output_index":0,"delta":"r"}),
            json!({"type":"response.output_item.added","output_index":1,"item":{"type":"message"}}),
            json!({"type":"response.output_text.delta","output_index":1,"delta":"A"}),
            json!({"type":"response.output_item.done","output_index":1,"item":{"type":"message"}}),
            json!({"type":"response.reasoning_text.done","output_index":0,"text":"r"}),
            json!({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning"}}),
        ]);
        assert_eq!(
            super::super::shown(out.clone()),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Raw
                },
                Piece::Reasoning {
                    text: "r".into(),
                    kind: ThinkingKind::Raw
                },
                Piece::Answer("A".into()),
            ]
        );
    }

    #[test]
    fn errors_in_both_shapes_and_failed_responses() {
        let nested = parse(&[
            json!({"type":"error","error":{"type":"insufficient_quota","code":"insufficient_quota","message":"quota"}}),
            json!({"type":"response.failed","response":{"error":{"message":"x"}}}),
        ]);
        assert_eq!(
            nested,
            [Piece::Error(crate::server::providers::model_error(
                Some("quota"),
                false
            ))]
        );
        let flat = parse(&[json!({"type":"error","code":"server_is_overloaded","message":"busy"})]);
        assert!(matches!(
            flat.as_slice(),
            [Piece::Error(Failure {
                retryable: true,
                ..
            })]
        ));
        let failed = parse(&[
            json!({"type":"response.failed","response":{"error":{"code":"server_error","message":"boom"}}}),
        ]);
        assert!(matches!(
            failed.as_slice(),
            [Piece::Error(Failure {
                retryable: true,
                ..
            })]
        ));
    }

    #[test]
    fn incomplete_responses_finish_with_their_reason() {
        let out = parse(&[
            json!({"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}),
        ]);
        assert_eq!(out, [Piece::Finish("length".into()), Piece::End]);
    }

    #[test]
    fn the_request_asks_for_summaries() {
        let config =
            Config::from_lookup(|n| (n == "PONDER_API_KEY").then(|| "sk-r".into())).unwrap();
        let req = request(
            &config,
            "https://api.openai.com/v1",
            &[ChatMessage::user("hi")],
            &super::super::TurnOptions::default_for(&config),
        );
        assert_eq!(req.url, "https://api.openai.com/v1/responses");
        assert_eq!(req.body["reasoning"]["summary"], "auto");
        assert_eq!(req.body["input"][0]["content"], "hi");
        assert!(req
            .headers
            .contains(&("authorization", "Bearer sk-r".into())));
    }

    #[test]
    fn tool_items_become_steps_and_url_citations_cite() {
        let out = parse(&[
            json!({"type":"response.output_item.added","output_index":0,"item":{"id":"ws","type":"web_search_call","status":"in_progress"}}),
            json!({"type":"response.output_item.done","output_index":0,"item":{"id":"ws","type":"web_search_call","status":"completed","action":{"type":"search","query":"rust","sources":[{"type":"url","url":"https://rust-lang.org/"}]}}}),
            json!({"type":"response.output_item.added","output_index":1,"item":{"id":"fc","type":"function_call","name":"get_weather","arguments":""}}),
            json!({"type":"response.output_item.done","output_index":1,"item":{"id":"fc","type":"function_call","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}),
            json!({"type":"response.output_item.done","output_index":2,"item":{"id":"m","type":"mcp_call","name":"ask","server_label":"wiki","arguments":"{}","error":{"message":"denied"}}}),
            json!({"type":"response.output_item.added","output_index":3,"item":{"type":"message"}}),
            json!({"type":"response.output_text.delta","output_index":3,"delta":"Fast."}),
            json!({"type":"response.output_text.annotation.added","output_index":3,"annotation":{"type":"url_citation","url":"https://rust-lang.org/","title":"Rust"}}),
        ]);
        let call = |id: &str, name: &str, input: &str| Piece::ToolCall {
            id: id.into(),
            name: name.into(),
            input: input.into(),
        };
        assert_eq!(
            out,
            [
                call("ws", "web_search", ""),
                call("ws", "web_search", "rust"),
                Piece::Source {
                    url: "https://rust-lang.org/".into(),
                    title: None
                },
                Piece::ToolResult {
                    id: "ws".into(),
                    name: "web_search".into(),
                    ok: true,
                    output: String::new()
                },
                call("fc", "get_weather", ""),
                call("fc", "get_weather", "{\"city\":\"Paris\"}"),
                call("m", "ask (wiki)", ""),
                Piece::ToolResult {
                    id: "m".into(),
                    name: "ask (wiki)".into(),
                    ok: false,
                    output: "denied".into()
                },
                Piece::Answer("Fast.".into()),
                Piece::Cite {
                    url: "https://rust-lang.org/".into(),
                    title: Some("Rust".into())
                },
            ]
        );
    }

    #[test]
    fn reasoning_items_go_back_whole_before_their_answer() {
        let item = json!({"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}], "encrypted_content": "enc"});
        let out = parse(&[
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning"}}),
            json!({"type":"response.output_item.done","output_index":0,"item": item}),
        ]);
        assert_eq!(super::super::states(&out), std::slice::from_ref(&item));
        let config =
            Config::from_lookup(|n| (n == "PONDER_PROVIDER").then(|| "responses".into())).unwrap();
        let messages = [
            ChatMessage::user("q"),
            ChatMessage {
                replay: vec![item.clone()],
                ..ChatMessage::assistant("a")
            },
            ChatMessage::user("q2"),
        ];
        let body = request(&config, "http://u", &messages, &TurnOptions::default()).body;
        let input = body["input"].as_array().unwrap();
        assert_eq!(input.len(), 4);
        assert_eq!(input[1], item);
        assert_eq!(input[2], json!({"role": "assistant", "content": "a"}));
        assert_eq!(body["store"], false);
    }
}
