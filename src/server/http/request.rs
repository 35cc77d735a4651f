//! What a server function or a page render may ask of the request it runs in: the shared
//! state, the response's status and headers.

use std::sync::Arc;

use axum::http::{header, HeaderValue};
use leptos::prelude::*;

use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;
use crate::server::auth::Caller;
use crate::server::state::AppState;
use crate::server::store::identity::Identity;
use crate::server::store::StoreError;

/// The shared state, as server functions see it; `None` outside a request of the app.
pub fn app_state() -> Option<Arc<AppState>> {
    use_context::<Arc<AppState>>()
}

/// Headers that keep proxies from buffering or caching an event stream.
pub fn set_event_stream_headers() {
    if let Some(opts) = use_context::<leptos_axum::ResponseOptions>() {
        opts.insert_header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        opts.insert_header(
            header::HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        );
    }
}

/// The header that names a running turn, for `POST /api/turn/answer-now`.
pub const TURN_HEADER: &str = "x-ponder-turn";

/// Names the running turn in the response (the browser reads it to steer the turn).
pub fn set_turn_header(id: &str) {
    if let (Some(opts), Ok(value)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        HeaderValue::from_str(id),
    ) {
        opts.insert_header(header::HeaderName::from_static(TURN_HEADER), value);
    }
}

/// The Content-Security-Policy of every page: scripts only from this origin plus the one inline
/// hydration bootstrap (by its per-request nonce) and WebAssembly compilation; no plugins, no
/// base-URL or framing tricks; images only from this origin, `data:`, or `blob:` (the reader's
/// own files, drawn in the composer's tray before they are sent). Model output is already
/// sanitized; this is the second wall.
pub fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; \
         frame-ancestors 'none'; form-action 'self'"
    )
}

/// Powerful browser features no part of Ponder uses, switched off for the page and anything it
/// could embed. Clipboard writing stays allowed: Copy needs it.
pub const PERMISSIONS_POLICY: &str = "accelerometer=(), autoplay=(), \
     camera=(), display-capture=(), geolocation=(), gyroscope=(), hid=(), magnetometer=(), \
     microphone=(), midi=(), payment=(), serial=(), usb=(), xr-spatial-tracking=()";

/// Sets the CSP (with this request's nonce) and the other security headers on the response
/// being built.
pub fn set_security_headers() {
    let Some(opts) = use_context::<leptos_axum::ResponseOptions>() else {
        return;
    };
    let nonce = leptos::nonce::use_nonce()
        .map(|n| n.to_string())
        .unwrap_or_default();
    if let Ok(csp) = HeaderValue::from_str(&content_security_policy(&nonce)) {
        opts.insert_header(header::CONTENT_SECURITY_POLICY, csp);
    }
    opts.insert_header(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    opts.insert_header(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    opts.insert_header(
        header::X_DNS_PREFETCH_CONTROL,
        HeaderValue::from_static("off"),
    );
    opts.insert_header(
        header::HeaderName::from_static("permissions-policy"),
        HeaderValue::from_static(PERMISSIONS_POLICY),
    );
}

/// The shared state and the signed-in caller of the server function being run: 401 when
/// nobody is signed in, 503 when the history database could not be asked.
pub fn caller() -> Result<(Arc<AppState>, Arc<Identity>), Failure> {
    let state = app_state().ok_or_else(|| Failure::new("the server is not set up", false))?;
    let caller = use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>().cloned());
    match caller {
        Some(Caller::Known(who)) => Ok((state, who)),
        Some(Caller::StoreDown) => Err(database_unavailable()),
        Some(Caller::Refused(failure)) => Err(failure),
        Some(Caller::Unknown(code)) => Err(Failure::of(code, false).said()),
        None => Err(Failure::of(ErrorCode::SignInRequired, false).said()),
    }
}

/// The caller as the page render sees it: signed in or not (never an error).
pub fn page_caller() -> Option<Caller> {
    use_context::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>().cloned())
}

/// A store failure as the client is told it, with its status: 404 for what is missing or not
/// the caller's (the same body either way), 409 for a conflict, 503 when the database failed.
pub fn store_error(e: StoreError) -> Failure {
    match e {
        StoreError::NotFound => not_found(),
        StoreError::Conflict(why) => conflict(&why),
        StoreError::Refused(failure) => failure.said(),
        StoreError::Unavailable(detail) => {
            tracing::error!(error = %detail, "the history database failed");
            database_unavailable()
        }
    }
}

/// What is missing, or not the caller's (the same body either way).
pub fn not_found() -> Failure {
    Failure::of(ErrorCode::NotFound, false).said()
}

/// A change that conflicts with what is stored, with what it was.
pub fn conflict(why: &str) -> Failure {
    Failure::of(ErrorCode::Conflict, false)
        .with("detail", why)
        .said()
}

/// The history database could not be asked.
pub fn database_unavailable() -> Failure {
    Failure::of(ErrorCode::DatabaseUnavailable, true).said()
}

/// The request's client address: the peer, or behind a trusted proxy its `X-Forwarded-For`.
pub fn client_ip() -> Option<std::net::IpAddr> {
    let state = app_state()?;
    let parts = use_context::<http::request::Parts>()?;
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip());
    crate::server::http::guard::client_ip(peer, &parts.headers, &state.config.trusted_proxies)
}

/// True when a trusted proxy says the request came over https.
pub fn is_https() -> bool {
    let (Some(state), Some(parts)) = (app_state(), use_context::<http::request::Parts>()) else {
        return false;
    };
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip());
    let trusted =
        peer.is_some_and(|ip| state.config.trusted_proxies.iter().any(|c| c.contains(ip)));
    trusted
        && parts
            .headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

/// The `Last-Event-ID` a reconnecting event-stream client sends: the sequence number of the last
/// event it has.
pub fn last_event_id() -> Option<u64> {
    let parts = use_context::<http::request::Parts>()?;
    parts
        .headers
        .get("last-event-id")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The request's session cookie, if it has one.
pub fn session_secret() -> Option<String> {
    let parts = use_context::<http::request::Parts>()?;
    crate::server::auth::cookie(&parts.headers, crate::server::auth::SESSION_COOKIE)
        .map(str::to_string)
}

/// Adds a `Set-Cookie` header to the response being built.
pub fn set_cookie(value: HeaderValue) {
    if let Some(opts) = use_context::<leptos_axum::ResponseOptions>() {
        opts.append_header(header::SET_COOKIE, value);
    }
}
