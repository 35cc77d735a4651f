//! `POST /api/chat` over real HTTP against the demo model: the turn contract end to end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::*;
use ponder::domain::{ErrorCode, Failure, ThinkingKind, TurnEvent};
use ponder::server::demo_upstream::{ANSWER, THINKING};

#[tokio::test]
async fn a_thinking_turn_streams_the_whole_contract_in_order() {
    let app = TestApp::spawn(&[]).await;
    let response = app
        .post_chat(r#"{"messages":[{"role":"user","content":"why is the sky blue?"}]}"#.into())
        .await;
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["cache-control"], "no-cache");
    assert_eq!(headers["x-accel-buffering"], "no");
    assert!(headers.get("content-encoding").is_none());
    let events = after_start(read_events(response).await);

    assert_eq!(
        events[0],
        TurnEvent::ThinkingStart {
            block: 0,
            kind: ThinkingKind::Raw,
            at_ms: None,
        }
    );
    let end = events
        .iter()
        .position(|e| matches!(e, TurnEvent::ThinkingEnd { .. }))
        .expect("thinking_end");
    let first_delta = events
        .iter()
        .position(|e| matches!(e, TurnEvent::Delta { .. }))
        .expect("delta");
    assert!(events[1..end]
        .iter()
        .all(|e| matches!(e, TurnEvent::Thinking { block: 0, .. })));
    assert!(end < first_delta);
    assert!(matches!(
        events[end],
        TurnEvent::ThinkingEnd {
            block: 0,
            duration_ms: Some(_),
            cut_short: false,
        }
    ));
    assert_eq!(thinking_text(&events), THINKING);
    assert_eq!(answer_text(&events), ANSWER);
    assert_one_terminal(&events);
    match events.last() {
        Some(TurnEvent::Done {
            finish_reason,
            usage,
            thinking_chars,
            ..
        }) => {
            assert_eq!(finish_reason, "stop");
            assert_eq!(*thinking_chars, THINKING.chars().count() as u64);
            let usage = usage.as_ref().expect("usage");
            assert!(usage.reasoning_tokens.unwrap_or(0) > 0);
            assert_eq!(usage.input_tokens, Some(12));
        }
        other => panic!("expected done, got {other:?}"),
    }
}

#[tokio::test]
async fn a_turn_without_reasoning_has_no_thinking_events() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[no-think] hello").await;
    assert!(!events.iter().any(|e| matches!(
        e,
        TurnEvent::ThinkingStart { .. } | TurnEvent::Thinking { .. }
    )));
    assert_eq!(answer_text(&events), ANSWER);
    assert_one_terminal(&events);
}

#[tokio::test]
async fn thinking_without_an_answer_ends_with_length() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[think-only]").await;
    assert_eq!(answer_text(&events), "");
    assert!(events
        .iter()
        .any(|e| matches!(e, TurnEvent::ThinkingEnd { .. })));
    assert!(
        matches!(events.last(), Some(TurnEvent::Done { finish_reason, .. }) if finish_reason == "length")
    );
}

#[tokio::test]
async fn two_blocks_get_two_indices() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[two-blocks]").await;
    let starts: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ThinkingStart { block, .. } => Some(*block),
            _ => None,
        })
        .collect();
    assert_eq!(starts, [0, 1]);
    assert_one_terminal(&events);
}

#[tokio::test]
async fn multi_byte_characters_split_across_upstream_chunks_arrive_whole() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[utf8-split]").await;
    assert_eq!(
        thinking_text(&events),
        "Thinking in UTF-8: ünïcødé, 日本語, emoji 🤔."
    );
    assert_eq!(answer_text(&events), "Café ☕ — 日本語 — 🎉 done.");
    assert!(!format!("{events:?}").contains('\u{FFFD}'));
}

#[tokio::test]
async fn an_upstream_500_is_one_retryable_error() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[500]").await;
    assert_eq!(events.len(), 1);
    match &events[0] {
        TurnEvent::Error(
            failure @ Failure {
                message, retryable, ..
            },
        ) => {
            assert!(message.contains("500"), "{message}");
            assert!(message.contains("bad day"), "{message}");
            assert!(retryable);
            assert_eq!(failure.code, ErrorCode::UpstreamStatus);
            assert_eq!(failure.param("status"), "500");
            assert!(failure.param("detail").contains("bad day"), "{failure:?}");
            assert!(!failure.params.contains_key("retry_after"), "{failure:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_429_is_retryable_and_says_when() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[429]").await;
    assert!(
        matches!(&events[..], [TurnEvent::Error(Failure { message, retryable: true, .. })] if message.contains("Try again in 7 s"))
    );
    let [TurnEvent::Error(failure)] = &events[..] else {
        panic!("{events:?}");
    };
    assert_eq!(failure.code, ErrorCode::UpstreamStatus);
    assert_eq!(failure.param("status"), "429");
    assert_eq!(failure.param("retry_after"), "7");
}

#[tokio::test]
async fn an_upstream_401_is_final_and_never_echoes_the_key() {
    let key = "sk-test-0123456789abcdef";
    let app = TestApp::spawn(&[("PONDER_API_KEY", key)]).await;
    let events = app.turn("[401]").await;
    match &events[..] {
        [TurnEvent::Error(
            failure @ Failure {
                message,
                retryable: false,
                ..
            },
        )] => {
            assert!(message.contains("401"), "{message}");
            assert!(!message.contains(key), "{message}");
            assert!(message.contains("[redacted]"), "{message}");
            assert_eq!(failure.param("status"), "401");
            assert!(!failure.param("detail").contains(key), "{failure:?}");
            assert!(
                failure.param("detail").contains("[redacted]"),
                "{failure:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_dropped_connection_keeps_what_arrived_and_ends_in_error() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[drop]").await;
    assert!(answer_text(&events).starts_with("Here is the beginning"));
    assert!(matches!(
        events.last(),
        Some(TurnEvent::Error(Failure {
            retryable: true,
            ..
        }))
    ));
    assert_one_terminal(&events);
}

#[tokio::test]
async fn an_error_payload_mid_stream_is_an_error_event() {
    let app = TestApp::spawn(&[]).await;
    let events = app.turn("[error]").await;
    assert_eq!(answer_text(&events), "Partial answer");
    assert!(
        matches!(events.last(), Some(TurnEvent::Error(Failure { message, .. })) if message.contains("overloaded"))
    );
    assert_one_terminal(&events);
}

#[tokio::test]
async fn the_kill_switch_sends_no_thinking_but_counts_it() {
    let app = TestApp::spawn(&[("PONDER_STREAM_THINKING", "false")]).await;
    let events = app.turn("hello").await;
    assert!(!events.iter().any(|e| matches!(
        e,
        TurnEvent::ThinkingStart { .. }
            | TurnEvent::Thinking { .. }
            | TurnEvent::ThinkingEnd { .. }
    )));
    assert_eq!(answer_text(&events), ANSWER);
    assert!(
        matches!(events.last(), Some(TurnEvent::Done { thinking_chars, .. }) if *thinking_chars > 0)
    );
}

#[tokio::test]
async fn malformed_requests_get_a_clear_400() {
    let app = TestApp::spawn(&[]).await;
    for body in [
        "not json",
        r#"{"messages":"nope"}"#,
        r#"{"messages":[{"role":"system","content":"x"}]}"#,
        r#"{"messages":[]}"#,
        r#"{"messages":[{"role":"assistant","content":"x"}]}"#,
    ] {
        let response = app.post_chat(body.into()).await;
        assert_eq!(response.status(), 400, "{body}");
        let error: serde_json::Value = response.json().await.expect("json error body");
        assert_eq!(error["type"], "error", "{body}");
        assert_eq!(error["retryable"], false, "{body}");
        assert_eq!(error["code"], "bad_request", "{body}");
        assert!(
            !error["message"].as_str().unwrap_or("").is_empty(),
            "{body}"
        );
    }
    let events = app.turn("still serving").await;
    assert_one_terminal(&events);
}

#[tokio::test]
async fn an_unreachable_upstream_is_one_clear_error() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("http://127.0.0.1:{port}/v1");
    let app = TestApp::spawn(&[("PONDER_UPSTREAM_URL", &url)]).await;
    let events = app.turn("hello").await;
    match &events[..] {
        [TurnEvent::Error(
            failure @ Failure {
                message,
                retryable: true,
                ..
            },
        )] => {
            assert!(message.contains("Could not reach"), "{message}");
            assert_eq!(failure.code, ErrorCode::Unreachable);
            assert_eq!(failure.param("host"), format!("127.0.0.1:{port}"));
            assert!(!failure.param("cause").is_empty(), "{failure:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_silent_upstream_hits_the_first_byte_timeout() {
    let app = TestApp::spawn(&[("PONDER_FIRST_BYTE_TIMEOUT", "0.3")]).await;
    let events = app.turn("[stall]").await;
    assert!(
        matches!(&events[..], [TurnEvent::Error(Failure { message, retryable: true, .. })] if message.contains("did not start"))
    );
    let [TurnEvent::Error(failure)] = &events[..] else {
        panic!("{events:?}");
    };
    assert_eq!(failure.code, ErrorCode::NoStart);
    assert_eq!(failure.param("seconds"), "0.3");
}

#[tokio::test]
async fn an_upstream_that_stalls_mid_stream_hits_the_idle_timeout() {
    let app = TestApp::spawn(&[("PONDER_IDLE_TIMEOUT", "0.3")]).await;
    let events = app.turn("[stall-mid]").await;
    assert_eq!(thinking_text(&events), "Let me think about");
    assert!(
        matches!(events.last(), Some(TurnEvent::Error(Failure { message, .. })) if message.contains("went silent"))
    );
    assert!(
        matches!(events.last(), Some(TurnEvent::Error(f)) if f.code == ErrorCode::Silent && f.param("seconds") == "0.3"),
        "{events:?}"
    );
    assert_one_terminal(&events);
}
