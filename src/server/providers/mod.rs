//! Upstream adapters: one pure parser per wire format (bytes in, [`Piece`]s out) over the
//! shared framer in [`crate::wire::sse`], and the request each provider expects.
//!
//! Parsers know nothing of time, blocks numbering or the browser: [`super::turn::TurnAssembler`]
//! turns their pieces into the turn contract, the same way for every provider.

pub mod anthropic;
pub mod files;
pub mod gemini;
pub mod interactions;
pub mod ollama;
pub mod openai;
pub mod responses;
pub mod think_tags;

use crate::domain::FinishReason;
use serde_json::Value;

use crate::domain::{
    ChatMessage, Controls, ErrorCode, Failure, ReasoningSettings, ThinkingKind, Usage,
};
use crate::i18n::errors::Said;
use crate::wire::sse::{LineDecoder, SseDecoder, SseFrame, TooLong, DEFAULT_LINE_LIMIT};

use super::config::{Config, ProviderKind};

/// What a provider's stream says, normalized but not yet numbered or timed.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// The provider opened a reasoning block explicitly (it may carry no text at all).
    BlockStart { kind: ThinkingKind },
    /// Reasoning text. Opens a block when none is open.
    Reasoning { text: String, kind: ThinkingKind },
    /// The open block turns out to be of another kind than it was opened as (a provider may
    /// only reveal at the end that its reasoning had no readable text).
    BlockKind { kind: ThinkingKind },
    /// The provider closed its reasoning block explicitly.
    BlockEnd,
    /// Answer text.
    Answer(String),
    /// Everything streamed as answer so far was reasoning (a `</think>` with no opening tag).
    Reclassify,
    /// The model called a tool; `id` is the provider's id of the call (several may be under
    /// way). Sent again with the same id when more of its input is known.
    ToolCall {
        id: String,
        name: String,
        input: String,
    },
    /// A tool's result. `name` names the tool when its call was never seen (a continued
    /// response may begin with a result).
    ToolResult {
        id: String,
        name: String,
        ok: bool,
        output: String,
    },
    /// A source the answer may cite (a search result, a grounding chunk).
    Source { url: String, title: Option<String> },
    /// The answer cites this source at this point.
    Cite { url: String, title: Option<String> },
    /// Token counts; later values replace earlier ones field by field.
    Usage(Usage),
    /// The model stopped for this reason; usage may still follow.
    Finish(FinishReason),
    /// The provider's own end-of-stream marker: nothing useful follows.
    End,
    /// The provider reported a failure inside the stream.
    Error(Failure),
    /// A line, frame or object grew past the limit: the stream is not read any further.
    TooLong { limit: usize },
    /// Opaque reasoning state to send back with this answer on later turns (a signed thinking
    /// block, an encrypted reasoning item, a thought signature): one whole item, in stream
    /// order, exactly as the provider wants it back. Never shown, stored or logged as text.
    State(Value),
    /// An item of reasoning state grew past [`MAX_STATE_BYTES`]: this answer's state cannot
    /// be sent back whole, so none of it is.
    StateLost,
    /// The provider paused its own tool loop (Anthropic's `pause_turn`): the turn goes on with
    /// a request that sends this assistant content back whole (every block as it came, thinking
    /// signed, tool results encrypted), which the provider continues.
    Paused(Value),
}

/// The most opaque reasoning state one answer keeps (bytes of JSON): past it the answer
/// replays nothing. A signed summary or an encrypted reasoning item is a few KB.
pub const MAX_STATE_BYTES: usize = 1 << 20;

/// Builds a state item's text from deltas, up to [`MAX_STATE_BYTES`]: a stream cannot grow it
/// without end, and one that would is marked lost.
#[derive(Clone, Debug, Default)]
pub(crate) struct StateText {
    pub text: String,
    pub lost: bool,
}

impl StateText {
    pub fn push(&mut self, part: &str) {
        if self.lost || self.text.len() + part.len() > MAX_STATE_BYTES {
            self.lost = true;
            self.text = String::new();
        } else {
            self.text.push_str(part);
        }
    }
}

/// Turns the bytes of one upstream response into pieces, whatever the chunk boundaries.
pub trait WireParser: Send {
    /// Feeds the next network chunk.
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Piece>);
    /// The body ended; flush what is left.
    fn finish(&mut self, out: &mut Vec<Piece>);
}

/// The HTTP request a provider expects for one turn, independent of the HTTP client.
#[derive(Clone, Debug, PartialEq)]
pub struct UpstreamRequest {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: serde_json::Value,
}

/// What one request of a turn asks beyond the history: which model, the reasoning settings
/// (already reduced to what the model accepts), and for "Answer now" how to get the answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnOptions {
    pub model: String,
    pub settings: ReasoningSettings,
    pub controls: Controls,
    pub answer_now: Option<AnswerNow>,
    /// The system instructions, every level combined
    /// ([`crate::domain::instructions::Instructions::combined`]); sent as each provider
    /// expects them.
    pub instructions: Option<String>,
}

impl TurnOptions {
    /// The output limit a request asks for: the reader's, else the operator's
    /// (`PONDER_MAX_OUTPUT_TOKENS`).
    pub fn max_tokens(&self, config: &Config) -> u32 {
        self.settings.max_tokens.unwrap_or(config.max_output_tokens)
    }

    /// Writes the temperature and top-p the reader set into `target` under the wire's names
    /// for them; nothing for one not set.
    pub fn put_sampling(&self, target: &mut Value, temperature: &str, top_p: &str) {
        if let Some(t) = self.settings.temperature {
            target[temperature] = Value::from(t.get());
        }
        if let Some(p) = self.settings.top_p {
            target[top_p] = Value::from(p.get());
        }
    }

    /// The configured model with no settings: what a turn asked nothing of gets.
    pub fn default_for(config: &Config) -> Self {
        TurnOptions {
            model: config.model.clone(),
            ..Default::default()
        }
    }
}

/// The follow-up request of "Answer now", carrying the reasoning the model had written.
#[derive(Clone, Debug, PartialEq)]
pub enum AnswerNow {
    /// Continue the assistant message: the reasoning so far, then a closed `</think>`.
    Prefill(String),
    /// Ask again with thinking off (or at its lowest), the reasoning given as context.
    AskAgain(String),
}

impl AnswerNow {
    /// The assistant message a prefill continues.
    pub fn prefill_text(reasoning: &str) -> String {
        format!("<think>\n{}\n</think>\n\n", reasoning.trim())
    }

    /// The last user message, extended with the reasoning so far for a model asked again.
    pub fn with_notes(question: &str, reasoning: &str) -> String {
        format!(
            "{question}\n\n---\nYou already reasoned about this. Your notes so far:\n\n{}\n\n---\nUsing those notes, write the final answer now, without reasoning further.",
            reasoning.trim()
        )
    }

    /// `messages` as the follow-up sends them: for asking again, the last user message carries
    /// the notes; for a prefill, the assistant message to continue is appended by the provider.
    pub fn history(&self, messages: &[ChatMessage]) -> Vec<ChatMessage> {
        let mut out = messages.to_vec();
        if let AnswerNow::AskAgain(reasoning) = self {
            if let Some(last) = out
                .iter_mut()
                .rev()
                .find(|m| m.role == crate::domain::Role::User)
            {
                last.content = Self::with_notes(&last.content, reasoning);
            }
        }
        out
    }
}

/// Builds the request for `messages` against the upstream at `base_url`.
pub fn build_request(
    config: &Config,
    base_url: &str,
    messages: &[ChatMessage],
    options: &TurnOptions,
) -> UpstreamRequest {
    let history = match &options.answer_now {
        Some(now) => now.history(messages),
        None => messages.to_vec(),
    };
    let messages = &history[..];
    match config.provider {
        ProviderKind::OpenAi => openai::request(config, base_url, messages, options),
        ProviderKind::Anthropic => anthropic::request(config, base_url, messages, options),
        ProviderKind::Responses => responses::request(config, base_url, messages, options),
        ProviderKind::Gemini => gemini::request(config, base_url, messages, options),
        ProviderKind::Interactions => interactions::request(config, base_url, messages, options),
        ProviderKind::Ollama => ollama::request(config, base_url, messages, options),
    }
}

/// The settings a follow-up that asks again sends: thinking off where it can be switched,
/// else the lowest effort.
pub(crate) fn ask_again_settings(controls: Controls) -> ReasoningSettings {
    if controls.toggle {
        ReasoningSettings::reasoning(Some(false), None)
    } else if controls.effort {
        ReasoningSettings::reasoning(None, Some(crate::domain::Effort::Low))
    } else {
        ReasoningSettings::default()
    }
}

/// The reasoning fields a request body carries, as the wire names them ("reasoning_effort:
/// \"high\""), read back from the body itself so that what the reader is told is exactly what
/// was sent, then the sampling parameters the reader set ("temperature: 0.7"). Empty when it
/// carries none.
pub fn sent_settings(body: &Value, settings: &ReasoningSettings) -> String {
    let paths: [&[&str]; 7] = [
        &["reasoning_effort"],
        &["chat_template_kwargs", "enable_thinking"],
        &["reasoning", "effort"],
        &["thinking", "type"],
        &["thinking", "budget_tokens"],
        &["generationConfig", "thinkingConfig", "thinkingBudget"],
        &["think"],
    ];
    let mut words = Vec::new();
    for path in paths {
        let found = path.iter().try_fold(body, |v, key| v.get(*key));
        if let Some(value) = found {
            words.push(format!("{}: {value}", path.join(".")));
        }
    }
    for tunable in crate::domain::sampling::Tunable::ALL {
        if let Some(value) = settings.sampling_text(tunable) {
            words.push(format!("{}: {value}", tunable.as_str()));
        }
    }
    words.join(", ")
}

/// True when an upstream's refusal is about reasoning: its words name a reasoning field.
pub fn names_a_setting(detail: &str) -> bool {
    let detail = detail.to_ascii_lowercase();
    [
        "reason",
        "think",
        "effort",
        "budget",
        "temperature",
        "top_p",
        "top-p",
        "topp",
        "max_tokens",
        "max_output_tokens",
        "maxoutputtokens",
        "max_completion_tokens",
        "num_predict",
        "sampling",
    ]
    .iter()
    .any(|w| detail.contains(w))
}

/// The thinking budget (tokens) an effort level asks of the budget-based providers
/// (Anthropic, Gemini).
pub fn budget_for(effort: crate::domain::Effort) -> u32 {
    use crate::domain::Effort;
    match effort {
        Effort::Minimal | Effort::Low => 1_024,
        Effort::Medium => 8_192,
        Effort::High => 24_576,
        Effort::Xhigh => 32_768,
        Effort::Max => 49_152,
    }
}

/// The settings a request sends: the reader's, or for asking again, the cheapest reasoning
/// (the sampling parameters the reader set stay).
pub(crate) fn effective_settings(options: &TurnOptions) -> ReasoningSettings {
    let reasoning = match &options.answer_now {
        Some(AnswerNow::AskAgain(_)) => ask_again_settings(options.controls),
        Some(AnswerNow::Prefill(_)) => ReasoningSettings::default(),
        None => return options.settings,
    };
    reasoning.with_sampling_of(options.settings)
}

/// A fresh parser for one response of the configured provider.
///
/// The formats that carry free text in which a model may write `<think>` tags (Chat
/// Completions and Ollama) go through the inline-tag splitter; the others have typed
/// reasoning and never need it.
pub fn parser(config: &Config) -> Box<dyn WireParser> {
    parser_with_limit(
        config.provider,
        &config.model,
        config.think_start,
        config.limits.max_line_bytes,
    )
}

/// The parser for `provider`, without a whole [`Config`] (benchmarks and fixture replays).
pub fn parser_for(provider: ProviderKind, think_start: bool) -> Box<dyn WireParser> {
    parser_with_limit(provider, "", think_start, DEFAULT_LINE_LIMIT)
}

/// The parser for a response of `provider` about `model` that refuses lines, frames and
/// objects over `max_line` bytes.
pub fn parser_with_limit(
    provider: ProviderKind,
    model: &str,
    think_start: bool,
    max_line: usize,
) -> Box<dyn WireParser> {
    match provider {
        ProviderKind::OpenAi => Box::new(think_tags::WithThinkTags::new(
            openai::ChatCompletionsParser::with_limit(Default::default(), max_line),
            think_start,
        )),
        ProviderKind::Anthropic => Box::new(anthropic::MessagesParser::with_limit(
            anthropic::MessagesFrames::for_model(model),
            max_line,
        )),
        ProviderKind::Responses => Box::new(responses::ResponsesParser::with_limit(
            Default::default(),
            max_line,
        )),
        ProviderKind::Gemini => Box::new(gemini::GeminiParser::with_limit(max_line)),
        ProviderKind::Interactions => Box::new(interactions::InteractionsParser::with_limit(
            Default::default(),
            max_line,
        )),
        ProviderKind::Ollama => Box::new(think_tags::WithThinkTags::new(
            ollama::OllamaParser::with_limit(Default::default(), max_line),
            think_start,
        )),
    }
}

/// What an SSE-based format does with each frame; [`Sse`] does the framing for all of them.
pub trait FrameHandler: Send {
    /// One dispatched frame: its `event:` name and its data.
    fn on_frame(&mut self, event: Option<&str>, data: &str, out: &mut Vec<Piece>);
    /// True once the format's own end marker arrived: later frames are ignored.
    fn is_over(&self) -> bool {
        false
    }
}

/// A [`WireParser`] made of the shared SSE decoder and a format's [`FrameHandler`].
pub struct Sse<H> {
    decoder: SseDecoder,
    frames: Vec<SseFrame>,
    handler: H,
    too_long: bool,
}

impl<H: FrameHandler + Default> Default for Sse<H> {
    fn default() -> Self {
        Sse::new(H::default())
    }
}

impl<H: FrameHandler> Sse<H> {
    pub fn new(handler: H) -> Self {
        Self::with_limit(handler, DEFAULT_LINE_LIMIT)
    }

    /// A parser that gives up on a line or frame over `max_line` bytes.
    pub fn with_limit(handler: H, max_line: usize) -> Self {
        Sse {
            decoder: SseDecoder::with_limit(max_line),
            frames: Vec::new(),
            handler,
            too_long: false,
        }
    }

    fn drain(&mut self, out: &mut Vec<Piece>) {
        for frame in self.frames.drain(..) {
            if self.handler.is_over() {
                break;
            }
            let data = frame.data.trim();
            if !data.is_empty() {
                self.handler.on_frame(frame.event.as_deref(), data, out);
            }
        }
    }
}

impl<H: FrameHandler> WireParser for Sse<H> {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Piece>) {
        if self.handler.is_over() || self.too_long {
            return;
        }
        let pushed = self.decoder.push(chunk, &mut self.frames);
        self.drain(out);
        if let Err(e) = pushed {
            self.too_long = true;
            out.push(too_long(e));
        }
    }

    fn finish(&mut self, out: &mut Vec<Piece>) {
        if self.too_long {
            return;
        }
        self.decoder.finish(&mut self.frames);
        self.drain(out);
    }
}

fn too_long(e: TooLong) -> Piece {
    Piece::TooLong { limit: e.limit }
}

/// What a newline-delimited JSON format does with each line; [`Ndjson`] splits the lines.
pub trait LineHandler: Send {
    fn on_line(&mut self, line: &str, out: &mut Vec<Piece>);
}

/// A [`WireParser`] made of the shared line decoder and a format's [`LineHandler`].
pub struct Ndjson<H> {
    lines: LineDecoder,
    handler: H,
    too_long: bool,
}

impl<H: LineHandler + Default> Default for Ndjson<H> {
    fn default() -> Self {
        Ndjson::new(H::default())
    }
}

impl<H: LineHandler> Ndjson<H> {
    pub fn new(handler: H) -> Self {
        Self::with_limit(handler, DEFAULT_LINE_LIMIT)
    }

    /// A parser that gives up on a line over `max_line` bytes.
    pub fn with_limit(handler: H, max_line: usize) -> Self {
        Ndjson {
            lines: LineDecoder::with_limit(max_line),
            handler,
            too_long: false,
        }
    }
}

impl<H: LineHandler> WireParser for Ndjson<H> {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Piece>) {
        if self.too_long {
            return;
        }
        let handler = &mut self.handler;
        if let Err(e) = self
            .lines
            .push(chunk, |line| on_ndjson_line(handler, line, out))
        {
            self.too_long = true;
            out.push(too_long(e));
        }
    }

    fn finish(&mut self, out: &mut Vec<Piece>) {
        if self.too_long {
            return;
        }
        let handler = &mut self.handler;
        self.lines.finish(|line| on_ndjson_line(handler, line, out));
    }
}

fn on_ndjson_line(handler: &mut impl LineHandler, line: &[u8], out: &mut Vec<Piece>) {
    let line = String::from_utf8_lossy(line);
    let line = line.trim();
    if !line.is_empty() {
        handler.on_line(line, out);
    }
}

/// How many tool calls or citations a parser keeps while they are under way: past it, more are
/// ignored (the turn shows at most as many).
pub(crate) const MAX_PENDING: usize = 200;

/// The sources in a list of `{"url": …, "title": …}` objects (search results, a search's
/// pages); entries without an address are skipped.
pub(crate) fn sources_from(list: Option<&Value>, out: &mut Vec<Piece>) {
    for item in list.and_then(Value::as_array).into_iter().flatten() {
        if let Some(url) = item.get("url").and_then(Value::as_str) {
            out.push(Piece::Source {
                url: url.to_string(),
                title: item
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
        }
    }
}

/// A tool call's input as its card shows it: the one text field a tool is usually asked with
/// (a search query, code, a command, an address, a question), else the arguments as compact
/// JSON. Text that is not JSON is shown as it is.
pub(crate) fn tool_input(json: &str) -> String {
    match serde_json::from_str::<Value>(json) {
        Ok(value) => input_of(&value),
        Err(_) => json.to_string(),
    }
}

/// [`tool_input`] for arguments already parsed.
pub(crate) fn input_of(value: &Value) -> String {
    const KEYS: [&str; 8] = [
        "query", "queries", "code", "command", "url", "q", "question", "prompt",
    ];
    for key in KEYS {
        match value.get(key) {
            Some(Value::String(s)) => return s.clone(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                return words.join(" · ");
            }
            _ => {}
        }
    }
    match value {
        Value::Null => String::new(),
        Value::Object(m) if m.is_empty() => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Logs a line the parser could not use. Never includes the line itself: it may be huge or
/// carry data the operator did not ask to log.
pub(crate) fn skip_unparseable(format: &'static str, error: &serde_json::Error, len: usize) {
    tracing::warn!(format, error = %error, bytes = len, "skipping an upstream line that does not parse");
}

/// Whether retrying may help, from what an in-stream error says about itself: an HTTP-like
/// status (`code`, `status_code`, `status`) or a type/code word.
pub fn retryable_error(error: &Value) -> bool {
    for key in ["status_code", "code", "status"] {
        if let Some(status) = error.get(key).and_then(Value::as_u64) {
            return is_retryable_status(status);
        }
    }
    let words: String = ["type", "code", "status"]
        .iter()
        .filter_map(|k| error.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    const FINAL: [&str; 9] = [
        "invalid",
        "insufficient_quota",
        "authentication",
        "permission",
        "not_found",
        "tool_use_failed",
        "context_length",
        "billing",
        "unauthenticated",
    ];
    !FINAL.iter().any(|w| words.contains(w))
}

/// The HTTP rule: 408, 429 and 5xx may pass on a later try; other 4xx will not.
pub fn is_retryable_status(status: u64) -> bool {
    status == 408 || status == 429 || !(400..500).contains(&status)
}

/// The error piece for an in-stream error object (`{"message":…}` or a bare string).
pub(crate) fn error_piece(error: &Value) -> Piece {
    let detail = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .filter(|m| !m.trim().is_empty())
        .map(shorten);
    let retryable = retryable_error(error);
    Piece::Error(model_error(detail.as_deref(), retryable))
}

/// An in-stream error whose payload could not be read: the model server said only that it
/// failed.
pub(crate) fn unreadable_error() -> Piece {
    Piece::Error(model_error(None, true))
}

/// A `stop` after the model called a function is a stop to run it: `tool_calls`, as the
/// Chat Completions API says it, whatever the provider said.
pub(crate) fn finished(reason: FinishReason, called: bool) -> FinishReason {
    match reason {
        FinishReason::Stop if called => FinishReason::ToolCalls,
        other => other,
    }
}

/// The model server reported an error in its stream, with what it said (if anything).
pub(crate) fn model_error(detail: Option<&str>, retryable: bool) -> Failure {
    Failure::of(ErrorCode::ModelError, retryable)
        .with_some("detail", detail)
        .said()
}

fn shorten(text: &str) -> String {
    let text = text.trim();
    let mut short: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        short.push('…');
    }
    short
}

/// Pulls a human-readable message out of an upstream error body (`{"error":{"message":…}}`,
/// `{"error":"…"}`, `{"message":…}`), falling back to the start of the body.
pub fn error_message_from_body(body: &str) -> String {
    let json: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = json.as_ref().and_then(|v| {
        let v = if v.is_array() { v.get(0)? } else { v };
        let err = v.get("error").unwrap_or(v);
        err.get("message")
            .and_then(|m| m.as_str())
            .or_else(|| err.as_str())
            .map(str::to_string)
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_string());
    shorten(&text)
}

/// Feeds `body` whole to `parser` and returns every piece, for the parsers' unit tests.
#[cfg(test)]
pub(crate) fn parse_whole(mut parser: impl WireParser, body: &[u8]) -> Vec<Piece> {
    let mut out = Vec::new();
    parser.feed(body, &mut out);
    parser.finish(&mut out);
    out
}

/// The pieces a reader is shown, without the reasoning state (for the parsers' unit tests).
#[cfg(test)]
pub(crate) fn shown(pieces: Vec<Piece>) -> Vec<Piece> {
    pieces
        .into_iter()
        .filter(|p| !matches!(p, Piece::State(_) | Piece::StateLost))
        .collect()
}

/// The reasoning state items among `pieces`, in order.
#[cfg(test)]
pub(crate) fn states(pieces: &[Piece]) -> Vec<Value> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::State(item) => Some(item.clone()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Effort;
    use serde_json::json;

    fn options(model: &str, thinking: Option<bool>, effort: Option<Effort>) -> TurnOptions {
        TurnOptions {
            model: model.into(),
            settings: ReasoningSettings::reasoning(thinking, effort),
            controls: Controls::new(true, true, true),
            answer_now: None,
            instructions: None,
        }
    }

    #[test]
    fn instructions_go_where_each_wire_format_takes_them_and_nowhere_without_them() {
        let told = |model: &str| TurnOptions {
            instructions: Some("Be brief.".into()),
            ..options(model, None, None)
        };
        let first = |b: &Value| b["messages"][0].clone();
        assert_eq!(
            first(&body("openai", &told("qwen3:8b"))),
            json!({"role": "system", "content": "Be brief."})
        );
        assert_eq!(
            first(&body("openai", &told("o3-mini")))["role"],
            "developer"
        );
        assert_eq!(
            first(&body("openai", &told("openai/gpt-5.1")))["role"],
            "developer"
        );
        assert_eq!(first(&body("openai", &told("o3")))["role"], "developer");
        assert_eq!(first(&body("openai", &told("olmo-2")))["role"], "system");
        assert_eq!(body("anthropic", &told("m"))["system"], "Be brief.");
        assert_eq!(body("responses", &told("m"))["instructions"], "Be brief.");
        assert_eq!(
            body("gemini", &told("m"))["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}]})
        );
        assert_eq!(
            body("gemini-interactions", &told("m"))["system_instruction"],
            "Be brief."
        );
        assert_eq!(
            first(&body("ollama", &told("m"))),
            json!({"role": "system", "content": "Be brief."})
        );
        for provider in [
            "openai",
            "anthropic",
            "responses",
            "gemini",
            "gemini-interactions",
            "ollama",
        ] {
            let b = body(provider, &options("m", None, None));
            for key in [
                "system",
                "instructions",
                "systemInstruction",
                "system_instruction",
            ] {
                assert!(b.get(key).is_none(), "{provider} sent {key}");
            }
            let roles: Vec<&Value> = b["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| &m["role"])
                .collect();
            assert!(
                !roles.iter().any(|r| *r == "system" || *r == "developer"),
                "{provider}"
            );
        }
    }

    fn body(provider: &str, options: &TurnOptions) -> Value {
        let config =
            Config::from_lookup(|n| (n == "PONDER_PROVIDER").then(|| provider.into())).unwrap();
        build_request(&config, "http://u", &[ChatMessage::user("q")], options).body
    }

    #[test]
    fn sampling_goes_where_each_wire_format_takes_it_and_only_when_set() {
        use crate::domain::sampling::Tunable;
        let set = |o: TurnOptions| TurnOptions {
            settings: o
                .settings
                .with_sampling(Tunable::Temperature, Some(0.7))
                .and_then(|s| s.with_sampling(Tunable::TopP, Some(0.9)))
                .and_then(|s| s.with_sampling(Tunable::MaxTokens, Some(512.0)))
                .unwrap(),
            ..o
        };
        let cases: [(&str, &str, [&str; 3]); 6] = [
            ("openai", "", ["temperature", "top_p", "max_tokens"]),
            ("anthropic", "", ["temperature", "top_p", "max_tokens"]),
            (
                "responses",
                "",
                ["temperature", "top_p", "max_output_tokens"],
            ),
            (
                "gemini",
                "/generationConfig",
                ["temperature", "topP", "maxOutputTokens"],
            ),
            (
                "gemini-interactions",
                "/generation_config",
                ["temperature", "top_p", "max_output_tokens"],
            ),
            (
                "ollama",
                "/options",
                ["temperature", "top_p", "num_predict"],
            ),
        ];
        for (provider, at, [temperature, top_p, limit]) in cases {
            let b = body(provider, &set(options("m", None, None)));
            let holder = b.pointer(at).unwrap_or(&b);
            assert_eq!(holder[temperature], 0.7, "{provider}");
            assert_eq!(holder[top_p], 0.9, "{provider}");
            assert_eq!(holder[limit], 512, "{provider}");
            let plain = body(provider, &options("m", None, None));
            let holder = plain.pointer(at).unwrap_or(&plain);
            assert!(
                holder.get(temperature).is_none(),
                "{provider}: none unless set"
            );
            assert!(holder.get(top_p).is_none(), "{provider}: none unless set");
            assert_ne!(holder[limit], 512, "{provider}: the operator's limit");
        }
        let b = body("openai", &set(options("m", None, None)));
        assert_eq!(
            sent_settings(&b, &set(options("m", None, None)).settings),
            "temperature: 0.7, top_p: 0.9, max_tokens: 512"
        );
        assert!(names_a_setting(
            "Unsupported parameter: 'temperature' is not supported with this model."
        ));
        let low = TurnOptions {
            settings: ReasoningSettings::reasoning(None, Some(Effort::High))
                .with_sampling(Tunable::MaxTokens, Some(2000.0))
                .unwrap(),
            ..options("claude-sonnet-4-5", None, None)
        };
        let b = body("anthropic", &low);
        assert_eq!(
            b["thinking"]["budget_tokens"], 1999,
            "the budget stays below the reader's limit"
        );
    }

    /// Every key a reasoning setting may add to a request, to check that none is sent when
    /// nothing was chosen.
    const SETTING_KEYS: [&str; 3] = ["reasoning_effort", "chat_template_kwargs", "think"];

    #[test]
    fn each_provider_carries_exactly_the_setting_chosen() {
        let high = Some(Effort::High);
        let b = body("openai", &options("m", None, high));
        assert_eq!(b["reasoning_effort"], "high");
        assert!(b.get("chat_template_kwargs").is_none());
        let b = body("openai", &options("m", Some(false), None));
        assert_eq!(b["chat_template_kwargs"]["enable_thinking"], false);
        assert!(b.get("reasoning_effort").is_none());
        assert_eq!(
            body("openai", &options("m", None, None)).get("chat_template_kwargs"),
            None
        );
        let b = body("responses", &options("m", None, Some(Effort::Low)));
        assert_eq!(b["reasoning"]["effort"], "low");
        assert!(body("responses", &options("m", None, None))["reasoning"]
            .get("effort")
            .is_none());
        let b = body("anthropic", &options("m", None, high));
        assert_eq!(b["thinking"]["budget_tokens"], 24_576);
        let b = body("anthropic", &options("m", Some(false), None));
        assert_eq!(b["thinking"], json!({"type": "disabled"}));
        let b = body("gemini", &options("m", Some(false), None));
        assert_eq!(b["generationConfig"]["thinkingConfig"]["thinkingBudget"], 0);
        let b = body("gemini", &options("m", None, Some(Effort::Medium)));
        assert_eq!(
            b["generationConfig"]["thinkingConfig"]["thinkingBudget"],
            8_192
        );
        assert!(
            body("gemini", &options("m", None, None))["generationConfig"]["thinkingConfig"]
                .get("thinkingBudget")
                .is_none()
        );
        assert_eq!(
            body("ollama", &options("m", Some(false), None))["think"],
            false
        );
        assert_eq!(body("ollama", &options("m", None, high))["think"], "high");
        for provider in ["openai", "responses", "anthropic", "gemini"] {
            let b = body(provider, &options("the-model", None, None));
            for key in SETTING_KEYS {
                assert!(b.get(key).is_none(), "{provider} sent {key} unasked");
            }
            assert!(b.to_string().contains("the-model") || provider == "gemini");
        }
    }

    #[test]
    fn levels_beyond_low_medium_high_reach_each_wire_as_it_names_them() {
        let b = body(
            "anthropic",
            &options("claude-opus-4-7", None, Some(Effort::Xhigh)),
        );
        assert_eq!(b["output_config"]["effort"], "xhigh");
        let b = body(
            "anthropic",
            &options("claude-sonnet-4-6", None, Some(Effort::Max)),
        );
        assert_eq!(b["output_config"]["effort"], "max");
        let b = body("responses", &options("gpt-5", None, Some(Effort::Minimal)));
        assert_eq!(b["reasoning"]["effort"], "minimal");
        let b = body(
            "gemini",
            &options("gemini-3-flash-preview", None, Some(Effort::Minimal)),
        );
        assert_eq!(
            b["generationConfig"]["thinkingConfig"]["thinkingLevel"],
            "minimal"
        );
        let b = body(
            "gemini",
            &options("gemini-3-pro-preview", None, Some(Effort::Max)),
        );
        assert_eq!(
            b["generationConfig"]["thinkingConfig"]["thinkingLevel"],
            "high"
        );
        let b = body(
            "anthropic",
            &options("claude-sonnet-4-5", None, Some(Effort::Max)),
        );
        assert_eq!(
            b["thinking"]["budget_tokens"], 32_767,
            "a budget model asked for max gets the largest budget below max_tokens (32,768)"
        );
    }

    #[test]
    fn answer_now_prefills_or_asks_again_with_the_reasoning() {
        let mut o = options("m", Some(true), Some(Effort::High));
        o.answer_now = Some(AnswerNow::Prefill("I think 42".into()));
        let b = body("openai", &o);
        let last = &b["messages"][1];
        assert_eq!(last["role"], "assistant");
        assert_eq!(last["content"], "<think>\nI think 42\n</think>\n\n");
        assert_eq!(b["continue_final_message"], true);
        assert!(
            b.get("reasoning_effort").is_none(),
            "the prefill asks no more thinking"
        );
        let b = body("ollama", &o);
        assert_eq!(b["think"], false);
        assert_eq!(b["messages"][1]["role"], "assistant");
        o.answer_now = Some(AnswerNow::AskAgain("I think 42".into()));
        let b = body("anthropic", &o);
        assert_eq!(b["thinking"], json!({"type": "disabled"}));
        let question = b["messages"][0]["content"].as_str().unwrap();
        assert!(question.starts_with("q\n") && question.contains("I think 42"));
        assert_eq!(b["messages"].as_array().unwrap().len(), 1);
        o.controls.toggle = false;
        let b = body("responses", &o);
        assert_eq!(
            b["reasoning"]["effort"], "low",
            "the lowest effort where it cannot be off"
        );
    }

    #[test]
    fn the_settings_sent_are_read_back_from_the_body() {
        let b = body("openai", &options("m", Some(false), Some(Effort::High)));
        assert_eq!(
            sent_settings(&b, &Default::default()),
            "reasoning_effort: \"high\", chat_template_kwargs.enable_thinking: false"
        );
        let b = body("anthropic", &options("m", None, Some(Effort::Low)));
        assert_eq!(
            sent_settings(&b, &Default::default()),
            "thinking.type: \"enabled\", thinking.budget_tokens: 1024"
        );
        assert_eq!(
            sent_settings(
                &body("openai", &options("m", None, None)),
                &Default::default()
            ),
            ""
        );
        assert!(names_a_setting("Unsupported parameter: 'reasoning_effort'"));
        assert!(!names_a_setting(
            "This model's maximum context length is 8192 tokens"
        ));
    }

    #[test]
    fn retryable_follows_the_status_then_the_words() {
        assert!(!retryable_error(
            &json!({"code": 400, "message": "Token limit"})
        ));
        assert!(!retryable_error(
            &json!({"type": "invalid_request_error", "status_code": 400})
        ));
        assert!(retryable_error(
            &json!({"code": 503, "status": "UNAVAILABLE"})
        ));
        assert!(retryable_error(&json!({"type": "overloaded_error"})));
        assert!(!retryable_error(
            &json!({"type": "insufficient_quota", "code": "insufficient_quota"})
        ));
        assert!(retryable_error(&json!("an error was encountered")));
        assert!(retryable_error(&json!({"code": 429})));
    }

    #[test]
    fn error_messages_come_from_any_usual_shape() {
        assert_eq!(
            error_message_from_body(r#"[{"error":{"code":400,"message":"bad key"}}]"#),
            "bad key"
        );
        assert_eq!(
            error_message_from_body(r#"{"type":"error","error":{"type":"x","message":"m"}}"#),
            "m"
        );
        assert_eq!(error_message_from_body(r#"{"error":"plain"}"#), "plain");
        assert_eq!(error_message_from_body(" not json "), "not json");
    }
}
