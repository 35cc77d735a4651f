//! The built-in demo model: a real streaming HTTP server, deterministic and paced like a model
//! producing tokens. `make run` uses it when no upstream is configured, and every test talks to
//! it over real HTTP.
//!
//! A tag in the last user message picks a scenario (see [`Scenario`] and the book's
//! `docs/src/user/demo-model.md`). Each
//! scenario is a [`Script`], rendered in the wire format of every provider Ponder speaks:
//! OpenAI Chat Completions (`POST /v1/chat/completions`), Anthropic Messages (`/v1/messages`),
//! OpenAI Responses (`/v1/responses`), Gemini (`/v1beta/models/{model}:streamGenerateContent`,
//! SSE with `alt=sse`, a JSON array without) and Ollama (`/api/chat`, NDJSON). Like the real
//! servers, each endpoint refuses a request missing what it requires with a 400, and reasoning
//! state sent back to another model than made it (see [`replay`]). A message with files gets an
//! answer that says what arrived ([`received`]).

//!
//! The parts: [`scenarios`] (what each tag plays), [`framing`] (a script in each wire format),
//! [`pacer`] (writing it on schedule) and the handlers (the endpoints).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;

use super::config::{DemoConfig, ProviderKind};

mod frame_kit;
pub mod framing;
mod handlers;
mod interactions;
pub mod pacer;
#[cfg(feature = "bench-corpus")]
mod perf;
pub mod reasoning;
mod received;
pub mod replay;
mod sampling;
pub mod scenarios;

pub use framing::{render, render_openai};
pub use pacer::{stream_response, DemoStats, Emit};
pub use scenarios::{script, tokens, Scenario, Script, Step, ANSWER, THINKING};

#[derive(Clone)]
struct DemoState {
    delay: Duration,
    stats: Arc<DemoStats>,
    /// Messages `[error-once]` already failed.
    failed_once: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// Responses so far: each seals its reasoning state with its own number.
    responses: Arc<std::sync::atomic::AtomicU64>,
}

/// The demo server's routes.
pub fn router(config: &DemoConfig) -> (Router, Arc<DemoStats>) {
    let stats = Arc::new(DemoStats::default());
    let state = DemoState {
        delay: config.token_delay,
        stats: stats.clone(),
        failed_once: Arc::default(),
        responses: Arc::default(),
    };
    let router = Router::new()
        .route("/v1/chat/completions", post(handlers::chat_completions))
        .route("/v1/messages", post(handlers::messages))
        .route("/v1/responses", post(handlers::responses))
        .route("/v1beta/models/{model_action}", post(handlers::gemini))
        .route("/v1beta/interactions", post(handlers::interactions))
        .route("/api/chat", post(handlers::ollama_chat))
        .route("/v1/models", get(handlers::models))
        .route("/v1beta/models", get(handlers::gemini_models))
        .route("/api/tags", get(handlers::ollama_tags))
        .route("/api/show", post(handlers::ollama_show))
        .route("/demo/stats", get(handlers::stats_handler))
        .route("/", get(|| async { "ponder demo model\n" }))
        .with_state(state);
    (router, stats)
}

/// Starts the demo server on `config.addr` and returns its address.
pub async fn spawn(config: &DemoConfig) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(&config.addr).await?;
    let addr = listener.local_addr()?;
    let (router, _) = router(config);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::error!(error = %e, "the demo model stopped");
        }
    });
    Ok(addr)
}

/// The base URL a provider adapter should use to reach the demo at `addr`: what an operator
/// would set as `PONDER_UPSTREAM_URL` for the real service.
pub fn base_url(provider: ProviderKind, addr: SocketAddr) -> String {
    match provider {
        ProviderKind::OpenAi | ProviderKind::Anthropic | ProviderKind::Responses => {
            format!("http://{addr}/v1")
        }
        ProviderKind::Gemini | ProviderKind::Interactions => format!("http://{addr}/v1beta"),
        ProviderKind::Ollama => format!("http://{addr}"),
    }
}
