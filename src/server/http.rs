//! The HTTP application: Leptos pages and server functions, health, readiness and metrics,
//! under an optional base path; and the serve loop with graceful shutdown.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};

use super::config::Config;
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

/// The whole application, as `main` serves it and the tests call it.
pub fn router(state: Arc<AppState>, leptos_options: LeptosOptions) -> Router {
    let routes = generate_route_list(App);
    let context_state = state.clone();
    let page = PageSettings {
        base_path: state.config.base_path.clone(),
        guard_secs: state.config.pre_token_guard.as_secs().max(1),
    };
    let shell_page = page.clone();
    let pages = Router::new()
        .leptos_routes_with_context(
            &leptos_options,
            routes,
            move || provide_context(context_state.clone()),
            {
                let options = leptos_options.clone();
                let page = page.clone();
                move || shell(options.clone(), page.clone())
            },
        )
        .fallback(leptos_axum::file_and_error_handler(move |options| {
            shell(options, shell_page.clone())
        }))
        .with_state(leptos_options);
    let ops = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(ReadyState {
            app: state.clone(),
            cache: Arc::new(Mutex::new(None)),
        });
    let app = ops.merge(pages);
    let base = state.config.base_path.clone();
    if base.is_empty() {
        app
    } else {
        Router::new().nest(&base, app)
    }
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
/// SIGTERM or Ctrl-C; running turns then get the grace period to finish.
pub async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::from_env()?;
    super::telemetry::init_tracing(config.log_json);
    let leptos_conf = get_configuration(None)?;
    let addr: SocketAddr = leptos_conf.leptos_options.site_addr;

    let grace = config.shutdown_grace;
    let state = prepare(config).await?;
    let app = router(state.clone(), leptos_conf.leptos_options);

    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!("Ponder listening on http://{}", listener.local_addr()?);
    let shutdown_state = state.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            tracing::info!(
                grace_s = grace.as_secs_f64(),
                "shutting down: letting running turns finish"
            );
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                shutdown_state.shutdown.end_grace();
                tokio::time::sleep(Duration::from_secs(5)).await;
                tracing::warn!("connections still open after the grace period; exiting");
                std::process::exit(0);
            });
        })
        .await?;
    tracing::info!("stopped");
    Ok(())
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
