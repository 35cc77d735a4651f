//! What a turn writes into the store: an answer's state as it streams and where it goes.

use crate::domain::history::VersionStatus;
use crate::domain::{ErrorCode, Failure, ThinkingKind};

/// One reasoning block as the turn writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockRecord {
    /// The block's number in its turn; blocks are stored in the order they began.
    pub index: u32,
    pub kind: ThinkingKind,
    pub text: String,
    pub started_at: Option<i64>,
    pub duration_ms: Option<u64>,
    pub interrupted: bool,
    /// The reader cut the reasoning short ("Answer now").
    pub cut_short: bool,
}

impl crate::domain::answer::ThinkingBlock for BlockRecord {
    fn begun(index: u32, at: f64) -> Self {
        BlockRecord {
            index,
            kind: Default::default(),
            text: String::new(),
            started_at: Some(at as i64),
            duration_ms: None,
            interrupted: false,
            cut_short: false,
        }
    }

    fn index(&self) -> u32 {
        self.index
    }

    fn set_kind(&mut self, kind: ThinkingKind) {
        self.kind = kind;
    }

    fn text_mut(&mut self) -> &mut String {
        &mut self.text
    }

    fn end(&mut self, duration_ms: Option<u64>, cut_short: bool, _now: f64) {
        self.duration_ms = duration_ms.or(Some(0));
        self.cut_short |= cut_short;
    }

    fn is_open(&self) -> bool {
        self.duration_ms.is_none()
    }

    fn interrupt(&mut self, _now: f64) {
        self.interrupted = true;
    }
}

/// The state of an answer being written, saved as the turn streams and at its end.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerRecord {
    pub content: String,
    pub blocks: Vec<BlockRecord>,
    /// The tools the model used and the sources the answer cites.
    pub extras: Extras,
    pub status: VersionStatus,
    pub error: Option<Failure>,
    pub finish_reason: Option<crate::domain::FinishReason>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
}

/// The parts of an answer beside its text and reasoning: the tools the model used, the
/// sources it cites and the code and parameters of its error (whose message and `retryable`
/// have their own columns), stored as one JSON document.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Extras {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<crate::domain::ToolStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<crate::domain::SourceRef>,
    #[serde(default, skip_serializing_if = "ErrorCode::is_other")]
    pub error_code: ErrorCode,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub error_params: std::collections::BTreeMap<String, String>,
    /// Of the input's tokens, those the attached files took, where the provider said (the
    /// other counts have columns of their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_tokens: Option<u64>,
    /// The rest of the answer's usage beside its columns: the cached input, whether a count
    /// was estimated, and the cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::domain::usage::Cost>,
}

impl Extras {
    /// The stored document read back; a missing or unreadable one is none (the answer's text
    /// and reasoning still show), and the damage is logged.
    pub fn read(json: Option<String>) -> Extras {
        let Some(json) = json else {
            return Extras::default();
        };
        serde_json::from_str(&json).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "a stored answer's tools and sources are unreadable; shown without them");
            Extras::default()
        })
    }

    /// A version no longer written has no tool still running: one that was (its turn was cut,
    /// or the server stopped) failed.
    pub fn end_running_tools(&mut self) {
        crate::domain::rich::end_running_tools(&mut self.tools);
    }

    /// The document to store, `None` when there is nothing in it.
    pub fn write(&self) -> Option<String> {
        if self.tools.is_empty()
            && self.sources.is_empty()
            && self.error_code.is_other()
            && self.error_params.is_empty()
            && self.file_tokens.is_none()
            && self.cached_input_tokens.is_none()
            && !self.estimated
            && self.cost.is_none()
        {
            return None;
        }
        serde_json::to_string(self).ok()
    }

    /// The same document, with the code and parameters of `error` (none: no error).
    pub fn with_error(&self, error: Option<&Failure>) -> Extras {
        Extras {
            tools: self.tools.clone(),
            sources: self.sources.clone(),
            error_code: error.map(|e| e.code).unwrap_or_default(),
            error_params: error.map(|e| e.params.clone()).unwrap_or_default(),
            file_tokens: self.file_tokens,
            cached_input_tokens: self.cached_input_tokens,
            estimated: self.estimated,
            cost: self.cost.clone(),
        }
    }
}

/// Where a turn's answer is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerSlot {
    pub conversation_id: String,
    pub message_id: String,
    pub version_id: String,
    pub version: usize,
}
