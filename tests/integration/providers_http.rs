//! Every provider adapter through the real HTTP path: Ponder with `PONDER_PROVIDER` set, its
//! built-in demo model answering in that provider's wire format on 127.0.0.1, the turn read
//! back from `POST /api/chat`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::*;
use ponder::domain::{ErrorCode, Failure, ThinkingKind, TurnEvent};
use ponder::server::config::ProviderKind;
use ponder::server::demo_upstream::{ANSWER, THINKING};
use ponder::server::providers::{parser_for, Piece};
use ThinkingKind::{Hidden, Raw, Redacted, Summary};

/// Each provider and the kind its reasoning shows as.
const PROVIDERS: [(&str, ThinkingKind); 6] = [
    ("openai", Raw),
    ("anthropic", Raw),
    ("responses", Summary),
    ("gemini", Summary),
    ("gemini-interactions", Summary),
    ("ollama", Raw),
];

async fn spawn(provider: &str, extra: &[(&str, &str)]) -> TestApp {
    let mut vars = vec![("PONDER_PROVIDER", provider)];
    vars.extend_from_slice(extra);
    TestApp::spawn(&vars).await
}

fn starts(events: &[TurnEvent]) -> Vec<ThinkingKind> {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ThinkingStart { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn every_provider_streams_a_thinking_turn_through_its_own_adapter() {
    for (provider, kind) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("why is the sky blue?").await;
        assert_eq!(
            events[0],
            TurnEvent::ThinkingStart {
                block: 0,
                kind,
                at_ms: None
            },
            "{provider}"
        );
        assert_eq!(starts(&events), [kind], "{provider}");
        let end = events.iter().position(|e| {
            matches!(
                e,
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(_),
                    cut_short: false,
                }
            )
        });
        let first_delta = events
            .iter()
            .position(|e| matches!(e, TurnEvent::Delta { .. }));
        assert!(end.is_some() && end < first_delta, "{provider}: {events:?}");
        assert_eq!(thinking_text(&events), THINKING, "{provider}");
        assert_eq!(answer_text(&events), ANSWER, "{provider}");
        assert_one_terminal(&events);
        match events.last() {
            Some(TurnEvent::Done {
                finish_reason,
                usage,
                thinking_chars,
                ..
            }) => {
                assert_eq!(finish_reason, "stop", "{provider}");
                assert_eq!(*thinking_chars, THINKING.chars().count() as u64);
                let usage = usage.as_ref().expect("usage");
                assert_eq!(usage.input_tokens, Some(12), "{provider}");
                assert!(usage.output_tokens.unwrap_or(0) > 0, "{provider}");
                // Ollama reports no reasoning count of its own: it is estimated from what
                // streamed, and the usage says so.
                assert!(
                    usage.reasoning_tokens.is_some_and(|r| r > 0),
                    "{provider}: {usage:?}"
                );
                assert_eq!(
                    usage.estimated,
                    provider == "ollama",
                    "{provider}: {usage:?}"
                );
            }
            other => panic!("{provider}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn reasoning_after_the_answer_starts_the_next_block_for_every_provider() {
    for (provider, kind) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[two-blocks]").await;
        assert_eq!(starts(&events), [kind, kind], "{provider}");
        assert!(
            events.contains(&TurnEvent::ThinkingStart {
                block: 1,
                kind,
                at_ms: None
            }),
            "{provider}"
        );
        assert!(answer_text(&events).ends_with("Verified: the answer stands."));
        assert_one_terminal(&events);
    }
}

#[tokio::test]
async fn reasoning_without_readable_text_still_opens_and_closes_a_block() {
    for (provider, _) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[redacted] hello").await;
        assert_eq!(answer_text(&events), ANSWER, "{provider}");
        assert_eq!(thinking_text(&events), "", "{provider}");
        assert_one_terminal(&events);
        if provider == "ollama" {
            // Ollama has no hidden reasoning: the model is only silent.
            assert!(starts(&events).is_empty(), "{events:?}");
            continue;
        }
        // Responses (and the Interactions API, a thought step) announces a reasoning item as
        // the summary Ponder asked for when it appears, and corrects the block to hidden (same
        // index) once the item ends with no text; Gemini's thought count without thoughts is hidden too; Anthropic's
        // redacted_thinking and OpenRouter's encrypted details are redacted (encrypted).
        let expected: &[_] = match provider {
            "responses" | "gemini-interactions" => &[Summary, Hidden],
            "gemini" => &[Hidden],
            _ => &[Redacted],
        };
        assert_eq!(starts(&events), expected, "{provider}");
        assert!(
            events
                .iter()
                .all(|e| !matches!(e, TurnEvent::ThinkingStart { block, .. } if *block != 0)),
            "{provider}: one block"
        );
        let duration = events.iter().find_map(|e| match e {
            TurnEvent::ThinkingEnd { duration_ms, .. } => *duration_ms,
            _ => None,
        });
        // Gemini only reveals hidden reasoning with its first answer chunk; the others open
        // the block when the silent reasoning starts, so its time is counted.
        if provider != "gemini" {
            assert!(duration >= Some(1000), "{provider}: {duration:?}");
        }
    }
}

#[tokio::test]
async fn a_mid_stream_error_in_each_provider_shape_is_one_error_event() {
    for (provider, _) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[error]").await;
        assert_eq!(answer_text(&events), "Partial answer", "{provider}");
        assert!(
            matches!(events.last(), Some(TurnEvent::Error(Failure { message, retryable: true, code: ErrorCode::ModelError, .. })) if message.contains("overloaded")),
            "{provider}: {events:?}"
        );
        assert_one_terminal(&events);
    }
}

#[tokio::test]
async fn a_stream_cut_before_its_end_marker_is_an_error_never_done() {
    for (provider, _) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[drop]").await;
        assert!(
            answer_text(&events).starts_with("Here is the beginning"),
            "{provider}: {:?}",
            &events[events.len().saturating_sub(6)..]
        );
        assert!(
            matches!(
                events.last(),
                Some(TurnEvent::Error(Failure {
                    retryable: true,
                    ..
                }))
            ),
            "{provider}: {events:?}"
        );
        assert_one_terminal(&events);
    }
}

#[tokio::test]
async fn pre_stream_failures_are_one_error_and_never_echo_the_key() {
    let key = "sk-provider-test-0123456789";
    for (provider, _) in PROVIDERS {
        let app = spawn(provider, &[("PONDER_API_KEY", key)]).await;
        for (tag, status, retryable) in [
            ("[401]", "401", false),
            ("[500]", "500", true),
            ("[429]", "429", true),
        ] {
            let events = app.turn(tag).await;
            match &events[..] {
                [TurnEvent::Error(Failure {
                    message,
                    retryable: r,
                    ..
                })] => {
                    assert!(message.contains(status), "{provider} {tag}: {message}");
                    assert_eq!(*r, retryable, "{provider} {tag}: {message}");
                    assert!(!message.contains(key), "{provider} {tag}: {message}");
                }
                other => panic!("{provider} {tag}: {other:?}"),
            }
        }
        let events = app.turn("[401]").await;
        assert!(
            matches!(&events[0], TurnEvent::Error(Failure { message, .. }) if message.contains("[redacted]")),
            "{provider}: the key reached the demo in the provider's header and was redacted: {events:?}"
        );
    }
}

#[tokio::test]
async fn multi_byte_text_split_across_chunks_arrives_whole_for_every_provider() {
    for (provider, _) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[utf8-split]").await;
        assert_eq!(
            thinking_text(&events),
            "Thinking in UTF-8: ünïcødé, 日本語, emoji 🤔.",
            "{provider}"
        );
        assert_eq!(
            answer_text(&events),
            "Café ☕ — 日本語 — 🎉 done.",
            "{provider}"
        );
        assert_one_terminal(&events);
    }
}

#[tokio::test]
async fn hitting_the_token_limit_while_thinking_finishes_with_length() {
    for (provider, _) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[think-only]").await;
        assert!(
            matches!(events.last(), Some(TurnEvent::Done { finish_reason, .. }) if finish_reason == "length"),
            "{provider}: {:?}",
            events.last()
        );
        assert_eq!(answer_text(&events), "", "{provider}");
    }
}

#[tokio::test]
async fn garbage_and_invalid_bytes_are_skipped_and_the_turn_ends() {
    for (provider, _) in PROVIDERS {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[garbage]").await;
        assert_eq!(answer_text(&events), ANSWER, "{provider}");
        assert_one_terminal(&events);
        let events = app.turn("[bad-utf8]").await;
        let answer = answer_text(&events);
        assert!(
            answer.starts_with("Before the bad bytes.") && answer.ends_with(" After."),
            "{provider}: {answer:?}"
        );
        assert!(
            matches!(events.last(), Some(TurnEvent::Done { .. })),
            "{provider}"
        );
    }
}

#[tokio::test]
async fn inline_think_tags_become_a_block_on_the_free_text_providers() {
    for provider in ["openai", "ollama"] {
        let app = spawn(provider, &[]).await;
        let events = app.turn("[think-tags]").await;
        assert_eq!(starts(&events), [Raw], "{provider}");
        assert_eq!(thinking_text(&events), THINKING, "{provider}");
        assert_eq!(answer_text(&events), ANSWER, "{provider}");
        assert!(!answer_text(&events).contains("think>"));
        assert_one_terminal(&events);
    }
}

#[tokio::test]
async fn a_closing_tag_without_an_opening_one_reclassifies_what_was_shown() {
    let app = spawn("openai", &[]).await;
    let events = app.turn("[think-open]").await;
    assert!(
        events.contains(&TurnEvent::Reclassify { block: 0 }),
        "{events:?}"
    );
    assert!(answer_text(&events).starts_with(THINKING));
    assert_eq!(
        reader_view(&events),
        (THINKING.to_string(), ANSWER.to_string())
    );
    assert_one_terminal(&events);
}

#[tokio::test]
async fn with_think_start_no_scratchpad_text_is_ever_an_answer_delta() {
    let app = spawn("openai", &[("PONDER_THINK_START", "true")]).await;
    let events = app.turn("[think-open]").await;
    assert!(!events
        .iter()
        .any(|e| matches!(e, TurnEvent::Reclassify { .. })));
    assert_eq!(thinking_text(&events), THINKING);
    assert_eq!(answer_text(&events), ANSWER);
    assert_one_terminal(&events);
    // The opening tag, when the model does write it, is not shown either.
    let events = app.turn("[think-tags]").await;
    assert_eq!(
        reader_view(&events),
        (THINKING.to_string(), ANSWER.to_string())
    );
}

/// Ponder asks Gemini for SSE; without `alt=sse` the same endpoint streams a JSON array,
/// which the adapter reads to the same pieces.
#[tokio::test]
async fn gemini_json_array_and_sse_framings_parse_alike() {
    let app = spawn("gemini", &[]).await;
    let url = format!(
        "{}/models/ponder-demo:streamGenerateContent",
        app.state.upstream_base
    );
    let body = serde_json::json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let mut parsed = Vec::new();
    for url in [url.clone(), format!("{url}?alt=sse")] {
        let response = app.http.post(&url).json(&body).send().await.expect("demo");
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        let bytes = response.bytes().await.expect("body");
        let mut parser = parser_for(ProviderKind::Gemini, false);
        let mut pieces = Vec::new();
        parser.feed(&bytes, &mut pieces);
        parser.finish(&mut pieces);
        parsed.push((content_type, pieces));
    }
    assert_eq!(parsed[0].0, "application/json");
    assert_eq!(parsed[1].0, "text/event-stream");
    assert!(parsed[0].1.len() > 10);
    // Each response seals its thought signature with its own value: the same piece, sealed apart.
    let unsealed = |pieces: &[Piece]| -> Vec<Piece> {
        pieces
            .iter()
            .map(|p| match p {
                Piece::State(_) => Piece::State(serde_json::Value::Null),
                other => other.clone(),
            })
            .collect()
    };
    assert_eq!(unsealed(&parsed[0].1), unsealed(&parsed[1].1));
    assert!(parsed[0].1.iter().any(|p| matches!(p, Piece::State(_))));
}

/// The demo refuses what the real servers refuse, so an adapter sending a wrong request fails
/// these tests instead of passing against a lenient fake.
#[tokio::test]
async fn the_demo_refuses_requests_the_real_servers_refuse() {
    let http = reqwest::Client::new();
    type Refused = (
        &'static str,
        &'static str,
        serde_json::Value,
        &'static [(&'static str, &'static str)],
    );
    let cases: [Refused; 5] = [
        (
            "openai",
            "/chat/completions",
            serde_json::json!({"messages": []}),
            &[],
        ),
        (
            "anthropic",
            "/messages",
            serde_json::json!({"messages": [{"role": "user", "content": "hi"}], "stream": true, "max_tokens": 2000}),
            &[],
        ),
        (
            "anthropic",
            "/messages",
            serde_json::json!({"messages": [{"role": "user", "content": "hi"}], "stream": true, "max_tokens": 2000, "thinking": {"type": "enabled", "budget_tokens": 4000}}),
            &[("anthropic-version", "2023-06-01")],
        ),
        (
            "responses",
            "/responses",
            serde_json::json!({"stream": true}),
            &[],
        ),
        (
            "gemini",
            "/models/x:streamGenerateContent?alt=sse",
            serde_json::json!({}),
            &[],
        ),
    ];
    for (provider, path, body, headers) in cases {
        let app = spawn(provider, &[]).await;
        let mut request = http
            .post(format!("{}{path}", app.state.upstream_base))
            .json(&body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("demo");
        assert_eq!(response.status(), 400, "{provider} {path} {body}");
    }
}
