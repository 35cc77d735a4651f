//! Scale-out: two real `ponder` processes on one PostgreSQL (the harness's cluster) serve the
//! same users. A chat written through one is read through the other, a session made on one is
//! valid on both, and two tabs writing to one conversation through different replicas at the
//! same moment lose nothing. Also `ponder user` from the shell, on that same database.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::Browser;
use common::process::Process;
use common::read_events_cutting;
use ponder::domain::TurnEvent;
use serde_json::{json, Value};

fn replica(database: &str) -> Process {
    Process::start(&[
        ("PONDER_AUTH", "password"),
        ("PONDER_DATABASE_URL", database),
        ("PONDER_DEMO_DELAY_MS", "2"),
    ])
}

fn stored_at(events: &[TurnEvent]) -> String {
    match events.get(1) {
        Some(TurnEvent::Turn { conversation, .. }) => conversation.clone(),
        other => panic!("a stored turn starts with its id, then where it is stored, not {other:?}"),
    }
}

fn texts(conversation: &Value) -> Vec<String> {
    conversation["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            let active = m["active"].as_u64().unwrap_or(0) as usize;
            m["versions"][active]["content"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_postgres_serve_the_same_users() {
    let database = common::postgres::database().await;
    let a = replica(&database);
    let b = replica(&database);

    // The admin is made through A; the session it gets is valid on B.
    let on_a = Browser::at(a.url(""));
    on_a.ok(
        "auth/setup",
        json!({"name": "root", "password": "root-password-1"}),
    )
    .await;
    let on_b = on_a.moved_to(b.url(""));
    let me = on_b.ok("me", json!({})).await;
    assert_eq!(me["account"]["name"], "root", "{me}");

    // A chat written through A is read through B, reasoning included.
    let (status, events) = on_a.turn(json!({"content": "Why is the sky blue?"})).await;
    assert_eq!(status, 200);
    common::assert_one_terminal(&events);
    let conversation = stored_at(&events);
    let read = on_b
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    assert_eq!(
        texts(&read),
        [
            "Why is the sky blue?".to_string(),
            ponder::server::demo_upstream::ANSWER.to_string()
        ]
    );
    let block = read["messages"][1]["versions"][0]["blocks"][0]["id"].clone();
    assert_eq!(
        on_b.ok("blocks/text", json!({"id": block})).await,
        ponder::server::demo_upstream::THINKING
    );

    // Two tabs send to the same conversation at once, one through each replica: both
    // questions and both answers are kept, each answer after its own question.
    let (first, second) = tokio::join!(
        on_a.turn(json!({"conversation": conversation, "content": "tab one"})),
        on_b.turn(json!({"conversation": conversation, "content": "tab two"})),
    );
    for (status, events) in [&first, &second] {
        assert_eq!(*status, 200);
        common::assert_one_terminal(events);
        assert!(
            matches!(events.last(), Some(TurnEvent::Done { .. })),
            "{events:?}"
        );
    }
    let after = on_a
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    let said = texts(&after);
    assert_eq!(said.len(), 6, "{said:?}");
    for tab in ["tab one", "tab two"] {
        assert_eq!(
            said.iter().filter(|t| t.as_str() == tab).count(),
            1,
            "{said:?}"
        );
    }
    let order: Vec<String> = after["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["id"].as_str().unwrap_or("").to_string())
        .collect();
    for (_, events) in [&first, &second] {
        let Some(TurnEvent::Turn {
            user_message: Some(question),
            message: answer,
            ..
        }) = events.get(1)
        else {
            panic!("a stored turn starts with its id, then where it is stored: {events:?}");
        };
        let at = |id: &str| order.iter().position(|m| m == id).expect("stored");
        assert!(at(question) < at(answer), "{order:?}");
    }

    // Signing out everywhere through B ends the session on A too.
    on_b.ok("auth/sign-out-everywhere", json!({})).await;
    assert_eq!(on_a.call("conversations/list", json!({})).await.0, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ponder_user_adds_and_resets_accounts_from_the_shell() {
    let database = common::temp_database();
    let run = |args: &[&str], password: Option<&str>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ponder"));
        command
            .env_clear()
            .env("PONDER_DATABASE_URL", &database)
            .args(args);
        if let Some(p) = password {
            command.env("PONDER_NEW_PASSWORD", p);
        }
        let out = command.output().expect("run ponder user");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        )
    };
    // The first user made from the shell is the admin, asked for or not.
    let (code, out, err) = run(&["user", "add", "root"], Some("root-password-1"));
    assert_eq!(code, Some(0), "{out} {err}");
    assert_eq!(out, "added root (admin)");
    let (code, out, _) = run(&["user", "add", "ana"], Some("ana-password-1"));
    assert_eq!((code, out.as_str()), (Some(0), "added ana"));
    let (code, _, err) = run(&["user", "add", "bo"], Some("short"));
    assert_ne!(code, Some(0));
    assert!(err.contains("at least 8"), "{err}");
    let (code, _, err) = run(&["user", "add", "ana"], Some("another-password"));
    assert_ne!(code, Some(0), "a name is taken once");
    assert!(!err.is_empty());
    let (_, out, _) = run(&["user", "list"], None);
    assert_eq!(out, "ana\nroot\tadmin", "by name");
    // A command line it does not know is a usage error (2), a refusal a failure (1).
    for wrong in [
        &["user"][..],
        &["user", "remove", "ana"],
        &["user", "add", "x", "--root"],
    ] {
        let (code, _, err) = run(wrong, None);
        assert_eq!(code, Some(2), "{wrong:?}: {err}");
        assert!(err.starts_with("ponder: usage: ponder user add"), "{err}");
    }
    let (code, _, err) = run(&["user", "password", "nobody"], Some("a-long-password"));
    assert_eq!(code, Some(1));
    assert_eq!(err, "ponder user: no user is named \"nobody\"");

    // The server signs them in with those passwords; a reset ends the old one.
    let server = Process::start(&[
        ("PONDER_AUTH", "password"),
        ("PONDER_DATABASE_URL", &database),
    ]);
    let ana = Browser::at(server.url(""));
    ana.ok(
        "auth/sign-in",
        json!({"name": "ana", "password": "ana-password-1"}),
    )
    .await;
    assert_eq!(ana.call("conversations/list", json!({})).await.0, 200);
    let (code, out, err) = run(&["user", "password", "ana"], Some("ana-password-2"));
    assert_eq!(code, Some(0), "{out} {err}");
    assert_eq!(ana.call("conversations/list", json!({})).await.0, 401);
    let again = Browser::at(server.url(""));
    assert_eq!(
        again
            .call(
                "auth/sign-in",
                json!({"name": "ana", "password": "ana-password-1"})
            )
            .await
            .0,
        401
    );
    again
        .ok(
            "auth/sign-in",
            json!({"name": "ana", "password": "ana-password-2"}),
        )
        .await;
    let (code, _, err) = run(&["user", "password", "nobody"], Some("whatever-123"));
    assert_ne!(code, Some(0));
    assert!(err.contains("no user"), "{err}");
    let (code, _, err) = run(&["user", "frobnicate"], None);
    assert_eq!(code, Some(2));
    assert!(err.contains("usage"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_now_reaches_a_turn_running_on_another_replica_and_only_its_owner_may_ask() {
    let database = common::postgres::database().await;
    let slow = |database: &str| {
        Process::start(&[
            ("PONDER_AUTH", "password"),
            ("PONDER_DATABASE_URL", database),
            ("PONDER_DEMO_DELAY_MS", "25"),
        ])
    };
    let a = slow(&database);
    let b = slow(&database);
    let alice = Browser::at(a.url(""));
    alice
        .ok(
            "auth/setup",
            json!({"name": "alice", "password": "alice-password"}),
        )
        .await;
    alice
        .ok(
            "users/add",
            json!({"name": "bob", "password": "bob-password-1", "is_admin": false}),
        )
        .await;
    let bob_on_b = Browser::at(b.url(""));
    bob_on_b
        .ok(
            "auth/sign-in",
            json!({"name": "bob", "password": "bob-password-1"}),
        )
        .await;
    let alice_on_b = alice.moved_to(b.url(""));

    let response = alice
        .request(
            "/api/chat",
            json!({"content": "[long-think] why?"}).to_string(),
        )
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    let (bob_on_b, alice_on_b) = (&bob_on_b, &alice_on_b);
    let (events, asked) = read_events_cutting(response, |turn| async move {
        let (status, body) = bob_on_b
            .call("turn/answer-now", json!({"turn": turn}))
            .await;
        assert_eq!(status, 404, "another user: {body}");
        let (status, body) = alice_on_b
            .call("turn/answer-now", json!({"turn": turn}))
            .await;
        assert_eq!(status, 200, "through the other replica: {body}");
    })
    .await;
    assert!(asked, "the turn never thought");
    assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
    assert!(
        events.iter().any(|e| matches!(
            e,
            TurnEvent::ThinkingEnd {
                cut_short: true,
                ..
            }
        )),
        "the command reached the turn on A: {events:?}"
    );
    let Some(TurnEvent::Started { turn }) = events.first() else {
        panic!()
    };
    let mut gone = 0;
    for _ in 0..50 {
        gone = alice_on_b
            .call("turn/answer-now", json!({"turn": turn}))
            .await
            .0;
        if gone == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(gone, 404, "a finished turn is struck off for every replica");
}
