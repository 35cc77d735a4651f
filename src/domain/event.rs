//! The normalized turn: what `POST /api/chat` streams, one JSON object per SSE `data:` line.

use serde::{Deserialize, Serialize};

use super::rich::ToolStatus;

/// How much of the model's reasoning is readable.
///
/// Providers differ: some stream the raw scratchpad, some only a summary, some reason in
/// encrypted form only. The reader is told which one they are looking at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingKind {
    /// The model's own scratchpad text.
    #[default]
    Raw,
    /// A provider-written summary of the reasoning.
    Summary,
    /// Reasoning happened but its text is not available (encrypted or withheld).
    Redacted,
}

impl ThinkingKind {
    /// A short word for the origin note under a block ("summary", "redacted").
    pub fn label(self) -> &'static str {
        match self {
            ThinkingKind::Raw => "raw",
            ThinkingKind::Summary => "summary",
            ThinkingKind::Redacted => "redacted",
        }
    }
}

/// Why the model stopped, as the upstream reported it (`stop`, `length`, `tool_calls`, …).
///
/// Kept as a string: providers keep inventing values and the client only needs to recognise
/// a few of them.
pub type FinishReason = String;

/// The `finish_reason` of a turn that was stopped before it finished.
pub const STOPPED: &str = "stopped";

/// Token counts of one turn, when the upstream reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// True when no count is known, so the `usage` key can be left out of `done`.
    pub fn is_empty(&self) -> bool {
        self.input_tokens.is_none()
            && self.output_tokens.is_none()
            && self.reasoning_tokens.is_none()
    }
}

/// Why a turn or a request failed, as the reader is told it: what happened, and whether trying
/// again may help. The one error shape of the whole app: the stream's `error` event, the body
/// of an HTTP refusal, a provider's in-stream error and the bubble's error state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub message: String,
    pub retryable: bool,
}

impl Failure {
    pub fn new(message: impl Into<String>, retryable: bool) -> Self {
        Failure {
            message: message.into(),
            retryable,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One event of a turn. Every turn ends with exactly one [`TurnEvent::Done`] or
/// [`TurnEvent::Error`], and nothing follows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEvent {
    /// A reasoning block begins. Sent even when no readable text will follow, so the reader
    /// always sees that the model is thinking.
    ThinkingStart {
        block: u32,
        kind: ThinkingKind,
        /// When the block began, in ms since the turn began (the server's clock): a stored
        /// turn's events say it, so a viewer that joins later counts the block's time from
        /// its real start.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_ms: Option<u64>,
    },
    /// A piece of reasoning text for an open or already closed block.
    Thinking { block: u32, text: String },
    /// The block is over. `duration_ms` is measured by Ponder's server, from the block's first
    /// reasoning byte to its end.
    ThinkingEnd {
        block: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        /// The reader asked for the answer ("Answer now") and the reasoning was cut there.
        #[serde(default, skip_serializing_if = "is_false")]
        cut_short: bool,
    },
    /// A piece of the answer.
    Delta { text: String },
    /// Everything sent as `delta` so far was really reasoning for `block` (inline `<think>`
    /// models whose chat template opened the tag before the stream began).
    Reclassify { block: u32 },
    /// The id the running turn answers to (`POST /api/turn/answer-now`); the first event of
    /// every turn, also sent as the `X-Ponder-Turn` response header.
    Started { turn: String },
    /// The model used a tool (web search, code execution, an MCP tool, or a function it asks the
    /// app to run). `tool` numbers the turn's tools from 0; `input` is a short summary of what
    /// it was asked. A second `tool_start` for the same `tool` replaces its name and input (a
    /// provider may only say what the tool was asked once it is running). The tool runs until
    /// its `tool_end`; it ends any open thinking block, so the blocks around it stay apart.
    ToolStart {
        tool: u32,
        name: String,
        #[serde(default)]
        input: String,
    },
    /// The tool finished (`status` `"finished"`) or failed (`"failed"`: an error, or a tool the
    /// model asked the app to run, which Ponder does not); `output` is a short summary.
    ToolEnd {
        tool: u32,
        status: ToolStatus,
        #[serde(default)]
        output: String,
    },
    /// A source the answer may cite: a web search result, a grounding chunk, a citation. `n`
    /// numbers the turn's sources from 1 in the order they first appear; each address is sent
    /// once, and only absolute `http`/`https` addresses are sent.
    Source {
        n: u32,
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// The answer streamed so far cites source `n` here. A client that shows markers puts the
    /// footnote reference `[^n]` at this point of the answer text (Ponder does, and stores it so).
    Cite { n: u32 },
    /// Where the server stores this turn (server-side history only; right after `started`):
    /// the conversation, the reader's message when the turn added one, and the answer's message
    /// and version.
    Turn {
        conversation: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user_message: Option<String>,
        message: String,
        version: usize,
    },
    /// How long the turn had been running when this response began (ms, the server's clock):
    /// the first frame of a response that joins a running turn (`GET /api/turn/events`), so
    /// the viewer counts thinking time from the turn's real start. It has no sequence number.
    Clock { turn_ms: u64 },
    /// The turn finished normally, or was stopped (`finish_reason` `"stopped"`: a reader
    /// pressed Stop, or nobody watched it under `PONDER_ORPHAN_TURNS=stop`).
    Done {
        finish_reason: FinishReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        thinking_chars: u64,
        total_ms: u64,
    },
    /// The turn failed.
    Error(Failure),
}

impl TurnEvent {
    /// True for the two events that end a turn.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TurnEvent::Done { .. } | TurnEvent::Error(Failure { .. })
        )
    }

    /// True for the `done` of a turn a reader stopped.
    pub fn is_stop(&self) -> bool {
        matches!(self, TurnEvent::Done { finish_reason, .. } if finish_reason == STOPPED)
    }

    /// A convenience constructor for the error event.
    pub fn error(message: impl Into<String>, retryable: bool) -> Self {
        TurnEvent::Error(Failure::new(message, retryable))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(event: TurnEvent, wire: serde_json::Value) {
        assert_eq!(serde_json::to_value(&event).unwrap(), wire);
        assert_eq!(serde_json::from_value::<TurnEvent>(wire).unwrap(), event);
    }

    #[test]
    fn events_have_the_documented_wire_shape() {
        round_trip(
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            json!({"type":"thinking_start","block":0,"kind":"raw"}),
        );
        round_trip(
            TurnEvent::ThinkingStart {
                block: 1,
                kind: ThinkingKind::Summary,
                at_ms: Some(1250),
            },
            json!({"type":"thinking_start","block":1,"kind":"summary","at_ms":1250}),
        );
        round_trip(
            TurnEvent::ToolStart {
                tool: 0,
                name: "web_search".into(),
                input: "rust 2024".into(),
            },
            json!({"type":"tool_start","tool":0,"name":"web_search","input":"rust 2024"}),
        );
        round_trip(
            TurnEvent::ToolEnd {
                tool: 0,
                status: ToolStatus::Failed,
                output: "timeout".into(),
            },
            json!({"type":"tool_end","tool":0,"status":"failed","output":"timeout"}),
        );
        round_trip(
            TurnEvent::Source {
                n: 1,
                url: "https://example.com/".into(),
                title: None,
            },
            json!({"type":"source","n":1,"url":"https://example.com/"}),
        );
        round_trip(TurnEvent::Cite { n: 2 }, json!({"type":"cite","n":2}));
        round_trip(
            TurnEvent::Clock { turn_ms: 4200 },
            json!({"type":"clock","turn_ms":4200}),
        );
        round_trip(
            TurnEvent::Thinking {
                block: 1,
                text: "hm".into(),
            },
            json!({"type":"thinking","block":1,"text":"hm"}),
        );
        round_trip(
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(4200),
                cut_short: false,
            },
            json!({"type":"thinking_end","block":0,"duration_ms":4200}),
        );
        round_trip(
            TurnEvent::Delta { text: "é".into() },
            json!({"type":"delta","text":"é"}),
        );
        round_trip(
            TurnEvent::Reclassify { block: 0 },
            json!({"type":"reclassify","block":0}),
        );
        round_trip(
            TurnEvent::Done {
                finish_reason: "stop".into(),
                usage: Some(Usage {
                    input_tokens: Some(3),
                    output_tokens: Some(9),
                    reasoning_tokens: None,
                }),
                thinking_chars: 12,
                total_ms: 40,
            },
            json!({"type":"done","finish_reason":"stop","usage":{"input_tokens":3,"output_tokens":9},"thinking_chars":12,"total_ms":40}),
        );
        round_trip(
            TurnEvent::Turn {
                conversation: "c1".into(),
                user_message: Some("m1".into()),
                message: "m2".into(),
                version: 0,
            },
            json!({"type":"turn","conversation":"c1","user_message":"m1","message":"m2","version":0}),
        );
        round_trip(
            TurnEvent::Started { turn: "t1".into() },
            json!({"type":"started","turn":"t1"}),
        );
        round_trip(
            TurnEvent::error("boom", true),
            json!({"type":"error","message":"boom","retryable":true}),
        );
    }

    #[test]
    fn done_without_usage_leaves_the_key_out() {
        let done = TurnEvent::Done {
            finish_reason: "length".into(),
            usage: None,
            thinking_chars: 0,
            total_ms: 1,
        };
        let wire = serde_json::to_value(done).unwrap();
        assert!(wire.get("usage").is_none());
    }

    #[test]
    fn an_unknown_type_is_rejected() {
        assert!(serde_json::from_value::<TurnEvent>(json!({"type":"nope"})).is_err());
    }

    #[test]
    fn only_done_and_error_are_terminal() {
        assert!(TurnEvent::error("x", false).is_terminal());
        assert!(!TurnEvent::Delta {
            text: String::new()
        }
        .is_terminal());
    }
}
