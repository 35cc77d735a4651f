//! Single sign-on's two addresses: `GET /auth/oidc/login` sends the browser to the identity
//! provider, `GET /auth/oidc/callback` takes it back, signs the person in and returns them where
//! they were. A failure is a page of its own in the reader's language, with its status; nothing
//! is signed in on it.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;
use crate::server::auth::{cookie, session_cookie};
use crate::server::oidc::rules::decide;
use crate::server::oidc::{Sso, SsoError};
use crate::server::state::AppState;
use crate::server::store::ids::new_secret;
use crate::server::store::oidc::{SignedIn, LOGIN_TTL_MS};

/// The browser's one-time cookie for a sign-in on its way.
pub const LOGIN_COOKIE: &str = "ponder_oidc";

/// What a failure page is drawn with.
const FAILURE_CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// `GET /auth/oidc/login?return_to=…`.
pub async fn login(state: &Arc<AppState>, stylesheet: &str, req: Request<Body>) -> Response {
    let Some(sso) = state.sso.clone() else {
        return not_here();
    };
    let base = state.config.base_path.as_str();
    let return_to = req
        .uri()
        .query()
        .and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "return_to")
                .map(|(_, v)| v.into_owned())
        })
        .and_then(|path| same_site_path(&path, base))
        .unwrap_or_else(|| format!("{base}/"));
    let (url, pending) = match sso.start(&return_to).await {
        Ok(started) => started,
        Err(e) => return failed(state, &sso, stylesheet, req, e.into_failure(&sso)).await,
    };
    let browser = new_secret("po_");
    match state.store.save_oidc_login(&browser, &pending).await {
        Ok(true) => {}
        Ok(false) => {
            let busy = Failure::of(ErrorCode::ServerBusy, true).said();
            return failed(state, &sso, stylesheet, req, busy).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, "a sign-in could not be kept");
            let down = Failure::of(ErrorCode::DatabaseUnavailable, true).said();
            return failed(state, &sso, stylesheet, req, down).await;
        }
    }
    let mut response = see_other(&url);
    if let Some(c) = login_cookie(state, &sso, &browser, LOGIN_TTL_MS / 1000) {
        response.headers_mut().append(header::SET_COOKIE, c);
    }
    response
}

/// `GET /auth/oidc/callback?code=…&state=…` (or `error=…`).
pub async fn callback(state: &Arc<AppState>, stylesheet: &str, req: Request<Body>) -> Response {
    let Some(sso) = state.sso.clone() else {
        return not_here();
    };
    let query: Vec<(String, String)> = req
        .uri()
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let pending = match cookie(req.headers(), LOGIN_COOKIE) {
        Some(browser) => state.store.take_oidc_login(browser).await,
        None => Ok(None),
    };
    let pending = match pending {
        Ok(Some(p)) if same_secret(&p.state, param("state").unwrap_or_default()) => p,
        Ok(_) => {
            let expired = Failure::of(ErrorCode::SignInExpired, false).said();
            return failed(state, &sso, stylesheet, req, expired).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, "a sign-in could not be read back");
            let down = Failure::of(ErrorCode::DatabaseUnavailable, true).said();
            return failed(state, &sso, stylesheet, req, down).await;
        }
    };
    let issuer = sso.config().issuer.as_str();
    let outcome = match (param("error"), param("code")) {
        // RFC 9207: a provider that names itself must be the one the sign-in went to.
        _ if param("iss").is_some_and(|iss| iss != issuer) => Err(SsoError::Unverified(
            "the answer names another issuer".into(),
        )),
        (Some(error), _) => Err(SsoError::Denied(match param("error_description") {
            Some(d) => format!("{error}: {d}"),
            None => error.to_string(),
        })),
        (None, Some(code)) => sso.finish(&pending, code).await,
        (None, None) => Err(SsoError::Denied("no code came back".into())),
    };
    let verified = match outcome {
        Ok(v) => v,
        Err(e) => {
            tracing::info!(error = ?e, "a single sign-on failed");
            return failed(state, &sso, stylesheet, req, e.into_failure(&sso)).await;
        }
    };
    let (person, allowed) = decide(sso.config(), &sso.config().issuer, &verified.claims);
    let who = match state.store.oidc_sign_in(&person, allowed).await {
        Ok(SignedIn::User(who)) => who,
        Ok(SignedIn::Refused) => {
            let refused = Failure::of(ErrorCode::SignInNotAllowed, false)
                .with("provider", sso.config().name.as_str())
                .said();
            return failed(state, &sso, stylesheet, req, refused).await;
        }
        Err(e) => {
            tracing::warn!(error = %e, "a single sign-on could not be kept");
            let down = Failure::of(ErrorCode::DatabaseUnavailable, true).said();
            return failed(state, &sso, stylesheet, req, down).await;
        }
    };
    let lifetime = state.config.session_lifetime;
    let name = who.user().name.clone();
    let opened = async {
        let secret = state
            .store
            .open_session(&who, &name, lifetime.as_millis() as i64)
            .await?;
        state
            .store
            .keep_id_token(&secret, &verified.id_token)
            .await?;
        Ok::<_, crate::server::store::StoreError>(secret)
    }
    .await;
    let secret = match opened {
        Ok(secret) => secret,
        Err(e) => {
            tracing::warn!(error = %e, "a session could not be opened");
            let down = Failure::of(ErrorCode::DatabaseUnavailable, true).said();
            return failed(state, &sso, stylesheet, req, down).await;
        }
    };
    let mut response = see_other(&pending.return_to);
    let secure = secure(&sso);
    let headers = response.headers_mut();
    if let Some(c) = session_cookie(&secret, &state.config.base_path, lifetime.as_secs(), secure) {
        headers.append(header::SET_COOKIE, c);
    }
    if let Some(c) = login_cookie(state, &sso, "", 0) {
        headers.append(header::SET_COOKIE, c);
    }
    response
}

impl SsoError {
    fn into_failure(self, sso: &Sso) -> Failure {
        let provider = sso.config().name.as_str();
        match self {
            SsoError::Unreachable(detail) => Failure::of(ErrorCode::ProviderUnreachable, true)
                .with("provider", provider)
                .with("detail", detail),
            SsoError::Denied(detail) => Failure::of(ErrorCode::SignInDenied, false)
                .with("provider", provider)
                .with("detail", detail),
            SsoError::Unverified(detail) => {
                Failure::of(ErrorCode::SignInUnverified, false).with("detail", detail)
            }
        }
        .said()
    }
}

/// A path of this Ponder to return to after signing in: under the base path, never another
/// site (`//host`, `/\host`), no control characters, bounded.
pub fn same_site_path(path: &str, base: &str) -> Option<String> {
    let inside = path.strip_prefix(base)?;
    let ok = inside.starts_with('/')
        && !inside.starts_with("//")
        && !path.contains('\\')
        && !path.chars().any(char::is_control)
        && path.len() <= 2048;
    ok.then(|| path.to_string())
}

/// Two secrets compared in time that does not depend on where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    use sha2::{Digest, Sha256};
    let (x, y) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    x.iter()
        .zip(y.iter())
        .fold(0u8, |acc, (p, q)| acc | (p ^ q))
        == 0
        && !a.is_empty()
}

/// Cookies are `Secure` when Ponder is reached over https (its callback's address says).
fn secure(sso: &Sso) -> bool {
    sso.config().redirect_url.starts_with("https://")
}

fn login_cookie(state: &AppState, sso: &Sso, value: &str, max_age: i64) -> Option<HeaderValue> {
    let mut c = format!(
        "{LOGIN_COOKIE}={value}; Path={}/auth/oidc; Max-Age={max_age}; HttpOnly; SameSite=Lax",
        state.config.base_path
    );
    if secure(sso) {
        c.push_str("; Secure");
    }
    HeaderValue::from_str(&c).ok()
}

fn see_other(to: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn not_here() -> Response {
    crate::server::http::guard::refusal(
        StatusCode::NOT_FOUND,
        crate::server::http::request::not_found(),
    )
}

/// The page of a failed sign-in: its heading, the reason in the reader's language, and the way
/// back to the sign-in page. The login cookie goes; a session cookie is never set here.
async fn failed(
    state: &AppState,
    sso: &Sso,
    stylesheet: &str,
    req: Request<Body>,
    failure: Failure,
) -> Response {
    let (parts, _) = req.into_parts();
    let locale = crate::server::http::locale::of_request(state, &parts).await;
    let t = locale.catalogue();
    let reason = crate::i18n::errors::text(&failure, locale).unwrap_or(failure.message.clone());
    let status = failure
        .code
        .http_status()
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::BAD_REQUEST);
    let html = format!(
        "<!DOCTYPE html><html lang=\"{lang}\" dir=\"{dir}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Ponder</title><link rel=\"stylesheet\" href=\"{css}\"></head>\
         <body><main class=\"sign-in sign-in-failed\" aria-labelledby=\"sign-in-title\">\
         <section class=\"sign-in-form\"><h1 id=\"sign-in-title\">{title}</h1>\
         <p class=\"sign-in-error\" role=\"alert\" data-code=\"{code}\">{reason}</p>\
         <p><a class=\"action primary\" href=\"{home}\">{again}</a></p></section></main></body></html>",
        lang = locale.tag(),
        dir = locale.dir_attr(),
        title = escape(t.sign_in_failed),
        css = escape(stylesheet),
        code = failure.code.name(),
        reason = escape(&reason),
        home = escape(&format!("{}/", state.config.base_path)),
        again = escape(t.sign_in_again),
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(FAILURE_CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if let Some(c) = login_cookie(state, sso, "", 0) {
        headers.append(header::SET_COOKIE, c);
    }
    response
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_this_ponder_are_returned_to() {
        assert_eq!(same_site_path("/c/abc", ""), Some("/c/abc".into()));
        assert_eq!(
            same_site_path("/ponder/c/1", "/ponder"),
            Some("/ponder/c/1".into())
        );
        for bad in [
            "//evil.example",
            "/\\evil.example",
            "https://evil.example/",
            "c/1",
            "/a\nb",
            "",
        ] {
            assert_eq!(same_site_path(bad, ""), None, "{bad:?}");
        }
        assert_eq!(same_site_path("/c/1", "/ponder"), None);
        assert_eq!(same_site_path("/ponder//evil", "/ponder"), None);
    }

    #[test]
    fn states_match_only_themselves() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", ""));
        assert!(!same_secret("", ""));
    }
}
