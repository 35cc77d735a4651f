//! The HTTP application: Leptos pages and server functions, health, readiness and metrics,
//! under an optional base path; and the serve loop with graceful shutdown.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{OriginalUri, Request, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::LeptosRoutes;

use super::config::Config;
use super::guard::Guard;
use super::request::set_security_headers;
use super::serve::{self, ConnectionLimits, Shards};
use super::state::AppState;
use crate::domain::page::PageSettings;

/// The pages the server serves, handed in by the composition root ([`crate::site`]): the server
/// knows how to serve a page shell, not what it draws, and imports no UI.
#[derive(Clone, Copy)]
pub struct Site {
    /// The page shell: `<html>`, the head and the app.
    pub shell: fn(LeptosOptions, PageSettings) -> AnyView,
    /// The chunk holding a locale's words, which a page in that language preloads.
    pub words_chunk: fn(crate::i18n::Locale) -> Option<&'static str>,
}

/// The whole application, as `main` serves it and the tests call it.
///
/// Under a base path everything (pages, `/pkg` assets, server functions, ops routes) lives below
/// it; `/healthz`, `/readyz` and `/metrics` also answer at the root so a container healthcheck
/// or a scraper need not know the base, and `/` redirects to the app.
pub fn router(state: Arc<AppState>, leptos_options: LeptosOptions, site: Site) -> Router {
    let shell = site.shell;
    let (leptos_options, hashed) = super::assets::with_hashed_names(leptos_options);
    let base = state.config.base_path.clone();
    let page = PageSettings {
        base_path: base.clone(),
        guard_secs: state.config.pre_token_guard.as_secs().max(1),
        split_loader: super::assets::split_loader(&leptos_options),
        words_chunks: crate::i18n::Locale::ALL
            .into_iter()
            .filter_map(|locale| {
                let chunk = (site.words_chunk)(locale)?;
                Some((
                    locale.tag(),
                    super::assets::split_chunk(&leptos_options, chunk)?,
                ))
            })
            .collect(),
    };
    let context = {
        let state = state.clone();
        let page = page.clone();
        let options = leptos_options.clone();
        move || {
            provide_context(state.clone());
            provide_context(page.clone());
            provide_context(options.clone());
            provide_context(page_me(&state));
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
    // The chat is the one page (`App` shows it at the base path); any other path reaches the
    // fallback, which renders the not-found page with a 404.
    {
        let render = render.clone();
        let state = state.clone();
        app = app.route(
            "/",
            get(move |req: Request<Body>| {
                let (render, state) = (render.clone(), state.clone());
                async move { render(super::locale::attach(&state, with_full_uri(req)).await).await }
            }),
        );
    }
    let fallback = leptos_axum::file_and_error_handler_with_context(context, move |options| {
        shell(options, page.clone())
    });
    let site_root = std::path::PathBuf::from(leptos_options.site_root.as_ref());
    let fallback_state = state.clone();
    let app = app
        .fallback(
            move |uri: Uri, options: State<LeptosOptions>, req: Request<Body>| {
                let allowed = only_the_built_site(&site_root, uri.path());
                let (fallback, state) = (fallback.clone(), fallback_state.clone());
                async move {
                    match allowed {
                        Ok(()) => {
                            let req = super::locale::attach(&state, with_full_uri(req)).await;
                            fallback(uri, options, req).await
                        }
                        Err(()) => (StatusCode::NOT_FOUND, "not found\n").into_response(),
                    }
                }
            },
        )
        .with_state(leptos_options)
        .merge(ops.clone());

    let guard = Arc::new(Guard::new(&state.config, state.metrics.clone()));
    if base.is_empty() {
        return with_guard(app, guard, state, hashed);
    }
    let mut outer = Router::new()
        .merge(ops)
        .route("/", get(redirect_to(format!("{base}/"))));
    // `nest` serves `/ponder` but not `/ponder/`, the address a proxy's `location /ponder/`
    // forwards; the page handler renders from the full URI, so it can answer there directly.
    {
        let state = state.clone();
        outer = outer.route(
            &format!("{base}/"),
            get(move |req: Request<Body>| {
                let (render, state) = (render.clone(), state.clone());
                async move { render(super::locale::attach(&state, with_full_uri(req)).await).await }
            }),
        );
    }
    with_guard(outer.nest(&base, app), guard, state, hashed)
}

/// The guard in front of every request, the caching rule of [`super::assets`] inside it, and
/// around it one tracing span per request: method
/// and path when it starts, status and duration when its response ends (logged at `debug`, so
/// `RUST_LOG=ponder=debug` shows every request). Lines logged while a request is served, a
/// turn's included, carry the span in the text format.
fn with_guard(
    app: Router,
    guard: Arc<Guard>,
    state: Arc<AppState>,
    hashed: Option<Arc<str>>,
) -> Router {
    use tower_http::trace::TraceLayer;
    let traced = TraceLayer::new_for_http()
        .make_span_with(|req: &Request<Body>| {
            tracing::info_span!(
                "request",
                method = %req.method(),
                path = %req.uri().path(),
                status = tracing::field::Empty,
                duration_ms = tracing::field::Empty,
            )
        })
        .on_request(())
        .on_response(|res: &Response, latency: Duration, span: &tracing::Span| {
            span.record("status", res.status().as_u16());
            span.record("duration_ms", latency.as_secs_f64() * 1000.0);
            tracing::debug!(
                status = res.status().as_u16(),
                duration_ms = latency.as_secs_f64() * 1000.0,
                "response"
            );
        })
        .on_body_chunk(())
        .on_eos(
            |_: Option<&axum::http::HeaderMap>, whole: Duration, span: &tracing::Span| {
                span.record("duration_ms", whole.as_secs_f64() * 1000.0);
                tracing::debug!(
                    duration_ms = whole.as_secs_f64() * 1000.0,
                    "response body ended"
                );
            },
        )
        .on_failure(());
    app.layer(axum::middleware::from_fn(move |req, next| {
        super::assets::cache_control(hashed.clone(), req, next)
    }))
    .layer(axum::middleware::from_fn_with_state(
        state,
        super::auth::authenticate,
    ))
    .layer(axum::middleware::from_fn_with_state(
        guard,
        super::guard::guard,
    ))
    .layer(compress_pages_and_json())
    .layer(traced)
}

/// Gzip for what Ponder writes at request time: the page (7.7 KB of HTML, 2.6 KB gzipped) and
/// the API's JSON (a 5,000-model list). The assets are compressed at build time and keep their
/// own `Content-Encoding`; event streams, images and anything else pass untouched, so a turn is
/// never buffered. No secret and no attacker's text share a response here (the session is an
/// `HttpOnly`, `SameSite=Lax` cookie), which is what a compression side channel would need.
fn compress_pages_and_json(
) -> tower_http::compression::CompressionLayer<impl tower_http::compression::Predicate> {
    use tower_http::compression::predicate::{DefaultPredicate, Predicate};
    let pages_and_json = |_: StatusCode,
                          _: axum::http::Version,
                          headers: &axum::http::HeaderMap,
                          _: &axum::http::Extensions| {
        headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/html") || t.starts_with("application/json"))
    };
    tower_http::compression::CompressionLayer::new()
        .gzip(true)
        .compress_when(DefaultPredicate::new().and(pages_and_json))
}

/// Refuses what the static files must never show: a path with a segment that starts with a dot
/// (`.env`, `.git/`), and anything reached through a symbolic link inside the site root.
fn only_the_built_site(root: &std::path::Path, path: &str) -> Result<(), ()> {
    let decoded = super::config::percent_decode(path);
    let mut at = root.to_path_buf();
    for segment in decoded.split(['/', '\\']).filter(|s| !s.is_empty()) {
        if segment.starts_with('.') {
            return Err(());
        }
        at.push(segment);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(()),
            Ok(_) => {}
            // Past the files that exist: what is left is a page route.
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Who the page is rendered for, so the page knows from its first render whether to sign in and
/// where chats live (`needs_setup` is asked for by the sign-in form itself).
fn page_me(state: &AppState) -> crate::domain::account::Me {
    use super::auth::Caller;
    let account = match super::request::page_caller() {
        Some(Caller::Known(who)) => Some(super::accounts::account(who.user())),
        _ => None,
    };
    crate::domain::account::Me {
        account,
        auth: state.config.auth.name().into(),
        needs_setup: false,
        history: match state.config.history {
            super::config::HistoryMode::Server => "server".into(),
            super::config::HistoryMode::Browser => "browser".into(),
        },
    }
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
    let store = super::store::Store::open(&config.database_url).await?;
    tracing::info!(
        database = ?store.backend(),
        auth = config.auth.name(),
        history = ?config.history,
        "history store ready"
    );
    if config.auth == super::config::AuthMode::None && !config.listen.ip().is_loopback() {
        tracing::warn!(
            listen = %config.listen,
            "PONDER_AUTH=none while listening beyond this machine: anyone who reaches Ponder uses it as the one local user"
        );
    }
    let mut state = AppState::new(config, upstream_base, store)?;
    match state.store.backend() {
        super::store::Backend::Postgres => {
            let liveness = super::turn::relay::Liveness {
                heartbeat: state.config.heartbeat,
                timeout: state.config.replica_timeout,
            };
            let relay = super::turn::relay::Relay::start(
                &state.config.database_url,
                state.turns.clone(),
                liveness,
            )
            .await?;
            state.turns.share_through(state.store.clone());
            state.relay = Some(relay);
        }
        super::store::Backend::Sqlite => {
            let interrupted = state.store.interrupt_unfinished_answers().await?;
            if interrupted > 0 {
                tracing::warn!(
                    answers = interrupted,
                    "answers left streaming by a server that did not stop cleanly are marked interrupted"
                );
            }
        }
    }
    let state = Arc::new(state);
    state.models.spawn_refresh(
        state.config.clone(),
        state.http.clone(),
        state.upstream_base.clone(),
    );
    Ok(state)
}

/// Reads the configuration, starts the demo model if no upstream is set, and serves `site`
/// until SIGTERM or Ctrl-C (see [`run`]).
pub async fn serve(site: Site) -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::from_env()?;
    let redactor = Arc::new(super::redact::Redactor::new(
        config.secrets().iter().map(String::as_str),
    ));
    super::telemetry::init_tracing(config.log_json, redactor);
    let leptos_conf = get_configuration(None)?;
    let addr: SocketAddr = leptos_conf.leptos_options.site_addr;
    let state = prepare(config).await?;
    let listener = serve::listen(addr)
        .map_err(|e| format!("cannot listen on {addr} (LEPTOS_SITE_ADDR): {e}"))?;
    run(
        state,
        leptos_conf.leptos_options,
        site,
        listener,
        shutdown_signal,
    )
    .await
}

/// Serves on `listener` until `signal` resolves. Then it stops accepting connections and running
/// turns get the grace period to finish; those still running after it end with an `error` event,
/// so the browser shows why the answer stopped, and this returns at most [`LAST_WORDS`] later
/// even if a connection lingers. A second signal ends the grace period at once.
pub async fn run<F>(
    state: Arc<AppState>,
    options: LeptosOptions,
    site: Site,
    listener: tokio::net::TcpListener,
    signal: impl Fn() -> F,
) -> Result<(), Box<dyn std::error::Error>>
where
    F: std::future::Future<Output = ()>,
{
    let open_files = serve::raise_open_files_limit();
    let limits = ConnectionLimits {
        header_timeout: state.config.limits.header_timeout,
        max_connections: match state.config.limits.max_connections {
            0 => serve::connections_for(open_files),
            n => n,
        },
    };
    let threads = state.config.threads as usize;
    let grace = state.config.shutdown_grace;
    let local_addr = listener.local_addr()?;
    let mut shards = Shards::start(threads, limits, state.turns.running_changes(), |_| {
        Ok(router(
            Arc::new(state.with_own_client()?),
            options.clone(),
            site,
        ))
    })?;
    tracing::info!(
        base_path = %state.config.base_path,
        threads,
        open_files,
        max_connections = limits.max_connections,
        "Ponder listening on http://{local_addr}"
    );
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    let trim = tokio::spawn(release_memory_when_idle(state.clone()));
    let purge = tokio::spawn(purge_when_due(state.clone()));

    shards.accept(listener, signal()).await;
    tracing::info!(
        grace_s = grace.as_secs_f64(),
        running_turns = state.metrics.active_streams(),
        "shutting down: no new connections; running turns may finish"
    );
    let finished = shards.finish();
    tokio::pin!(finished);
    let out_of_time = async {
        tokio::select! {
            _ = tokio::time::sleep(grace) => {}
            _ = signal() => {}
        }
        tracing::info!(
            running_turns = state.metrics.active_streams(),
            "grace period over: ending the running turns with an error event"
        );
        state.shutdown.end_grace();
        // The error events are out; a client that stopped reading cannot hold us.
        tokio::time::sleep(LAST_WORDS).await;
    };
    tokio::select! {
        _ = &mut finished => tracing::info!("stopped"),
        _ = out_of_time => tracing::warn!("connections still open after the grace period; stopping anyway"),
    }
    if let Some(relay) = &state.relay {
        relay.leave().await;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    trim.abort();
    purge.abort();
    Ok(())
}

/// Removes for good what was deleted longer than `PONDER_DELETE_GRACE` ago (conversations with
/// their messages, versions, thinking and search entries) and sessions long over. Runs every
/// quarter of the grace, at least once a second and at most once a minute; with several
/// replicas each runs it, which is harmless.
async fn purge_when_due(state: Arc<AppState>) {
    let grace = state.config.delete_grace;
    let every = (grace / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let before = super::store::now_ms() - grace.as_millis() as i64;
        match state.store.purge_deleted(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                conversations = n,
                "purged deleted conversations past their grace"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "the purge of deleted conversations failed; it runs again")
            }
        }
        if let Err(e) = state.store.sweep_sessions().await {
            tracing::warn!(error = %e, "removing ended sessions failed");
        }
    }
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
