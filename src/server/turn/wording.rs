//! What the reader is told when the upstream fails: every failure a turn can end with, in one
//! place, each with its stable code and its parameters. The sentence is the English
//! catalogue's (`i18n::errors::Said`), so the page, the terminal and the API read the same
//! words. Messages name the upstream by host and port, never with credentials or paths.

use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;
use crate::server::config::without_userinfo;
use crate::server::outcome::UpstreamFailure;

/// A byte count as people read it: `1 MiB`, `512 KiB`, `900 bytes`.
pub fn human_bytes(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// No response headers within the first-byte timeout.
pub fn no_answer_within(secs: f64) -> Failure {
    Failure::of(ErrorCode::NoAnswer, true)
        .with("seconds", secs)
        .said()
}

/// Headers, but no first byte of the stream, within the first-byte timeout.
pub fn no_start_within(secs: f64) -> Failure {
    Failure::of(ErrorCode::NoStart, true)
        .with("seconds", secs)
        .said()
}

/// Silence in the middle of the stream.
pub fn silent_for(secs: f64) -> Failure {
    Failure::of(ErrorCode::Silent, true)
        .with("seconds", secs)
        .said()
}

/// The grace period after SIGTERM ended the turn, before (`started` false) or during its stream.
pub fn shutting_down(started: bool) -> Failure {
    let code = if started {
        ErrorCode::ShuttingDownMidAnswer
    } else {
        ErrorCode::ShuttingDown
    };
    Failure::of(code, true).said()
}

/// A 3xx answer; `to` is the target's origin.
pub fn redirected(status: http::StatusCode, to: &str) -> Failure {
    Failure::of(ErrorCode::Redirected, false)
        .with("status", status.as_u16())
        .with("origin", to)
        .said()
}

/// An error status, with what the body said and the `Retry-After` it gave (each only when
/// given). Retryable for 408, 429 and 5xx.
pub fn http_status(status: http::StatusCode, detail: &str, retry_after: Option<&str>) -> Failure {
    let retryable = matches!(status.as_u16(), 408 | 429) || status.is_server_error();
    with_detail(
        Failure::of(ErrorCode::UpstreamStatus, retryable).with("status", status.as_u16()),
        detail,
    )
    .with_some("retry_after", retry_after)
    .said()
}

/// The upstream refused a request that carried reasoning settings: the reader is told which,
/// so the turn can be sent again without them.
pub fn setting_refused(status: http::StatusCode, settings: &str, detail: &str) -> Failure {
    with_detail(
        Failure::of(ErrorCode::SettingRefused, false)
            .with("status", status.as_u16())
            .with("settings", settings),
        detail,
    )
    .said()
}

/// The upstream refused the reasoning state carried back with earlier answers (a signature it
/// no longer accepts, encrypted content it cannot read). Sending again without it works.
pub fn replay_refused(status: http::StatusCode, detail: &str) -> Failure {
    with_detail(
        Failure::of(ErrorCode::ReplayRefused, false).with("status", status.as_u16()),
        detail,
    )
    .said()
}

/// The connection broke mid-stream. The transport's own words ("error decoding response
/// body") go to the log, not to the reader.
pub fn connection_broke() -> Failure {
    Failure::of(ErrorCode::ConnectionBroke, true).said()
}

/// A turn whose server lost its place among the replicas (its heartbeat was late and the others
/// ended its turns), as its own viewers are told.
pub fn replica_abandoned() -> Failure {
    Failure::of(ErrorCode::ReplicaLost, true).said()
}

/// A turn whose server stopped (killed, crashed, cut off) before it finished, as its viewers on
/// the other replicas are told.
pub fn replica_died() -> Failure {
    Failure::of(ErrorCode::ReplicaDied, true).said()
}

/// The body ended without the provider's end marker.
pub fn stream_cut() -> Failure {
    Failure::of(ErrorCode::StreamCut, true).said()
}

/// A line over the line cap.
pub fn line_too_long(limit: usize) -> Failure {
    Failure::of(ErrorCode::LineTooLong, false)
        .with("limit", human_bytes(limit))
        .said()
}

/// `detail` as the failure's parameter when there is one.
fn with_detail(failure: Failure, detail: &str) -> Failure {
    failure.with_some("detail", Some(detail).filter(|d| !d.is_empty()))
}

/// `scheme://host[:port]` of a URL, for messages that must not repeat its path or query.
pub fn origin_of(url: &str) -> String {
    let url = without_userinfo(url);
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            format!("{scheme}://{host}")
        }
        None => "another address".into(),
    }
}

/// A request to the upstream that failed before its response: what kind of failure it was (for
/// the metrics) and the reader's failure, naming the upstream by host and port.
pub fn describe_request_error(e: &reqwest::Error, raw_base: &str) -> (UpstreamFailure, Failure) {
    let base = &without_userinfo(raw_base);
    let host = base
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or(base);
    if e.is_connect() {
        let mut cause = String::new();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            cause = s.to_string();
            source = s.source();
        }
        (
            UpstreamFailure::Connect,
            Failure::of(ErrorCode::Unreachable, true)
                .with("host", host)
                .with("cause", cause)
                .said(),
        )
    } else if e.is_timeout() {
        (
            UpstreamFailure::ConnectTimeout,
            Failure::of(ErrorCode::ConnectTimeout, true)
                .with("host", host)
                .said(),
        )
    } else {
        let detail = e.to_string().replace(raw_base, host).replace(base, host);
        (
            UpstreamFailure::Request,
            Failure::of(ErrorCode::RequestFailed, true)
                .with("host", host)
                .with("detail", detail)
                .said(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn an_error_status_carries_its_number_detail_and_retry_after() {
        let failure = http_status(StatusCode::SERVICE_UNAVAILABLE, "overloaded", Some("30"));
        assert_eq!(
            failure.message,
            "The model server answered 503. (overloaded) Try again in 30 s."
        );
        assert!(failure.retryable);
        assert_eq!(failure.code, ErrorCode::UpstreamStatus);
        assert_eq!(failure.param("status"), "503");
        assert_eq!(failure.param("detail"), "overloaded");
        assert_eq!(failure.param("retry_after"), "30");
        let bare = http_status(StatusCode::NOT_FOUND, "", None);
        assert_eq!(bare.message, "The model server answered 404.");
        assert!(!bare.retryable);
        assert_eq!(
            bare.params.keys().collect::<Vec<_>>(),
            ["status"],
            "absent values are left out"
        );
        assert!(http_status(StatusCode::REQUEST_TIMEOUT, "", None).retryable);
        assert!(http_status(StatusCode::TOO_MANY_REQUESTS, "", None).retryable);
    }

    #[test]
    fn every_turn_failure_has_its_code_and_params() {
        let silent = silent_for(2.5);
        assert_eq!(
            silent.message,
            "The model server went silent for 2.5 s in the middle of the answer."
        );
        assert_eq!(
            (silent.code, silent.param("seconds")),
            (ErrorCode::Silent, "2.5")
        );
        let none = no_answer_within(120.0);
        assert_eq!(
            none.message,
            "The model server did not answer within 120 s."
        );
        assert_eq!(
            (none.code, none.param("seconds")),
            (ErrorCode::NoAnswer, "120")
        );
        assert_eq!(no_start_within(2.0).code, ErrorCode::NoStart);
        assert_eq!(shutting_down(false).code, ErrorCode::ShuttingDown);
        assert_eq!(shutting_down(true).code, ErrorCode::ShuttingDownMidAnswer);
        let redirect = redirected(StatusCode::FOUND, "https://other.example");
        assert!(!redirect.retryable);
        assert_eq!(redirect.code, ErrorCode::Redirected);
        assert_eq!(redirect.param("status"), "302");
        assert_eq!(redirect.param("origin"), "https://other.example");
        let refused = setting_refused(StatusCode::BAD_REQUEST, "effort", "unknown field");
        assert_eq!(
            refused.message,
            "The model server refused the settings sent with this turn (effort) with 400. Send it again without them. (unknown field)"
        );
        assert!(refused
            .message
            .starts_with(crate::domain::reasoning::SETTING_REFUSED));
        assert_eq!(refused.code, ErrorCode::SettingRefused);
        assert_eq!(refused.param("settings"), "effort");
        assert_eq!(refused.param("detail"), "unknown field");
        assert_eq!(refused.param("status"), "400");
        let long = line_too_long(1 << 20);
        assert_eq!(
            long.message,
            "The model server sent a line over 1 MiB; Ponder stopped reading its stream."
        );
        assert_eq!(
            (long.code, long.param("limit")),
            (ErrorCode::LineTooLong, "1 MiB")
        );
        assert!(!long.retryable);
        for (failure, code) in [
            (connection_broke(), ErrorCode::ConnectionBroke),
            (replica_abandoned(), ErrorCode::ReplicaLost),
            (replica_died(), ErrorCode::ReplicaDied),
            (stream_cut(), ErrorCode::StreamCut),
        ] {
            assert_eq!(failure.code, code);
            assert!(failure.retryable);
            assert!(failure.params.is_empty());
        }
    }
}
