//! The second hardening round over real HTTP: malformed bodies on every endpoint, DNS
//! rebinding without accounts, sign-in limits that keep bounded memory and cannot be turned on
//! a user, and the names an identity provider sends.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::{status_and_json, Browser};
use common::*;
use serde_json::{json, Value};

/// Every endpoint that takes a JSON body, as the page calls it.
const JSON_ENDPOINTS: &[&str] = &[
    "chat",
    "turn/stop",
    "turn/answer-now",
    "workspaces/list",
    "workspaces/create",
    "workspaces/rename",
    "conversations/list",
    "conversations/get",
    "conversations/rename",
    "conversations/pin",
    "conversations/tags",
    "conversations/move",
    "conversations/delete",
    "conversations/restore",
    "blocks/text",
    "blocks/open",
    "blocks/open-at",
    "conversations/branch",
    "conversations/export",
    "messages/version",
    "search",
    "conversations/import",
    "preferences/get",
    "preferences/set",
    "me",
    "auth/setup",
    "auth/sign-in",
    "auth/sign-out",
    "auth/sign-out-everywhere",
    "users/list",
    "users/add",
    "users/remove",
    "tokens/list",
    "tokens/create",
    "tokens/revoke",
    "shares/create",
    "shares/list",
    "shares/update",
    "shares/revoke",
    "shares/all",
    "shares/revoke-any",
    "models/list",
    "instructions/get",
    "instructions/set",
    "titles/wait",
    "presets/list",
    "presets/save",
    "presets/delete",
    "render/math",
    "render/code",
];

/// Bodies no endpoint takes: the wrong type, cut short, not UTF-8, nested past any parser's
/// depth, a lone surrogate, a field of the wrong type.
fn malformed_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    vec![
        ("an array", b"[1, 2]".to_vec()),
        ("a truncated object", b"{\"id\": \"abc".to_vec()),
        ("invalid UTF-8", b"{\"\xff\xfe\": 1}".to_vec()),
        ("10,000-deep nesting", deep.into_bytes()),
        ("a lone surrogate", br#"{"\ud800": 1}"#.to_vec()),
        ("a number", b"42".to_vec()),
        ("nothing", Vec::new()),
    ]
}

async fn post_raw(app: &TestApp, endpoint: &str, body: Vec<u8>) -> (u16, Value) {
    let response = app
        .http
        .post(app.url(&format!("/api/{endpoint}")))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("request");
    status_and_json(response).await
}

#[tokio::test]
async fn a_malformed_body_is_a_400_about_the_request_on_every_endpoint() {
    let app = TestApp::spawn(&[]).await;
    for endpoint in JSON_ENDPOINTS {
        for (what, body) in malformed_bodies() {
            let (status, answer) = post_raw(&app, endpoint, body).await;
            assert_eq!(status, 400, "{endpoint} with {what}: {answer}");
            assert_eq!(answer["type"], "error", "{endpoint} with {what}: {answer}");
            assert_eq!(
                answer["code"], "bad_request",
                "{endpoint} with {what}: {answer}"
            );
            let message = answer["message"].as_str().unwrap_or_default();
            assert!(
                message.starts_with("Ponder could not accept this request. (")
                    && answer["params"]["detail"]
                        .as_str()
                        .is_some_and(|d| !d.is_empty())
                    && !message.contains("results"),
                "{endpoint} with {what}: {message}"
            );
        }
    }
    // Deep nesting inside a field no endpoint reads is skipped, never a crash or a 500.
    let deep_field = format!("{{\"zz\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000));
    for endpoint in JSON_ENDPOINTS {
        let (status, answer) = post_raw(&app, endpoint, deep_field.clone().into_bytes()).await;
        assert!(status < 500, "{endpoint}: {status} {answer}");
    }
    // A missing field and a wrong-typed one, where the endpoint takes fields.
    for (endpoint, body) in [
        ("conversations/rename", json!({"id": "x"})),
        ("conversations/rename", json!({"id": 5, "title": "t"})),
        ("render/math", json!({"items": "x^2"})),
        ("tokens/create", json!({"name": ["cli"]})),
    ] {
        let (status, answer) = post_raw(&app, endpoint, body.to_string().into_bytes()).await;
        assert_eq!(status, 400, "{endpoint} {body}: {answer}");
        assert_eq!(answer["code"], "bad_request");
    }
    let query = app
        .http
        .get(app.url("/api/turn/events?nothing=here"))
        .send()
        .await
        .expect("request");
    assert_eq!(query.status(), 400, "a query without its fields");
    // And the server still serves a good request.
    let me = Browser::new(&app);
    assert_eq!(me.ok("me", json!({})).await["account"]["name"], "local");
}

async fn with_host(app: &TestApp, path: &str, host: &str, body: &str) -> (u16, Value) {
    let origin = format!("http://{host}");
    let response = app
        .http
        .post(app.url(path))
        .header("host", host)
        .header("origin", origin)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    status_and_json(response).await
}

/// A page on `attacker.example` that re-resolves its name to 127.0.0.1 sends its own name as
/// `Host` and `Origin`: without accounts, Ponder answers it nothing.
#[tokio::test]
async fn without_accounts_a_rebound_name_reads_nothing() {
    let app = TestApp::spawn(&[]).await;
    let me = Browser::new(&app);
    let (status, _) = me.turn(json!({"content": "a private chat"})).await;
    assert_eq!(status, 200);
    let port = app.addr.port();
    let attacker = format!("attacker.example:{port}");
    for path in [
        "/api/conversations/list",
        "/api/conversations/export",
        "/api/me",
    ] {
        let (status, answer) = with_host(&app, path, &attacker, "{}").await;
        assert_eq!(status, 421, "{path}: {answer}");
        assert_eq!(answer["code"], "unknown_host", "{path}: {answer}");
        assert_eq!(answer["params"]["host"], attacker.as_str());
    }
    let chat = json!({"messages": [{"role": "user", "content": "spend the key"}]}).to_string();
    let (status, _) = with_host(&app, "/api/chat", &attacker, &chat).await;
    assert_eq!(status, 421, "no turn for a rebound page");
    let page = app
        .http
        .get(app.url("/"))
        .header("host", &attacker)
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), 421, "nor the page itself");
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let (status, answer) = with_host(&app, "/api/conversations/list", &host, "{}").await;
        assert_eq!(status, 200, "{host}: {answer}");
        assert_eq!(answer.as_array().map(Vec::len), Some(1), "{host}: {answer}");
    }
    let probe = app
        .http
        .get(app.url("/healthz"))
        .header("host", &attacker)
        .send()
        .await
        .expect("probe");
    assert_eq!(probe.status(), 200, "the probes answer under any name");

    let public = TestApp::spawn(&[("PONDER_PUBLIC_URL", "http://ponder.lan:3000")]).await;
    let (status, _) = with_host(&public, "/api/me", "ponder.lan:3000", "{}").await;
    assert_eq!(status, 200, "the configured public address is answered");
    let (status, _) = with_host(&public, "/api/me", &attacker, "{}").await;
    assert_eq!(status, 421);

    // With accounts, a rebound page has no session cookie for Ponder: the host is not checked.
    let accounts = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let (status, answer) = with_host(&accounts, "/api/conversations/list", &attacker, "{}").await;
    assert_eq!(status, 401, "{answer}");
}

async fn sign_in_from(app: &TestApp, client: &str, name: &str, password: &str) -> u16 {
    app.http
        .post(app.url("/api/auth/sign-in"))
        .header("content-type", "application/json")
        .header("x-forwarded-for", client)
        .body(json!({"name": name, "password": password}).to_string())
        .send()
        .await
        .expect("sign-in")
        .status()
        .as_u16()
}

async fn accounts_behind_a_proxy() -> TestApp {
    let app = TestApp::spawn(&[
        ("PONDER_AUTH", "password"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ])
    .await;
    let admin = Browser::new(&app);
    admin
        .ok(
            "auth/setup",
            json!({"name": "root", "password": "root-password-1"}),
        )
        .await;
    admin
        .ok(
            "users/add",
            json!({"name": "ana", "password": "ana-password-1", "is_admin": false}),
        )
        .await;
    app
}

/// A name longer than any user's is refused before a limiter keeps it, and what a limiter
/// keeps per name is a fixed-size digest.
#[tokio::test]
async fn sign_in_names_cannot_fill_memory() {
    let app = accounts_behind_a_proxy().await;
    let huge = "n".repeat(1_500_000);
    for round in 0..3 {
        let app = &app;
        let huge = &huge;
        let tries = (0..20).map(|i| async move {
            let name = format!("{huge}{round}-{i}");
            sign_in_from(app, "198.51.100.7", &name, "whatever-password").await
        });
        for status in futures::future::join_all(tries).await {
            assert_eq!(status, 400, "a name over 64 characters is refused");
        }
    }
    let limits = &app.state.sign_in;
    assert_eq!(
        (limits.by_name.len(), limits.by_name_from_client.len()),
        (0, 0),
        "nothing is kept for a refused name"
    );
    assert_eq!(
        sign_in_from(&app, "198.51.100.8", "ana", "ana-password-1").await,
        200
    );
    assert_eq!(
        sign_in_from(&app, "198.51.100.8", &"é".repeat(64), "whatever-password").await,
        401,
        "the longest allowed name is an ordinary attempt"
    );
    assert!(limits.by_name.len() <= 2);
}

/// Three addresses, each within its own limit, guess ana's password over and over; ana, from
/// her own address, signs in every time.
#[tokio::test]
async fn a_stranger_cannot_lock_a_user_out() {
    let app = &accounts_behind_a_proxy().await;
    let attackers = ["203.0.113.1", "203.0.113.2", "203.0.113.3"];
    for round in 0..8 {
        let guesses = attackers
            .iter()
            .flat_map(|ip| (0..2).map(move |i| (ip, format!("guess-{round}-{i}-xx"))));
        let statuses = futures::future::join_all(
            guesses.map(|(ip, guess)| async move { sign_in_from(app, ip, "ana", &guess).await }),
        )
        .await;
        assert!(
            statuses.iter().all(|s| *s == 401 || *s == 429),
            "{statuses:?}"
        );
        assert_eq!(
            sign_in_from(app, "192.0.2.44", "ana", "ana-password-1").await,
            200,
            "round {round}: ana's correct password from her own address"
        );
    }
}

/// The brute-force limits still hold: one address is stopped after its burst, even with the
/// right password, and many addresses together meet the name's ceiling.
#[tokio::test]
async fn guessing_one_name_stays_limited() {
    let app = accounts_behind_a_proxy().await;
    let app = &app;
    let one = (0..7).map(|i| async move {
        sign_in_from(app, "198.51.100.1", "ana", &format!("wrong-{i}-xxxx")).await
    });
    let statuses = futures::future::join_all(one).await;
    let count = |code| statuses.iter().filter(|s| **s == code).count();
    assert_eq!((count(401), count(429)), (5, 2), "{statuses:?}");
    assert_eq!(
        sign_in_from(app, "198.51.100.1", "ana", "ana-password-1").await,
        429,
        "the right password does not help an address past its limit"
    );
    let many: Vec<String> = (0..20).map(|i| format!("198.51.100.{}", 100 + i)).collect();
    let started = std::time::Instant::now();
    let first = futures::future::join_all(
        many.iter()
            .map(|ip| sign_in_from(app, ip, "ana", "wrong-first-xxxx")),
    )
    .await;
    assert!(first.iter().all(|s| *s == 401), "{first:?}");
    let second = futures::future::join_all(
        many.iter()
            .map(|ip| sign_in_from(app, ip, "ana", "wrong-second-xxx")),
    )
    .await;
    // The ceiling (15 at once) refills at 30 a minute while the guesses are checked.
    let refilled = (started.elapsed().as_secs_f64() / 2.0).ceil() as usize;
    let refused = second.iter().filter(|s| **s == 429).count();
    assert!(
        refused + refilled >= 20,
        "past the name's ceiling an address that already failed waits ({refilled} refilled): {second:?}"
    );
    assert_eq!(
        sign_in_from(app, "192.0.2.200", "ana", "ana-password-1").await,
        200,
        "ana still signs in from her own address"
    );
}

async fn as_proxy_user(app: &TestApp, user: &[u8]) -> (u16, Value) {
    let value = reqwest::header::HeaderValue::from_bytes(user).expect("header value");
    let response = app
        .http
        .post(app.url("/api/me"))
        .header("content-type", "application/json")
        .header("Remote-User", value)
        .body("{}")
        .send()
        .await
        .expect("me");
    status_and_json(response).await
}

/// What identity providers send: UTF-8 names, composed or not, get in as one user; a name
/// Ponder cannot keep is a 400 that names the header, never a 503.
#[tokio::test]
async fn a_proxys_utf8_names_get_in_and_bad_ones_are_named() {
    let app = TestApp::spawn(&[
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ])
    .await;
    let (status, composed) = as_proxy_user(&app, "José".as_bytes()).await;
    assert_eq!(status, 200, "{composed}");
    assert_eq!(composed["account"]["name"], "José");
    let (status, decomposed) = as_proxy_user(&app, "Jose\u{301}".as_bytes()).await;
    assert_eq!(status, 200, "{decomposed}");
    assert_eq!(
        decomposed["account"]["id"], composed["account"]["id"],
        "one person, typed two ways"
    );
    let (status, japanese) = as_proxy_user(&app, "山田太郎".as_bytes()).await;
    assert_eq!(
        (status, &japanese["account"]["name"]),
        (200, &json!("山田太郎"))
    );
    for bad in [
        "x".repeat(65).into_bytes(),
        b"ana\tbob".to_vec(),
        vec![b'a', 0xff, b'b'],
    ] {
        let (status, answer) = as_proxy_user(&app, &bad).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["code"], "proxy_bad_user", "{answer}");
        assert_eq!(answer["params"]["header"], "remote-user", "{answer}");
        assert!(
            answer["message"]
                .as_str()
                .is_some_and(|m| m.contains("remote-user")),
            "{answer}"
        );
    }
    let (status, _) = as_proxy_user(&app, "é".repeat(64).as_bytes()).await;
    assert_eq!(status, 200, "64 characters is the documented limit");
}
