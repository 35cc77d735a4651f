//! Hostile and broken upstreams, and hostile clients, over real HTTP. Each attack gets one clear
//! terminal event or HTTP error, bounded memory (read from /proc where memory is the point), no
//! secret in any byte the browser or the log receives, and a healthy turn beside it that
//! completes normally.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use common::process::Process;
use common::raw_http::{http_chunk, RawUpstream, Received, STREAM_HEAD};
use common::*;
use ponder::domain::{ErrorCode, Failure, TurnEvent};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HEALTHY_THINKING: &str = "Checking the facts.";
const HEALTHY_ANSWER: &str = "All good.";

fn chat_body(prompt: &str) -> String {
    serde_json::json!({"messages": [{"role": "user", "content": prompt}]}).to_string()
}

/// An OpenAI-compatible SSE frame of one choice delta.
fn openai_frame(delta: serde_json::Value, finish: Option<&str>) -> Vec<u8> {
    let data =
        serde_json::json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {data}\n\n").into_bytes()
}

/// The healthy reply: reasoning, answer, finish, `[DONE]`.
fn healthy_frames() -> Vec<Vec<u8>> {
    vec![
        openai_frame(
            serde_json::json!({"reasoning_content": HEALTHY_THINKING}),
            None,
        ),
        openai_frame(serde_json::json!({"content": HEALTHY_ANSWER}), None),
        openai_frame(serde_json::json!({}), Some("stop")),
        b"data: [DONE]\n\n".to_vec(),
    ]
}

async fn write_healthy(mut socket: TcpStream) {
    let mut out = STREAM_HEAD.as_bytes().to_vec();
    for frame in healthy_frames() {
        out.extend(http_chunk(&frame));
    }
    out.extend_from_slice(b"0\r\n\r\n");
    let _ = socket.write_all(&out).await;
    let _ = socket.flush().await;
    // Keep the connection until the client is done with it.
    let mut sink = [0u8; 256];
    let _ = socket.read(&mut sink).await;
}

fn assert_healthy(events: &[TurnEvent]) {
    assert_one_terminal(events);
    assert_eq!(thinking_text(events), HEALTHY_THINKING, "{events:#?}");
    assert_eq!(answer_text(events), HEALTHY_ANSWER, "{events:#?}");
    assert!(
        matches!(events.last(), Some(TurnEvent::Done { .. })),
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

/// Writes `bytes` over and over as one HTTP chunk each until `total` bytes went out or the
/// peer went away; returns how many bytes the socket took.
async fn flood(socket: &mut TcpStream, bytes: &[u8], total: u64) -> u64 {
    let chunk = http_chunk(bytes);
    let mut sent = 0;
    while sent < total {
        if socket.write_all(&chunk).await.is_err() {
            break;
        }
        sent += bytes.len() as u64;
    }
    sent
}

/// Runs the hostile turn and a healthy one at the same time on one Ponder.
async fn beside_a_healthy_turn(app: &TestApp, hostile: &str) -> (Vec<TurnEvent>, Vec<TurnEvent>) {
    let response = app.post_chat(chat_body(hostile)).await;
    assert_eq!(response.status(), 200);
    let (hostile, healthy) = tokio::join!(read_events(response), app.turn("healthy"));
    let hostile = after_start(hostile);
    assert_one_terminal(&hostile);
    assert_healthy(&healthy);
    (hostile, healthy)
}

// ---------- lines without end ----------

/// An upstream that, for `[endless-line]`, opens a line and never ends it: 1 GiB of one line in
/// the framing of `provider`. Counts what its sockets took.
async fn endless_line_upstream(provider: &'static str, sent: Arc<AtomicU64>) -> RawUpstream {
    RawUpstream::start(move |request: Received, mut socket| {
        let sent = sent.clone();
        async move {
            if !request.body.contains("[endless-line]") {
                return write_healthy(socket).await;
            }
            let (head, opening): (&str, &[u8]) = match provider {
                "ollama" => (
                    "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                    b"{\"message\":{\"role\":\"assistant\",\"content\":\"",
                ),
                "gemini" => (
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                    b"[{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"",
                ),
                _ => (STREAM_HEAD, b"data: {\"choices\":[{\"delta\":{\"content\":\""),
            };
            if socket.write_all(head.as_bytes()).await.is_err()
                || socket.write_all(&http_chunk(opening)).await.is_err()
            {
                return;
            }
            let n = flood(&mut socket, &[b'a'; 64 * 1024], 1 << 30).await;
            sent.store(n, Ordering::SeqCst);
        }
    })
    .await
}

async fn wait_for_sent(sent: &AtomicU64) -> u64 {
    for _ in 0..200 {
        let n = sent.load(Ordering::SeqCst);
        if n > 0 {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the upstream is still writing: Ponder did not drop it");
}

#[tokio::test]
async fn an_endless_line_ends_the_turn_and_drops_the_upstream_in_every_framing() {
    for provider in ["openai", "ollama", "gemini"] {
        let sent = Arc::new(AtomicU64::new(0));
        let upstream = endless_line_upstream(provider, sent.clone()).await;
        let url = match provider {
            "ollama" => format!("http://{}", upstream.addr),
            "gemini" => format!("http://{}/v1beta", upstream.addr),
            _ => upstream.url(),
        };
        let app = TestApp::spawn(&[
            ("PONDER_UPSTREAM_URL", &url),
            ("PONDER_PROVIDER", provider),
            ("PONDER_MAX_LINE_BYTES", "65536"),
        ])
        .await;
        let response = app.post_chat(chat_body("[endless-line]")).await;
        let events = after_start(read_events(response).await);
        assert_one_terminal(&events);
        let (message, retryable) = error_of(&events);
        assert!(
            message.contains("a line over 64 KiB"),
            "{provider}: {message}"
        );
        assert!(!retryable);
        let failure = failure_of(&events);
        assert_eq!(failure.code, ErrorCode::LineTooLong, "{provider}");
        assert_eq!(failure.param("limit"), "64 KiB", "{provider}");
        let taken = wait_for_sent(&sent).await;
        assert!(
            taken < 64 << 20,
            "{provider}: the upstream wrote {taken} bytes before Ponder let it go"
        );
    }
}

#[tokio::test]
async fn an_endless_sse_line_keeps_the_servers_memory_flat() {
    let sent = Arc::new(AtomicU64::new(0));
    let upstream = endless_line_upstream("openai", sent.clone()).await;
    let process = Process::start(&[("PONDER_UPSTREAM_URL", &upstream.url())]);
    // A healthy turn first, so the baseline includes a warmed-up server.
    let warm = after_start(read_events(post(&process.url("/api/chat"), "healthy").await).await);
    assert_healthy(&warm);
    let (baseline, _) = process.memory_kib();

    let url = process.url("/api/chat");
    let hostile = post(&url, "[endless-line] go");
    let healthy = post(&url, "healthy");
    let (hostile, healthy) = tokio::join!(hostile, healthy);
    let (hostile, healthy) = tokio::join!(read_events(hostile), read_events(healthy));
    let (hostile, healthy) = (after_start(hostile), after_start(healthy));
    assert_healthy(&healthy);
    assert_one_terminal(&hostile);
    let (message, _) = error_of(&hostile);
    assert!(message.contains("a line over 1 MiB"), "{message}");
    let taken = wait_for_sent(&sent).await;
    let (_, peak) = process.memory_kib();
    eprintln!(
        "endless line: baseline {baseline} KiB, peak {peak} KiB, upstream wrote {taken} bytes"
    );
    assert!(
        taken < 64 << 20,
        "the upstream wrote {taken} bytes before Ponder let it go"
    );
    // The line cap is 1 MiB; the buffer doubling to 2 MiB plus the HTTP stack's buffers fit
    // in 16 MiB. Before the cap, the peak grew one-to-one with the line (2.08 GB for 1 GiB).
    assert!(
        peak < baseline + 16 * 1024,
        "peak RSS {peak} KiB against a baseline of {baseline} KiB"
    );
}

async fn post(url: &str, prompt: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(chat_body(prompt))
        .send()
        .await
        .expect("request")
}

// ---------- reasoning without end ----------

#[tokio::test]
async fn endless_reasoning_ends_as_length_at_the_turn_cap_and_keeps_what_arrived() {
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    let upstream = RawUpstream::start(move |request: Received, mut socket| {
        let sent = counter.clone();
        async move {
            if !request.body.contains("[endless-think]") {
                return write_healthy(socket).await;
            }
            if socket.write_all(STREAM_HEAD.as_bytes()).await.is_err() {
                return;
            }
            let frame = openai_frame(serde_json::json!({"reasoning_content": "hmm, "}), None);
            let n = flood(&mut socket, &frame, 1 << 30).await;
            sent.store(n, Ordering::SeqCst);
        }
    })
    .await;
    let app = TestApp::spawn(&[
        ("PONDER_UPSTREAM_URL", &upstream.url()),
        ("PONDER_MAX_TURN_CHARS", "100000"),
    ])
    .await;
    let (events, _) = beside_a_healthy_turn(&app, "[endless-think]").await;
    let thinking = thinking_text(&events);
    assert_eq!(thinking.chars().count(), 100_000);
    assert!(thinking.starts_with("hmm, hmm, "));
    match events.last() {
        Some(TurnEvent::Done {
            finish_reason,
            thinking_chars,
            ..
        }) => {
            assert_eq!(finish_reason, "length");
            assert_eq!(*thinking_chars, 100_000);
        }
        other => panic!("expected done, got {other:?}"),
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ThinkingEnd { .. })),
        "the block is closed, not left thinking"
    );
    assert!(wait_for_sent(&sent).await < 64 << 20);
}

#[test]
fn the_default_turn_cap_is_64_characters_a_token() {
    let config = ponder::server::config::Config::from_lookup(|name| {
        (name == "PONDER_MAX_OUTPUT_TOKENS").then(|| "1000".to_string())
    })
    .expect("config");
    assert_eq!(config.limits.max_turn_chars, 65_536, "at least 64 Ki");
    let config = ponder::server::config::Config::from_lookup(|_| None).expect("config");
    assert_eq!(config.limits.max_turn_chars, 32_768 * 64);
}

// ---------- a byte-order mark ----------

#[tokio::test]
async fn a_byte_order_mark_loses_nothing_in_every_framing() {
    let upstream = RawUpstream::start(|request: Received, mut socket| async move {
        let path = request.head.lines().next().unwrap_or("").to_string();
        let (head, body): (&str, Vec<u8>) = if path.contains("/api/chat") {
            (
                "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                b"{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"First\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"Answer\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n".to_vec(),
            )
        } else if path.contains("streamGenerateContent") {
            (
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                br#"[{"candidates":[{"content":{"parts":[{"text":"First","thought":true}],"role":"model"}}]},{"candidates":[{"content":{"parts":[{"text":"Answer"}],"role":"model"},"finishReason":"STOP"}]}]"#.to_vec(),
            )
        } else {
            let mut body = Vec::new();
            body.extend(openai_frame(serde_json::json!({"reasoning_content": "First"}), None));
            body.extend(openai_frame(serde_json::json!({"content": "Answer"}), None));
            body.extend(openai_frame(serde_json::json!({}), Some("stop")));
            body.extend_from_slice(b"data: [DONE]\n\n");
            (STREAM_HEAD, body)
        };
        let mut out = head.as_bytes().to_vec();
        // The mark in a chunk of its own, then the stream.
        out.extend(http_chunk(b"\xEF\xBB"));
        out.extend(http_chunk(b"\xBF"));
        out.extend(http_chunk(&body));
        out.extend_from_slice(b"0\r\n\r\n");
        let _ = socket.write_all(&out).await;
        let mut sink = [0u8; 64];
        let _ = socket.read(&mut sink).await;
    })
    .await;
    for (provider, url) in [
        ("openai", upstream.url()),
        ("ollama", format!("http://{}", upstream.addr)),
        ("gemini", format!("http://{}/v1beta", upstream.addr)),
    ] {
        let app =
            TestApp::spawn(&[("PONDER_UPSTREAM_URL", &url), ("PONDER_PROVIDER", provider)]).await;
        let events = app.turn("hello").await;
        assert_one_terminal(&events);
        assert_eq!(thinking_text(&events), "First", "{provider}: {events:#?}");
        assert_eq!(answer_text(&events), "Answer", "{provider}");
        assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
    }
}

// ---------- redirects ----------

#[tokio::test]
async fn a_redirect_to_another_origin_is_an_error_and_nothing_follows_it() {
    let elsewhere = RawUpstream::start(|_, socket| write_healthy(socket)).await;
    let target = format!("http://{}/v1/steal", elsewhere.addr);
    let redirecting = RawUpstream::start(move |request: Received, mut socket| {
        let target = target.clone();
        async move {
            if request.body.contains("healthy") {
                return write_healthy(socket).await;
            }
            let reply = format!(
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}?key=x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = socket.write_all(reply.as_bytes()).await;
        }
    })
    .await;
    for provider in ["anthropic", "gemini", "openai"] {
        let url = if provider == "gemini" {
            format!("http://{}/v1beta", redirecting.addr)
        } else {
            redirecting.url()
        };
        let app = TestApp::spawn(&[
            ("PONDER_UPSTREAM_URL", &url),
            ("PONDER_PROVIDER", provider),
            ("PONDER_API_KEY", "sk-redirect-secret-0123456789"),
        ])
        .await;
        let events = app.turn("please redirect").await;
        assert_eq!(events.len(), 1, "{provider}: {events:#?}");
        let (message, retryable) = error_of(&events);
        assert!(message.contains("307"), "{message}");
        assert!(message.contains("follows no redirects"), "{message}");
        assert!(
            !message.contains("key=x"),
            "the location's query stays out: {message}"
        );
        assert!(!retryable);
    }
    assert!(
        elsewhere.requests().is_empty(),
        "the other origin received {:?}",
        elsewhere.requests()
    );
}

// ---------- the key never reaches the browser or the log ----------

const KEY: &str = "sk-Hostile-Key-0123456789abcdefGHIJ";

/// Every form of the key an upstream may echo, to look for in what the browser got.
fn key_forms() -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let encoded = b64.encode(format!("user:{KEY}"));
    vec![
        KEY.to_ascii_lowercase(),
        KEY.bytes().map(|b| format!("%{b:02x}")).collect(),
        // The part of `base64("user:" + key)` that only the key's bytes make.
        encoded[8..encoded.len() - 4].to_ascii_lowercase(),
    ]
}

fn assert_no_key(text: &str, place: &str) {
    let lower = text.to_ascii_lowercase();
    for form in key_forms() {
        assert!(
            !lower.contains(&form),
            "{place} holds the key as {form:?}: {text}"
        );
    }
}

/// An upstream that streams a little, then echoes the key back in the way `[echo-N]` asks.
async fn echoing_upstream() -> RawUpstream {
    RawUpstream::start(|request: Received, mut socket| async move {
        if request.body.contains("healthy") {
            return write_healthy(socket).await;
        }
        let b64 = base64::engine::general_purpose::STANDARD;
        let escaped: String = KEY
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        let percent: String = KEY.bytes().map(|b| format!("%{b:02X}")).collect();
        let error = |text: &str| {
            format!("data: {{\"error\":{{\"message\":\"{text}\",\"code\":500}}}}\n\n").into_bytes()
        };
        let (a, b) = KEY.split_at(11);
        let pieces: Vec<Vec<u8>> = if request.body.contains("[echo-plain]") {
            vec![error(&format!("bad key {KEY}"))]
        } else if request.body.contains("[echo-split]") {
            let frame = error(&format!("bad key {KEY}"));
            let cut = frame.len() / 2;
            vec![frame[..cut].to_vec(), frame[cut..].to_vec()]
        } else if request.body.contains("[echo-escaped]") {
            vec![error(&format!("bad key {escaped}"))]
        } else if request.body.contains("[echo-case]") {
            vec![error(&format!("bad key {}", KEY.to_ascii_uppercase()))]
        } else if request.body.contains("[echo-percent]") {
            vec![error(&format!("https://x/?k={percent}"))]
        } else if request.body.contains("[echo-base64]") {
            vec![error(&format!(
                "Basic {}",
                b64.encode(format!("user:{KEY}"))
            ))]
        } else {
            // The key split across two answer deltas, then a normal end.
            vec![
                openai_frame(
                    serde_json::json!({"content": format!("the key is {a}")}),
                    None,
                ),
                openai_frame(serde_json::json!({"content": format!("{b}, see?")}), None),
                openai_frame(serde_json::json!({}), Some("stop")),
                b"data: [DONE]\n\n".to_vec(),
            ]
        };
        if socket.write_all(STREAM_HEAD.as_bytes()).await.is_err() {
            return;
        }
        let _ = socket
            .write_all(&http_chunk(&openai_frame(
                serde_json::json!({"reasoning_content": "ok"}),
                None,
            )))
            .await;
        for piece in pieces {
            // Each piece its own TCP write, with a pause, so they arrive apart.
            if socket.write_all(&http_chunk(&piece)).await.is_err() {
                return;
            }
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = socket.write_all(b"0\r\n\r\n").await;
        let mut sink = [0u8; 64];
        let _ = socket.read(&mut sink).await;
    })
    .await
}

const ECHOES: [&str; 7] = [
    "[echo-plain]",
    "[echo-split]",
    "[echo-escaped]",
    "[echo-case]",
    "[echo-percent]",
    "[echo-base64]",
    "[echo-deltas]",
];

#[tokio::test]
async fn no_copy_of_the_key_reaches_the_browser_in_any_event() {
    let upstream = echoing_upstream().await;
    let app = TestApp::spawn(&[
        ("PONDER_UPSTREAM_URL", &upstream.url()),
        ("PONDER_API_KEY", KEY),
    ])
    .await;
    for echo in ECHOES {
        let response = app.post_chat(chat_body(echo)).await;
        let raw = response.bytes().await.expect("body");
        let raw = String::from_utf8_lossy(&raw).into_owned();
        assert_no_key(&raw, &format!("the raw stream for {echo}"));
        let mut decoder = ponder::wire::sse::TurnDecoder::new();
        let mut events = Vec::new();
        decoder.push(raw.as_bytes(), &mut events);
        decoder.finish(&mut events);
        assert_one_terminal(&events);
        assert_no_key(&format!("{events:?}"), &format!("the events for {echo}"));
        let shown = format!("{}{}", answer_text(&events), {
            match events.last() {
                Some(TurnEvent::Error(Failure { message, .. })) => message.clone(),
                _ => String::new(),
            }
        });
        assert!(shown.contains("[redacted]"), "{echo}: {events:#?}");
    }
    // The text around a masked key is all there.
    let events = app.turn("[echo-deltas]").await;
    assert_eq!(answer_text(&events), "the key is [redacted], see?");
    // The key reached the upstream in its header, where it belongs.
    assert!(upstream
        .requests()
        .iter()
        .all(|r| r.head.contains(&format!("Bearer {KEY}"))));
}

#[tokio::test]
async fn no_copy_of_the_key_or_the_url_password_reaches_the_log() {
    let upstream = echoing_upstream().await;
    let mut process = Process::start(&[
        ("PONDER_UPSTREAM_URL", &upstream.url()),
        ("PONDER_API_KEY", KEY),
        ("RUST_LOG", "debug"),
    ]);
    for echo in ECHOES {
        let events = after_start(read_events(post(&process.url("/api/chat"), echo).await).await);
        assert_no_key(&format!("{events:?}"), echo);
    }
    // A password in the upstream URL, and a server that is not there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let password = "pw-Secret-Upstream-77";
    let mut second = Process::start(&[(
        "PONDER_UPSTREAM_URL",
        &format!("http://alice:{password}@127.0.0.1:{port}/v1"),
    )]);
    let events = after_start(read_events(post(&second.url("/api/chat"), "hello").await).await);
    let (message, _) = error_of(&events);
    assert!(message.contains("Could not reach"), "{message}");
    assert!(!message.contains(password), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");

    process.terminate();
    second.terminate();
    assert!(process.wait_exit(Duration::from_secs(10)).is_some());
    assert!(second.wait_exit(Duration::from_secs(10)).is_some());
    let lines = process.all_lines();
    assert!(
        lines.iter().any(|l| l.contains("upstream failure")),
        "{lines:#?}"
    );
    for line in &lines {
        assert_no_key(line, "a log line");
    }
    let lines = second.all_lines();
    assert!(lines.iter().any(|l| l.contains("upstream")), "{lines:#?}");
    for line in &lines {
        assert!(!line.contains(password), "the URL password leaked: {line}");
    }
}

// ---------- an exposed server is not an open relay ----------

async fn demo_started(app: &TestApp) -> u64 {
    let base = app.state.upstream_base.trim_end_matches("/v1");
    let stats: serde_json::Value = app
        .http
        .get(format!("{base}/demo/stats"))
        .send()
        .await
        .expect("stats")
        .json()
        .await
        .expect("json");
    stats["started"].as_u64().expect("started")
}

/// The refusal's whole body, which has the shape of the stream's `error` event.
async fn refusal(response: reqwest::Response, status: u16) -> Failure {
    assert_eq!(response.status(), status);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let body: serde_json::Value = response.json().await.expect("a JSON body");
    assert_eq!(body["type"], "error", "{body}");
    assert!(body["message"].is_string(), "{body}");
    assert!(body["retryable"].is_boolean(), "{body}");
    assert!(body["code"].is_string(), "{body}");
    match serde_json::from_value(body.clone()) {
        Ok(TurnEvent::Error(failure)) => failure,
        other => panic!("{body}: {other:?}"),
    }
}

#[tokio::test]
async fn cross_site_and_non_json_requests_run_no_turn() {
    let app = TestApp::spawn(&[]).await;
    let before = demo_started(&app).await;
    let url = app.url("/api/chat");
    // A form or `text/plain` post, as any web page can send without a preflight.
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ] {
        let response = app
            .http
            .post(&url)
            .header("content-type", content_type)
            .body(chat_body("spend the key"))
            .send()
            .await
            .expect("request");
        let failure = refusal(response, 415).await;
        assert!(failure.message.contains("application/json"), "{failure:?}");
        assert_eq!(failure.code, ErrorCode::UnsupportedMediaType);
    }
    // JSON, but from another site.
    let response = app
        .http
        .post(&url)
        .header("content-type", "application/json")
        .header("origin", "https://evil.example")
        .body(chat_body("spend the key"))
        .send()
        .await
        .expect("request");
    let failure = refusal(response, 403).await;
    assert!(
        failure.message.contains("https://evil.example"),
        "{failure:?}"
    );
    assert!(!failure.retryable);
    assert_eq!(failure.code, ErrorCode::CrossOrigin);
    assert_eq!(failure.param("origin"), "https://evil.example");
    assert_eq!(
        demo_started(&app).await,
        before,
        "no turn reached the model"
    );

    // The page's own origin, and a client that sends none (curl, scripts), are served.
    let own = format!("http://{}", app.addr);
    let response = app
        .http
        .post(&url)
        .header("content-type", "application/json; charset=utf-8")
        .header("origin", own)
        .body(chat_body("hello"))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    assert!(matches!(
        after_start(read_events(response).await).last(),
        Some(TurnEvent::Done { .. })
    ));
    assert!(matches!(
        app.turn("hello").await.last(),
        Some(TurnEvent::Done { .. })
    ));
}

#[tokio::test]
async fn an_allowed_origin_passes_and_others_still_do_not() {
    let app = TestApp::spawn(&[("PONDER_ALLOWED_ORIGINS", "https://tools.example.com")]).await;
    for (origin, status) in [
        ("https://tools.example.com", 200),
        ("https://other.example.com", 403),
    ] {
        let response = app
            .http
            .post(app.url("/api/chat"))
            .header("content-type", "application/json")
            .header("origin", origin)
            .body(chat_body("[no-think] hi"))
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), status, "{origin}");
    }
}

#[tokio::test]
async fn oversized_bodies_get_413_at_once_and_many_messages_a_400() {
    let app = TestApp::spawn(&[("PONDER_MAX_REQUEST_BYTES", "4096")]).await;
    // A Content-Length far beyond the limit, with only 15 bytes sent: answered without waiting.
    let mut socket = TcpStream::connect(app.addr).await.expect("connect");
    socket
        .write_all(b"POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 999999999999\r\n\r\n{\"messages\":[]")
        .await
        .expect("write");
    let reply = read_reply(&mut socket).await;
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("\"type\":\"error\""), "{reply}");
    assert!(reply.contains("4 KiB"), "{reply}");
    // A chunked body that grows past the limit.
    let big = "x".repeat(8000);
    let response = app
        .http
        .post(app.url("/api/chat"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(vec![
            Ok::<_, std::io::Error>(chat_body(&big)),
        ])))
        .send()
        .await
        .expect("request");
    let failure = refusal(response, 413).await;
    assert_eq!(failure.code, ErrorCode::TooLarge);
    assert_eq!(failure.param("limit"), "4 KiB");

    let app = TestApp::spawn(&[]).await;
    let body = serde_json::json!({"messages": vec![serde_json::json!({"role": "user", "content": "x"}); 67_000]})
        .to_string();
    assert!(body.len() > 2_000_000 && body.len() < 2 << 20);
    let response = app.post_chat(body).await;
    let failure = refusal(response, 400).await;
    assert!(failure.message.contains("at most 1000"), "{failure:?}");
    assert!(!failure.retryable);
    assert_eq!(failure.code, ErrorCode::TooManyMessages);
    assert_eq!(failure.param("count"), "67000");
    assert_eq!(failure.param("limit"), "1000");
}

#[tokio::test]
async fn many_huge_requests_at_once_stay_within_a_bounded_memory() {
    let process = Process::start(&[]);
    let warm =
        after_start(read_events(post(&process.url("/api/chat"), "[no-think] hi").await).await);
    assert_one_terminal(&warm);
    let (baseline, _) = process.memory_kib();
    let body = serde_json::json!({"messages": vec![serde_json::json!({"role": "user", "content": "x"}); 67_000]})
        .to_string();
    let client = reqwest::Client::new();
    let requests = (0..32).map(|_| {
        client
            .post(process.url("/api/chat"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
    });
    for response in futures::future::join_all(requests).await {
        assert_eq!(response.expect("response").status(), 400);
    }
    let (_, peak) = process.memory_kib();
    eprintln!("32 × 67,000 messages: baseline {baseline} KiB, peak {peak} KiB");
    // Each request holds its 2 MB body and at most a thousand parsed messages; before the
    // bound, 32 of them cost 439 MB.
    assert!(
        peak < baseline + 96 * 1024,
        "peak RSS {peak} KiB against a baseline of {baseline} KiB"
    );
}

/// Reads an HTTP reply until the peer closes or 5 s pass.
async fn read_reply(socket: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
            if String::from_utf8_lossy(&out).contains("\r\n\r\n{") && out.ends_with(b"}") {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Waits (bounded by `limit`) until the server closes `socket`; true if it did.
async fn closed_by_server(socket: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let wait = async {
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(limit, wait).await.is_ok()
}

#[tokio::test]
async fn slow_and_idle_clients_are_let_go() {
    let app = TestApp::spawn(&[
        ("PONDER_HEADER_TIMEOUT", "0.5"),
        ("PONDER_BODY_TIMEOUT", "0.5"),
    ])
    .await;
    // Headers that never end.
    let mut partial = TcpStream::connect(app.addr).await.expect("connect");
    partial
        .write_all(b"POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .await
        .expect("write");
    // A connection that never says anything.
    let mut silent = TcpStream::connect(app.addr).await.expect("connect");
    // A keep-alive connection left idle after one request.
    let mut idle = TcpStream::connect(app.addr).await.expect("connect");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .expect("write");
    let mut buf = [0u8; 512];
    let n = idle.read(&mut buf).await.expect("read");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // A body that never arrives.
    let mut slow_body = TcpStream::connect(app.addr).await.expect("connect");
    slow_body
        .write_all(b"POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n{\"mess")
        .await
        .expect("write");

    // The healthy turn beside them.
    assert!(matches!(
        app.turn("hello").await.last(),
        Some(TurnEvent::Done { .. })
    ));
    let limit = Duration::from_secs(10);
    assert!(
        closed_by_server(&mut partial, limit).await,
        "partial headers held"
    );
    assert!(
        closed_by_server(&mut silent, limit).await,
        "a silent socket held"
    );
    assert!(
        closed_by_server(&mut idle, limit).await,
        "an idle keep-alive socket held"
    );
    let reply = read_reply(&mut slow_body).await;
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(reply.contains("did not arrive within 0.5 s"), "{reply}");
}

#[tokio::test]
async fn past_the_connection_cap_new_connections_are_closed_and_served_again_later() {
    let process = Process::start(&[
        ("PONDER_MAX_CONNECTIONS", "20"),
        ("PONDER_HEADER_TIMEOUT", "60"),
    ]);
    let mut held = Vec::new();
    for _ in 0..20 {
        let socket = TcpStream::connect(process.addr).await.expect("connect");
        held.push(socket);
    }
    // Each held connection is registered: a full request on one of them is answered.
    held[0]
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .expect("write");
    let mut buf = [0u8; 256];
    let n = held[0].read(&mut buf).await.expect("read");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    let mut extra = TcpStream::connect(process.addr).await.expect("connect");
    let _ = extra
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await;
    assert!(
        closed_by_server(&mut extra, Duration::from_secs(10)).await,
        "the 21st connection was served"
    );
    drop(held);
    // Places come back as connections close.
    let mut served = false;
    for _ in 0..100 {
        if let Ok(r) = reqwest::get(process.url("/healthz")).await {
            served = r.status() == 200;
            if served {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served);
}

#[tokio::test]
async fn a_thousand_held_sockets_do_not_lock_out_a_new_client() {
    let process = Process::start(&[("PONDER_HEADER_TIMEOUT", "1")]);
    let mut held = Vec::new();
    for _ in 0..1000 {
        let mut socket = TcpStream::connect(process.addr).await.expect("connect");
        let _ = socket
            .write_all(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            .await;
        held.push(socket);
    }
    // They are dropped by the header deadline, and a new client is served.
    for socket in held.iter_mut() {
        assert!(closed_by_server(socket, Duration::from_secs(20)).await);
    }
    let events = after_start(read_events(post(&process.url("/api/chat"), "hello").await).await);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
}

#[tokio::test]
async fn turns_are_rate_limited_per_client_with_retry_after() {
    let app = TestApp::spawn(&[("PONDER_RATE_LIMIT", "6"), ("PONDER_RATE_BURST", "2")]).await;
    for _ in 0..2 {
        assert!(matches!(
            app.turn("[no-think] hi").await.last(),
            Some(TurnEvent::Done { .. })
        ));
    }
    let response = app.post_chat(chat_body("[no-think] once more")).await;
    let retry_after: u64 = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=10).contains(&retry_after), "{retry_after}");
    let failure = refusal(response, 429).await;
    assert!(failure.message.contains("Try again in"), "{failure:?}");
    assert!(failure.retryable);
    assert_eq!(failure.code, ErrorCode::RateLimited);
    assert_eq!(failure.param("retry_after"), retry_after.to_string());
    // Other endpoints are not limited.
    assert_eq!(
        app.http
            .get(app.url("/healthz"))
            .send()
            .await
            .expect("healthz")
            .status(),
        200
    );
}

#[test]
fn rate_limiting_is_on_by_default_only_off_loopback() {
    use ponder::server::config::Config;
    let on_loopback = Config::from_lookup(|_| None).expect("config");
    assert_eq!(on_loopback.rate_limit, None);
    let exposed = Config::from_lookup(|name| match name {
        "LEPTOS_SITE_ADDR" => Some("0.0.0.0:3000".to_string()),
        "PONDER_AUTH" => Some("password".to_string()),
        _ => None,
    })
    .expect("config");
    let limit = exposed
        .rate_limit
        .expect("a limit when listening on all interfaces");
    assert_eq!((limit.per_minute, limit.burst), (30, 10));
    let off = Config::from_lookup(|name| match name {
        "LEPTOS_SITE_ADDR" => Some("0.0.0.0:3000".to_string()),
        "PONDER_AUTH" => Some("password".to_string()),
        "PONDER_RATE_LIMIT" => Some("0".to_string()),
        _ => None,
    })
    .expect("config");
    assert_eq!(off.rate_limit, None);
}

// ---------- sockets ----------

#[tokio::test]
async fn accepted_sockets_get_nodelay_and_the_backlog_is_deep() {
    use ponder::server::http::socket::{self, ConnectionLimits, Shards};
    let listener = socket::listen("127.0.0.1:0".parse().expect("addr")).expect("listen");
    let addr = listener.local_addr().expect("addr");
    // The kernel reports a listening socket's backlog as its Send-Q.
    let ss = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{}", addr.port())])
        .output()
        .expect("ss");
    let line = String::from_utf8_lossy(&ss.stdout).into_owned();
    let backlog: u32 = line
        .split_whitespace()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("ss said {line:?}"));
    let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .expect("somaxconn")
        .trim()
        .parse()
        .expect("number");
    assert_eq!(backlog, socket::LISTEN_BACKLOG.min(somaxconn));
    assert!(backlog > 128);

    let app = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
    let limits = ConnectionLimits {
        header_timeout: Duration::from_secs(5),
        max_connections: 10,
    };
    let idle = tokio::sync::watch::channel(0usize).1;
    let mut shards = Shards::start(1, limits, idle, move |_| Ok(app.clone())).expect("shards");
    tokio::spawn(async move { shards.accept(listener, std::future::pending()).await });
    let client = TcpStream::connect(addr).await.expect("connect");
    let local: SocketAddr = client.local_addr().expect("local");
    // Find the server side of this connection among this process's sockets.
    let mut checked = false;
    for _ in 0..100 {
        if let Some(nodelay) = server_side_nodelay(local) {
            assert!(nodelay, "TCP_NODELAY is not set on the accepted socket");
            checked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(checked, "the accepted socket was not found");
}

/// TCP_NODELAY of the socket in this process whose peer is `client`.
fn server_side_nodelay(client: SocketAddr) -> Option<bool> {
    use std::os::fd::BorrowedFd;
    for entry in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let target = std::fs::read_link(entry.path()).ok()?;
        if !target.to_string_lossy().starts_with("socket:") {
            continue;
        }
        // SAFETY: the descriptor is open in this process for the duration of the check.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let socket = socket2::SockRef::from(&borrowed);
        let peer = socket.peer_addr().ok().and_then(|a| a.as_socket());
        if peer == Some(client) {
            return socket.tcp_nodelay().ok();
        }
    }
    None
}

// ---------- what is served, and how ----------

#[tokio::test]
async fn only_the_built_site_is_served() {
    let site = std::env::temp_dir().join(format!("ponder-hostile-site-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&site);
    std::fs::create_dir_all(site.join("pkg")).expect("site");
    std::fs::write(site.join("pkg/ok.js"), "ok").expect("asset");
    std::fs::write(site.join(".env"), "PONDER_API_KEY=sk-dot").expect("dotfile");
    std::fs::create_dir_all(site.join(".git")).expect("dotdir");
    std::fs::write(site.join(".git/config"), "[core]").expect("dotdir file");
    let outside = site.with_extension("outside");
    std::fs::write(&outside, "outside the site").expect("outside");
    std::os::unix::fs::symlink(&outside, site.join("pkg/link.js")).expect("symlink");
    std::os::unix::fs::symlink("/etc", site.join("etc")).expect("dir symlink");

    let app = TestApp::spawn_in(&[], &site.to_string_lossy()).await;
    let get = |path: &str| app.http.get(format!("http://{}{path}", app.addr)).send();
    assert_eq!(get("/pkg/ok.js").await.expect("get").status(), 200);
    for path in [
        "/.env",
        "/%2eenv",
        "/.git/config",
        "/pkg/../.env",
        "/pkg/link.js",
        "/etc/hostname",
        "/etc/passwd",
    ] {
        let response = get(path).await.expect("get");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(
            !body.contains("sk-dot")
                && !body.contains("[core]")
                && !body.contains("outside the site")
                && !body.contains("root:"),
            "{path} served {body}"
        );
        assert_ne!(status, 200, "{path}");
    }
}

#[tokio::test]
async fn pages_carry_a_permissions_policy_and_hsts_only_behind_a_trusted_https_proxy() {
    let app = TestApp::spawn(&[("PONDER_TRUSTED_PROXIES", "127.0.0.1/32")]).await;
    let page = app.http.get(app.url("/")).send().await.expect("page");
    let policy = page
        .headers()
        .get("permissions-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(
        policy.contains("camera=()") && policy.contains("microphone=()"),
        "{policy}"
    );
    assert!(
        !policy.contains("clipboard-write"),
        "Copy needs the clipboard"
    );
    assert!(page.headers().get("strict-transport-security").is_none());
    let https = app
        .http
        .get(app.url("/"))
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .expect("page");
    assert_eq!(
        https
            .headers()
            .get("strict-transport-security")
            .and_then(|v| v.to_str().ok()),
        Some("max-age=31536000")
    );
    // The same header from a peer that is not a trusted proxy means nothing.
    let untrusted = TestApp::spawn(&[]).await;
    let response = untrusted
        .http
        .get(untrusted.url("/"))
        .header("x-forwarded-proto", "https")
        .send()
        .await
        .expect("page");
    assert!(response
        .headers()
        .get("strict-transport-security")
        .is_none());
}
