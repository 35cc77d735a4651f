//! What the reader is told when the upstream fails: every message a turn can end with, in one
//! place. Messages name the upstream by host and port, never with credentials or paths.

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
pub fn no_answer_within(secs: f64) -> String {
    format!("The model server did not answer within {secs} s.")
}

/// Headers, but no first byte of the stream, within the first-byte timeout.
pub fn no_start_within(secs: f64) -> String {
    format!("The model server did not start answering within {secs} s.")
}

/// Silence in the middle of the stream.
pub fn silent_for(secs: f64) -> String {
    format!("The model server went silent for {secs} s in the middle of the answer.")
}

/// The grace period after SIGTERM ended the turn, before (`started` false) or during its stream.
pub fn shutting_down(started: bool) -> String {
    if started {
        "Ponder is shutting down; this answer was cut short.".into()
    } else {
        "Ponder is shutting down; try again in a moment.".into()
    }
}

/// A 3xx answer; `to` is the target's origin.
pub fn redirected(status: http::StatusCode, to: &str) -> String {
    format!(
        "The model server answered {status}, a redirect to {to}. Ponder follows no redirects, so the key and the conversation only ever go to PONDER_UPSTREAM_URL: set it to the address the server redirects to."
    )
}

/// An error status, with what the body said and the `Retry-After` it gave.
pub fn http_status(status: http::StatusCode, detail: &str, retry_after: Option<&str>) -> String {
    let mut message = format!("The model server answered {status}");
    if !detail.is_empty() {
        message.push_str(": ");
        message.push_str(detail);
    }
    if let Some(after) = retry_after {
        message.push_str(&format!(" (retry after {after} s)"));
    }
    message
}

/// The upstream refused a request that carried reasoning settings: the reader is told which,
/// so the turn can be sent again without them.
pub fn setting_refused(status: http::StatusCode, settings: &str, detail: &str) -> String {
    let mut message = format!(
        "{} sent with this turn ({settings}); it answered {status}",
        crate::domain::reasoning::SETTING_REFUSED
    );
    if !detail.is_empty() {
        message.push_str(": ");
        message.push_str(detail);
    }
    message.push_str(". Send it again without the setting.");
    message
}

/// The connection broke mid-stream. The transport's own words ("error decoding response
/// body") go to the log, not to the reader.
pub fn connection_broke() -> String {
    "The connection to the model server broke before the answer finished — try again?".into()
}

/// A turn whose server lost its place among the replicas (its heartbeat was late and the others
/// ended its turns), as its own viewers are told.
pub fn replica_abandoned() -> String {
    "This server lost contact with the others and stopped this answer — try again?".into()
}

/// A turn whose server stopped (killed, crashed, cut off) before it finished, as its viewers on
/// the other replicas are told.
pub fn replica_died() -> String {
    "The server running this answer stopped before it finished — try again?".into()
}

/// The body ended without the provider's end marker.
pub fn stream_cut() -> String {
    "The model's stream was cut off before it finished.".into()
}

/// A line over the line cap.
pub fn line_too_long(limit: usize) -> String {
    format!(
        "The model server sent a line over {}; Ponder stopped reading its stream.",
        human_bytes(limit)
    )
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

pub fn describe_request_error(e: &reqwest::Error, raw_base: &str) -> (UpstreamFailure, String) {
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
            format!("Could not reach the model server at {host}: {cause}"),
        )
    } else if e.is_timeout() {
        (
            UpstreamFailure::ConnectTimeout,
            format!("Connecting to the model server at {host} timed out."),
        )
    } else {
        (
            UpstreamFailure::Request,
            format!(
                "The request to the model server at {host} failed: {}",
                e.to_string().replace(raw_base, host).replace(base, host)
            ),
        )
    }
}
