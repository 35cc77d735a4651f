//! What every provider's framing of a demo script shares: the token counts it reports, the
//! [`Framing`] each wire format implements, and the chunk and SSE helpers.

use std::time::Duration;

use axum::body::Bytes;
use serde_json::{json, Value};

use super::pacer::Emit;
use super::scenarios::DemoTool;

/// What a rendering writes for each signature and encrypted reasoning the real API would send;
/// the demo's handler replaces it with the response's own seal (see [`super::replay`]).
pub const SEAL: &str = "ZGVtby1zaWduYXR1cmU=";

/// The demo's prompt size, in tokens.
pub(super) const PROMPT_TOKENS: u64 = 12;

/// Token counts of a reply, at a rough four characters per token.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub(super) answer_chars: u64,
    pub(super) reasoning_chars: u64,
    pub(super) hidden: u64,
    /// What the request's files took of the prompt.
    pub(super) files: super::received::FileTokens,
}

impl Counts {
    /// The prompt's tokens, the files' with the text's.
    pub(super) fn prompt(&self) -> u64 {
        PROMPT_TOKENS + self.files.images + self.files.documents
    }

    /// The prompt's count by modality, `(modality, tokens)`: text, then images and documents
    /// when the request had any.
    pub(super) fn by_modality(&self) -> Vec<(&'static str, u64)> {
        let mut out = vec![("TEXT", PROMPT_TOKENS)];
        if self.files.images > 0 {
            out.push(("IMAGE", self.files.images));
        }
        if self.files.documents > 0 {
            out.push(("DOCUMENT", self.files.documents));
        }
        out
    }

    pub(super) fn reasoning(&self) -> u64 {
        self.reasoning_chars / 4 + self.hidden
    }

    pub(super) fn answer(&self) -> u64 {
        self.answer_chars / 4
    }

    pub(super) fn output(&self) -> u64 {
        self.reasoning() + self.answer()
    }
}

/// One provider's way of writing the steps of a script.
pub(super) trait Framing {
    fn begin(&mut self, out: &mut Vec<Emit>);
    fn think(&mut self, text: &str, counts: &Counts, out: &mut Vec<Emit>);
    fn answer(&mut self, text: &str, counts: &Counts, out: &mut Vec<Emit>);
    /// Reasoning without readable text, lasting `pause`.
    fn hidden(&mut self, pause: Duration, out: &mut Vec<Emit>);
    /// Reasoning whose display was omitted: only Anthropic has a shape of its own for it.
    fn omitted(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        self.hidden(pause, out);
    }
    fn error(&mut self, message: &str, out: &mut Vec<Emit>);
    fn end(&mut self, finish: &str, counts: &Counts, out: &mut Vec<Emit>);
    /// A tool the provider runs itself: it starts, runs for `tool.runs_for`, and returns.
    /// Providers with no server tools (Ollama) say nothing of it.
    fn tool(&mut self, tool: &DemoTool, out: &mut Vec<Emit>) {
        out.push(Emit::Pause(tool.runs_for));
    }
    /// The answer so far cites the page at `url`. Providers that cannot mark a place in the
    /// answer say nothing.
    fn cite(&mut self, _url: &str, _title: &str, _out: &mut Vec<Emit>) {}
}

/// A tool's input as its arguments object: `{"code": …}` for code, `{"query": …}` otherwise.
pub(super) fn tool_arguments(tool: &DemoTool) -> Value {
    if tool.name == "code_execution" {
        json!({ "code": tool.input })
    } else {
        json!({ "query": tool.input })
    }
}

pub(super) fn chunk(text: String) -> Emit {
    Emit::Chunk(Bytes::from(text))
}

pub(super) fn sse_event(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}
