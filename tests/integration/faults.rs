//! Upstream faults over real HTTP: each faulty turn ends with exactly one clear terminal event,
//! the upstream is let go, and a healthy turn running at the same time on the same server
//! completes normally. Timeouts are shortened by configuration, never by sleeping.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::time::Duration;

use common::raw_http::read_request;
use common::*;
use ponder::domain::{ErrorCode, Failure, TurnEvent};
use ponder::server::demo_upstream::{script, Step, ANSWER, THINKING};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

const HEALTHY: &str = "a healthy turn beside the fault";

fn chat_body(prompt: &str) -> String {
    serde_json::json!({"messages": [{"role": "user", "content": prompt}]}).to_string()
}

/// Starts the faulty turn, and once its response has begun runs a healthy turn to completion
/// while the fault plays out. Returns the faulty turn's events and the healthy one's.
async fn beside_a_healthy_turn(app: &TestApp, fault: &str) -> (Vec<TurnEvent>, Vec<TurnEvent>) {
    let response = app.post_chat(chat_body(fault)).await;
    assert_eq!(response.status(), 200);
    let (faulty, healthy) = tokio::join!(read_events(response), app.turn(HEALTHY));
    let faulty = after_start(faulty);
    assert_one_terminal(&faulty);
    assert_one_terminal(&healthy);
    (faulty, healthy)
}

/// The demo model's healthy reply arrived whole and ended with `done`.
fn assert_demo_healthy(events: &[TurnEvent]) {
    assert_eq!(thinking_text(events), THINKING);
    assert_eq!(answer_text(events), ANSWER);
    assert!(
        matches!(events.last(), Some(TurnEvent::Done { finish_reason, .. }) if finish_reason == "stop"),
        "{events:#?}"
    );
}

fn error_of(events: &[TurnEvent]) -> (&str, bool) {
    let failure = failure_of(events);
    (failure.message.as_str(), failure.retryable)
}

fn failure_of(events: &[TurnEvent]) -> &Failure {
    match events.last() {
        Some(TurnEvent::Error(failure)) => failure,
        other => panic!("expected an error event last, got {other:?}"),
    }
}

async fn gauge(app: &TestApp, name: &str) -> f64 {
    let text = app
        .http
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("{name} missing from /metrics:\n{text}"))
}

/// Waits (bounded) until no turn streams in Ponder and, with the demo model, until the demo
/// saw every stream end: a stalled upstream that Ponder failed to let go would stay active.
async fn assert_everything_released(app: &TestApp) {
    let mut last = (f64::NAN, serde_json::Value::Null);
    for _ in 0..100 {
        let active = gauge(app, "ponder_active_streams").await;
        let demo = if app.state.config.uses_demo() {
            common::demo_stats(app).await
        } else {
            serde_json::json!({"active": 0})
        };
        if active == 0.0 && demo["active"] == 0 {
            return;
        }
        last = (active, demo);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "still held after 5 s: active_streams {}, demo {}",
        last.0, last.1
    );
}

#[tokio::test]
async fn a_stall_before_the_first_byte_is_a_first_byte_timeout() {
    let app = TestApp::spawn(&[("PONDER_FIRST_BYTE_TIMEOUT", "2")]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[stall]").await;
    assert_demo_healthy(&healthy);
    assert_eq!(faulty.len(), 1, "{faulty:#?}");
    let (message, retryable) = error_of(&faulty);
    assert!(
        message.contains("did not start answering within 2 s"),
        "{message}"
    );
    assert!(retryable);
    let failure = failure_of(&faulty);
    assert_eq!(failure.code, ErrorCode::NoStart);
    assert_eq!(failure.param("seconds"), "2");
    assert_everything_released(&app).await;
}

#[tokio::test]
async fn a_stall_in_the_middle_is_an_idle_timeout() {
    let app = TestApp::spawn(&[("PONDER_IDLE_TIMEOUT", "2")]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[stall-mid]").await;
    assert_demo_healthy(&healthy);
    assert_eq!(thinking_text(&faulty), "Let me think about");
    let (message, retryable) = error_of(&faulty);
    assert!(message.contains("went silent for 2 s"), "{message}");
    assert!(retryable);
    let failure = failure_of(&faulty);
    assert_eq!(failure.code, ErrorCode::Silent);
    assert_eq!(failure.param("seconds"), "2");
    assert_everything_released(&app).await;
}

#[tokio::test]
async fn garbage_lines_are_skipped_and_the_turn_completes() {
    let app = TestApp::spawn(&[]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[garbage]").await;
    assert_demo_healthy(&healthy);
    assert_demo_healthy(&faulty);
    assert_everything_released(&app).await;
}

#[tokio::test]
async fn invalid_utf8_becomes_replacement_characters_and_the_turn_completes() {
    let app = TestApp::spawn(&[]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[bad-utf8]").await;
    assert_demo_healthy(&healthy);
    assert_eq!(
        answer_text(&faulty),
        "Before the bad bytes. bad \u{FFFD}\u{FFFD} bytes After."
    );
    assert!(matches!(faulty.last(), Some(TurnEvent::Done { .. })));
    assert_everything_released(&app).await;
}

#[tokio::test]
async fn a_429_is_one_retryable_error_carrying_retry_after() {
    let app = TestApp::spawn(&[]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[429]").await;
    assert_demo_healthy(&healthy);
    assert_eq!(faulty.len(), 1, "{faulty:#?}");
    let (message, retryable) = error_of(&faulty);
    assert!(message.contains("429"), "{message}");
    assert!(message.contains("Try again in 7 s."), "{message}");
    assert!(message.contains("rate limit"), "{message}");
    assert!(retryable);
    let failure = failure_of(&faulty);
    assert_eq!(failure.code, ErrorCode::UpstreamStatus);
    assert_eq!(failure.param("status"), "429");
    assert_eq!(failure.param("retry_after"), "7");
    assert!(
        failure.param("detail").contains("rate limit"),
        "{failure:?}"
    );
    assert_everything_released(&app).await;
}

#[tokio::test]
async fn a_5xx_is_one_retryable_error_with_the_upstream_message() {
    let app = TestApp::spawn(&[]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[500]").await;
    assert_demo_healthy(&healthy);
    assert_eq!(faulty.len(), 1, "{faulty:#?}");
    let (message, retryable) = error_of(&faulty);
    assert!(message.contains("500"), "{message}");
    assert!(message.contains("bad day"), "{message}");
    assert!(retryable);
    assert_everything_released(&app).await;
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_keeps_what_arrived_and_ends_in_one_error() {
    let app = TestApp::spawn(&[]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[drop]").await;
    assert_demo_healthy(&healthy);
    assert_eq!(thinking_text(&faulty), THINKING);
    // The demo's HTTP server discards its last unflushed chunk when it cuts the connection, so
    // what arrived is a prefix of what it meant to send.
    let answer = answer_text(&faulty);
    assert!(answer.starts_with("Here is the beginning"), "{answer}");
    assert!(
        "Here is the beginning of the answer, and then".starts_with(&answer),
        "{answer}"
    );
    let (_, retryable) = error_of(&faulty);
    assert!(retryable);
    assert_everything_released(&app).await;
}

#[tokio::test]
async fn a_ten_megabyte_answer_arrives_whole() {
    // Above the default cap on a turn's characters (64 a token of PONDER_MAX_OUTPUT_TOKENS).
    let app = TestApp::spawn(&[("PONDER_MAX_TURN_CHARS", "20000000")]).await;
    let expected: String = script("[big]")
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Answer(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(expected.len() >= 10 * 1024 * 1024);
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[big]").await;
    assert_demo_healthy(&healthy);
    let answer = answer_text(&faulty);
    assert_eq!(answer.len(), expected.len());
    assert!(
        answer == expected,
        "the 10 MB answer differs from the script"
    );
    assert!(matches!(faulty.last(), Some(TurnEvent::Done { .. })));
    assert_everything_released(&app).await;
}

// A TCP reset cannot be scripted through the demo model's HTTP server, so this upstream speaks
// just enough HTTP/1.1 by hand: it serves a healthy reply, or for `[reset]` a few chunks
// followed by an RST (zero linger), like a crashed or killed model server.

const RESET_THINKING: [&str; 3] = ["Checking", " the", " facts."];
const RESET_ANSWER: [&str; 2] = ["All", " good."];

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> Vec<u8> {
    let data =
        serde_json::json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let frame = format!("data: {data}\n\n");
    format!("{:x}\r\n{frame}\r\n", frame.len()).into_bytes()
}

async fn serve_one(mut socket: TcpStream) {
    while let Some(body) = read_request(&mut socket).await {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let reset = body.contains("[reset]");
        let mut out = Vec::new();
        for t in RESET_THINKING {
            out.push(chunk(serde_json::json!({"reasoning_content": t}), None));
        }
        for (i, t) in RESET_ANSWER.iter().enumerate() {
            if reset && i == 1 {
                break;
            }
            out.push(chunk(serde_json::json!({"content": t}), None));
        }
        for piece in out {
            if socket.write_all(&piece).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if reset {
            // A reset drops what the client has not read yet: give it a moment to read the
            // last piece first (the test checks that what arrived stays).
            tokio::time::sleep(Duration::from_millis(100)).await;
            let _ = socket.set_zero_linger();
            return;
        }
        let mut tail = chunk(serde_json::json!({}), Some("stop"));
        tail.extend_from_slice(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n");
        if socket.write_all(&tail).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn a_connection_reset_mid_stream_ends_in_one_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(serve_one(socket));
        }
    });
    let app = TestApp::spawn(&[("PONDER_UPSTREAM_URL", &url)]).await;
    let (faulty, healthy) = beside_a_healthy_turn(&app, "[reset]").await;
    assert_eq!(thinking_text(&healthy), RESET_THINKING.concat());
    assert_eq!(answer_text(&healthy), RESET_ANSWER.concat());
    assert!(matches!(healthy.last(), Some(TurnEvent::Done { .. })));
    assert_eq!(thinking_text(&faulty), RESET_THINKING.concat());
    let arrived = answer_text(&faulty);
    assert!(
        RESET_ANSWER[0].starts_with(arrived.as_str()) && !arrived.is_empty(),
        "what arrived before the reset stays, and nothing after it: {arrived:?}"
    );
    let (message, retryable) = error_of(&faulty);
    assert!(message.contains("connection"), "{message}");
    assert!(retryable);
    assert_everything_released(&app).await;
}
