//! Today's reasoning APIs over real HTTP, against the demo model speaking each provider's wire:
//! the request Ponder sends each model family (the demo refuses what the real API refuses) and
//! what the thinking block then shows: raw, a summary, hidden by the provider or redacted.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::Browser;
use common::*;
use ponder::domain::{ThinkingKind, TurnEvent};
use serde_json::json;

/// Each block's last announced kind, in block order.
fn block_kinds(events: &[TurnEvent]) -> Vec<ThinkingKind> {
    let mut kinds: Vec<(u32, ThinkingKind)> = Vec::new();
    for e in events {
        if let TurnEvent::ThinkingStart { block, kind, .. } = e {
            match kinds.iter_mut().find(|(b, _)| b == block) {
                Some(known) => known.1 = *kind,
                None => kinds.push((*block, *kind)),
            }
        }
    }
    kinds.into_iter().map(|(_, k)| k).collect()
}

async fn turn_with(vars: &[(&str, &str)], prompt: &str) -> Vec<TurnEvent> {
    let app = TestApp::spawn(vars).await;
    let events = app.turn(prompt).await;
    assert_one_terminal(&events);
    assert!(
        matches!(events.last(), Some(TurnEvent::Done { .. })),
        "{events:#?}"
    );
    events
}

/// Opus 4.7 takes adaptive thinking only: a manual budget is the real API's `400` (the demo
/// answers it too), and the default display streams only a signature. Ponder asks for
/// adaptive thinking summarized, so the block shows the summary.
#[tokio::test]
async fn an_opus_4_7_turn_shows_a_summarized_block_never_a_400() {
    for model in [
        "claude-opus-4-7",
        "claude-mythos-preview",
        "claude-sonnet-4-6",
    ] {
        let events = turn_with(
            &[("PONDER_PROVIDER", "anthropic"), ("PONDER_MODEL", model)],
            "Why is the sky blue?",
        )
        .await;
        assert_eq!(block_kinds(&events), [ThinkingKind::Summary], "{model}");
        let (thinking, answer) = reader_view(&events);
        assert!(
            thinking.len() > 40,
            "{model}: the summary is shown: {thinking:?}"
        );
        assert!(
            answer.contains(ponder::server::demo_upstream::ANSWER.trim_end()),
            "{model}"
        );
    }
    let older = turn_with(
        &[
            ("PONDER_PROVIDER", "anthropic"),
            ("PONDER_MODEL", "claude-sonnet-4-5"),
        ],
        "Why is the sky blue?",
    )
    .await;
    assert_eq!(block_kinds(&older), [ThinkingKind::Raw], "a budget model");
}

/// A provider that reasoned but sent no readable text says so: `hidden`, distinct from
/// Anthropic's `redacted` (encrypted for safety).
#[tokio::test]
async fn withheld_reasoning_is_hidden_and_encrypted_reasoning_redacted() {
    for (provider, model, prompt, kind) in [
        (
            "anthropic",
            "claude-opus-4-7",
            "[hidden] Why?",
            ThinkingKind::Hidden,
        ),
        (
            "anthropic",
            "claude-sonnet-4-5",
            "[redacted] Why?",
            ThinkingKind::Redacted,
        ),
        (
            "responses",
            "ponder-demo",
            "[redacted] Why?",
            ThinkingKind::Hidden,
        ),
        (
            "responses",
            "ponder-demo",
            "[hidden] Why?",
            ThinkingKind::Hidden,
        ),
        (
            "gemini",
            "ponder-demo",
            "[hidden] Why?",
            ThinkingKind::Hidden,
        ),
    ] {
        let events = turn_with(
            &[("PONDER_PROVIDER", provider), ("PONDER_MODEL", model)],
            prompt,
        )
        .await;
        assert_eq!(block_kinds(&events), [kind], "{provider} {prompt}");
        assert_eq!(thinking_text(&events), "", "{provider} {prompt}");
        assert!(
            answer_text(&events).contains(ponder::server::demo_upstream::ANSWER.trim_end()),
            "{provider} {prompt}"
        );
    }
}

/// A stored answer keeps the block's kind: `conversations/get` and the export say `hidden`.
#[tokio::test]
async fn a_stored_hidden_block_stays_hidden() {
    let app = TestApp::spawn(&[
        ("PONDER_PROVIDER", "anthropic"),
        ("PONDER_MODEL", "claude-opus-4-7"),
    ])
    .await;
    let me = Browser::new(&app);
    let (status, events) = me.turn(json!({"content": "[hidden] Why?"})).await;
    assert_eq!(status, 200);
    let conversation = events
        .iter()
        .find_map(|e| match e {
            TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
            _ => None,
        })
        .expect("stored");
    for endpoint in ["conversations/get", "conversations/export"] {
        let opened = me.ok(endpoint, json!({"id": conversation})).await;
        let block = &opened["messages"][1]["versions"][0]["blocks"][0];
        assert_eq!(block["kind"], "hidden", "{endpoint}: {block}");
    }
}

/// Google's Interactions API, the seventh wire format: thought summaries in a summary block,
/// the answer, server tools as steps with their sources, and the usage.
#[tokio::test]
async fn the_interactions_api_streams_summaries_tools_and_the_answer() {
    let vars = [
        ("PONDER_PROVIDER", "gemini-interactions"),
        ("PONDER_MODEL", "ponder-demo"),
    ];
    let events = turn_with(&vars, "Why is the sky blue?").await;
    assert_eq!(block_kinds(&events), [ThinkingKind::Summary]);
    let (thinking, answer) = reader_view(&events);
    assert!(thinking.len() > 40, "{thinking:?}");
    assert!(answer.contains(ponder::server::demo_upstream::ANSWER.trim_end()));
    match events.last() {
        Some(TurnEvent::Done {
            usage: Some(usage), ..
        }) => {
            assert!(usage.reasoning_tokens.is_some_and(|n| n > 0), "{usage:?}");
            assert_eq!(usage.input_tokens, Some(12));
        }
        other => panic!("{other:?}"),
    }
    let tools = turn_with(&vars, "[tools] when?").await;
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolStart { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["google_search", "code_execution"]);
    let sources = tools
        .iter()
        .filter(|e| matches!(e, TurnEvent::Source { .. }))
        .count();
    assert_eq!(sources, 3);
}

/// Effort levels beyond low, medium and high: the picker lists the levels each model takes,
/// and a level a model lacks is sent as its nearest one, never as a level the API refuses (the
/// demo answers Anthropic's `400` to `xhigh` on Claude 4.6, as the API does).
#[tokio::test]
async fn each_model_is_offered_and_sent_only_the_effort_levels_it_takes() {
    let app = TestApp::spawn(&[
        ("PONDER_PROVIDER", "anthropic"),
        ("PONDER_MODEL", "claude-opus-4-7"),
        (
            "PONDER_MODELS",
            "claude-opus-4-7,claude-sonnet-4-6,claude-sonnet-4-5",
        ),
    ])
    .await;
    let me = Browser::new(&app);
    let list = me.ok("models/list", json!({})).await;
    let levels = |id: &str| -> Vec<String> {
        list["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .map(|m| serde_json::from_value(m["controls"]["levels"].clone()).unwrap())
            .unwrap_or_default()
    };
    assert_eq!(
        levels("claude-opus-4-7"),
        ["low", "medium", "high", "xhigh", "max"]
    );
    assert_eq!(
        levels("claude-sonnet-4-6"),
        ["low", "medium", "high", "max"]
    );
    assert_eq!(levels("claude-sonnet-4-5"), ["low", "medium", "high"]);
    for model in ["claude-opus-4-7", "claude-sonnet-4-6", "claude-sonnet-4-5"] {
        let (status, events) = me
            .turn(json!({
                "messages": [{"role": "user", "content": "Why?"}],
                "model": model,
                "effort": "xhigh",
            }))
            .await;
        assert_eq!(status, 200, "{model}");
        assert!(
            matches!(events.last(), Some(TurnEvent::Done { .. })),
            "{model}: {events:#?}"
        );
    }
    let demo = &app.state.upstream_base;
    let refused = reqwest::Client::new()
        .post(format!("{demo}/messages"))
        .header("anthropic-version", "2023-06-01")
        .json(&json!({
            "model": "claude-sonnet-4-6", "max_tokens": 100, "stream": true,
            "messages": [{"role": "user", "content": "Why?"}],
            "thinking": {"type": "adaptive"}, "output_config": {"effort": "xhigh"},
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        refused.status(),
        400,
        "the demo refuses what the API refuses"
    );
}
