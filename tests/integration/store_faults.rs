//! The history database failing under a running server: locked by another writer (SQLite),
//! full (a file-size limit on the real process), gone (its PostgreSQL database dropped). Each
//! time the reader gets a clear error (a JSON body before the stream, an `error` event inside
//! it), nothing half-written stays behind, and the server goes on serving.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::time::{Duration, Instant};

use common::browser::Browser;
use common::process::Process;
use common::*;
use ponder::domain::TurnEvent;
use serde_json::{json, Value};

fn stored_at(events: &[TurnEvent]) -> String {
    match events.get(1) {
        Some(TurnEvent::Turn { conversation, .. }) => conversation.clone(),
        other => panic!("a stored turn starts with its id, then where it is stored, not {other:?}"),
    }
}

async fn raw_turn(me: &Browser, body: Value) -> (u16, String) {
    let response = me
        .request("/api/chat", body.to_string())
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

fn message_count(conversation: &Value) -> usize {
    conversation["messages"].as_array().map_or(0, Vec::len)
}

/// Another program holds SQLite's write lock longer than Ponder waits for it.
async fn hold_write_lock(database: &str) -> sqlx::AnyConnection {
    sqlx::any::install_default_drivers();
    let path = database.trim_start_matches("sqlite://");
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&format!("sqlite://{path}"))
        .await
        .expect("a second connection");
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut conn)
        .await
        .expect("the write lock");
    conn
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_database_refuses_the_turn_clearly_and_loses_nothing() {
    let database = temp_database();
    let app = TestApp::spawn(&[("PONDER_DATABASE_URL", &database)]).await;
    let me = Browser::new(&app);
    let (status, events) = me.turn(json!({"content": "before the lock"})).await;
    assert_eq!(status, 200);
    let conversation = stored_at(&events);

    let mut lock = hold_write_lock(&database).await;
    let started = Instant::now();
    let (status, body) = raw_turn(
        &me,
        json!({"conversation": conversation, "content": "while locked"}),
    )
    .await;
    assert_eq!(status, 503, "{body}");
    let failure: Value = serde_json::from_str(&body).expect("a JSON error body");
    assert!(
        failure["message"]
            .as_str()
            .is_some_and(|m| m.contains("history database is unavailable")),
        "{failure}"
    );
    assert_eq!(failure["retryable"], true);
    assert_eq!(failure["code"], "database_unavailable");
    assert!(started.elapsed() < Duration::from_secs(30));
    // Reading still works (WAL), and so does everything that does not write.
    let read = me
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    assert_eq!(message_count(&read), 2);
    let health = app
        .http
        .get(app.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status().as_u16(), 200);
    let (status, events) = me
        .turn(json!({"messages": [{"role": "user", "content": "a turn that stores nothing"}]}))
        .await;
    assert_eq!(status, 200);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));

    sqlx::query("ROLLBACK")
        .execute(&mut lock)
        .await
        .expect("release");
    drop(lock);
    // Nothing of the refused turn was kept; the next one is stored whole.
    let read = me
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    assert_eq!(message_count(&read), 2, "{read}");
    let (status, events) = me
        .turn(json!({"conversation": conversation, "content": "after the lock"}))
        .await;
    assert_eq!(status, 200);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
    let read = me
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    assert_eq!(message_count(&read), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_taken_mid_stream_ends_the_turn_with_an_error_event() {
    let database = temp_database();
    let app = TestApp::spawn(&[
        ("PONDER_DATABASE_URL", &database),
        ("PONDER_DEMO_DELAY_MS", "60"),
    ])
    .await;
    let me = Browser::new(&app);
    let response = me
        .request(
            "/api/chat",
            json!({"content": "[long] take your time"}).to_string(),
        )
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 200);
    let database_for_lock = database.clone();
    let locker = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let mut lock = hold_write_lock(&database_for_lock).await;
        tokio::time::sleep(Duration::from_secs(12)).await;
        let _ = sqlx::query("ROLLBACK").execute(&mut lock).await;
    });
    let events = read_events(response).await;
    assert_one_terminal(&events);
    match events.last() {
        Some(TurnEvent::Error(failure)) => {
            assert!(failure.message.contains("not being saved"), "{failure:?}");
            assert!(failure.retryable);
        }
        other => panic!("a turn that cannot be saved ends with an error, not {other:?}"),
    }
    let _ = locker.await;
    // What was saved before the lock is there; once the lock lifts, the answer is marked as
    // failed (the refused final state is retried), never left as streaming.
    let conversation = stored_at(&events);
    let until = Instant::now() + Duration::from_secs(40);
    let status = loop {
        let read = me
            .ok("conversations/get", json!({"id": conversation}))
            .await;
        assert_eq!(message_count(&read), 2);
        let status = read["messages"][1]["versions"][0]["status"].clone();
        if status != "streaming" || Instant::now() > until {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(
        status, "error",
        "the half-streamed answer is not left as streaming"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_what_does_not_fit_and_keeps_serving() {
    let database = temp_database();
    let server = Process::start_limited(&[("PONDER_DATABASE_URL", &database)], 3 << 20);
    let me = Browser::at(server.url(""));
    let (status, _) = me.turn(json!({"content": "a small question"})).await;
    assert_eq!(status, 200);

    let big = "many words of a very long question ".repeat(26_000);
    let mut refused = None;
    let mut stored = 1;
    for _ in 0..6 {
        let (status, body) = raw_turn(&me, json!({"content": big})).await;
        if status == 200 && body.contains("\"type\":\"done\"") {
            stored += 1;
            continue;
        }
        refused = Some((status, body));
        break;
    }
    let (status, body) = refused.expect("a 3 MiB database cannot take six 0.9 MB questions");
    if status == 200 {
        assert!(body.contains("\"type\":\"error\""), "{body}");
    } else {
        assert_eq!(status, 503, "{body}");
        assert!(body.contains("history database is unavailable"), "{body}");
    }
    // Nothing half-written: every conversation listed holds its question and its answer.
    let list = me.ok("conversations/list", json!({})).await;
    let listed = list.as_array().expect("list").len();
    assert!(
        listed == stored || listed == stored + 1,
        "{listed} vs {stored}"
    );
    for c in list.as_array().expect("list") {
        let read = me.ok("conversations/get", json!({"id": c["id"]})).await;
        assert_eq!(message_count(&read), 2, "{}", c["title"]);
    }
    // The server goes on: probes, a turn that stores nothing, a small stored turn.
    let health = reqwest::get(server.url("/healthz")).await.expect("healthz");
    assert_eq!(health.status().as_u16(), 200);
    let (status, events) = me
        .turn(json!({"messages": [{"role": "user", "content": "still here?"}]}))
        .await;
    assert_eq!(status, 200);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_is_gone_answers_503_and_the_server_keeps_serving() {
    let database = common::postgres::database().await;
    let app = TestApp::spawn(&[("PONDER_DATABASE_URL", &database)]).await;
    let me = Browser::new(&app);
    let (status, events) = me.turn(json!({"content": "before it went"})).await;
    assert_eq!(status, 200);
    let conversation = stored_at(&events);

    common::postgres::drop_database(&database).await;
    let (status, body) = raw_turn(
        &me,
        json!({"conversation": conversation, "content": "after it went"}),
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("history database is unavailable"), "{body}");
    let (status, body) = me.call("conversations/list", json!({})).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        !body.to_string().contains("does not exist"),
        "the database's own message stays in the log: {body}"
    );
    let health = app
        .http
        .get(app.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status().as_u16(), 200);
    let (status, events) = me
        .turn(json!({"messages": [{"role": "user", "content": "no history needed"}]}))
        .await;
    assert_eq!(status, 200);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
}
