//! A server's life: the shared state built at start (the demo model started when no upstream is
//! set), serving until a signal, the grace period for running turns, and the background jobs
//! (the purge of deleted chats, giving freed memory back).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use leptos::prelude::*;

use super::socket::{self, ConnectionLimits, Shards};
use super::{router, Site};
use crate::server::config::Config;
use crate::server::state::AppState;

/// Builds the shared state, first starting the demo model when no upstream is configured.
pub async fn prepare(config: Config) -> Result<Arc<AppState>, Box<dyn std::error::Error>> {
    let upstream_base = match &config.upstream_url {
        Some(url) => url.clone(),
        None => {
            let demo = crate::server::demo_upstream::spawn(&config.demo).await?;
            tracing::info!(addr = %demo, "no PONDER_UPSTREAM_URL: serving the built-in demo model");
            crate::server::demo_upstream::base_url(config.provider, demo)
        }
    };
    tracing::info!(provider = config.provider.name(), model = %config.model, "upstream configured");
    let store = crate::server::store::Store::open(&config.database_url).await?;
    tracing::info!(
        database = ?store.backend(),
        auth = config.auth.name(),
        history = ?config.history,
        "history store ready"
    );
    if config.auth == crate::server::config::AuthMode::None && !config.listen.ip().is_loopback() {
        tracing::warn!(
            listen = %config.listen,
            "PONDER_AUTH=none while listening beyond this machine: anyone who reaches Ponder uses it as the one local user"
        );
    }
    let mut state = AppState::new(config, upstream_base, store)?;
    match state.store.backend() {
        crate::server::store::Backend::Postgres => {
            let liveness = crate::server::turn::relay::Liveness {
                heartbeat: state.config.heartbeat,
                timeout: state.config.replica_timeout,
            };
            let relay = crate::server::turn::relay::Relay::start(
                &state.config.database_url,
                state.turns.clone(),
                liveness,
            )
            .await?;
            state.turns.share_through(state.store.clone());
            state.relay = Some(relay);
        }
        crate::server::store::Backend::Sqlite => {
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
    let redactor = Arc::new(crate::server::redact::Redactor::new(
        config.secrets().iter().map(String::as_str),
    ));
    crate::server::telemetry::init_tracing(config.log_json, redactor);
    let leptos_conf = get_configuration(None)?;
    let addr: SocketAddr = leptos_conf.leptos_options.site_addr;
    let state = prepare(config).await?;
    let listener = socket::listen(addr)
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
    let open_files = socket::raise_open_files_limit();
    let limits = ConnectionLimits {
        header_timeout: state.config.limits.header_timeout,
        max_connections: match state.config.limits.max_connections {
            0 => socket::connections_for(open_files),
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
        let before = crate::server::store::now_ms() - grace.as_millis() as i64;
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
