//! The language a page is rendered in, chosen before it renders so the server's HTML, the
//! `<html lang dir>` and the hydrated page all say the same words (no flash of English).

use axum::body::Body;
use axum::http::{header, Request};

use crate::i18n::{Locale, COOKIE};
use crate::server::auth::{cookie, Caller};
use crate::server::state::AppState;

/// The reader's language: the signed-in user's stored choice, else this browser's cookie, else
/// the first language of `Accept-Language` Ponder speaks, else English. A database that cannot
/// be asked only skips the stored choice.
pub async fn of_request(state: &AppState, parts: &http::request::Parts) -> Locale {
    if let Some(Caller::Known(who)) = parts.extensions.get::<Caller>() {
        if let Ok(prefs) = state.store.scoped(who).preferences(None).await {
            if let Some(locale) = prefs.locale.as_deref().and_then(Locale::from_tag) {
                return locale;
            }
        }
    }
    let accept = parts
        .headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok());
    Locale::choose(cookie(&parts.headers, COOKIE), accept)
}

/// The request with its language attached, where the page render reads it
/// ([`crate::client::browser::page_locale`]).
pub async fn attach(state: &AppState, req: Request<Body>) -> Request<Body> {
    let (mut parts, body) = req.into_parts();
    let locale = of_request(state, &parts).await;
    parts.extensions.insert(locale);
    Request::from_parts(parts, body)
}
