//! Reasoning state across turns, over real HTTP: the real `ponder` binary in front of the demo
//! model, with a recording proxy between them that keeps every byte each side sent. The demo
//! seals each response's signatures and encrypted reasoning with a value naming its model and
//! refuses a seal sent back to another model, as the real APIs do.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use common::browser::Browser;
use common::process::Process;
use common::stored_at;
use ponder::domain::{ErrorCode, TurnEvent};
use ponder::server::config::DemoConfig;
use serde_json::{json, Value};

/// One request to the upstream and its answer, as the bytes went by.
#[derive(Clone)]
struct Exchange {
    request: String,
    response: String,
}

#[derive(Clone)]
struct Recorder {
    demo: String,
    http: reqwest::Client,
    seen: Arc<Mutex<Vec<Exchange>>>,
}

async fn forward(
    State(r): State<Recorder>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut out = r.http.request(method, format!("{}{uri}", r.demo));
    for (name, value) in &headers {
        if name != "host" && name != "content-length" {
            out = out.header(name, value);
        }
    }
    let Ok(answer) = out.body(body.clone()).send().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    let status = answer.status();
    let content_type = answer.headers().get("content-type").cloned();
    let bytes = answer.bytes().await.unwrap_or_default();
    let turn_path = uri.path().ends_with("/messages")
        || uri.path().ends_with("/responses")
        || uri.path().ends_with("/chat/completions")
        || uri.path().contains(":streamGenerateContent")
        || uri.path().ends_with("/interactions");
    // Ponder's own title request after a new chat's first answer runs in the background and
    // may arrive after the next turn's: it is not a turn, and not recorded as one.
    let title_request =
        String::from_utf8_lossy(&body).contains(ponder::server::titles::TITLE_INSTRUCTIONS);
    if turn_path && !title_request {
        r.seen.lock().unwrap().push(Exchange {
            request: String::from_utf8_lossy(&body).into_owned(),
            response: String::from_utf8_lossy(&bytes).into_owned(),
        });
    }
    let mut response = (status, bytes).into_response();
    if let Some(ct) = content_type {
        response.headers_mut().insert("content-type", ct);
    }
    response
}

impl Recorder {
    async fn start() -> (Recorder, String) {
        let demo = ponder::server::demo_upstream::spawn(&DemoConfig {
            addr: "127.0.0.1:0".into(),
            token_delay: std::time::Duration::from_millis(1),
        })
        .await
        .expect("demo");
        let recorder = Recorder {
            demo: format!("http://{demo}"),
            http: reqwest::Client::new(),
            seen: Arc::default(),
        };
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(recorder.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, app).await });
        (recorder, format!("http://{addr}"))
    }

    fn turns(&self) -> Vec<Exchange> {
        self.seen.lock().unwrap().clone()
    }

    fn last(&self) -> Exchange {
        self.turns()
            .last()
            .cloned()
            .expect("a request reached the upstream")
    }
}

/// Every demo seal in `text`, in order, each once.
fn seals(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for rest in text.split("demo-sig-").skip(1) {
        let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
        let seal = format!("demo-sig-{hex}");
        if !found.contains(&seal) {
            found.push(seal);
        }
    }
    found
}

/// A stored turn: its events and every byte the page received.
async fn turn(browser: &Browser, body: Value) -> (Vec<TurnEvent>, String) {
    let response = browser
        .request("/api/chat", body.to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    let bytes = response.bytes().await.expect("body");
    let mut decoder = ponder::wire::sse::TurnDecoder::new();
    let mut events = Vec::new();
    decoder.push(&bytes, &mut events);
    decoder.finish(&mut events);
    (events, String::from_utf8_lossy(&bytes).into_owned())
}

fn done(events: &[TurnEvent]) {
    assert!(
        matches!(events.last(), Some(TurnEvent::Done { .. })),
        "{events:#?}"
    );
}

/// Two models of one provider, and the first message (a tag where the format has state only
/// in a scenario).
struct Case {
    provider: &'static str,
    path: &'static str,
    model: &'static str,
    other: &'static str,
    /// What each message starts with (a scenario tag, for a format whose state the demo
    /// returns only in a scenario).
    tag: &'static str,
}

const CASES: [Case; 5] = [
    Case {
        provider: "anthropic",
        path: "/v1",
        model: "claude-opus-4-7",
        other: "claude-sonnet-4-6",
        tag: "",
    },
    Case {
        provider: "responses",
        path: "/v1",
        model: "gpt-5.1",
        other: "o4-mini",
        tag: "",
    },
    Case {
        provider: "gemini",
        path: "/v1beta",
        model: "gemini-3-pro-preview",
        other: "gemini-2.5-flash",
        tag: "",
    },
    Case {
        provider: "gemini-interactions",
        path: "/v1beta",
        model: "gemini-3-flash-preview",
        other: "gemini-3-pro-preview",
        tag: "",
    },
    Case {
        provider: "openai",
        path: "/v1",
        model: "openai/gpt-5.1",
        other: "deepseek-reasoner",
        tag: "[hidden] ",
    },
];

/// Each format's two-turn conversation sends back exactly the first answer's state, in order;
/// after a switch to another model nothing of it; back on the first model only that model's;
/// a regenerated answer's old version nothing. None of it reaches the page, an export or a
/// log line.
#[tokio::test]
async fn each_format_replays_exactly_the_last_turns_state_to_its_own_model_only() {
    for case in CASES {
        let (recorder, proxy) = Recorder::start().await;
        let upstream = format!("{proxy}{}", case.path);
        let models = format!("{},{}", case.model, case.other);
        let mut process = Process::start(&[
            ("PONDER_PROVIDER", case.provider),
            ("PONDER_UPSTREAM_URL", &upstream),
            ("PONDER_API_KEY", "test-key"),
            ("PONDER_MODEL", case.model),
            ("PONDER_MODELS", &models),
            ("RUST_LOG", "debug"),
        ]);
        let browser = Browser::at(process.url(""));
        let mut page = String::new();
        let name = case.provider;

        let (first, bytes) = turn(
            &browser,
            json!({"content": format!("{}Why is the sky blue?", case.tag)}),
        )
        .await;
        done(&first);
        page.push_str(&bytes);
        let (conversation, _) = stored_at(&first);
        let one = recorder.last();
        assert!(
            seals(&one.request).is_empty(),
            "{name}: nothing to send back yet"
        );
        let s1 = seals(&one.response);
        assert!(
            !s1.is_empty(),
            "{name}: the demo returned state: {}",
            one.response
        );

        let (second, bytes) = turn(
            &browser,
            json!({"conversation": conversation, "content": format!("{}And at sunset?", case.tag)}),
        )
        .await;
        done(&second);
        page.push_str(&bytes);
        let two = recorder.last();
        assert_eq!(
            seals(&two.request),
            s1,
            "{name}: the first answer's state, in order"
        );
        let s2 = seals(&two.response);
        assert!(!s2.is_empty() && s2 != s1, "{name}");

        let (third, bytes) = turn(
            &browser,
            json!({"conversation": conversation, "content": format!("{}Shorter?", case.tag), "model": case.other}),
        )
        .await;
        done(&third);
        page.push_str(&bytes);
        let three = recorder.last();
        assert!(
            seals(&three.request).is_empty(),
            "{name}: another model gets none of it: {}",
            three.request
        );
        let s3 = seals(&three.response);

        let (fourth, bytes) = turn(
            &browser,
            json!({"conversation": conversation, "content": format!("{}Thanks.", case.tag), "model": case.model}),
        )
        .await;
        done(&fourth);
        page.push_str(&bytes);
        let four = recorder.last();
        let mut expected = s1.clone();
        expected.extend(s2.iter().cloned());
        assert_eq!(
            seals(&four.request),
            expected,
            "{name}: only this model's state"
        );
        assert!(
            s3.iter().all(|s| !four.request.contains(s.as_str())),
            "{name}"
        );

        // A regenerated answer replays its new version's state, never the old one's.
        let (_, fourth_answer) = stored_at(&fourth);
        let (again, bytes) = turn(
            &browser,
            json!({"conversation": conversation, "regenerate": fourth_answer}),
        )
        .await;
        done(&again);
        page.push_str(&bytes);
        let s4_old = seals(&recorder.turns()[3].response);
        let s4_new = seals(&recorder.last().response);
        let (fifth, bytes) = turn(
            &browser,
            json!({"conversation": conversation, "content": format!("{}One more.", case.tag)}),
        )
        .await;
        done(&fifth);
        page.push_str(&bytes);
        let five = recorder.last();
        assert!(
            s4_new.iter().all(|s| five.request.contains(s.as_str())),
            "{name}: the shown version's state"
        );
        assert!(
            s4_old.iter().all(|s| !five.request.contains(s.as_str())),
            "{name}: nothing of the version regenerated away"
        );

        for (endpoint, args) in [
            ("conversations/get", json!({"id": conversation})),
            ("conversations/export", json!({"id": conversation})),
            ("conversations/list", json!({})),
        ] {
            let response = browser
                .request(&format!("/api/{endpoint}"), args.to_string())
                .send()
                .await
                .expect("request");
            assert_eq!(response.status(), 200, "{endpoint}");
            page.push_str(&response.text().await.expect("body"));
        }
        page.push_str(
            &reqwest::get(process.url("/"))
                .await
                .expect("page")
                .text()
                .await
                .expect("html"),
        );
        assert!(
            !page.contains("demo-sig-"),
            "{name}: reasoning state reached the page"
        );
        process.terminate();
        let logs = process.all_lines().join("\n");
        assert!(logs.contains("\"turn\""), "{name}: the log was read");
        assert!(
            !logs.contains("demo-sig-"),
            "{name}: reasoning state reached a log line"
        );
    }
}

/// A provider that refuses the state sent back ends the turn with `replay_refused`; sending
/// again without it (what the page's button does) works and carries none of it.
#[tokio::test]
async fn a_refused_replay_is_a_clear_error_and_a_retry_without_it_works() {
    let (recorder, proxy) = Recorder::start().await;
    let upstream = format!("{proxy}/v1");
    let process = Process::start(&[
        ("PONDER_PROVIDER", "anthropic"),
        ("PONDER_UPSTREAM_URL", &upstream),
        ("PONDER_MODEL", "claude-opus-4-7"),
    ]);
    let browser = Browser::at(process.url(""));
    let (first, _) = turn(&browser, json!({"content": "Why is the sky blue?"})).await;
    done(&first);
    let (conversation, _) = stored_at(&first);
    let (refused, _) = turn(
        &browser,
        json!({"conversation": conversation, "content": "[reject-replay] And at sunset?"}),
    )
    .await;
    let Some(TurnEvent::Error(failure)) = refused.last() else {
        panic!("the turn fails: {refused:#?}");
    };
    assert_eq!(failure.code, ErrorCode::ReplayRefused);
    assert!(
        failure.message.contains("Invalid `signature`"),
        "{failure:?}"
    );
    assert!(!seals(&recorder.last().request).is_empty());
    let (_, answer) = stored_at(&refused);
    let (again, _) = turn(
        &browser,
        json!({"conversation": conversation, "regenerate": answer, "replay": false}),
    )
    .await;
    done(&again);
    assert!(seals(&recorder.last().request).is_empty());
}

/// `PONDER_REPLAY_REASONING=false` keeps and sends nothing; the cap keeps a conversation's
/// state within `PONDER_REPLAY_MAX_BYTES`, the oldest dropped first.
#[tokio::test]
async fn replay_can_be_turned_off_and_is_capped_per_conversation() {
    let (recorder, proxy) = Recorder::start().await;
    let upstream = format!("{proxy}/v1");
    let off = Process::start(&[
        ("PONDER_PROVIDER", "anthropic"),
        ("PONDER_UPSTREAM_URL", &upstream),
        ("PONDER_MODEL", "claude-opus-4-7"),
        ("PONDER_REPLAY_REASONING", "false"),
    ]);
    let browser = Browser::at(off.url(""));
    let (first, _) = turn(&browser, json!({"content": "Why?"})).await;
    let (conversation, _) = stored_at(&first);
    let (second, _) = turn(
        &browser,
        json!({"conversation": conversation, "content": "Why not?"}),
    )
    .await;
    done(&second);
    assert!(seals(&recorder.last().request).is_empty());

    // One state of the demo is about 700 bytes (its summary and signature): a cap of 1,500
    // bytes keeps the last two.
    let capped = Process::start(&[
        ("PONDER_PROVIDER", "anthropic"),
        ("PONDER_UPSTREAM_URL", &upstream),
        ("PONDER_MODEL", "claude-opus-4-7"),
        ("PONDER_REPLAY_MAX_BYTES", "1500"),
    ]);
    let browser = Browser::at(capped.url(""));
    let (first, _) = turn(&browser, json!({"content": "One"})).await;
    let (conversation, _) = stored_at(&first);
    let mut returned = vec![seals(&recorder.last().response)];
    for word in ["Two", "Three"] {
        let (events, _) = turn(
            &browser,
            json!({"conversation": conversation, "content": word}),
        )
        .await;
        done(&events);
        returned.push(seals(&recorder.last().response));
    }
    let (last, _) = turn(
        &browser,
        json!({"conversation": conversation, "content": "Four"}),
    )
    .await;
    done(&last);
    let sent = seals(&recorder.last().request);
    assert_eq!(
        sent,
        [returned[1].clone(), returned[2].clone()].concat(),
        "the oldest state went first"
    );
}

/// A provider that pauses its own tool loop (Anthropic's `pause_turn`, recorded in a real
/// web-search stream) is continued within the same turn: the second request sends the paused
/// response back whole (its signed thinking, its tool calls, the encrypted search results) and
/// the reader sees one turn, its tool steps ended by the results the continuation brought.
#[tokio::test]
async fn a_paused_turn_is_continued_with_its_content_sent_back_whole() {
    use common::raw_http::{write_chunks, RawUpstream, Received, STREAM_HEAD};
    const FILE: &str = "anthropic/extracted/test_pause_turn_web_search_streaming_vcr.yaml";
    let first = common::fixtures::body(&format!("{FILE}.interaction0.sse"), 0);
    let second = common::fixtures::body(&format!("{FILE}.interaction1.sse"), 0);
    let (paused_body, continued_body) = (first.clone(), second);
    let upstream = RawUpstream::start(move |request: Received, mut socket| {
        // The continuation is the request that sends an assistant message back; the model
        // list the server fetches at start gets nothing.
        let body = if !request.head.starts_with("POST") {
            Vec::new()
        } else if request.body.contains("\"role\":\"assistant\"") {
            continued_body.clone()
        } else {
            paused_body.clone()
        };
        async move {
            write_chunks(
                &mut socket,
                STREAM_HEAD,
                &[common::raw_http::http_chunk(&body)],
            )
            .await;
        }
    })
    .await;
    let app = common::TestApp::spawn(&[
        ("PONDER_PROVIDER", "anthropic"),
        ("PONDER_UPSTREAM_URL", &upstream.url()),
        ("PONDER_MODEL", "claude-sonnet-4-5"),
        ("PONDER_API_KEY", "k"),
    ])
    .await;
    let events = app.turn("What is the air quality in San Francisco?").await;
    common::assert_one_terminal(&events);
    let Some(TurnEvent::Done { finish_reason, .. }) = events.last() else {
        panic!("one turn to its end: {events:#?}");
    };
    assert_eq!(finish_reason, "stop");
    let requests: Vec<Received> = upstream
        .requests()
        .into_iter()
        .filter(|r| r.head.starts_with("POST"))
        .collect();
    assert_eq!(requests.len(), 2, "the paused response was continued once");
    let sent: Value = serde_json::from_str(&requests[1].body).expect("JSON");
    let messages = sent["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    assert_eq!(last["role"], "assistant");
    let blocks = last["content"].as_array().expect("the paused content");
    let kinds: Vec<&str> = blocks.iter().filter_map(|b| b["type"].as_str()).collect();
    assert!(
        kinds.contains(&"thinking") && kinds.contains(&"server_tool_use"),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"web_search_tool_result"), "{kinds:?}");
    // Every opaque value of the paused stream goes back byte for byte.
    let paused = String::from_utf8_lossy(&first).into_owned();
    let mut opaque = 0;
    for key in ["\"encrypted_content\":\"", "\"signature\":\""] {
        for rest in paused.split(key).skip(1) {
            let value = rest.split('"').next().unwrap_or_default();
            if value.is_empty() {
                continue;
            }
            opaque += 1;
            assert!(
                requests[1].body.contains(value),
                "{key}{}… was sent back",
                &value[..20.min(value.len())]
            );
        }
    }
    assert!(opaque > 10, "the recording has opaque values: {opaque}");
    let mut started = std::collections::BTreeSet::new();
    let mut ended = std::collections::BTreeSet::new();
    for event in &events {
        match event {
            TurnEvent::ToolStart { tool, .. } => {
                started.insert(*tool);
            }
            TurnEvent::ToolEnd { tool, status, .. } => {
                assert_eq!(*status, ponder::domain::ToolStatus::Finished, "{event:?}");
                ended.insert(*tool);
            }
            _ => {}
        }
    }
    assert!(!started.is_empty(), "the recording searched the web");
    assert_eq!(
        started, ended,
        "every search the paused response began has its result"
    );
}
