//! The demo model's HTTP endpoints, one per provider format, and what each real server
//! refuses with a 400.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::framing::{render_with_files, split_multibyte};
use super::pacer::stream_response;
use super::reasoning;
use super::scenarios::Scenario;
use super::DemoState;
use crate::server::config::ProviderKind;

pub(super) async fn models() -> Json<Value> {
    Json(reasoning::openai_list())
}

pub(super) async fn gemini_models() -> Json<Value> {
    Json(reasoning::gemini_list())
}

pub(super) async fn ollama_tags() -> Json<Value> {
    Json(reasoning::ollama_tags())
}

pub(super) async fn ollama_show(body: Bytes) -> Response {
    let model = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|b| b.get("model").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default();
    match reasoning::ollama_show(&model) {
        Some(shown) => json_response(StatusCode::OK, &shown),
        None => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("model '{model}' not found")}),
        ),
    }
}

pub(super) async fn stats_handler(State(state): State<DemoState>) -> Json<Value> {
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
        ProviderKind::Responses | ProviderKind::Interactions => "input",
        ProviderKind::Gemini => "contents",
        _ => "messages",
    };
    if provider == ProviderKind::Interactions {
        return super::interactions::last_user_input(body);
    }
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
        ProviderKind::Interactions => super::interactions::validate(headers, body)?,
    }
    Ok(())
}

/// An error body in the provider's own shape.
fn error_body(provider: ProviderKind, status: u16, message: &str, kind: &str) -> Value {
    match provider {
        ProviderKind::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        ProviderKind::Gemini | ProviderKind::Interactions => {
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
    path_model: Option<&str>,
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
    if let Some(title) = super::received::title_reply(provider, &request) {
        let script = super::scenarios::Script {
            status: 200,
            error_body: None,
            steps: vec![super::scenarios::Step::Answer(title)],
            finish: "stop",
            fast: true,
            pace: None,
            words: 1,
        };
        let content_type = match provider {
            ProviderKind::Ollama => "application/x-ndjson",
            ProviderKind::Gemini if !sse => "application/json",
            _ => "text/event-stream",
        };
        // Not one of the streams the tests count: Ponder asks it on its own.
        let uncounted = std::sync::Arc::new(super::pacer::DemoStats::default());
        return stream_response(
            render_with_files(provider, &script, sse, Default::default()),
            Duration::ZERO,
            uncounted,
            content_type,
        );
    }
    let prompt = last_user_message(provider, &request);
    let mut scenario = Scenario::from_prompt(&prompt);
    if scenario == Scenario::ErrorOnce {
        let first = state
            .failed_once
            .lock()
            .map(|mut seen| seen.insert(prompt.clone()))
            .unwrap_or(false);
        if !first {
            scenario = Scenario::ThinkThenAnswer;
        }
    }
    let asked = reasoning::asked(provider, &request, path_model);
    let reject_all = prompt.contains("[reject-replay]");
    if let Err(message) = super::replay::check(provider, &request, &asked.model, reject_all) {
        let error = error_body(provider, 400, &message, "invalid_request_error");
        return json_response(StatusCode::BAD_REQUEST, &error);
    }
    let sampled = super::sampling::received(provider, &request);
    if let Some(message) = super::sampling::refusal(provider, &asked.model, &sampled) {
        let error = error_body(provider, 400, &message, "invalid_request_error");
        return json_response(StatusCode::BAD_REQUEST, &error);
    }
    let mut script = match reasoning::apply(scenario.script(), &asked) {
        Ok(script) => script,
        Err(message) => {
            let error = error_body(provider, 400, &message, "invalid_request_error");
            return json_response(StatusCode::BAD_REQUEST, &error);
        }
    };
    let report = if prompt.contains("[system]") {
        Some(super::received::system_report(provider, &request))
    } else if prompt.contains("[params]") {
        Some(super::sampling::report(&sampled))
    } else {
        super::received::report(provider, &request)
    };
    if let Some(report) = report {
        let mut first = true;
        script.steps.retain_mut(|step| match step {
            super::scenarios::Step::Answer(text) if first => {
                first = false;
                *text = report.clone();
                true
            }
            super::scenarios::Step::Answer(_) => false,
            _ => true,
        });
    }
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
    let n = state.responses.fetch_add(1, Ordering::Relaxed);
    let mut emits = super::replay::seal_emits(
        render_with_files(
            provider,
            &script,
            sse,
            super::received::file_tokens(provider, &request),
        ),
        &super::replay::seal(&asked.model, n),
    );
    if scenario == Scenario::Utf8Split {
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

pub(super) async fn chat_completions(
    State(state): State<DemoState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    reply(ProviderKind::OpenAi, &state, &headers, &body, true, None)
}

pub(super) async fn messages(
    State(state): State<DemoState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    reply(ProviderKind::Anthropic, &state, &headers, &body, true, None)
}

pub(super) async fn responses(
    State(state): State<DemoState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    reply(ProviderKind::Responses, &state, &headers, &body, true, None)
}

/// `POST /v1beta/models/{model}:streamGenerateContent[?alt=sse]`.
pub(super) async fn gemini(
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
    let model = model_action.trim_end_matches(":streamGenerateContent");
    reply(
        ProviderKind::Gemini,
        &state,
        &headers,
        &body,
        sse,
        Some(model),
    )
}

/// `POST /v1beta/interactions` (streamed).
pub(super) async fn interactions(
    State(state): State<DemoState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    reply(
        ProviderKind::Interactions,
        &state,
        &headers,
        &body,
        true,
        None,
    )
}

pub(super) async fn ollama_chat(
    State(state): State<DemoState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    reply(ProviderKind::Ollama, &state, &headers, &body, true, None)
}
