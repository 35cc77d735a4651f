//! The HTTP application: Leptos pages and server functions, health, readiness and metrics,
//! under an optional base path; and the serve loop with graceful shutdown.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{OriginalUri, Request, State};
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};

use super::config::Config;
use super::shards::Shards;
use super::state::AppState;
use crate::api::chat::ApiError;
use crate::app::{shell, App, PageSettings};

/// The shared state, as server functions see it.
pub fn app_state() -> Result<Arc<AppState>, ApiError> {
    use_context::<Arc<AppState>>().ok_or_else(|| ApiError {
        message: "the server is not set up to stream turns".into(),
        retryable: false,
    })
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

/// Sets the CSP (with this request's nonce) and the other security headers on the response
/// being built.
fn set_security_headers() {
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
}

/// The whole application, as `main` serves it and the tests call it.
///
/// Under a base path everything (pages, `/pkg` assets, server functions, ops routes) lives below
/// it; `/healthz`, `/readyz` and `/metrics` also answer at the root so a container healthcheck
/// or a scraper need not know the base, and `/` redirects to the app.
pub fn router(state: Arc<AppState>, leptos_options: LeptosOptions) -> Router {
    let base = state.config.base_path.clone();
    let page = PageSettings {
        base_path: base.clone(),
        guard_secs: state.config.pre_token_guard.as_secs().max(1),
    };
    let context = {
        let state = state.clone();
        let page = page.clone();
        let options = leptos_options.clone();
        move || {
            provide_context(state.clone());
            provide_context(page.clone());
            provide_context(options.clone());
            set_security_headers();
        }
    };
    let ops = ops_router(&state);
    let app_fn = {
        let options = leptos_options.clone();
        let page = page.clone();
        move || shell(options.clone(), page.clone())
    };

    // Server functions only: pages are added below so that they render with the full path.
    let mut app = Router::new().leptos_routes_with_context(
        &leptos_options,
        Vec::new(),
        context.clone(),
        app_fn.clone(),
    );
    let render = leptos_axum::render_app_to_stream_with_context(context.clone(), app_fn);
    let mut page_paths: Vec<String> = generate_route_list(App)
        .iter()
        .map(|listing| listing.path().to_string())
        .collect();
    page_paths.sort();
    page_paths.dedup();
    for path in &page_paths {
        let render = render.clone();
        app = app.route(
            path,
            get(move |req: Request<Body>| render(with_full_uri(req))),
        );
    }
    let fallback = leptos_axum::file_and_error_handler_with_context(context, move |options| {
        shell(options, page.clone())
    });
    let app = app
        .fallback(
            move |uri: Uri, options: State<LeptosOptions>, req: Request<Body>| {
                fallback(uri, options, with_full_uri(req))
            },
        )
        .with_state(leptos_options)
        .merge(ops.clone());

    if base.is_empty() {
        return app;
    }
    let mut outer = Router::new()
        .merge(ops)
        .route("/", get(redirect_to(format!("{base}/"))));
    // `nest` serves `/ponder` but not `/ponder/`, the address a proxy's `location /ponder/`
    // forwards; the page handler renders from the full URI, so it can answer there directly.
    if page_paths.iter().any(|p| p == "/") {
        outer = outer.route(
            &format!("{base}/"),
            get(move |req: Request<Body>| render(with_full_uri(req))),
        );
    }
    outer.nest(&base, app)
}

fn ops_router(state: &Arc<AppState>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(ReadyState {
            app: state.clone(),
            cache: Arc::new(Mutex::new(None)),
        })
}

/// Puts back the path the browser asked for. Axum strips a nest's prefix; the Leptos router
/// must see it, because it has the same base as in the browser and links are rendered from it.
fn with_full_uri(mut req: Request<Body>) -> Request<Body> {
    if let Some(OriginalUri(uri)) = req.extensions().get::<OriginalUri>().cloned() {
        *req.uri_mut() = uri;
    }
    req
}

fn redirect_to(location: String) -> impl Fn() -> std::future::Ready<Redirect> + Clone {
    move || std::future::ready(Redirect::temporary(&location))
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// The last readiness probe: when it ran and what it found.
type ReadyCache = Arc<Mutex<Option<(Instant, Result<(), String>)>>>;

#[derive(Clone)]
struct ReadyState {
    app: Arc<AppState>,
    cache: ReadyCache,
}

const READY_CACHE: Duration = Duration::from_secs(5);

async fn readyz(State(ready): State<ReadyState>) -> Response {
    let cached = ready.cache.lock().ok().and_then(|c| {
        c.as_ref()
            .filter(|(at, _)| at.elapsed() < READY_CACHE)
            .map(|(_, r)| r.clone())
    });
    let result = match cached {
        Some(r) => r,
        None => {
            let r = probe_upstream(&ready.app).await;
            if let Ok(mut c) = ready.cache.lock() {
                *c = Some((Instant::now(), r.clone()));
            }
            r
        }
    };
    match result {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {why}\n"),
        )
            .into_response(),
    }
}

/// The upstream is reachable when it answers HTTP at all: any status, even 401 or 404, means a
/// server is there.
async fn probe_upstream(state: &AppState) -> Result<(), String> {
    let request = state
        .http
        .get(&state.upstream_base)
        .timeout(Duration::from_secs(3));
    match request.send().await {
        Ok(_) => Ok(()),
        Err(e) => Err(state.redact(&format!("upstream unreachable: {}", e.without_url()))),
    }
}

async fn metrics(State(ready): State<ReadyState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        ready.app.metrics.render(),
    )
        .into_response()
}

/// Builds the shared state, first starting the demo model when no upstream is configured.
pub async fn prepare(config: Config) -> Result<Arc<AppState>, Box<dyn std::error::Error>> {
    let upstream_base = match &config.upstream_url {
        Some(url) => url.clone(),
        None => {
            let demo = super::demo_upstream::spawn(&config.demo).await?;
            tracing::info!(addr = %demo, "no PONDER_UPSTREAM_URL: serving the built-in demo model");
            super::demo_upstream::base_url(config.provider, demo)
        }
    };
    tracing::info!(provider = config.provider.name(), model = %config.model, "upstream configured");
    Ok(Arc::new(AppState::new(config, upstream_base)?))
}

/// Reads the configuration, starts the demo model if no upstream is set, and serves until
/// SIGTERM or Ctrl-C. Then it stops accepting connections and running turns get the grace
/// period to finish; those still running after it end with an `error` event, so the browser
/// shows why the answer stopped. A second signal ends the grace period at once.
pub async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::from_env()?;
    super::telemetry::init_tracing(config.log_json);
    let leptos_conf = get_configuration(None)?;
    let addr: SocketAddr = leptos_conf.leptos_options.site_addr;

    let grace = config.shutdown_grace;
    let threads = config.threads as usize;
    let state = prepare(config).await?;

    let listener =
        listen(addr).map_err(|e| format!("cannot listen on {addr} (LEPTOS_SITE_ADDR): {e}"))?;
    let local_addr = listener.local_addr()?;
    let mut shards = Shards::start(threads, &state, &leptos_conf.leptos_options, local_addr)?;
    tracing::info!(
        base_path = %state.config.base_path,
        threads,
        "Ponder listening on http://{local_addr}"
    );
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    tokio::spawn(release_memory_when_idle(state.clone()));

    shards.accept(listener, shutdown_signal()).await;
    tracing::info!(
        grace_s = grace.as_secs_f64(),
        running_turns = state.metrics.active_streams(),
        "shutting down: no new connections; running turns may finish"
    );
    let shutdown_state = state.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::time::sleep(grace) => {}
            _ = shutdown_signal() => {}
        }
        tracing::info!(
            running_turns = shutdown_state.metrics.active_streams(),
            "grace period over: ending the running turns with an error event"
        );
        shutdown_state.shutdown.end_grace();
        // The error events are out; a client that stopped reading cannot hold us.
        tokio::time::sleep(LAST_WORDS).await;
        tracing::warn!("connections still open after the grace period; exiting");
        std::process::exit(0);
    });
    shards.finish().await;
    tracing::info!("stopped");
    Ok(())
}

/// Unsent bytes the kernel queues on a client connection before a write has to wait. Without a
/// limit, send-buffer autotuning let a client that stopped reading hold up to 4 MB of its turn in
/// the kernel (tcp_wmem's maximum) before the upstream was paused. Bytes in flight, and so the
/// speed of a page load over a long path, stay the kernel's to tune.
#[cfg(any(target_os = "linux", target_os = "android"))]
const UNSENT_LIMIT: u32 = 16 * 1024;

/// The listening socket as `TcpListener::bind` makes it (address reuse, backlog 128), plus the
/// unsent-bytes limit, which every accepted connection inherits from it.
pub fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = socket2::SockRef::from(&socket).set_tcp_notsent_lowat(UNSENT_LIMIT) {
        tracing::warn!(error = %e, "TCP_NOTSENT_LOWAT not set: a client that stops reading may hold more memory");
    }
    socket.bind(addr)?;
    socket.listen(128)
}

/// Gives the heap that finished turns freed back to the system once no turn is streaming.
/// glibc keeps freed memory in its arenas for reuse: after 10,000 aborted turns the server stayed
/// 19–30 % above its idle size (flat, not a leak). `malloc_trim` returns it, in about 4 ms; it
/// runs when the server goes from busy to idle, which is checked once a second.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
async fn release_memory_when_idle(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut was_busy = false;
    loop {
        tick.tick().await;
        let busy = state.metrics.active_streams() > 0;
        if was_busy && !busy {
            // SAFETY: malloc_trim only releases free pages of glibc's own arenas, under their locks.
            unsafe {
                libc::malloc_trim(0);
            }
        }
        was_busy = busy;
    }
}

/// How long connections get to take their last `error` event once the grace period is over.
const LAST_WORDS: Duration = Duration::from_secs(2);

/// `ponder healthcheck`: asks the server on `LEPTOS_SITE_ADDR` for `/healthz`, for a container
/// `HEALTHCHECK` in an image that has no curl.
pub async fn healthcheck() -> Result<(), String> {
    let configured =
        std::env::var("LEPTOS_SITE_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_string());
    let mut addr: SocketAddr = configured
        .parse()
        .map_err(|e| format!("LEPTOS_SITE_ADDR={configured:?}: {e}"))?;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let url = format!("http://{addr}/healthz");
    let response = reqwest::Client::new()
        .get(&url)
        .timeout(Duration::from_secs(3))
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(format!("{url} answered {}", response.status()))
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limit is set on the listener; the design relies on accepted sockets inheriting it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[tokio::test]
    async fn accepted_connections_inherit_the_unsent_bytes_limit() {
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let lowat = socket2::SockRef::from(&accepted)
            .tcp_notsent_lowat()
            .unwrap();
        assert_eq!(lowat, UNSENT_LIMIT);
    }
}
