//! The normalized turn: what `POST /api/chat` streams, one JSON object per SSE `data:` line.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

use super::rich::ToolStatus;

/// How much of the model's reasoning is readable.
///
/// Providers differ: some stream the raw scratchpad, some only a summary, some reason in
/// encrypted form only. The reader is told which one they are looking at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThinkingKind {
    /// The model's own scratchpad text.
    #[default]
    Raw,
    /// A provider-written summary of the reasoning.
    Summary,
    /// Reasoning happened but the provider encrypted it for safety (Anthropic's
    /// `redacted_thinking`, passed on as OpenRouter's encrypted details).
    Redacted,
    /// Reasoning happened but the provider sent no readable text of it: display omitted,
    /// no summary given, reasoning returned only as opaque state. Not a safety redaction.
    Hidden,
}

crate::domain::wire::wire_names!(ThinkingKind {
    Raw = "raw",
    Summary = "summary",
    Redacted = "redacted",
    Hidden = "hidden",
});

impl ThinkingKind {
    /// A short word for the origin note under a block ("summary", "redacted").
    pub fn label(self) -> &'static str {
        super::wire::WireName::wire_name(self)
    }
}

/// Why the model stopped, each provider's word mapped onto one vocabulary (`stop`, `length`,
/// `tool_calls`, `content_filter`) plus Ponder's own `stopped`. A word no mapping knows is kept
/// as it came (`Other`): providers keep inventing values, and a client shows what it does not
/// recognise rather than lose it. On the wire and in the store it is that one string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished its answer.
    #[default]
    Stop,
    /// The output limit cut the answer (the provider's, or Ponder's own cap).
    Length,
    /// The model asked for a tool Ponder does not run.
    ToolCalls,
    /// The provider's safety filter ended the answer.
    ContentFilter,
    /// A reader pressed Stop, or nobody watched it under `PONDER_ORPHAN_TURNS=stop`.
    Stopped,
    Other(String),
}

impl FinishReason {
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Stopped => "stopped",
            FinishReason::Other(word) => word,
        }
    }

    pub fn parse(word: &str) -> FinishReason {
        match word {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            "stopped" => FinishReason::Stopped,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

impl From<&str> for FinishReason {
    fn from(word: &str) -> Self {
        FinishReason::parse(word)
    }
}

impl PartialEq<str> for FinishReason {
    fn eq(&self, word: &str) -> bool {
        self.as_str() == word
    }
}

impl PartialEq<&str> for FinishReason {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

impl std::fmt::Display for FinishReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FinishReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl utoipa::PartialSchema for FinishReason {
    /// The words Ponder maps onto; a provider's own word passes through as it came.
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .examples(["stop", "length", "tool_calls", "content_filter", "stopped"])
            .into()
    }
}

impl utoipa::ToSchema for FinishReason {}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|word| FinishReason::parse(&word))
    }
}

/// A sum of money in millionths of the operator's currency unit: a price per million tokens
/// times a count of tokens is exactly this, with no rounding.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Cost {
    pub micros: u64,
    /// ISO 4217 code (`USD`, `EUR`, …) as the price table names it.
    pub currency: String,
}

/// Token counts of one turn, when the upstream reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Of `input_tokens`, those the attached files took (images, documents), where the
    /// provider counts them apart (Gemini's `promptTokensDetails`, the Interactions API's
    /// `input_tokens_by_modality`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_tokens: Option<u64>,
    /// Of `input_tokens`, those read from the provider's prompt cache (billed lower).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Some count here was estimated from the streamed characters: the provider reported none.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// What the turn cost at the operator's prices (`PONDER_PRICES`), when its model has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// With this turn the reader reached a usage limit: when it resets (RFC 3339, UTC). The
    /// turn finished; the next is refused until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_reached: Option<String>,
}

impl Usage {
    /// True when no count is known, so the `usage` key can be left out of `done`.
    pub fn is_empty(&self) -> bool {
        self.input_tokens.is_none()
            && self.output_tokens.is_none()
            && self.reasoning_tokens.is_none()
            && self.file_tokens.is_none()
            && self.cached_input_tokens.is_none()
    }
}

/// Why a turn or a request failed, as the reader is told it: what happened, and whether trying
/// again may help. The one error shape of the whole app: the stream's `error` event, the body
/// of an HTTP refusal, a provider's in-stream error and the bubble's error state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Failure {
    /// The English sentence, for API clients and logs.
    pub message: String,
    pub retryable: bool,
    /// What went wrong, as a stable name: the page says it in the reader's language from
    /// `code` and `params`, never from `message`.
    #[serde(default)]
    pub code: ErrorCode,
    /// The values the sentence carries (a status, a number of seconds, a host), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
}

impl Failure {
    /// A failure with no more specific code than [`ErrorCode::Other`]: its `message` is shown.
    pub fn new(message: impl Into<String>, retryable: bool) -> Self {
        Failure {
            message: message.into(),
            retryable,
            code: ErrorCode::Other,
            params: BTreeMap::new(),
        }
    }

    /// A failure the page can say in the reader's language.
    pub fn coded(code: ErrorCode, message: impl Into<String>, retryable: bool) -> Self {
        Failure {
            code,
            ..Failure::new(message, retryable)
        }
    }

    /// A failure of `code` still to be worded: the server says it in the catalogue's English
    /// (`i18n::errors::Said`) once its parameters are set.
    pub fn of(code: ErrorCode, retryable: bool) -> Self {
        Failure::coded(code, String::new(), retryable)
    }

    /// Adds a parameter of the sentence.
    pub fn with(mut self, name: &str, value: impl ToString) -> Self {
        self.params.insert(name.to_string(), value.to_string());
        self
    }

    /// Adds a parameter of the sentence when there is a value.
    pub fn with_some(self, name: &str, value: Option<impl ToString>) -> Self {
        match value {
            Some(value) => self.with(name, value),
            None => self,
        }
    }

    /// A parameter by name ("" when absent).
    pub fn param(&self, name: &str) -> &str {
        self.params.get(name).map(String::as_str).unwrap_or("")
    }
}

/// Declares [`ErrorCode`] with each code's wire name beside its variant, so the enum, the name
/// table and the serde impls cannot drift apart. Hand-written instead of serde's derive: the
/// derive's visitors, instantiated once per deserializer the page uses, weighed ~19 KB of the
/// browser's WebAssembly; one string lookup does the same.
macro_rules! error_codes {
    (
        $(#[$attr:meta])*
        pub enum ErrorCode {
            $( $(#[$vattr:meta])* $variant:ident = $name:literal, )*
        }
    ) => {
        $(#[$attr])*
        pub enum ErrorCode {
            $( $(#[$vattr])* $variant, )*
        }

        impl ErrorCode {
    /// The code a wire name stands for; a name this build does not know (from a newer server)
    /// reads as [`ErrorCode::Other`].
    pub fn from_name(name: &str) -> ErrorCode {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|code| code.name() == name)
            .unwrap_or(ErrorCode::Other)
    }

            /// Every code, in the order the contract lists them.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            /// The code's name on the wire (`snake_case`).
            pub fn name(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)*
                }
            }
        }
    };
}

error_codes! {
/// The stable names of everything a turn or a request can fail with (the turn contract lists
/// them with their parameters). A code this build does not know reads as [`ErrorCode::Other`],
/// whose English `message` is shown as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErrorCode {
    // ---- a turn's upstream (the model server) failed ----
    /// No response headers within the first-byte timeout. Params: `seconds`.
    NoAnswer = "no_answer",
    /// Headers, but no first byte of the stream within the first-byte timeout. Params: `seconds`.
    NoStart = "no_start",
    /// The stream went silent mid-answer for the idle timeout. Params: `seconds`.
    Silent = "silent",
    /// Ponder is shutting down and ended the turn before its stream began. No params.
    ShuttingDown = "shutting_down",
    /// Ponder is shutting down and cut the answer short. No params.
    ShuttingDownMidAnswer = "shutting_down_mid_answer",
    /// The model server answered with a redirect, which Ponder does not follow. Params: `status`
    /// (the number), `origin` (where it pointed).
    Redirected = "redirected",
    /// The model server answered an error status. Params: `status` (the number); `detail` (what
    /// its body said) and `retry_after` (its `Retry-After` as sent, usually seconds) when it
    /// sent them.
    UpstreamStatus = "upstream_status",
    /// The model server refused the reasoning settings or sampling parameters sent with the turn. Params: `status` (the
    /// number), `settings` (the fields, as sent), `detail` (what its body said) when it said so.
    SettingRefused = "setting_refused",
    /// The model server refused the reasoning state sent back with earlier answers. Params:
    /// `status` (the number), `detail` (what its body said) when it said so.
    ReplayRefused = "replay_refused",
    /// The connection to the model server broke mid-stream. No params.
    ConnectionBroke = "connection_broke",
    /// This server lost contact with the other replicas and stopped the turn. No params.
    ReplicaLost = "replica_lost",
    /// The server running the turn stopped before it finished (told to viewers on another
    /// replica). No params.
    ReplicaDied = "replica_died",
    /// The model's stream ended without its end marker. No params.
    StreamCut = "stream_cut",
    /// The model server sent a line over `PONDER_MAX_LINE_BYTES`. Params: `limit` (as people
    /// read it: `1 MiB`).
    LineTooLong = "line_too_long",
    /// The model server could not be reached. Params: `host` (`host:port`), `cause` (the
    /// system's words).
    Unreachable = "unreachable",
    /// Connecting to the model server timed out. Params: `host`.
    ConnectTimeout = "connect_timeout",
    /// The request to the model server failed otherwise. Params: `host`, `detail`.
    RequestFailed = "request_failed",
    /// The model server reported an error inside its stream. Params: `detail` (its message),
    /// when it gave one.
    ModelError = "model_error",
    /// The model refused the prompt (Gemini's block reason). Params: `reason`.
    PromptRefused = "prompt_refused",
    /// The history database failed mid-turn, so the answer is not being saved. No params.
    NotSaved = "not_saved",

    // ---- a request was refused (HTTP 4xx/5xx before any event) ----
    /// `PONDER_AUTH=none` and the request's `Host` is not this machine or the configured public
    /// address (a DNS-rebinding page, or a name to add to `PONDER_PUBLIC_URL`): `421`. Params:
    /// `host` (as sent).
    UnknownHost = "unknown_host",
    /// The request is not one the API takes (not the documented body, fields that do not go
    /// together, too many items); `message` says what. No params.
    BadRequest = "bad_request",
    /// The body was not sent as `Content-Type: application/json`. No params.
    UnsupportedMediaType = "unsupported_media_type",
    /// The request came from another site's page. Params: `origin`.
    CrossOrigin = "cross_origin",
    /// The body is over `PONDER_MAX_REQUEST_BYTES`. Params: `limit` (as people read it: `1 MiB`).
    TooLarge = "too_large",
    /// The body did not arrive within `PONDER_BODY_TIMEOUT`. Params: `seconds`.
    BodyTimeout = "body_timeout",
    /// The body could not be read. No params.
    BodyUnreadable = "body_unreadable",
    /// Too many turns from this address (`PONDER_RATE_LIMIT`). Params: `retry_after` (seconds).
    RateLimited = "rate_limited",
    /// The reader has reached a usage limit (`PONDER_QUOTA` or their own, set by an
    /// administrator): `429` before the turn starts. Params: `limit` (tokens, or an amount and
    /// its currency), `period` (`day` or `month`), `resets_at` (RFC 3339, UTC), `resets_at_ms`.
    QuotaExceeded = "quota_exceeded",
    /// The conversation sent has too many messages. Params: `count`, `limit`.
    TooManyMessages = "too_many_messages",
    /// The conversation sent is too long. Params: `bytes`, `limit` (bytes).
    ConversationTooLong = "conversation_too_long",
    /// The message is too long. Params: `bytes`, `limit` (bytes).
    MessageTooLong = "message_too_long",
    /// The message to answer is empty. No params.
    EmptyMessage = "empty_message",
    /// The model asked for is not offered here. Params: `model`.
    UnknownModel = "unknown_model",
    /// This server keeps no history (`PONDER_HISTORY=browser`): a stored turn cannot be
    /// started. No params.
    NoServerHistory = "no_server_history",
    /// Nobody is signed in. No params.
    SignInRequired = "sign_in_required",
    /// The session has ended: sign in again. No params.
    SessionEnded = "session_ended",
    /// The API token is not valid. No params.
    InvalidToken = "invalid_token",
    /// This server signs users in through its proxy, and the request did not come through it.
    /// No params.
    ProxyRequired = "proxy_required",
    /// The proxy did not say who the user is. No params.
    ProxyNoUser = "proxy_no_user",
    /// The proxy's header names no user Ponder can take (not UTF-8, a control character, too
    /// long). Params: `header` (its name).
    ProxyBadUser = "proxy_bad_user",
    /// The name and password do not match. No params.
    WrongCredentials = "wrong_credentials",
    /// A single sign-on that was not started in this browser, was tampered with or took too
    /// long. No params.
    SignInExpired = "sign_in_expired",
    /// The identity provider signed in someone outside the allowed groups. Params: `provider`.
    SignInNotAllowed = "sign_in_not_allowed",
    /// The identity provider refused the sign-in. Params: `provider`, `detail`.
    SignInDenied = "sign_in_denied",
    /// The identity provider's answer did not verify. Params: `detail`.
    SignInUnverified = "sign_in_unverified",
    /// The identity provider could not be reached. Params: `provider`, `detail`.
    ProviderUnreachable = "provider_unreachable",
    /// Too many sign-in attempts. Params: `retry_after` (seconds).
    TooManyAttempts = "too_many_attempts",
    /// The password is too short. Params: `min` (characters).
    PasswordTooShort = "password_too_short",
    /// Only an admin may do this. No params.
    AdminOnly = "admin_only",
    /// Ponder is already set up: sign in. No params.
    AlreadySetUp = "already_set_up",
    /// This server does not use accounts (or passwords). No params.
    NoAccounts = "no_accounts",
    /// An admin cannot remove themselves. No params.
    CannotRemoveSelf = "cannot_remove_self",
    /// Sharing by link is off on this server (`PONDER_SHARING=off`, or the history is kept in
    /// the browser). No params.
    SharingOff = "sharing_off",
    /// A request signed with a personal API token asked for what only a password session may
    /// do (make tokens, sign out everywhere). No params.
    PasswordRequired = "password_required",
    /// What was asked for does not exist or is not the caller's. No params.
    NotFound = "not_found",
    /// No turn of the caller's is running under that id. No params.
    TurnNotFound = "turn_not_found",
    /// The change conflicts with what is stored (a name taken, an edit of an answer, an empty
    /// title…); `message` says what. No params.
    Conflict = "conflict",
    /// The history database is unavailable. No params.
    DatabaseUnavailable = "database_unavailable",
    /// An attached file is over `PONDER_MAX_ATTACHMENT_BYTES`: `413`. Params: `name` (the
    /// file's), `limit` (as people read it: `20 MiB`).
    AttachmentTooLarge = "attachment_too_large",
    /// An attached file has no bytes. Params: `name`.
    AttachmentEmpty = "attachment_empty",
    /// An attached file is none of the kinds Ponder sends (images, PDFs, text files): `415`.
    /// Params: `name`.
    AttachmentUnsupported = "attachment_unsupported",
    /// An attached file's contents are not what its name says (an HTML page named `.png`, a
    /// text file not in UTF-8): `415`. Params: `name`.
    AttachmentMisnamed = "attachment_misnamed",
    /// An attached file is a HEIC/HEIF (or AVIF) photo, which models do not read: `415`.
    /// Params: `name`.
    AttachmentHeic = "attachment_heic",
    /// The user's files would take more than `PONDER_MAX_USER_ATTACHMENT_BYTES`: `413`.
    /// Params: `name` (the file refused), `limit`.
    AttachmentQuota = "attachment_quota",
    /// The model asked for cannot read this attached file (an image to a model that does not
    /// see, a PDF to one that reads no documents), said before the turn starts. Params: `name`,
    /// `model`.
    AttachmentNotTaken = "attachment_not_taken",
    /// The files attached to one message are over `PONDER_MAX_MESSAGE_ATTACHMENT_BYTES`
    /// together: `413`. Params: `limit`.
    AttachmentsTooLarge = "attachments_too_large",
    /// An attached image's header cannot be read (cut short, or broken). Params: `name`.
    AttachmentDamaged = "attachment_damaged",
    /// An attached PDF or large image could not be read within Ponder's bounds (damaged, a
    /// decompression bomb, a page tree that does not end, too slow). Params: `name`.
    AttachmentUnreadable = "attachment_unreadable",
    /// An attached image is larger on a side than Ponder decodes. Params: `name`, `width`,
    /// `height`, `limit` (pixels).
    ImageTooLarge = "image_too_large",
    /// The server has no room for this work now (its converters are all busy): try again in a
    /// moment. No params.
    ServerBusy = "server_busy",

    // ---- the page's (or the terminal's) own endings of a turn ----
    /// The stream ended, after some frames, with neither `done` nor `error`. No params.
    StreamDropped = "stream_dropped",
    /// The connection closed before the model sent anything. No params.
    ClosedBeforeStart = "closed_before_start",
    /// Nothing arrived within `PONDER_PRE_TOKEN_GUARD`. Params: `seconds`.
    FirstFrameTimeout = "first_frame_timeout",
    /// A turn still streaming when the page went away (a reload, a closed tab, a stopped
    /// server). No params.
    Interrupted = "interrupted",
    /// The model thought but wrote no answer. No params.
    NoAnswerAfterThinking = "no_answer_after_thinking",
    /// The model asked the app to run a tool, which Ponder does not do, and wrote no answer.
    /// No params.
    ToolCallsUnsupported = "tool_calls_unsupported",
    /// The model sent neither thinking nor answer. No params.
    EmptyAnswer = "empty_answer",
    /// The page (or the terminal) could not reach Ponder itself. No params.
    PonderUnreachable = "ponder_unreachable",

    /// Anything without a more specific code, and any code this build does not know (from a
    /// newer server); `message` says what. No params.
    #[default]
    Other = "other",
}
}

impl ErrorCode {
    /// True for [`ErrorCode::Other`], which is left out of stored documents.
    pub fn is_other(&self) -> bool {
        *self == ErrorCode::Other
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl utoipa::PartialSchema for ErrorCode {
    /// The codes this server sends; a client reads a code it does not know as `other`.
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.name()).collect();
        crate::domain::wire::names_schema(&names)
    }
}

impl utoipa::ToSchema for ErrorCode {}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = ErrorCode;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an error code")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<ErrorCode, E> {
                Ok(ErrorCode::from_name(name))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One event of a turn. Every turn ends with exactly one [`TurnEvent::Done`] or
/// [`TurnEvent::Error`], and nothing follows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
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
        /// How each file of the reader's message went to the model, in the order attached.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        sent_as: Vec<crate::domain::file_ref::SendAs>,
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
        matches!(
            self,
            TurnEvent::Done {
                finish_reason: FinishReason::Stopped,
                ..
            }
        )
    }

    /// A convenience constructor for the error event.
    pub fn error(message: impl Into<String>, retryable: bool) -> Self {
        TurnEvent::Error(Failure::new(message, retryable))
    }
}

impl ErrorCode {
    /// The HTTP status a request refused with this code answers (a turn's own failures travel
    /// inside its stream and have none). The one place a refusal's status is decided.
    pub fn http_status(self) -> Option<u16> {
        use ErrorCode::*;
        Some(match self {
            BadRequest | EmptyMessage | TooManyMessages | ConversationTooLong | MessageTooLong
            | UnknownModel | NoServerHistory | BodyUnreadable | PasswordTooShort | ProxyBadUser
            | AttachmentEmpty | AttachmentDamaged | AttachmentUnreadable | ImageTooLarge
            | AttachmentNotTaken | SignInExpired => 400,
            SignInRequired | SessionEnded | InvalidToken | ProxyRequired | ProxyNoUser
            | WrongCredentials => 401,
            CrossOrigin | AdminOnly | AlreadySetUp | NoAccounts | CannotRemoveSelf
            | PasswordRequired | SharingOff | SignInNotAllowed | SignInDenied => 403,
            NotFound | TurnNotFound => 404,
            BodyTimeout => 408,
            Conflict => 409,
            TooLarge | AttachmentTooLarge | AttachmentQuota | AttachmentsTooLarge => 413,
            UnsupportedMediaType | AttachmentUnsupported | AttachmentMisnamed | AttachmentHeic => {
                415
            }
            UnknownHost => 421,
            RateLimited | TooManyAttempts | QuotaExceeded => 429,
            SignInUnverified => 502,
            DatabaseUnavailable | ServerBusy | ProviderUnreachable => 503,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_code_has_one_status_and_a_turns_failures_none() {
        assert_eq!(ErrorCode::BadRequest.http_status(), Some(400));
        assert_eq!(ErrorCode::SignInRequired.http_status(), Some(401));
        assert_eq!(ErrorCode::PasswordRequired.http_status(), Some(403));
        assert_eq!(ErrorCode::TurnNotFound.http_status(), Some(404));
        assert_eq!(ErrorCode::UnknownHost.http_status(), Some(421));
        assert_eq!(ErrorCode::TooManyAttempts.http_status(), Some(429));
        assert_eq!(ErrorCode::ServerBusy.http_status(), Some(503));
        for code in [
            ErrorCode::Silent,
            ErrorCode::UpstreamStatus,
            ErrorCode::ReplayRefused,
            ErrorCode::StreamDropped,
            ErrorCode::Other,
        ] {
            assert_eq!(code.http_status(), None, "{code:?} travels in a stream");
        }
    }
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
                    file_tokens: None,
                    ..Default::default()
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
                sent_as: Vec::new(),
            },
            json!({"type":"turn","conversation":"c1","user_message":"m1","message":"m2","version":0}),
        );
        round_trip(
            TurnEvent::Started { turn: "t1".into() },
            json!({"type":"started","turn":"t1"}),
        );
        round_trip(
            TurnEvent::error("boom", true),
            json!({"type":"error","message":"boom","retryable":true,"code":"other"}),
        );
    }

    #[test]
    fn a_coded_failure_carries_its_code_and_params() {
        round_trip(
            TurnEvent::Error(
                Failure::coded(
                    ErrorCode::RateLimited,
                    "too many turns from this address: try again in 3 s",
                    true,
                )
                .with("retry_after", 3),
            ),
            json!({
                "type":"error",
                "message":"too many turns from this address: try again in 3 s",
                "retryable":true,
                "code":"rate_limited",
                "params":{"retry_after":"3"}
            }),
        );
        let failure = Failure::coded(ErrorCode::NoAnswerAfterThinking, "x", true);
        assert_eq!(
            serde_json::to_value(&failure).unwrap()["code"],
            "no_answer_after_thinking"
        );
        assert_eq!(failure.param("missing"), "");
    }

    #[test]
    fn every_code_has_its_snake_case_name_and_reads_back() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in ErrorCode::ALL {
            let mut snake = String::new();
            for (i, c) in format!("{code:?}").chars().enumerate() {
                if c.is_ascii_uppercase() && i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert_eq!(code.name(), snake);
            assert!(seen.insert(code.name()), "{} twice", code.name());
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::String(snake));
            assert_eq!(serde_json::from_value::<ErrorCode>(json).unwrap(), code);
        }
        assert!(ErrorCode::ALL.len() > 50);
        assert!(serde_json::from_value::<ErrorCode>(json!(3)).is_err());
        assert!(serde_json::from_value::<ErrorCode>(json!(null)).is_err());
    }

    #[test]
    fn an_unknown_or_missing_code_reads_as_other() {
        // A newer server's code this build does not know: the English message is shown.
        let newer: TurnEvent = serde_json::from_value(json!({
            "type":"error","message":"Something new broke.","retryable":false,
            "code":"something_new","params":{"what":"x"}
        }))
        .unwrap();
        let TurnEvent::Error(failure) = newer else {
            panic!("{newer:?}");
        };
        assert_eq!(failure.code, ErrorCode::Other);
        assert_eq!(failure.message, "Something new broke.");
        assert_eq!(failure.param("what"), "x");
        // An older server's error, without code or params.
        let older: TurnEvent =
            serde_json::from_value(json!({"type":"error","message":"m","retryable":true})).unwrap();
        assert_eq!(older, TurnEvent::error("m", true));
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
