//! Configuration, read once at start from the environment. Handlers never read it again.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use crate::domain::Controls;

mod files;
mod instructions;
pub mod oidc;
mod sharing;
pub mod usage;
pub use files::ModelFiles;
use files::{attachment_limits, model_files, pdf_renderer};
pub use instructions::ModelInstructions;
use sharing::sharing;

/// The wire format Ponder speaks to its upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`/v1/chat/completions`): Ollama's /v1, vLLM,
    /// llama.cpp, LiteLLM, DeepSeek, OpenRouter, Groq, …
    OpenAi,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// Gemini `streamGenerateContent`.
    Gemini,
    /// Google's Interactions API (`/v1beta/interactions`).
    Interactions,
    /// Ollama's native `/api/chat`.
    Ollama,
}

impl ProviderKind {
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Responses => "responses",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Interactions => "gemini-interactions",
            ProviderKind::Ollama => "ollama",
        }
    }

    fn parse(value: &str) -> Option<Self> {
        [
            Self::OpenAi,
            Self::Anthropic,
            Self::Responses,
            Self::Gemini,
            Self::Interactions,
            Self::Ollama,
        ]
        .into_iter()
        .find(|kind| kind.name() == value)
    }
}

/// One entry of `PONDER_MODELS`: `id` or `id=Display name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfferedModel {
    pub id: String,
    pub name: Option<String>,
}

/// How "Answer now" gets the answer once the reasoning is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerNowMode {
    /// Prefill for the self-hosted formats (Chat Completions, Ollama), ask again for the rest.
    Auto,
    /// Continue the assistant message with the reasoning so far and a closed `</think>`.
    Prefill,
    /// Ask again with thinking off, the reasoning so far given as context.
    AskAgain,
}

/// What happens to a stored turn nobody watches any more (`PONDER_ORPHAN_TURNS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanTurns {
    /// It runs to its end and is saved: a reader may come back to it, on any device.
    Finish,
    /// It is stopped once nobody has watched it for `PONDER_ORPHAN_GRACE`.
    Stop,
}

/// The shortest `PONDER_ORPHAN_GRACE`: replicas note the turns their viewers watch once a
/// second, so a shorter grace could stop a turn someone watches from another replica.
const ORPHAN_GRACE_MIN: Duration = Duration::from_secs(2);

/// Where and how the built-in demo model runs when no upstream is configured.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoConfig {
    /// Address of the demo upstream's HTTP server; port 0 picks a free one.
    pub addr: String,
    /// Pause between two streamed pieces, like a model producing tokens.
    pub token_delay: Duration,
}

/// Ponder's whole configuration. See the book's configuration chapter
/// (`docs/src/operator/configuration.md`) for every variable.
#[derive(Clone, PartialEq)]
pub struct Config {
    pub provider: ProviderKind,
    /// Base URL of the upstream API: ends in `/v1` for OpenAI-compatible servers, Anthropic and
    /// Responses, in `/v1beta` for Gemini, and is the server root for Ollama's native API.
    /// `None` runs the built-in demo model.
    pub upstream_url: Option<String>,
    pub api_key: Option<String>,
    pub model: String,
    /// `PONDER_MODELS`: the models offered, with optional display names (empty: what the
    /// upstream lists).
    pub models: Vec<OfferedModel>,
    /// `PONDER_MODEL_CONTROLS`: the reasoning controls of named models, above anything guessed.
    pub model_controls: Vec<(String, Controls)>,
    /// The sampling parameters of named models, from the same variable's words
    /// (`temperature`, `top_p`, `max_tokens`, `no_sampling`), above their list and family.
    pub model_params: Vec<(String, crate::domain::sampling::Tunables)>,
    /// How often the upstream's model list is fetched again.
    pub models_refresh: Duration,
    /// How "Answer now" asks for the answer.
    pub answer_now: AnswerNowMode,
    pub max_output_tokens: u32,
    /// `false` sends no thinking events to the browser (they are still counted).
    pub stream_thinking: bool,
    /// The model's chat template opens `<think>` itself: treat the reply as reasoning until
    /// `</think>`.
    pub think_start: bool,
    /// Extended-thinking budget requested from Anthropic (kept below the output limit).
    pub thinking_budget: u32,
    pub connect_timeout: Duration,
    pub first_byte_timeout: Duration,
    pub idle_timeout: Duration,
    pub keep_alive: Duration,
    pub shutdown_grace: Duration,
    /// How long the page waits for a first frame before showing an error with Retry.
    pub pre_token_guard: Duration,
    pub base_path: String,
    pub log_json: bool,
    /// Serving threads, each with its own connections: one per core unless set.
    pub threads: u32,
    pub demo: DemoConfig,
    /// Where Ponder listens (`LEPTOS_SITE_ADDR`); loopback decides some safe defaults.
    pub listen: SocketAddr,
    pub limits: Limits,
    /// How large attached files may be (`PONDER_MAX_ATTACHMENT_BYTES` and its friends).
    pub attachments: crate::domain::attachment::Limits,
    /// What named models read besides text, set by the operator (`PONDER_MODEL_FILES`): this
    /// wins over what a model's family name suggests.
    pub model_files: Vec<ModelFiles>,
    /// What each model is always told first, set by the administrator
    /// (`PONDER_MODEL_INSTRUCTIONS`): no reader can remove it.
    pub model_instructions: ModelInstructions,
    /// What each model's tokens cost (`PONDER_PRICES`); none: usage is counted in tokens only.
    pub prices: usage::Prices,
    /// The limits readers are held to (`PONDER_QUOTA`, `PONDER_QUOTA_ADMINS`).
    pub quota: usage::QuotaConfig,
    /// Titles by the model after a new conversation's first answer (`PONDER_TITLES`: `model`,
    /// the default, or `off`).
    pub titles: bool,
    /// The model that writes titles (`PONDER_TITLE_MODEL`); none: the conversation's own.
    pub title_model: Option<String>,
    /// The program that reads PDFs and large images in a child process of its own: this
    /// binary (`ponder extract-pdf`, `ponder shrink-image`); `PONDER_FILE_READER` names
    /// another (a test harness names the built `ponder`).
    pub file_reader: std::path::PathBuf,
    /// The program that draws a PDF's pages as images (Poppler's `pdftoppm`, found on `PATH`
    /// unless `PONDER_PDF_RENDERER` names it; `off` turns it off). Without it no PDF goes as
    /// page images.
    pub pdf_renderer: Option<std::path::PathBuf>,
    /// Origins besides the server's own that may send requests that change something.
    pub allowed_origins: Vec<String>,
    /// Host names people reach Ponder by (`PONDER_PUBLIC_URL`): with `PONDER_AUTH=none` the
    /// only names besides `localhost` and IP addresses it answers to.
    pub public_hosts: Vec<String>,
    /// Peers whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed.
    pub trusted_proxies: Vec<Cidr>,
    /// Turns a client may start per minute, and how many at once; `None`: no limit.
    pub rate_limit: Option<RateLimit>,
    /// Where accounts and history live (`sqlite://…` or `postgres://…`).
    pub database_url: String,
    pub auth: AuthMode,
    /// Where chats are kept: on the server (default) or only in each browser.
    pub history: HistoryMode,
    /// Who may open shared links (`PONDER_SHARING`).
    pub sharing: crate::domain::share::Sharing,
    /// How long a deleted conversation can be restored before it is purged.
    pub delete_grace: Duration,
    /// What becomes of a stored turn nobody watches, and after how long unwatched it stops.
    pub orphan_turns: OrphanTurns,
    pub orphan_grace: Duration,
    /// With several replicas: how often each beats its heartbeat, and how long after the last
    /// beat the others end its turns.
    pub heartbeat: Duration,
    pub replica_timeout: Duration,
    /// How long a sign-in lasts.
    pub session_lifetime: Duration,
    /// Whether the opaque reasoning state an answer came with is kept and sent back on the
    /// next turn to the same provider and model (`PONDER_REPLAY_REASONING`), and how many
    /// bytes of it one conversation keeps at most (`PONDER_REPLAY_MAX_BYTES`; the oldest go
    /// first).
    pub replay: Replay,
}

/// The reasoning-state replay settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replay {
    pub enabled: bool,
    pub max_conversation_bytes: usize,
}

/// How Ponder knows who is asking (`PONDER_AUTH`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthMode {
    /// One local user, no sign-in.
    None,
    /// Built-in accounts with passwords and sessions.
    Password,
    /// A trusted proxy names the user in this header (only from `PONDER_TRUSTED_PROXIES`).
    Header(String),
    /// An OpenID Connect provider signs people in (and passwords too, when kept).
    Oidc(Box<oidc::Oidc>),
}

impl AuthMode {
    pub fn name(&self) -> &'static str {
        match self {
            AuthMode::None => "none",
            AuthMode::Password => "password",
            AuthMode::Header(_) => "header",
            AuthMode::Oidc(_) => "oidc",
        }
    }
}

/// Where chats are kept (`PONDER_HISTORY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryMode {
    /// On the server, for every device; each browser keeps a copy of what it has open.
    Server,
    /// Only in each browser's localStorage, as before server history existed.
    Browser,
}

/// Bounds on what a client or an upstream can make the server hold or do.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Longest line (SSE field, NDJSON line, JSON object) read from an upstream.
    pub max_line_bytes: usize,
    /// Characters of reasoning and answer together that one turn may stream.
    pub max_turn_chars: u64,
    /// Largest request body accepted.
    pub max_request_bytes: usize,
    /// Time a client has to send a request's headers, counted from when its connection
    /// opened or its last response ended (so also the idle keep-alive timeout).
    pub header_timeout: Duration,
    /// Time a client has to send a request's whole body.
    pub body_timeout: Duration,
    /// Client connections served at once; `0`: derived from the open-files limit at start.
    pub max_connections: usize,
}

/// A token bucket per client: `per_minute` turns a minute on average, `burst` at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    pub per_minute: u32,
    pub burst: u32,
}

/// An address block such as `10.0.0.0/8` or `::1/128`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `addr/prefix`, or a bare address (a block of one).
    pub fn parse(text: &str) -> Option<Cidr> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u8>().ok()?)),
            None => (text, None),
        };
        let net: IpAddr = addr.trim().parse().ok()?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        (prefix <= max).then_some(Cidr { net, prefix })
    }

    /// Whether `ip` is in the block (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.net, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("provider", &self.provider)
            .field(
                "upstream_url",
                &self.upstream_url.as_deref().map(without_userinfo),
            )
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("stream_thinking", &self.stream_thinking)
            .field("think_start", &self.think_start)
            .field("first_byte_timeout", &self.first_byte_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("base_path", &self.base_path)
            .field("listen", &self.listen)
            .field("limits", &self.limits)
            .field("rate_limit", &self.rate_limit)
            .field("database_url", &without_userinfo(&self.database_url))
            .field("auth", &self.auth)
            .field("history", &self.history)
            .finish_non_exhaustive()
    }
}

/// A variable that does not hold what it should. The message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads configuration through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };

        let provider = match get("PONDER_PROVIDER") {
            None => ProviderKind::OpenAi,
            Some(v) => ProviderKind::parse(&v.to_ascii_lowercase()).ok_or_else(|| {
                ConfigError(format!(
                    "PONDER_PROVIDER={v:?} is not a provider: use openai, anthropic, responses, gemini, gemini-interactions or ollama"
                ))
            })?,
        };
        let upstream_url = match get("PONDER_UPSTREAM_URL") {
            None => None,
            Some(url) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(ConfigError(format!(
                        "PONDER_UPSTREAM_URL={url:?} must be an http:// or https:// URL (for OpenAI-compatible servers, ending in /v1)"
                    )));
                }
                Some(url.trim_end_matches('/').to_string())
            }
        };
        let model = get("PONDER_MODEL").unwrap_or_else(|| {
            if upstream_url.is_none() {
                "ponder-demo".into()
            } else {
                default_model(provider).into()
            }
        });
        let models = get("PONDER_MODELS")
            .map(|v| parse_models(&v))
            .unwrap_or_default();
        let (model_controls, model_params) = match get("PONDER_MODEL_CONTROLS") {
            None => (Vec::new(), Vec::new()),
            Some(v) => parse_model_controls(&v)?,
        };
        let answer_now = match get("PONDER_ANSWER_NOW")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("auto") => AnswerNowMode::Auto,
            Some("prefill") => AnswerNowMode::Prefill,
            Some("ask") => AnswerNowMode::AskAgain,
            Some(other) => {
                return Err(ConfigError(format!(
                    "PONDER_ANSWER_NOW={other:?} must be auto, prefill or ask"
                )))
            }
        };
        let base_path = match get("PONDER_BASE_PATH") {
            None => String::new(),
            Some(p) => {
                let trimmed = p.trim_matches('/');
                if trimmed.is_empty() {
                    String::new()
                } else if trimmed
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
                    && !trimmed.contains("..")
                {
                    format!("/{trimmed}")
                } else {
                    return Err(ConfigError(format!(
                        "PONDER_BASE_PATH={p:?} must be a URL path like /ponder (letters, digits, - _ . /)"
                    )));
                }
            }
        };
        let listen = match get("LEPTOS_SITE_ADDR") {
            None => SocketAddr::from(([127, 0, 0, 1], 3000)),
            Some(v) => v.parse().map_err(|_| {
                ConfigError(format!(
                    "LEPTOS_SITE_ADDR={v:?} must be an address and port like 127.0.0.1:3000 or 0.0.0.0:3000"
                ))
            })?,
        };
        let max_output_tokens = parse_num(&get, "PONDER_MAX_OUTPUT_TOKENS", 32_768, 1, 10_000_000)?;
        let limits = Limits {
            max_line_bytes: parse_num(&get, "PONDER_MAX_LINE_BYTES", 1 << 20, 1024, 1 << 30)?
                as usize,
            max_turn_chars: match get("PONDER_MAX_TURN_CHARS") {
                None => (u64::from(max_output_tokens) * CHARS_PER_TOKEN).max(65_536),
                Some(_) => parse_num(&get, "PONDER_MAX_TURN_CHARS", 0, 1, u32::MAX)?.into(),
            },
            max_request_bytes: parse_num(&get, "PONDER_MAX_REQUEST_BYTES", 2 << 20, 1024, 1 << 30)?
                as usize,
            header_timeout: parse_secs(&get, "PONDER_HEADER_TIMEOUT", 15.0)?,
            body_timeout: parse_secs(&get, "PONDER_BODY_TIMEOUT", 30.0)?,
            max_connections: parse_num(&get, "PONDER_MAX_CONNECTIONS", 0, 0, 10_000_000)? as usize,
        };
        let allowed_origins = match get("PONDER_ALLOWED_ORIGINS") {
            None => Vec::new(),
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(|o| {
                    let origin = o.trim_end_matches('/').to_ascii_lowercase();
                    let valid = (origin.starts_with("http://") || origin.starts_with("https://"))
                        && !origin.split("://").nth(1).unwrap_or("").contains('/');
                    valid.then_some(origin).ok_or_else(|| {
                        ConfigError(format!(
                            "PONDER_ALLOWED_ORIGINS: {o:?} must be an origin like https://chat.example.com (scheme, host, optional port)"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let public_hosts = match get("PONDER_PUBLIC_URL") {
            None => Vec::new(),
            Some(list) => super::http::host_check::public_hosts(&list).map_err(ConfigError)?,
        };
        let trusted_proxies = match get("PONDER_TRUSTED_PROXIES") {
            None => Vec::new(),
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| {
                    Cidr::parse(c).ok_or_else(|| {
                        ConfigError(format!(
                            "PONDER_TRUSTED_PROXIES: {c:?} must be an address or a block like 10.0.0.0/8"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let default_rate = if listen.ip().is_loopback() { 0 } else { 30 };
        let per_minute = parse_num(&get, "PONDER_RATE_LIMIT", default_rate, 0, 1_000_000)?;
        let rate_limit = (per_minute > 0)
            .then(|| -> Result<RateLimit, ConfigError> {
                Ok(RateLimit {
                    per_minute,
                    burst: parse_num(&get, "PONDER_RATE_BURST", 10, 1, 1_000_000)?,
                })
            })
            .transpose()?;
        let database_url =
            get("PONDER_DATABASE_URL").unwrap_or_else(|| "sqlite://data/ponder.db".into());
        if !(database_url.starts_with("sqlite:")
            || database_url.starts_with("postgres://")
            || database_url.starts_with("postgresql://"))
        {
            return Err(ConfigError(format!(
                "PONDER_DATABASE_URL={:?} must be sqlite://path or postgres://user@host/db",
                without_userinfo(&database_url)
            )));
        }
        let auth = match get("PONDER_AUTH").map(|v| v.to_ascii_lowercase()).as_deref() {
            None if listen.ip().is_loopback() => AuthMode::None,
            None => {
                return Err(ConfigError(format!(
                    "PONDER_AUTH is not set and Ponder listens on {listen}, beyond this machine: set PONDER_AUTH=password (accounts), oidc (an OpenID Connect provider), header (a trusted proxy signs users in) or, knowingly, none"
                )))
            }
            Some("none") => AuthMode::None,
            Some("password") => AuthMode::Password,
            Some("header") => {
                let header = get("PONDER_AUTH_HEADER").unwrap_or_else(|| "Remote-User".into());
                if axum::http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                    return Err(ConfigError(format!(
                        "PONDER_AUTH_HEADER={header:?} is not a header name"
                    )));
                }
                AuthMode::Header(header.to_ascii_lowercase())
            }
            Some("oidc") => AuthMode::Oidc(Box::new(oidc::from_env(&get, &base_path)?)),
            Some(other) => {
                return Err(ConfigError(format!(
                    "PONDER_AUTH={other:?} must be none, password, header or oidc"
                )))
            }
        };
        if matches!(auth, AuthMode::Header(_)) && trusted_proxies.is_empty() {
            return Err(ConfigError(
                "PONDER_AUTH=header needs PONDER_TRUSTED_PROXIES: the header is believed only from those peers".into(),
            ));
        }
        let history = match get("PONDER_HISTORY")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("server") => HistoryMode::Server,
            Some("browser") => HistoryMode::Browser,
            Some(other) => {
                return Err(ConfigError(format!(
                    "PONDER_HISTORY={other:?} must be server or browser"
                )))
            }
        };
        let sharing = sharing(get("PONDER_SHARING").as_deref(), &auth, history)?;
        let log_json = match get("PONDER_LOG_FORMAT").as_deref() {
            None | Some("text") => false,
            Some("json") => true,
            Some(other) => {
                return Err(ConfigError(format!(
                    "PONDER_LOG_FORMAT={other:?} must be text or json"
                )))
            }
        };

        let orphan_turns = match get("PONDER_ORPHAN_TURNS")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("finish") => OrphanTurns::Finish,
            Some("stop") => OrphanTurns::Stop,
            Some(other) => {
                return Err(ConfigError(format!(
                    "PONDER_ORPHAN_TURNS={other:?} must be finish or stop"
                )))
            }
        };
        let heartbeat = parse_secs(&get, "PONDER_HEARTBEAT", 5.0)?;
        let replica_timeout = parse_secs(&get, "PONDER_REPLICA_TIMEOUT", 15.0)?;
        if replica_timeout <= heartbeat {
            return Err(ConfigError(format!(
                "PONDER_REPLICA_TIMEOUT ({} s) must be longer than PONDER_HEARTBEAT ({} s)",
                replica_timeout.as_secs_f64(),
                heartbeat.as_secs_f64()
            )));
        }

        let orphan_grace = parse_secs(&get, "PONDER_ORPHAN_GRACE", 30.0)?;
        if orphan_grace < ORPHAN_GRACE_MIN {
            // A viewer on another replica is noted as watching once a second.
            return Err(ConfigError(format!(
                "PONDER_ORPHAN_GRACE ({} s) must be at least {} s",
                orphan_grace.as_secs_f64(),
                ORPHAN_GRACE_MIN.as_secs()
            )));
        }

        Ok(Config {
            orphan_turns,
            orphan_grace,
            heartbeat,
            replica_timeout,
            provider,
            upstream_url,
            api_key: get("PONDER_API_KEY"),
            model,
            models,
            model_controls,
            model_params,
            models_refresh: parse_secs(&get, "PONDER_MODELS_REFRESH", 600.0)?,
            answer_now,
            max_output_tokens,
            stream_thinking: parse_bool(&get, "PONDER_STREAM_THINKING", true)?,
            think_start: parse_bool(&get, "PONDER_THINK_START", false)?,
            thinking_budget: parse_num(&get, "PONDER_THINKING_BUDGET", 8_192, 1_024, 10_000_000)?,
            connect_timeout: parse_secs(&get, "PONDER_CONNECT_TIMEOUT", 10.0)?,
            first_byte_timeout: parse_secs(&get, "PONDER_FIRST_BYTE_TIMEOUT", 120.0)?,
            idle_timeout: parse_secs(&get, "PONDER_IDLE_TIMEOUT", 60.0)?,
            keep_alive: parse_secs(&get, "PONDER_KEEP_ALIVE", 15.0)?,
            shutdown_grace: parse_secs(&get, "PONDER_SHUTDOWN_GRACE", 30.0)?,
            pre_token_guard: parse_secs(&get, "PONDER_PRE_TOKEN_GUARD", 120.0)?,
            base_path,
            log_json,
            threads: parse_num(&get, "PONDER_THREADS", cores(), 1, 256)?,
            demo: DemoConfig {
                addr: get("PONDER_DEMO_ADDR").unwrap_or_else(|| "127.0.0.1:0".into()),
                token_delay: Duration::from_millis(
                    parse_num(&get, "PONDER_DEMO_DELAY_MS", 40, 0, 60_000)?.into(),
                ),
            },
            listen,
            limits,
            attachments: attachment_limits(&get)?,
            model_files: model_files(get("PONDER_MODEL_FILES").as_deref())?,
            model_instructions: instructions::model_instructions(
                get("PONDER_MODEL_INSTRUCTIONS").as_deref(),
            )?,
            prices: usage::prices(get("PONDER_PRICES").as_deref())?,
            quota: usage::quota(
                get("PONDER_QUOTA").as_deref(),
                get("PONDER_QUOTA_ADMINS").as_deref(),
            )?,
            titles: match get("PONDER_TITLES").as_deref().map(str::trim) {
                None | Some("") | Some("model") => true,
                Some("off") => false,
                Some(other) => {
                    return Err(ConfigError(format!(
                        "PONDER_TITLES={other:?} must be model or off"
                    )))
                }
            },
            title_model: get("PONDER_TITLE_MODEL")
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty()),
            file_reader: get("PONDER_FILE_READER")
                .map(std::path::PathBuf::from)
                .or_else(|| std::env::current_exe().ok())
                .unwrap_or_else(|| "ponder".into()),
            pdf_renderer: pdf_renderer(&get),
            allowed_origins,
            public_hosts,
            trusted_proxies,
            rate_limit,
            database_url,
            auth,
            history,
            sharing,
            delete_grace: parse_secs(&get, "PONDER_DELETE_GRACE", 86_400.0)?,
            session_lifetime: Duration::from_secs(
                u64::from(parse_num(&get, "PONDER_SESSION_DAYS", 30, 1, 3650)?) * 86_400,
            ),
            replay: Replay {
                enabled: parse_bool(&get, "PONDER_REPLAY_REASONING", true)?,
                max_conversation_bytes: parse_num(
                    &get,
                    "PONDER_REPLAY_MAX_BYTES",
                    4 << 20,
                    0,
                    256 << 20,
                )? as usize,
            },
        })
    }

    /// True when turns go to the built-in demo model.
    pub fn uses_demo(&self) -> bool {
        self.upstream_url.is_none()
    }

    /// The texts that must never leave the server: the API key, and the password of the
    /// upstream URL (as written and percent-decoded).
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self.api_key.iter().cloned().collect();
        for url in [
            self.upstream_url.as_deref(),
            Some(self.database_url.as_str()),
        ] {
            if let Some(password) = url.and_then(url_password) {
                secrets.push(percent_decode(password));
                secrets.push(password.to_string());
            }
        }
        if let Some(o) = self.auth.oidc() {
            secrets.push(o.client_secret.clone());
        }
        secrets
    }
}

/// Characters per token the turn cap allows by default: real tokens average about four, and
/// runs of spaces in code are single tokens of dozens.
const CHARS_PER_TOKEN: u64 = 64;

/// The userinfo part of `url` (`user:password@`), if any.
fn userinfo(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    authority.rsplit_once('@').map(|(info, _)| info)
}

fn url_password(url: &str) -> Option<&str> {
    userinfo(url)?
        .split_once(':')
        .map(|(_, p)| p)
        .filter(|p| !p.is_empty())
}

/// `url` without its userinfo, for messages and logs.
pub fn without_userinfo(url: &str) -> String {
    match (url.split_once("://"), userinfo(url)) {
        (Some((scheme, rest)), Some(info)) => {
            format!("{scheme}://{}", &rest[info.len() + 1..])
        }
        _ => url.to_string(),
    }
}

/// `%XY` escapes read as the bytes they stand for (invalid UTF-8 becomes U+FFFD).
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' {
            if let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cores this process may use (its CPU quota or affinity included), at most 256.
fn cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(256) as u32)
}

/// `PONDER_MODELS`: comma-separated `id` or `id=Display name`.
fn parse_models(text: &str) -> Vec<OfferedModel> {
    let mut out: Vec<OfferedModel> = Vec::new();
    for entry in text.split(',') {
        let (id, name) = match entry.split_once('=') {
            Some((id, name)) => (id.trim(), Some(name.trim()).filter(|n| !n.is_empty())),
            None => (entry.trim(), None),
        };
        if !id.is_empty() && !out.iter().any(|m| m.id == id) {
            out.push(OfferedModel {
                id: id.to_string(),
                name: name.map(str::to_string),
            });
        }
    }
    out
}

/// `PONDER_MODEL_CONTROLS`: `;`-separated `id=control+control`, the controls being
/// `reasons`, `toggle`, `effort` (the last two imply the first) or `none`.
/// `PONDER_MODEL_CONTROLS`: each model's reasoning controls, and its sampling parameters when
/// the entry names any (`no_sampling` for none).
type ModelControls = (
    Vec<(String, Controls)>,
    Vec<(String, crate::domain::sampling::Tunables)>,
);

fn parse_model_controls(text: &str) -> Result<ModelControls, ConfigError> {
    use crate::domain::sampling::{Tunable, Tunables};
    let mut out = Vec::new();
    let mut params_out = Vec::new();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((id, list)) = entry.rsplit_once('=') else {
            return Err(ConfigError(format!(
                "PONDER_MODEL_CONTROLS entry {entry:?} must be model=controls, like qwen3:8b=toggle+effort"
            )));
        };
        let mut controls = Controls::NONE;
        let mut params: Option<Vec<Tunable>> = None;
        let mut reasoning = false;
        for word in list.split('+').map(str::trim) {
            reasoning |= ["none", "reasons", "toggle", "effort"].contains(&word);
            let tunable = <Tunable as crate::domain::wire::WireName>::from_wire_name(word);
            match word {
                _ if tunable.is_some() => params.get_or_insert_with(Vec::new).extend(tunable),
                "no_sampling" => {
                    params.get_or_insert_with(Vec::new);
                }
                "none" => {}
                "reasons" => controls.reasons = true,
                "toggle" => controls.toggle = true,
                "effort" => controls.effort = true,
                other => {
                    return Err(ConfigError(format!(
                        "PONDER_MODEL_CONTROLS: {other:?} is not a control (reasons, toggle, effort, none, temperature, top_p, max_tokens or no_sampling)"
                    )))
                }
            }
        }
        controls.reasons |= controls.toggle || controls.effort;
        let sampling_only = params.is_some() && !reasoning;
        if let Some(params) = params {
            params_out.push((id.trim().to_string(), Tunables::of(&params)));
        }
        if !sampling_only {
            out.push((id.trim().to_string(), controls));
        }
    }
    Ok((out, params_out))
}

fn default_model(provider: ProviderKind) -> &'static str {
    match provider {
        ProviderKind::OpenAi => "deepseek-reasoner",
        ProviderKind::Anthropic => "claude-sonnet-4-5",
        ProviderKind::Responses => "o4-mini",
        ProviderKind::Gemini => "gemini-2.5-flash",
        ProviderKind::Interactions => "gemini-3-flash-preview",
        ProviderKind::Ollama => "qwen3",
    }
}

fn parse_bool(
    get: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: bool,
) -> Result<bool, ConfigError> {
    match get(name).map(|v| v.to_ascii_lowercase()).as_deref() {
        None => Ok(default),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some("0" | "false" | "no" | "off") => Ok(false),
        Some(other) => Err(ConfigError(format!(
            "{name}={other:?} must be true or false (or 1/0)"
        ))),
    }
}

fn parse_num(
    get: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: u32,
    min: u32,
    max: u32,
) -> Result<u32, ConfigError> {
    match get(name) {
        None => Ok(default),
        Some(v) => match v.parse::<u32>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(ConfigError(format!(
                "{name}={v:?} must be a whole number from {min} to {max}"
            ))),
        },
    }
}

fn parse_secs(
    get: &impl Fn(&str) -> Option<String>,
    name: &str,
    default: f64,
) -> Result<Duration, ConfigError> {
    let secs = match get(name) {
        None => default,
        Some(v) => match v.parse::<f64>() {
            Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => s,
            _ => {
                return Err(ConfigError(format!(
                    "{name}={v:?} must be a number of seconds above 0 (fractions allowed)"
                )))
            }
        },
    };
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn defaults_run_the_demo_model() {
        let c = config(&[]).unwrap();
        assert!(c.uses_demo());
        assert_eq!(c.provider, ProviderKind::OpenAi);
        assert_eq!(c.max_output_tokens, 32_768);
        assert!(c.stream_thinking);
        assert_eq!(c.first_byte_timeout, Duration::from_secs(120));
        assert_eq!(c.idle_timeout, Duration::from_secs(60));
        assert_eq!(c.base_path, "");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        assert_eq!(c.threads, cores.min(256));
    }

    #[test]
    fn unwatched_turns_and_replica_liveness_are_read() {
        let c = config(&[]).unwrap();
        assert_eq!(c.orphan_turns, OrphanTurns::Finish);
        assert_eq!(c.orphan_grace, Duration::from_secs(30));
        assert_eq!(
            (c.heartbeat, c.replica_timeout),
            (Duration::from_secs(5), Duration::from_secs(15))
        );
        let c = config(&[
            ("PONDER_ORPHAN_TURNS", "Stop"),
            ("PONDER_ORPHAN_GRACE", "2.5"),
            ("PONDER_HEARTBEAT", "0.5"),
            ("PONDER_REPLICA_TIMEOUT", "2"),
        ])
        .unwrap();
        assert_eq!(c.orphan_turns, OrphanTurns::Stop);
        assert_eq!(c.orphan_grace, Duration::from_millis(2500));
        assert_eq!(c.heartbeat, Duration::from_millis(500));
        assert!(config(&[("PONDER_ORPHAN_TURNS", "keep")]).is_err());
        assert!(config(&[("PONDER_ORPHAN_GRACE", "1")]).is_err());
        let bad = config(&[("PONDER_HEARTBEAT", "20")]).unwrap_err();
        assert!(bad.0.contains("PONDER_REPLICA_TIMEOUT"), "{}", bad.0);
    }

    #[test]
    fn models_and_their_controls_are_read() {
        let c = config(&[
            ("PONDER_MODELS", "qwen3:8b=Qwen 3 8B, llama3.2 ,qwen3:8b,,"),
            (
                "PONDER_MODEL_CONTROLS",
                "qwen3:8b=toggle+effort; llama3.2=none;gpt-oss:20b = effort",
            ),
            ("PONDER_ANSWER_NOW", "ask"),
        ])
        .unwrap();
        assert_eq!(
            c.models,
            vec![
                OfferedModel {
                    id: "qwen3:8b".into(),
                    name: Some("Qwen 3 8B".into())
                },
                OfferedModel {
                    id: "llama3.2".into(),
                    name: None
                },
            ]
        );
        assert_eq!(c.model_controls.len(), 3);
        assert_eq!(c.model_controls[0].1, Controls::new(true, true, true));
        assert_eq!(c.model_controls[1].1, Controls::NONE);
        assert_eq!(c.model_controls[2].0, "gpt-oss:20b");
        assert!(c.model_controls[2].1.effort && !c.model_controls[2].1.toggle);
        assert_eq!(c.answer_now, AnswerNowMode::AskAgain);
        let bad = config(&[("PONDER_MODEL_CONTROLS", "qwen3=think")]).unwrap_err();
        assert!(bad.0.contains("\"think\" is not a control"), "{}", bad.0);
        assert!(config(&[("PONDER_ANSWER_NOW", "later")]).is_err());
    }

    #[test]
    fn reads_every_upstream_variable() {
        let c = config(&[
            ("PONDER_UPSTREAM_URL", "http://localhost:11434/v1/"),
            ("PONDER_API_KEY", "sk-secret"),
            ("PONDER_MODEL", "qwen3:8b"),
            ("PONDER_MAX_OUTPUT_TOKENS", "4096"),
            ("PONDER_STREAM_THINKING", "0"),
            ("PONDER_PROVIDER", "Anthropic"),
            ("PONDER_IDLE_TIMEOUT", "0.25"),
            ("PONDER_BASE_PATH", "/ponder/"),
            ("PONDER_THREADS", "3"),
        ])
        .unwrap();
        assert_eq!(c.upstream_url.as_deref(), Some("http://localhost:11434/v1"));
        assert_eq!(c.api_key.as_deref(), Some("sk-secret"));
        assert_eq!(c.model, "qwen3:8b");
        assert_eq!(c.max_output_tokens, 4096);
        assert!(!c.stream_thinking);
        assert_eq!(c.provider, ProviderKind::Anthropic);
        assert_eq!(c.idle_timeout, Duration::from_millis(250));
        assert_eq!(c.base_path, "/ponder");
        assert_eq!(c.threads, 3);
    }

    #[test]
    fn a_bad_value_names_its_variable() {
        for (name, value) in [
            ("PONDER_MAX_OUTPUT_TOKENS", "lots"),
            ("PONDER_STREAM_THINKING", "maybe"),
            ("PONDER_UPSTREAM_URL", "localhost:11434"),
            ("PONDER_PROVIDER", "cohere"),
            ("PONDER_FIRST_BYTE_TIMEOUT", "-1"),
            ("PONDER_BASE_PATH", "/a b"),
            ("PONDER_LOG_FORMAT", "xml"),
            ("PONDER_THREADS", "0"),
        ] {
            let err = config(&[(name, value)]).unwrap_err();
            assert!(err.0.starts_with(name), "{err}");
        }
    }

    #[test]
    fn debug_output_hides_the_key() {
        let c = config(&[("PONDER_API_KEY", "sk-very-secret")]).unwrap();
        assert!(!format!("{c:?}").contains("sk-very-secret"));
    }
}
