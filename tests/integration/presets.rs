//! Presets over real HTTP: a reader's own are theirs alone (another reader's answer 404), a
//! shared one is made and changed by an administrator only and offered to everyone, and a
//! preset that is not well formed is a 400 with nothing kept.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::TestApp;
use serde_json::{json, Value};

async fn app() -> TestApp {
    TestApp::spawn(&[
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ])
    .await
}

async fn status(app: &TestApp, user: &str, path: &str, body: Value) -> u16 {
    app.post_as(user, path, body).await.status().as_u16()
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_readers_presets_are_theirs_and_a_shared_one_is_the_administrators() {
    let app = app().await;
    // The first user a trusted proxy names is the administrator.
    let everyone = app.ok_as("root", "/api/presets/list", json!({})).await;
    assert_eq!(everyone, json!([]));
    let mine = app
        .ok_as(
            "ann",
            "/api/presets/save",
            json!({"preset": {"name": "  Careful coder ", "model": "ponder-demo-deep",
                "settings": {"effort": "high", "temperature": 0.2, "max_tokens": 900},
                "instructions": "Answer with code first."}}),
        )
        .await;
    assert_eq!(mine["name"], "Careful coder");
    assert_eq!(mine["settings"]["temperature"], 0.2);
    assert_eq!(mine["editable"], true);
    let id = mine["id"].as_str().unwrap().to_string();

    let theirs = app.ok_as("bob", "/api/presets/list", json!({})).await;
    assert!(
        names(&theirs).is_empty(),
        "another reader's preset: {theirs}"
    );
    assert_eq!(
        status(&app, "bob", "/api/presets/delete", json!({"id": id})).await,
        404
    );
    let forged = json!({"preset": {"id": id, "name": "mine now"}});
    assert_eq!(status(&app, "bob", "/api/presets/save", forged).await, 404);
    let shared =
        json!({"preset": {"name": "House style", "shared": true, "settings": {"top_p": 0.9}}});
    assert_eq!(
        status(&app, "bob", "/api/presets/save", shared.clone()).await,
        403,
        "only an administrator shares"
    );
    let house = app.ok_as("root", "/api/presets/save", shared).await;
    assert_eq!(house["shared"], true);

    let anns = app.ok_as("ann", "/api/presets/list", json!({})).await;
    assert_eq!(
        names(&anns),
        ["House style", "Careful coder"],
        "shared first"
    );
    assert_eq!(anns[0]["editable"], false);
    assert_eq!(anns[1]["editable"], true);
    assert_eq!(anns[1]["settings"]["effort"], "high");
    assert_eq!(anns[1]["instructions"], "Answer with code first.");
    let house_id = house["id"].as_str().unwrap();
    assert_eq!(
        status(&app, "ann", "/api/presets/delete", json!({"id": house_id})).await,
        404
    );
    let renamed = app
        .ok_as(
            "ann",
            "/api/presets/save",
            json!({"preset": {"id": id, "name": "Careful", "settings": {}}}),
        )
        .await;
    assert_eq!(renamed["name"], "Careful");
    assert!(renamed.get("settings").is_none(), "{renamed}");
    app.ok_as("root", "/api/presets/delete", json!({"id": house_id}))
        .await;
    let anns = app.ok_as("ann", "/api/presets/list", json!({})).await;
    assert_eq!(names(&anns), ["Careful"]);
}

#[tokio::test]
async fn a_preset_not_well_formed_is_refused_and_a_full_shelf_is_a_conflict() {
    let app = app().await;
    for bad in [
        json!({"preset": {"name": ""}}),
        json!({"preset": {"name": "x".repeat(81)}}),
        json!({"preset": {"name": "hot", "settings": {"temperature": 9}}}),
        json!({"preset": {"name": "a\u{7}b"}}),
        json!({"preset": {"name": "long", "instructions": "x".repeat(8001)}}),
        json!({"preset": {"name": 5}}),
    ] {
        assert_eq!(
            status(&app, "cy", "/api/presets/save", bad.clone()).await,
            400,
            "{bad}"
        );
    }
    assert_eq!(
        app.ok_as("cy", "/api/presets/list", json!({})).await,
        json!([])
    );
    for n in 0..100 {
        app.ok_as(
            "cy",
            "/api/presets/save",
            json!({"preset": {"name": format!("p{n}")}}),
        )
        .await;
    }
    assert_eq!(
        status(
            &app,
            "cy",
            "/api/presets/save",
            json!({"preset": {"name": "one more"}})
        )
        .await,
        409
    );
}
