//! The models Ponder offers: the upstream's own list, fetched in the background at start and
//! every `PONDER_MODELS_REFRESH`, never on a reader's request; narrowed or named by
//! `PONDER_MODELS`; each model's reasoning controls decided by [`decide`], strongest evidence
//! first. A slow or failing list leaves the configured model alone on offer, with a note.
//!
//! The parsers of each provider's list are pure and tested on the shapes the real servers send.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use super::providers::files::Takes;
use std::time::Duration;

use serde_json::Value;

use super::config::{Config, ProviderKind};
use super::providers::TurnOptions;
use crate::domain::reasoning::ControlsSource;
use crate::domain::sampling::{Tunable, Tunables};
use crate::domain::{Controls, ErrorCode, Failure, ModelInfo, ModelList, ReasoningSettings};
use crate::i18n::errors::Said;

/// One model as the upstream describes it: what its metadata says about reasoning, if anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub name: Option<String>,
    pub metadata: Option<Controls>,
    /// What it reads besides text, when the upstream says (OpenRouter's
    /// `architecture.input_modalities`, Ollama's `vision` capability).
    pub reads: Option<Takes>,
    /// The sampling parameters it takes, when the upstream says (`supported_parameters`).
    pub params: Option<Tunables>,
}

/// The longest a model-list request may take; a slower upstream keeps the last list.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(8);

/// At most this many models are kept from one list (OpenRouter lists a few hundred; a hostile
/// upstream could list millions).
pub const MAX_MODELS: usize = 20_000;

/// Ollama's `/api/show` is asked for the capabilities of at most this many models per refresh.
const MAX_SHOWN: usize = 64;

/// The list of `provider`'s `GET` endpoint, parsed. Unknown shapes give an empty list.
pub fn parse_list(provider: ProviderKind, body: &Value) -> Vec<Listed> {
    let items = match provider {
        ProviderKind::Gemini | ProviderKind::Interactions => body.get("models"),
        ProviderKind::Ollama => body.get("models"),
        _ => body.get("data"),
    };
    let Some(items) = items.and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .take(MAX_MODELS)
        .filter_map(|m| match provider {
            ProviderKind::Gemini | ProviderKind::Interactions => gemini_model(m),
            ProviderKind::Ollama => ollama_model(m),
            _ => openai_model(m),
        })
        .collect()
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty() && s.len() <= 300)
        .map(str::to_string)
}

/// OpenAI-compatible and Anthropic lists: `{data: [{id, display_name?, name?,
/// supported_parameters?}]}`. OpenRouter-style `supported_parameters` tell reasoning apart.
fn openai_model(m: &Value) -> Option<Listed> {
    let id = text(m, "id")?;
    let mut sampling = None;
    let name = text(m, "display_name").or_else(|| text(m, "name"));
    let metadata = m
        .get("supported_parameters")
        .and_then(Value::as_array)
        .map(|params| {
            let has = |p: &str| params.iter().any(|v| v.as_str() == Some(p));
            let tunables = [
                (Tunable::Temperature, has("temperature")),
                (Tunable::TopP, has("top_p")),
                (
                    Tunable::MaxTokens,
                    has("max_tokens") || has("max_completion_tokens"),
                ),
            ];
            let taken: Vec<Tunable> = tunables
                .iter()
                .filter(|(_, on)| *on)
                .map(|(t, _)| *t)
                .collect();
            sampling = Some(Tunables::of(&taken));
            let effort = has("reasoning_effort");
            let toggle = has("enable_thinking") || has("chat_template_kwargs");
            let reasons = effort || toggle || has("reasoning") || has("include_reasoning");
            let family = family(ProviderKind::OpenAi, &id).unwrap_or(Controls::NONE);
            Controls {
                levels: family.levels,
                ..Controls::new(reasons, toggle, effort)
            }
        });
    let reads = m
        .pointer("/architecture/input_modalities")
        .and_then(Value::as_array)
        .map(|inputs| {
            let has = |p: &str| inputs.iter().any(|v| v.as_str() == Some(p));
            Takes {
                images: has("image"),
                documents: has("file"),
            }
        });
    Some(Listed {
        id,
        name,
        metadata,
        reads,
        params: sampling,
    })
}

/// Gemini: `{models: [{name: "models/…", displayName, thinking?, supportedGenerationMethods}]}`;
/// models that cannot stream content are left out.
fn gemini_model(m: &Value) -> Option<Listed> {
    let full = text(m, "name")?;
    let id = full.strip_prefix("models/").unwrap_or(&full).to_string();
    if let Some(methods) = m
        .get("supportedGenerationMethods")
        .and_then(Value::as_array)
    {
        if !methods
            .iter()
            .any(|v| v.as_str() == Some("streamGenerateContent"))
        {
            return None;
        }
    }
    let metadata = m.get("thinking").and_then(Value::as_bool).map(|thinks| {
        let family = family(ProviderKind::Gemini, &id).unwrap_or(Controls::NONE);
        Controls {
            levels: family.levels,
            ..Controls::new(thinks, thinks && family.toggle, thinks)
        }
    });
    Some(Listed {
        id,
        name: text(m, "displayName"),
        metadata,
        reads: None,
        params: None,
    })
}

/// Ollama `/api/tags`: `{models: [{name, model}]}`; capabilities come from `/api/show`.
fn ollama_model(m: &Value) -> Option<Listed> {
    let id = text(m, "name").or_else(|| text(m, "model"))?;
    Some(Listed {
        id,
        name: None,
        metadata: None,
        reads: None,
        params: None,
    })
}

/// Ollama `/api/show`'s `capabilities`: `thinking` means `think` true/false works, and the
/// gpt-oss family also takes levels.
pub fn ollama_capabilities(id: &str, show: &Value) -> Option<Controls> {
    let caps = show.get("capabilities")?.as_array()?;
    let thinks = caps.iter().any(|c| c.as_str() == Some("thinking"));
    let levels = id.to_ascii_lowercase().contains("gpt-oss");
    Some(Controls::new(thinks, thinks && !levels, thinks && levels))
}

/// Ollama `/api/show`'s `capabilities`: `vision` means the model reads images.
pub fn ollama_reads(show: &Value) -> Option<Takes> {
    let caps = show.get("capabilities")?.as_array()?;
    Some(Takes {
        images: caps.iter().any(|c| c.as_str() == Some("vision")),
        documents: false,
    })
}

/// What is known of a model's controls from its name alone, per provider's wire.
pub fn family(provider: ProviderKind, id: &str) -> Option<Controls> {
    let id = id.to_ascii_lowercase();
    let name = id.rsplit('/').next().unwrap_or(&id);
    let has = |w: &str| name.contains(w);
    let c = Controls::new;
    if has("ponder-demo") {
        return None;
    }
    if has("gpt-oss") {
        return Some(c(true, false, true));
    }
    let openai_reasoner = name.starts_with("o1")
        || name.starts_with("o3")
        || name.starts_with("o4")
        || name.starts_with("gpt-5");
    if openai_reasoner {
        return Some(c(true, false, true).with_levels(openai_levels(name)));
    }
    if has("claude") {
        use super::providers::anthropic::{thinking_mode, ThinkingMode};
        let mode = thinking_mode(name);
        let thinks = mode != ThinkingMode::Budget
            || ["3-7", "sonnet-4", "opus-4", "haiku-4", "4-5", "4-1"]
                .iter()
                .any(|v| has(v));
        let levels = super::providers::anthropic::effort_levels(name);
        return Some(match (thinks, mode) {
            (false, _) => Controls::NONE,
            (true, ThinkingMode::AdaptiveOnly) if provider == ProviderKind::Anthropic => {
                c(true, false, true).with_levels(levels)
            }
            (true, _) if provider == ProviderKind::Anthropic => {
                c(true, true, true).with_levels(levels)
            }
            (true, _) => c(true, true, true),
        });
    }
    if has("gemini") {
        let thinks = ["2.5", "-3"].iter().any(|v| has(v));
        let levels = super::providers::gemini::effort_levels(name);
        return Some(match (thinks, has("pro")) {
            (false, _) => Controls::NONE,
            (true, true) => c(true, false, true).with_levels(levels),
            (true, false) => c(true, true, true).with_levels(levels),
        });
    }
    let toggles = (has("qwen3") && !has("instruct") && !has("coder"))
        || has("glm-4.5")
        || has("glm-4.6")
        || has("deepseek-v3.1")
        || has("hunyuan");
    if toggles {
        return Some(c(true, true, false));
    }
    let reasons_only = has("deepseek-r1")
        || has("deepseek-reasoner")
        || has("qwq")
        || has("reasoning")
        || has("thinking")
        || has("magistral");
    if reasons_only {
        return Some(c(true, provider == ProviderKind::Ollama, false));
    }
    None
}

/// Which sampling parameters a model takes, known from its name alone: reasoning models that
/// refuse (or ignore) temperature and top-p take only the output limit (OpenAI's o-series and
/// GPT-5, Claude Opus 4.7 and later, DeepSeek's reasoner); every other model all three.
pub fn family_params(id: &str) -> Tunables {
    let id = id.to_ascii_lowercase();
    let name = id.rsplit('/').next().unwrap_or(&id);
    let openai_reasoner = ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|p| name.starts_with(p));
    let adaptive_only = name.contains("claude")
        && super::providers::anthropic::thinking_mode(name)
            == super::providers::anthropic::ThinkingMode::AdaptiveOnly;
    let reasoner = name.contains("deepseek-reasoner") || name.contains("deepseek-r1");
    if openai_reasoner || adaptive_only || reasoner {
        Tunables::MAX_TOKENS_ONLY
    } else {
        Tunables::ALL
    }
}

/// The sampling parameters of `id`: configured, else as its upstream lists them, else its
/// name's family.
pub fn params_of(config: &Config, id: &str, listed: Option<Tunables>) -> Tunables {
    config
        .model_params
        .iter()
        .find(|(m, _)| m == id)
        .map(|(_, p)| *p)
        .or(listed)
        .unwrap_or_else(|| family_params(id))
}

/// The `reasoning.effort` levels of OpenAI's reasoning models: GPT-5 adds `minimal`, GPT-5.2
/// and later `xhigh`; the o-series and GPT-5.1 the standard three.
fn openai_levels(name: &str) -> &'static [crate::domain::Effort] {
    use crate::domain::Effort::*;
    let minor = name
        .strip_prefix("gpt-5.")
        .map(|rest| {
            rest.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|digits| digits.parse::<u32>().ok());
    match minor {
        Some(minor) if minor >= 2 => &[Low, Medium, High, Xhigh],
        Some(_) => &[Low, Medium, High],
        None if name.starts_with("gpt-5") => &[Minimal, Low, Medium, High],
        None => &[Low, Medium, High],
    }
}

/// A model's controls and where they came from: configuration, the backend's metadata, what
/// it did before (it reasoned), then its name's family; with nothing known, no controls.
pub fn decide(
    provider: ProviderKind,
    id: &str,
    configured: Option<Controls>,
    metadata: Option<Controls>,
    observed: bool,
) -> (Controls, ControlsSource) {
    if let Some(c) = configured {
        return (c, ControlsSource::Config);
    }
    if let Some(c) = metadata {
        return (c, ControlsSource::Metadata);
    }
    if observed {
        // It reasons; which controls it takes, only its family can tell.
        let known = family(provider, id).filter(|c| c.reasons);
        let observed =
            known.unwrap_or(Controls::new(true, provider == ProviderKind::Ollama, false));
        return (observed, ControlsSource::Observed);
    }
    match family(provider, id) {
        Some(c) => (c, ControlsSource::Family),
        // Ollama is asked to think unless a model is known not to, as before models were known.
        None => (
            Controls {
                reasons: provider == ProviderKind::Ollama,
                ..Controls::NONE
            },
            ControlsSource::Unknown,
        ),
    }
}

/// The last list fetched, and why the last fetch failed.
#[derive(Debug, Default)]
struct Fetched {
    listed: Option<Vec<Listed>>,
    error: Option<String>,
}

/// The models on offer, shared by every request; written only by the refresh task.
#[derive(Debug, Default)]
pub struct Catalogue {
    fetched: RwLock<Fetched>,
    observed: RwLock<HashSet<String>>,
    first: FirstFetch,
}

/// Whether the refresh task has started and finished its first fetch, so that a turn asked in
/// the server's first seconds waits for the list instead of guessing its model's controls.
#[derive(Debug, Default)]
struct FirstFetch {
    started: AtomicBool,
    done: AtomicBool,
    notify: tokio::sync::Notify,
}

/// How long a turn waits for the first model list before deciding from the model's name.
const FIRST_FETCH_WAIT: Duration = Duration::from_secs(3);

impl Catalogue {
    /// The picker's list now, from the last fetch and what turns have shown.
    pub fn list(&self, config: &Config) -> ModelList {
        let fetched = self.fetched.read().map(|f| f.listed.clone()).ok().flatten();
        let error = self.fetched.read().ok().and_then(|f| f.error.clone());
        let observed = self.observed.read().map(|o| o.clone()).unwrap_or_default();
        build_list(config, fetched.as_deref(), error, &observed)
    }

    /// What `model` reads besides text as its upstream's list says, when it says.
    pub fn reads(&self, model: &str) -> Option<Takes> {
        let fetched = self.fetched.read().ok()?;
        fetched
            .listed
            .as_ref()?
            .iter()
            .find(|l| l.id == model)?
            .reads
    }

    /// A turn of `model` streamed reasoning: it reasons, whatever its name says.
    pub fn observe_reasoning(&self, model: &str) {
        if model.len() > 300 {
            return;
        }
        if let Ok(mut seen) = self.observed.write() {
            if seen.len() < MAX_MODELS && !seen.contains(model) {
                seen.insert(model.to_string());
            }
        }
    }

    /// The options of a turn: the model asked for (it must be on offer when the offer is
    /// known), else the one `remembered` by the conversation while it is still offered, else
    /// the default; and the settings reduced to what that model accepts.
    pub fn resolve(
        &self,
        config: &Config,
        asked: Option<&str>,
        remembered: Option<&str>,
        settings: ReasoningSettings,
    ) -> Result<TurnOptions, Failure> {
        if let Some(id) = asked {
            if id.is_empty() || id.len() > 300 || id.chars().any(char::is_control) {
                return Err(Failure::of(ErrorCode::BadRequest, false)
                    .with(
                        "detail",
                        "`model` must be a model id of at most 300 characters",
                    )
                    .said());
            }
        }
        let known = self
            .fetched
            .read()
            .map(|f| f.listed.is_some())
            .unwrap_or(false);
        let list = self.list(config);
        let offered = |id: &str| {
            id == config.model || list.find(id).is_some() || (!known && config.models.is_empty())
        };
        let model = match (asked, remembered) {
            (Some(id), _) if offered(id) => id.to_string(),
            (Some(id), _) => {
                return Err(Failure::of(ErrorCode::UnknownModel, false)
                    .with("model", id)
                    .said())
            }
            (None, Some(id)) if offered(id) => id.to_string(),
            _ => config.model.clone(),
        };
        let controls = match list.find(&model) {
            Some(m) => m.controls,
            None => {
                let configured = config
                    .model_controls
                    .iter()
                    .find(|(m, _)| *m == model)
                    .map(|(_, c)| *c);
                let observed = self
                    .observed
                    .read()
                    .map(|o| o.contains(&model))
                    .unwrap_or(false);
                decide(config.provider, &model, configured, None, observed)
                    .0
                    .with_params(params_of(config, &model, None))
            }
        };
        Ok(TurnOptions {
            settings: settings.applicable(controls),
            controls,
            model,
            answer_now: None,
            instructions: None,
        })
    }

    fn store(&self, result: Result<Vec<Listed>, String>) {
        if let Ok(mut f) = self.fetched.write() {
            match result {
                Ok(listed) => {
                    f.listed = Some(listed);
                    f.error = None;
                }
                Err(e) => f.error = Some(e),
            }
        }
        self.first.done.store(true, Ordering::Release);
        self.first.notify.notify_waiters();
    }

    /// Waits (at most [`FIRST_FETCH_WAIT`]) until the refresh task's first fetch has ended,
    /// when one is running: a turn asked in the server's first seconds then sends only the
    /// settings its model takes, as the list says, rather than what its name suggests.
    pub async fn first_fetch(&self) {
        if !self.first.started.load(Ordering::Acquire) || self.first.done.load(Ordering::Acquire) {
            return;
        }
        let notified = self.first.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.first.done.load(Ordering::Acquire) {
            return;
        }
        let _ = tokio::time::timeout(FIRST_FETCH_WAIT, notified).await;
    }

    /// Fetches the list once and keeps it (or keeps the previous one and the error); true when
    /// it arrived. Ollama's capabilities get a deadline of their own: the list stands without
    /// those that were too slow to come.
    pub async fn refresh(&self, config: &Config, http: &reqwest::Client, base: &str) -> bool {
        let mut result = tokio::time::timeout(FETCH_TIMEOUT, fetch(config, http, base))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "the model server did not list its models within {} s",
                    FETCH_TIMEOUT.as_secs()
                ))
            });
        if let (Ok(listed), ProviderKind::Ollama) = (&mut result, config.provider) {
            let asked = show_capabilities(config, http, base, listed);
            if tokio::time::timeout(FETCH_TIMEOUT, asked).await.is_err() {
                tracing::warn!(
                    "Ollama's /api/show was too slow; some models' capabilities stay unknown"
                );
            }
        }
        if let Err(e) = &result {
            tracing::warn!(error = %e, "the model list could not be fetched; offering the configured model");
        }
        let ok = result.is_ok();
        self.store(result);
        ok
    }

    /// Refreshes now and then every `PONDER_MODELS_REFRESH`, for as long as the server runs. A
    /// failure is tried again sooner (5 s, doubling up to the interval), so an upstream that
    /// starts after Ponder is listed within seconds.
    pub fn spawn_refresh(
        self: &Arc<Self>,
        config: Arc<Config>,
        http: reqwest::Client,
        base: String,
    ) {
        let me = self.clone();
        self.first.started.store(true, Ordering::Release);
        tokio::spawn(async move {
            let every = config.models_refresh.max(Duration::from_secs(5));
            let mut retry = Duration::from_secs(5);
            loop {
                let wait = if me.refresh(&config, &http, &base).await {
                    retry = Duration::from_secs(5);
                    every
                } else {
                    let wait = retry.min(every);
                    retry = (retry * 2).min(every);
                    wait
                };
                tokio::time::sleep(wait).await;
            }
        });
    }
}

/// Joins the fetched list, `PONDER_MODELS`, the default model and the decisions. Pure.
pub fn build_list(
    config: &Config,
    fetched: Option<&[Listed]>,
    error: Option<String>,
    observed: &HashSet<String>,
) -> ModelList {
    let configured = |id: &str| {
        config
            .model_controls
            .iter()
            .find(|(m, _)| m == id)
            .map(|(_, c)| *c)
    };
    let info = |id: &str, name: Option<String>, listed: Option<&Listed>| {
        let (controls, source) = decide(
            config.provider,
            id,
            configured(id),
            listed.and_then(|l| l.metadata),
            observed.contains(id),
        );
        ModelInfo {
            id: id.to_string(),
            name,
            controls: controls.with_params(params_of(config, id, listed.and_then(|l| l.params))),
            source,
        }
    };
    let find = |id: &str| fetched.and_then(|l| l.iter().find(|m| m.id == id));
    let mut models: Vec<ModelInfo> = if !config.models.is_empty() {
        config
            .models
            .iter()
            .map(|offered| {
                let listed = find(&offered.id);
                let name = offered
                    .name
                    .clone()
                    .or_else(|| listed.and_then(|l| l.name.clone()));
                info(&offered.id, name, listed)
            })
            .collect()
    } else {
        fetched
            .unwrap_or_default()
            .iter()
            .map(|l| info(&l.id, l.name.clone(), Some(l)))
            .collect()
    };
    if !models.iter().any(|m| m.id == config.model) {
        let listed = find(&config.model);
        models.insert(
            0,
            info(&config.model, listed.and_then(|l| l.name.clone()), listed),
        );
    }
    let note = match (fetched, error) {
        (None, Some(e)) if config.models.is_empty() => Some(format!(
            "Only the configured model is offered: {e}. The list is tried again shortly."
        )),
        (Some(_), Some(e)) if config.models.is_empty() => Some(format!(
            "The model list could not be refreshed ({e}); this is the last one fetched."
        )),
        (None, None) if config.models.is_empty() => {
            Some("The model server's list is still loading.".to_string())
        }
        _ => None,
    };
    ModelList {
        default: config.model.clone(),
        models,
        note,
    }
}

/// The URL of `provider`'s model list.
pub fn list_url(provider: ProviderKind, base: &str) -> String {
    match provider {
        ProviderKind::Ollama => format!("{base}/api/tags"),
        ProviderKind::Gemini | ProviderKind::Interactions => {
            format!("{base}/models?pageSize=1000")
        }
        _ => format!("{base}/models?limit=1000"),
    }
}

fn auth(config: &Config, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    let Some(key) = &config.api_key else {
        return req;
    };
    match config.provider {
        ProviderKind::Anthropic => req.header("x-api-key", key).header(
            "anthropic-version",
            super::providers::anthropic::API_VERSION,
        ),
        ProviderKind::Gemini | ProviderKind::Interactions => req.header("x-goog-api-key", key),
        _ => req.bearer_auth(key),
    }
}

/// Reads a JSON body of at most `limit` bytes.
async fn json_body(response: reqwest::Response, limit: usize) -> Result<Value, String> {
    use futures::StreamExt;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the model list answered HTTP {}", status.as_u16()));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| "the model list's connection broke".to_string())?;
        if body.len() + chunk.len() > limit {
            return Err(format!("the model list is over {} MB", limit >> 20));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|_| "the model list is not JSON".to_string())
}

const LIST_LIMIT: usize = 32 << 20;

async fn fetch(config: &Config, http: &reqwest::Client, base: &str) -> Result<Vec<Listed>, String> {
    let url = list_url(config.provider, base);
    let response = auth(config, http.get(&url))
        .send()
        .await
        .map_err(|e| format!("the model list could not be reached ({})", e.without_url()))?;
    let body = json_body(response, LIST_LIMIT).await?;
    Ok(parse_list(config.provider, &body))
}

/// Asks Ollama's `/api/show` for the capabilities of the offered models, a few at a time.
async fn show_capabilities(
    config: &Config,
    http: &reqwest::Client,
    base: &str,
    listed: &mut [Listed],
) {
    use futures::StreamExt;
    let wanted: Vec<(usize, String)> = listed
        .iter()
        .enumerate()
        .filter(|(_, l)| config.models.is_empty() || config.models.iter().any(|m| m.id == l.id))
        .map(|(i, l)| (i, l.id.clone()))
        .take(MAX_SHOWN)
        .collect();
    let url = format!("{base}/api/show");
    let asks = wanted.into_iter().map(|(i, id)| {
        let req = auth(config, http.post(&url)).json(&serde_json::json!({"model": id}));
        async move {
            let shown = match req.send().await {
                Ok(r) => json_body(r, 1 << 20).await.ok(),
                Err(_) => None,
            };
            let caps = shown.as_ref().and_then(|s| ollama_capabilities(&id, s));
            (i, caps, shown.as_ref().and_then(ollama_reads))
        }
    });
    let mut answers = futures::stream::iter(asks).buffer_unordered(4);
    // Kept as each arrives, so a deadline that cuts this short keeps what came.
    while let Some((i, caps, reads)) = answers.next().await {
        listed[i].metadata = caps;
        listed[i].reads = reads;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(vars: &[(&str, &str)]) -> Config {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())).unwrap()
    }

    #[test]
    fn every_provider_list_shape_parses() {
        let openrouter = json!({"data": [
            {"id": "deepseek/deepseek-r1", "name": "DeepSeek R1", "supported_parameters": ["reasoning", "include_reasoning"]},
            {"id": "openai/o4-mini", "supported_parameters": ["reasoning", "reasoning_effort"]},
            {"id": "meta/llama", "supported_parameters": ["temperature"]},
            {"id": ""}
        ]});
        let l = parse_list(ProviderKind::OpenAi, &openrouter);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].name.as_deref(), Some("DeepSeek R1"));
        assert_eq!(l[0].metadata, Some(Controls::new(true, false, false)));
        assert!(l[1].metadata.unwrap().effort);
        assert_eq!(l[2].metadata, Some(Controls::NONE));
        let anthropic = json!({"data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5"}], "has_more": false});
        let l = parse_list(ProviderKind::Anthropic, &anthropic);
        assert_eq!(l[0].name.as_deref(), Some("Claude Sonnet 4.5"));
        assert_eq!(l[0].metadata, None);
        let gemini = json!({"models": [
            {"name": "models/gemini-2.5-flash", "displayName": "Gemini 2.5 Flash", "thinking": true, "supportedGenerationMethods": ["generateContent", "streamGenerateContent"]},
            {"name": "models/embedding-001", "supportedGenerationMethods": ["embedContent"]}
        ]});
        let l = parse_list(ProviderKind::Gemini, &gemini);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].id, "gemini-2.5-flash");
        assert!(l[0].metadata.unwrap().toggle);
        let tags = json!({"models": [{"name": "qwen3:8b", "model": "qwen3:8b"}]});
        assert_eq!(parse_list(ProviderKind::Ollama, &tags)[0].id, "qwen3:8b");
        assert!(parse_list(ProviderKind::OpenAi, &json!({"error": "x"})).is_empty());
    }

    #[test]
    fn ollama_capabilities_decide_toggle_or_levels() {
        let show = json!({"capabilities": ["completion", "thinking", "tools"]});
        assert!(ollama_capabilities("qwen3:8b", &show).unwrap().toggle);
        let oss = ollama_capabilities("gpt-oss:20b", &show).unwrap();
        assert!(oss.effort && !oss.toggle);
        let plain = json!({"capabilities": ["completion"]});
        assert_eq!(
            ollama_capabilities("llama3.2", &plain),
            Some(Controls::NONE)
        );
        assert_eq!(ollama_capabilities("x", &json!({})), None);
    }

    #[test]
    fn what_a_listed_model_reads_comes_from_its_metadata() {
        let vision = json!({"capabilities": ["completion", "vision"]});
        assert_eq!(
            ollama_reads(&vision),
            Some(Takes {
                images: true,
                documents: false
            })
        );
        assert_eq!(
            ollama_reads(&json!({"capabilities": ["completion"]})),
            Some(Takes::default())
        );
        assert_eq!(ollama_reads(&json!({})), None);
        let openrouter = json!({"data": [
            {"id": "a/seer", "architecture": {"input_modalities": ["text", "image", "file"]}},
            {"id": "b/blind", "architecture": {"input_modalities": ["text"]}},
            {"id": "c/unsaid"}
        ]});
        let l = parse_list(ProviderKind::OpenAi, &openrouter);
        assert_eq!(
            l[0].reads,
            Some(Takes {
                images: true,
                documents: true
            })
        );
        assert_eq!(l[1].reads, Some(Takes::default()));
        assert_eq!(l[2].reads, None);
        // The list's word decides over the family name; the operator's over the list's.
        let c = config(&[
            ("PONDER_UPSTREAM_URL", "http://127.0.0.1:9/v1"),
            ("PONDER_MODEL_FILES", "b/blind=images"),
        ]);
        use crate::server::providers::files::takes;
        assert_eq!(takes(&c, "gpt-5", l[1].reads), Takes::default());
        assert_eq!(
            takes(&c, "b/blind", l[1].reads),
            Takes {
                images: true,
                documents: false
            }
        );
    }

    #[test]
    fn decisions_go_config_metadata_observed_family() {
        let on = Controls::new(true, true, true);
        let p = ProviderKind::OpenAi;
        assert_eq!(
            decide(p, "qwen3", Some(Controls::NONE), Some(on), true).1,
            ControlsSource::Config
        );
        assert_eq!(
            decide(p, "qwen3", None, Some(Controls::NONE), true),
            (Controls::NONE, ControlsSource::Metadata)
        );
        let (c, s) = decide(p, "my-finetune", None, None, true);
        assert!(c.reasons && !c.toggle && s == ControlsSource::Observed);
        let (c, s) = decide(p, "qwen3-32b", None, None, true);
        assert!(
            c.toggle && s == ControlsSource::Observed,
            "the family refines what was seen"
        );
        let (c, s) = decide(p, "Qwen/Qwen3-32B", None, None, false);
        assert!(c.toggle && s == ControlsSource::Family);
        let (c, _) = decide(p, "o4-mini", None, None, false);
        assert!(c.effort && !c.toggle);
        let (c, s) = decide(p, "llama3.2", None, None, false);
        assert_eq!((c, s), (Controls::NONE, ControlsSource::Unknown));
        let (c, _) = decide(
            ProviderKind::Anthropic,
            "claude-opus-4-7",
            None,
            None,
            false,
        );
        assert!(c.effort && !c.toggle, "Opus 4.7 cannot switch thinking off");
        let (c, _) = decide(
            ProviderKind::Anthropic,
            "claude-sonnet-4-6",
            None,
            None,
            false,
        );
        assert!(c.effort && c.toggle);
        let (c, _) = decide(ProviderKind::Gemini, "gemini-2.5-pro", None, None, false);
        assert!(c.effort && !c.toggle);
        let (c, _) = decide(
            ProviderKind::Anthropic,
            "claude-3-5-haiku",
            None,
            None,
            false,
        );
        assert_eq!(c, Controls::NONE);
    }

    #[test]
    fn sampling_parameters_come_from_configuration_then_the_list_then_the_family() {
        use crate::domain::sampling::{Tunable, Tunables};
        let body = serde_json::json!({"data": [
            {"id": "meta/llama", "supported_parameters": ["temperature", "max_tokens"]},
            {"id": "openai/o4-mini", "supported_parameters": ["max_completion_tokens", "reasoning_effort"]},
            {"id": "plain"}
        ]});
        let listed = parse_list(ProviderKind::OpenAi, &body);
        assert_eq!(
            listed[0].params,
            Some(Tunables::of(&[Tunable::Temperature, Tunable::MaxTokens]))
        );
        assert_eq!(listed[1].params, Some(Tunables::MAX_TOKENS_ONLY));
        assert_eq!(listed[2].params, None);
        assert_eq!(family_params("o3-mini"), Tunables::MAX_TOKENS_ONLY);
        assert_eq!(family_params("gpt-5.2"), Tunables::MAX_TOKENS_ONLY);
        assert_eq!(family_params("claude-opus-4-7"), Tunables::MAX_TOKENS_ONLY);
        assert_eq!(family_params("claude-sonnet-4-5"), Tunables::ALL);
        assert_eq!(
            family_params("deepseek-reasoner"),
            Tunables::MAX_TOKENS_ONLY
        );
        assert_eq!(family_params("qwen3:8b"), Tunables::ALL);
        let c = config(&[
            ("PONDER_MODELS", "meta/llama,plain,o3"),
            ("PONDER_MODEL_CONTROLS", "plain=top_p;o3=effort+temperature"),
        ]);
        let list = build_list(&c, Some(&listed), None, &HashSet::new());
        let params = |id: &str| list.find(id).unwrap().controls.params;
        assert_eq!(
            params("meta/llama"),
            Tunables::of(&[Tunable::Temperature, Tunable::MaxTokens])
        );
        assert_eq!(
            params("plain"),
            Tunables::of(&[Tunable::TopP]),
            "configured"
        );
        assert_eq!(
            params("o3"),
            Tunables::of(&[Tunable::Temperature]),
            "configured above the family"
        );
        assert!(
            !list.find("plain").unwrap().controls.reasons,
            "sampling words alone configure no reasoning"
        );
        assert!(list.find("o3").unwrap().controls.effort);
    }

    #[test]
    fn the_list_is_narrowed_named_and_always_holds_the_default() {
        let listed = vec![
            Listed {
                id: "a".into(),
                name: Some("Model A".into()),
                metadata: None,
                reads: None,
                params: None,
            },
            Listed {
                id: "b".into(),
                name: None,
                metadata: None,
                reads: None,
                params: None,
            },
        ];
        let c = config(&[("PONDER_MODEL", "b"), ("PONDER_MODELS", "a=Alpha,z")]);
        let l = build_list(&c, Some(&listed), None, &HashSet::new());
        let ids: Vec<&str> = l.models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["b", "a", "z"]);
        assert_eq!(l.models[1].name.as_deref(), Some("Alpha"));
        assert_eq!(l.note, None);
        let c = config(&[("PONDER_MODEL", "m")]);
        let l = build_list(&c, None, Some("HTTP 500".into()), &HashSet::new());
        assert_eq!(l.models.len(), 1);
        assert!(l.note.unwrap().contains("HTTP 500"));
        let l = build_list(&c, Some(&listed), Some("timeout".into()), &HashSet::new());
        assert_eq!(l.models.len(), 3, "a failed refresh keeps the last list");
        assert!(l.note.unwrap().contains("last one fetched"));
    }

    #[test]
    fn each_family_offers_the_effort_levels_its_provider_documents() {
        use crate::domain::Effort::*;
        let levels = |provider, id: &str| -> Vec<crate::domain::Effort> {
            family(provider, id).unwrap().levels.iter().collect()
        };
        let a = ProviderKind::Anthropic;
        assert_eq!(
            levels(a, "claude-opus-4-7"),
            [Low, Medium, High, Xhigh, Max]
        );
        assert_eq!(
            levels(a, "claude-sonnet-5"),
            [Low, Medium, High, Xhigh, Max]
        );
        assert_eq!(levels(a, "claude-sonnet-4-6"), [Low, Medium, High, Max]);
        assert_eq!(levels(a, "claude-sonnet-4-5"), [Low, Medium, High]);
        let r = ProviderKind::Responses;
        assert_eq!(levels(r, "gpt-5"), [Minimal, Low, Medium, High]);
        assert_eq!(levels(r, "gpt-5-mini"), [Minimal, Low, Medium, High]);
        assert_eq!(levels(r, "gpt-5.1"), [Low, Medium, High]);
        assert_eq!(levels(r, "gpt-5.2"), [Low, Medium, High, Xhigh]);
        assert_eq!(levels(r, "o4-mini"), [Low, Medium, High]);
        let g = ProviderKind::Gemini;
        assert_eq!(levels(g, "gemini-3-pro-preview"), [Low, High]);
        assert_eq!(
            levels(g, "gemini-3-flash-preview"),
            [Minimal, Low, Medium, High]
        );
        assert_eq!(levels(g, "gemini-2.5-flash"), [Low, Medium, High]);
        let listed = parse_list(
            ProviderKind::OpenAi,
            &serde_json::json!({"data": [{"id": "openai/gpt-5.2", "supported_parameters": ["reasoning_effort"]}]}),
        );
        let metadata = listed[0].metadata.unwrap();
        assert!(
            metadata.effort && metadata.levels.contains(Xhigh),
            "metadata keeps the family's levels"
        );
    }
}
