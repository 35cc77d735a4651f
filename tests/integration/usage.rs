//! Usage, cost and quotas over real HTTP, through the demo model in every wire format: each
//! turn's usage lands in the ledger as its `done` reported it (reasoning apart), priced when
//! the operator set prices; a stopped turn counts what it consumed, estimated and marked; a
//! reader over their limit is refused before the upstream is called, told when it resets; a
//! burst cannot overshoot a limit by more than the turns it started; the administrator sets
//! each reader's limits, sees everyone and exports CSV; the metrics count the same tokens.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::TestApp;
use ponder::domain::{TurnEvent, Usage};
use serde_json::{json, Value};

fn prices_file() -> String {
    let path = std::env::temp_dir().join(format!(
        "ponder-prices-{}.json",
        ponder::server::store::ids::new_id()
    ));
    let prices = json!({"currency": "EUR", "models": {"*": {"input": 2.0, "output": 8.0, "reasoning": 10.0}}});
    std::fs::write(&path, prices.to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

async fn app(provider: &str, more: &[(&str, &str)]) -> TestApp {
    let prices = prices_file();
    let mut vars = vec![
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
        ("PONDER_PROVIDER", provider),
        ("PONDER_TITLES", "off"),
        ("PONDER_PRICES", prices.as_str()),
    ];
    vars.extend_from_slice(more);
    TestApp::spawn(&vars).await
}

async fn chat(app: &TestApp, user: &str, body: Value) -> (u16, Vec<TurnEvent>, Value) {
    let response = app.post_as(user, "/api/chat", body).await;
    let status = response.status().as_u16();
    if status != 200 {
        return (
            status,
            Vec::new(),
            response.json().await.unwrap_or(Value::Null),
        );
    }
    (status, common::read_events(response).await, Value::Null)
}

fn done_usage(events: &[TurnEvent]) -> Usage {
    match events.last() {
        Some(TurnEvent::Done { usage, .. }) => usage.clone().expect("done carries usage"),
        other => panic!("the turn ended with {other:?}"),
    }
}

async fn report(app: &TestApp, user: &str, args: Value) -> Value {
    app.ok_as(user, "/api/usage/report", args).await
}

/// `GET /api/usage.csv` with `query`, as `user`: the status, the content type and the text.
async fn csv(app: &TestApp, user: &str, query: &str) -> (u16, String, String) {
    let response = app
        .http
        .get(app.url(&format!("/api/usage.csv{query}")))
        .header("Remote-User", user)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap_or("").to_string())
        .unwrap_or_default();
    (status, kind, response.text().await.unwrap())
}

async fn demo_started(app: &TestApp) -> u64 {
    common::demo_stats(app).await["started"].as_u64().unwrap()
}

#[tokio::test]
async fn every_wire_format_lands_in_the_ledger_as_its_done_reported_it_and_priced() {
    for provider in common::PROVIDERS {
        let app = app(provider, &[]).await;
        let (status, events, _) = chat(
            &app,
            "ann",
            json!({"content": "[thinking] why is the sky blue?"}),
        )
        .await;
        assert_eq!(status, 200, "{provider}");
        let usage = done_usage(&events);
        let input = usage.input_tokens.expect("input");
        let output = usage.output_tokens.expect("output");
        let reasoning = usage.reasoning_tokens.unwrap_or(0);
        assert!(output > 0 && reasoning > 0, "{provider}: {usage:?}");
        let cost = usage.cost.clone().expect("priced");
        assert_eq!(cost.currency, "EUR");
        let want = 2 * input + 8 * (output - reasoning) + 10 * reasoning;
        assert_eq!(cost.micros, want, "{provider}: {usage:?}");
        // A stateless turn counts too, in the same reader's month.
        let (status, stateless, _) = chat(
            &app,
            "ann",
            json!({"messages": [{"role": "user", "content": "[thinking] and the sunset?"}]}),
        )
        .await;
        assert_eq!(status, 200);
        let second = done_usage(&stateless);
        let r = report(&app, "ann", json!({})).await;
        let total = &r["total"];
        assert_eq!(total["turns"], 2, "{provider}: {r}");
        assert_eq!(
            total["input_tokens"].as_u64(),
            Some(input + second.input_tokens.unwrap()),
            "{provider}"
        );
        assert_eq!(
            total["output_tokens"].as_u64(),
            Some(output + second.output_tokens.unwrap()),
            "{provider}"
        );
        assert_eq!(
            total["reasoning_tokens"].as_u64(),
            Some(reasoning + second.reasoning_tokens.unwrap_or(0)),
            "{provider}"
        );
        assert_eq!(
            total["cost_micros"].as_u64(),
            Some(cost.micros + second.cost.unwrap().micros)
        );
        assert_eq!(r["currency"], "EUR");
        let today = r["days"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(today["turns"], 2, "{r}");
        assert_eq!(r["models"].as_array().unwrap().len(), 1);
        assert!(
            total["thinking_ms"].as_u64().unwrap() > 0,
            "{provider}: {r}"
        );
        // Another reader sees none of it.
        let bob = report(&app, "bob", json!({})).await;
        assert_eq!(bob["total"]["turns"], 0);
        // The metrics count the same tokens.
        let metrics = app
            .http
            .get(app.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let reasoning_line = metrics
            .lines()
            .find(|l| l.starts_with("ponder_tokens_total{") && l.contains("kind=\"reasoning\""))
            .unwrap_or_else(|| panic!("{provider}: no reasoning tokens in {metrics}"));
        let counted: u64 = reasoning_line.rsplit(' ').next().unwrap().parse().unwrap();
        assert_eq!(counted, reasoning + second.reasoning_tokens.unwrap_or(0));
    }
}

#[tokio::test]
async fn a_stopped_turn_counts_what_it_consumed_estimated_and_so_marked() {
    let app = app("openai", &[("PONDER_DEMO_DELAY_MS", "15")]).await;
    let response = app
        .post_as(
            "ann",
            "/api/chat",
            json!({"content": "[long-think] take your time"}),
        )
        .await;
    assert_eq!(response.status(), 200);
    let (events, stopped) = common::read_events_cutting(response, |turn| {
        let app = &app;
        async move {
            app.ok_as("ann", "/api/turn/stop", json!({"turn": turn}))
                .await;
        }
    })
    .await;
    assert!(stopped);
    assert!(
        events.last().is_some_and(TurnEvent::is_stop),
        "{:?}",
        events.last()
    );
    let usage = done_usage(&events);
    assert!(usage.estimated, "{usage:?}");
    assert!(usage.reasoning_tokens.unwrap_or(0) > 0, "{usage:?}");
    let r = report(&app, "ann", json!({})).await;
    assert_eq!(r["total"]["turns"], 1);
    assert_eq!(r["total"]["estimated_turns"], 1);
    assert_eq!(
        r["total"]["reasoning_tokens"].as_u64(),
        usage.reasoning_tokens
    );
    let (status, kind, text) = csv(&app, "ann", "").await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/csv"), "{kind}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("time,user,model"));
    assert!(
        lines[1].contains(",ann,") && lines[1].contains(",stopped,") && lines[1].contains(",yes,"),
        "{text}"
    );
}

#[tokio::test]
async fn a_reader_over_the_limit_is_refused_before_the_upstream_and_told_when_it_resets() {
    let app = app("anthropic", &[("PONDER_QUOTA", "tokens/day=1")]).await;
    // The first reader is the administrator, exempt by default.
    let (status, _, _) = chat(&app, "root", json!({"content": "hello"})).await;
    assert_eq!(status, 200);
    let (status, events, _) = chat(&app, "root", json!({"content": "hello again"})).await;
    assert_eq!(status, 200, "an administrator is exempt");
    assert_eq!(done_usage(&events).limit_reached, None);
    let (status, events, _) = chat(&app, "ann", json!({"content": "hello"})).await;
    assert_eq!(status, 200, "under the limit");
    // The turn that crossed the limit finished, and says so.
    let crossed = done_usage(&events)
        .limit_reached
        .expect("the limit is reached");
    assert!(crossed.ends_with("T00:00:00Z"), "{crossed}");
    let before = demo_started(&app).await;
    for body in [
        json!({"content": "one more"}),
        json!({"messages": [{"role": "user", "content": "one more"}]}),
    ] {
        let (status, _, error) = chat(&app, "ann", body).await;
        assert_eq!(status, 429, "{error}");
        assert_eq!(error["code"], "quota_exceeded");
        assert_eq!(error["params"]["period"], "day");
        assert_eq!(error["params"]["limit"], "1");
        let now = ponder::server::store::now_ms();
        let midnight = (now / 86_400_000 + 1) * 86_400_000;
        assert_eq!(error["params"]["resets_at_ms"], midnight.to_string());
        let at = error["params"]["resets_at"].as_str().unwrap();
        assert!(at.ends_with("T00:00:00Z"), "{at}");
        assert!(error["message"].as_str().unwrap().contains(at));
    }
    assert_eq!(
        demo_started(&app).await,
        before,
        "the upstream was not called"
    );
    let r = report(&app, "ann", json!({})).await;
    let quota = &r["quotas"][0];
    assert_eq!(quota["quota"]["limit"], 1);
    assert!(quota["used"].as_u64().unwrap() > 1);
    // The administrator lifts ann's limit, then puts her back on the default.
    let lift = app
        .post_as(
            "ann",
            "/api/usage/set_quota",
            json!({"name": "ann", "limits": ""}),
        )
        .await;
    assert_eq!(lift.status(), 403, "only an administrator sets limits");
    app.ok_as(
        "root",
        "/api/usage/set_quota",
        json!({"name": "ann", "limits": ""}),
    )
    .await;
    assert_eq!(chat(&app, "ann", json!({"content": "free"})).await.0, 200);
    let settings = app.ok_as("root", "/api/usage/quotas", json!({})).await;
    assert_eq!(settings["default"], "tokens/day=1");
    assert_eq!(settings["readers"], json!([["ann", ""]]));
    let bad = app
        .post_as(
            "root",
            "/api/usage/set_quota",
            json!({"name": "ann", "limits": "tokens/week=3"}),
        )
        .await;
    assert_eq!(bad.status(), 400);
    let nobody = app
        .post_as(
            "root",
            "/api/usage/set_quota",
            json!({"name": "nobody", "limits": ""}),
        )
        .await;
    assert_eq!(nobody.status(), 404);
    app.ok_as("root", "/api/usage/set_quota", json!({"name": "ann"}))
        .await;
    assert_eq!(chat(&app, "ann", json!({"content": "again"})).await.0, 429);
    // The administrator's view sums everyone, reader by reader, and exports it.
    let all = report(&app, "root", json!({"everyone": true})).await;
    let names: Vec<&str> = all["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["key"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ann") && names.contains(&"root"), "{all}");
    assert_eq!(all["total"]["turns"], 4);
    // The same for one reader.
    let ann = report(&app, "root", json!({"reader": "ann"})).await;
    assert_eq!(ann["total"]["turns"], 2, "{ann}");
    assert!(ann["users"].is_null() || ann["users"] == json!([]), "{ann}");
    let (_, _, ann_csv) = csv(&app, "root", "?reader=ann").await;
    assert_eq!(ann_csv.lines().count(), 3, "{ann_csv}");
    assert_eq!(
        app.post_as("ann", "/api/usage/report", json!({"reader": "root"}))
            .await
            .status(),
        403
    );
    let refused = app
        .post_as("ann", "/api/usage/report", json!({"everyone": true}))
        .await;
    assert_eq!(refused.status(), 403);
    let (_, _, csv_text) = csv(&app, "root", "?everyone=1").await;
    assert_eq!(csv_text.lines().count(), 5, "{csv_text}");
    assert_eq!(csv(&app, "ann", "?everyone=1").await.0, 403);
    assert_eq!(csv(&app, "ann", "?month=2026-13").await.0, 400);
}

#[tokio::test]
async fn a_burst_cannot_overshoot_the_limit_by_more_than_the_turns_it_started() {
    let app = app("openai", &[("PONDER_QUOTA", "tokens/day=1")]).await;
    let _ = chat(&app, "root", json!({"content": "I am the administrator"})).await;
    let burst = |n: usize| {
        let app = &app;
        futures::future::join_all((0..n).map(move |i| async move {
            chat(app, "ann", json!({"content": format!("burst {i}")}))
                .await
                .0
        }))
    };
    let first = burst(6).await;
    let started = first.iter().filter(|s| **s == 200).count();
    assert!(started >= 1, "{first:?}");
    assert!(first.iter().all(|s| *s == 200 || *s == 429), "{first:?}");
    // Every turn of the burst has ended: the next ones are all refused.
    let second = burst(6).await;
    assert_eq!(second, vec![429; 6]);
    let r = report(&app, "ann", json!({})).await;
    assert_eq!(r["total"]["turns"].as_u64(), Some(started as u64));
}

#[tokio::test]
async fn a_month_is_asked_for_in_its_iso_form() {
    let app = app("openai", &[]).await;
    let r = report(&app, "ann", json!({"month": "2026-02"})).await;
    assert_eq!(r["month"], "2026-02");
    assert_eq!(r["days"].as_array().unwrap().len(), 28);
    let bad = app
        .post_as("ann", "/api/usage/report", json!({"month": "February"}))
        .await;
    assert_eq!(bad.status(), 400);
}

#[tokio::test]
async fn on_postgresql_the_ledger_sums_limits_and_exports_the_same() {
    let database = common::postgres::database().await;
    let app = app(
        "gemini",
        &[
            ("PONDER_DATABASE_URL", database.as_str()),
            ("PONDER_QUOTA", "tokens/month=1"),
        ],
    )
    .await;
    let _ = chat(&app, "root", json!({"content": "I am the administrator"})).await;
    let (status, events, _) = chat(&app, "ann", json!({"content": "why?"})).await;
    assert_eq!(status, 200);
    let usage = done_usage(&events);
    let r = report(&app, "ann", json!({})).await;
    assert_eq!(r["total"]["output_tokens"].as_u64(), usage.output_tokens);
    assert_eq!(
        r["total"]["reasoning_tokens"].as_u64(),
        usage.reasoning_tokens
    );
    assert_eq!(
        r["total"]["cost_micros"].as_u64(),
        usage.cost.map(|c| c.micros)
    );
    let (status, _, error) = chat(&app, "ann", json!({"content": "more"})).await;
    assert_eq!(
        (status, error["params"]["period"].as_str()),
        (429, Some("month"))
    );
    app.ok_as(
        "root",
        "/api/usage/set_quota",
        json!({"name": "ann", "limits": "tokens/day=100000000"}),
    )
    .await;
    assert_eq!(chat(&app, "ann", json!({"content": "more"})).await.0, 200);
    let all = report(&app, "root", json!({"everyone": true})).await;
    assert_eq!(all["total"]["turns"], 3);
    let (_, _, csv_text) = csv(&app, "root", "?everyone=1").await;
    assert_eq!(csv_text.lines().count(), 4, "{csv_text}");
    let ann = report(&app, "root", json!({"reader": "ann"})).await;
    assert_eq!(ann["total"]["turns"], 2, "{ann}");
    assert_eq!(csv(&app, "root", "?reader=ann").await.2.lines().count(), 3);
    common::postgres::drop_database(&database).await;
}
