//! Shared links over real HTTP: the page a stranger reads, exactly what the owner chose to show
//! and nothing else of the account; one 404 for every link that opens nothing; the modes of
//! `PONDER_SHARING`; "Continue in Ponder" into another account; the admin's list.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::TestApp;
use serde_json::{json, Value};

async fn app(vars: &[(&str, &str)]) -> TestApp {
    let mut all = vec![
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ];
    all.extend_from_slice(vars);
    TestApp::spawn(&all).await
}

async fn api(app: &TestApp, user: &str, path: &str, body: Value) -> reqwest::Response {
    app.post_as(user, path, body).await
}

async fn ok(app: &TestApp, user: &str, path: &str, body: Value) -> Value {
    app.ok_as(user, path, body).await
}

/// A stored turn of `user`'s; the conversation's id.
async fn turn(app: &TestApp, user: &str, body: Value) -> String {
    let response = api(app, user, "/api/chat", body).await;
    assert_eq!(response.status(), 200);
    let events = common::read_events(response).await;
    events
        .iter()
        .find_map(|e| match e {
            ponder::domain::TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
            _ => None,
        })
        .expect("a stored turn")
}

async fn share(
    app: &TestApp,
    user: &str,
    conversation: &str,
    thinking: bool,
    files: bool,
) -> (String, String) {
    let link = ok(
        app,
        user,
        "/api/shares/create",
        json!({"conversation": conversation, "choice": {"thinking": thinking, "files": files}}),
    )
    .await;
    (
        link["id"].as_str().unwrap().to_string(),
        link["url"].as_str().unwrap().to_string(),
    )
}

/// The page at `url` (a path from the API) as a visitor, or as `user`.
async fn visit(
    app: &TestApp,
    url: &str,
    user: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = app.http.get(format!("http://{}{url}", app.addr));
    if let Some(user) = user {
        request = request.header("Remote-User", user);
    }
    let response = request.send().await.expect("page");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.expect("text"))
}

#[tokio::test]
async fn a_link_shows_the_branch_on_screen_with_exactly_the_thinking_chosen() {
    let app = app(&[("PONDER_SHARING", "public")]).await;
    let conversation = turn(&app, "alice", json!({"content": "[tools] What is new?"})).await;
    let stored = ok(
        &app,
        "alice",
        "/api/conversations/export",
        json!({"id": conversation}),
    )
    .await;
    let answer = &stored["messages"][1]["versions"][0];
    let reasoning = answer["blocks"][0]["text"]
        .as_str()
        .expect("reasoning")
        .to_string();
    let probe: String = reasoning.chars().take(40).collect();
    let answer_text = answer["content"].as_str().unwrap().to_string();
    let answer_probe: String = answer_text
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");

    let (_, without) = share(&app, "alice", &conversation, false, false).await;
    let token = without.rsplit('/').next().unwrap().to_string();
    assert_eq!(token.len(), 43, "256 random bits, URL-safe base64: {token}");
    assert!(token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    let (status, headers, page) = visit(&app, &without, None).await;
    assert_eq!(status, 200, "{page}");
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    assert!(header("content-security-policy").contains("script-src 'none'"));
    assert!(header("content-security-policy").contains("default-src 'none'"));
    assert_eq!(header("referrer-policy"), "no-referrer");
    assert_eq!(header("x-robots-tag"), "noindex, nofollow");
    assert_eq!(header("cache-control"), "no-store");
    assert!(page.contains(r#"<meta name="robots" content="noindex, nofollow">"#));
    assert!(page.contains("What is new?"), "{page}");
    assert!(page.contains(&answer_probe), "{answer_probe} in {page}");
    assert!(page.contains("tool-step"), "the tool steps show: {page}");
    assert!(
        page.contains("class=\"sources\""),
        "the sources show: {page}"
    );
    assert!(!page.contains(&probe), "no thinking unless chosen: {page}");
    assert!(!page.contains("thinking done"), "{page}");
    for private in [
        "alice",
        conversation.as_str(),
        "<script",
        "/pkg/ponder.js",
        ".wasm",
    ] {
        assert!(!page.contains(private), "{private} leaked into {page}");
    }

    let (_, with) = share(&app, "alice", &conversation, true, false).await;
    assert_ne!(with, without, "each link is its own");
    let (status, _, page) = visit(&app, &with, None).await;
    assert_eq!(status, 200);
    assert!(page.contains(&probe), "the thinking, when chosen: {page}");
    assert!(
        page.contains("<details class=\"thinking done\">"),
        "closed: {page}"
    );
    assert!(
        page.contains("Thought") && page.contains(" words"),
        "{page}"
    );
    let links = ok(
        &app,
        "alice",
        "/api/shares/list",
        json!({"conversation": conversation}),
    )
    .await;
    let links = links.as_array().unwrap();
    assert_eq!(links.len(), 2);
    assert!(
        links.iter().all(|l| l.get("url").is_none()),
        "the token is shown once: {links:?}"
    );
    assert_eq!(links[0]["choice"]["thinking"], true);
    assert_eq!(links[1]["choice"]["thinking"], false);
    assert_eq!(
        ok(
            &app,
            "bob",
            "/api/shares/list",
            json!({"conversation": conversation})
        )
        .await,
        json!([])
    );
}

#[tokio::test]
async fn the_token_is_kept_only_as_its_digest() {
    let db = common::temp_database();
    let app = app(&[("PONDER_SHARING", "public"), ("PONDER_DATABASE_URL", &db)]).await;
    let conversation = turn(&app, "alice", json!({"content": "hello"})).await;
    let (_, url) = share(&app, "alice", &conversation, false, false).await;
    let token = url.rsplit('/').next().unwrap();
    sqlx::any::install_default_drivers();
    let mut db = <sqlx::AnyConnection as sqlx::Connection>::connect(&db)
        .await
        .unwrap();
    let (hash, snapshot): (String, String) =
        sqlx::query_as("SELECT token_hash, snapshot FROM shares")
            .fetch_one(&mut db)
            .await
            .unwrap();
    assert_eq!(hash, ponder::server::store::ids::digest(token));
    assert_eq!(hash.len(), 64);
    assert!(!snapshot.contains(token) && !hash.contains(token));
    let mut tokens = std::collections::HashSet::new();
    for _ in 1..50 {
        let (_, url) = share(&app, "alice", &conversation, false, false).await;
        assert!(tokens.insert(url), "no token comes twice");
    }
    let refused = api(
        &app,
        "alice",
        "/api/shares/create",
        json!({"conversation": conversation}),
    )
    .await;
    assert_eq!(refused.status(), 409, "at most 50 links a conversation");
}

#[tokio::test]
async fn every_link_that_opens_nothing_is_the_same_404() {
    let app = app(&[("PONDER_SHARING", "public")]).await;
    let first = turn(&app, "alice", json!({"content": "one"})).await;
    let second = turn(&app, "alice", json!({"content": "two"})).await;
    let (revoked_id, revoked) = share(&app, "alice", &first, false, false).await;
    let (_, deleted) = share(&app, "alice", &second, false, false).await;
    let (_, of_removed_user) = {
        let third = turn(&app, "carol", json!({"content": "three"})).await;
        share(&app, "carol", &third, false, false).await
    };
    for url in [&revoked, &deleted, &of_removed_user] {
        assert_eq!(visit(&app, url, None).await.0, 200);
    }
    assert_eq!(
        api(&app, "bob", "/api/shares/revoke", json!({"id": revoked_id}))
            .await
            .status(),
        404,
        "another user's link is not found"
    );
    ok(
        &app,
        "alice",
        "/api/shares/revoke",
        json!({"id": revoked_id}),
    )
    .await;
    ok(
        &app,
        "alice",
        "/api/conversations/delete",
        json!({"id": second}),
    )
    .await;
    let carol = ok(&app, "alice", "/api/users/list", json!({})).await;
    let carol_id = carol
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == "carol")
        .unwrap()["id"]
        .clone();
    ok(&app, "alice", "/api/users/remove", json!({"id": carol_id})).await;

    let never = format!("{}/s/{}", app.state.config.base_path, "A".repeat(43));
    let (status, _, body) = visit(&app, &never, None).await;
    assert_eq!(status, 404);
    for url in [&revoked, &deleted, &of_removed_user] {
        let (status, _, page) = visit(&app, url, None).await;
        assert_eq!((status, page.as_str()), (404, body.as_str()), "{url}");
    }
    // Restoring the conversation does not open its links again.
    ok(
        &app,
        "alice",
        "/api/conversations/restore",
        json!({"id": second}),
    )
    .await;
    assert_eq!(visit(&app, &deleted, None).await.0, 404);
    assert_eq!(visit(&app, &format!("{deleted}/f/0"), None).await.0, 404);
}

#[tokio::test]
async fn an_update_keeps_the_address_and_shows_the_conversation_as_it_is_now() {
    let app = app(&[("PONDER_SHARING", "public")]).await;
    let conversation = turn(&app, "alice", json!({"content": "first question"})).await;
    let (id, url) = share(&app, "alice", &conversation, false, false).await;
    turn(
        &app,
        "alice",
        json!({"conversation": conversation, "content": "a later question"}),
    )
    .await;
    assert!(
        !visit(&app, &url, None).await.2.contains("a later question"),
        "a snapshot"
    );
    let updated = ok(
        &app,
        "alice",
        "/api/shares/update",
        json!({"id": id, "choice": {"thinking": true}}),
    )
    .await;
    assert_eq!(updated["messages"], 4);
    assert_eq!(updated["choice"]["thinking"], true);
    let (status, _, page) = visit(&app, &url, None).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("a later question") && page.contains("thinking done"),
        "{page}"
    );
}

#[tokio::test]
async fn signed_in_mode_refuses_a_visitor_whatever_the_token() {
    let app = app(&[]).await;
    assert_eq!(
        app.state.config.sharing,
        ponder::domain::share::Sharing::SignedIn,
        "the default with accounts"
    );
    let conversation = turn(&app, "alice", json!({"content": "hello"})).await;
    let (_, url) = share(&app, "alice", &conversation, false, false).await;
    let (status, _, refused) = visit(&app, &url, None).await;
    assert_eq!(status, 401);
    assert!(refused.contains("Sign in to this Ponder"), "{refused}");
    assert!(!refused.contains("hello"));
    let fake = format!("{}/s/{}", app.state.config.base_path, "B".repeat(43));
    assert_eq!(
        visit(&app, &fake, None).await,
        (401, visit(&app, &fake, None).await.1, refused.clone())
    );
    let (status, _, page) = visit(&app, &url, Some("bob")).await;
    assert_eq!(status, 200, "a user of this Ponder reads it");
    assert!(page.contains("hello") && page.contains("Continue in Ponder"));
}

#[tokio::test]
async fn with_sharing_off_no_link_is_made_and_none_opens() {
    let db = common::temp_database();
    let on = app(&[("PONDER_SHARING", "public"), ("PONDER_DATABASE_URL", &db)]).await;
    let conversation = turn(&on, "alice", json!({"content": "hello"})).await;
    let (_, url) = share(&on, "alice", &conversation, false, false).await;
    let off = app(&[("PONDER_SHARING", "off"), ("PONDER_DATABASE_URL", &db)]).await;
    let refused = api(
        &off,
        "alice",
        "/api/shares/create",
        json!({"conversation": conversation}),
    )
    .await;
    assert_eq!(refused.status(), 403);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["code"], "sharing_off");
    assert_eq!(visit(&off, &url, Some("alice")).await.0, 404);
}

#[tokio::test]
async fn continuing_copies_the_snapshot_into_the_readers_history() {
    let app = app(&[("PONDER_SHARING", "public")]).await;
    let png = {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(32u32.to_be_bytes());
        b.extend(16u32.to_be_bytes());
        b.extend([8, 6, 0, 0, 0]);
        b.extend(std::iter::repeat_n(7u8, 100));
        b
    };
    let kept: Value = app
        .http
        .post(app.url("/api/attachments?name=diagram.png"))
        .header("Remote-User", "alice")
        .header("content-type", "application/octet-stream")
        .body(png.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let conversation = turn(
        &app,
        "alice",
        json!({"content": "Look at this", "attachments": [kept["id"]]}),
    )
    .await;
    let (_, hidden) = share(&app, "alice", &conversation, false, false).await;
    let page = visit(&app, &hidden, None).await.2;
    assert!(
        !page.contains("diagram.png"),
        "files only when chosen: {page}"
    );
    assert_eq!(visit(&app, &format!("{hidden}/f/0"), None).await.0, 404);
    let (_, url) = share(&app, "alice", &conversation, true, true).await;
    let page = visit(&app, &url, None).await.2;
    assert!(
        page.contains("diagram.png") && page.contains(&format!("{url}/f/0")),
        "{page}"
    );
    let file = app
        .http
        .get(format!("http://{}{url}/f/0", app.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), 200);
    assert_eq!(file.bytes().await.unwrap().to_vec(), png);

    let origin = format!("http://{}", app.addr);
    let form = |origin: Option<&str>| {
        let mut request = app
            .http
            .post(format!("http://{}{url}/continue", app.addr))
            .header("Remote-User", "bob")
            .header("content-type", "application/x-www-form-urlencoded");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request
    };
    let status = |r: reqwest::Response| r.status().as_u16();
    assert_eq!(
        status(form(None).send().await.unwrap()),
        403,
        "only from Ponder's own pages"
    );
    assert_eq!(
        status(form(Some("https://evil.example")).send().await.unwrap()),
        403
    );
    let cross = form(Some("null")).header("sec-fetch-site", "cross-site");
    assert_eq!(
        status(cross.send().await.unwrap()),
        403,
        "a page elsewhere without a referrer"
    );
    // The shared page sends no referrer, so its form comes with `Origin: null`: the browser's
    // `Sec-Fetch-Site` says where it came from.
    let own = form(Some("null")).header("sec-fetch-site", "same-origin");
    let own = own.send().await.unwrap();
    assert_eq!(own.status(), 303);
    let location_of_own = own.headers()["location"].to_str().unwrap().to_string();
    let moved = form(Some(&origin)).send().await.unwrap();
    assert_eq!(moved.status(), 303);
    let location = moved.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(
        location, location_of_own,
        "the same snapshot continues into the same copy"
    );
    let copy = location.rsplit('/').next().unwrap().to_string();
    assert_ne!(copy, conversation);
    let again = form(Some(&origin)).send().await.unwrap();
    assert_eq!(
        again.headers()["location"].to_str().unwrap(),
        location,
        "the same snapshot continues into the same copy"
    );
    let theirs = ok(
        &app,
        "bob",
        "/api/conversations/export",
        json!({"id": copy}),
    )
    .await;
    assert_eq!(
        theirs["messages"][0]["versions"][0]["content"],
        "Look at this"
    );
    let file = &theirs["messages"][0]["versions"][0]["files"][0];
    assert_eq!(file["name"], "diagram.png");
    assert_ne!(file["id"], kept["id"], "bob's own copy of the file");
    let bobs = app
        .http
        .get(app.url(&format!(
            "/api/attachments/{}",
            file["id"].as_str().unwrap()
        )))
        .header("Remote-User", "bob")
        .send()
        .await
        .unwrap();
    assert_eq!(bobs.bytes().await.unwrap().to_vec(), png);
    assert!(
        theirs["messages"][1]["versions"][0]["blocks"][0]["text"].is_string(),
        "the thinking came with it"
    );
    assert_eq!(
        api(
            &app,
            "bob",
            "/api/conversations/get",
            json!({"id": conversation})
        )
        .await
        .status(),
        404,
        "and alice's conversation stays hers"
    );
}

#[tokio::test]
async fn the_admin_sees_and_revokes_every_link() {
    let app = app(&[("PONDER_SHARING", "public")]).await;
    let alices = turn(&app, "alice", json!({"content": "admin's own"})).await;
    share(&app, "alice", &alices, false, false).await;
    let bobs = turn(&app, "bob", json!({"content": "bob's"})).await;
    let (_, url) = share(&app, "bob", &bobs, true, false).await;
    assert_eq!(
        api(&app, "bob", "/api/shares/all", json!({}))
            .await
            .status(),
        403
    );
    let all = ok(&app, "alice", "/api/shares/all", json!({})).await;
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 2);
    let bob_link = all
        .iter()
        .find(|l| l["owner"] == "bob")
        .expect("bob's link listed");
    assert_eq!(bob_link["choice"]["thinking"], true);
    assert_eq!(
        api(
            &app,
            "bob",
            "/api/shares/revoke-any",
            json!({"id": bob_link["id"]})
        )
        .await
        .status(),
        403
    );
    ok(
        &app,
        "alice",
        "/api/shares/revoke-any",
        json!({"id": bob_link["id"]}),
    )
    .await;
    assert_eq!(visit(&app, &url, None).await.0, 404);
}

#[tokio::test]
async fn formulas_and_code_are_typeset_on_the_server_for_the_shared_page() {
    let app = app(&[("PONDER_SHARING", "public")]).await;
    let conversation = turn(&app, "alice", json!({"content": "[math] show me"})).await;
    turn(
        &app,
        "alice",
        json!({"conversation": conversation, "content": "[code] and code"}),
    )
    .await;
    let (_, url) = share(&app, "alice", &conversation, true, false).await;
    let (status, _, page) = visit(&app, &url, None).await;
    assert_eq!(status, 200);
    assert!(page.contains("<math"), "typeset formulas: {page}");
    assert!(page.contains("class=\"hl-"), "highlighted code: {page}");
}

#[tokio::test]
async fn under_a_base_path_the_link_and_its_page_live_below_it() {
    let app = app(&[
        ("PONDER_SHARING", "public"),
        ("PONDER_BASE_PATH", "/ponder"),
    ])
    .await;
    let conversation = turn(&app, "alice", json!({"content": "under a prefix"})).await;
    let (_, url) = share(&app, "alice", &conversation, false, false).await;
    assert!(url.starts_with("/ponder/s/"), "{url}");
    let (status, _, page) = visit(&app, &url, None).await;
    assert_eq!(status, 200);
    assert!(
        page.contains(r#"<link rel="stylesheet" href="/ponder/pkg/"#),
        "{page}"
    );
    assert!(
        page.contains(r#"<a href="/ponder/" class="primary">Sign in to continue"#),
        "{page}"
    );
    let (_, _, page) = visit(&app, &url, Some("bob")).await;
    assert!(
        page.contains(&format!(r#"action="{url}/continue""#)),
        "{page}"
    );
}
