//! Google Gemini `streamGenerateContent`: SSE with `alt=sse` (what Ponder asks for), or the
//! streamed JSON array the endpoint sends without it (`[{…}\n,\n{…}]`, pretty-printed).
//!
//! Each chunk is a whole `GenerateContentResponse`. Parts with `thought: true` are thought
//! summaries (kind `summary`), other text parts are the answer; `thoughtSignature` is opaque:
//! it tells that the model reasoned, and goes back with the answer's text on the next turn. `usageMetadata` is a cumulative snapshot, complete
//! only on the last chunk; `thoughtsTokenCount` is the reasoning. A model that reasoned
//! without showing its thoughts still gets a (redacted) block before its answer. The stream
//! has no end marker besides `finishReason`; an in-band `{"error":…}` fails the turn.

use crate::domain::FinishReason;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{Piece, TurnOptions, UpstreamRequest, WireParser};
use crate::domain::{ChatMessage, ErrorCode, Failure, Role, ThinkingKind, Usage};
use crate::i18n::errors::Said;
use crate::server::config::Config;
use crate::wire::sse::{SseDecoder, SseFrame, TooLong, DEFAULT_LINE_LIMIT};

/// The request: SSE framing, thoughts included; the key travels in a header, never in the URL.
///
/// Thinking off is `thinkingBudget: 0`; an effort becomes a budget ([`super::budget_for`]).
pub fn request(
    config: &Config,
    base_url: &str,
    messages: &[ChatMessage],
    options: &TurnOptions,
) -> UpstreamRequest {
    let mut headers = vec![("content-type", "application/json".to_string())];
    if let Some(key) = &config.api_key {
        headers.push(("x-goog-api-key", key.clone()));
    }
    let model = options
        .model
        .strip_prefix("models/")
        .unwrap_or(&options.model);
    let thinking = thinking_config(model, super::effective_settings(options));
    let contents: Vec<Value> = messages
        .iter()
        .map(|m| {
            json!({
                "role": match m.role { Role::User => "user", Role::Assistant => "model" },
                "parts": parts_with_replay(m),
            })
        })
        .collect();
    let mut body = json!({
        "contents": contents,
        "generationConfig": {
            "maxOutputTokens": options.max_tokens(config),
            "thinkingConfig": thinking,
        },
    });
    options.put_sampling(&mut body["generationConfig"], "temperature", "topP");
    if let Some(text) = &options.instructions {
        body["systemInstruction"] = json!({"parts": [{"text": text}]});
    }
    UpstreamRequest {
        url: format!("{base_url}/models/{model}:streamGenerateContent?alt=sse"),
        headers,
        body,
    }
}

/// A message's parts: its text, carrying the last thought signature its answer came with (the
/// signature of a response without function calls is on its last part); earlier signatures,
/// if any, go first on parts of their own, in the order they came.
fn parts_with_replay(message: &ChatMessage) -> Value {
    let signatures: Vec<&Value> = message
        .replay
        .iter()
        .filter_map(|item| item.get("thoughtSignature"))
        .collect();
    match signatures.split_last() {
        None if !message.files.is_empty() => super::files::user_content(
            crate::server::config::ProviderKind::Gemini,
            &message.content,
            &message.files,
        ),
        None => json!([{"text": message.content}]),
        Some((last, earlier)) => {
            let mut parts: Vec<Value> = earlier
                .iter()
                .map(|s| json!({"text": "", "thoughtSignature": s}))
                .collect();
            parts.push(json!({"text": message.content, "thoughtSignature": last}));
            Value::Array(parts)
        }
    }
}

/// The major version of a Gemini id (`gemini-3-pro-preview` → 3, `gemini-2.5-flash` → 2).
fn major_version(model: &str) -> Option<u32> {
    let model = model.to_ascii_lowercase();
    let rest = &model[model.find("gemini-")? + "gemini-".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The thought levels a Gemini 3 model takes: Pro only `low` and `high`; Flash and the
/// others also `minimal` and `medium`. Gemini 2.5 takes a budget: the standard three.
pub fn effort_levels(model: &str) -> &'static [crate::domain::Effort] {
    use crate::domain::Effort::*;
    match major_version(model) {
        Some(major) if major >= 3 && model.to_ascii_lowercase().contains("pro") => &[Low, High],
        Some(major) if major >= 3 => &[Minimal, Low, Medium, High],
        _ => &[Low, Medium, High],
    }
}

/// `generationConfig.thinkingConfig` for `model`: thought summaries always asked for; Gemini 3
/// and later take a `thinkingLevel` (and cannot stop thinking: off is their lowest level),
/// Gemini 2.5 a `thinkingBudget` (0 is off). Never both: the API refuses that.
pub fn thinking_config(model: &str, settings: crate::domain::ReasoningSettings) -> Value {
    use crate::domain::Effort;
    if major_version(model).is_some_and(|major| major >= 3) {
        let levels = crate::domain::EffortLevels::of(effort_levels(model));
        let wanted = match (settings.thinking, settings.effort) {
            (Some(false), _) => levels.iter().next(),
            (_, Some(effort)) => levels.nearest(effort),
            _ => None,
        };
        let level = wanted.map(Effort::as_str);
        return match level {
            Some(level) => json!({"includeThoughts": true, "thinkingLevel": level}),
            None => json!({"includeThoughts": true}),
        };
    }
    match (settings.thinking, settings.effort) {
        (Some(false), _) => json!({"includeThoughts": false, "thinkingBudget": 0}),
        (_, Some(effort)) => {
            json!({"includeThoughts": true, "thinkingBudget": super::budget_for(effort)})
        }
        _ => json!({"includeThoughts": true}),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    usage_metadata: Option<UsageIn>,
    #[serde(default)]
    prompt_feedback: Option<Feedback>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<ContentIn>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    grounding_metadata: Option<Grounding>,
}

/// Google Search grounding: the queries it ran and the pages the answer rests on.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Grounding {
    #[serde(default)]
    web_search_queries: Vec<Value>,
    #[serde(default)]
    grounding_chunks: Vec<Value>,
}

#[derive(Deserialize)]
struct ContentIn {
    #[serde(default)]
    parts: Vec<PartIn>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartIn {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(default)]
    thought_signature: Option<String>,
    #[serde(default)]
    function_call: Option<Value>,
    #[serde(default)]
    executable_code: Option<Value>,
    #[serde(default)]
    code_execution_result: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Feedback {
    #[serde(default)]
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageIn {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: Option<u64>,
    /// The prompt's count by modality: the files are what is not text.
    #[serde(default)]
    prompt_tokens_details: Option<Vec<ModalityCount>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModalityCount {
    #[serde(default)]
    modality: String,
    #[serde(default)]
    token_count: u64,
}

impl UsageIn {
    /// Output counts the thoughts too: `candidatesTokenCount` leaves them out.
    fn normalize(&self) -> Usage {
        let output = match (self.candidates_token_count, self.thoughts_token_count) {
            (None, None) => None,
            (c, t) => Some(c.unwrap_or(0) + t.unwrap_or(0)),
        };
        Usage {
            input_tokens: self.prompt_token_count,
            output_tokens: output,
            reasoning_tokens: self.thoughts_token_count,
            file_tokens: self.prompt_tokens_details.as_ref().map(|by| {
                by.iter()
                    .filter(|m| !m.modality.eq_ignore_ascii_case("text"))
                    .map(|m| m.token_count)
                    .sum()
            }),
            cached_input_tokens: self.cached_content_token_count,
            ..Default::default()
        }
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        other => FinishReason::parse(&other.to_ascii_lowercase()),
    }
}

/// What Gemini chunks mean, whichever framing carried them.
#[derive(Default)]
pub struct GeminiChunks {
    thought_text: bool,
    answered: bool,
    /// The model reasoned (a thought count or a signature) but showed no thought text.
    hidden_reasoning: bool,
    hidden_shown: bool,
    done: bool,
    /// Tool calls so far, to give each an id (Gemini's calls often have none).
    calls: u32,
    /// The search step of Google Search grounding was shown.
    searched: bool,
    /// The model asked for a function the app is to run: the response stopped for it.
    function_called: bool,
}

impl GeminiChunks {
    fn show_hidden_reasoning(&mut self, out: &mut Vec<Piece>) {
        if self.hidden_reasoning && !self.thought_text && !self.hidden_shown {
            self.hidden_shown = true;
            out.push(Piece::BlockStart {
                kind: ThinkingKind::Hidden,
            });
            out.push(Piece::BlockEnd);
        }
    }

    /// Google Search grounding: one search step with the queries it ran, and its pages as
    /// sources (Gemini places them by character offsets of the whole answer, which arrive
    /// after the text: they are listed, not marked inline).
    fn grounding(&mut self, grounding: Grounding, out: &mut Vec<Piece>) {
        let queries: Vec<&str> = grounding
            .web_search_queries
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if !queries.is_empty() && !self.searched {
            self.searched = true;
            out.push(Piece::ToolCall {
                id: "google_search".into(),
                name: "google_search".into(),
                input: queries.join(" · "),
            });
            let count = grounding.grounding_chunks.len();
            out.push(Piece::ToolResult {
                id: "google_search".into(),
                name: "google_search".into(),
                ok: true,
                output: format!("{count} {}", if count == 1 { "source" } else { "sources" }),
            });
        }
        for chunk in &grounding.grounding_chunks {
            let web = chunk.get("web").unwrap_or(chunk);
            if let Some(url) = web.get("uri").and_then(Value::as_str) {
                out.push(Piece::Source {
                    url: url.to_string(),
                    title: web.get("title").and_then(Value::as_str).map(str::to_string),
                });
            }
        }
    }

    /// One `GenerateContentResponse`.
    pub fn on_json(&mut self, data: &str, out: &mut Vec<Piece>) {
        if self.done {
            return;
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                super::skip_unparseable("gemini", &e, data.len());
                return;
            }
        };
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            out.push(super::error_piece(&error));
            self.done = true;
            return;
        }
        if chunk.candidates.is_empty() {
            if let Some(reason) = chunk.prompt_feedback.and_then(|f| f.block_reason) {
                out.push(Piece::Error(
                    Failure::of(ErrorCode::PromptRefused, false)
                        .with("reason", reason)
                        .said(),
                ));
                self.done = true;
                return;
            }
        }
        if chunk
            .usage_metadata
            .as_ref()
            .and_then(|u| u.thoughts_token_count)
            .is_some_and(|n| n > 0)
        {
            self.hidden_reasoning = true;
        }
        let mut finish = None;
        if let Some(candidate) = chunk.candidates.into_iter().next() {
            for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
                if let Some(signature) = &part.thought_signature {
                    self.hidden_reasoning |= !self.answered;
                    out.push(Piece::State(json!({"thoughtSignature": signature})));
                }
                if let Some(call) = &part.function_call {
                    self.function_called = true;
                    self.show_hidden_reasoning(out);
                    self.calls += 1;
                    let field = |k: &str| call.get(k).and_then(Value::as_str);
                    out.push(Piece::ToolCall {
                        id: field("id")
                            .map_or_else(|| format!("call-{}", self.calls), str::to_string),
                        name: field("name").unwrap_or_default().to_string(),
                        input: call.get("args").map(super::input_of).unwrap_or_default(),
                    });
                }
                if let Some(code) = &part.executable_code {
                    self.show_hidden_reasoning(out);
                    self.calls += 1;
                    out.push(Piece::ToolCall {
                        id: format!("code-{}", self.calls),
                        name: "code_execution".into(),
                        input: code
                            .get("code")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    });
                }
                if let Some(result) = &part.code_execution_result {
                    let outcome = result.get("outcome").and_then(Value::as_str);
                    out.push(Piece::ToolResult {
                        id: format!("code-{}", self.calls),
                        name: "code_execution".into(),
                        ok: matches!(outcome, None | Some("OUTCOME_OK")),
                        output: result
                            .get("output")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                    });
                }
                let text = part.text.unwrap_or_default();
                if text.is_empty() {
                    continue;
                }
                if part.thought == Some(true) {
                    self.thought_text = true;
                    out.push(Piece::Reasoning {
                        text,
                        kind: ThinkingKind::Summary,
                    });
                } else {
                    if !self.answered {
                        self.show_hidden_reasoning(out);
                    }
                    self.answered = true;
                    out.push(Piece::Answer(text));
                }
            }
            if let Some(grounding) = candidate.grounding_metadata {
                self.grounding(grounding, out);
            }
            finish = candidate.finish_reason;
        }
        if let Some(u) = chunk.usage_metadata {
            out.push(Piece::Usage(u.normalize()));
        }
        if let Some(reason) = finish {
            if !self.answered {
                self.show_hidden_reasoning(out);
            }
            out.push(Piece::Finish(super::finished(
                finish_reason(&reason),
                self.function_called,
            )));
        }
    }
}

/// Splits a streamed JSON array (or any run of JSON objects) into whole top-level objects,
/// whatever the chunking: only ASCII braces and quotes are looked at, so UTF-8 is never cut.
/// An object larger than the limit stops it.
#[derive(Debug)]
pub struct JsonObjects {
    buf: Vec<u8>,
    scanned: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
    start: usize,
    limit: usize,
}

impl Default for JsonObjects {
    fn default() -> Self {
        Self::with_limit(DEFAULT_LINE_LIMIT)
    }
}

impl JsonObjects {
    /// A splitter that refuses objects over `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        JsonObjects {
            buf: Vec::new(),
            scanned: 0,
            depth: 0,
            in_string: false,
            escaped: false,
            start: 0,
            limit,
        }
    }

    /// Feeds a chunk; calls `on_object` with each complete top-level object.
    pub fn push(&mut self, chunk: &[u8], mut on_object: impl FnMut(&[u8])) -> Result<(), TooLong> {
        self.buf.extend_from_slice(chunk);
        let mut consumed = 0;
        for i in self.scanned..self.buf.len() {
            let b = self.buf[i];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' if self.depth > 0 => self.in_string = true,
                b'{' => {
                    if self.depth == 0 {
                        self.start = i;
                    }
                    self.depth += 1;
                }
                b'}' if self.depth > 0 => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        if i + 1 - self.start > self.limit {
                            self.buf = Vec::new();
                            self.scanned = 0;
                            return Err(TooLong { limit: self.limit });
                        }
                        on_object(&self.buf[self.start..=i]);
                        consumed = i + 1;
                    }
                }
                _ => {
                    if self.depth == 0 {
                        consumed = i + 1;
                    }
                }
            }
        }
        self.buf.drain(..consumed);
        self.start = self.start.saturating_sub(consumed);
        self.scanned = self.buf.len();
        if self.buf.len() > self.limit {
            self.buf = Vec::new();
            self.scanned = 0;
            return Err(TooLong { limit: self.limit });
        }
        Ok(())
    }

    /// Bytes held while waiting for the end of an object.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Sse,
    JsonArray,
}

/// Parser for one Gemini stream; the framing is recognised from the first byte (after a
/// byte-order mark, if any).
pub struct GeminiParser {
    framing: Option<Framing>,
    sse: SseDecoder,
    frames: Vec<SseFrame>,
    objects: JsonObjects,
    chunks: GeminiChunks,
    /// Bytes of a byte-order mark seen at the start so far.
    bom_seen: usize,
    too_long: bool,
}

impl Default for GeminiParser {
    fn default() -> Self {
        Self::with_limit(DEFAULT_LINE_LIMIT)
    }
}

impl GeminiParser {
    /// A parser that gives up on a line, frame or object over `max_line` bytes.
    pub fn with_limit(max_line: usize) -> Self {
        GeminiParser {
            framing: None,
            sse: SseDecoder::with_limit(max_line),
            frames: Vec::new(),
            objects: JsonObjects::with_limit(max_line),
            chunks: GeminiChunks::default(),
            bom_seen: 0,
            too_long: false,
        }
    }

    fn drain_frames(&mut self, out: &mut Vec<Piece>) {
        for frame in self.frames.drain(..) {
            let data = frame.data.trim();
            if !data.is_empty() {
                self.chunks.on_json(data, out);
            }
        }
    }
}

impl WireParser for GeminiParser {
    fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<Piece>) {
        if self.too_long {
            return;
        }
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        if self.framing.is_none() {
            while self.bom_seen < BOM.len() && !chunk.is_empty() {
                if chunk[0] != BOM[self.bom_seen] {
                    // Not a mark after all: the SSE decoder keeps what it sees from here.
                    self.bom_seen = BOM.len();
                    break;
                }
                self.bom_seen += 1;
                chunk = &chunk[1..];
            }
            let Some(first) = chunk.iter().position(|b| !b.is_ascii_whitespace()) else {
                return;
            };
            chunk = &chunk[first..];
            self.framing = Some(if matches!(chunk[0], b'[' | b'{') {
                Framing::JsonArray
            } else {
                Framing::Sse
            });
        }
        let pushed = match self.framing {
            Some(Framing::JsonArray) => {
                let chunks = &mut self.chunks;
                self.objects.push(chunk, |object| {
                    chunks.on_json(&String::from_utf8_lossy(object), out)
                })
            }
            _ => {
                let pushed = self.sse.push(chunk, &mut self.frames);
                self.drain_frames(out);
                pushed
            }
        };
        if let Err(e) = pushed {
            self.too_long = true;
            out.push(Piece::TooLong { limit: e.limit });
        }
    }

    fn finish(&mut self, out: &mut Vec<Piece>) {
        if self.framing == Some(Framing::Sse) && !self.too_long {
            self.sse.finish(&mut self.frames);
            self.drain_frames(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<Piece> {
        let mut p = GeminiParser::default();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    const THOUGHT: &str = r#"{"candidates":[{"content":{"parts":[{"text":"**Plan** {\"x\"}","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":4}}"#;
    const ANSWER: &str = r#"{"candidates":[{"content":{"parts":[{"text":"Hi é","thoughtSignature":"c2ln"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"thoughtsTokenCount":30,"cachedContentTokenCount":3}}"#;

    fn expected() -> Vec<Piece> {
        vec![
            Piece::Reasoning {
                text: "**Plan** {\"x\"}".into(),
                kind: ThinkingKind::Summary,
            },
            Piece::Usage(Usage {
                input_tokens: Some(4),
                output_tokens: None,
                reasoning_tokens: None,
                file_tokens: None,
                ..Default::default()
            }),
            Piece::State(json!({"thoughtSignature": "c2ln"})),
            Piece::Answer("Hi é".into()),
            Piece::Usage(Usage {
                input_tokens: Some(4),
                output_tokens: Some(32),
                reasoning_tokens: Some(30),
                file_tokens: None,
                cached_input_tokens: Some(3),
                ..Default::default()
            }),
            Piece::Finish("stop".into()),
        ]
    }

    #[test]
    fn gemini_3_takes_a_level_and_2_5_a_budget_summaries_always() {
        use crate::domain::{Effort, ReasoningSettings};
        let cfg = |model: &str, thinking: Option<bool>, effort: Option<Effort>| {
            thinking_config(model, ReasoningSettings::reasoning(thinking, effort))
        };
        assert_eq!(
            cfg("gemini-3-pro-preview", None, Some(Effort::Low)),
            json!({"includeThoughts": true, "thinkingLevel": "low"})
        );
        assert_eq!(
            cfg("gemini-3-pro-preview", None, Some(Effort::Medium))["thinkingLevel"],
            "high",
            "Pro has no medium"
        );
        assert_eq!(
            cfg("gemini-3-flash-preview", None, Some(Effort::Medium))["thinkingLevel"],
            "medium"
        );
        assert_eq!(
            cfg("gemini-3-flash-preview", Some(false), None),
            json!({"includeThoughts": true, "thinkingLevel": "minimal"}),
            "Gemini 3 cannot stop thinking: off is its lowest level"
        );
        assert_eq!(
            cfg("gemini-3-pro-preview", Some(false), None)["thinkingLevel"],
            "low"
        );
        assert_eq!(
            cfg("gemini-3.5-flash", None, None),
            json!({"includeThoughts": true})
        );
        let old = cfg("gemini-2.5-flash", None, Some(Effort::High));
        assert_eq!(old["thinkingBudget"], 24_576);
        assert!(old.get("thinkingLevel").is_none());
        assert_eq!(
            cfg("gemini-2.5-flash", Some(false), None),
            json!({"includeThoughts": false, "thinkingBudget": 0})
        );
        assert_eq!(
            cfg("ponder-demo", None, None),
            json!({"includeThoughts": true})
        );
    }

    #[test]
    fn sse_and_json_array_framings_mean_the_same() {
        let sse = format!("data: {THOUGHT}\r\n\r\ndata: {ANSWER}\r\n\r\n");
        assert_eq!(parse_chunks(&[sse.as_bytes()]), expected());
        let array = format!("[{THOUGHT}\n,\r\n{ANSWER}\n]");
        assert_eq!(parse_chunks(&[array.as_bytes()]), expected());
        let bytes = array.as_bytes();
        for cut in 0..=bytes.len() {
            assert_eq!(
                parse_chunks(&[&bytes[..cut], &bytes[cut..]]),
                expected(),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn reasoning_without_thought_text_is_a_hidden_block_before_the_answer() {
        let body = r#"data: {"candidates":[{"content":{"parts":[{"text":"A"}]},"index":0}],"usageMetadata":{"thoughtsTokenCount":256}}"#;
        let out = parse_chunks(&[body.as_bytes()]);
        assert_eq!(
            &out[..3],
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Hidden
                },
                Piece::BlockEnd,
                Piece::Answer("A".into())
            ]
        );
    }

    #[test]
    fn errors_and_blocked_prompts_fail_the_turn() {
        let out = parse_chunks(&[
            br#"data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}"#,
        ]);
        assert!(matches!(
            out.as_slice(),
            [Piece::Error(Failure {
                retryable: true,
                ..
            })]
        ));
        let out = parse_chunks(&[br#"[{"promptFeedback":{"blockReason":"SAFETY"}}]"#]);
        assert_eq!(
            out,
            [Piece::Error(
                Failure::of(ErrorCode::PromptRefused, false)
                    .with("reason", "SAFETY")
                    .said()
            )]
        );
    }

    #[test]
    fn the_request_sends_the_key_in_a_header_and_asks_for_thoughts() {
        let config = Config::from_lookup(|n| match n {
            "PONDER_API_KEY" => Some("AIza-secret".into()),
            "PONDER_MODEL" => Some("models/gemini-2.5-pro".into()),
            _ => None,
        })
        .unwrap();
        let req = request(
            &config,
            "https://generativelanguage.googleapis.com/v1beta",
            &[ChatMessage::user("hi")],
            &super::super::TurnOptions::default_for(&config),
        );
        assert_eq!(
            req.url,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert!(!req.url.contains("AIza"));
        assert!(req
            .headers
            .contains(&("x-goog-api-key", "AIza-secret".into())));
        assert_eq!(
            req.body["generationConfig"]["thinkingConfig"]["includeThoughts"],
            true
        );
        assert_eq!(req.body["contents"][0]["parts"][0]["text"], "hi");
    }

    #[test]
    fn function_calls_code_execution_and_grounding() {
        let body = concat!(
            r#"data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2ln"}]},"index":0}]}"#,
            "\n\n",
            r#"data: {"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_FAILED","output":"boom"}}]},"index":0}]}"#,
            "\n\n",
            r#"data: {"candidates":[{"content":{"parts":[{"text":"A"}]},"finishReason":"STOP","groundingMetadata":{"webSearchQueries":["rust"],"groundingChunks":[{"web":{"uri":"https://rust-lang.org/","title":"rust-lang.org"}}]},"index":0}]}"#,
            "\n\n"
        );
        let out = parse_chunks(&[body.as_bytes()]);
        assert_eq!(
            super::super::shown(out.clone()),
            [
                Piece::BlockStart {
                    kind: ThinkingKind::Hidden
                },
                Piece::BlockEnd,
                Piece::ToolCall {
                    id: "call-1".into(),
                    name: "weather".into(),
                    input: r#"{"city":"Paris"}"#.into()
                },
                Piece::ToolCall {
                    id: "code-2".into(),
                    name: "code_execution".into(),
                    input: "print(1)".into()
                },
                Piece::ToolResult {
                    id: "code-2".into(),
                    name: "code_execution".into(),
                    ok: false,
                    output: "boom".into()
                },
                Piece::Answer("A".into()),
                Piece::ToolCall {
                    id: "google_search".into(),
                    name: "google_search".into(),
                    input: "rust".into()
                },
                Piece::ToolResult {
                    id: "google_search".into(),
                    name: "google_search".into(),
                    ok: true,
                    output: "1 source".into()
                },
                Piece::Source {
                    url: "https://rust-lang.org/".into(),
                    title: Some("rust-lang.org".into())
                },
                Piece::Finish("tool_calls".into()),
            ]
        );
    }

    #[test]
    fn thought_signatures_go_back_on_the_answer_part_in_order() {
        let config =
            Config::from_lookup(|n| (n == "PONDER_PROVIDER").then(|| "gemini".into())).unwrap();
        let messages = [
            ChatMessage::user("q"),
            ChatMessage {
                replay: vec![
                    json!({"thoughtSignature": "s1"}),
                    json!({"thoughtSignature": "s2"}),
                ],
                ..ChatMessage::assistant("a")
            },
            ChatMessage::user("q2"),
        ];
        let body = request(&config, "http://u", &messages, &TurnOptions::default()).body;
        assert_eq!(
            body["contents"][1]["parts"],
            json!([{"text": "", "thoughtSignature": "s1"}, {"text": "a", "thoughtSignature": "s2"}])
        );
        assert_eq!(body["contents"][2]["parts"], json!([{"text": "q2"}]));
    }

    #[test]
    fn the_files_tokens_are_the_prompt_s_count_that_is_not_text() {
        let with: UsageIn = serde_json::from_str(r#"{"promptTokenCount":783,"candidatesTokenCount":5,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9},{"modality":"IMAGE","tokenCount":258},{"modality":"DOCUMENT","tokenCount":516}]}"#).unwrap();
        let usage = with.normalize();
        assert_eq!(
            (usage.input_tokens, usage.file_tokens),
            (Some(783), Some(774))
        );
        let without: UsageIn = serde_json::from_str(r#"{"promptTokenCount":4}"#).unwrap();
        assert_eq!(
            without.normalize().file_tokens,
            None,
            "not reported: unknown"
        );
    }
}
