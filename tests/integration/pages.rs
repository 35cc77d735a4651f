//! The HTML pages over real HTTP: security headers and the nonce of the hydration bootstrap.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::TestApp;

fn nonce_of(csp: &str) -> String {
    let start = csp.find("'nonce-").expect("a nonce in the CSP") + "'nonce-".len();
    csp[start..]
        .split('\'')
        .next()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn every_page_has_a_csp_whose_nonce_is_the_bootstrap_scripts() {
    let app = TestApp::spawn(&[]).await;
    let mut nonces = Vec::new();
    for (path, status) in [("/", 200), ("/", 200), ("/no-such-page", 404)] {
        let res = app.http.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), status, "{path}");
        let headers = res.headers().clone();
        let csp = headers["content-security-policy"]
            .to_str()
            .unwrap()
            .to_string();
        for directive in [
            "default-src 'self'",
            "'wasm-unsafe-eval'",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
            "img-src 'self' data: blob:;",
        ] {
            assert!(csp.contains(directive), "{directive} missing from {csp}");
        }
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("'unsafe-eval'"),
            "{csp}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["referrer-policy"], "no-referrer");
        let nonce = nonce_of(&csp);
        assert!(nonce.len() >= 16, "{nonce}");
        let body = res.text().await.unwrap();
        let scripts = body.matches("<script").count();
        assert!(scripts >= 1, "{path}: no script");
        assert_eq!(
            body.matches(&format!("nonce=\"{nonce}\"")).count(),
            scripts,
            "{path}: a script without the nonce"
        );
        nonces.push(nonce);
    }
    assert_ne!(nonces[0], nonces[1], "a fresh nonce per request");
}
