//! Hostile input to the rich-content endpoints, over real HTTP: formulas nested thousands of
//! levels deep (which overflowed a serving thread's stack and aborted the whole server), code
//! blocks that keep the highlighter's regular expressions busy for many seconds, a client that
//! leaves mid-request, and one user asking for more highlighting than their share.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use ponder::server::rich::{nesting_depth, MAX_FORMULA_CHARS, MAX_NESTING};
use ponder::server::rich_work::{RUNNING_PER_USER, WAITING_PER_USER};
use serde_json::{json, Value};

/// The tests that load the processor run one at a time: the CPU measure is the process's, and
/// the cap and deadline tests must not wait for each other's work.
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn post(app: &TestApp, endpoint: &str, body: &Value) -> reqwest::Response {
    app.http
        .post(app.url(endpoint))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request")
}

async fn answers(response: reqwest::Response) -> Vec<Option<String>> {
    let status = response.status();
    let body = response.text().await.expect("body");
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).expect("a list of answers")
}

/// Each way of nesting a formula, as deep as the issue's (2,000 levels) or as the length cap
/// allows.
fn deep_formulas() -> Vec<(&'static str, String)> {
    let shapes: [(&str, &str, &str); 9] = [
        ("braces", "{", "}"),
        ("fractions", r"\frac{", "}{y}"),
        ("roots", r"\sqrt{", "}"),
        ("bare roots", r"\sqrt", ""),
        ("superscripts", "x^{", "}"),
        ("script commands", r"^\hat", ""),
        ("left right", r"\left(", r"\right)"),
        ("environments", r"\begin{matrix}", r"\end{matrix}"),
        ("optional arguments", r"\sqrt[", "]{2}"),
    ];
    shapes
        .iter()
        .map(|(name, open, close)| {
            let depth = ((MAX_FORMULA_CHARS - 1) / (open.len() + close.len())).min(2_000);
            let tex = format!("{}x{}", open.repeat(depth), close.repeat(depth));
            assert!(nesting_depth(&tex) > MAX_NESTING, "{name}");
            (*name, tex)
        })
        .collect()
}

#[tokio::test]
async fn deeply_nested_formulas_are_shown_as_written_and_the_server_lives() {
    let app = TestApp::spawn(&[]).await;
    for (name, tex) in deep_formulas() {
        let items = json!({"items": [
            {"tex": "x^2", "display": false},
            {"tex": tex, "display": true},
            {"tex": r"\frac{a}{b}", "display": false},
        ]});
        let got = answers(post(&app, "/api/render/math", &items).await).await;
        assert_eq!(got.len(), 3, "{name}");
        assert!(
            got[0].as_deref().is_some_and(|m| m.contains("<msup>")),
            "{name}: {got:?}"
        );
        assert_eq!(got[1], None, "{name}");
        assert!(
            got[2].as_deref().is_some_and(|m| m.contains("<mfrac>")),
            "{name}: {got:?}"
        );
    }
    let all: Vec<Value> = deep_formulas()
        .into_iter()
        .map(|(_, tex)| json!({"tex": tex}))
        .collect();
    let got = answers(post(&app, "/api/render/math", &json!({ "items": all })).await).await;
    assert!(got.iter().all(Option::is_none), "{got:?}");
    let again = answers(
        post(
            &app,
            "/api/render/math",
            &json!({"items": [{"tex": r"\sqrt{2}"}]}),
        )
        .await,
    )
    .await;
    assert!(again[0].is_some(), "the server still converts");
}

/// A perl block the highlighter's regular expressions take about 17 ms a line on in a debug
/// build (20 s for 100 KB in a release one), in lines.
fn slow_perl_lines(bytes: usize) -> String {
    "s/(a+)+$/\n".repeat(bytes / 10)
}

fn code_items(blocks: &[(&str, &str)]) -> Value {
    let items: Vec<Value> = blocks
        .iter()
        .map(|(lang, code)| json!({"lang": lang, "code": code}))
        .collect();
    json!({ "items": items })
}

#[tokio::test]
async fn pathological_code_comes_back_plain_within_a_bound() {
    let _heavy = HEAVY.lock().await;
    let app = TestApp::spawn(&[]).await;
    let lines = slow_perl_lines(100 * 1000);
    let one_line = "s/(a+)+$/".repeat(11_000);
    let body = code_items(&[
        ("rust", "fn main() { let x: u32 = 5; }\n"),
        ("perl", &lines),
        ("perl", &one_line),
    ]);
    let started = Instant::now();
    let response = tokio::time::timeout(
        Duration::from_secs(10),
        post(&app, "/api/render/code", &body),
    )
    .await
    .expect("answered within 10 s");
    let got = answers(response).await;
    let took = started.elapsed();
    assert!(
        got[0].as_deref().is_some_and(|h| h.contains("hl-")),
        "{got:?}"
    );
    assert_eq!(&got[1..], &[None, None], "after {took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// The CPU time this process (the test and the server in it) has used.
fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid.
    let usage = unsafe {
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()), 0);
        usage.assume_init()
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

#[tokio::test]
async fn a_client_that_leaves_stops_the_highlighting() {
    let _heavy = HEAVY.lock().await;
    let app = TestApp::spawn(&[]).await;
    let lines = slow_perl_lines(100 * 1000);
    let body = code_items(&[("perl", &lines), ("perl", &lines), ("perl", &lines)]);
    let cut = tokio::time::timeout(
        Duration::from_millis(400),
        post(&app, "/api/render/code", &body),
    )
    .await;
    assert!(cut.is_err(), "the request should still be running");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = cpu_time();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let spent = cpu_time() - before;
    assert!(
        spent < Duration::from_millis(500),
        "{spent:?} of CPU in the 1.5 s after the client left"
    );
    let got = answers(
        post(
            &app,
            "/api/render/code",
            &code_items(&[("rust", "let x = 1;\n")]),
        )
        .await,
    )
    .await;
    assert!(got[0].is_some());
}

#[tokio::test]
async fn one_user_gets_a_bounded_share_of_the_highlighter() {
    let _heavy = HEAVY.lock().await;
    let app = std::sync::Arc::new(TestApp::spawn(&[]).await);
    let lines = slow_perl_lines(20 * 1000);
    let body = code_items(&[("perl", &lines)]);
    let extra = 3;
    let mut requests = Vec::new();
    for _ in 0..RUNNING_PER_USER + WAITING_PER_USER + extra {
        let (app, body) = (app.clone(), body.clone());
        requests.push(tokio::spawn(async move {
            let sent = Instant::now();
            let response = post(&app, "/api/render/code", &body).await;
            let status = response.status();
            let text = response.text().await.expect("body");
            (status, text, sent.elapsed())
        }));
    }
    let (mut served, mut refused) = (0, 0);
    for request in requests {
        let (status, text, took) = request.await.expect("request task");
        if status == 429 {
            refused += 1;
            let error: Value = serde_json::from_str(&text).expect("an error body");
            assert_eq!(error["code"], "rate_limited", "{text}");
            assert_eq!(error["retryable"], true, "{text}");
            assert!(took < Duration::from_secs(1), "refused after {took:?}");
        } else {
            assert_eq!(status, 200, "{text}");
            served += 1;
        }
    }
    assert!(
        served >= RUNNING_PER_USER + WAITING_PER_USER,
        "{served} served"
    );
    assert!(
        (1..=extra).contains(&refused),
        "{refused} refused, {served} served"
    );
    let after = answers(
        post(
            &app,
            "/api/render/code",
            &code_items(&[("rust", "let x = 1;\n")]),
        )
        .await,
    )
    .await;
    assert!(after[0].is_some(), "the user's places were given back");
}
