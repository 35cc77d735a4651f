//! Upstream adapters: one pure parser per wire format (bytes in, [`Piece`]s out) over the
//! shared framer in [`crate::api::sse`], and the request each provider expects.
//!
//! Parsers know nothing of time, blocks numbering or the browser: [`super::turn::TurnAssembler`]
//! turns their pieces into the turn contract, the same way for every provider.

pub mod openai;

use crate::domain::{ChatMessage, ThinkingKind, Usage};

use super::config::{Config, ProviderKind};

/// What a provider's stream says, normalized but not yet numbered or timed.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// The provider opened a reasoning block explicitly (it may carry no text at all).
    BlockStart { kind: ThinkingKind },
    /// Reasoning text. Opens a block when none is open.
    Reasoning { text: String, kind: ThinkingKind },
    /// The provider closed its reasoning block explicitly.
    BlockEnd,
    /// Answer text.
    Answer(String),
    /// Everything streamed as answer so far was reasoning (a `</think>` with no opening tag).
    Reclassify,
    /// Token counts; later values replace earlier ones field by field.
    Usage(Usage),
    /// The model stopped for this reason; usage may still follow.
    Finish(String),
    /// The provider's own end-of-stream marker: nothing useful follows.
    End,
    /// The provider reported a failure inside the stream.
    Error { message: String, retryable: bool },
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

/// Builds the request for `messages` against the upstream at `base_url`.
pub fn build_request(config: &Config, base_url: &str, messages: &[ChatMessage]) -> UpstreamRequest {
    match config.provider {
        ProviderKind::OpenAi
        | ProviderKind::Anthropic
        | ProviderKind::Responses
        | ProviderKind::Gemini
        | ProviderKind::Ollama => openai::request(config, base_url, messages),
    }
}

/// A fresh parser for one response of the configured provider.
pub fn parser(config: &Config) -> Box<dyn WireParser> {
    match config.provider {
        ProviderKind::OpenAi
        | ProviderKind::Anthropic
        | ProviderKind::Responses
        | ProviderKind::Gemini
        | ProviderKind::Ollama => Box::new(openai::ChatCompletionsParser::default()),
    }
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
    let mut short: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        short.push('…');
    }
    short
}
