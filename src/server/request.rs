//! What a server function or a page render may ask of the request it runs in: the shared
//! state, the response's status and headers.

use std::sync::Arc;

use axum::http::{header, HeaderValue, StatusCode};
use leptos::prelude::*;

use super::state::AppState;

/// The shared state, as server functions see it; `None` outside a request of the app.
pub fn app_state() -> Option<Arc<AppState>> {
    use_context::<Arc<AppState>>()
}

/// Sets the status of the server-function response being built.
pub fn set_status(status: StatusCode) {
    if let Some(opts) = use_context::<leptos_axum::ResponseOptions>() {
        opts.set_status(status);
    }
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

/// The Content-Security-Policy of every page: scripts only from this origin plus the one inline
/// hydration bootstrap (by its per-request nonce) and WebAssembly compilation; no plugins, no
/// base-URL or framing tricks; images only from this origin or `data:`. Model output is already
/// sanitized; this is the second wall.
pub fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; \
         frame-ancestors 'none'; form-action 'self'"
    )
}

/// Powerful browser features no part of Ponder uses, switched off for the page and anything it
/// could embed. Clipboard writing stays allowed: Copy needs it.
pub const PERMISSIONS_POLICY: &str = "accelerometer=(), ambient-light-sensor=(), autoplay=(), \
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
