//! Operations over real HTTP: health, readiness, metrics, SSE behind proxies (headers, no
//! compression, keep-alive comments), the base path, JSON logs and graceful shutdown. The
//! last two run the real `ponder` binary, since they are about the process.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::process::Process;
use common::*;
use futures::StreamExt;
use ponder::domain::{ErrorCode, Failure, TurnEvent};
use ponder::server::demo_upstream::{ANSWER, THINKING};
use ponder::server::state::AppState;
use ponder::wire::sse::TurnDecoder;

/// A Ponder server like [`TestApp`], but with its own site directory holding a `pkg/` asset,
/// so the asset routes are checked whether or not the site was built.
struct OpsApp {
    addr: SocketAddr,
    state: Arc<AppState>,
    http: reqwest::Client,
}

impl OpsApp {
    async fn spawn(vars: &[(&str, &str)]) -> OpsApp {
        let site = site_dir();
        let app = TestApp::spawn_in(vars, &site.to_string_lossy()).await;
        OpsApp {
            addr: app.addr,
            state: app.state.clone(),
            http: app.http.clone(),
        }
    }

    /// An address on the server, as given (no base path added).
    fn at(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    async fn get(&self, path: &str) -> reqwest::Response {
        self.http.get(self.at(path)).send().await.expect("request")
    }

    async fn post_turn(&self, path: &str, prompt: &str) -> reqwest::Response {
        self.http
            .post(self.at(path))
            .header("content-type", "application/json")
            .header("accept-encoding", "gzip, deflate, br, zstd")
            .body(
                serde_json::json!({"messages": [{"role": "user", "content": prompt}]}).to_string(),
            )
            .send()
            .await
            .expect("request")
    }

    async fn metrics(&self) -> String {
        self.get("/metrics").await.text().await.expect("metrics")
    }
}

const ASSET: &str = "/* ponder test asset */";

fn site_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("ponder-ops-site-{}-{n}", std::process::id()));
    std::fs::create_dir_all(dir.join("pkg")).expect("site dir");
    std::fs::write(dir.join("pkg/ponder.js"), ASSET).expect("asset");
    dir
}

/// The value of one sample line of the Prometheus text, e.g. `ponder_turns_total{outcome="done"}`.
fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        rest.strip_prefix(' ')?.trim().parse().ok()
    })
}

/// Reads the raw body of an event stream, as a proxy would pass it on.
async fn raw_body(response: reqwest::Response) -> String {
    let bytes = response.bytes().await.expect("body");
    String::from_utf8(bytes.to_vec()).expect("utf-8")
}

/// The events of a turn's raw body, after the `started` event it begins with.
fn decode(raw: &str) -> Vec<TurnEvent> {
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    decoder.push(raw.as_bytes(), &mut events);
    decoder.finish(&mut events);
    after_start(events)
}

/// Where the first event after `started` begins in a turn's raw body: what the keep-alive
/// comments must come before while the upstream is silent.
fn first_event_after_start(raw: &str) -> Option<usize> {
    let started = raw.find("data:")?;
    let next = raw[started..].find("\n\n")? + started + 2;
    raw[next..].find("data:").map(|i| i + next)
}

// ---------- SSE through proxies ----------

#[tokio::test]
async fn the_event_stream_is_never_cached_buffered_or_compressed() {
    let app = OpsApp::spawn(&[]).await;
    let response = app.post_turn("/api/chat", "hello").await;
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["cache-control"], "no-cache");
    assert_eq!(headers["x-accel-buffering"], "no");
    assert!(
        headers.get("content-encoding").is_none(),
        "asked for gzip/br/zstd, got {:?}",
        headers.get("content-encoding")
    );
    let raw = raw_body(response).await;
    assert!(raw.starts_with("data: {"), "{raw:.80}");
    let events = decode(&raw);
    assert_one_terminal(&events);
    assert_eq!(answer_text(&events), ANSWER);
}

#[tokio::test]
async fn the_page_and_the_apis_json_are_gzipped_when_asked_and_plain_otherwise() {
    use std::io::Read;
    let app = OpsApp::spawn(&[]).await;
    let gunzip = |bytes: &[u8]| {
        let mut text = String::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_string(&mut text)
            .expect("gzip");
        text
    };
    let page = app
        .http
        .get(app.at("/"))
        .header("accept-encoding", "gzip, deflate, br, zstd")
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-encoding"], "gzip");
    assert_eq!(page.headers()["cache-control"], "no-cache");
    assert!(page.headers()["vary"]
        .to_str()
        .expect("vary")
        .contains("accept-encoding"));
    let zipped = page.bytes().await.expect("body");
    let html = gunzip(&zipped);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html:.80}");
    assert!(html.contains("class=\"chat-page\""), "{html:.400}");
    assert!(
        zipped.len() * 2 < html.len(),
        "{} of {}",
        zipped.len(),
        html.len()
    );

    let plain = app.get("/").await;
    assert!(plain.headers().get("content-encoding").is_none());
    let plain = plain.text().await.expect("html");
    assert!(plain.contains("class=\"chat-page\""), "{plain:.400}");

    let models = app
        .http
        .post(app.at("/api/models/list"))
        .header("content-type", "application/json")
        .header("accept-encoding", "gzip")
        .body("{}")
        .send()
        .await
        .expect("models");
    assert_eq!(models.status(), 200);
    assert_eq!(models.headers()["content-encoding"], "gzip");
    let list: serde_json::Value =
        serde_json::from_str(&gunzip(&models.bytes().await.expect("body"))).expect("json");
    assert!(
        list["models"].as_array().is_some_and(|m| !m.is_empty()),
        "{list}"
    );
}

#[tokio::test]
async fn a_silent_upstream_gets_keep_alive_comments_and_the_turn_still_completes() {
    let app = OpsApp::spawn(&[("PONDER_KEEP_ALIVE", "0.2")]).await;
    let raw = raw_body(app.post_turn("/api/chat", "[slow] hello").await).await;
    let first_data = first_event_after_start(&raw).expect("events");
    let comments = raw[..first_data].matches(": keep-alive\n\n").count();
    // The demo is silent for 3 s before its first token; at 0.2 s that is about 15 comments.
    assert!(
        comments >= 5,
        "{comments} keep-alive comments in {:?}",
        &raw[..first_data]
    );
    assert!(raw.starts_with("data: {\"type\":\"started\""), "{raw:?}");
    let after_started = raw.find("\n\n").expect("the started frame") + 2;
    assert!(
        raw[after_started..first_data]
            .split(": keep-alive\n\n")
            .all(|rest| rest.is_empty()),
        "only comments between the turn's id and its first event: {:?}",
        &raw[..first_data]
    );
    let events = decode(&raw);
    assert_one_terminal(&events);
    assert_eq!(thinking_text(&events), THINKING);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
}

#[tokio::test]
async fn keep_alive_comments_flow_mid_stream_while_the_model_stalls() {
    let app = OpsApp::spawn(&[("PONDER_KEEP_ALIVE", "0.2"), ("PONDER_IDLE_TIMEOUT", "1.5")]).await;
    let raw = raw_body(app.post_turn("/api/chat", "[stall-mid] hello").await).await;
    let first_thinking = raw.find("\"type\":\"thinking\"").expect("a thinking event");
    let after = &raw[first_thinking..];
    assert!(
        after.matches(": keep-alive\n\n").count() >= 3,
        "keep-alive comments after the reasoning stalled: {after:?}"
    );
    let events = decode(&raw);
    assert_one_terminal(&events);
    match events.last() {
        Some(TurnEvent::Error(Failure { message, .. })) => {
            assert!(message.contains("went silent"), "{message}")
        }
        other => panic!("expected the idle timeout's error, got {other:?}"),
    }
}

#[tokio::test]
async fn keep_alive_comments_flow_while_the_upstream_has_not_sent_its_headers() {
    // An upstream that accepts the connection and says nothing, like a server loading a model.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let upstream = silent.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let url = format!("http://{upstream}/v1");
    let app = OpsApp::spawn(&[
        ("PONDER_UPSTREAM_URL", url.as_str()),
        ("PONDER_KEEP_ALIVE", "0.2"),
        ("PONDER_FIRST_BYTE_TIMEOUT", "1.5"),
    ])
    .await;
    let raw = raw_body(app.post_turn("/api/chat", "hello").await).await;
    let first_data = first_event_after_start(&raw).expect("the timeout's error event");
    assert!(
        raw[..first_data].matches(": keep-alive\n\n").count() >= 3,
        "{:?}",
        &raw[..first_data]
    );
    let events = decode(&raw);
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        matches!(&events[0], TurnEvent::Error(Failure { retryable: true, message, .. }) if message.contains("did not answer")),
        "{events:?}"
    );
}

// ---------- the base path ----------

#[tokio::test]
async fn the_whole_app_lives_under_the_base_path() {
    let app = OpsApp::spawn(&[("PONDER_BASE_PATH", "/ponder/")]).await;

    for path in ["/ponder/", "/ponder"] {
        let page = app.get(path).await;
        assert_eq!(page.status(), 200, "{path}");
        let html = page.text().await.expect("html");
        assert!(
            html.contains(r#"<meta name="ponder-base" content="/ponder">"#),
            "{path}"
        );
        assert!(html.contains(r#"href="/ponder/pkg/ponder.css""#), "{path}");
        assert!(html.contains(r#"href="/ponder/pkg/ponder.js""#), "{path}");
        assert!(html.contains(r#"("/ponder", "pkg", "ponder""#), "{path}");
        assert!(html.contains(r#"href="/ponder/favicon.svg""#), "{path}");
        assert!(html.contains("chat-page"), "{path}: the chat page rendered");
    }

    let asset = app.get("/ponder/pkg/ponder.js").await;
    assert_eq!(asset.status(), 200);
    assert_eq!(asset.text().await.expect("asset"), ASSET);
    assert_eq!(app.get("/pkg/ponder.js").await.status(), 404);

    let turn = app.post_turn("/ponder/api/chat", "hello").await;
    assert_eq!(turn.status(), 200);
    assert_eq!(turn.headers()["content-type"], "text/event-stream");
    let events = decode(&raw_body(turn).await);
    assert_one_terminal(&events);
    assert_eq!(answer_text(&events), ANSWER);
    assert_eq!(app.post_turn("/api/chat", "hello").await.status(), 404);

    let root = app.get("/").await;
    assert_eq!(root.status(), 307);
    assert_eq!(root.headers()["location"], "/ponder/");

    let missing = app.get("/ponder/no-such-page").await;
    assert_eq!(missing.status(), 404);
    let html = missing.text().await.expect("html");
    assert!(
        html.contains(r#"href="/ponder/""#),
        "the way back stays under the base path: {html}"
    );
    assert_eq!(app.get("/elsewhere").await.status(), 404);

    for path in ["/healthz", "/readyz", "/metrics"] {
        assert_eq!(app.get(path).await.status(), 200, "{path}");
        assert_eq!(
            app.get(&format!("/ponder{path}")).await.status(),
            200,
            "/ponder{path}"
        );
    }
}

#[tokio::test]
async fn without_a_base_path_the_app_is_at_the_root() {
    let app = OpsApp::spawn(&[]).await;
    let page = app.get("/").await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains(r#"<meta name="ponder-base" content="">"#));
    assert!(html.contains(r#"href="/pkg/ponder.js""#));
    assert_eq!(app.get("/pkg/ponder.js").await.status(), 200);
    let missing = app.get("/no-such-page").await;
    assert_eq!(missing.status(), 404);
    assert!(missing.text().await.expect("html").contains(r#"href="/""#));
}

#[tokio::test]
async fn hashed_assets_are_named_by_the_page_served_compressed_and_kept_for_a_year() {
    let site = site_dir();
    let stem = "ponder.0123456789abcdef";
    std::fs::write(site.join("pkg/assets.txt"), format!("{stem}\n")).expect("manifest");
    std::fs::write(site.join(format!("pkg/{stem}.js")), ASSET).expect("asset");
    std::fs::write(site.join(format!("pkg/{stem}.js.br")), b"brotli bytes").expect("br");
    std::fs::write(site.join(format!("pkg/{stem}.js.gz")), b"gzip bytes").expect("gz");
    let app = TestApp::spawn_in(&[], &site.to_string_lossy()).await;
    let get = |path: &str, encoding: Option<&str>| {
        let mut req = app.http.get(format!("http://{}{path}", app.addr));
        if let Some(e) = encoding {
            req = req.header("accept-encoding", e);
        }
        req.send()
    };

    let page = get("/", None).await.expect("page");
    assert_eq!(page.headers()["cache-control"], "no-cache");
    let html = page.text().await.expect("html");
    assert!(
        html.contains(&format!(r#"href="/pkg/{stem}.js""#)),
        "{html}"
    );
    assert!(
        html.contains(&format!(r#"href="/pkg/{stem}.wasm""#)),
        "{html}"
    );
    assert!(
        html.contains(&format!(r#"href="/pkg/{stem}.css""#)),
        "{html}"
    );

    let plain = get(&format!("/pkg/{stem}.js"), None).await.expect("asset");
    assert_eq!(plain.status(), 200);
    assert_eq!(
        plain.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert!(plain.headers().get("content-encoding").is_none());
    assert_eq!(plain.text().await.expect("body"), ASSET);

    let br = get(&format!("/pkg/{stem}.js"), Some("gzip, br"))
        .await
        .expect("asset");
    assert_eq!(br.headers()["content-encoding"], "br");
    assert_eq!(
        br.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(br.headers()["vary"], "accept-encoding");
    assert_eq!(br.bytes().await.expect("body").as_ref(), b"brotli bytes");
    let gz = get(&format!("/pkg/{stem}.js"), Some("gzip"))
        .await
        .expect("asset");
    assert_eq!(gz.headers()["content-encoding"], "gzip");

    // The unhashed name is still there for tools, revalidated on every use.
    let unhashed = get("/pkg/ponder.js", None).await.expect("asset");
    assert_eq!(unhashed.status(), 200);
    assert_eq!(unhashed.headers()["cache-control"], "no-cache");
}

// ---------- health, readiness, metrics ----------

#[tokio::test]
async fn health_and_readiness_with_the_demo_model() {
    let app = OpsApp::spawn(&[]).await;
    let health = app.get("/healthz").await;
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.expect("body"), "ok\n");
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status(), 200);
    assert_eq!(ready.text().await.expect("body"), "ready\n");
}

#[tokio::test]
async fn an_unreachable_upstream_is_not_ready_but_the_process_is_healthy() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let url = format!("http://127.0.0.1:{port}/v1");
    let key = "sk-ready-secret-4242";
    let app = OpsApp::spawn(&[
        ("PONDER_UPSTREAM_URL", url.as_str()),
        ("PONDER_API_KEY", key),
    ])
    .await;
    assert_eq!(app.get("/healthz").await.status(), 200);
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status(), 503);
    let body = ready.text().await.expect("body");
    assert!(body.contains("unreachable"), "{body}");
    assert!(!body.contains(key), "{body}");
}

#[tokio::test]
async fn metrics_count_a_turn_of_each_outcome() {
    let app = OpsApp::spawn(&[("PONDER_KEEP_ALIVE", "0.1")]).await;
    let before = app.metrics().await;
    for outcome in ["done", "error", "client_closed"] {
        let line = format!("ponder_turns_total{{outcome=\"{outcome}\"}}");
        assert_eq!(
            sample(&before, &line),
            Some(0.0),
            "{line} exported before any turn"
        );
    }

    let done = decode(&raw_body(app.post_turn("/api/chat", "hello").await).await);
    assert!(matches!(done.last(), Some(TurnEvent::Done { .. })));
    let error = decode(&raw_body(app.post_turn("/api/chat", "[500] hello").await).await);
    assert!(matches!(
        error.last(),
        Some(TurnEvent::Error(Failure { .. }))
    ));

    // The browser goes away while the model is still silent.
    let closed = app.post_turn("/api/chat", "[slow] hello").await;
    assert_eq!(closed.status(), 200);
    let mut stream = closed.bytes_stream();
    let first = stream.next().await.expect("a first frame").expect("bytes");
    assert!(
        first.starts_with(b"data: {\"type\":\"started\""),
        "{first:?}"
    );
    let second = stream.next().await.expect("a second frame").expect("bytes");
    assert_eq!(&second[..], b": keep-alive\n\n");
    drop(stream);

    let deadline = Instant::now() + Duration::from_secs(10);
    let metrics = loop {
        let m = app.metrics().await;
        if sample(&m, "ponder_turns_total{outcome=\"client_closed\"}") == Some(1.0)
            || Instant::now() > deadline
        {
            break m;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        sample(&metrics, "ponder_turns_total{outcome=\"done\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_turns_total{outcome=\"error\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_turns_total{outcome=\"client_closed\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_active_streams"),
        Some(0.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_upstream_errors_total{kind=\"http_5xx\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_turn_duration_seconds_count"),
        Some(3.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_time_to_first_thinking_seconds_count"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_time_to_first_answer_seconds_count"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_thinking_chars_total"),
        Some(THINKING.chars().count() as f64),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, "ponder_answer_chars_total"),
        Some(ANSWER.chars().count() as f64),
        "{metrics}"
    );
    assert!(
        metrics.trim_end().ends_with("# EOF"),
        "OpenMetrics text ends with # EOF"
    );
    assert!(app.state.metrics.active_streams() == 0);
}

#[tokio::test]
async fn metrics_are_served_as_openmetrics_text() {
    let app = OpsApp::spawn(&[]).await;
    let response = app.get("/metrics").await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .expect("ascii")
        .starts_with("application/openmetrics-text"));
    let text = response.text().await.expect("text");
    // Upstream errors appear with their first kind; the rest are there from the start.
    for family in [
        "ponder_turns",
        "ponder_active_streams",
        "ponder_time_to_first_thinking_seconds",
        "ponder_time_to_first_answer_seconds",
        "ponder_turn_duration_seconds",
        "ponder_thinking_chars",
        "ponder_answer_chars",
    ] {
        assert!(
            text.contains(&format!("# TYPE {family} ")),
            "{family} in {text}"
        );
    }
}

// ---------- the process: logs and shutdown ----------

/// CPU time (ns) of the process's serving threads (`ponder-N`), from /proc.
#[cfg(target_os = "linux")]
fn serving_thread_cpu(pid: u32) -> HashMap<String, u64> {
    let mut threads = HashMap::new();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc task list");
    for task in tasks.map_while(Result::ok) {
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let name = name.trim();
        if !name.starts_with("ponder-") {
            continue;
        }
        let schedstat = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
        let ns = schedstat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .expect("schedstat's CPU time");
        threads.insert(name.to_string(), ns);
    }
    threads
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn ponder_threads_sets_the_serving_threads_and_each_takes_a_share_of_the_connections() {
    let process = Process::start(&[("PONDER_THREADS", "3")]);
    let pid = process.child.id();
    let before = serving_thread_cpu(pid);
    let mut names: Vec<&String> = before.keys().collect();
    names.sort();
    assert_eq!(names, ["ponder-0", "ponder-1", "ponder-2"]);
    // Each request comes on a new connection; the connections go to the threads in turn.
    for _ in 0..3 {
        let events = after_start(read_events(post(&process.url("/api/chat"), "hello").await).await);
        assert_one_terminal(&events);
        assert_eq!(answer_text(&events), ANSWER);
    }
    let after = serving_thread_cpu(pid);
    for (name, ns) in &before {
        assert!(
            after.get(name).is_some_and(|later| later > ns),
            "{name} served no turn: {before:?} then {after:?}"
        );
    }
}

async fn post(url: &str, prompt: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(serde_json::json!({"messages": [{"role": "user", "content": prompt}]}).to_string())
        .send()
        .await
        .expect("request")
}

#[tokio::test]
async fn json_logs_are_one_object_per_line_and_never_hold_the_api_key() {
    let key = "sk-log-secret-31337-abcdef";
    let mut process = Process::start(&[("PONDER_API_KEY", key), ("RUST_LOG", "debug")]);
    // The demo's [401] echoes the key it got in its error body.
    let events =
        after_start(read_events(post(&process.url("/api/chat"), "[401] hello").await).await);
    assert!(matches!(
        events.last(),
        Some(TurnEvent::Error(Failure {
            retryable: false,
            ..
        }))
    ));
    assert!(!format!("{events:?}").contains(key));
    let events = after_start(read_events(post(&process.url("/api/chat"), "hello").await).await);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
    process.terminate();
    assert!(process
        .wait_exit(Duration::from_secs(10))
        .is_some_and(|s| s.success()));

    let lines = process.all_lines();
    let mut outcomes = Vec::new();
    for line in &lines {
        assert!(
            !line.contains(key),
            "the key leaked into a log line: {line}"
        );
        let value: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        // A field named like the event's message would shadow it once flattened.
        assert_eq!(line.matches("\"message\":").count(), 1, "{line}");
        assert!(
            value["level"].is_string() && value["timestamp"].is_string(),
            "{line}"
        );
        if value["message"] == "turn" {
            outcomes.push(value["outcome"].as_str().expect("outcome").to_string());
        }
    }
    assert_eq!(outcomes, ["error", "done"], "{lines:#?}");
    let failure = lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .find(|v| v["message"] == "upstream failure")
        .unwrap_or_else(|| panic!("an upstream failure line: {lines:#?}"));
    assert_eq!(failure["kind"], "http_4xx");
    assert!(
        failure["detail"]
            .as_str()
            .is_some_and(|d| d.contains("[redacted]")),
        "the echoed key was redacted, not dropped: {failure}"
    );
}

#[tokio::test]
async fn each_request_has_a_span_with_its_method_path_status_and_duration() {
    let mut process = Process::start(&[("RUST_LOG", "ponder=debug")]);
    let events =
        after_start(read_events(post(&process.url("/api/chat"), "[no-think] hi").await).await);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
    process.terminate();
    assert!(process.wait_exit(Duration::from_secs(10)).is_some());
    let lines: Vec<serde_json::Value> = process
        .all_lines()
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let response = lines
        .iter()
        .find(|v| v["message"] == "response")
        .unwrap_or_else(|| panic!("a response line: {lines:#?}"));
    assert_eq!(response["status"], 200);
    assert!(response["duration_ms"].as_f64().is_some(), "{response}");
    assert_eq!(response["span"]["method"], "POST", "{response}");
    assert_eq!(response["span"]["path"], "/api/chat", "{response}");
    let turn = lines
        .iter()
        .find(|v| v["message"] == "turn")
        .unwrap_or_else(|| panic!("a turn line: {lines:#?}"));
    assert_eq!(
        turn["span"]["path"], "/api/chat",
        "the turn's line is in its request's span"
    );
    assert!(lines
        .iter()
        .any(|v| v["message"] == "response body ended" && v["duration_ms"].as_f64().is_some()));
}

#[tokio::test]
async fn sigterm_lets_a_short_turn_finish_and_exits_zero() {
    let mut process = Process::start(&[
        ("PONDER_SHUTDOWN_GRACE", "20"),
        ("PONDER_DEMO_DELAY_MS", "15"),
    ]);
    let response = post(&process.url("/api/chat"), "hello").await;
    let mut stream = response.bytes_stream();
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    let first = stream.next().await.expect("a first frame").expect("bytes");
    decoder.push(&first, &mut events);
    process.terminate();
    while let Some(chunk) = stream.next().await {
        decoder.push(&chunk.expect("chunk"), &mut events);
    }
    decoder.finish(&mut events);
    assert_one_terminal(&events);
    assert!(
        matches!(events.last(), Some(TurnEvent::Done { .. })),
        "{events:?}"
    );
    assert_eq!(answer_text(&events), ANSWER);
    // It leaves as soon as the turn is done, long before the 20 s grace period.
    let status = process.wait_exit(Duration::from_secs(10));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}

#[tokio::test]
async fn sigterm_ends_a_turn_that_outlasts_the_grace_period_with_an_error_event() {
    let mut process = Process::start(&[("PONDER_SHUTDOWN_GRACE", "1")]);
    let response = post(&process.url("/api/chat"), "[stall-mid] hello").await;
    let mut stream = response.bytes_stream();
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    while !events
        .iter()
        .any(|e| matches!(e, TurnEvent::Thinking { .. }))
    {
        let chunk = stream.next().await.expect("frames").expect("bytes");
        decoder.push(&chunk, &mut events);
    }
    let signalled = Instant::now();
    process.terminate();

    // New connections are refused at once.
    let refused_by = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(process.addr).is_ok() {
        assert!(Instant::now() < refused_by, "still accepting after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }

    while let Some(chunk) = stream.next().await {
        decoder.push(&chunk.expect("chunk"), &mut events);
    }
    decoder.finish(&mut events);
    assert_one_terminal(&events);
    match events.last() {
        Some(TurnEvent::Error(
            failure @ Failure {
                message, retryable, ..
            },
        )) => {
            assert!(message.contains("shutting down"), "{message}");
            assert!(retryable);
            assert_eq!(failure.code, ErrorCode::ShuttingDownMidAnswer);
        }
        other => panic!("expected an error event, got {other:?}"),
    }
    assert!(
        signalled.elapsed() >= Duration::from_millis(900),
        "the grace period was given"
    );
    let status = process.wait_exit(Duration::from_secs(10));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    let lines = process.all_lines();
    assert!(
        lines.iter().any(|l| l.contains("\"outcome\":\"error\"")),
        "the cut turn is logged: {lines:#?}"
    );
}
