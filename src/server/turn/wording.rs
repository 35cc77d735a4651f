//! What the reader is told when the upstream fails: every failure a turn can end with, in one
//! place, each with its stable code, its parameters and its English message. Messages name the
//! upstream by host and port, never with credentials or paths.

use crate::domain::{ErrorCode, Failure};
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
    Failure::coded(
        ErrorCode::NoAnswer,
        format!("The model server did not answer within {secs} s."),
        true,
    )
    .with("seconds", secs)
}

/// Headers, but no first byte of the stream, within the first-byte timeout.
pub fn no_start_within(secs: f64) -> Failure {
    Failure::coded(
        ErrorCode::NoStart,
        format!("The model server did not start answering within {secs} s."),
        true,
    )
    .with("seconds", secs)
}

/// Silence in the middle of the stream.
pub fn silent_for(secs: f64) -> Failure {
    Failure::coded(
        ErrorCode::Silent,
        format!("The model server went silent for {secs} s in the middle of the answer."),
        true,
    )
    .with("seconds", secs)
}

/// The grace period after SIGTERM ended the turn, before (`started` false) or during its stream.
pub fn shutting_down(started: bool) -> Failure {
    if started {
        Failure::coded(
            ErrorCode::ShuttingDownMidAnswer,
            "Ponder is shutting down; this answer was cut short.",
            true,
        )
    } else {
        Failure::coded(
            ErrorCode::ShuttingDown,
            "Ponder is shutting down; try again in a moment.",
            true,
        )
    }
}

/// A 3xx answer; `to` is the target's origin.
pub fn redirected(status: http::StatusCode, to: &str) -> Failure {
    Failure::coded(
        ErrorCode::Redirected,
        format!(
            "The model server answered {status}, a redirect to {to}. Ponder follows no redirects, so the key and the conversation only ever go to PONDER_UPSTREAM_URL: set it to the address the server redirects to."
        ),
        false,
    )
    .with("status", status.as_u16())
    .with("origin", to)
}

/// An error status, with what the body said and the `Retry-After` it gave. Retryable for 408,
/// 429 and 5xx.
pub fn http_status(status: http::StatusCode, detail: &str, retry_after: Option<&str>) -> Failure {
    let mut message = format!("The model server answered {status}");
    if !detail.is_empty() {
        message.push_str(": ");
        message.push_str(detail);
    }
    if let Some(after) = retry_after {
        message.push_str(&format!(" (retry after {after} s)"));
    }
    let retryable = matches!(status.as_u16(), 408 | 429) || status.is_server_error();
    let mut failure = Failure::coded(ErrorCode::UpstreamStatus, message, retryable)
        .with("status", status.as_u16());
    if !detail.is_empty() {
        failure = failure.with("detail", detail);
    }
    if let Some(after) = retry_after {
        failure = failure.with("retry_after", after);
    }
    failure
}

/// The upstream refused a request that carried reasoning settings: the reader is told which,
/// so the turn can be sent again without them.
pub fn setting_refused(status: http::StatusCode, settings: &str, detail: &str) -> Failure {
    let mut message = format!(
        "{} sent with this turn ({settings}); it answered {status}",
        crate::domain::reasoning::SETTING_REFUSED
    );
    if !detail.is_empty() {
        message.push_str(": ");
        message.push_str(detail);
    }
    message.push_str(". Send it again without the setting.");
    let mut failure = Failure::coded(ErrorCode::SettingRefused, message, false)
        .with("status", status.as_u16())
        .with("settings", settings);
    if !detail.is_empty() {
        failure = failure.with("detail", detail);
    }
    failure
}

/// The upstream refused the reasoning state carried back with earlier answers (a signature it
/// no longer accepts, encrypted content it cannot read). Sending again without it works.
pub fn replay_refused(status: http::StatusCode, detail: &str) -> Failure {
    let mut message = format!(
        "The model server refused the reasoning carried over from earlier answers; it answered {status}"
    );
    if !detail.is_empty() {
        message.push_str(": ");
        message.push_str(detail);
    }
    message.push_str(". Send it again without the earlier reasoning.");
    let mut failure =
        Failure::coded(ErrorCode::ReplayRefused, message, false).with("status", status.as_u16());
    if !detail.is_empty() {
        failure = failure.with("detail", detail);
    }
    failure
}

/// The connection broke mid-stream. The transport's own words ("error decoding response
/// body") go to the log, not to the reader.
pub fn connection_broke() -> Failure {
    Failure::coded(
        ErrorCode::ConnectionBroke,
        "The connection to the model server broke before the answer finished — try again?",
        true,
    )
}

/// A turn whose server lost its place among the replicas (its heartbeat was late and the others
/// ended its turns), as its own viewers are told.
pub fn replica_abandoned() -> Failure {
    Failure::coded(
        ErrorCode::ReplicaLost,
        "This server lost contact with the others and stopped this answer — try again?",
        true,
    )
}

/// A turn whose server stopped (killed, crashed, cut off) before it finished, as its viewers on
/// the other replicas are told.
pub fn replica_died() -> Failure {
    Failure::coded(
        ErrorCode::ReplicaDied,
        "The server running this answer stopped before it finished — try again?",
        true,
    )
}

/// The body ended without the provider's end marker.
pub fn stream_cut() -> Failure {
    Failure::coded(
        ErrorCode::StreamCut,
        "The model's stream was cut off before it finished.",
        true,
    )
}

/// A line over the line cap.
pub fn line_too_long(limit: usize) -> Failure {
    let limit = human_bytes(limit);
    Failure::coded(
        ErrorCode::LineTooLong,
        format!("The model server sent a line over {limit}; Ponder stopped reading its stream."),
        false,
    )
    .with("limit", limit)
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
            Failure::coded(
                ErrorCode::Unreachable,
                format!("Could not reach the model server at {host}: {cause}"),
                true,
            )
            .with("host", host)
            .with("cause", cause),
        )
    } else if e.is_timeout() {
        (
            UpstreamFailure::ConnectTimeout,
            Failure::coded(
                ErrorCode::ConnectTimeout,
                format!("Connecting to the model server at {host} timed out."),
                true,
            )
            .with("host", host),
        )
    } else {
        let detail = e.to_string().replace(raw_base, host).replace(base, host);
        (
            UpstreamFailure::Request,
            Failure::coded(
                ErrorCode::RequestFailed,
                format!("The request to the model server at {host} failed: {detail}"),
                true,
            )
            .with("host", host)
            .with("detail", detail),
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
            "The model server answered 503 Service Unavailable: overloaded (retry after 30 s)"
        );
        assert!(failure.retryable);
        assert_eq!(failure.code, ErrorCode::UpstreamStatus);
        assert_eq!(failure.param("status"), "503");
        assert_eq!(failure.param("detail"), "overloaded");
        assert_eq!(failure.param("retry_after"), "30");
        let bare = http_status(StatusCode::NOT_FOUND, "", None);
        assert_eq!(bare.message, "The model server answered 404 Not Found");
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
        assert!(refused.message.ends_with(
            "(effort); it answered 400 Bad Request: unknown field. Send it again without the setting."
        ));
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
