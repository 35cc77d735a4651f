//! What operators and orchestrators ask of a running server: liveness (`/healthz`), readiness
//! (`/readyz`, the database and the upstream), Prometheus metrics (`/metrics`) and the
//! `ponder healthcheck` command a container image without curl runs.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::routes::Route;
use crate::server::state::AppState;

pub(super) fn ops_router(state: &Arc<AppState>) -> Router {
    Router::new()
        .route(&Route::Health.path(), get(healthz))
        .route(&Route::Ready.path(), get(readyz))
        .route(&Route::Metrics.path(), get(metrics))
        .with_state(ReadyState {
            app: state.clone(),
            cache: Arc::new(Mutex::new(None)),
        })
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
    if ready.app.relay.as_ref().is_some_and(|r| r.fenced()) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: this replica cannot reach the database\n",
        )
            .into_response();
    }
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
