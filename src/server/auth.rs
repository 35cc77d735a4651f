//! Who is asking, for every request: the local user (`PONDER_AUTH=none`), a session cookie or
//! a personal API token (`password`), or the header an authenticating proxy sets (`header`,
//! believed only when the raw TCP peer is in `PONDER_TRUSTED_PROXIES`, never from
//! `X-Forwarded-For`). The answer travels with the request as a [`Caller`].

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use super::config::AuthMode;
use super::state::AppState;
use super::store::identity::{Identity, LOCAL_USER, MAX_NAME_CHARS};
use super::store::StoreError;
use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "ponder_session";

/// Who made a request, as far as Ponder could tell.
#[derive(Clone, Debug)]
pub enum Caller {
    /// Signed in (or the local user).
    Known(Arc<Identity>),
    /// Nobody Ponder knows: sign-in needed. The code says what was wrong, for the 401's body.
    Unknown(ErrorCode),
    /// The request names its caller in a way Ponder cannot take (a proxy's header that is not
    /// a usable user name): `400` with this failure, never a `401` that would send the reader
    /// to a sign-in page that cannot help.
    Refused(Failure),
    /// The history database could not be asked.
    StoreDown,
}

impl Caller {
    pub fn identity(&self) -> Option<&Identity> {
        match self {
            Caller::Known(who) => Some(who),
            _ => None,
        }
    }
}

/// The value of `name` among the request's cookies.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// The bearer token of the request, if any.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

/// Finds the caller of a request from its headers and its TCP peer.
pub async fn identify(state: &AppState, headers: &HeaderMap, peer: Option<IpAddr>) -> Caller {
    match find(state, headers, peer).await {
        Ok(caller) => caller,
        Err(e) => {
            tracing::warn!(error = %e, "cannot tell who is asking: the history database failed");
            Caller::StoreDown
        }
    }
}

async fn find(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<IpAddr>,
) -> Result<Caller, StoreError> {
    let store = &state.store;
    // A personal token works in every mode: scripts and the terminal client send one.
    if let Some(token) = bearer(headers) {
        return Ok(match store.token_identity(token).await? {
            Some(who) => Caller::Known(Arc::new(who)),
            None => Caller::Unknown(ErrorCode::InvalidToken),
        });
    }
    match &state.config.auth {
        AuthMode::None => Ok(Caller::Known(state.local_identity().await?)),
        AuthMode::Password | AuthMode::Oidc(_) => {
            let Some(secret) = cookie(headers, SESSION_COOKIE) else {
                return Ok(Caller::Unknown(ErrorCode::SignInRequired));
            };
            Ok(match store.session_identity(secret).await? {
                Some((who, _)) => Caller::Known(Arc::new(who)),
                None => Caller::Unknown(ErrorCode::SessionEnded),
            })
        }
        AuthMode::Header(name) => {
            let trusted =
                peer.is_some_and(|ip| state.config.trusted_proxies.iter().any(|c| c.contains(ip)));
            if !trusted {
                return Ok(Caller::Unknown(ErrorCode::ProxyRequired));
            }
            let Some(sent) = headers.get(name.as_str()) else {
                return Ok(Caller::Unknown(ErrorCode::ProxyNoUser));
            };
            let user = match proxy_user_name(sent.as_bytes()) {
                Ok(Some(user)) => user,
                Ok(None) => return Ok(Caller::Unknown(ErrorCode::ProxyNoUser)),
                Err(why) => {
                    return Ok(Caller::Refused(
                        Failure::of(ErrorCode::ProxyBadUser, false)
                            .with("header", name.as_str())
                            .with("detail", why)
                            .said(),
                    ))
                }
            };
            let user = user.as_str();
            // A session cookie from another identity (the proxy now names someone else) ends.
            if let Some(secret) = cookie(headers, SESSION_COOKIE) {
                if let Some((_, remembered)) = store.session_identity(secret).await? {
                    if remembered != user {
                        store.close_session(secret).await?;
                    }
                }
            }
            match store.identity_for_name(user, true).await {
                Ok(who) => Ok(Caller::Known(Arc::new(who))),
                Err(StoreError::Conflict(why)) => Ok(Caller::Refused(
                    Failure::of(ErrorCode::ProxyBadUser, false)
                        .with("header", name.as_str())
                        .with("detail", why)
                        .said(),
                )),
                Err(e) => Err(e),
            }
        }
    }
}

/// The user name in a trusted proxy's header, as identity providers send it: UTF-8 (not only
/// ASCII), trimmed, NFC-normalized so that one person typed two ways is one user. `Ok(None)`
/// for an empty header; `Err` says why the bytes are no user name (not UTF-8, a control
/// character, over [`MAX_NAME_CHARS`] after normalization).
pub fn proxy_user_name(raw: &[u8]) -> Result<Option<String>, String> {
    use unicode_normalization::UnicodeNormalization;
    let text = std::str::from_utf8(raw).map_err(|_| "is not UTF-8 text".to_string())?;
    let name: String = text.trim().nfc().collect();
    if name.is_empty() {
        return Ok(None);
    }
    if name.chars().any(char::is_control) {
        return Err("holds a control character; a user name cannot".into());
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(format!(
            "names a user of {chars} characters; at most {MAX_NAME_CHARS} are accepted"
        ));
    }
    Ok(Some(name))
}

/// The middleware: every request under the app gets its [`Caller`] (static assets and the
/// probes are not asked).
pub async fn authenticate(
    State(state): State<Arc<AppState>>,
    mut req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let base = state.config.base_path.as_str();
    let inner = path.strip_prefix(base).unwrap_or(path);
    let skip = inner.starts_with("/pkg/")
        || matches!(inner, "/healthz" | "/readyz" | "/metrics" | "/favicon.svg");
    if !skip {
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        let caller = identify(&state, req.headers(), peer).await;
        req.extensions_mut().insert(caller);
    }
    next.run(req).await
}

/// The `Set-Cookie` value that keeps a session: HttpOnly, SameSite=Lax, scoped to the base
/// path, Secure when the request came over https.
pub fn session_cookie(
    secret: &str,
    base_path: &str,
    max_age_secs: u64,
    secure: bool,
) -> Option<HeaderValue> {
    let path = if base_path.is_empty() { "/" } else { base_path };
    let mut value = format!(
        "{SESSION_COOKIE}={secret}; Path={path}; Max-Age={max_age_secs}; HttpOnly; SameSite=Lax"
    );
    if secure {
        value.push_str("; Secure");
    }
    HeaderValue::from_str(&value).ok()
}

/// The name the local user of `PONDER_AUTH=none` has.
pub fn local_user_name() -> &'static str {
    LOCAL_USER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_names_are_utf8_nfc_and_bounded() {
        assert_eq!(proxy_user_name("José".as_bytes()), Ok(Some("José".into())));
        assert_eq!(
            proxy_user_name("Jose\u{301}".as_bytes()),
            Ok(Some("José".into())),
            "a combining accent is composed"
        );
        assert_eq!(proxy_user_name(b"  alice  "), Ok(Some("alice".into())));
        assert_eq!(proxy_user_name(b"   "), Ok(None));
        assert!(proxy_user_name(b"a\tb").is_err());
        assert!(proxy_user_name(&[0x4a, 0xff, 0x41]).is_err());
        let longest = "é".repeat(MAX_NAME_CHARS);
        assert_eq!(
            proxy_user_name(longest.as_bytes()),
            Ok(Some(longest.clone()))
        );
        assert!(proxy_user_name(format!("{longest}x").as_bytes()).is_err());
    }

    #[test]
    fn cookies_are_read_by_name_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            "a=1; ponder_session=ps_abc ; b=2".parse().unwrap(),
        );
        assert_eq!(cookie(&headers, SESSION_COOKIE), Some("ps_abc"));
        assert_eq!(cookie(&headers, "missing"), None);
        assert_eq!(cookie(&headers, "ponder"), None);
    }

    #[test]
    fn the_session_cookie_is_http_only_and_secure_behind_https() {
        let plain = session_cookie("ps_x", "", 60, false).unwrap();
        let plain = plain.to_str().unwrap();
        assert!(
            plain.contains("HttpOnly")
                && plain.contains("SameSite=Lax")
                && plain.contains("Path=/;")
        );
        assert!(!plain.contains("Secure"));
        let https = session_cookie("ps_x", "/ponder", 60, true).unwrap();
        assert!(
            https.to_str().unwrap().contains("Path=/ponder;")
                && https.to_str().unwrap().ends_with("Secure")
        );
    }
}
