//! How turns end and how upstreams fail: the names the log lines and the metrics use.

/// How a turn ended, for the log line and the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Error,
    ClientClosed,
    /// A reader pressed Stop, or nobody watched it under `PONDER_ORPHAN_TURNS=stop`.
    Stopped,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Error => "error",
            Outcome::ClientClosed => "client_closed",
            Outcome::Stopped => "stopped",
        }
    }
}

/// What went wrong with the upstream, as counted in `ponder_upstream_errors_total{kind}` and
/// named in the `upstream failure` log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpstreamFailure {
    /// The connection could not be made.
    Connect,
    /// Connecting took longer than `PONDER_CONNECT_TIMEOUT`.
    ConnectTimeout,
    /// The request failed for another reason before any response.
    Request,
    /// A 4xx answer.
    Http4xx,
    /// A 5xx answer.
    Http5xx,
    /// A 3xx answer: Ponder follows no redirects.
    Redirect,
    /// No response, or no first byte of the stream, within `PONDER_FIRST_BYTE_TIMEOUT`.
    FirstByteTimeout,
    /// Silence mid-stream longer than `PONDER_IDLE_TIMEOUT`.
    IdleTimeout,
    /// The connection broke mid-stream.
    ConnectionReset,
    /// The body ended without the provider's end marker.
    Truncated,
    /// The provider sent an error inside the stream.
    InStream,
    /// A line, frame or object over `PONDER_MAX_LINE_BYTES`.
    LineTooLong,
    /// More characters than `PONDER_MAX_TURN_CHARS` (the turn ends as `length`).
    TurnTooLong,
    /// The shutdown grace period ended the turn.
    Shutdown,
}

impl UpstreamFailure {
    /// Every kind, exported from the start so a rate over any of them exists before it happens.
    pub const ALL: [UpstreamFailure; 14] = [
        Self::Connect,
        Self::ConnectTimeout,
        Self::Request,
        Self::Http4xx,
        Self::Http5xx,
        Self::Redirect,
        Self::FirstByteTimeout,
        Self::IdleTimeout,
        Self::ConnectionReset,
        Self::Truncated,
        Self::InStream,
        Self::LineTooLong,
        Self::TurnTooLong,
        Self::Shutdown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::ConnectTimeout => "connect_timeout",
            Self::Request => "request",
            Self::Http4xx => "http_4xx",
            Self::Http5xx => "http_5xx",
            Self::Redirect => "redirect",
            Self::FirstByteTimeout => "first_byte_timeout",
            Self::IdleTimeout => "idle_timeout",
            Self::ConnectionReset => "connection_reset",
            Self::Truncated => "truncated",
            Self::InStream => "in_stream",
            Self::LineTooLong => "line_too_long",
            Self::TurnTooLong => "turn_too_long",
            Self::Shutdown => "shutdown",
        }
    }
}
