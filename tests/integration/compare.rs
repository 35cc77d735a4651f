//! Comparisons over real HTTP, on SQLite and PostgreSQL, with the demo's three models (the deep
//! one always thinks, the mini one never): one question, the others answering the same message
//! again at once, all three kept as versions labelled with their model; a pick keeps one as the
//! answer, thumbs are stored, and the record per model counts wins and medians. What does not fit
//! a comparison is refused, and another reader's answers are not found.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::Browser;
use common::*;
use serde_json::{json, Value};

/// A Ponder with built-in accounts on each engine.
async fn apps() -> Vec<(&'static str, TestApp)> {
    let pg = common::postgres::database().await;
    vec![
        (
            "sqlite",
            TestApp::spawn(&[("PONDER_AUTH", "password")]).await,
        ),
        (
            "postgres",
            TestApp::spawn(&[
                ("PONDER_AUTH", "password"),
                ("PONDER_DATABASE_URL", pg.as_str()),
            ])
            .await,
        ),
    ]
}

fn answer_of(conversation: &Value, message: &str) -> Value {
    conversation["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == message)
        .cloned()
        .expect("the answer")
}

#[tokio::test]
async fn three_models_answer_one_question_and_the_pick_and_thumbs_are_kept() {
    for (engine, app) in apps().await {
        let (me, _) = Browser::alice_and_bob(&app).await;
        let (status, first) = me
            .turn(json!({"content": "[two-blocks] why is the sky blue?", "model": "ponder-demo-deep", "compare": true}))
            .await;
        assert_eq!(status, 200, "{engine}");
        assert_one_terminal(&first);
        let (conversation, message) = stored_at(&first);
        let again = |model: &'static str| {
            me.turn(json!({"conversation": conversation, "regenerate": message, "model": model, "compare": true}))
        };
        let ((s1, quick), (s2, mini)) =
            tokio::join!(again("ponder-demo"), again("ponder-demo-mini"));
        assert_eq!((s1, s2), (200, 200), "{engine}");
        assert_one_terminal(&quick);
        assert_one_terminal(&mini);

        let shown = me
            .ok("conversations/get", json!({"id": conversation}))
            .await;
        let answer = answer_of(&shown, &message);
        let versions = answer["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 3, "{engine}: {answer}");
        let mut models: Vec<&str> = versions
            .iter()
            .map(|v| v["model"].as_str().unwrap())
            .collect();
        models.sort_unstable();
        assert_eq!(
            models,
            ["ponder-demo", "ponder-demo-deep", "ponder-demo-mini"],
            "{engine}"
        );
        assert!(
            versions.iter().all(|v| v["compared"].is_object()),
            "{engine}: {answer}"
        );
        let deep = versions
            .iter()
            .position(|v| v["model"] == "ponder-demo-deep")
            .unwrap();
        let mini_at = versions
            .iter()
            .position(|v| v["model"] == "ponder-demo-mini")
            .unwrap();
        assert!(
            !versions[deep]["blocks"].as_array().unwrap().is_empty(),
            "{engine}: the deep one thought"
        );
        assert!(
            versions[mini_at]["blocks"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{engine}"
        );

        me.ok(
            "versions/rate",
            json!({"id": message, "version": mini_at, "rating": -1}),
        )
        .await;
        me.ok(
            "versions/rate",
            json!({"id": message, "version": deep, "rating": 1}),
        )
        .await;
        me.ok("compare/pick", json!({"id": message, "version": deep}))
            .await;
        let shown = me
            .ok("conversations/get", json!({"id": conversation}))
            .await;
        let answer = answer_of(&shown, &message);
        assert_eq!(answer["active"], deep, "{engine}: the pick is the answer");
        let versions = answer["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 3, "{engine}: the others stay as versions");
        assert_eq!(
            versions[deep]["compared"],
            json!({"picked": true, "rating": 1}),
            "{engine}"
        );
        assert_eq!(
            versions[mini_at]["compared"],
            json!({"rating": -1}),
            "{engine}"
        );

        // Picking another undoes the first pick.
        let quick_at = 3 - deep - mini_at;
        me.ok("compare/pick", json!({"id": message, "version": quick_at}))
            .await;
        me.ok("compare/pick", json!({"id": message, "version": deep}))
            .await;
        let record = me.ok("compare/record", json!({})).await;
        let record = record.as_array().unwrap();
        assert_eq!(record.len(), 3, "{engine}: {record:?}");
        assert_eq!(
            record[0]["model"], "ponder-demo-deep",
            "{engine}: most wins first"
        );
        assert_eq!(record[0]["wins"], 1);
        assert_eq!(record[0]["comparisons"], 1);
        assert_eq!(record[0]["thumbs_up"], 1);
        assert!(
            record[0]["median_reasoning_tokens"].as_u64().unwrap() > 0,
            "{engine}: {record:?}"
        );
        let mini = record
            .iter()
            .find(|r| r["model"] == "ponder-demo-mini")
            .unwrap();
        assert_eq!(
            (mini["wins"].as_u64(), mini["thumbs_down"].as_u64()),
            (Some(0), Some(1))
        );
        assert!(
            record
                .iter()
                .map(|r| r["wins"].as_u64().unwrap())
                .sum::<u64>()
                == 1,
            "{engine}: one pick stands"
        );
    }
}

#[tokio::test]
async fn what_does_not_fit_a_comparison_is_refused() {
    for (engine, app) in apps().await {
        let (me, stranger) = Browser::alice_and_bob(&app).await;
        let (_, plain) = me.turn(json!({"content": "hello"})).await;
        let (conversation, plain_answer) = stored_at(&plain);
        let (status, refused) = me
            .turn(json!({"conversation": conversation, "regenerate": plain_answer, "model": "ponder-demo", "compare": true}))
            .await;
        assert_eq!(
            status, 409,
            "{engine}: an answer no comparison started: {refused:?}"
        );
        let (status, body) = me
            .call("compare/pick", json!({"id": plain_answer, "version": 0}))
            .await;
        assert_eq!(status, 409, "{engine}: {body}");

        let (_, first) = me
            .turn(json!({"content": "hello", "model": "ponder-demo", "compare": true}))
            .await;
        let (conversation, message) = stored_at(&first);
        for model in ["ponder-demo-deep", "ponder-demo-mini", "ponder-demo"] {
            let (status, _) = me
                .turn(json!({"conversation": conversation, "regenerate": message, "model": model, "compare": true}))
                .await;
            assert_eq!(status, 200, "{engine}: {model}");
        }
        let (status, _) = me
            .turn(json!({"conversation": conversation, "regenerate": message, "model": "ponder-demo-deep", "compare": true}))
            .await;
        assert_eq!(status, 409, "{engine}: a fifth answer");

        let (status, body) = me
            .call(
                "versions/rate",
                json!({"id": message, "version": 0, "rating": 2}),
            )
            .await;
        assert_eq!(status, 400, "{engine}: {body}");
        let (status, _) = me
            .call(
                "versions/rate",
                json!({"id": message, "version": 9, "rating": 1}),
            )
            .await;
        assert_eq!(status, 404, "{engine}");
        let (status, _) = me
            .call("compare/pick", json!({"id": message, "version": 9}))
            .await;
        assert_eq!(status, 404, "{engine}");

        for (endpoint, args) in [
            ("compare/pick", json!({"id": message, "version": 0})),
            (
                "versions/rate",
                json!({"id": message, "version": 0, "rating": 1}),
            ),
        ] {
            let (status, _) = stranger.call(endpoint, args).await;
            assert_eq!(
                status, 404,
                "{engine}: {endpoint} of another reader's answer"
            );
        }
        let theirs = stranger.ok("compare/record", json!({})).await;
        assert_eq!(theirs, json!([]), "{engine}");
    }
}

#[tokio::test]
async fn continuing_with_each_answer_makes_a_chat_of_each_with_its_model() {
    for (engine, app) in apps().await {
        let (me, stranger) = Browser::alice_and_bob(&app).await;
        let (_, first) = me
            .turn(
                json!({"content": "why is the sky blue?", "model": "ponder-demo", "compare": true}),
            )
            .await;
        let (conversation, message) = stored_at(&first);
        let (status, _) = me
            .turn(json!({"conversation": conversation, "regenerate": message, "model": "ponder-demo-mini", "compare": true}))
            .await;
        assert_eq!(status, 200, "{engine}");

        let (status, body) = stranger
            .call(
                "compare/continue",
                json!({"conversation": conversation, "message": message}),
            )
            .await;
        assert_eq!(status, 404, "{engine}: another reader's comparison: {body}");

        let branches = me
            .ok(
                "compare/continue",
                json!({"conversation": conversation, "message": message}),
            )
            .await;
        let branches = branches.as_array().unwrap();
        assert_eq!(branches.len(), 2, "{engine}: {branches:?}");
        for (i, (branch, model)) in branches
            .iter()
            .zip(["ponder-demo", "ponder-demo-mini"])
            .enumerate()
        {
            assert!(
                branch["title"].as_str().unwrap().ends_with(model),
                "{engine}: {branch}"
            );
            let shown = me
                .ok("conversations/get", json!({"id": branch["id"]}))
                .await;
            assert_eq!(shown["model"], model, "{engine}: the branch asks its model");
            let last = shown["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            assert_eq!(last["active"], i, "{engine}: it shows its answer");
            assert_eq!(last["versions"][i]["model"], model, "{engine}");
            assert!(
                last["versions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|v| v.get("compared").is_none()),
                "{engine}: a branch is no comparison: {last}"
            );
            let (status, next) = me
                .turn(json!({"conversation": branch["id"], "content": "and at sunset?"}))
                .await;
            assert_eq!(status, 200, "{engine}");
            assert_one_terminal(&next);
        }
        // The comparison itself stays as it was.
        let original = me
            .ok("conversations/get", json!({"id": conversation}))
            .await;
        assert_eq!(
            original["messages"].as_array().unwrap().len(),
            2,
            "{engine}"
        );

        let (_, plain) = me.turn(json!({"content": "hello"})).await;
        let (plain_conversation, plain_answer) = stored_at(&plain);
        let (status, body) = me
            .call(
                "compare/continue",
                json!({"conversation": plain_conversation, "message": plain_answer}),
            )
            .await;
        assert_eq!(status, 409, "{engine}: no comparison: {body}");
    }
}
