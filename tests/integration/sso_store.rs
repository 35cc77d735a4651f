//! Single sign-on's rows on a real SQLite file and a real PostgreSQL: a sign-in on its way is
//! taken once and only while fresh; a person is their `(issuer, subject)` and never a name or an
//! e-mail; a verified e-mail links a password user only when allowed; the groups re-read at each
//! sign-in make and unmake admins, and a person refused by them loses every session and token.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use ponder::server::store::oidc::{PendingLogin, Person, SignedIn};
use ponder::server::store::Store;

static NEXT_FILE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

async fn urls() -> Vec<(&'static str, String)> {
    let n = NEXT_FILE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("ponder-sso-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    vec![
        ("sqlite", format!("sqlite://{}/ponder.db", dir.display())),
        ("postgres", common::postgres::database().await),
    ]
}

async fn stores() -> Vec<(&'static str, Store)> {
    let mut out = Vec::new();
    for (engine, url) in urls().await {
        out.push((engine, Store::open(&url).await.expect(engine)));
    }
    out
}

fn person(subject: &str, name: &str) -> Person {
    Person {
        issuer: "https://idp.example.test".into(),
        subject: subject.into(),
        name: name.into(),
        link_email: None,
        admin: None,
    }
}

fn user(outcome: SignedIn) -> ponder::server::store::identity::User {
    match outcome {
        SignedIn::User(who) => who.user().clone(),
        SignedIn::Refused => panic!("refused"),
    }
}

#[tokio::test]
async fn a_sign_in_on_its_way_is_taken_once() {
    for (engine, store) in stores().await {
        let login = PendingLogin {
            state: "st".into(),
            nonce: "no".into(),
            verifier: "ve".into(),
            return_to: "/c/1".into(),
        };
        assert!(store.save_oidc_login("po_browser", &login).await.unwrap());
        assert_eq!(
            store.take_oidc_login("po_other").await.unwrap(),
            None,
            "{engine}: another browser's cookie"
        );
        assert_eq!(
            store.take_oidc_login("po_browser").await.unwrap(),
            Some(login),
            "{engine}"
        );
        assert_eq!(
            store.take_oidc_login("po_browser").await.unwrap(),
            None,
            "{engine}: a replay"
        );
    }
}

#[tokio::test]
async fn sign_ins_on_their_way_are_bounded() {
    for (engine, url) in urls().await {
        let store = Store::open(&url).await.expect(engine);
        sqlx::any::install_default_drivers();
        let mut side = <sqlx::AnyConnection as sqlx::Connection>::connect(&url)
            .await
            .unwrap();
        let now = ponder::server::store::now_ms();
        sqlx::query(&format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {}) \
             INSERT INTO oidc_logins (browser_hash, state, nonce, verifier, return_to, created_at) \
             SELECT 'h' || i, 's', 'n', 'v', '/', {now} FROM n",
            ponder::server::store::oidc::MAX_PENDING_LOGINS
        ))
        .execute(&mut side)
        .await
        .unwrap();
        let login = PendingLogin {
            state: "st".into(),
            nonce: "no".into(),
            verifier: "ve".into(),
            return_to: "/".into(),
        };
        assert!(
            !store
                .save_oidc_login("po_one-too-many", &login)
                .await
                .unwrap(),
            "{engine}"
        );
        sqlx::query("UPDATE oidc_logins SET created_at = 0")
            .execute(&mut side)
            .await
            .unwrap();
        assert!(
            store.save_oidc_login("po_later", &login).await.unwrap(),
            "{engine}: the stale ones are forgotten"
        );
    }
}

#[tokio::test]
async fn a_person_is_their_issuer_and_subject_never_their_name() {
    for (engine, store) in stores().await {
        let first = user(
            store
                .oidc_sign_in(&person("s-1", "alice"), true)
                .await
                .unwrap(),
        );
        assert!(first.is_admin, "{engine}: the first user, no admin groups");
        let again = user(
            store
                .oidc_sign_in(&person("s-1", "renamed"), true)
                .await
                .unwrap(),
        );
        assert_eq!(again, first, "{engine}: the same subject is the same user");
        let namesake = user(
            store
                .oidc_sign_in(&person("s-2", "alice"), true)
                .await
                .unwrap(),
        );
        assert_ne!(namesake.id, first.id, "{engine}");
        assert_eq!(namesake.name, "alice-2", "{engine}");
        assert!(!namesake.is_admin, "{engine}");
        let other_issuer = Person {
            issuer: "https://other-idp.example.test".into(),
            ..person("s-1", "alice")
        };
        let stranger = user(store.oidc_sign_in(&other_issuer, true).await.unwrap());
        assert_ne!(
            stranger.id, first.id,
            "{engine}: one subject at two issuers"
        );
    }
}

#[tokio::test]
async fn a_verified_email_links_a_password_user_only_when_allowed() {
    for (engine, store) in stores().await {
        let owner = store
            .create_user(
                "alice@example.test",
                Some("$argon2id$placeholder"),
                ponder::server::store::identity::Rank::Member,
            )
            .await
            .unwrap();
        let unlinked = user(
            store
                .oidc_sign_in(&person("s-1", "alice@example.test"), true)
                .await
                .unwrap(),
        );
        assert_ne!(
            unlinked.id, owner.id,
            "{engine}: no link unless the rules give one"
        );
        let linking = Person {
            link_email: Some("Alice@Example.test".into()),
            ..person("s-9", "alice@example.test")
        };
        let linked = user(store.oidc_sign_in(&linking, true).await.unwrap());
        assert_eq!(linked.id, owner.id, "{engine}");
        let again = Person {
            link_email: Some("alice@example.test".into()),
            ..person("s-10", "alice@example.test")
        };
        let second = user(store.oidc_sign_in(&again, true).await.unwrap());
        assert_ne!(
            second.id, owner.id,
            "{engine}: a user is linked to one person at most"
        );
    }
}

#[tokio::test]
async fn groups_at_each_sign_in_make_admins_and_end_the_refused_sessions() {
    for (engine, store) in stores().await {
        let _first = store
            .oidc_sign_in(&person("s-0", "first"), true)
            .await
            .unwrap();
        let admin = Person {
            admin: Some(true),
            ..person("s-1", "bob")
        };
        let SignedIn::User(bob) = store.oidc_sign_in(&admin, true).await.unwrap() else {
            panic!("{engine}: refused")
        };
        assert!(bob.user().is_admin, "{engine}");
        let session = store.open_session(&bob, "bob", 60_000).await.unwrap();
        store
            .keep_id_token(&session, "header.payload.sig")
            .await
            .unwrap();
        assert_eq!(
            store.session_id_token(&session).await.unwrap().as_deref(),
            Some("header.payload.sig")
        );
        let (_, token) = store.scoped(&bob).create_token("cli").await.unwrap();
        let demoted = Person {
            admin: Some(false),
            ..person("s-1", "bob")
        };
        assert!(
            !user(store.oidc_sign_in(&demoted, true).await.unwrap()).is_admin,
            "{engine}"
        );
        assert!(
            store.session_identity(&session).await.unwrap().is_some(),
            "{engine}"
        );
        assert_eq!(
            store.oidc_sign_in(&demoted, false).await.unwrap(),
            SignedIn::Refused,
            "{engine}"
        );
        assert!(
            store.session_identity(&session).await.unwrap().is_none(),
            "{engine}: the refused person's session ended"
        );
        assert!(
            store.token_identity(&token).await.unwrap().is_none(),
            "{engine}: and their token"
        );
        assert_eq!(
            store
                .oidc_sign_in(&person("s-new", "nobody"), false)
                .await
                .unwrap(),
            SignedIn::Refused,
            "{engine}: refused before ever coming in"
        );
        let users = store.list_users().await.unwrap();
        assert!(
            users.iter().all(|u| u.name != "nobody"),
            "{engine}: no user made for them"
        );
    }
}
