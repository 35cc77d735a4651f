//! The store under hostile use, over real HTTP against real databases: a big import is indexed
//! by key and in batches while another user keeps writing; the first admin is made once however
//! many setups race; each user's workspaces and tokens are capped; and what an API token may do
//! is limited (it cannot mint tokens or lock its owner out, and a password reset or "sign out
//! everywhere" revokes it).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::time::{Duration, Instant};

use common::browser::Browser;
use common::*;
use serde_json::{json, Value};

/// A conversation of `count` short messages, question and answer in turn, each answer with a
/// line of reasoning: under the 2 MiB a request may carry, as a browser's saved chats are.
fn big_import(key: &str, count: usize) -> Value {
    let messages: Vec<Value> = (0..count)
        .map(|i| {
            let at = 1_764_489_600_000i64 + i as i64;
            if i % 2 == 0 {
                json!({"role": "user", "created_at": at, "active": 0,
                       "versions": [{"content": format!("q{i} why"), "status": "done", "created_at": at}]})
            } else {
                json!({"role": "assistant", "created_at": at, "active": 0,
                       "versions": [{"content": format!("a{i} because"), "status": "done", "created_at": at,
                                     "blocks": [{"kind": "raw", "text": format!("t{i} hmm")}]}]})
            }
        })
        .collect();
    json!({"conversation": {"key": key, "title": "Imported", "created_at": 1_764_489_600_000i64, "messages": messages}})
}

const IMPORTED: usize = 12_000;

/// An import of 12,000 messages (18,000 search entries, on top of another such import) took
/// over a minute when each entry's indexing read the whole index, and held SQLite's write lock
/// so long that another user's writes failed with 503. Now it is indexed by key, a batch per
/// transaction: it ends well within 40 s (a generous bound for a debug build on a busy
/// machine) and every write of the other user during it succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_big_import_is_indexed_by_key_while_another_user_keeps_writing() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let (alice, bob) = Browser::alice_and_bob(&app).await;
    let first = big_import("first", IMPORTED);
    assert!(
        first.to_string().len() < 2 << 20,
        "the import fits a request"
    );
    let (status, body) = alice.call("conversations/import", first).await;
    assert_eq!((status, body), (200, json!(true)));
    let workspace = bob.ok("workspaces/list", json!({})).await[0]["id"].clone();

    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let done = done.clone();
        tokio::spawn(async move {
            let mut failures = Vec::new();
            let mut writes = 0;
            let mut n = 0u32;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                n += 1;
                let (status, body) = bob
                    .call(
                        "workspaces/rename",
                        json!({"id": workspace, "name": format!("Mine {n}")}),
                    )
                    .await;
                writes += 1;
                if status != 200 {
                    failures.push((status, body));
                }
                let (status, _) = bob.turn(json!({"content": format!("Question {n}")})).await;
                writes += 1;
                if status != 200 {
                    failures.push((status, json!("chat")));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (writes, failures, bob)
        })
    };
    let started = Instant::now();
    let (status, body) = alice
        .call("conversations/import", big_import("second", IMPORTED))
        .await;
    let took = started.elapsed();
    eprintln!("the import took {took:?}");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let (writes, failures, bob) = writer.await.expect("writer");
    assert_eq!((status, body), (200, json!(true)));
    assert!(took < Duration::from_secs(40), "the import took {took:?}");
    assert!(writes >= 2, "the other user wrote during the import");
    assert!(
        failures.is_empty(),
        "{failures:?} of {writes} writes failed"
    );

    // Indexed whole: the last reasoning of the second import is found, and nothing of bob's
    // turns is lost.
    let last = IMPORTED - 1;
    let hits = alice
        .ok(
            "search",
            json!({"query": format!("t{last}"), "thinking": true}),
        )
        .await;
    assert_eq!(hits.as_array().map(Vec::len), Some(2), "{hits}");
    let list = alice.ok("conversations/list", json!({})).await;
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");
    let bobs = bob.ok("conversations/list", json!({})).await;
    assert!(!bobs.as_array().expect("list").is_empty());
}

/// The index is read by key on PostgreSQL too: an imported conversation is found, and a
/// re-import of the same key makes nothing new.
#[tokio::test]
async fn an_import_is_indexed_in_batches_on_postgres() {
    let database = common::postgres::database().await;
    let app = TestApp::spawn(&[
        ("PONDER_AUTH", "password"),
        ("PONDER_DATABASE_URL", &database),
    ])
    .await;
    let (alice, _bob) = Browser::alice_and_bob(&app).await;
    let import = big_import("pg", 1_200);
    assert_eq!(alice.ok("conversations/import", import.clone()).await, true);
    assert_eq!(alice.ok("conversations/import", import).await, false);
    let hits = alice
        .ok("search", json!({"query": "t1199", "thinking": true}))
        .await;
    assert_eq!(hits.as_array().map(Vec::len), Some(1), "{hits}");
    let list = alice.ok("conversations/list", json!({})).await;
    let id = list[0]["id"].clone();
    let opened = alice.ok("conversations/get", json!({"id": id})).await;
    assert_eq!(opened["messages"].as_array().map(Vec::len), Some(1_200));
}

async fn racing_setups(database: Option<String>) {
    let mut vars = vec![("PONDER_AUTH", "password")];
    if let Some(url) = &database {
        vars.push(("PONDER_DATABASE_URL", url));
    }
    let app = TestApp::spawn(&vars).await;
    let browsers: Vec<Browser> = (0..8).map(|_| Browser::new(&app)).collect();
    let setups = browsers.iter().enumerate().map(|(i, b)| {
        b.call(
            "auth/setup",
            json!({"name": format!("admin{i}"), "password": "a long password"}),
        )
    });
    let answers = futures::future::join_all(setups).await;
    let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{answers:?}"
    );
    assert!(
        answers
            .iter()
            .all(|(s, b)| *s == 200 || (*s == 403 && b["code"] == "already_set_up")),
        "{answers:?}"
    );
    let winner = browsers
        .iter()
        .zip(&statuses)
        .find(|(_, s)| **s == 200)
        .map(|(b, _)| b)
        .expect("one setup");
    let users = winner.ok("users/list", json!({})).await;
    let admins: Vec<&Value> = users
        .as_array()
        .expect("users")
        .iter()
        .filter(|u| u["is_admin"] == true)
        .collect();
    assert_eq!(users.as_array().map(Vec::len), Some(1), "{users}");
    assert_eq!(admins.len(), 1, "{users}");
}

/// Eight setups of a fresh server at once made three to five admins; now exactly one succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn setups_at_once_make_one_admin_on_sqlite() {
    racing_setups(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn setups_at_once_make_one_admin_on_postgres() {
    racing_setups(Some(common::postgres::database().await)).await;
}

async fn racing_proxy_names(database: Option<String>) {
    let mut vars = vec![
        ("PONDER_AUTH", "header"),
        ("PONDER_TRUSTED_PROXIES", "127.0.0.1/32"),
    ];
    if let Some(url) = &database {
        vars.push(("PONDER_DATABASE_URL", url));
    }
    let app = TestApp::spawn(&vars).await;
    let firsts = (0..16).map(|i| {
        app.http
            .post(app.url("/api/me"))
            .header("content-type", "application/json")
            .header("Remote-User", format!("user{i}"))
            .body("{}")
            .send()
    });
    let mut admins = 0;
    for answer in futures::future::join_all(firsts).await {
        let answer = answer.expect("me");
        assert_eq!(answer.status(), 200);
        let me: Value = answer.json().await.expect("json");
        assert!(me["account"]["name"].is_string(), "{me}");
        if me["account"]["is_admin"] == true {
            admins += 1;
        }
    }
    assert_eq!(admins, 1, "the first user a proxy names is the one admin");
    let stored = app.state.store.list_users().await.expect("users");
    assert_eq!(stored.len(), 16);
    assert_eq!(stored.iter().filter(|u| u.is_admin).count(), 1);
}

/// Sixteen first requests through the proxy at once, each naming another user, made four
/// admins; now one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_first_names_a_proxy_sends_at_once_make_one_admin_on_sqlite() {
    racing_proxy_names(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_first_names_a_proxy_sends_at_once_make_one_admin_on_postgres() {
    racing_proxy_names(Some(common::postgres::database().await)).await;
}

async fn capped(database: Option<String>) {
    use ponder::server::store::limits::{MAX_TOKENS, MAX_WORKSPACES};
    let mut vars = vec![("PONDER_AUTH", "password")];
    if let Some(url) = &database {
        vars.push(("PONDER_DATABASE_URL", url));
    }
    let app = TestApp::spawn(&vars).await;
    let (alice, bob) = Browser::alice_and_bob(&app).await;
    // Up to the cap at once (the first workspace is made with the user): all of them, and
    // never one more, however many ask together.
    let asks = (0..MAX_WORKSPACES + 10).map(|i| {
        alice.call(
            "workspaces/create",
            json!({"name": format!("Workspace {i}")}),
        )
    });
    let answers = futures::future::join_all(asks).await;
    let made = answers.iter().filter(|(s, _)| *s == 200).count() as i64;
    assert_eq!(made, MAX_WORKSPACES - 1, "{answers:?}");
    let refused = answers.iter().find(|(s, _)| *s != 200).expect("refused");
    assert_eq!(refused.0, 409, "{refused:?}");
    assert_eq!(refused.1["code"], "conflict");
    assert!(
        refused.1["message"]
            .as_str()
            .is_some_and(|m| m.contains(&MAX_WORKSPACES.to_string())),
        "{refused:?}"
    );
    let (status, _) = alice
        .call("workspaces/create", json!({"name": "One more"}))
        .await;
    assert_eq!(status, 409);
    let list = alice.ok("workspaces/list", json!({})).await;
    assert_eq!(list.as_array().map(Vec::len), Some(MAX_WORKSPACES as usize));
    let last = list[MAX_WORKSPACES as usize - 1]["id"].clone();
    alice
        .ok("conversations/list", json!({"workspace": last}))
        .await;
    // Another user's cap is their own.
    bob.ok("workspaces/create", json!({"name": "Bob's"})).await;

    let asks =
        (0..MAX_TOKENS + 5).map(|i| alice.call("tokens/create", json!({"name": format!("t{i}")})));
    let answers = futures::future::join_all(asks).await;
    let made: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(made.len() as i64, MAX_TOKENS, "{answers:?}");
    assert!(answers.iter().all(|(s, _)| *s == 200 || *s == 409));
    let tokens = alice.ok("tokens/list", json!({})).await;
    assert_eq!(tokens.as_array().map(Vec::len), Some(MAX_TOKENS as usize));
    // A revoked token frees its place.
    alice
        .ok("tokens/revoke", json!({"id": made[0]["token"]["id"]}))
        .await;
    alice.ok("tokens/create", json!({"name": "again"})).await;
    let (status, _) = alice.call("tokens/create", json!({"name": "over"})).await;
    assert_eq!(status, 409);
}

/// One user made 10,000 workspaces in 4 s and slowed every list; now 100 workspaces and 50
/// live tokens a user, refused with 409 past that, even when asked for all at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workspaces_and_tokens_are_capped_per_user_on_sqlite() {
    capped(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workspaces_and_tokens_are_capped_per_user_on_postgres() {
    capped(Some(common::postgres::database().await)).await;
}

/// A signed-in browser and a script holding a token it made.
async fn alice_with_a_token(app: &TestApp) -> (Browser, Browser, Browser) {
    let (alice, bob) = Browser::alice_and_bob(app).await;
    let made = alice.ok("tokens/create", json!({"name": "script"})).await;
    let mut script = Browser::new(app);
    script.bearer = Some(made["secret"].as_str().expect("secret").to_string());
    assert_eq!(script.call("conversations/list", json!({})).await.0, 200);
    (alice, bob, script)
}

/// A token could mint more tokens and sign its owner out everywhere; now both need the
/// password (a session): 403, saying so.
#[tokio::test]
async fn a_token_cannot_mint_tokens_or_sign_out_everywhere() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let (alice, _bob, script) = alice_with_a_token(&app).await;
    let (status, body) = script.call("tokens/create", json!({"name": "more"})).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().is_some_and(
            |m| m.contains("an API token cannot") && body["code"] == "password_required"
        ),
        "{body}"
    );
    let (status, body) = script.call("auth/sign-out-everywhere", json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().is_some_and(
            |m| m.contains("an API token cannot") && body["code"] == "password_required"
        ),
        "{body}"
    );
    // Nothing was made or ended: one token, and the session still works.
    let tokens = alice.ok("tokens/list", json!({})).await;
    assert_eq!(tokens.as_array().map(Vec::len), Some(1), "{tokens}");
    assert_eq!(alice.call("conversations/list", json!({})).await.0, 200);
    // The token still does what it is for.
    assert_eq!(script.call("conversations/list", json!({})).await.0, 200);
}

/// A token survived "sign out everywhere"; now signing out everywhere revokes the tokens too.
#[tokio::test]
async fn signing_out_everywhere_revokes_the_tokens() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let (alice, bob, script) = alice_with_a_token(&app).await;
    let other_device = Browser::new(&app);
    other_device
        .ok(
            "auth/sign-in",
            json!({"name": "alice", "password": "alice-password"}),
        )
        .await;
    let bobs = bob.ok("tokens/create", json!({"name": "bob's"})).await;
    alice.ok("auth/sign-out-everywhere", json!({})).await;
    let (status, body) = script.call("conversations/list", json!({})).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "invalid_token");
    assert_eq!(
        other_device.call("conversations/list", json!({})).await.0,
        401
    );
    // Another user's token is not touched.
    let mut bobs_script = Browser::new(&app);
    bobs_script.bearer = Some(bobs["secret"].as_str().expect("secret").to_string());
    assert_eq!(
        bobs_script.call("conversations/list", json!({})).await.0,
        200
    );
}

/// A token survived a password reset; now the reset (`ponder user password`, which calls the
/// store's `set_password`) revokes it with the sessions, and says so.
#[tokio::test]
async fn a_password_reset_revokes_the_tokens() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let (alice, _bob, script) = alice_with_a_token(&app).await;
    let hash = ponder::server::accounts::hash_password("a new password").expect("hash");
    assert!(app
        .state
        .store
        .set_password("alice", &hash)
        .await
        .expect("reset"));
    let (status, body) = script.call("conversations/list", json!({})).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(alice.call("conversations/list", json!({})).await.0, 401);
    let again = Browser::new(&app);
    again
        .ok(
            "auth/sign-in",
            json!({"name": "alice", "password": "a new password"}),
        )
        .await;
    let tokens = again.ok("tokens/list", json!({})).await;
    assert_eq!(tokens, json!([]), "the reset revoked every token");
}

/// Writes that read first (removing a user reads its index rows, renaming a conversation its
/// title) racing other writes on one SQLite file: each waits its turn, none fails with
/// "database is locked" (schemathesis found `users/remove` answering 503 beside a concurrent
/// write: a transaction begun as a reader cannot become a writer once another connection wrote).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_that_read_first_wait_their_turn_on_sqlite() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password"), ("PONDER_TITLES", "off")]).await;
    let (alice, _bob) = Browser::alice_and_bob(&app).await;
    let alice = std::sync::Arc::new(alice);
    let calls = (0..80).map(|i| {
        let alice = alice.clone();
        async move {
            let (endpoint, args) = match i % 4 {
                0 => ("users/remove", json!({"id": format!("no-such-user-{i}")})),
                1 => ("workspaces/create", json!({"name": format!("w{i}")})),
                2 => (
                    "preferences/set",
                    json!({"preferences": {"theme": format!("t{i}")}}),
                ),
                _ => ("presets/save", json!({"preset": {"name": format!("p{i}")}})),
            };
            (endpoint, alice.call(endpoint, args).await)
        }
    });
    let answers = futures::future::join_all(calls).await;
    let unavailable: Vec<_> = answers
        .iter()
        .filter(|(_, (status, _))| *status >= 500)
        .collect();
    assert!(unavailable.is_empty(), "{unavailable:?}");
    assert!(
        answers
            .iter()
            .filter(|(_, (status, _))| *status == 200)
            .count()
            >= 40,
        "{answers:?}"
    );
}
