//! The guard in front of every request: what a request to the API must be before any of it is
//! read, and the headers that depend on how the request reached Ponder.
//!
//! A request that changes something (any method but GET, HEAD and OPTIONS) under `/api/` must
//! come from this server's own origin (or one in `PONDER_ALLOWED_ORIGINS`), be JSON, and bring a
//! body of at most `PONDER_MAX_REQUEST_BYTES` within `PONDER_BODY_TIMEOUT` (an attachment's upload:
//! `application/octet-stream`, a type no form can send either, of at most
//! `PONDER_MAX_ATTACHMENT_BYTES`); `/api/chat` is also
//! rate-limited per client when a limit is set. A browser cannot send a cross-origin JSON POST
//! without a CORS preflight, which Ponder never grants, and a `text/plain` form post is refused
//! by its type: so no web page a user visits can spend the operator's key. Refusals answer with
//! the same JSON shape as the stream's `error` event.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;

use crate::domain::{ErrorCode, Failure, TurnEvent};
use crate::i18n::errors::Said;
use crate::server::config::{AuthMode, Cidr, Config};
use crate::server::http::host_check::HostRule;
use crate::server::rate_limit::RateLimiter;
use crate::server::telemetry::Metrics;
use crate::server::turn::wording::human_bytes;

/// `Strict-Transport-Security` sent when a trusted proxy says the request came over https: a
/// year, this host only (subdomains may serve other things over http).
const HSTS: &str = "max-age=31536000";

/// What the guard checks, read once from the configuration.
pub struct Guard {
    base_path: String,
    allowed_origins: Vec<String>,
    trusted_proxies: Vec<Cidr>,
    max_body: usize,
    /// The upload route's own limit: one attached file.
    max_file: usize,
    /// `/api/chat`'s: a request's own limit and, where the browser keeps the history (and so
    /// the files, sent inside each request), room for them in base64
    /// (`PONDER_MAX_MESSAGE_ATTACHMENT_BYTES` of them).
    max_chat: usize,
    body_timeout: Duration,
    rate: Option<RateLimiter>,
    /// With `PONDER_AUTH=none`, the `Host` names answered (DNS rebinding).
    hosts: Option<HostRule>,
    metrics: Arc<Metrics>,
}

impl Guard {
    pub fn new(config: &Config, metrics: Arc<Metrics>) -> Self {
        Guard {
            base_path: config.base_path.clone(),
            allowed_origins: config.allowed_origins.clone(),
            trusted_proxies: config.trusted_proxies.clone(),
            max_body: config.limits.max_request_bytes,
            max_file: usize::try_from(config.attachments.file_bytes).unwrap_or(usize::MAX),
            max_chat: match config.history {
                crate::server::config::HistoryMode::Server => config.limits.max_request_bytes,
                _ => usize::try_from(config.attachments.message_bytes.saturating_mul(4) / 3 + 4)
                    .unwrap_or(usize::MAX)
                    .saturating_add(config.limits.max_request_bytes),
            },
            body_timeout: config.limits.body_timeout,
            rate: config.rate_limit.map(RateLimiter::new),
            hosts: (config.auth == AuthMode::None)
                .then(|| HostRule::new(config.public_hosts.clone(), config.listen)),
            metrics,
        }
    }

    fn trusts(&self, peer: Option<IpAddr>) -> bool {
        peer.is_some_and(|ip| self.trusted_proxies.iter().any(|c| c.contains(ip)))
    }

    fn refuse(&self, reason: &'static str, status: StatusCode, failure: Failure) -> Response {
        self.metrics.request_refused(reason);
        refusal(status, failure)
    }

    /// Checks an API request and reads its body; the request handed on has the whole body.
    async fn api(&self, req: Request, peer: Option<IpAddr>, next: Next) -> Response {
        let headers = req.headers();
        if let Some(origin) = header_str(headers, "origin") {
            if !self.own_origin(headers, peer, origin) {
                return self.cross_origin(origin);
            }
        }
        let upload = req.uri().path()
            == format!(
                "{}{}",
                self.base_path,
                crate::domain::attachment::UPLOAD_PATH
            );
        let content_type = header_str(headers, "content-type");
        let typed = if upload {
            content_type.is_some_and(|t| {
                t.split(';')
                    .next()
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/octet-stream"))
            })
        } else {
            is_json(content_type)
        };
        if matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH) && !typed {
            return self.refuse(
                "content_type",
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                Failure::of(ErrorCode::UnsupportedMediaType, false).said(),
            );
        }
        let chat = req.uri().path() == format!("{}/api/chat", self.base_path);
        let max_body = match (upload, chat) {
            (true, _) => self.max_file,
            (_, true) => self.max_chat,
            _ => self.max_body,
        };
        let too_large = || {
            if upload {
                self.file_too_large(req.uri().query())
            } else {
                self.too_large(max_body)
            }
        };
        let declared = header_str(headers, "content-length").and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > max_body as u64) {
            return too_large();
        }
        if let Some(rate) = &self.rate {
            if chat {
                let client = client_ip(peer, headers, &self.trusted_proxies);
                if let Some(ip) = client {
                    if let Err(wait) = rate.check(ip, Instant::now()) {
                        return self.rate_limited(wait);
                    }
                }
            }
        }
        let file_too_large = upload.then(|| self.file_too_large(req.uri().query()));
        let (parts, body) = req.into_parts();
        let collected = tokio::time::timeout(
            self.body_timeout,
            http_body_util::Limited::new(body, max_body).collect(),
        )
        .await;
        let bytes = match collected {
            Err(_) => {
                let secs = self.body_timeout.as_secs_f64();
                return self.refuse(
                    "body_timeout",
                    StatusCode::REQUEST_TIMEOUT,
                    Failure::of(ErrorCode::BodyTimeout, false)
                        .with("seconds", secs)
                        .said(),
                );
            }
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
                return file_too_large.unwrap_or_else(|| self.too_large(max_body))
            }
            Ok(Err(_)) => {
                return self.refuse(
                    "body_broken",
                    StatusCode::BAD_REQUEST,
                    Failure::of(ErrorCode::BodyUnreadable, false).said(),
                )
            }
            Ok(Ok(collected)) => collected.to_bytes(),
        };
        next.run(Request::from_parts(parts, Body::from(bytes)))
            .await
    }

    /// `421` for a request to a `none`-mode server under a name it does not answer to (see
    /// [`HostRule`]); the probes answer under any name.
    fn unknown_host(&self, req: &Request) -> Option<Response> {
        let rule = self.hosts.as_ref()?;
        let host = match req.headers().get(header::HOST) {
            Some(sent) => Some(sent.to_str().unwrap_or("(not text)")),
            None => req.uri().host(),
        };
        let path = req.uri().path();
        let inner = path.strip_prefix(self.base_path.as_str()).unwrap_or(path);
        if rule.allows(host) || matches!(inner, "/healthz" | "/readyz" | "/metrics") {
            return None;
        }
        let host = host.unwrap_or_default();
        Some(
            self.refuse(
                "host",
                StatusCode::MISDIRECTED_REQUEST,
                Failure::of(ErrorCode::UnknownHost, false)
                    .with("host", host)
                    .said(),
            ),
        )
    }

    /// A form a page of Ponder's posts (a shared page's "Continue in Ponder"): only from this
    /// server's own pages. Its `Origin` must be the server's; a page with `Referrer-Policy:
    /// no-referrer` (the shared page) makes the browser send `Origin: null`, and then the
    /// browser's own `Sec-Fetch-Site: same-origin` must say it. Anything else is refused before
    /// the body is read.
    async fn form(&self, req: Request, peer: Option<IpAddr>, next: Next) -> Response {
        let headers = req.headers();
        let origin = header_str(headers, "origin").unwrap_or("null");
        let allowed = if origin == "null" {
            header_str(headers, "sec-fetch-site") == Some("same-origin")
        } else {
            self.own_origin(headers, peer, origin)
        };
        if !allowed {
            return self.cross_origin(origin);
        }
        next.run(req).await
    }

    /// Whether `origin` is this server's own (or one `PONDER_ALLOWED_ORIGINS` lets in).
    fn own_origin(&self, headers: &HeaderMap, peer: Option<IpAddr>, origin: &str) -> bool {
        let forwarded_host = self
            .trusts(peer)
            .then(|| header_str(headers, "x-forwarded-host"))
            .flatten();
        origin_allowed(
            origin,
            header_str(headers, "host"),
            forwarded_host,
            &self.allowed_origins,
        )
    }

    fn cross_origin(&self, origin: &str) -> Response {
        self.refuse(
            "origin",
            StatusCode::FORBIDDEN,
            Failure::of(ErrorCode::CrossOrigin, false)
                .with("origin", origin)
                .said(),
        )
    }

    fn too_large(&self, max_body: usize) -> Response {
        let limit = human_bytes(max_body);
        self.refuse(
            "too_large",
            StatusCode::PAYLOAD_TOO_LARGE,
            Failure::of(ErrorCode::TooLarge, false)
                .with("limit", limit)
                .said(),
        )
    }

    /// An upload over `PONDER_MAX_ATTACHMENT_BYTES`, naming the file.
    fn file_too_large(&self, query: Option<&str>) -> Response {
        self.refuse(
            "too_large",
            StatusCode::PAYLOAD_TOO_LARGE,
            Failure::of(ErrorCode::AttachmentTooLarge, false)
                .with("name", crate::domain::attachment::file_name(query))
                .with("limit", human_bytes(self.max_file))
                .said(),
        )
    }

    fn rate_limited(&self, wait: Duration) -> Response {
        let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
        let mut response = self.refuse(
            "rate_limited",
            StatusCode::TOO_MANY_REQUESTS,
            Failure::of(ErrorCode::RateLimited, true)
                .with("retry_after", secs)
                .said(),
        );
        if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

/// The middleware: the API checks for requests under `/api/` that change something, and HSTS
/// on every response to a request a trusted proxy says came over https.
pub async fn guard(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    if let Some(refused) = guard.unknown_host(&req) {
        return refused;
    }
    let https = guard.trusts(peer)
        && header_str(req.headers(), "x-forwarded-proto")
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"));
    let changes_something = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let is_api = req
        .uri()
        .path()
        .strip_prefix(guard.base_path.as_str())
        .is_some_and(|p| p.starts_with("/api/"));
    let is_share_form = req
        .uri()
        .path()
        .strip_prefix(guard.base_path.as_str())
        .is_some_and(|p| p.starts_with(crate::domain::share::SHARE_PREFIX));
    let mut response = if is_api && changes_something {
        guard.api(req, peer, next).await
    } else if is_share_form && changes_something {
        guard.form(req, peer, next).await
    } else {
        next.run(req).await
    };
    if https {
        response.headers_mut().insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(HSTS),
        );
    }
    response
}

/// A refusal in the JSON shape of the stream's `error` event.
pub fn refusal(status: StatusCode, failure: Failure) -> Response {
    let body = serde_json::to_string(&TurnEvent::Error(failure)).unwrap_or_else(|_| {
        r#"{"type":"error","message":"refused","retryable":false,"code":"other"}"#.into()
    });
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `application/json`, with or without parameters such as a charset.
pub fn is_json(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether a request with this `Origin` came from this server's own pages: its host and port
/// are the `Host` the request was sent to (or the one a trusted proxy forwarded), or it is one
/// of the allowed origins. `null` (sandboxed frames, files) is never this server.
pub fn origin_allowed(
    origin: &str,
    host: Option<&str>,
    forwarded_host: Option<&str>,
    allowed: &[String],
) -> bool {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    if allowed.contains(&origin) {
        return true;
    }
    let Some(authority) = origin
        .strip_prefix("http://")
        .map(|a| (a, "80"))
        .or_else(|| origin.strip_prefix("https://").map(|a| (a, "443")))
    else {
        return false;
    };
    let (authority, default_port) = authority;
    let normalize = |h: &str| {
        let h = h.trim().to_ascii_lowercase();
        let bracketed_end = h.rfind(']');
        let has_port = h
            .rfind(':')
            .is_some_and(|c| bracketed_end.is_none_or(|b| c > b));
        if has_port {
            h
        } else {
            format!("{h}:{default_port}")
        }
    };
    let origin_authority = normalize(authority);
    [host, forwarded_host.and_then(|f| f.split(',').next())]
        .into_iter()
        .flatten()
        .any(|h| normalize(h) == origin_authority)
}

/// The client a request is from: the peer, or, when the peer is a trusted proxy, the last
/// address in `X-Forwarded-For` that is not itself a trusted proxy.
pub fn client_ip(peer: Option<IpAddr>, headers: &HeaderMap, trusted: &[Cidr]) -> Option<IpAddr> {
    let peer = peer?;
    let is_trusted = |ip: IpAddr| trusted.iter().any(|c| c.contains(ip));
    if !is_trusted(peer) {
        return Some(peer);
    }
    let forwarded: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    Some(
        forwarded
            .into_iter()
            .rev()
            .find(|ip| !is_trusted(*ip))
            .unwrap_or(peer),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_with_any_parameters_is_json() {
        assert!(is_json(Some("application/json")));
        assert!(is_json(Some("Application/JSON; charset=utf-8")));
        assert!(!is_json(Some("text/plain")));
        assert!(!is_json(Some("application/x-www-form-urlencoded")));
        assert!(!is_json(Some("application/jsonp")));
        assert!(!is_json(None));
    }

    #[test]
    fn only_the_servers_own_origin_or_an_allowed_one_passes() {
        let none: &[String] = &[];
        assert!(origin_allowed(
            "http://127.0.0.1:3000",
            Some("127.0.0.1:3000"),
            None,
            none
        ));
        assert!(origin_allowed(
            "https://chat.example.com",
            Some("chat.example.com"),
            None,
            none
        ));
        assert!(origin_allowed(
            "https://chat.example.com",
            Some("chat.example.com:443"),
            None,
            none
        ));
        assert!(origin_allowed(
            "http://[::1]:3000",
            Some("[::1]:3000"),
            None,
            none
        ));
        assert!(!origin_allowed(
            "https://evil.example",
            Some("127.0.0.1:3000"),
            None,
            none
        ));
        assert!(!origin_allowed(
            "http://127.0.0.1:3001",
            Some("127.0.0.1:3000"),
            None,
            none
        ));
        assert!(!origin_allowed(
            "https://chat.example.com",
            Some("chat.example.com:80"),
            None,
            none
        ));
        assert!(!origin_allowed("null", Some("127.0.0.1:3000"), None, none));
        assert!(!origin_allowed("http://127.0.0.1:3000", None, None, none));
        assert!(origin_allowed(
            "https://chat.example.com",
            Some("ponder:3000"),
            Some("chat.example.com"),
            none
        ));
        let allowed = vec!["https://tools.example.com".to_string()];
        assert!(origin_allowed(
            "https://tools.example.com/",
            Some("x:1"),
            None,
            &allowed
        ));
    }

    #[test]
    fn forwarded_addresses_count_only_behind_a_trusted_proxy() {
        let trusted = vec![Cidr::parse("10.0.0.0/8").unwrap()];
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            "203.0.113.9, 198.51.100.7, 10.0.0.3".parse().unwrap(),
        );
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let stranger: IpAddr = "192.0.2.5".parse().unwrap();
        assert_eq!(
            client_ip(Some(proxy), &headers, &trusted),
            Some("198.51.100.7".parse().unwrap()),
            "the last untrusted hop, not the first (which the client wrote itself)"
        );
        assert_eq!(
            client_ip(Some(stranger), &headers, &trusted),
            Some(stranger)
        );
        assert_eq!(
            client_ip(Some(proxy), &HeaderMap::new(), &trusted),
            Some(proxy)
        );
    }
}
