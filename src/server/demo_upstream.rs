//! The built-in demo model: a real streaming HTTP server, deterministic and paced like a model
//! producing tokens. `make run` uses it when no upstream is configured, and every test talks to
//! it over real HTTP.
//!
//! A tag in the last user message picks a scenario (see [`Scenario`] and the README). Each
//! scenario is a [`Script`], rendered in the wire format of every provider Ponder speaks:
//! OpenAI Chat Completions (`POST /v1/chat/completions`), Anthropic Messages (`/v1/messages`),
//! OpenAI Responses (`/v1/responses`), Gemini (`/v1beta/models/{model}:streamGenerateContent`,
//! SSE with `alt=sse`, a JSON array without) and Ollama (`/api/chat`, NDJSON). Like the real
//! servers, each endpoint refuses a request missing what it requires with a 400.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde_json::{json, Value};

use super::config::{DemoConfig, ProviderKind};

mod framing;
mod perf;

/// What the demo model does for one request, chosen by a tag in the last user message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Thinks, then answers (no tag).
    ThinkThenAnswer,
    /// `[no-think]`: answers with no reasoning.
    NoThink,
    /// `[long]`: thinks briefly, then a long markdown answer.
    Long,
    /// `[slow]`: three seconds of silence before the first token.
    Slow,
    /// `[think-only]`: thinks until the token limit, never answers (`finish_reason: length`).
    ThinkOnly,
    /// `[drop]`: the connection drops in the middle of the answer.
    Drop,
    /// `[500]`: HTTP 500 before any byte of stream.
    Http500,
    /// `[429]`: HTTP 429 with `Retry-After`.
    Http429,
    /// `[error]`: an error payload in the middle of the stream.
    MidStreamError,
    /// `[two-blocks]`: thinks, answers, thinks again, answers again.
    TwoBlocks,
    /// `[utf8-split]`: multi-byte characters split across network chunks.
    Utf8Split,
    /// `[stall]`: headers, then silence forever (first-byte timeout).
    Stall,
    /// `[stall-mid]`: thinks a little, then silence forever (idle timeout).
    StallMid,
    /// `[garbage]`: lines that are not JSON between valid chunks.
    Garbage,
    /// `[bad-utf8]`: invalid UTF-8 bytes inside the answer.
    BadUtf8,
    /// `[big]`: a 10 MB answer, as fast as possible.
    Big,
    /// `[401]`: HTTP 401 whose body echoes the API key it was sent, as some servers do.
    Unauthorized,
    /// `[long-think]`: a long reasoning (taller than the block), then the answer.
    LongThink,
    /// `[xss]`: every payload of the XSS corpus, split across deltas, as thinking and as answer.
    Xss,
    /// `[think-tags]`: reasoning inline in the answer text as `<think>…</think>`, the tags
    /// split across chunks.
    ThinkTags,
    /// `[think-open]`: inline reasoning whose `<think>` the chat template opened, so only
    /// `</think>` arrives.
    ThinkOpen,
    /// `[redacted]`: reasons without readable text (encrypted or withheld), then answers.
    Redacted,
    /// `[perf]`: about 100 KB of markdown reasoning, then 50 KB of answer, at 200 deltas a
    /// second whatever the token delay: the load the UI benchmark measures.
    Perf,
}

impl Scenario {
    const TAGS: [(&'static str, Scenario); 22] = [
        ("[xss]", Scenario::Xss),
        ("[long-think]", Scenario::LongThink),
        ("[401]", Scenario::Unauthorized),
        ("[no-think]", Scenario::NoThink),
        ("[long]", Scenario::Long),
        ("[slow]", Scenario::Slow),
        ("[think-only]", Scenario::ThinkOnly),
        ("[drop]", Scenario::Drop),
        ("[500]", Scenario::Http500),
        ("[429]", Scenario::Http429),
        ("[error]", Scenario::MidStreamError),
        ("[two-blocks]", Scenario::TwoBlocks),
        ("[utf8-split]", Scenario::Utf8Split),
        ("[stall-mid]", Scenario::StallMid),
        ("[stall]", Scenario::Stall),
        ("[garbage]", Scenario::Garbage),
        ("[bad-utf8]", Scenario::BadUtf8),
        ("[big]", Scenario::Big),
        ("[think-tags]", Scenario::ThinkTags),
        ("[think-open]", Scenario::ThinkOpen),
        ("[redacted]", Scenario::Redacted),
        ("[perf]", Scenario::Perf),
    ];

    /// The scenario a prompt asks for; the first tag found wins.
    pub fn from_prompt(prompt: &str) -> Scenario {
        let lower = prompt.to_ascii_lowercase();
        Self::TAGS
            .iter()
            .filter_map(|(tag, s)| lower.find(tag).map(|at| (at, *s)))
            .min_by_key(|(at, _)| *at)
            .map(|(_, s)| s)
            .unwrap_or(Scenario::ThinkThenAnswer)
    }
}

/// One step of a scripted reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Think(String),
    Answer(String),
    Pause(Duration),
    /// Reasoning the provider does not show (encrypted, withheld), lasting this long.
    Hidden(Duration),
    /// Answer text given as bytes that may not be UTF-8, inside the provider's chunk shape.
    AnswerBytes(Vec<u8>),
    /// Bytes written as they are, outside any chunk shape.
    Raw(Vec<u8>),
    /// An in-stream error payload.
    ErrorPayload(String),
    /// Stop writing and break the connection.
    Cut,
    /// Stop writing and keep the connection open forever.
    Stall,
}

/// A scripted reply: an HTTP status (and body) for failures, or steps ending in a finish reason.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub status: u16,
    pub error_body: Option<String>,
    pub steps: Vec<Step>,
    pub finish: &'static str,
    /// Stream every step at once, ignoring the token delay.
    pub fast: bool,
    /// The script's own pause between chunks, in place of the configured token delay.
    pub pace: Option<Duration>,
}

/// The default scenario's reasoning.
pub const THINKING: &str =
    "The user wants a clear answer, so first I should pin down what is really being asked. \
Let me restate it in my own words and check the assumptions.\n\n\
1. What is known: the question itself and the context of the conversation.\n\
2. What is missing: nothing essential, so I can answer directly.\n\
3. Risks: being too long. A short explanation with one concrete example should do.\n\n\
Let me double-check the reasoning once more… yes, that holds. Now I'll write the answer.";

/// The default scenario's answer.
pub const ANSWER: &str = "Here is what I found, step by step.\n\n\
**Short answer:** yes — and the reasoning above shows why.\n\n\
- First, the question has a direct answer.\n\
- Second, one example makes it concrete: `2 + 2 = 4`.\n\n\
Let me know if you want more detail.";

const SECOND_THINKING: &str =
    "Wait — before I finish, let me verify the example. 2 + 2 is indeed 4, so the answer stands.";

fn long_answer() -> String {
    let mut s = String::from(
        "# A longer answer\n\nThis answer is long on purpose, to show scrolling and rendering.\n\n",
    );
    for i in 1..=12 {
        s.push_str(&format!(
            "## Part {i}\n\nParagraph {i} explains one more aspect in plain words, with *emphasis* and a list:\n\n- point {i}.a\n- point {i}.b\n\n"
        ));
        if i % 4 == 0 {
            s.push_str(&format!(
                "```rust\nfn part_{i}() -> u32 {{\n    {i}\n}}\n```\n\n"
            ));
        }
    }
    s.push_str("| part | status |\n|---|---|\n| 1–12 | done |\n");
    s
}

/// The script for a prompt.
pub fn script(prompt: &str) -> Script {
    let ok = |steps: Vec<Step>| Script {
        status: 200,
        error_body: None,
        steps,
        finish: "stop",
        fast: false,
        pace: None,
    };
    let think = || Step::Think(THINKING.into());
    let answer = || Step::Answer(ANSWER.into());
    match Scenario::from_prompt(prompt) {
        Scenario::ThinkThenAnswer => ok(vec![think(), answer()]),
        Scenario::NoThink => ok(vec![answer()]),
        Scenario::Long => ok(vec![Step::Think("A long answer is wanted; I'll structure it in parts.".into()), Step::Answer(long_answer())]),
        Scenario::Slow => ok(vec![Step::Pause(Duration::from_secs(3)), think(), answer()]),
        Scenario::ThinkOnly => Script { finish: "length", ..ok(vec![think(), Step::Think(" And more, and more…".into())]) },
        Scenario::Drop => ok(vec![think(), Step::Answer("Here is the beginning of the answer, and then".into()), Step::Cut]),
        Scenario::Http500 => Script {
            status: 500,
            error_body: Some(r#"{"error":{"message":"the demo model is having a bad day","type":"server_error"}}"#.into()),
            ..ok(vec![])
        },
        Scenario::Http429 => Script {
            status: 429,
            error_body: Some(r#"{"error":{"message":"rate limit reached for the demo model","type":"rate_limit"}}"#.into()),
            ..ok(vec![])
        },
        Scenario::MidStreamError => ok(vec![think(), Step::Answer("Partial answer".into()), Step::ErrorPayload("the demo model overloaded mid-answer".into())]),
        Scenario::TwoBlocks => ok(vec![think(), answer(), Step::Think(SECOND_THINKING.into()), Step::Answer("\n\nVerified: the answer stands.".into())]),
        Scenario::Utf8Split => ok(vec![Step::Think("Thinking in UTF-8: ünïcødé, 日本語, emoji 🤔.".into()), Step::Answer("Café ☕ — 日本語 — 🎉 done.".into())]),
        Scenario::Stall => ok(vec![Step::Stall]),
        Scenario::StallMid => ok(vec![Step::Think("Let me think about".into()), Step::Stall]),
        Scenario::Garbage => ok(vec![
            Step::Raw(b"data: {this is not json\n\n".to_vec()),
            think(),
            Step::Raw(b"garbage without a field name\n\ndata: \x00\x01\n\n".to_vec()),
            answer(),
        ]),
        Scenario::BadUtf8 => ok(vec![
            Step::Answer("Before the bad bytes.".into()),
            Step::AnswerBytes(b" bad \xff\xfe bytes".to_vec()),
            Step::Answer(" After.".into()),
        ]),
        Scenario::Xss => {
            let payloads = xss_payloads();
            let mut steps = Vec::new();
            for p in &payloads {
                steps.extend(thirds(p).into_iter().map(|piece| Step::Think(piece.to_string())));
                steps.push(Step::Think("\n\n".into()));
            }
            for p in &payloads {
                steps.extend(thirds(p).into_iter().map(|piece| Step::Answer(piece.to_string())));
                steps.push(Step::Answer("\n\n".into()));
            }
            Script { fast: true, ..ok(steps) }
        }
        Scenario::LongThink => {
            let steps: String = (1..=12)
                .map(|i| format!("Step {i}: I check one more angle of the question and note what it changes.\n\n"))
                .collect();
            ok(vec![Step::Think(format!("{THINKING}\n\n{steps}")), answer()])
        }
        Scenario::ThinkTags => ok(inline_think(&["<thi", "nk>\n"])),
        Scenario::ThinkOpen => ok(inline_think(&[])),
        Scenario::Redacted => ok(vec![Step::Hidden(Duration::from_millis(1200)), answer()]),
        Scenario::Perf => Script {
            pace: Some(PERF_PACE),
            ..ok(vec![Step::Think(perf::thinking()), Step::Answer(perf::answer())])
        },
        Scenario::Unauthorized => Script {
            status: 401,
            error_body: Some(r#"{"error":{"message":"Incorrect API key provided: {key}","type":"invalid_request_error"}}"#.into()),
            ..ok(vec![])
        },
        Scenario::Big => {
            let line = "This sentence is one of many in a ten megabyte answer, streamed as fast as possible.\n";
            let mut steps = Vec::new();
            let mut total = 0;
            while total < 10 * 1024 * 1024 {
                let piece = line.repeat(16);
                total += piece.len();
                steps.push(Step::Answer(piece));
            }
            Script { fast: true, ..ok(steps) }
        }
    }
}

/// `[perf]`'s pause between chunks: 200 deltas a second.
const PERF_PACE: Duration = Duration::from_millis(5);

/// The XSS corpus the renderer is tested on (records start with a `----8<---- label` line).
fn xss_payloads() -> Vec<&'static str> {
    const CORPUS: &str = include_str!("../../tests/fixtures/xss-payloads.txt");
    CORPUS
        .split("----8<---- ")
        .filter_map(|record| {
            record
                .split_once('\n')
                .map(|(_, payload)| payload.trim_end_matches('\n'))
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// A text cut in three at character boundaries, so a payload arrives in several deltas.
fn thirds(text: &str) -> Vec<&str> {
    let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    if cuts.len() < 3 {
        return vec![text];
    }
    let (a, b) = (cuts[cuts.len() / 3], cuts[2 * cuts.len() / 3]);
    vec![&text[..a], &text[a..b], &text[b..]]
}

/// The default reply with its reasoning written inline in the answer text, after `open` (the
/// opening tag, split in two, or nothing when the template opened it), closed by a split
/// `</think>`.
fn inline_think(open: &[&str]) -> Vec<Step> {
    let mut steps: Vec<Step> = open.iter().map(|t| Step::Answer(t.to_string())).collect();
    steps.extend([
        Step::Answer(THINKING.into()),
        Step::Answer("</th".into()),
        Step::Answer("ink>\n\n".into()),
        Step::Answer(ANSWER.into()),
    ]);
    steps
}

/// Splits text into token-sized pieces (a word with its leading space), as a model streams.
pub fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        if in_word && space {
            out.push(&text[start..i]);
            start = i;
        }
        in_word = !space;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// What the pacer writes: chunks paced by the token delay, or control steps.
#[derive(Clone, Debug, PartialEq)]
pub enum Emit {
    Chunk(Bytes),
    Pause(Duration),
    Cut,
    Stall,
}

/// Renders a script as an OpenAI Chat Completions stream.
pub fn render_openai(script: &Script) -> Vec<Emit> {
    framing::render(ProviderKind::OpenAi, script, true)
}

/// Renders a script as `provider` streams it (Gemini as SSE when `sse`, else a JSON array).
pub fn render(provider: ProviderKind, script: &Script, sse: bool) -> Vec<Emit> {
    framing::render(provider, script, sse)
}

/// Splits a chunk holding a multi-byte character into two writes in the middle of it.
fn split_multibyte(emits: Vec<Emit>) -> Vec<Emit> {
    let mut out = Vec::new();
    for emit in emits {
        match emit {
            Emit::Chunk(bytes) => match bytes.iter().position(|b| *b >= 0xC0) {
                Some(at) => {
                    out.push(Emit::Chunk(bytes.slice(..at + 1)));
                    out.push(Emit::Chunk(bytes.slice(at + 1..)));
                }
                None => out.push(Emit::Chunk(bytes)),
            },
            other => out.push(other),
        }
    }
    out
}

/// Counters the tests read at `GET /demo/stats` to see what the model saw.
#[derive(Default, Debug)]
pub struct DemoStats {
    pub started: AtomicU64,
    pub completed: AtomicU64,
    pub disconnected: AtomicU64,
    pub active: AtomicU64,
}

#[derive(Clone)]
struct DemoState {
    delay: Duration,
    stats: Arc<DemoStats>,
}

/// The demo server's routes.
pub fn router(config: &DemoConfig) -> (Router, Arc<DemoStats>) {
    let stats = Arc::new(DemoStats::default());
    let state = DemoState {
        delay: config.token_delay,
        stats: stats.clone(),
    };
    let router = Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/messages", post(messages))
        .route("/v1/responses", post(responses))
        .route("/v1beta/models/{model_action}", post(gemini))
        .route("/api/chat", post(ollama_chat))
        .route("/v1/models", get(models))
        .route("/demo/stats", get(stats_handler))
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
        ProviderKind::Gemini => format!("http://{addr}/v1beta"),
        ProviderKind::Ollama => format!("http://{addr}"),
    }
}

async fn models() -> Json<Value> {
    Json(json!({"object": "list", "data": [{"id": "ponder-demo", "object": "model"}]}))
}

async fn stats_handler(State(state): State<DemoState>) -> Json<Value> {
    let s = &state.stats;
    Json(json!({
        "started": s.started.load(Ordering::SeqCst),
        "completed": s.completed.load(Ordering::SeqCst),
        "disconnected": s.disconnected.load(Ordering::SeqCst),
        "active": s.active.load(Ordering::SeqCst),
    }))
}

/// The text of the last user message, wherever the provider's request keeps it.
fn last_user_message(provider: ProviderKind, body: &Value) -> String {
    let list = match provider {
        ProviderKind::Responses => "input",
        ProviderKind::Gemini => "contents",
        _ => "messages",
    };
    if let Some(text) = body.get(list).and_then(Value::as_str) {
        return text.to_string();
    }
    body.get(list)
        .and_then(Value::as_array)
        .and_then(|msgs| {
            msgs.iter()
                .rev()
                .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        })
        .and_then(content_text)
        .unwrap_or_default()
}

/// A message's `content` (Gemini: `parts`): a string, or the text of its parts.
fn content_text(message: &Value) -> Option<String> {
    match message.get("content").or_else(|| message.get("parts"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        ),
        other => Some(other.to_string()),
    }
}

/// What each real server refuses with a 400, so a wrong request fails here as it would there.
fn validate(provider: ProviderKind, headers: &HeaderMap, body: &Value) -> Result<(), String> {
    let array = |key: &str| {
        body.get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    match provider {
        ProviderKind::OpenAi | ProviderKind::Ollama => {
            if !array("messages") {
                return Err("messages: a non-empty array is required".into());
            }
            if !streaming {
                return Err("this demo only streams: set stream to true".into());
            }
        }
        ProviderKind::Anthropic => {
            if !headers.contains_key("anthropic-version") {
                return Err("anthropic-version: header is required".into());
            }
            let Some(max_tokens) = body.get("max_tokens").and_then(Value::as_u64) else {
                return Err("max_tokens: Field required".into());
            };
            if !array("messages") || !streaming {
                return Err("messages and stream: true are required".into());
            }
            if let Some(thinking) = body.get("thinking") {
                let budget = thinking
                    .get("budget_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                if thinking.get("type").and_then(Value::as_str) == Some("enabled")
                    && !(1024..max_tokens).contains(&budget)
                {
                    return Err(
                        "thinking.budget_tokens: must be ≥ 1024 and less than max_tokens".into(),
                    );
                }
            }
        }
        ProviderKind::Responses => {
            if !(array("input") || body.get("input").is_some_and(Value::is_string)) || !streaming {
                return Err("input and stream: true are required".into());
            }
        }
        ProviderKind::Gemini => {
            if !array("contents") {
                return Err("contents is not specified".into());
            }
        }
    }
    Ok(())
}

/// An error body in the provider's own shape.
fn error_body(provider: ProviderKind, status: u16, message: &str, kind: &str) -> Value {
    match provider {
        ProviderKind::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        ProviderKind::Gemini => {
            json!({"error": {"code": status, "message": message, "status": kind.to_ascii_uppercase()}})
        }
        ProviderKind::Ollama => json!({"error": message}),
        ProviderKind::OpenAi | ProviderKind::Responses => {
            json!({"error": {"message": message, "type": kind}})
        }
    }
}

/// The API key a request carried, in whichever header its provider uses.
fn api_key(headers: &HeaderMap) -> String {
    ["authorization", "x-api-key", "x-goog-api-key"]
        .iter()
        .find_map(|name| headers.get(*name).and_then(|v| v.to_str().ok()))
        .map(|v| v.trim_start_matches("Bearer ").to_string())
        .unwrap_or_default()
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// One streamed reply of the demo in `provider`'s format.
fn reply(
    provider: ProviderKind,
    state: &DemoState,
    headers: &HeaderMap,
    body: &[u8],
    sse: bool,
) -> Response {
    let request = match serde_json::from_slice::<Value>(body) {
        Ok(request) => request,
        Err(_) => {
            let error = error_body(provider, 400, "body is not JSON", "invalid_request_error");
            return json_response(StatusCode::BAD_REQUEST, &error);
        }
    };
    if let Err(message) = validate(provider, headers, &request) {
        let error = error_body(provider, 400, &message, "invalid_request_error");
        return json_response(StatusCode::BAD_REQUEST, &error);
    }
    let prompt = last_user_message(provider, &request);
    let script = script(&prompt);
    if script.status != 200 {
        let status =
            StatusCode::from_u16(script.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let said: Value = script
            .error_body
            .as_deref()
            .and_then(|b| serde_json::from_str(b).ok())
            .unwrap_or_default();
        let message = said["error"]["message"]
            .as_str()
            .unwrap_or("error")
            .replace("{key}", &api_key(headers));
        let kind = said["error"]["type"].as_str().unwrap_or("api_error");
        let mut response =
            json_response(status, &error_body(provider, script.status, &message, kind));
        if script.status == 429 {
            response
                .headers_mut()
                .insert("retry-after", axum::http::HeaderValue::from_static("7"));
        }
        return response;
    }
    let mut emits = render(provider, &script, sse);
    if Scenario::from_prompt(&prompt) == Scenario::Utf8Split {
        emits = split_multibyte(emits);
    }
    let delay = if script.fast {
        Duration::ZERO
    } else {
        script.pace.unwrap_or(state.delay)
    };
    let content_type = match provider {
        ProviderKind::Ollama => "application/x-ndjson",
        ProviderKind::Gemini if !sse => "application/json",
        _ => "text/event-stream",
    };
    stream_response(emits, delay, state.stats.clone(), content_type)
}

async fn chat_completions(
    State(state): State<DemoState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    reply(ProviderKind::OpenAi, &state, &headers, &body, true)
}

async fn messages(State(state): State<DemoState>, headers: HeaderMap, body: Bytes) -> Response {
    reply(ProviderKind::Anthropic, &state, &headers, &body, true)
}

async fn responses(State(state): State<DemoState>, headers: HeaderMap, body: Bytes) -> Response {
    reply(ProviderKind::Responses, &state, &headers, &body, true)
}

/// `POST /v1beta/models/{model}:streamGenerateContent[?alt=sse]`.
async fn gemini(
    State(state): State<DemoState>,
    Path(model_action): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !model_action.ends_with(":streamGenerateContent") {
        let error = error_body(
            ProviderKind::Gemini,
            404,
            "only :streamGenerateContent is served",
            "not_found",
        );
        return json_response(StatusCode::NOT_FOUND, &error);
    }
    let sse = query.get("alt").map(String::as_str) == Some("sse");
    reply(ProviderKind::Gemini, &state, &headers, &body, sse)
}

async fn ollama_chat(State(state): State<DemoState>, headers: HeaderMap, body: Bytes) -> Response {
    reply(ProviderKind::Ollama, &state, &headers, &body, true)
}

struct StreamGuard {
    stats: Arc<DemoStats>,
    finished: bool,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.stats.active.fetch_sub(1, Ordering::SeqCst);
        if self.finished {
            self.stats.completed.fetch_add(1, Ordering::SeqCst);
        } else {
            self.stats.disconnected.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// How far behind its schedule the pacer may fall and still catch up.
const MAX_CATCH_UP: Duration = Duration::from_millis(100);

struct Pacer {
    emits: std::vec::IntoIter<Emit>,
    guard: StreamGuard,
    /// When the next chunk is due (`None` before the first one). Chunks keep to a schedule
    /// rather than sleeping `delay` after each write: timers overshoot by up to a millisecond,
    /// which would turn a 5 ms pace (200 deltas/s) into about 170 a second.
    due: Option<tokio::time::Instant>,
    delay: Duration,
}

impl Pacer {
    async fn next(&mut self) -> Option<std::io::Result<Bytes>> {
        loop {
            match self.emits.next() {
                None => {
                    self.guard.finished = true;
                    return None;
                }
                Some(Emit::Chunk(bytes)) => {
                    if !self.delay.is_zero() {
                        if let Some(due) = self.due {
                            tokio::time::sleep_until(due).await;
                        }
                        let now = tokio::time::Instant::now();
                        // Late chunks catch up, but a reader that fell far behind gets no burst.
                        let on_time = match self.due {
                            Some(due) if now <= due + MAX_CATCH_UP => due,
                            _ => now,
                        };
                        self.due = Some(on_time + self.delay);
                    }
                    return Some(Ok(bytes));
                }
                Some(Emit::Pause(d)) => {
                    tokio::time::sleep(d).await;
                    self.due = self.due.map(|_| tokio::time::Instant::now() + self.delay);
                }
                Some(Emit::Cut) => {
                    self.guard.finished = true;
                    return Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "demo: connection dropped",
                    )));
                }
                Some(Emit::Stall) => std::future::pending::<()>().await,
            }
        }
    }
}

/// Streams `emits` with `delay` before each chunk, counting how the stream ends.
pub fn stream_response(
    emits: Vec<Emit>,
    delay: Duration,
    stats: Arc<DemoStats>,
    content_type: &'static str,
) -> Response {
    stats.started.fetch_add(1, Ordering::SeqCst);
    stats.active.fetch_add(1, Ordering::SeqCst);
    let pacer = Pacer {
        emits: emits.into_iter(),
        guard: StreamGuard {
            stats,
            finished: false,
        },
        due: None,
        delay,
    };
    let body = futures::stream::unfold(pacer, |mut pacer| async move {
        let item = pacer.next().await?;
        Some((item, pacer))
    })
    .boxed();
    Response::builder()
        .header("content-type", content_type)
        .header("cache-control", "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_pick_scenarios_and_the_first_tag_wins() {
        assert_eq!(Scenario::from_prompt("hello"), Scenario::ThinkThenAnswer);
        assert_eq!(
            Scenario::from_prompt("please [No-Think] now"),
            Scenario::NoThink
        );
        assert_eq!(Scenario::from_prompt("[stall-mid]"), Scenario::StallMid);
        assert_eq!(Scenario::from_prompt("[drop] then [500]"), Scenario::Drop);
    }

    #[test]
    fn tokens_reassemble_to_the_text() {
        for text in [
            THINKING,
            ANSWER,
            "  leading",
            "trailing  ",
            "日本語 の テキスト",
        ] {
            assert_eq!(tokens(text).concat(), text);
        }
        assert_eq!(tokens("a bc  d"), ["a", " bc", "  d"]);
    }

    #[test]
    fn openai_rendering_ends_with_finish_usage_and_done() {
        let emits = render_openai(&script("hi"));
        let Some(Emit::Chunk(last)) = emits.last() else {
            panic!("no chunk")
        };
        let last = String::from_utf8(last.to_vec()).unwrap();
        assert!(last.contains("\"usage\"") && last.ends_with("data: [DONE]\n\n"));
    }

    #[test]
    fn the_xss_scenario_streams_the_whole_corpus_in_pieces() {
        let payloads = xss_payloads();
        assert!(payloads.len() >= 100);
        assert_eq!(payloads[0], "<script>alert(1)</script>");
        let script = script("[xss]");
        let answer: String = script
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Answer(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            answer,
            payloads
                .iter()
                .map(|p| format!("{p}\n\n"))
                .collect::<String>()
        );
        assert_eq!(thirds("abcdef"), ["ab", "cd", "ef"]);
        assert_eq!(thirds("日本語"), ["日", "本", "語"]);
    }

    #[test]
    fn the_perf_scenario_streams_its_texts_word_by_word_at_its_own_pace() {
        let script = script("bench [perf]");
        assert_eq!(script.pace, Some(Duration::from_millis(5)));
        assert!(!script.fast);
        assert_eq!(
            script.steps,
            [Step::Think(perf::thinking()), Step::Answer(perf::answer())]
        );
        let words = tokens(&perf::thinking()).len() + tokens(&perf::answer()).len();
        let chunks = render_openai(&script)
            .iter()
            .filter(|e| matches!(e, Emit::Chunk(_)))
            .count();
        assert_eq!(
            chunks,
            words + 3,
            "a role chunk, one per word, finish, usage"
        );
    }

    #[test]
    fn splitting_really_cuts_inside_a_character() {
        let emits = split_multibyte(vec![Emit::Chunk(Bytes::from("é"))]);
        assert_eq!(emits.len(), 2);
        let Emit::Chunk(first) = &emits[0] else {
            panic!()
        };
        assert!(std::str::from_utf8(first).is_err());
    }
}
