//! OpenAI-compatible Chat Completions: `delta.reasoning_content` / `delta.reasoning` are thinking,
//! `delta.content` is the answer; `[DONE]` is optional, `finish_reason` ends the turn.

use serde::Deserialize;
use serde_json::json;

use super::{Piece, UpstreamRequest, WireParser};
use crate::api::sse::{SseDecoder, SseFrame};
use crate::domain::{ChatMessage, Role, ThinkingKind, Usage};
use crate::server::config::Config;

/// The request body: streaming, with usage in the last chunk.
pub fn request(config: &Config, base_url: &str, messages: &[ChatMessage]) -> UpstreamRequest {
    let messages: Vec<_> = messages
        .iter()
        .map(|m| {
            json!({
                "role": match m.role { Role::User => "user", Role::Assistant => "assistant" },
                "content": m.content,
            })
        })
        .collect();
    let mut headers = vec![("content-type", "application/json".to_string())];
    if let Some(key) = &config.api_key {
        headers.push(("authorization", format!("Bearer {key}")));
    }
    UpstreamRequest {
        url: format!("{base_url}/chat/completions"),
        headers,
        body: json!({
            "model": config.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": config.max_output_tokens,
        }),
    }
}

#[derive(Deserialize, Default)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<UsageIn>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize, Default)]
struct UsageIn {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens_details: Option<Details>,
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct Details {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// Parser state for one Chat Completions stream.
#[derive(Default)]
pub struct ChatCompletionsParser {
    sse: SseDecoder,
    frames: Vec<SseFrame>,
    done: bool,
}

impl ChatCompletionsParser {
    fn on_frame(&mut self, frame: SseFrame, out: &mut Vec<Piece>) {
        let data = frame.data.trim();
        if data.is_empty() {
            return;
        }
        if data == "[DONE]" {
            self.done = true;
            out.push(Piece::End);
            return;
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(e) => {
                tracing::warn!(error = %e, "skipping an upstream line that is not a chunk");
                return;
            }
        };
        for choice in chunk.choices {
            if let Some(delta) = choice.delta {
                for text in [delta.reasoning_content, delta.reasoning]
                    .into_iter()
                    .flatten()
                {
                    if !text.is_empty() {
                        out.push(Piece::Reasoning {
                            text,
                            kind: ThinkingKind::Raw,
                        });
                    }
                }
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    out.push(Piece::Answer(text));
                }
            }
            if let Some(reason) = choice.finish_reason {
                out.push(Piece::Finish(reason));
            }
        }
        if let Some(u) = chunk.usage {
            out.push(Piece::Usage(Usage {
                input_tokens: u.prompt_tokens,
                output_tokens: u.completion_tokens,
                reasoning_tokens: u
                    .completion_tokens_details
                    .and_then(|d| d.reasoning_tokens)
                    .or(u.reasoning_tokens),
            }));
        }
        if frame.event.as_deref() == Some("error")
            || chunk.error.as_ref().is_some_and(|e| !e.is_null())
        {
            let message = chunk
                .error
                .map(|e| super::error_message_from_body(&e.to_string()))
                .unwrap_or_else(|| "the model server reported an error".into());
            out.push(Piece::Error {
                message,
                retryable: true,
            });
        }
    }
}

impl WireParser for ChatCompletionsParser {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Piece>) {
        if self.done {
            return;
        }
        self.sse.push(chunk, &mut self.frames);
        for frame in std::mem::take(&mut self.frames) {
            if !self.done {
                self.on_frame(frame, out);
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<Piece>) {
        self.sse.finish(&mut self.frames);
        for frame in std::mem::take(&mut self.frames) {
            if !self.done {
                self.on_frame(frame, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Vec<Piece> {
        let mut p = ChatCompletionsParser::default();
        let mut out = Vec::new();
        p.feed(body.as_bytes(), &mut out);
        p.finish(&mut out);
        out
    }

    #[test]
    fn reasoning_comes_before_content_in_one_chunk() {
        let out = parse(
            "data: {\"choices\":[{\"delta\":{\"content\":\"A\",\"reasoning_content\":\"R\"}}]}\n\n\
             data: {\"choices\":[{\"delta\":{\"reasoning\":\"S\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"completion_tokens_details\":{\"reasoning_tokens\":1}}}\n\n\
             data: [DONE]\n\n",
        );
        assert_eq!(
            out,
            [
                Piece::Reasoning {
                    text: "R".into(),
                    kind: ThinkingKind::Raw
                },
                Piece::Answer("A".into()),
                Piece::Reasoning {
                    text: "S".into(),
                    kind: ThinkingKind::Raw
                },
                Piece::Finish("stop".into()),
                Piece::Usage(Usage {
                    input_tokens: Some(1),
                    output_tokens: Some(2),
                    reasoning_tokens: Some(1)
                }),
                Piece::End,
            ]
        );
    }

    #[test]
    fn null_and_empty_fields_yield_nothing() {
        let out = parse(
            "data: {\"choices\":[{\"delta\":{\"content\":null,\"reasoning_content\":\"\"}}]}\n\n",
        );
        assert!(out.is_empty());
    }

    #[test]
    fn garbage_lines_are_skipped() {
        let out =
            parse("data: not json\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n");
        assert_eq!(out, [Piece::Answer("ok".into())]);
    }

    #[test]
    fn an_error_key_is_an_error_piece() {
        let out = parse("data: {\"error\":{\"message\":\"overloaded\"}}\n\n");
        assert_eq!(
            out,
            [Piece::Error {
                message: "overloaded".into(),
                retryable: true
            }]
        );
    }

    #[test]
    fn the_request_streams_with_usage_and_carries_the_key_only_in_a_header() {
        let config = Config::from_lookup(|n| match n {
            "PONDER_API_KEY" => Some("sk-x".into()),
            "PONDER_MODEL" => Some("m".into()),
            _ => None,
        })
        .unwrap();
        let req = request(&config, "http://h/v1", &[ChatMessage::user("hi")]);
        assert_eq!(req.url, "http://h/v1/chat/completions");
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["model"], "m");
        assert_eq!(req.body["messages"][0]["role"], "user");
        assert!(!req.body.to_string().contains("sk-x"));
        assert!(req
            .headers
            .contains(&("authorization", "Bearer sk-x".into())));
    }
}
