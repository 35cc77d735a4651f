//! Sampling parameters over real HTTP, through the demo model, which answers a `[params]`
//! question with the parameters it received: a parameter the reader set reaches the model in
//! each wire format and nothing else is sent; a model that takes none gets none; the values are
//! kept with the conversation and its answer; a value out of range is a 400; a model that
//! refuses one ends the turn with the "send again without the setting" error.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::Browser;
use common::{answer_text, TestApp};
use ponder::domain::{ErrorCode, TurnEvent};
use serde_json::json;

#[tokio::test]
async fn a_parameter_set_reaches_the_model_in_every_wire_format_and_only_then() {
    for provider in common::PROVIDERS {
        let app = TestApp::spawn(&[("PONDER_PROVIDER", provider)]).await;
        let me = Browser::new(&app);
        let (status, events) = me
            .turn(json!({"content": "[params] what did you get?", "model": "ponder-demo", "temperature": 0.7, "max_tokens": 321}))
            .await;
        assert_eq!(status, 200, "{provider}");
        let said = answer_text(&events);
        assert!(said.contains("- temperature: 0.7"), "{provider}: {said}");
        assert!(said.contains("- top-p: not sent"), "{provider}: {said}");
        assert!(said.contains("- output limit: 321"), "{provider}: {said}");
        let (_, events) = me
            .turn(json!({"content": "[params] and now?", "model": "ponder-demo"}))
            .await;
        let said = answer_text(&events);
        assert!(
            said.contains("- temperature: not sent"),
            "{provider}: {said}"
        );
        assert!(!said.contains("- output limit: 321"), "{provider}: {said}");
    }
}

#[tokio::test]
async fn the_values_are_kept_with_the_conversation_and_its_answer() {
    let app = TestApp::spawn(&[]).await;
    let me = Browser::new(&app);
    let (_, events) = me
        .turn(json!({"content": "[params] hi", "model": "ponder-demo", "top_p": 0.9, "temperature": 1.25}))
        .await;
    let conversation = events
        .iter()
        .find_map(|e| match e {
            TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
            _ => None,
        })
        .unwrap();
    let opened = me
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    assert_eq!(opened["settings"]["top_p"], 0.9, "{opened}");
    assert_eq!(opened["settings"]["temperature"], 1.25);
    let answer = &opened["messages"][1]["versions"][0];
    assert_eq!(answer["settings"]["top_p"], 0.9, "{answer}");
    let (_, events) = me
        .turn(json!({"conversation": conversation, "content": "[params] again, asking nothing"}))
        .await;
    let said = answer_text(&events);
    assert!(
        said.contains("- top-p: 0.9"),
        "a turn that asks nothing asks as the conversation last did: {said}"
    );
}

#[tokio::test]
async fn a_model_that_takes_none_gets_none_and_a_value_out_of_range_is_refused() {
    let app = TestApp::spawn(&[]).await;
    let me = Browser::new(&app);
    let (status, events) = me
        .turn(json!({"content": "[params] deep", "model": "ponder-demo-deep", "temperature": 0.5, "max_tokens": 99}))
        .await;
    assert_eq!(status, 200);
    let said = answer_text(&events);
    assert!(
        said.contains("- temperature: not sent") && said.contains("- output limit: 99"),
        "the model lists only an output limit: {said}"
    );
    for bad in [
        json!({"content": "x", "temperature": 2.5}),
        json!({"content": "x", "top_p": -1}),
        json!({"content": "x", "max_tokens": 0}),
        json!({"content": "x", "temperature": "hot"}),
    ] {
        let (status, body) = me.call("chat", bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
}

#[tokio::test]
async fn a_refused_parameter_ends_the_turn_with_send_again_without_it() {
    let app = TestApp::spawn(&[(
        "PONDER_MODEL_CONTROLS",
        "ponder-demo-deep=temperature+max_tokens",
    )])
    .await;
    let me = Browser::new(&app);
    let (_, events) = me
        .turn(json!({"content": "hello", "model": "ponder-demo-deep", "temperature": 0.5}))
        .await;
    let failure = events
        .iter()
        .find_map(|e| match e {
            TurnEvent::Error(f) => Some(f.clone()),
            _ => None,
        })
        .expect("the turn fails");
    assert_eq!(failure.code, ErrorCode::SettingRefused, "{failure:?}");
    assert!(
        failure
            .message
            .starts_with(ponder::domain::reasoning::SETTING_REFUSED),
        "{}",
        failure.message
    );
    assert_eq!(failure.params["settings"], "temperature: 0.5");
    let (_, events) = me
        .turn(json!({"content": "hello", "model": "ponder-demo-deep"}))
        .await;
    assert!(
        !answer_text(&events).is_empty(),
        "sent again without it, the turn answers"
    );
}
