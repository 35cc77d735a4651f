//! Accounts and server-side history over real HTTP: each sign-in mode, sessions and tokens,
//! forged identities, a stored turn whose history the server builds, and another user's rows
//! answering 404 with the same body as a missing one on every endpoint.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::Browser;
use common::raw_http::{http_chunk, RawUpstream, Received, STREAM_HEAD};
use common::*;
use ponder::domain::TurnEvent;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

fn stored_at(events: &[TurnEvent]) -> (String, String) {
    match events.get(1) {
        Some(TurnEvent::Turn {
            conversation,
            message,
            ..
        }) => (conversation.clone(), message.clone()),
        other => panic!("a stored turn starts with its id, then where it is stored, not {other:?}"),
    }
}

/// A stored [tools] turn over HTTP: the events name the tools and sources, and the stored
/// answer keeps them, with its citation markers, for `conversations/get` and the export.
#[tokio::test]
async fn tool_steps_and_sources_are_stored_with_the_answer() {
    let app = TestApp::spawn(&[]).await;
    let me = Browser::new(&app);
    let (status, events) = me.turn(json!({"content": "[tools] when?"})).await;
    assert_eq!(status, 200);
    assert_one_terminal(&events);
    let tools: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolStart { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["web_search", "code_execution"]);
    let (conversation, _) = stored_at(&events);
    for endpoint in ["conversations/get", "conversations/export"] {
        let opened = me.ok(endpoint, json!({"id": conversation})).await;
        let answer = &opened["messages"][1]["versions"][0];
        assert_eq!(
            answer["tools"][0]["name"], "web_search",
            "{endpoint}: {answer}"
        );
        assert_eq!(answer["tools"][0]["status"], "finished");
        assert_eq!(answer["tools"][1]["output"], "55");
        assert_eq!(answer["tools"][1]["after_blocks"], 2);
        assert_eq!(answer["sources"].as_array().map(Vec::len), Some(3));
        assert_eq!(
            answer["sources"][0]["url"],
            "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/"
        );
        let content = answer["content"].as_str().unwrap_or_default();
        assert!(
            content.contains("2025.[^1] The edition guide lists what changed.[^2]"),
            "{content}"
        );
    }
}

#[tokio::test]
async fn without_accounts_the_local_user_has_a_server_side_history() {
    let app = TestApp::spawn(&[]).await;
    let me = Browser::new(&app);
    let who = me.ok("me", json!({})).await;
    assert_eq!(who["account"]["name"], "local", "{who}");
    assert_eq!(
        (who["auth"].as_str(), who["needs_setup"].as_bool()),
        (Some("none"), Some(false))
    );
    let (status, events) = me.turn(json!({"content": "Why is the sky blue?"})).await;
    assert_eq!(status, 200);
    assert_one_terminal(&events);
    let (conversation, message) = stored_at(&events);
    let list = me.ok("conversations/list", json!({})).await;
    assert_eq!(list[0]["id"], conversation.as_str());
    assert_eq!(list[0]["title"], "Why is the sky blue?");
    let opened = me
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    let messages = opened["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[0]["versions"][0]["content"],
        "Why is the sky blue?"
    );
    assert_eq!(messages[1]["id"], message.as_str());
    let answer = &messages[1]["versions"][0];
    assert_eq!(answer["content"], ponder::server::demo_upstream::ANSWER);
    assert_eq!(answer["status"], "done");
    let block = &answer["blocks"][0];
    assert!(
        block.get("text").is_none(),
        "no reasoning text on open: {block}"
    );
    let text = me.ok("blocks/text", json!({"id": block["id"]})).await;
    assert_eq!(text, ponder::server::demo_upstream::THINKING);
    // A second browser of the same user sees the same history.
    let other = Browser::new(&app);
    assert_eq!(other.ok("conversations/list", json!({})).await, list);
}

/// An upstream that answers with the number of messages it was sent and the last of them, so
/// a test sees the history the server built.
async fn echo_upstream() -> RawUpstream {
    RawUpstream::start(|request: Received, mut socket| async move {
        let body: Value = serde_json::from_str(&request.body).unwrap_or_default();
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let said: Vec<String> = messages
            .iter()
            .map(|m| {
                format!(
                    "{}:{}",
                    m["role"].as_str().unwrap_or("?"),
                    m["content"].as_str().unwrap_or("")
                )
            })
            .collect();
        let text = said.join(" | ");
        let mut out = STREAM_HEAD.as_bytes().to_vec();
        for frame in [
            json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ] {
            out.extend(http_chunk(format!("data: {frame}\n\n").as_bytes()));
        }
        out.extend(http_chunk(b"data: [DONE]\n\n"));
        out.extend_from_slice(b"0\r\n\r\n");
        let _ = socket.write_all(&out).await;
    })
    .await
}

#[tokio::test]
async fn the_server_builds_the_history_from_what_it_stored() {
    let upstream = echo_upstream().await;
    let app = TestApp::spawn(&[("PONDER_UPSTREAM_URL", &upstream.url())]).await;
    let me = Browser::new(&app);
    let (_, first) = me.turn(json!({"content": "one"})).await;
    let (conversation, first_answer) = stored_at(&first);
    assert_eq!(answer_text(&first), "user:one");
    let (_, second) = me
        .turn(json!({"conversation": conversation, "content": "two"}))
        .await;
    assert_eq!(
        answer_text(&second),
        "user:one | assistant:user:one | user:two"
    );
    // Regenerating the first answer sends only what came before it.
    let (_, again) = me
        .turn(json!({"conversation": conversation, "regenerate": first_answer}))
        .await;
    assert_eq!(answer_text(&again), "user:one");
    let opened = me
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    let first_message = &opened["messages"][1];
    assert_eq!(first_message["versions"].as_array().map(Vec::len), Some(2));
    assert_eq!(first_message["active"], 1);
    // Editing the question keeps its first version and drops what followed it.
    let question = opened["messages"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let (_, edited) = me
        .turn(json!({"conversation": conversation, "content": "uno", "edit": question}))
        .await;
    assert_eq!(answer_text(&edited), "user:uno");
    let opened = me
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    assert_eq!(opened["messages"].as_array().map(Vec::len), Some(2));
    assert_eq!(opened["messages"][0]["versions"][0]["content"], "one");
    assert_eq!(opened["messages"][0]["versions"][1]["content"], "uno");
}

#[tokio::test]
async fn password_accounts_set_up_sign_in_and_out_and_are_never_guessed() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let anon = Browser::new(&app);
    let who = anon.ok("me", json!({})).await;
    assert_eq!(who["account"], Value::Null);
    assert_eq!(who["needs_setup"], true);
    let (status, _) = anon
        .turn(json!({"messages": [{"role": "user", "content": "hi"}]}))
        .await;
    assert_eq!(status, 401, "no turn without signing in");
    assert_eq!(anon.call("conversations/list", json!({})).await.0, 401);

    let admin = Browser::new(&app);
    let (status, _) = admin
        .call("auth/setup", json!({"name": "root", "password": "short"}))
        .await;
    assert_eq!(status, 400, "a short password is refused");
    let account = admin
        .ok(
            "auth/setup",
            json!({"name": "root", "password": "root-password-1"}),
        )
        .await;
    assert_eq!(account["is_admin"], true);
    assert_eq!(
        admin
            .call(
                "auth/setup",
                json!({"name": "x", "password": "another-password"})
            )
            .await
            .0,
        403
    );
    assert_eq!(admin.ok("me", json!({})).await["account"]["name"], "root");
    admin
        .ok(
            "users/add",
            json!({"name": "ana", "password": "ana-password-1", "is_admin": false}),
        )
        .await;

    let ana = Browser::new(&app);
    assert_eq!(
        ana.call(
            "auth/sign-in",
            json!({"name": "ana", "password": "wrong-password"})
        )
        .await
        .0,
        401
    );
    let (status, unknown) = ana
        .call(
            "auth/sign-in",
            json!({"name": "nobody", "password": "wrong-password"}),
        )
        .await;
    assert_eq!(status, 401);
    let (_, wrong) = ana
        .call(
            "auth/sign-in",
            json!({"name": "ana", "password": "wrong-password"}),
        )
        .await;
    assert_eq!(
        unknown, wrong,
        "an unknown name and a wrong password look the same"
    );
    ana.ok(
        "auth/sign-in",
        json!({"name": "ana", "password": "ana-password-1"}),
    )
    .await;
    let (status, events) = ana.turn(json!({"content": "hello"})).await;
    assert_eq!(status, 200);
    assert!(matches!(events.last(), Some(TurnEvent::Done { .. })));
    assert_eq!(
        ana.call("users/list", json!({})).await.0,
        403,
        "only an admin lists users"
    );
    assert_eq!(
        admin
            .ok("users/list", json!({}))
            .await
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // Sign out ends that session; sign out everywhere ends all of them.
    ana.ok("auth/sign-out", json!({})).await;
    assert_eq!(ana.call("conversations/list", json!({})).await.0, 401);
    let phone = Browser::new(&app);
    phone
        .ok(
            "auth/sign-in",
            json!({"name": "ana", "password": "ana-password-1"}),
        )
        .await;
    let laptop = Browser::new(&app);
    laptop
        .ok(
            "auth/sign-in",
            json!({"name": "ana", "password": "ana-password-1"}),
        )
        .await;
    laptop.ok("auth/sign-out-everywhere", json!({})).await;
    assert_eq!(phone.call("conversations/list", json!({})).await.0, 401);
    assert_eq!(laptop.call("conversations/list", json!({})).await.0, 401);
}

#[tokio::test]
async fn sign_in_is_rate_limited() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let admin = Browser::new(&app);
    admin
        .ok(
            "auth/setup",
            json!({"name": "root", "password": "root-password-1"}),
        )
        .await;
    let guesser = Browser::new(&app);
    // All at once, so the check does not depend on how fast a guess is refused (argon2 in a
    // debug build on a busy machine can take longer than the bucket takes to refill one token).
    let guesses = (0..8).map(|i| {
        guesser.call(
            "auth/sign-in",
            json!({"name": "root", "password": format!("guess-{i}-xxxx")}),
        )
    });
    let statuses: Vec<u16> = futures::future::join_all(guesses)
        .await
        .into_iter()
        .map(|(status, _)| status)
        .collect();
    let count = |code| statuses.iter().filter(|s| **s == code).count();
    assert_eq!((count(401), count(429)), (5, 3), "{statuses:?}");
}

#[tokio::test]
async fn malformed_or_forged_sessions_and_tokens_are_refused() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let admin = Browser::new(&app);
    admin
        .ok(
            "auth/setup",
            json!({"name": "root", "password": "root-password-1"}),
        )
        .await;
    for cookie in [
        "ponder_session=",
        "ponder_session=ps_forged",
        "ponder_session=%00%ff;;",
        "garbage",
    ] {
        let response = app
            .http
            .post(app.url("/api/conversations/list"))
            .header("content-type", "application/json")
            .header("cookie", cookie)
            .body("{}")
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 401, "{cookie}");
    }
    // A token works for scripts (the terminal client), until it is revoked.
    let created = admin.ok("tokens/create", json!({"name": "cli"})).await;
    let secret = created["secret"].as_str().expect("secret").to_string();
    assert!(secret.starts_with("pt_"));
    let mut script = Browser::new(&app);
    script.bearer = Some(secret.clone());
    let (status, events) = script.turn(json!({"content": "from a script"})).await;
    assert_eq!(status, 200);
    assert_one_terminal(&events);
    // What needs the password is refused to a token, with its own code and status.
    for endpoint in ["tokens/create", "auth/sign-out-everywhere"] {
        let (status, body) = script.call(endpoint, json!({"name": "more"})).await;
        assert_eq!(status, 403, "{endpoint}: {body}");
        assert_eq!(body["code"], "password_required", "{endpoint}");
    }
    let listed = admin.ok("tokens/list", json!({})).await;
    assert_eq!(listed[0]["name"], "cli");
    assert!(
        listed[0].get("secret").is_none(),
        "a token's secret is never listed"
    );
    admin
        .ok("tokens/revoke", json!({"id": created["token"]["id"]}))
        .await;
    assert_eq!(script.call("conversations/list", json!({})).await.0, 401);
    script.bearer = Some("pt_forged".into());
    assert_eq!(script.call("conversations/list", json!({})).await.0, 401);
}

#[tokio::test]
async fn a_trusted_proxy_names_the_user_and_nobody_else_can() {
    let app = TestApp::spawn(&[
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ])
    .await;
    let call = |user: Option<&'static str>| {
        let mut req = app
            .http
            .post(app.url("/api/me"))
            .header("content-type", "application/json")
            .body("{}");
        if let Some(user) = user {
            req = req.header("Remote-User", user);
        }
        req.send()
    };
    let alice: Value = call(Some("alice"))
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    assert_eq!(alice["account"]["name"], "alice");
    let bob: Value = call(Some("bob"))
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    assert_eq!(bob["account"]["name"], "bob");
    let nobody: Value = call(None).await.expect("me").json().await.expect("json");
    assert_eq!(nobody["account"], Value::Null);
    // The same header from a peer that is not the proxy means nothing.
    let untrusted = TestApp::spawn(&[
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "10.0.0.0/8"),
    ])
    .await;
    let forged = untrusted
        .http
        .post(untrusted.url("/api/conversations/list"))
        .header("content-type", "application/json")
        .header("Remote-User", "alice")
        .header("X-Forwarded-For", "10.0.0.1")
        .body("{}")
        .send()
        .await
        .expect("request");
    assert_eq!(forged.status(), 401);
}

#[tokio::test]
async fn a_conversations_address_opens_it_for_its_owner_and_is_not_found_for_anyone_else() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let (alice, bob) = Browser::alice_and_bob(&app).await;
    let (_, events) = alice.turn(json!({"content": "my private question"})).await;
    let (conversation, _) = stored_at(&events);
    let address = format!("/c/{conversation}");
    let missing = "<meta name=\"ponder-missing\"";

    let (status, html) = alice.page(&address).await;
    assert_eq!(status, 200, "{html}");
    assert!(!html.contains(missing) && !html.contains("class=\"not-found\""));
    assert!(
        html.contains("chat-page"),
        "the chat page renders at its address"
    );
    assert!(
        html.contains("Opening the chat") && !html.contains("example-prompt"),
        "no empty new chat is drawn before the chat arrives"
    );
    let (_, fresh) = alice.page("/").await;
    assert!(fresh.contains("example-prompt") && !fresh.contains("Opening the chat"));
    assert_eq!(alice.page(&format!("{address}/")).await.0, 200);

    let (status, html) = bob.page(&address).await;
    assert_eq!(status, 404, "another user's chat");
    assert!(html.contains(missing) && html.contains("class=\"not-found\""));
    let (status, never) = bob.page("/c/never-made").await;
    assert_eq!(status, 404);
    let strip = |h: &str| h.replace(&conversation, "").replace("never-made", "");
    assert_eq!(
        strip(&html).len(),
        strip(&never).len(),
        "another user's chat reads like one never made"
    );

    alice
        .ok("conversations/delete", json!({"id": conversation}))
        .await;
    assert_eq!(alice.page(&address).await.0, 404, "a deleted chat");
    for elsewhere in ["/c/", "/c/a/b", "/c/%zz"] {
        assert_eq!(alice.page(elsewhere).await.0, 404, "{elsewhere}");
    }
    let (status, html) = Browser::new(&app).page(&address).await;
    assert_eq!(
        status, 200,
        "signed out, the address asks for sign-in first"
    );
    assert!(!html.contains(missing));
}

#[tokio::test]
async fn another_users_rows_answer_404_with_the_body_of_a_missing_one_on_every_endpoint() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let (alice, bob) = Browser::alice_and_bob(&app).await;

    let (_, events) = alice.turn(json!({"content": "my private question"})).await;
    let (conversation, answer) = stored_at(&events);
    let opened = alice
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    let question = opened["messages"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let block = opened["messages"][1]["versions"][0]["blocks"][0]["id"]
        .as_str()
        .expect("block")
        .to_string();
    let workspace = opened["workspace_id"]
        .as_str()
        .expect("workspace")
        .to_string();
    let token = alice.ok("tokens/create", json!({"name": "t"})).await["token"]["id"].clone();

    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "conversations/get",
            json!({"id": conversation}),
            json!({"id": "missing"}),
        ),
        (
            "conversations/rename",
            json!({"id": conversation, "title": "mine"}),
            json!({"id": "missing", "title": "mine"}),
        ),
        (
            "conversations/delete",
            json!({"id": conversation}),
            json!({"id": "missing"}),
        ),
        (
            "conversations/restore",
            json!({"id": conversation}),
            json!({"id": "missing"}),
        ),
        (
            "conversations/list",
            json!({"workspace": workspace}),
            json!({"workspace": "missing"}),
        ),
        (
            "workspaces/rename",
            json!({"id": workspace, "name": "mine"}),
            json!({"id": "missing", "name": "mine"}),
        ),
        (
            "blocks/text",
            json!({"id": block}),
            json!({"id": "missing"}),
        ),
        (
            "blocks/open",
            json!({"id": block, "open": true}),
            json!({"id": "missing", "open": true}),
        ),
        (
            "messages/version",
            json!({"id": question, "version": 0}),
            json!({"id": "missing", "version": 0}),
        ),
        (
            "tokens/revoke",
            json!({"id": token}),
            json!({"id": "missing"}),
        ),
    ];
    for (endpoint, theirs, missing) in cases {
        let (status, body) = bob.call(endpoint, theirs).await;
        let (missing_status, missing_body) = bob.call(endpoint, missing).await;
        assert_eq!((status, missing_status), (404, 404), "{endpoint}: {body}");
        assert_eq!(
            body, missing_body,
            "{endpoint}: the same body as a missing row"
        );
    }
    for turn in [
        json!({"conversation": conversation, "content": "hijack"}),
        json!({"conversation": conversation, "regenerate": answer}),
        json!({"conversation": conversation, "content": "x", "edit": question}),
    ] {
        let (status, _) = bob.turn(turn.clone()).await;
        assert_eq!(status, 404, "{turn}");
    }
    assert!(bob
        .ok("search", json!({"query": "private", "thinking": true}))
        .await
        .as_array()
        .is_some_and(Vec::is_empty));
    // Nothing of Alice's changed.
    let after = alice
        .ok("conversations/get", json!({"id": conversation}))
        .await;
    assert_eq!(after["title"], opened["title"]);
    assert_eq!(after["messages"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn delete_undo_and_purge_after_the_grace() {
    let app = TestApp::spawn(&[("PONDER_DELETE_GRACE", "1")]).await;
    let me = Browser::new(&app);
    let (_, events) = me.turn(json!({"content": "short-lived"})).await;
    let (conversation, _) = stored_at(&events);
    me.ok("conversations/delete", json!({"id": conversation}))
        .await;
    assert!(me
        .ok("conversations/list", json!({}))
        .await
        .as_array()
        .is_some_and(Vec::is_empty));
    assert_eq!(
        me.ok("conversations/list", json!({"deleted": true})).await[0]["id"],
        conversation.as_str()
    );
    me.ok("conversations/restore", json!({"id": conversation}))
        .await;
    assert_eq!(
        me.ok("conversations/list", json!({})).await[0]["id"],
        conversation.as_str()
    );
    me.ok("conversations/delete", json!({"id": conversation}))
        .await;
    // The purge (every quarter of the grace, at least every second) removes it for good.
    let mut gone = false;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if me
            .call("conversations/restore", json!({"id": conversation}))
            .await
            .0
            == 404
            && me
                .ok("conversations/list", json!({"deleted": true}))
                .await
                .as_array()
                .is_some_and(Vec::is_empty)
        {
            gone = true;
            break;
        }
    }
    assert!(gone, "the deleted conversation was not purged");
}

#[tokio::test]
async fn search_reaches_the_thinking_only_when_asked() {
    let app = TestApp::spawn(&[]).await;
    let me = Browser::new(&app);
    me.turn(json!({"content": "tell me something"})).await;
    // The demo model's reasoning says "restate it in my own words"; its answer does not.
    let answers = me.ok("search", json!({"query": "restate"})).await;
    assert!(answers.as_array().is_some_and(Vec::is_empty), "{answers}");
    let thinking = me
        .ok("search", json!({"query": "restate", "thinking": true}))
        .await;
    assert_eq!(thinking[0]["kind"], "thinking", "{thinking}");
    assert!(
        thinking[0]["snippet"]
            .as_array()
            .is_some_and(|parts| parts.contains(&json!({"text": "restate", "hit": true}))),
        "{thinking}"
    );
    let found = me.ok("search", json!({"query": "Short answer"})).await;
    assert_eq!(found[0]["kind"], "answer", "{found}");
}

#[tokio::test]
async fn preferences_are_kept_per_user_and_workspace() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
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
    let ana = Browser::new(&app);
    ana.ok(
        "auth/sign-in",
        json!({"name": "ana", "password": "ana-password-1"}),
    )
    .await;
    assert_eq!(
        admin.ok("preferences/get", json!({})).await,
        json!({"thinking": null, "locale": null, "theme": null, "default_model": null})
    );
    admin
        .ok(
            "preferences/set",
            json!({"preferences": {"thinking": "collapsed", "locale": "fr", "theme": "dark"}}),
        )
        .await;
    let work = admin.ok("workspaces/create", json!({"name": "Work"})).await;
    admin
        .ok(
            "preferences/set",
            json!({"workspace": work["id"], "preferences": {"thinking": "expanded"}}),
        )
        .await;
    let personal = admin.ok("preferences/get", json!({})).await;
    assert_eq!(
        (personal["thinking"].as_str(), personal["locale"].as_str()),
        (Some("collapsed"), Some("fr"))
    );
    let at_work = admin
        .ok("preferences/get", json!({"workspace": work["id"]}))
        .await;
    assert_eq!(at_work["thinking"], "expanded");
    assert_eq!(at_work["locale"], Value::Null);
    // Another user: their own defaults, and the admin's workspace is not there for them.
    assert_eq!(
        ana.ok("preferences/get", json!({})).await["thinking"],
        Value::Null
    );
    let (status, theirs) = ana
        .call("preferences/get", json!({"workspace": work["id"]}))
        .await;
    let (_, missing) = ana
        .call("preferences/get", json!({"workspace": "no-such-workspace"}))
        .await;
    assert_eq!(status, 404);
    assert_eq!(theirs, missing);
    assert_eq!(
        ana.call(
            "preferences/set",
            json!({"workspace": work["id"], "preferences": {"thinking": "hidden"}})
        )
        .await
        .0,
        404
    );
    let (status, _) = admin
        .call(
            "preferences/set",
            json!({"preferences": {"theme": "x".repeat(65)}}),
        )
        .await;
    assert_eq!(status, 409);
}
