//! Titles by the model over real HTTP, through the demo model: after a new chat's first answer
//! the title is the model's (its reasoning never in it) in every wire format; a reader's name
//! is never replaced; `PONDER_TITLES=off` keeps the first words.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::TestApp;
use ponder::domain::TurnEvent;
use serde_json::{json, Value};

async fn post(app: &TestApp, path: &str, body: Value) -> Value {
    let response = app
        .http
        .post(app.url(path))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect(path);
    assert_eq!(response.status(), 200, "{path}");
    response.json().await.expect("json")
}

/// A new stored chat's first turn; its conversation id.
async fn first_turn(app: &TestApp, question: &str) -> String {
    let response = app
        .post_chat(json!({ "content": question }).to_string())
        .await;
    assert_eq!(response.status(), 200);
    let events = common::read_events(response).await;
    events
        .iter()
        .find_map(|e| match e {
            TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
            _ => None,
        })
        .expect("stored")
}

#[tokio::test]
async fn the_model_titles_a_new_chat_after_its_first_answer_without_its_reasoning() {
    for provider in common::PROVIDERS {
        let app = TestApp::spawn(&[("PONDER_PROVIDER", provider)]).await;
        let id = first_turn(&app, "[titled] Why is the sky blue?").await;
        let title = post(&app, "/api/titles/wait", json!({ "id": id })).await;
        assert_eq!(title, "A Title by the Demo Model", "{provider}");
        let list = post(&app, "/api/conversations/list", json!({})).await;
        assert_eq!(list[0]["title"], "A Title by the Demo Model", "{provider}");
        assert!(
            !list.to_string().contains("DEMO-TITLE-REASONING"),
            "{provider}"
        );
    }
}

#[tokio::test]
async fn a_readers_name_stays_and_titles_can_be_turned_off() {
    let app = TestApp::spawn(&[]).await;
    let id = first_turn(&app, "[titled] tides").await;
    post(&app, "/api/titles/wait", json!({ "id": id })).await;
    post(
        &app,
        "/api/conversations/rename",
        json!({"id": id, "title": "My tides"}),
    )
    .await;
    // Asking again in the same chat makes no new title, and a late model title would not win.
    let who = app.state.local_identity().await.unwrap();
    let me = app.state.store.scoped(&who);
    assert!(!me.set_model_title(&id, Some("Another")).await.unwrap());
    assert_eq!(
        post(&app, "/api/titles/wait", json!({ "id": id })).await,
        "My tides"
    );

    // A model that gives no title leaves the first words, and the page is told at once.
    let untitled = first_turn(&app, "Why is the sky blue?").await;
    let started = std::time::Instant::now();
    assert_eq!(
        post(&app, "/api/titles/wait", json!({ "id": untitled })).await,
        "Why is the sky blue?"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));

    let off = TestApp::spawn(&[("PONDER_TITLES", "off")]).await;
    let id = first_turn(&off, "[titled] tides").await;
    let started = std::time::Instant::now();
    assert_eq!(
        post(&off, "/api/titles/wait", json!({ "id": id })).await,
        Value::Null
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let list = post(&off, "/api/conversations/list", json!({})).await;
    assert_eq!(list[0]["title"], "[titled] tides");
}

#[tokio::test]
async fn a_reader_who_turned_titles_off_keeps_the_first_words() {
    let app = TestApp::spawn(&[]).await;
    let prefs = post(&app, "/api/preferences/get", json!({})).await;
    assert!(prefs.get("titles").is_none(), "unset: the server's choice");
    let mut prefs = prefs;
    prefs["titles"] = json!("off");
    post(
        &app,
        "/api/preferences/set",
        json!({ "preferences": prefs }),
    )
    .await;
    let id = first_turn(&app, "[titled] tides off").await;
    assert_eq!(
        post(&app, "/api/titles/wait", json!({ "id": id })).await,
        "[titled] tides off"
    );
    prefs["titles"] = json!("model");
    post(
        &app,
        "/api/preferences/set",
        json!({ "preferences": prefs }),
    )
    .await;
    let id = first_turn(&app, "[titled] tides on").await;
    assert_eq!(
        post(&app, "/api/titles/wait", json!({ "id": id })).await,
        "A Title by the Demo Model"
    );
    prefs["titles"] = json!("sometimes");
    let response = app
        .http
        .post(app.url("/api/preferences/set"))
        .header("content-type", "application/json")
        .body(json!({ "preferences": prefs }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 409, "only model or off");
}
