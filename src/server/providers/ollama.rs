//! Ollama's native API: `POST /api/chat` with `think: true`, answered as NDJSON.
//!
//! Each line is an object: `message.thinking` is reasoning, `message.content` the answer (and
//! the top-level `thinking` / `response` of `/api/generate`, same meaning); the line with
//! `done: true` carries `done_reason` and the counts. An in-band `{"error": "…"}` line fails
//! the turn with the status already 200.

use crate::domain::FinishReason;
use crate::server::config::ProviderKind;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{LineHandler, Ndjson, Piece, TurnOptions, UpstreamRequest};
use crate::domain::{ChatMessage, ThinkingKind, Usage};
use crate::server::config::Config;

/// The request: streaming NDJSON with thinking separated from the answer. The base URL is the
/// server's root (`http://localhost:11434`), not its OpenAI-compatible `/v1`.
///
/// `think` is `false`, `true` or the effort word; it is left out for a model known not to
/// reason (Ollama refuses it there). "Answer now" continues a final assistant message, which
/// Ollama's chat templates leave open.
pub fn request(
    config: &Config,
    base_url: &str,
    messages: &[ChatMessage],
    options: &TurnOptions,
) -> UpstreamRequest {
    let mut headers = vec![("content-type", "application/json".to_string())];
    if let Some(key) = &config.api_key {
        headers.push(("authorization", format!("Bearer {key}")));
    }
    let mut list = super::openai::role_content(ProviderKind::Ollama, messages);
    let mut body = json!({
        "model": options.model,
        "stream": true,
        "options": {"num_predict": options.max_tokens(config)},
    });
    options.put_sampling(&mut body["options"], "temperature", "top_p");
    let settings = super::effective_settings(options);
    let think = match (settings.thinking, settings.effort) {
        (Some(false), _) => Some(json!(false)),
        (_, Some(effort)) => Some(json!(effort.as_str())),
        (Some(true), None) => Some(json!(true)),
        // A model that takes levels but cannot be switched off (gpt-oss) gets the lowest.
        (None, None) if options.answer_now.is_some() => {
            Some(if options.controls.effort && !options.controls.toggle {
                json!("low")
            } else {
                json!(false)
            })
        }
        (None, None) => options.controls.reasons.then_some(json!(true)),
    };
    if let Some(think) = think {
        body["think"] = think;
    }
    if let Some(super::AnswerNow::Prefill(reasoning)) = &options.answer_now {
        list.push(
            json!({"role": "assistant", "content": super::AnswerNow::prefill_text(reasoning)}),
        );
    }
    if let Some(text) = &options.instructions {
        list.insert(0, json!({"role": "system", "content": text}));
    }
    body["messages"] = serde_json::Value::Array(list);
    UpstreamRequest {
        url: format!("{base_url}/api/chat"),
        headers,
        body,
    }
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    message: Option<MessageIn>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    response: Option<String>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct MessageIn {
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    content: Option<String>,
    /// Functions the model asks the app to run, each whole in one line.
    #[serde(default)]
    tool_calls: Vec<Value>,
}

/// Line handling for one Ollama stream.
#[derive(Default)]
pub struct OllamaLines {
    done: bool,
    calls: u32,
}

/// Parser for one Ollama NDJSON stream.
pub type OllamaParser = Ndjson<OllamaLines>;

impl LineHandler for OllamaLines {
    fn on_line(&mut self, line: &str, out: &mut Vec<Piece>) {
        if self.done {
            return;
        }
        let parsed: Line = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(e) => {
                super::skip_unparseable("ollama", &e, line.len());
                return;
            }
        };
        if let Some(error) = parsed.error.filter(|e| !e.is_null()) {
            out.push(super::error_piece(&error));
            self.done = true;
            return;
        }
        let (thinking, content, calls) = match parsed.message {
            Some(m) => (m.thinking, m.content, m.tool_calls),
            None => (parsed.thinking, parsed.response, Vec::new()),
        };
        if let Some(text) = thinking.filter(|t| !t.is_empty()) {
            out.push(Piece::Reasoning {
                text,
                kind: ThinkingKind::Raw,
            });
        }
        if let Some(text) = content.filter(|t| !t.is_empty()) {
            out.push(Piece::Answer(text));
        }
        for call in calls {
            let function = call.get("function").unwrap_or(&call);
            self.calls += 1;
            out.push(Piece::ToolCall {
                id: format!("call-{}", self.calls),
                name: function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                input: function
                    .get("arguments")
                    .map(super::input_of)
                    .unwrap_or_default(),
            });
        }
        if parsed.done {
            let reason = parsed
                .done_reason
                .map_or(FinishReason::Stop, |r| FinishReason::parse(&r));
            out.push(Piece::Finish(super::finished(reason, self.calls > 0)));
            out.push(Piece::Usage(Usage {
                input_tokens: parsed.prompt_eval_count,
                output_tokens: parsed.eval_count,
                reasoning_tokens: None,
                file_tokens: None,
                ..Default::default()
            }));
            out.push(Piece::End);
            self.done = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Vec<Piece> {
        crate::server::providers::parse_whole(OllamaParser::default(), body.as_bytes())
    }

    #[test]
    fn thinking_then_content_then_done_with_counts() {
        let out = parse(concat!(
            "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Okay\"},\"done\":false}\n",
            "not json\n",
            "{\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\r\n",
            "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"length\",\"prompt_eval_count\":8,\"eval_count\":20}"
        ));
        assert_eq!(
            out,
            [
                Piece::Reasoning {
                    text: "Okay".into(),
                    kind: ThinkingKind::Raw
                },
                Piece::Answer("Hi".into()),
                Piece::Finish("length".into()),
                Piece::Usage(Usage {
                    input_tokens: Some(8),
                    output_tokens: Some(20),
                    reasoning_tokens: None,
                    file_tokens: None,
                    ..Default::default()
                }),
                Piece::End,
            ]
        );
    }

    #[test]
    fn an_error_line_fails_the_turn() {
        let out = parse(
            "{\"error\":\"an error was encountered while running the model\"}\n{\"done\":true}\n",
        );
        assert_eq!(
            out,
            [Piece::Error(crate::server::providers::model_error(
                Some("an error was encountered while running the model"),
                true
            ))]
        );
    }

    #[test]
    fn the_request_turns_thinking_on_at_the_native_endpoint() {
        let config = Config::from_lookup(|_| None).unwrap();
        let req = request(
            &config,
            "http://localhost:11434",
            &[ChatMessage::user("hi")],
            &super::super::TurnOptions {
                controls: crate::domain::Controls::new(true, true, false),
                ..super::super::TurnOptions::default_for(&config)
            },
        );
        assert_eq!(req.url, "http://localhost:11434/api/chat");
        assert_eq!(req.body["think"], true);
        assert_eq!(req.body["stream"], true);
        let plain = request(
            &config,
            "http://localhost:11434",
            &[ChatMessage::user("hi")],
            &super::super::TurnOptions::default_for(&config),
        );
        assert!(
            plain.body.get("think").is_none(),
            "not for a model that does not reason"
        );
    }

    #[test]
    fn tool_calls_become_steps() {
        let out = crate::server::providers::parse_whole(
            OllamaParser::default(),
            b"{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"weather\",\"arguments\":{\"city\":\"Paris\"}}}]},\"done\":false}\n",
        );
        assert_eq!(
            out,
            [Piece::ToolCall {
                id: "call-1".into(),
                name: "weather".into(),
                input: r#"{"city":"Paris"}"#.into()
            }]
        );
    }
}
