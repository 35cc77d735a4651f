//! What every request shares: configuration, the HTTP client, metrics and the shutdown signal.

use std::sync::Arc;

use tokio::sync::watch;

use super::config::Config;
use super::redact::Redactor;
use super::store::identity::{Identity, LOCAL_USER};
use super::store::{Store, StoreError};
use super::telemetry::Metrics;

/// Idle upstream connections each serving thread keeps for reuse. Without a cap, a burst of 2,000 streams left 2,000
/// idle connections open to the model server (and their buffers in Ponder) for the idle timeout.
const MAX_IDLE_UPSTREAM_CONNECTIONS: usize = 32;

/// Shared application state, provided to server functions through Leptos context.
pub struct AppState {
    pub config: Arc<Config>,
    /// Base URL turns are sent to: the configured upstream or the built-in demo model.
    pub upstream_base: String,
    pub http: reqwest::Client,
    pub metrics: Arc<Metrics>,
    pub shutdown: Arc<Shutdown>,
    /// Masks the API key and the upstream URL's password in everything that leaves the server.
    pub redactor: Arc<Redactor>,
    /// Accounts and history.
    pub store: Store,
    /// The one user of `PONDER_AUTH=none`, looked up once.
    local: Arc<tokio::sync::OnceCell<Arc<Identity>>>,
    /// Sign-in attempts, per client and per name.
    pub sign_in: Arc<super::rate_limit::SignInLimits>,
    /// The models on offer, refreshed in the background.
    pub models: Arc<super::models::Catalogue>,
    /// The running turns, for "Answer now", Stop and viewers from other requests.
    pub turns: Arc<super::turn::control::TurnControls>,
    /// With several replicas on PostgreSQL: how turns are shared with the others.
    pub relay: Option<Arc<super::turn::relay::Relay>>,
    /// The streaming states of the running stored turns, written together once a second.
    pub streaming: Arc<super::turn::batch::StreamingBatch>,
    /// The final states of the stored turns that end together, written in one transaction.
    pub finals: Arc<super::turn::batch::FinalBatch>,
    /// The turns' usage lines waiting to be written together.
    pub usage: Arc<super::turn::batch::UsageBatch>,
    /// Wakes the pages waiting for a title by the model.
    pub titles: Arc<super::titles::TitleBoard>,
    /// Each reader's own instructions as last read, for turns the server does not store.
    pub personal: Arc<super::instructions::PersonalLevels>,
    /// The identity provider, with `PONDER_AUTH=oidc`.
    pub sso: Option<Arc<super::oidc::Sso>>,
}

impl AppState {
    /// Builds the state. `upstream_base` is the configured upstream or the demo's address.
    pub fn new(
        config: Config,
        upstream_base: String,
        store: Store,
    ) -> Result<Self, reqwest::Error> {
        let secrets = config.secrets();
        Ok(AppState {
            store,
            local: Arc::default(),
            sign_in: Arc::default(),
            models: Arc::default(),
            turns: Arc::default(),
            relay: None,
            streaming: Arc::default(),
            finals: Arc::default(),
            usage: Arc::default(),
            titles: Arc::default(),
            personal: Arc::default(),
            sso: match config.auth.oidc() {
                Some(o) => Some(Arc::new(super::oidc::Sso::new(o)?)),
                None => None,
            },
            http: upstream_client(&config)?,
            redactor: Arc::new(Redactor::new(secrets.iter().map(String::as_str))),
            config: Arc::new(config),
            upstream_base,
            metrics: Arc::new(Metrics::new()),
            shutdown: Arc::new(Shutdown::new()),
        })
    }

    /// The same configuration, metrics and shutdown signal with an HTTP client of its own, for
    /// a serving thread: a pooled upstream connection then lives on the thread whose turns read
    /// it, instead of waking another thread for every chunk.
    pub fn with_own_client(&self) -> Result<Self, reqwest::Error> {
        Ok(AppState {
            config: self.config.clone(),
            upstream_base: self.upstream_base.clone(),
            http: upstream_client(&self.config)?,
            metrics: self.metrics.clone(),
            shutdown: self.shutdown.clone(),
            redactor: self.redactor.clone(),
            store: self.store.clone(),
            local: self.local.clone(),
            sign_in: self.sign_in.clone(),
            models: self.models.clone(),
            turns: self.turns.clone(),
            relay: self.relay.clone(),
            streaming: self.streaming.clone(),
            finals: self.finals.clone(),
            usage: self.usage.clone(),
            titles: self.titles.clone(),
            personal: self.personal.clone(),
            sso: self.sso.clone(),
        })
    }

    /// The local user of `PONDER_AUTH=none`, created on first use.
    pub async fn local_identity(&self) -> Result<Arc<Identity>, StoreError> {
        self.local
            .get_or_try_init(|| async {
                self.store
                    .identity_for_name(LOCAL_USER, true)
                    .await
                    .map(Arc::new)
            })
            .await
            .cloned()
    }

    /// The text with every secret masked, for texts that leave the server outside a turn.
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }
}

/// The client for the upstream. It follows no redirect: a redirect to another origin would
/// carry the key header and the conversation there.
fn upstream_client(config: &Config) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(config.connect_timeout)
        .tcp_nodelay(true)
        .pool_idle_timeout(std::time::Duration::from_secs(30))
        .pool_max_idle_per_host(MAX_IDLE_UPSTREAM_CONNECTIONS)
        .build()
}

/// The end of the shutdown grace period, as a signal running turns can wait for.
pub struct Shutdown {
    grace_over: watch::Sender<bool>,
}

impl Shutdown {
    fn new() -> Self {
        Shutdown {
            grace_over: watch::channel(false).0,
        }
    }

    /// Tells running turns that their time is up.
    pub fn end_grace(&self) {
        self.grace_over.send_replace(true);
    }

    /// Resolves once the grace period is over; never before.
    pub async fn grace_over(&self) {
        let mut rx = self.grace_over.subscribe();
        let _ = rx.wait_for(|over| *over).await;
    }
}
