//! Models and reasoning controls over real HTTP: the demo's model list in every provider shape,
//! the settings a turn carries (and nothing when they do not apply), a refused setting named in
//! the error, "Answer now" mid-thinking, and a model list that is slow, failing or huge.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::time::{Duration, Instant};

use axum::routing::get;
use common::browser::Browser;
use common::*;
use ponder::domain::{reasoning, ModelList, TurnEvent};
use ponder::server::config::Config;
use ponder::server::demo_upstream::THINKING;
use ponder::server::models::Catalogue;
use serde_json::{json, Value};

/// Waits for the background fetch of the model list.
async fn loaded(app: &TestApp) -> ModelList {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let list = app.state.models.list(&app.state.config);
        if list.note.is_none() && list.models.len() > 1 {
            return list;
        }
        assert!(
            Instant::now() < until,
            "the model list never loaded: {list:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn chat(app: &TestApp, body: Value) -> Vec<TurnEvent> {
    let response = app.post_chat(body.to_string()).await;
    assert_eq!(response.status(), 200);
    read_events(response).await
}

/// `POST /api/turn/answer-now` for `turn`; its status.
async fn answer_now(app: &TestApp, turn: &str) -> u16 {
    app.http
        .post(app.url("/api/turn/answer-now"))
        .header("content-type", "application/json")
        .body(json!({ "turn": turn }).to_string())
        .send()
        .await
        .expect("request")
        .status()
        .as_u16()
}

fn ask(prompt: &str, extra: Value) -> Value {
    let mut body = json!({"messages": [{"role": "user", "content": prompt}]});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    body
}

#[tokio::test]
async fn every_provider_lists_the_demo_models_with_their_controls() {
    for provider in ["openai", "anthropic", "responses", "gemini", "ollama"] {
        let app = TestApp::spawn(&[("PONDER_PROVIDER", provider)]).await;
        let list = loaded(&app).await;
        let ids: Vec<&str> = list.models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            ["ponder-demo", "ponder-demo-deep", "ponder-demo-mini"],
            "{provider}"
        );
        let mini = list.find("ponder-demo-mini").unwrap();
        assert!(!mini.controls.reasons, "{provider}: {mini:?}");
        let demo = list.find("ponder-demo").unwrap();
        assert!(demo.controls.reasons, "{provider}: {demo:?}");
        let response = app
            .http
            .post(app.url("/api/models/list"))
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let served: ModelList = response.json().await.unwrap();
        assert_eq!(served, list);
    }
}

#[tokio::test]
async fn thinking_off_effort_and_a_model_without_reasoning_change_the_turn() {
    let app = TestApp::spawn(&[]).await;
    loaded(&app).await;
    let plain = chat(&app, ask("why?", json!({}))).await;
    assert_eq!(thinking_text(&plain), THINKING);
    let off = chat(&app, ask("why?", json!({"thinking": false}))).await;
    assert!(
        !off.iter()
            .any(|e| matches!(e, TurnEvent::ThinkingStart { .. })),
        "{off:?}"
    );
    assert!(!answer_text(&off).is_empty());
    let high = chat(&app, ask("why?", json!({"effort": "high"}))).await;
    let low = chat(&app, ask("why?", json!({"effort": "low"}))).await;
    assert!(thinking_text(&low).len() < THINKING.len());
    assert!(thinking_text(&high).len() > THINKING.len());
    // The mini model takes no setting: Ponder sends none, so the demo (which refuses them) answers.
    let mini = chat(
        &app,
        ask(
            "why?",
            json!({"model": "ponder-demo-mini", "effort": "high"}),
        ),
    )
    .await;
    assert!(
        matches!(mini.last(), Some(TurnEvent::Done { .. })),
        "{mini:?}"
    );
    assert!(thinking_text(&mini).is_empty());
    let refused = app
        .post_chat(ask("why?", json!({"model": "gpt-elsewhere"})).to_string())
        .await;
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("not offered"));
}

#[tokio::test]
async fn a_setting_the_model_refuses_is_named_in_the_error() {
    let app = TestApp::spawn(&[("PONDER_MODEL_CONTROLS", "ponder-demo-mini=effort")]).await;
    loaded(&app).await;
    let events = chat(
        &app,
        ask(
            "why?",
            json!({"model": "ponder-demo-mini", "effort": "high"}),
        ),
    )
    .await;
    assert_one_terminal(&events);
    match events.last() {
        Some(TurnEvent::Error(f)) => {
            assert!(
                f.message.contains("reasoning_effort: \"high\""),
                "{}",
                f.message
            );
            assert!(!f.retryable);
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test]
async fn answer_now_cuts_the_thinking_and_the_same_turn_answers() {
    for provider in ["openai", "anthropic", "ollama", "gemini", "responses"] {
        let app = TestApp::spawn(&[
            ("PONDER_PROVIDER", provider),
            ("PONDER_DEMO_DELAY_MS", "25"),
        ])
        .await;
        loaded(&app).await;
        let response = app
            .post_chat(ask("[long-think] why?", json!({})).to_string())
            .await;
        assert_eq!(response.status(), 200);
        let turn = response.headers()["x-ponder-turn"]
            .to_str()
            .unwrap()
            .to_string();
        let (app, named) = (&app, &turn);
        let (events, asked) = read_events_cutting(response, |id| async move {
            assert_eq!(&id, named, "the header and the started event name one turn");
            assert_eq!(answer_now(app, &id).await, 200, "{provider}");
        })
        .await;
        assert!(asked, "{provider}: the thinking never started");
        assert_one_terminal(&events);
        assert!(
            matches!(events.last(), Some(TurnEvent::Done { .. })),
            "{provider}: {events:?}"
        );
        let cut = events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    TurnEvent::ThinkingEnd {
                        cut_short: true,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(cut, 1, "{provider}: {events:?}");
        assert!(
            thinking_text(&events).len() < THINKING.len() + 200,
            "{provider}: the thinking went on"
        );
        let end = events
            .iter()
            .position(|e| matches!(e, TurnEvent::ThinkingEnd { .. }))
            .unwrap();
        assert!(
            events[end..].iter().all(|e| !matches!(
                e,
                TurnEvent::Thinking { .. } | TurnEvent::ThinkingStart { .. }
            )),
            "{provider}: reasoning after the cut"
        );
        assert!(!answer_text(&events).is_empty(), "{provider}");
        assert_eq!(
            answer_now(app, &turn).await,
            404,
            "a finished turn is not found"
        );
    }
}

#[tokio::test]
async fn a_stored_conversation_remembers_its_model_and_settings() {
    let app = TestApp::spawn(&[]).await;
    loaded(&app).await;
    let first = chat(
        &app,
        json!({"content": "hello", "model": "ponder-demo-deep", "effort": "low"}),
    )
    .await;
    let Some(conversation) = first.iter().find_map(|e| match e {
        TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
        _ => None,
    }) else {
        panic!("{first:?}")
    };
    let conversation = &conversation;
    let next = chat(
        &app,
        json!({"conversation": conversation, "content": "again"}),
    )
    .await;
    assert!(
        thinking_text(&next).len() < THINKING.len(),
        "low effort kept"
    );
    let me = app.state.local_identity().await.unwrap();
    let stored = app
        .state
        .store
        .scoped(&me)
        .conversation(conversation, false)
        .await
        .unwrap();
    assert_eq!(stored.model.as_deref(), Some("ponder-demo-deep"));
    let answer = stored.messages[3].shown().unwrap();
    assert_eq!(answer.model.as_deref(), Some("ponder-demo-deep"));
    assert_eq!(answer.settings.effort, Some(ponder::domain::Effort::Low));
}

/// An upstream whose model list answers slowly, fails, or lists 5,000 models.
async fn list_server(kind: &'static str) -> String {
    let app = axum::Router::new().route(
        "/v1/models",
        get(move || async move {
            match kind {
                "slow" => {
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    (axum::http::StatusCode::OK, "{\"data\":[]}".to_string())
                }
                "late" => {
                    tokio::time::sleep(Duration::from_millis(400)).await;
                    let data = json!({"data": [{"id": "vendor/gpt-4o", "supported_parameters": ["max_tokens"]}]});
                    (axum::http::StatusCode::OK, data.to_string())
                }
                "fail" => (
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "{\"error\":\"down\"}".to_string(),
                ),
                _ => {
                    let data: Vec<Value> = (0..5000)
                        .map(|i| json!({"id": format!("vendor/model-{i}"), "supported_parameters": ["reasoning"]}))
                        .collect();
                    (axum::http::StatusCode::OK, json!({"data": data}).to_string())
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/v1")
}

fn config_for(url: &str) -> Config {
    Config::from_lookup(|n| match n {
        "PONDER_UPSTREAM_URL" => Some(url.to_string()),
        "PONDER_MODEL" => Some("configured".into()),
        _ => None,
    })
    .unwrap()
}

#[tokio::test]
async fn a_turn_in_the_servers_first_seconds_waits_for_the_list_not_the_models_name() {
    use ponder::domain::sampling::Tunables;
    let late = list_server("late").await;
    let config = std::sync::Arc::new(config_for(&late));
    use ponder::domain::sampling::Tunable;
    let asked = ponder::domain::ReasoningSettings::default()
        .with_sampling(Tunable::Temperature, Some(0.5))
        .and_then(|s| s.with_sampling(Tunable::MaxTokens, Some(99.0)))
        .unwrap();
    let idle = Catalogue::default();
    let started = Instant::now();
    idle.first_fetch().await;
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "with no refresh running nothing is awaited"
    );
    let guessed = idle
        .resolve(&config, Some("vendor/gpt-4o"), None, asked)
        .unwrap();
    assert_eq!(guessed.controls.params, Tunables::ALL, "the name's family");
    let catalogue = std::sync::Arc::new(Catalogue::default());
    catalogue.spawn_refresh(config.clone(), reqwest::Client::new(), late.clone());
    catalogue.first_fetch().await;
    let options = catalogue
        .resolve(&config, Some("vendor/gpt-4o"), None, asked)
        .unwrap();
    assert_eq!(options.controls.params, Tunables::MAX_TOKENS_ONLY);
    assert_eq!(options.settings.temperature, None, "{:?}", options.settings);
    assert_eq!(options.settings.max_tokens, Some(99));
}

#[tokio::test]
async fn the_model_list_survives_a_slow_a_failing_and_a_huge_upstream() {
    let http = reqwest::Client::new();
    let slow = list_server("slow").await;
    let config = config_for(&slow);
    let catalogue = std::sync::Arc::new(Catalogue::default());
    let started = Instant::now();
    let refresh = {
        let (c, config, http, slow) = (
            catalogue.clone(),
            config.clone(),
            http.clone(),
            slow.clone(),
        );
        tokio::spawn(async move { c.refresh(&config, &http, &slow).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let during = catalogue.list(&config);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "listing never waits on the upstream"
    );
    assert_eq!(during.models.len(), 1);
    assert_eq!(during.models[0].id, "configured");
    assert!(during.note.unwrap().contains("loading"));
    refresh.await.unwrap();
    let after = catalogue.list(&config);
    assert_eq!(after.models.len(), 1);
    assert!(after.note.unwrap().contains("did not list its models"));

    let fail = list_server("fail").await;
    let config = config_for(&fail);
    let catalogue = Catalogue::default();
    catalogue.refresh(&config, &http, &fail).await;
    let list = catalogue.list(&config);
    assert_eq!(list.models.len(), 1);
    assert!(list.note.unwrap().contains("HTTP 500"));

    let huge = list_server("huge").await;
    let config = config_for(&huge);
    let catalogue = Catalogue::default();
    catalogue.refresh(&config, &http, &huge).await;
    let list = catalogue.list(&config);
    assert_eq!(list.models.len(), 5001, "the 5,000 and the configured one");
    assert!(list.models[1].controls.reasons);
    let texts: Vec<String> = list
        .models
        .iter()
        .map(|m| reasoning::search_text(m, str::to_lowercase))
        .collect();
    let (shown, total) =
        reasoning::filter_models(&list.models, &texts, "model-4999", str::to_lowercase, 50);
    assert_eq!((shown.len(), total), (1, 1));
}

#[tokio::test]
async fn answer_now_in_a_stored_turn_leaves_one_answer_with_its_block_cut_short() {
    let app = TestApp::spawn(&[("PONDER_DEMO_DELAY_MS", "25")]).await;
    loaded(&app).await;
    let response = app
        .post_chat(json!({"content": "[long-think] why?"}).to_string())
        .await;
    assert_eq!(response.status(), 200);
    let app = &app;
    let (events, asked) = read_events_cutting(response, |id| async move {
        assert_eq!(answer_now(app, &id).await, 200);
    })
    .await;
    assert!(asked);
    assert_one_terminal(&events);
    let Some(TurnEvent::Turn { conversation, .. }) = events.get(1) else {
        panic!("{events:?}")
    };
    let me = app.state.local_identity().await.unwrap();
    let stored = app
        .state
        .store
        .scoped(&me)
        .conversation(conversation, true)
        .await
        .unwrap();
    assert_eq!(stored.messages.len(), 2, "the question and one answer");
    let answer = stored.messages[1].shown().unwrap();
    assert_eq!(answer.blocks.len(), 1);
    assert!(answer.blocks[0].cut_short);
    assert!(
        answer.content.contains("Here is what I found"),
        "{}",
        answer.content
    );
}

#[tokio::test]
async fn another_user_cannot_reach_a_running_turn() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password"), ("PONDER_DEMO_DELAY_MS", "20")]).await;
    let (root, ana) = Browser::alice_and_bob(&app).await;
    let response = root
        .request(
            "/api/chat",
            json!({"messages": [{"role": "user", "content": "[long-think] why?"}]}).to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let turn = response.headers()["x-ponder-turn"]
        .to_str()
        .unwrap()
        .to_string();
    let (status, body) = ana.call("turn/answer-now", json!({"turn": turn})).await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = Browser::new(&app)
        .call("turn/answer-now", json!({"turn": turn}))
        .await;
    assert_eq!(status, 401, "signed out");
    let events = read_events(response).await;
    assert_one_terminal(&events);
    assert!(
        !events.iter().any(|e| matches!(
            e,
            TurnEvent::ThinkingEnd {
                cut_short: true,
                ..
            }
        )),
        "the turn went on as if nothing was asked"
    );
    assert_eq!(thinking_text(&events).len(), {
        let full = ponder::server::demo_upstream::Scenario::LongThink.script();
        full.steps
            .iter()
            .map(|s| match s {
                ponder::server::demo_upstream::Step::Think(t) => t.len(),
                _ => 0,
            })
            .sum::<usize>()
    });
}
