//! Single sign-on's edges over real HTTP that need no provider up: Ponder starts while its
//! provider is down and says so at sign-in (503, a page, nothing signed in); passwords kept
//! beside single sign-on are the admin's way in meanwhile; without them, no password works;
//! a callback nobody started is refused; a server without single sign-on has none of it. The
//! flow against a real provider is `end2end/tests/oidc.spec.ts`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::browser::Browser;
use common::*;
use serde_json::json;

fn down_provider(passwords: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("PONDER_AUTH", "oidc"),
        // Nothing listens on port 1.
        ("PONDER_OIDC_ISSUER", "http://127.0.0.1:1"),
        ("PONDER_OIDC_CLIENT_ID", "ponder"),
        ("PONDER_OIDC_CLIENT_SECRET", "ponder-test-secret"),
        (
            "PONDER_OIDC_REDIRECT_URL",
            "http://127.0.0.1:3000/auth/oidc/callback",
        ),
        ("PONDER_OIDC_NAME", "Family IdP"),
        ("PONDER_OIDC_PASSWORDS", passwords),
    ]
}

#[tokio::test]
async fn with_the_provider_down_sign_in_says_so_and_passwords_kept_beside_it_still_work() {
    let app = TestApp::spawn(&down_provider("on")).await;
    let admin = Browser::new(&app);
    let (status, me) = admin.call("me", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(me["auth"], "oidc");
    assert_eq!(me["provider"], "Family IdP");
    assert_eq!(me["passwords"], true);
    assert_eq!(
        me["needs_setup"], true,
        "passwords kept: the first visit makes the admin"
    );

    let plain = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let login = plain
        .get(app.url("/auth/oidc/login?return_to=/c/1"))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status().as_u16(), 503);
    assert!(login.headers().get("location").is_none());
    assert!(login
        .headers()
        .get_all("set-cookie")
        .iter()
        .all(|c| !c.to_str().unwrap().starts_with("ponder_session=")));
    let page = login.text().await.unwrap();
    assert!(page.contains("Family IdP could not be reached"), "{page}");
    assert!(
        page.contains("data-code=\"provider_unreachable\""),
        "{page}"
    );

    let (status, _) = admin
        .call(
            "auth/setup",
            json!({"name": "root", "password": "break-glass-1"}),
        )
        .await;
    assert_eq!(status, 200, "the admin's way in while the provider is down");
    let (_, me) = admin.call("me", json!({})).await;
    assert_eq!(me["account"]["name"], "root");
    assert_eq!(me["account"]["is_admin"], true);
}

#[tokio::test]
async fn without_passwords_only_the_provider_signs_people_in() {
    let app = TestApp::spawn(&down_provider("off")).await;
    let someone = Browser::new(&app);
    let (_, me) = someone.call("me", json!({})).await;
    assert_eq!(me["passwords"], false);
    assert_eq!(me["needs_setup"], false);
    assert!(me["account"].is_null());
    for endpoint in ["auth/setup", "auth/sign-in"] {
        let (status, body) = someone
            .call(
                endpoint,
                json!({"name": "root", "password": "break-glass-1"}),
            )
            .await;
        assert_eq!(status, 403, "{endpoint}: {body}");
        assert_eq!(body["code"], "no_accounts");
    }
    let (status, _) = someone.call("conversations/list", json!({})).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_callback_nobody_started_signs_nobody_in() {
    let app = TestApp::spawn(&down_provider("off")).await;
    let plain = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for query in [
        "code=stolen&state=guessed",
        "error=access_denied&state=guessed",
        "",
    ] {
        let answer = plain
            .get(app.url(&format!("/auth/oidc/callback?{query}")))
            .header("cookie", "ponder_oidc=po_never-issued")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 400, "{query}");
        assert!(answer
            .headers()
            .get_all("set-cookie")
            .iter()
            .all(|c| !c.to_str().unwrap().starts_with("ponder_session=")));
        let page = answer.text().await.unwrap();
        assert!(page.contains("data-code=\"sign_in_expired\""), "{page}");
    }
}

#[tokio::test]
async fn a_server_without_single_sign_on_has_none_of_it() {
    let app = TestApp::spawn(&[("PONDER_AUTH", "password")]).await;
    let plain = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for path in ["/auth/oidc/login", "/auth/oidc/callback?code=x&state=y"] {
        let answer = plain.get(app.url(path)).send().await.unwrap();
        assert_eq!(answer.status().as_u16(), 404, "{path}");
    }
    let (_, me) = Browser::new(&app).call("me", json!({})).await;
    assert!(me["provider"].is_null());
    assert_eq!(me["passwords"], true);
}
