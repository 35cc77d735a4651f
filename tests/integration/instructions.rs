//! System instructions over real HTTP, through the demo model, which answers a `[system]`
//! question with the system text it received: every level reaches it in order, in every wire
//! format; the administrator's cannot be removed; answering again reuses what the answer was
//! asked with; another user's conversation answers 404.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::TestApp;
use ponder::domain::TurnEvent;
use serde_json::{json, Value};

const ADMIN: &str = "ADMIN-LEVEL: never reveal the launch codes.";

fn admin_file() -> String {
    let path = std::env::temp_dir().join(format!(
        "ponder-instructions-{}.json",
        ponder::server::store::ids::new_id()
    ));
    std::fs::write(&path, json!({ "*": ADMIN }).to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

async fn app(provider: &str) -> TestApp {
    let file = admin_file();
    TestApp::spawn(&[
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
        ("PONDER_PROVIDER", provider),
        ("PONDER_MODEL_INSTRUCTIONS", &file),
    ])
    .await
}

async fn api(app: &TestApp, user: &str, path: &str, body: Value) -> reqwest::Response {
    app.post_as(user, path, body).await
}

async fn ok(app: &TestApp, user: &str, path: &str, body: Value) -> Value {
    app.ok_as(user, path, body).await
}

/// A turn's events: (conversation, answer message, answer text).
async fn turn(app: &TestApp, user: &str, body: Value) -> (String, String, String) {
    let response = api(app, user, "/api/chat", body).await;
    assert_eq!(response.status(), 200);
    let events = common::read_events(response).await;
    let ids = events.iter().find_map(|e| match e {
        TurnEvent::Turn {
            conversation,
            message,
            ..
        } => Some((conversation.clone(), message.clone())),
        _ => None,
    });
    let (conversation, message) = ids.unwrap_or_default();
    (conversation, message, common::answer_text(&events))
}

/// Where each of `parts` is in `text`, which must hold them all, in this order.
fn in_order(text: &str, parts: &[&str]) {
    let mut from = 0;
    for part in parts {
        let at = text[from..]
            .find(part)
            .unwrap_or_else(|| panic!("{part:?} missing (or out of order) in {text:?}"));
        from += at + part.len();
    }
}

#[tokio::test]
async fn every_level_reaches_the_model_in_order_and_an_answer_again_reuses_its_own() {
    let app = app("openai").await;
    let set =
        |level: &str, id: Option<&str>, text: &str| json!({"level": level, "id": id, "text": text});
    ok(
        &app,
        "ann",
        "/api/instructions/set",
        set("personal", None, "PERSONAL-1"),
    )
    .await;
    let workspaces = ok(&app, "ann", "/api/workspaces/list", json!({})).await;
    let workspace = workspaces[0]["id"].as_str().unwrap().to_string();
    ok(
        &app,
        "ann",
        "/api/instructions/set",
        set("workspace", Some(&workspace), "WORKSPACE-1"),
    )
    .await;

    let (conversation, answer, text) = turn(
        &app,
        "ann",
        json!({"content": "[system] what were you told?", "instructions": "CONVERSATION-1"}),
    )
    .await;
    in_order(
        &text,
        &[ADMIN, "PERSONAL-1", "WORKSPACE-1", "CONVERSATION-1"],
    );

    let view = ok(
        &app,
        "ann",
        "/api/instructions/get",
        json!({"conversation": conversation}),
    )
    .await;
    let levels: Vec<&str> = view["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["model", "personal", "workspace", "conversation"]);

    // No reader removes the administrator's level, and an empty text clears a reader's own.
    let refused = api(&app, "ann", "/api/instructions/set", set("model", None, "")).await;
    assert_eq!(refused.status(), 403);
    ok(
        &app,
        "ann",
        "/api/instructions/set",
        set("personal", None, "PERSONAL-2"),
    )
    .await;
    ok(
        &app,
        "ann",
        "/api/instructions/set",
        set("conversation", Some(&conversation), "  "),
    )
    .await;

    // Answering again asks with what that answer was asked with.
    let (_, _, again) = turn(
        &app,
        "ann",
        json!({"conversation": conversation, "regenerate": answer}),
    )
    .await;
    in_order(
        &again,
        &[ADMIN, "PERSONAL-1", "WORKSPACE-1", "CONVERSATION-1"],
    );
    assert!(!again.contains("PERSONAL-2"), "{again}");

    // A new question is asked with the levels as they are now.
    let (_, _, next) = turn(
        &app,
        "ann",
        json!({"conversation": conversation, "content": "[system] and now?"}),
    )
    .await;
    in_order(&next, &[ADMIN, "PERSONAL-2", "WORKSPACE-1"]);
    assert!(!next.contains("CONVERSATION-1"), "{next}");

    // Someone else's conversation and workspace are not there for them.
    for (path, body) in [
        (
            "/api/instructions/get",
            json!({"conversation": conversation}),
        ),
        (
            "/api/instructions/set",
            set("conversation", Some(&conversation), "mine now"),
        ),
        (
            "/api/instructions/set",
            set("workspace", Some(&workspace), "mine now"),
        ),
    ] {
        assert_eq!(api(&app, "bob", path, body).await.status(), 404, "{path}");
    }
    let (_, _, bobs) = turn(&app, "bob", json!({"content": "[system] hello"})).await;
    in_order(&bobs, &[ADMIN]);
    assert!(!bobs.contains("PERSONAL"), "{bobs}");
}

#[tokio::test]
async fn bad_instructions_are_refused_with_400_and_nothing_is_kept() {
    let app = app("openai").await;
    let long = "x".repeat(ponder::domain::instructions::MAX_INSTRUCTION_CHARS + 1);
    for body in [
        json!({"level": "personal", "text": long}),
        json!({"level": "personal", "text": "bell\u{7}"}),
        json!({"level": "everyone", "text": "x"}),
        json!({"level": "personal"}),
    ] {
        let response = api(&app, "ann", "/api/instructions/set", body.clone()).await;
        assert_eq!(response.status(), 400, "{body}");
    }
    let chat = api(
        &app,
        "ann",
        "/api/chat",
        json!({"content": "hi", "instructions": long}),
    )
    .await;
    assert_eq!(chat.status(), 400);
    let (conversation, _, _) = turn(&app, "ann", json!({"content": "[system] hi"})).await;
    let inline = api(
        &app,
        "ann",
        "/api/chat",
        json!({"conversation": conversation, "content": "hi", "instructions": "x"}),
    )
    .await;
    assert_eq!(
        inline.status(),
        400,
        "a stored conversation's are set apart"
    );
    let view = ok(&app, "ann", "/api/instructions/get", json!({})).await;
    assert_eq!(view["levels"].as_array().unwrap().len(), 1, "{view}");
}

#[tokio::test]
async fn each_wire_format_carries_them_to_the_model() {
    for provider in common::PROVIDERS {
        let app = app(provider).await;
        ok(
            &app,
            "ann",
            "/api/instructions/set",
            json!({"level": "personal", "text": "PERSONAL"}),
        )
        .await;
        let stateless = json!({
            "messages": [{"role": "user", "content": "[system] hi"}],
            "instructions": "THIS-CHAT",
        });
        let (_, _, text) = turn(&app, "ann", stateless).await;
        in_order(&text, &[ADMIN, "PERSONAL", "THIS-CHAT"]);
    }
}

#[tokio::test]
async fn a_chats_instructions_reach_a_share_only_when_chosen_and_a_branch_keeps_them() {
    let app = app("openai").await;
    let (conversation, answer, _) = turn(
        &app,
        "ann",
        json!({"content": "hello", "instructions": "SECRET-CHAT-RULE"}),
    )
    .await;
    for (chosen, shown) in [(false, false), (true, true)] {
        let link = ok(
            &app,
            "ann",
            "/api/shares/create",
            json!({"conversation": conversation, "choice": {"instructions": chosen}}),
        )
        .await;
        let url = link["url"].as_str().unwrap();
        let page = app
            .http
            .get(format!("http://{}{url}", app.addr))
            .header("Remote-User", "ann")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(page.contains("SECRET-CHAT-RULE"), shown, "chosen: {chosen}");
        assert_eq!(link["choice"]["instructions"], chosen);
    }
    let branch = ok(
        &app,
        "ann",
        "/api/conversations/branch",
        json!({"id": conversation, "upto": answer}),
    )
    .await;
    let id = branch["id"].as_str().unwrap().to_string();
    let view = ok(
        &app,
        "ann",
        "/api/instructions/get",
        json!({"conversation": id}),
    )
    .await;
    assert!(view.to_string().contains("SECRET-CHAT-RULE"), "{view}");
}

#[tokio::test]
async fn a_temporary_chat_follows_its_workspace_and_the_server_keeps_nothing_of_it() {
    let app = app("openai").await;
    let spaces = ok(&app, "tess", "/api/workspaces/list", json!({})).await;
    let space = spaces[0]["id"].as_str().unwrap().to_string();
    ok(
        &app,
        "tess",
        "/api/instructions/set",
        json!({"level": "workspace", "id": space, "text": "We are the Porto office."}),
    )
    .await;
    let asked = json!({
        "messages": [{"role": "user", "content": "[system] who are we?"}],
        "workspace": space,
    });
    let (conversation, _, said) = turn(&app, "tess", asked.clone()).await;
    in_order(&said, &[ADMIN, "We are the Porto office."]);
    assert!(
        conversation.is_empty(),
        "no stored conversation: {conversation}"
    );
    let listed = ok(&app, "tess", "/api/conversations/list", json!({})).await;
    assert_eq!(listed, json!([]));
    let (_, _, plain) = turn(
        &app,
        "tess",
        json!({"messages": [{"role": "user", "content": "[system] and now?"}]}),
    )
    .await;
    assert!(!plain.contains("Porto"), "{plain}");

    let foreign = api(&app, "mallory", "/api/chat", asked).await;
    assert_eq!(foreign.status(), 404, "another reader's workspace");

    let http = reqwest::Client::new();
    let upload = |query: &'static str| {
        http.post(app.url(&format!("/api/attachments?name=note.txt{query}")))
            .header("Remote-User", "tess")
            .header("content-type", "application/octet-stream")
            .body("plain words")
            .send()
    };
    let judged = upload("&keep=0").await.unwrap();
    assert_eq!(judged.status(), 200, "judged, not kept");
    let id = judged.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let back = http
        .get(app.url(&format!("/api/attachments/{id}")))
        .header("Remote-User", "tess")
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 404);
    assert_eq!(upload("").await.unwrap().status(), 201, "kept as before");
}
