//! Resumable turns over real HTTP: a stored turn runs on the server whether or not anyone
//! watches; every event carries its sequence number, and a viewer that reconnects (or opens the
//! conversation fresh) gets exactly what it missed, then the live tail. Stop is a request, from
//! any viewer of the turn's owner; another user finds nothing. With two replicas on one
//! PostgreSQL, a viewer on either sees the same turn, and the survivors end the turns of a
//! replica that was killed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::time::{Duration, Instant};

use common::browser::Browser;
use common::process::Process;
use common::TestApp;
use futures::StreamExt;
use ponder::domain::history::VersionStatus;
use ponder::domain::TurnEvent;
use ponder::wire::sse::{SseDecoder, SseFrame};
use serde_json::{json, Value};

/// One frame of a turn's stream: its sequence number (none for the `clock`) and its event.
type Numbered = (Option<u64>, TurnEvent);

fn numbered(frames: Vec<SseFrame>) -> Vec<Numbered> {
    frames
        .into_iter()
        .map(|f| {
            let event = serde_json::from_str(&f.data).expect("a turn event");
            (f.id.map(|id| id.parse().expect("a numeric id")), event)
        })
        .collect()
}

/// Reads `response` until `stop_after` numbered events have arrived (or its end), keeping the
/// frames; the connection is dropped when this returns.
async fn read_frames(response: reqwest::Response, stop_after: Option<usize>) -> Vec<Numbered> {
    let mut decoder = SseDecoder::new();
    let mut frames = Vec::new();
    let mut out: Vec<Numbered> = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let Ok(chunk) = chunk else { break };
        decoder.push(&chunk, &mut frames).expect("no line limit");
        out.extend(numbered(std::mem::take(&mut frames)));
        if let Some(n) = stop_after {
            let got: Vec<Numbered> = out.iter().filter(|(id, _)| id.is_some()).cloned().collect();
            if got.len() >= n {
                let clocks = out.into_iter().filter(|(id, _)| id.is_none());
                return clocks.chain(got.into_iter().take(n)).collect();
            }
        }
    }
    decoder.finish(&mut frames);
    out.extend(numbered(frames));
    out
}

/// A turn's response read in two parts: its first frames, then the rest to its end.
struct Reading {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    decoder: SseDecoder,
}

impl Reading {
    fn of(response: reqwest::Response) -> Reading {
        Reading {
            body: response.bytes_stream().boxed(),
            decoder: SseDecoder::new(),
        }
    }

    /// The frames of the first chunk that holds any.
    async fn head(&mut self) -> Vec<Numbered> {
        let mut frames = Vec::new();
        while frames.is_empty() {
            let chunk = self.body.next().await.expect("bytes").expect("chunk");
            self.decoder.push(&chunk, &mut frames).expect("frames");
        }
        numbered(frames)
    }

    /// Every frame from here to the end.
    async fn rest(mut self) -> Vec<Numbered> {
        let mut frames = Vec::new();
        while let Some(chunk) = self.body.next().await {
            self.decoder
                .push(&chunk.expect("chunk"), &mut frames)
                .expect("frames");
        }
        self.decoder.finish(&mut frames);
        numbered(frames)
    }
}

fn without_clock(frames: &[Numbered]) -> Vec<Numbered> {
    frames
        .iter()
        .filter(|(id, _)| id.is_some())
        .cloned()
        .collect()
}

fn turn_id(frames: &[Numbered]) -> String {
    match frames.first() {
        Some((Some(1), TurnEvent::Started { turn })) => turn.clone(),
        other => panic!("a stored turn's first event is its id, numbered 1: {other:?}"),
    }
}

fn stored_where(frames: &[Numbered]) -> (String, String) {
    match frames.get(1) {
        Some((
            Some(2),
            TurnEvent::Turn {
                conversation,
                message,
                ..
            },
        )) => (conversation.clone(), message.clone()),
        other => panic!("then where it is stored, numbered 2: {other:?}"),
    }
}

impl Browser {
    /// Joins turn `id` after event `after` (sent as `Last-Event-ID`, as an EventSource does).
    async fn join(&self, id: &str, after: Option<u64>) -> reqwest::Response {
        let mut req = self
            .http
            .get(format!("{}/api/turn/events?turn={id}", self.base));
        if let Some(after) = after {
            req = req.header("last-event-id", after.to_string());
        }
        if let Some(cookie) = self.session.lock().expect("lock").clone() {
            req = req.header("cookie", cookie);
        }
        req.send().await.expect("request")
    }

    async fn start(&self, body: Value) -> reqwest::Response {
        let response = self
            .request("/api/chat", body.to_string())
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 200);
        response
    }
}

/// A model server that plays one recorded stream (a DeepSeek reasoning turn, Chat Completions)
/// frame by frame, `pace` apart, for every request.
async fn recorded_upstream(pace: Duration) -> String {
    let body = common::fixtures::body("openai-chat/deepseek-reasoning.chunks.txt", 0);
    let text = String::from_utf8(body).expect("utf-8");
    let frames: Vec<String> = text.split_inclusive("\n\n").map(str::to_string).collect();
    let app = axum::Router::new().fallback(move || {
        let frames = frames.clone();
        async move {
            let stream = futures::stream::iter(frames).then(move |frame| async move {
                tokio::time::sleep(pace).await;
                Ok::<_, std::convert::Infallible>(bytes::Bytes::from(frame))
            });
            (
                [("content-type", "text/event-stream")],
                axum::body::Body::from_stream(stream),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_that_reconnects_after_any_event_gets_exactly_what_it_missed() {
    let upstream = recorded_upstream(Duration::from_millis(4)).await;
    let app = TestApp::spawn(&[
        ("PONDER_AUTH", "password"),
        ("PONDER_UPSTREAM_URL", &upstream),
    ])
    .await;
    let (alice, _) = Browser::alice_and_bob(&app).await;
    // A first turn, read whole, tells how many events the recorded turn makes.
    let whole = read_frames(alice.start(json!({"content": "first"})).await, None).await;
    let count = whole.len();
    assert!(count > 20, "{count} events");
    let (conversation, _) = stored_where(&whole);

    // The same recording again: every other viewer joins at once, reads k events, drops its
    // connection and comes back with Last-Event-ID k, for every k.
    let response = alice
        .start(json!({"conversation": conversation, "content": "again"}))
        .await;
    let mut first_viewer = Reading::of(response);
    let head = first_viewer.head().await;
    let turn = turn_id(&head);
    let mut viewers = Vec::new();
    for k in 0..=count {
        let alice = alice_copy(&alice);
        let turn = turn.clone();
        viewers.push(tokio::spawn(async move {
            let before = read_frames(alice.join(&turn, None).await, Some(k)).await;
            assert!(
                matches!(before.first(), Some((None, TurnEvent::Clock { .. }))),
                "a joining viewer is told the turn's age first: {before:?}"
            );
            let had = without_clock(&before);
            let last = had.last().and_then(|(id, _)| *id);
            let after = read_frames(alice.join(&turn, last).await, None).await;
            let mut all = had;
            all.extend(without_clock(&after));
            (k, all)
        }));
    }
    let mut reference = head;
    reference.extend(first_viewer.rest().await);
    let ids: Vec<u64> = reference.iter().filter_map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        (1..=reference.len() as u64).collect::<Vec<_>>(),
        "numbered 1, 2, 3…"
    );
    assert_eq!(
        reference.len(),
        count,
        "the same recording makes the same turn"
    );
    assert!(reference.last().is_some_and(|(_, e)| e.is_terminal()));
    for viewer in viewers {
        let (k, seen) = viewer.await.expect("viewer");
        assert_eq!(
            seen, reference,
            "reconnected after {k} events: no gap, no duplicate, in order"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_joining_viewer_counts_thinking_from_the_turns_real_start() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password"), ("PONDER_DEMO_DELAY_MS", "30")]).await;
    let (alice, bob) = Browser::alice_and_bob(&app).await;
    let response = alice
        .start(json!({"content": "[long-think] take your time"}))
        .await;
    let mut first = Reading::of(response);
    let turn = turn_id(&first.head().await);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let joined = read_frames(alice.join(&turn, None).await, Some(4)).await;
    let Some((None, TurnEvent::Clock { turn_ms })) = joined.first() else {
        panic!("the clock first: {joined:?}");
    };
    assert!(
        *turn_ms >= 1_100,
        "the turn's age, not the viewer's: {turn_ms}"
    );
    let start = joined
        .iter()
        .find_map(|(_, e)| match e {
            TurnEvent::ThinkingStart { at_ms, .. } => Some(*at_ms),
            _ => None,
        })
        .expect("the block's start is replayed");
    let at = start.expect("a stored turn's block says when it began");
    assert!(
        at < *turn_ms,
        "the block began {at} ms into a turn {turn_ms} ms old"
    );

    // Another user finds no such turn, to join or to stop; nor does a made-up id.
    assert_eq!(bob.join(&turn, None).await.status(), 404);
    assert_eq!(bob.call("turn/stop", json!({"turn": turn})).await.0, 404);
    assert_eq!(alice.join("no-such-turn", None).await.status(), 404);
    // The owner's Stop ends it for the first viewer too.
    alice.ok("turn/stop", json!({"turn": turn})).await;
    let rest = first.rest().await;
    assert!(
        matches!(rest.last(), Some((Some(_), e)) if e.is_stop()),
        "{:?}",
        rest.last()
    );
}

/// The demo model's counters (requests, disconnects), read over HTTP.
async fn demo_stats(app: &TestApp) -> Value {
    let base = app.state.upstream_base.clone();
    let root = base.trim_end_matches('/').trim_end_matches("/v1");
    reqwest::get(format!("{root}/demo/stats"))
        .await
        .expect("stats")
        .json()
        .await
        .expect("json")
}

async fn stored_version(browser: &Browser, conversation: &str) -> Value {
    let conv = browser
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    conv["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["versions"][m["active"].as_u64().unwrap_or(0) as usize].clone())
        .expect("an answer")
}

async fn wait_for_status(
    browser: &Browser,
    conversation: &str,
    status: &str,
    within: Duration,
) -> Value {
    let until = Instant::now() + within;
    loop {
        let version = stored_version(browser, conversation).await;
        if version["status"] == status {
            return version;
        }
        assert!(
            Instant::now() < until,
            "still {} after {within:?}: {version}",
            version["status"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwatched_turn_finishes_and_is_saved() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password"), ("PONDER_DEMO_DELAY_MS", "5")]).await;
    let (alice, _) = Browser::alice_and_bob(&app).await;
    let response = alice.start(json!({"content": "leave at once"})).await;
    let frames = read_frames(response, Some(2)).await;
    let (conversation, _) = stored_where(&frames);
    // The reader has gone; the turn goes on and is saved whole.
    let version = wait_for_status(&alice, &conversation, "done", Duration::from_secs(20)).await;
    assert_eq!(version["content"], ponder::server::demo_upstream::ANSWER);
    assert!(
        version.get("turn").is_none(),
        "a finished answer names no running turn"
    );
    let block = version["blocks"][0]["id"].clone();
    assert_eq!(
        alice.ok("blocks/text", json!({"id": block})).await,
        ponder::server::demo_upstream::THINKING
    );
    assert_eq!(
        demo_stats(&app).await["disconnected"],
        0,
        "the model was never cut off"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_orphan_turns_stop_an_unwatched_turn_stops_after_the_grace_unless_someone_comes_back()
{
    let app = TestApp::spawn(&[
        ("PONDER_AUTH", "password"),
        ("PONDER_DEMO_DELAY_MS", "30"),
        ("PONDER_ORPHAN_TURNS", "stop"),
        ("PONDER_ORPHAN_GRACE", "2"),
    ])
    .await;
    let (alice, _) = Browser::alice_and_bob(&app).await;

    // Left, then joined again within the grace: it goes on.
    let frames = read_frames(
        alice.start(json!({"content": "[long-think] one"})).await,
        Some(2),
    )
    .await;
    let turn = turn_id(&frames);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let back = alice.join(&turn, None).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let (conversation, _) = stored_where(&frames);
    assert_eq!(
        stored_version(&alice, &conversation).await["status"],
        "streaming"
    );
    drop(back);

    // Left for good: stopped once the grace is over, what arrived kept, the model cut off.
    let version = wait_for_status(&alice, &conversation, "stopped", Duration::from_secs(10)).await;
    assert!(
        version["blocks"][0]["words"].as_u64().unwrap_or(0) > 0,
        "{version}"
    );
    let until = Instant::now() + Duration::from_secs(3);
    while demo_stats(&app).await["disconnected"].as_u64().unwrap_or(0) < 1 {
        assert!(
            Instant::now() < until,
            "the model server was never disconnected"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_from_a_second_viewer_stops_the_turn_for_both_and_closes_the_upstream() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password"), ("PONDER_DEMO_DELAY_MS", "30")]).await;
    let (alice, _) = Browser::alice_and_bob(&app).await;
    let response = alice
        .start(json!({"content": "[long-think] stop me"}))
        .await;
    let first = tokio::spawn(read_frames(response, None));
    let (turn, conversation) = loop {
        let conversations = alice.ok("conversations/list", json!({})).await;
        if let Some(id) = conversations[0]["id"].as_str() {
            let version = stored_version(&alice, id).await;
            if let Some(turn) = version["turn"].as_str() {
                break (turn.to_string(), id.to_string());
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // A second tab opens the conversation: the stored answer names its running turn.
    let second = tokio::spawn({
        let tab = alice_copy(&alice);
        let turn = turn.clone();
        async move { read_frames(tab.join(&turn, None).await, None).await }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let disconnected = demo_stats(&app).await["disconnected"].as_u64().unwrap_or(0);
    let asked = Instant::now();
    alice.ok("turn/stop", json!({"turn": turn})).await;
    loop {
        if demo_stats(&app).await["disconnected"].as_u64().unwrap_or(0) > disconnected {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "the upstream is closed within a second of Stop"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let first = first.await.expect("first viewer");
    let second = second.await.expect("second viewer");
    assert_eq!(
        without_clock(&second),
        first,
        "both viewers saw the same turn"
    );
    assert!(
        first.last().is_some_and(|(_, e)| e.is_stop()),
        "{:?}",
        first.last()
    );
    common::assert_one_terminal(&first.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>());
    let version = stored_version(&alice, &conversation).await;
    assert_eq!(version["status"], "stopped");
    assert_eq!(
        VersionStatus::parse(version["status"].as_str().unwrap_or("")),
        VersionStatus::Stopped
    );
    assert_eq!(
        alice.call("turn/stop", json!({"turn": turn})).await.0,
        404,
        "it no longer runs"
    );
}

fn alice_copy(alice: &Browser) -> Browser {
    Browser {
        http: reqwest::Client::new(),
        base: alice.base.clone(),
        bearer: None,
        session: std::sync::Mutex::new(alice.session.lock().expect("lock").clone()),
    }
}

/// A replica that beats every 0.3 s and takes another for dead after 1.5 s of silence.
fn replica(database: &str) -> Process {
    Process::start(&[
        ("PONDER_AUTH", "password"),
        ("PONDER_DATABASE_URL", database),
        ("PONDER_DEMO_DELAY_MS", "20"),
        ("PONDER_HEARTBEAT", "0.3"),
        ("PONDER_REPLICA_TIMEOUT", "1.5"),
    ])
}

/// Two replicas on a fresh database of the harness's PostgreSQL, and a browser of A signed in
/// as their first admin.
async fn two_replicas() -> (String, Process, Process, Browser) {
    let database = common::postgres::database().await;
    let a = replica(&database);
    let b = replica(&database);
    let on_a = Browser::at(a.url(""));
    on_a.ok(
        "auth/setup",
        json!({"name": "root", "password": "root-password-1"}),
    )
    .await;
    (database, a, b, on_a)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_viewers_on_two_replicas_see_one_turn_and_either_stops_it() {
    let (database, a, b, on_a) = two_replicas().await;
    let on_b = on_a.moved_to(b.url(""));

    // A turn started on A, read whole on A and, joined a moment later, on B.
    let response = on_a.start(json!({"content": "why is the sky blue?"})).await;
    let mut reading = Reading::of(response);
    let mut on_a_frames = reading.head().await;
    let turn = turn_id(&on_a_frames);
    let joined = tokio::spawn({
        let on_b = on_a.moved_to(b.url(""));
        let turn = turn.clone();
        async move { read_frames(on_b.join(&turn, None).await, None).await }
    });
    on_a_frames.extend(reading.rest().await);
    let on_b_frames = joined.await.expect("viewer on B");
    assert_eq!(
        without_clock(&on_b_frames),
        on_a_frames,
        "the same turn, event for event"
    );
    assert!(matches!(
        on_a_frames.last(),
        Some((_, TurnEvent::Done { .. }))
    ));

    // Another long one on A, stopped from B: both viewers end stopped, the answer is stored so.
    let response = on_a
        .start(json!({"content": "[long-think] stop me from B"}))
        .await;
    let first = tokio::spawn(read_frames(response, None));
    let (turn, conversation) = loop {
        let list = on_b.ok("conversations/list", json!({})).await;
        let id = list[0]["id"].as_str().unwrap_or_default().to_string();
        let version = stored_version(&on_b, &id).await;
        if let Some(turn) = version["turn"].as_str() {
            break (turn.to_string(), id);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let second = tokio::spawn({
        let on_b = on_a.moved_to(b.url(""));
        let turn = turn.clone();
        async move { read_frames(on_b.join(&turn, None).await, None).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    on_b.ok("turn/stop", json!({"turn": turn})).await;
    let first = first.await.expect("viewer on A");
    let second = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("the viewer on B ends")
        .expect("viewer on B");
    assert!(
        first.last().is_some_and(|(_, e)| e.is_stop()),
        "{:?}",
        first.last()
    );
    assert_eq!(without_clock(&second), first);
    assert_eq!(
        stored_version(&on_b, &conversation).await["status"],
        "stopped"
    );
    drop((a, b));
    common::postgres::drop_database(&database).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turns_of_a_killed_replica_end_interrupted_for_their_viewers() {
    let (database, mut a, b, on_a) = two_replicas().await;
    let on_b = on_a.moved_to(b.url(""));
    let response = on_a
        .start(json!({"content": "[long-think] then die"}))
        .await;
    let head = read_frames(response, Some(3)).await;
    let turn = turn_id(&head);
    let (conversation, _) = stored_where(&head);
    let watching = tokio::spawn({
        let on_b = on_a.moved_to(b.url(""));
        let turn = turn.clone();
        async move { read_frames(on_b.join(&turn, None).await, None).await }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    let killed = Instant::now();
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(a.child.id() as i32, libc::SIGKILL);
    }
    let _ = a.wait_exit(Duration::from_secs(5));
    let seen = tokio::time::timeout(Duration::from_secs(15), watching)
        .await
        .expect("the viewer on B is told")
        .expect("viewer");
    let took = killed.elapsed();
    assert!(
        took < Duration::from_secs(6),
        "within heartbeat + timeout + a read: {took:?}"
    );
    let Some((Some(_), TurnEvent::Error(failure))) = seen.last() else {
        panic!(
            "the turn ends with an error for its viewers: {:?}",
            seen.last()
        );
    };
    assert!(failure.retryable);
    assert!(
        failure.message.contains("stopped before it finished"),
        "{}",
        failure.message
    );
    assert!(
        seen.iter()
            .any(|(_, e)| matches!(e, TurnEvent::Thinking { .. })),
        "what arrived before stays"
    );
    let version = stored_version(&on_b, &conversation).await;
    assert_eq!(version["status"], "interrupted", "{version}");
    assert!(version.get("turn").is_none());
    // Joining it now replays the end the survivors wrote.
    let again = read_frames(on_b.join(&turn, None).await, None).await;
    assert!(
        matches!(again.last(), Some((Some(_), TurnEvent::Error(_)))),
        "{:?}",
        again.last()
    );
    drop(b);
    common::postgres::drop_database(&database).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_sigterm_an_unwatched_turn_gets_the_grace_and_is_saved_then_the_process_exits() {
    let database = common::temp_database();
    let mut process = Process::start(&[
        ("PONDER_DATABASE_URL", &database),
        ("PONDER_SHUTDOWN_GRACE", "20"),
        ("PONDER_DEMO_DELAY_MS", "15"),
    ]);
    let local = Browser::at(process.url(""));
    let head = read_frames(local.start(json!({"content": "finish me"})).await, Some(2)).await;
    let (conversation, _) = stored_where(&head);
    // Nobody watches it any more; the server is told to stop.
    process.terminate();
    let status = process.wait_exit(Duration::from_secs(20));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    let again = Process::start(&[("PONDER_DATABASE_URL", &database)]);
    let version = stored_version(&Browser::at(again.url("")), &conversation).await;
    assert_eq!(version["status"], "done", "{version}");
    assert_eq!(version["content"], ponder::server::demo_upstream::ANSWER);

    // One that outlasts the grace ends with the shutdown's error, saved as such.
    let mut process = Process::start(&[
        ("PONDER_DATABASE_URL", &database),
        ("PONDER_SHUTDOWN_GRACE", "1"),
    ]);
    drop(again);
    let local = Browser::at(process.url(""));
    let head = read_frames(
        local.start(json!({"content": "[stall-mid] hang"})).await,
        Some(2),
    )
    .await;
    let (conversation, _) = stored_where(&head);
    let signalled = Instant::now();
    process.terminate();
    let status = process.wait_exit(Duration::from_secs(20));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    assert!(
        signalled.elapsed() >= Duration::from_millis(900),
        "the grace was given"
    );
    let again = Process::start(&[("PONDER_DATABASE_URL", &database)]);
    let version = stored_version(&Browser::at(again.url("")), &conversation).await;
    assert_eq!(version["status"], "error", "{version}");
    assert!(
        version["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("shutting down")),
        "{version}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_stops_cleanly_is_not_taken_for_dead() {
    let (database, mut a, b, on_a) = two_replicas().await;
    let frames = read_frames(on_a.start(json!({"content": "short"})).await, None).await;
    let turn = turn_id(&frames);
    let (conversation, _) = stored_where(&frames);
    assert!(matches!(frames.last(), Some((_, TurnEvent::Done { .. }))));
    a.terminate();
    let status = a.wait_exit(Duration::from_secs(20));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    // Longer than the replica timeout: the survivor would have reaped A by now.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let on_b = on_a.moved_to(b.url(""));
    assert_eq!(stored_version(&on_b, &conversation).await["status"], "done");
    let again = read_frames(on_b.join(&turn, None).await, None).await;
    assert_eq!(
        without_clock(&again),
        frames,
        "the log ends as the turn did, nothing added"
    );
    drop(b);
    common::postgres::drop_database(&database).await;
}
