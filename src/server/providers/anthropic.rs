//! Anthropic Messages (`POST /v1/messages`, `stream: true`, extended thinking).
//!
//! Content blocks are keyed by their `index`: `thinking` blocks stream `thinking_delta`s (and a
//! `signature_delta`); one that ends without text (adaptive thinking with `display: "omitted"`)
//! is a `hidden` block, `redacted_thinking` blocks (encrypted for safety) a `redacted` one,
//! `text` blocks stream the answer, their `citations_delta`s cite sources (each citation
//! marks the end of its text block). Server tools (`server_tool_use`, `mcp_tool_use`) and client
//! tools (`tool_use`) stream their input as `input_json_delta`s and become tool steps; the
//! `*_tool_result` blocks end them, and web search results become sources. A message may hold several
//! thinking blocks, and a text block may come first. `message_delta` carries the stop reason
//! and cumulative usage (with `thinking_tokens` on newer models), `message_stop` ends the
//! stream, `ping` is noise and `error` is a failure in the middle of it.

use crate::domain::FinishReason;
use crate::server::config::ProviderKind;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    budget_for, effective_settings, FrameHandler, Piece, Sse, StateText, TurnOptions,
    UpstreamRequest, MAX_STATE_BYTES,
};
use crate::domain::{ChatMessage, ThinkingKind, Usage};
use crate::server::config::Config;

/// The API version Ponder speaks; the header is required.
pub const API_VERSION: &str = "2023-06-01";

/// How much of a tool call's streamed input is kept to summarize it: the card shows a line.
const MAX_TOOL_INPUT: usize = 64 * 1024;

/// The smallest thinking budget Anthropic accepts.
const MIN_BUDGET: u32 = 1024;

/// How a Claude model takes thinking, decided from its id (the API has no way to ask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkingMode {
    /// Adaptive thinking only (Opus 4.7 and later, Mythos): a manual budget and `disabled`
    /// are both `400`, and `display` defaults to `omitted`.
    AdaptiveOnly,
    /// Adaptive thinking recommended, a manual budget deprecated (Opus 4.6, Sonnet 4.6 and
    /// later Sonnets): thinking can still be switched off.
    Adaptive,
    /// A manual `budget_tokens` only (Sonnet 4.5, Opus 4.5, Haiku 4.5 and before).
    Budget,
}

/// The family and version in a Claude id: `claude-opus-4-7`, `claude-sonnet-4-6-20260101`,
/// `anthropic.claude-opus-4-6-v1`, `claude-sonnet-5`; an id with the version first
/// (`claude-3-7-sonnet-latest`) is an older model.
fn family_version(id: &str) -> Option<(&'static str, u32, u32)> {
    let id = id.to_ascii_lowercase();
    let name = id.rsplit('/').next().unwrap_or(&id).replace('.', "-");
    for family in ["opus", "sonnet", "haiku", "mythos", "fable"] {
        let Some(at) = name.find(&format!("{family}-")) else {
            continue;
        };
        let rest = name[at + family.len()..].trim_start_matches('-');
        let mut parts = rest.split('-');
        let major = parts.next().and_then(|p| p.parse::<u32>().ok());
        let minor = parts
            .next()
            .filter(|p| p.len() <= 2)
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0);
        return Some(match major {
            Some(major) if major < 100 => (family, major, minor),
            _ => (family, 0, 0),
        });
    }
    None
}

/// The `output_config.effort` levels `model` takes: `max` from Claude 4.6, `xhigh` from Opus 4.7
/// (and Sonnet 5, Mythos); a model on a manual budget gets the standard three as budgets.
pub fn effort_levels(model: &str) -> &'static [crate::domain::Effort] {
    use crate::domain::Effort::*;
    let newest = match family_version(model) {
        Some(("mythos" | "fable", ..)) => true,
        Some(("opus", major, minor)) => (major, minor) >= (4, 7),
        Some((_, major, _)) => major >= 5,
        None => false,
    };
    match thinking_mode(model) {
        _ if newest => &[Low, Medium, High, Xhigh, Max],
        ThinkingMode::Adaptive | ThinkingMode::AdaptiveOnly => &[Low, Medium, High, Max],
        ThinkingMode::Budget => &[Low, Medium, High],
    }
}

/// The thinking mode of `model`: newer families and versions than those named are taken to
/// keep the newest known contract.
pub fn thinking_mode(model: &str) -> ThinkingMode {
    match family_version(model) {
        Some(("mythos" | "fable", ..)) => ThinkingMode::AdaptiveOnly,
        Some(("opus", major, minor)) if (major, minor) >= (4, 7) => ThinkingMode::AdaptiveOnly,
        Some((_, major, minor)) if (major, minor) >= (4, 6) => ThinkingMode::Adaptive,
        _ => ThinkingMode::Budget,
    }
}

/// The request: streaming, with the thinking each model takes. Adaptive models get
/// `thinking: {type: adaptive, display: summarized}` (their default display may be `omitted`,
/// which streams only signatures) and an effort as `output_config.effort`; thinking off is
/// `disabled` where the model allows it. Older models get a manual `budget_tokens`: an effort
/// becomes a budget ([`budget_for`]), with neither `PONDER_THINKING_BUDGET`, when the output
/// limit leaves room for it (the budget must stay below `max_tokens`).
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
        "max_tokens": options.max_tokens(config),
        "messages": with_replay(messages),
        "stream": true,
    });
    options.put_sampling(&mut body, "temperature", "top_p");
    if let Some(text) = &options.instructions {
        body["system"] = json!(text);
    }
    let settings = effective_settings(options);
    let mode = thinking_mode(&options.model);
    let off = settings.thinking == Some(false);
    match mode {
        ThinkingMode::Adaptive if off => body["thinking"] = json!({"type": "disabled"}),
        ThinkingMode::Adaptive | ThinkingMode::AdaptiveOnly => {
            body["thinking"] = json!({"type": "adaptive", "display": "summarized"});
            let effort = if off {
                Some(crate::domain::Effort::Low)
            } else {
                settings.effort
            };
            if let Some(effort) = effort {
                body["output_config"] = json!({"effort": effort.as_str()});
            }
        }
        ThinkingMode::Budget => {
            let asked = settings
                .effort
                .map(budget_for)
                .unwrap_or(config.thinking_budget);
            let budget = asked.min(options.max_tokens(config).saturating_sub(1));
            if off {
                body["thinking"] = json!({"type": "disabled"});
            } else if budget >= MIN_BUDGET {
                body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
            }
        }
    }
    UpstreamRequest {
        url: format!("{base_url}/messages"),
        headers,
        body,
    }
}

/// The messages, each answer that has reasoning state to send back given as content blocks:
/// its thinking blocks as they came, then its text.
fn with_replay(messages: &[ChatMessage]) -> Vec<Value> {
    let mut list = super::openai::role_content(ProviderKind::Anthropic, messages);
    for (sent, message) in list.iter_mut().zip(messages) {
        if !message.replay.is_empty() {
            let mut content = message.replay.clone();
            content.push(json!({"type": "text", "text": message.content}));
            sent["content"] = Value::Array(content);
        }
    }
    list
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
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    server_name: Option<String>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    citations: Option<Vec<Value>>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    data: Option<String>,
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
    #[serde(default)]
    partial_json: Option<String>,
    #[serde(default)]
    citation: Option<Value>,
    #[serde(default)]
    signature: Option<String>,
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
            file_tokens: None,
            cached_input_tokens: self.cache_read_input_tokens,
            ..Default::default()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    Thinking,
    /// A thinking block no readable text has arrived for yet (display omitted streams only a
    /// signature): hidden if it ends so.
    Unread,
    Text,
    Tool,
    Other,
}

/// A tool call whose input is still streaming.
#[derive(Default)]
struct ToolIn {
    id: String,
    name: String,
    input: String,
    /// The input the call's start carried, when its deltas bring nothing.
    start_input: String,
}

/// Frame handling for one Messages stream.
#[derive(Default)]
pub struct MessagesFrames {
    /// The request asked for adaptive thinking summarized ([`ThinkingMode`] other than
    /// `Budget`): readable thinking is a summary.
    summarized: bool,
    blocks: HashMap<u64, BlockKind>,
    tools: HashMap<u64, ToolIn>,
    /// Citations of the text block at each index, given when the block ends.
    citations: HashMap<u64, Vec<(String, Option<String>)>>,
    /// The thinking block at each index as it must go back on the next turn: its text and
    /// signature (or a redacted block's data), given whole when the block ends.
    signed: HashMap<u64, Signed>,
    /// Every content block of the message as it came, for a paused turn's continuation.
    content: Content,
    /// The message stopped with `pause_turn`.
    paused: bool,
    /// Whitespace-only answer text before any real answer (Opus sends `"\n\n"` before its
    /// thinking block): held so it does not open an empty answer above the reasoning.
    leading_ws: String,
    answered: bool,
    done: bool,
}

/// The message's content blocks rebuilt whole from the stream (a block's start, its deltas
/// joined), up to [`MAX_STATE_BYTES`], so a paused turn can send them back.
#[derive(Default)]
struct Content {
    blocks: Vec<(u64, Value)>,
    /// Tool input JSON still streaming, by block index.
    inputs: HashMap<u64, String>,
    bytes: usize,
    lost: bool,
}

impl Content {
    fn grow(&mut self, by: usize) -> bool {
        self.bytes += by;
        if self.bytes > MAX_STATE_BYTES {
            self.lost = true;
            self.blocks.clear();
            self.inputs.clear();
        }
        !self.lost
    }

    fn start(&mut self, index: u64, data: &str) {
        if !self.grow(data.len()) || self.blocks.len() >= super::MAX_PENDING {
            return;
        }
        if let Ok(mut event) = serde_json::from_str::<Value>(data) {
            self.blocks.push((index, event["content_block"].take()));
        }
    }

    fn block(&mut self, index: u64) -> Option<&mut serde_json::Map<String, Value>> {
        self.blocks
            .iter_mut()
            .rev()
            .find(|(i, _)| *i == index)
            .and_then(|(_, b)| b.as_object_mut())
    }

    fn append(&mut self, index: u64, key: &str, text: &str) {
        if !self.grow(text.len()) {
            return;
        }
        if let Some(block) = self.block(index) {
            match block.get_mut(key) {
                Some(Value::String(kept)) => kept.push_str(text),
                _ => {
                    block.insert(key.to_string(), Value::String(text.to_string()));
                }
            }
        }
    }

    fn input(&mut self, index: u64, part: &str) {
        if self.grow(part.len()) && self.inputs.len() < super::MAX_PENDING {
            self.inputs.entry(index).or_default().push_str(part);
        }
    }

    fn cite(&mut self, index: u64, citation: &Value) {
        if !self.grow(citation.to_string().len()) {
            return;
        }
        if let Some(block) = self.block(index) {
            match block.get_mut("citations") {
                Some(Value::Array(list)) => list.push(citation.clone()),
                _ => {
                    block.insert("citations".into(), Value::Array(vec![citation.clone()]));
                }
            }
        }
    }

    fn stop(&mut self, index: u64) {
        if let Some(json) = self.inputs.remove(&index) {
            let input = serde_json::from_str::<Value>(&json).unwrap_or(Value::Null);
            if let (Some(block), false) = (self.block(index), json.trim().is_empty()) {
                block.insert("input".into(), input);
            }
        }
    }

    /// The blocks as the continuation sends them back: in stream order, `citations` only where
    /// the block had some.
    fn take(&mut self) -> Option<Value> {
        if self.lost || self.blocks.is_empty() {
            return None;
        }
        Some(Value::Array(
            std::mem::take(&mut self.blocks)
                .into_iter()
                .map(|(_, b)| b)
                .collect(),
        ))
    }
}

/// A thinking block kept whole for replay.
enum Signed {
    Thinking {
        thinking: StateText,
        signature: StateText,
    },
    Redacted(String),
}

impl Signed {
    fn into_piece(self) -> Piece {
        match self {
            Signed::Thinking {
                thinking,
                signature,
            } => {
                if thinking.lost || signature.lost {
                    Piece::StateLost
                } else {
                    Piece::State(json!({
                        "type": "thinking",
                        "thinking": thinking.text,
                        "signature": signature.text,
                    }))
                }
            }
            Signed::Redacted(data) => {
                Piece::State(json!({"type": "redacted_thinking", "data": data}))
            }
        }
    }
}

/// Parser for one Anthropic Messages stream.
pub type MessagesParser = Sse<MessagesFrames>;

impl MessagesFrames {
    /// The frames of a response to a request for `model`.
    pub fn for_model(model: &str) -> Self {
        MessagesFrames {
            summarized: thinking_mode(model) != ThinkingMode::Budget,
            ..Default::default()
        }
    }
}

/// Anthropic's stop reasons in the words the turn contract uses.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        other => FinishReason::parse(other),
    }
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

    fn reasoning(&self, text: Option<String>, out: &mut Vec<Piece>) {
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            out.push(Piece::Reasoning {
                text,
                kind: self.thinking_kind(),
            });
        }
    }

    /// What a readable thinking block is: a summary when adaptive thinking was asked for with
    /// `display: "summarized"`, else the model's own text.
    fn thinking_kind(&self) -> ThinkingKind {
        if self.summarized {
            ThinkingKind::Summary
        } else {
            ThinkingKind::Raw
        }
    }

    fn block_start(&mut self, index: u64, mut block: BlockIn, out: &mut Vec<Piece>) {
        let block_type = std::mem::take(&mut block.kind);
        let kind = match block_type.as_str() {
            "thinking" => {
                out.push(Piece::BlockStart {
                    kind: self.thinking_kind(),
                });
                let mut thinking = StateText::default();
                thinking.push(block.thinking.as_deref().unwrap_or_default());
                let mut signature = StateText::default();
                signature.push(block.signature.as_deref().unwrap_or_default());
                self.keep_signed(
                    index,
                    Signed::Thinking {
                        thinking,
                        signature,
                    },
                );
                let readable = block.thinking.as_deref().is_some_and(|t| !t.is_empty());
                self.reasoning(block.thinking, out);
                if readable {
                    BlockKind::Thinking
                } else {
                    BlockKind::Unread
                }
            }
            "redacted_thinking" => {
                out.push(Piece::BlockStart {
                    kind: ThinkingKind::Redacted,
                });
                if let Some(data) = block.data.filter(|d| d.len() <= MAX_STATE_BYTES) {
                    self.keep_signed(index, Signed::Redacted(data));
                }
                BlockKind::Thinking
            }
            "text" => {
                self.answer(block.text.unwrap_or_default(), out);
                for c in block.citations.iter().flatten() {
                    self.cite(index, c);
                }
                BlockKind::Text
            }
            "server_tool_use" | "tool_use" | "mcp_tool_use"
                if self.tools.len() < super::MAX_PENDING =>
            {
                let name = match (block.name, block.server_name) {
                    (Some(n), Some(server)) => format!("{n} ({server})"),
                    (n, _) => n.unwrap_or_default(),
                };
                let id = block.id.unwrap_or_default();
                let start_input = block
                    .input
                    .as_ref()
                    .map(super::input_of)
                    .unwrap_or_default();
                out.push(Piece::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: start_input.clone(),
                });
                self.tools.insert(
                    index,
                    ToolIn {
                        id,
                        name,
                        input: String::new(),
                        start_input,
                    },
                );
                BlockKind::Tool
            }
            result if result.ends_with("_tool_result") => {
                Self::tool_result(result, block, out);
                BlockKind::Other
            }
            _ => BlockKind::Other,
        };
        if self.blocks.len() < super::MAX_PENDING || self.blocks.contains_key(&index) {
            self.blocks.insert(index, kind);
        }
    }

    /// Joins a delta into the block kept for a continuation.
    fn keep_delta(&mut self, index: u64, delta: &DeltaIn) {
        let c = &mut self.content;
        match delta.kind.as_deref() {
            Some("text_delta") => {
                c.append(index, "text", delta.text.as_deref().unwrap_or_default())
            }
            Some("thinking_delta") => c.append(
                index,
                "thinking",
                delta.thinking.as_deref().unwrap_or_default(),
            ),
            Some("signature_delta") => c.append(
                index,
                "signature",
                delta.signature.as_deref().unwrap_or_default(),
            ),
            Some("input_json_delta") => {
                c.input(index, delta.partial_json.as_deref().unwrap_or_default())
            }
            Some("citations_delta") => {
                if let Some(citation) = &delta.citation {
                    c.cite(index, citation);
                }
            }
            _ => {}
        }
    }

    /// The kind of the block at `index` that just ended, its kept copy made whole.
    fn stop_content(&mut self, index: u64) -> Option<BlockKind> {
        self.content.stop(index);
        self.blocks.remove(&index)
    }

    fn keep_signed(&mut self, index: u64, signed: Signed) {
        if self.signed.len() < super::MAX_PENDING || self.signed.contains_key(&index) {
            self.signed.insert(index, signed);
        }
    }

    /// The replay piece of the thinking block at `index` that just ended.
    fn signed_piece(&mut self, index: u64, out: &mut Vec<Piece>) {
        if let Some(signed) = self.signed.remove(&index) {
            out.push(signed.into_piece());
        }
    }

    fn cite(&mut self, index: u64, citation: &Value) {
        if let Some(url) = citation.get("url").and_then(Value::as_str) {
            let title = citation
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_string);
            if !self.citations.contains_key(&index) && self.citations.len() >= super::MAX_PENDING {
                return;
            }
            let pending = self.citations.entry(index).or_default();
            if pending.len() < super::MAX_PENDING {
                pending.push((url.to_string(), title));
            }
        }
    }

    /// A server tool's result: the step ends, finished unless it says it failed; web search
    /// results are sources.
    fn tool_result(kind: &str, block: BlockIn, out: &mut Vec<Piece>) {
        let name = kind.trim_end_matches("_tool_result").to_string();
        let content = block.content.unwrap_or(Value::Null);
        let failed_type = content
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with("_error"));
        let mut ok = !block.is_error.unwrap_or(false) && !failed_type;
        let output = match &content {
            Value::Array(items) => {
                let mut titles = Vec::new();
                let mut texts = Vec::new();
                for item in items {
                    if let Some(url) = item.get("url").and_then(Value::as_str) {
                        let title = item.get("title").and_then(Value::as_str);
                        titles.push(title.unwrap_or(url).to_string());
                        out.push(Piece::Source {
                            url: url.to_string(),
                            title: title.map(str::to_string),
                        });
                    } else if let Some(text) = item.get("text").and_then(Value::as_str) {
                        texts.push(text.to_string());
                    }
                }
                if titles.is_empty() {
                    texts.join("\n")
                } else {
                    let count = titles.len();
                    let noun = if count == 1 { "result" } else { "results" };
                    format!("{count} {noun}: {}", titles.join(" · "))
                }
            }
            Value::Object(o) => {
                if let Some(code) = o.get("return_code").and_then(Value::as_i64) {
                    ok &= code == 0;
                }
                let field = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or_default();
                if let Some(code) = o.get("error_code").and_then(Value::as_str) {
                    format!("error: {code}")
                } else if !field("stderr").is_empty() && !ok {
                    field("stderr").to_string()
                } else {
                    field("stdout").to_string()
                }
            }
            Value::String(s) => s.clone(),
            _ => String::new(),
        };
        out.push(Piece::ToolResult {
            id: block.tool_use_id.unwrap_or_default(),
            name,
            ok,
            output,
        });
    }

    fn block_delta(&mut self, index: u64, delta: DeltaIn, out: &mut Vec<Piece>) {
        let block = self.blocks.get(&index).copied();
        match delta.kind.as_deref() {
            Some("signature_delta") => {
                if let Some(Signed::Thinking { signature, .. }) = self.signed.get_mut(&index) {
                    signature.push(delta.signature.as_deref().unwrap_or_default());
                }
            }
            Some("thinking_delta") if block != Some(BlockKind::Text) => {
                if let Some(Signed::Thinking { thinking, .. }) = self.signed.get_mut(&index) {
                    thinking.push(delta.thinking.as_deref().unwrap_or_default());
                }
                if block == Some(BlockKind::Unread)
                    && delta.thinking.as_deref().is_some_and(|t| !t.is_empty())
                {
                    self.blocks.insert(index, BlockKind::Thinking);
                }
                self.reasoning(delta.thinking, out)
            }
            Some("text_delta")
                if !matches!(block, Some(BlockKind::Thinking | BlockKind::Unread)) =>
            {
                self.answer(delta.text.unwrap_or_default(), out)
            }
            Some("input_json_delta") => {
                if let (Some(tool), Some(part)) = (self.tools.get_mut(&index), delta.partial_json) {
                    if tool.input.len() + part.len() <= MAX_TOOL_INPUT {
                        tool.input.push_str(&part);
                    }
                }
            }
            Some("citations_delta") => {
                if let Some(citation) = delta.citation {
                    self.cite(index, &citation);
                }
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
                    out.push(super::unreadable_error());
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
                    self.content.start(index, data);
                    self.block_start(index, block, out);
                }
            }
            "content_block_delta" => {
                if let Some(delta) = parsed.delta {
                    self.keep_delta(index, &delta);
                    self.block_delta(index, delta, out);
                }
            }
            "content_block_stop" => match self.stop_content(index).as_ref() {
                Some(BlockKind::Thinking) => {
                    self.signed_piece(index, out);
                    out.push(Piece::BlockEnd)
                }
                Some(BlockKind::Unread) => {
                    self.signed_piece(index, out);
                    out.push(Piece::BlockKind {
                        kind: ThinkingKind::Hidden,
                    });
                    out.push(Piece::BlockEnd);
                }
                Some(BlockKind::Tool) => {
                    if let Some(tool) = self.tools.remove(&index) {
                        let input = match tool.input.trim() {
                            "" => tool.start_input,
                            json => super::tool_input(json),
                        };
                        out.push(Piece::ToolCall {
                            id: tool.id,
                            name: tool.name,
                            input,
                        });
                    }
                }
                Some(BlockKind::Text) => {
                    for (url, title) in self.citations.remove(&index).unwrap_or_default() {
                        out.push(Piece::Cite { url, title });
                    }
                }
                _ => {}
            },
            "message_delta" => {
                if let Some(reason) = parsed.delta.and_then(|d| d.stop_reason) {
                    self.paused = reason == "pause_turn";
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
                if self.paused {
                    if let Some(content) = self.content.take() {
                        out.push(Piece::Paused(content));
                    }
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
    use crate::domain::Failure;

    fn parse(body: &str) -> Vec<Piece> {
        crate::server::providers::parse_whole(MessagesParser::default(), body.as_bytes())
    }

    fn frame(event: &str, data: &str) -> String {
        format!("event: {event}\ndata: {data}\n\n")
    }

    /// Endless content blocks, stopped or never stopped, keep at most MAX_PENDING kinds.
    #[test]
    fn endless_block_indices_hold_bounded_memory() {
        let mut frames = MessagesFrames::default();
        let mut out = Vec::new();
        for i in 0..3_000 {
            let start = format!(
                r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"text","text":""}}}}"#
            );
            let delta = format!(
                r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"text_delta","text":"a"}}}}"#
            );
            frames.on_frame(Some("content_block_start"), &start, &mut out);
            frames.on_frame(Some("content_block_delta"), &delta, &mut out);
            if i % 2 == 0 {
                let stop = format!(r#"{{"type":"content_block_stop","index":{i}}}"#);
                frames.on_frame(Some("content_block_stop"), &stop, &mut out);
            }
        }
        assert!(frames.blocks.len() <= crate::server::providers::MAX_PENDING);
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
            super::super::shown(parse(&body)),
            [
                Piece::Usage(Usage {
                    input_tokens: Some(15),
                    output_tokens: Some(1),
                    reasoning_tokens: None,
                    file_tokens: None,
                    cached_input_tokens: Some(5),
                    ..Default::default()
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
                    reasoning_tokens: Some(12),
                    file_tokens: None,
                    ..Default::default()
                }),
                Piece::End,
            ]
        );
        assert_eq!(
            super::super::states(&parse(&body)),
            [json!({"type": "thinking", "thinking": "hm", "signature": "sig"})],
            "the block goes back whole: its text and its signature"
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
        let call = |input: &str| Piece::ToolCall {
            id: "t".into(),
            name: "web_search".into(),
            input: input.into(),
        };
        assert_eq!(
            super::super::shown(parse(&body)),
            [
                open.clone(),
                r("a"),
                Piece::BlockEnd,
                call(""),
                call(""),
                open,
                r("b"),
                Piece::BlockEnd
            ]
        );
    }

    /// Adaptive thinking with `display: "omitted"`: the block streams only its signature, and
    /// says so as a hidden block; one whose text comes in deltas stays raw.
    #[test]
    fn a_thinking_block_with_only_a_signature_is_hidden() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hm"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Hi"}}"#),
        ]
        .concat();
        let start = Piece::BlockStart {
            kind: ThinkingKind::Raw,
        };
        assert_eq!(
            super::super::shown(parse(&body)),
            [
                start.clone(),
                Piece::BlockKind {
                    kind: ThinkingKind::Hidden
                },
                Piece::BlockEnd,
                start,
                Piece::Reasoning {
                    text: "hm".into(),
                    kind: ThinkingKind::Raw
                },
                Piece::BlockEnd,
                Piece::Answer("Hi".into()),
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
            super::super::shown(parse(&body)),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Redacted
                },
                Piece::BlockEnd
            ]
        );
        assert_eq!(
            super::super::states(&parse(&body)),
            [json!({"type": "redacted_thinking", "data": "opaque"})]
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
            [Piece::Error(crate::server::providers::model_error(
                Some("Overloaded"),
                true
            ))]
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

    #[test]
    fn each_claude_family_gets_its_thinking_mode() {
        for (id, mode) in [
            ("claude-opus-4-7", ThinkingMode::AdaptiveOnly),
            ("claude-opus-4.7", ThinkingMode::AdaptiveOnly),
            ("anthropic/claude-opus-4.8", ThinkingMode::AdaptiveOnly),
            ("claude-mythos-preview", ThinkingMode::AdaptiveOnly),
            (
                "anthropic.claude-mythos-preview",
                ThinkingMode::AdaptiveOnly,
            ),
            ("claude-opus-5", ThinkingMode::AdaptiveOnly),
            ("claude-opus-4-6", ThinkingMode::Adaptive),
            ("anthropic.claude-opus-4-6-v1", ThinkingMode::Adaptive),
            ("claude-sonnet-4-6", ThinkingMode::Adaptive),
            ("claude-sonnet-5", ThinkingMode::Adaptive),
            ("claude-sonnet-4-5-20250929", ThinkingMode::Budget),
            ("claude-opus-4-5", ThinkingMode::Budget),
            ("claude-haiku-4-5", ThinkingMode::Budget),
            ("claude-opus-4-20250514", ThinkingMode::Budget),
            ("claude-opus-4-1-20250805", ThinkingMode::Budget),
            ("claude-3-7-sonnet-latest", ThinkingMode::Budget),
            ("ponder-demo", ThinkingMode::Budget),
        ] {
            assert_eq!(thinking_mode(id), mode, "{id}");
        }
    }

    #[test]
    fn adaptive_models_get_adaptive_thinking_summarized_with_their_effort() {
        use crate::domain::{Effort, ReasoningSettings};
        let c = Config::from_lookup(|_| None).unwrap();
        let body = |model: &str, thinking: Option<bool>, effort: Option<Effort>| {
            let options = super::super::TurnOptions {
                model: model.into(),
                settings: ReasoningSettings::reasoning(thinking, effort),
                ..Default::default()
            };
            request(&c, "u", &[ChatMessage::user("hi")], &options).body
        };
        let b = body("claude-opus-4-7", None, Some(Effort::High));
        assert_eq!(
            b["thinking"],
            json!({"type": "adaptive", "display": "summarized"})
        );
        assert_eq!(b["output_config"], json!({"effort": "high"}));
        assert!(!b.to_string().contains("budget_tokens"));
        let b = body("claude-opus-4-7", None, None);
        assert!(b.get("output_config").is_none(), "the model's own default");
        let b = body("claude-opus-4-7", Some(false), None);
        assert_eq!(b["thinking"]["type"], "adaptive", "4.7 cannot switch off");
        assert_eq!(b["output_config"]["effort"], "low", "so it thinks least");
        let b = body("claude-sonnet-4-6", Some(false), None);
        assert_eq!(b["thinking"], json!({"type": "disabled"}));
        assert!(b.get("output_config").is_none());
        let b = body("claude-sonnet-4-6", None, Some(Effort::Medium));
        assert_eq!(b["thinking"]["display"], "summarized");
        assert_eq!(b["output_config"]["effort"], "medium");
        let b = body("claude-sonnet-4-5", None, Some(Effort::Medium));
        assert_eq!(
            b["thinking"],
            json!({"type": "enabled", "budget_tokens": 8192})
        );
        assert!(b.get("output_config").is_none());
    }

    #[test]
    fn server_tools_results_sources_and_citations() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"ru"}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"st\"}"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"s1","content":[{"type":"web_search_result","title":"Rust","url":"https://rust-lang.org/"}]}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"","citations":[]}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://rust-lang.org/","title":"Rust","cited_text":"x"}}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Fast."}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":2}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":3,"content_block":{"type":"code_execution_tool_result","tool_use_id":"s2","content":{"type":"code_execution_result","stdout":"","stderr":"boom","return_code":1}}}"#),
        ]
        .concat();
        let rust = || Some("Rust".to_string());
        assert_eq!(
            parse(&body),
            [
                Piece::ToolCall {
                    id: "s1".into(),
                    name: "web_search".into(),
                    input: String::new()
                },
                Piece::ToolCall {
                    id: "s1".into(),
                    name: "web_search".into(),
                    input: "rust".into()
                },
                Piece::Source {
                    url: "https://rust-lang.org/".into(),
                    title: rust()
                },
                Piece::ToolResult {
                    id: "s1".into(),
                    name: "web_search".into(),
                    ok: true,
                    output: "1 result: Rust".into()
                },
                Piece::Answer("Fast.".into()),
                Piece::Cite {
                    url: "https://rust-lang.org/".into(),
                    title: rust()
                },
                Piece::ToolResult {
                    id: "s2".into(),
                    name: "code_execution".into(),
                    ok: false,
                    output: "boom".into()
                },
            ]
        );
    }

    #[test]
    fn an_answer_with_reasoning_state_goes_back_as_its_blocks_then_its_text() {
        let config =
            Config::from_lookup(|n| (n == "PONDER_PROVIDER").then(|| "anthropic".into())).unwrap();
        let signed = json!({"type": "thinking", "thinking": "t", "signature": "s"});
        let messages = [
            ChatMessage::user("q"),
            ChatMessage {
                replay: vec![
                    signed.clone(),
                    json!({"type": "redacted_thinking", "data": "d"}),
                ],
                ..ChatMessage::assistant("a")
            },
            ChatMessage::assistant("plain"),
            ChatMessage::user("q2"),
        ];
        let body = request(&config, "http://u", &messages, &TurnOptions::default()).body;
        assert_eq!(
            body["messages"][1]["content"],
            json!([signed, {"type": "redacted_thinking", "data": "d"}, {"type": "text", "text": "a"}])
        );
        assert_eq!(body["messages"][2]["content"], "plain");
        assert_eq!(body["messages"][0]["content"], "q");
    }

    #[test]
    fn a_paused_message_gives_back_every_block_whole_for_its_continuation() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me search."}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{}}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":"}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"rust\"}"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srv_1","content":[{"type":"web_search_result","url":"https://r.example/","title":"R","encrypted_content":"enc"}]}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":2}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"So far"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":3}"#),
            frame("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"pause_turn"}}"#),
            frame("message_stop", r#"{"type":"message_stop"}"#),
        ]
        .concat();
        let out = parse(&body);
        let paused = out.iter().find_map(|p| match p {
            Piece::Paused(content) => Some(content.clone()),
            _ => None,
        });
        assert_eq!(
            paused,
            Some(json!([
                {"type": "thinking", "thinking": "Let me search.", "signature": "sig"},
                {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "rust"}},
                {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": [{"type": "web_search_result", "url": "https://r.example/", "title": "R", "encrypted_content": "enc"}]},
                {"type": "text", "text": "So far"},
            ]))
        );
        assert_eq!(out.last(), Some(&Piece::End));
        let stopped = body.replace("pause_turn", "end_turn");
        assert!(
            !parse(&stopped)
                .iter()
                .any(|p| matches!(p, Piece::Paused(_))),
            "only a paused message is continued"
        );
    }
}
