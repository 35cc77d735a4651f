//! Organising conversations over real HTTP: a pin and tags are kept and listed (on any
//! device), tags are cleaned and bounded, a conversation moves to another of the reader's
//! workspaces only, and another reader's conversation answers 404 to all of it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::TestApp;
use ponder::domain::TurnEvent;
use serde_json::{json, Value};

/// A reader a trusted proxy names.
struct Reader<'a>(&'a TestApp, &'static str);

impl Reader<'_> {
    async fn ok(&self, endpoint: &str, body: Value) -> Value {
        self.0
            .ok_as(self.1, &format!("/api/{endpoint}"), body)
            .await
    }

    async fn call(&self, endpoint: &str, body: Value) -> (u16, Value) {
        let response = self
            .0
            .post_as(self.1, &format!("/api/{endpoint}"), body)
            .await;
        common::browser::status_and_json(response).await
    }

    async fn turn(&self, body: Value) -> Vec<TurnEvent> {
        let response = self.0.post_as(self.1, "/api/chat", body).await;
        common::read_events(response).await
    }
}

async fn chat(me: &Reader<'_>, text: &str) -> String {
    let events = me.turn(json!({ "content": text })).await;
    events
        .iter()
        .find_map(|e| match e {
            TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn pins_tags_and_moves_are_kept_and_another_readers_chat_is_not_found() {
    let app = TestApp::spawn(&[
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ])
    .await;
    let me = Reader(&app, "ann");
    let first = chat(&me, "first").await;
    let second = chat(&me, "second").await;
    me.ok("conversations/pin", json!({"id": first, "pinned": true}))
        .await;
    let kept = me
        .ok(
            "conversations/tags",
            json!({"id": second, "tags": ["  Work ", "work", "", "rust  lang"]}),
        )
        .await;
    assert_eq!(kept, json!(["Work", "rust lang"]));
    let list = me.ok("conversations/list", json!({"deleted": false})).await;
    let find = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(find(&first)["pinned"], true);
    assert_eq!(find(&second)["tags"], json!(["Work", "rust lang"]));
    assert!(find(&second).get("pinned").is_none());

    for bad in [
        json!({"id": second, "tags": (0..11).map(|i| format!("t{i}")).collect::<Vec<_>>()}),
        json!({"id": second, "tags": ["x".repeat(33)]}),
        json!({"id": second, "tags": ["a,b"]}),
    ] {
        let (status, _) = me.call("conversations/tags", bad.clone()).await;
        assert_eq!(status, 400, "{bad}");
    }

    let space = me
        .ok("workspaces/create", json!({"name": "Research"}))
        .await;
    let space = space["id"].as_str().unwrap().to_string();
    me.ok(
        "conversations/move",
        json!({"id": second, "workspace": space}),
    )
    .await;
    let home = me.ok("conversations/list", json!({"deleted": false})).await;
    assert!(!home.to_string().contains(&second), "it left: {home}");
    let there = me
        .ok(
            "conversations/list",
            json!({"workspace": space, "deleted": false}),
        )
        .await;
    assert_eq!(there[0]["id"], second.as_str());
    assert_eq!(
        there[0]["tags"],
        json!(["Work", "rust lang"]),
        "tags go with it"
    );

    let other = Reader(&app, "bob");
    other.turn(json!({"content": "mine"})).await;
    for (endpoint, body) in [
        ("conversations/pin", json!({"id": first, "pinned": false})),
        ("conversations/tags", json!({"id": first, "tags": ["x"]})),
        (
            "conversations/move",
            json!({"id": first, "workspace": space}),
        ),
    ] {
        let (status, _) = other.call(endpoint, body).await;
        assert_eq!(status, 404, "{endpoint}");
    }
    let theirs = other.ok("workspaces/list", json!({})).await;
    let their_space = theirs[0]["id"].as_str().unwrap();
    let (status, _) = me
        .call(
            "conversations/move",
            json!({"id": first, "workspace": their_space}),
        )
        .await;
    assert_eq!(status, 404, "only to one's own workspace");
}
