//! The demo's scripts in each provider's wire format, as the real servers frame them: the same
//! steps become Chat Completions chunks, Anthropic content blocks, Responses items, Gemini
//! chunks or Ollama lines.

use std::time::Duration;

use axum::body::Bytes;
use serde_json::{json, Value};

use super::frame_kit::{chunk, sse_event, tool_arguments, Counts, Framing, PROMPT_TOKENS, SEAL};
use super::pacer::Emit;
use super::scenarios::{DemoTool, Script, Step};
use crate::server::config::ProviderKind;

/// Stands for raw bytes in a rendered chunk, replaced after rendering (invalid UTF-8 cannot
/// travel through a JSON serializer).
const SPLICE: &str = "@@ponder-demo-raw-bytes@@";

/// Tokens the demo claims for reasoning it does not show.
const HIDDEN_TOKENS: u64 = 64;

/// Renders `script` as `provider` streams it. `sse` picks Gemini's SSE framing over its
/// streamed JSON array.
pub fn render(provider: ProviderKind, script: &Script, sse: bool) -> Vec<Emit> {
    render_with_files(provider, script, sse, Default::default())
}

/// [`render`], for a request whose files took `files` of the prompt (which Gemini and the
/// Interactions API report apart).
pub fn render_with_files(
    provider: ProviderKind,
    script: &Script,
    sse: bool,
    files: super::received::FileTokens,
) -> Vec<Emit> {
    if script.steps.first() == Some(&Step::Stall) {
        return vec![Emit::Stall];
    }
    let mut framing: Box<dyn Framing> = match provider {
        ProviderKind::OpenAi => Box::new(OpenAi::default()),
        ProviderKind::Anthropic => Box::new(Anthropic::default()),
        ProviderKind::Responses => Box::new(Responses::default()),
        ProviderKind::Gemini => Box::new(Gemini {
            sse,
            ..Gemini::default()
        }),
        ProviderKind::Interactions => Box::new(super::interactions::Interactions::default()),
        ProviderKind::Ollama => Box::new(Ollama),
    };
    let mut out = Vec::new();
    let mut counts = Counts {
        files,
        ..Counts::default()
    };
    framing.begin(&mut out);
    for step in &script.steps {
        match step {
            Step::Think(text) => {
                for t in script.pieces(text) {
                    counts.reasoning_chars += t.len() as u64;
                    framing.think(t, &counts, &mut out);
                }
            }
            Step::Answer(text) => {
                for t in script.pieces(text) {
                    counts.answer_chars += t.len() as u64;
                    framing.answer(t, &counts, &mut out);
                }
            }
            Step::AnswerBytes(bytes) => {
                counts.answer_chars += bytes.len() as u64;
                let mut rendered = Vec::new();
                framing.answer(SPLICE, &counts, &mut rendered);
                out.extend(rendered.into_iter().map(|e| splice(e, bytes)));
            }
            Step::Hidden(pause) => {
                counts.hidden += HIDDEN_TOKENS;
                framing.hidden(*pause, &mut out);
            }
            Step::Omitted(pause) => {
                counts.hidden += HIDDEN_TOKENS;
                framing.omitted(*pause, &mut out);
            }
            Step::Pause(d) => out.push(Emit::Pause(*d)),
            Step::Raw(bytes) => out.push(Emit::Chunk(Bytes::from(bytes.clone()))),
            Step::ErrorPayload(message) => {
                framing.error(message, &mut out);
                return out;
            }
            Step::Cut => {
                out.push(Emit::Cut);
                return out;
            }
            Step::Stall => {
                out.push(Emit::Stall);
                return out;
            }
            Step::Tool(tool) => framing.tool(tool, &mut out),
            Step::Cite(url, title) => framing.cite(url, title, &mut out),
        }
    }
    framing.end(script.finish, &counts, &mut out);
    out
}

fn splice(emit: Emit, bytes: &[u8]) -> Emit {
    let Emit::Chunk(chunk) = emit else {
        return emit;
    };
    let marker = SPLICE.as_bytes();
    match chunk.windows(marker.len()).position(|w| w == marker) {
        Some(at) => {
            let mut spliced = chunk[..at].to_vec();
            spliced.extend_from_slice(bytes);
            spliced.extend_from_slice(&chunk[at + marker.len()..]);
            Emit::Chunk(Bytes::from(spliced))
        }
        None => Emit::Chunk(chunk),
    }
}

// ---------- OpenAI Chat Completions ----------

/// Chat Completions has no server tools of its own: tools are written as Groq's compound
/// systems stream them (`executed_tools`, once running and once with the output and search
/// results), and citations as OpenRouter's `url_citation` annotations.
#[derive(Default)]
struct OpenAi {
    tools: u32,
}

fn openai_chunk(delta: Value, finish: Option<&str>) -> Emit {
    let chunk = json!({
        "id": "chatcmpl-demo",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "ponder-demo",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    self::chunk(format!("data: {chunk}\n\n"))
}

impl Framing for OpenAi {
    fn begin(&mut self, out: &mut Vec<Emit>) {
        out.push(openai_chunk(
            json!({"role": "assistant", "content": ""}),
            None,
        ));
    }

    fn think(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        out.push(openai_chunk(json!({"reasoning_content": text}), None));
    }

    fn answer(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        out.push(openai_chunk(json!({"content": text}), None));
    }

    /// As OpenRouter streams a model whose reasoning is encrypted.
    fn hidden(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        out.push(openai_chunk(
            json!({"content": "", "reasoning": null, "reasoning_details": [
                {"type": "reasoning.encrypted", "data": SEAL, "format": "openai-responses-v1", "index": 0}
            ]}),
            None,
        ));
        out.push(Emit::Pause(pause));
    }

    fn error(&mut self, message: &str, out: &mut Vec<Emit>) {
        let err = json!({"error": {"message": message, "type": "server_error"}});
        out.push(chunk(format!("data: {err}\n\n")));
    }

    fn tool(&mut self, tool: &DemoTool, out: &mut Vec<Emit>) {
        let index = self.tools;
        self.tools += 1;
        let kind = if tool.name == "code_execution" {
            "python"
        } else {
            "search"
        };
        let arguments = tool_arguments(tool).to_string();
        out.push(openai_chunk(
            json!({"executed_tools": [{"index": index, "type": kind, "arguments": arguments}]}),
            None,
        ));
        out.push(Emit::Pause(tool.runs_for));
        let results: Vec<Value> = tool
            .sources
            .iter()
            .map(|(url, title)| json!({"title": title, "url": url, "content": "", "score": 0.9}))
            .collect();
        let mut done =
            json!({"index": index, "type": kind, "arguments": arguments, "output": tool.output});
        if !results.is_empty() {
            done["search_results"] = json!({ "results": results });
        }
        out.push(openai_chunk(json!({ "executed_tools": [done] }), None));
    }

    fn cite(&mut self, url: &str, title: &str, out: &mut Vec<Emit>) {
        out.push(openai_chunk(
            json!({"annotations": [{"type": "url_citation", "url_citation": {"url": url, "title": title}}]}),
            None,
        ));
    }

    fn end(&mut self, finish: &str, counts: &Counts, out: &mut Vec<Emit>) {
        out.push(openai_chunk(json!({}), Some(finish)));
        let usage = json!({
            "id": "chatcmpl-demo", "object": "chat.completion.chunk", "created": 0, "model": "ponder-demo",
            "choices": [],
            "usage": {
                "prompt_tokens": PROMPT_TOKENS,
                "completion_tokens": counts.output(),
                "completion_tokens_details": {"reasoning_tokens": counts.reasoning()},
            },
        });
        out.push(chunk(format!("data: {usage}\n\ndata: [DONE]\n\n")));
    }
}

// ---------- Anthropic Messages ----------

#[derive(Clone, Copy, PartialEq, Eq)]
enum AnthropicBlock {
    Thinking,
    Text,
}

#[derive(Default)]
struct Anthropic {
    index: u32,
    open: Option<AnthropicBlock>,
}

impl Anthropic {
    /// Closes the open block (a thinking block gets its signature first).
    fn close(&mut self) -> String {
        let Some(block) = self.open.take() else {
            return String::new();
        };
        let mut s = String::new();
        if block == AnthropicBlock::Thinking {
            s.push_str(&sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": self.index, "delta": {"type": "signature_delta", "signature": SEAL}}),
            ));
        }
        s.push_str(&sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": self.index}),
        ));
        self.index += 1;
        s
    }

    fn ensure(&mut self, block: AnthropicBlock) -> String {
        if self.open == Some(block) {
            return String::new();
        }
        let mut s = self.close();
        let content_block = match block {
            AnthropicBlock::Thinking => {
                json!({"type": "thinking", "thinking": "", "signature": ""})
            }
            AnthropicBlock::Text => json!({"type": "text", "text": ""}),
        };
        s.push_str(&sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": self.index, "content_block": content_block}),
        ));
        self.open = Some(block);
        s
    }

    fn delta(&mut self, block: AnthropicBlock, delta: Value) -> Emit {
        let mut s = self.ensure(block);
        s.push_str(&sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": self.index, "delta": delta}),
        ));
        chunk(s)
    }
}

impl Framing for Anthropic {
    fn begin(&mut self, out: &mut Vec<Emit>) {
        let start = json!({"type": "message_start", "message": {
            "id": "msg_demo", "type": "message", "role": "assistant", "model": "ponder-demo",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": 1},
        }});
        out.push(chunk(
            sse_event("message_start", &start) + &sse_event("ping", &json!({"type": "ping"})),
        ));
    }

    fn think(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        out.push(self.delta(
            AnthropicBlock::Thinking,
            json!({"type": "thinking_delta", "thinking": text}),
        ));
    }

    fn answer(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        out.push(self.delta(
            AnthropicBlock::Text,
            json!({"type": "text_delta", "text": text}),
        ));
    }

    fn hidden(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        let mut s = self.close();
        s.push_str(&sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": self.index, "content_block": {"type": "redacted_thinking", "data": SEAL}}),
        ));
        out.push(chunk(s));
        out.push(Emit::Pause(pause));
        out.push(chunk(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": self.index}),
        )));
        self.index += 1;
    }

    /// Adaptive thinking with `display: "omitted"`: a thinking block whose only delta is its
    /// signature.
    fn omitted(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        let mut s = self.close();
        s.push_str(&sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": self.index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ));
        out.push(chunk(s));
        out.push(Emit::Pause(pause));
        let mut s = sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": self.index, "delta": {"type": "signature_delta", "signature": SEAL}}),
        );
        s.push_str(&sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": self.index}),
        ));
        out.push(chunk(s));
        self.index += 1;
    }

    fn error(&mut self, message: &str, out: &mut Vec<Emit>) {
        out.push(chunk(sse_event(
            "error",
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": message}}),
        )));
    }

    fn tool(&mut self, tool: &DemoTool, out: &mut Vec<Emit>) {
        let mut s = self.close();
        let id = format!("srvtoolu_demo_{}", self.index);
        s.push_str(&sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": self.index, "content_block": {"type": "server_tool_use", "id": id, "name": tool.name, "input": {}}}),
        ));
        s.push_str(&sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": self.index, "delta": {"type": "input_json_delta", "partial_json": tool_arguments(tool).to_string()}}),
        ));
        s.push_str(&sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": self.index}),
        ));
        self.index += 1;
        out.push(chunk(s));
        out.push(Emit::Pause(tool.runs_for));
        let content = if tool.name == "code_execution" {
            json!({"type": "code_execution_result", "stdout": tool.output, "stderr": "", "return_code": if tool.ok { 0 } else { 1 }})
        } else {
            json!(tool
                .sources
                .iter()
                .map(|(url, title)| json!({"type": "web_search_result", "title": title, "url": url, "encrypted_content": "ZGVtbw==", "page_age": null}))
                .collect::<Vec<_>>())
        };
        let kind = format!("{}_tool_result", tool.name);
        let s = sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": self.index, "content_block": {"type": kind, "tool_use_id": id, "content": content}}),
        ) + &sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": self.index}),
        );
        self.index += 1;
        out.push(chunk(s));
    }

    /// A citation belongs to a text block: the cited text's block carries it.
    fn cite(&mut self, url: &str, title: &str, out: &mut Vec<Emit>) {
        out.push(self.delta(
            AnthropicBlock::Text,
            json!({"type": "citations_delta", "citation": {"type": "web_search_result_location", "cited_text": "", "url": url, "title": title, "encrypted_index": "ZGVtbw=="}}),
        ));
        // The next text is another block: a citation marks the end of the text it cites.
        let s = self.close();
        out.push(chunk(s));
    }

    fn end(&mut self, finish: &str, counts: &Counts, out: &mut Vec<Emit>) {
        let stop_reason = match finish {
            "length" => "max_tokens",
            _ => "end_turn",
        };
        let mut s = self.close();
        s.push_str(&sse_event(
            "message_delta",
            &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": counts.output(), "output_tokens_details": {"thinking_tokens": counts.reasoning()}}}),
        ));
        s.push_str(&sse_event("message_stop", &json!({"type": "message_stop"})));
        out.push(chunk(s));
    }
}

// ---------- OpenAI Responses ----------

#[derive(Clone, Copy, PartialEq, Eq)]
enum ResponsesItem {
    Reasoning,
    Message,
}

#[derive(Default)]
struct Responses {
    sequence: u64,
    next_index: u64,
    open: Option<(u64, ResponsesItem)>,
    text: String,
}

impl Responses {
    fn event(&mut self, kind: &str, mut data: Value) -> String {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        sse_event(kind, &data)
    }

    fn close(&mut self) -> String {
        let Some((index, item)) = self.open.take() else {
            return String::new();
        };
        let text = std::mem::take(&mut self.text);
        match item {
            ResponsesItem::Reasoning => {
                let id = format!("rs_demo_{index}");
                let part = json!({"type": "summary_text", "text": text});
                self.event("response.reasoning_summary_text.done", json!({"item_id": id, "output_index": index, "summary_index": 0, "text": text}))
                    + &self.event("response.reasoning_summary_part.done", json!({"item_id": id, "output_index": index, "summary_index": 0, "part": part}))
                    + &self.event("response.output_item.done", json!({"output_index": index, "item": {"id": id, "type": "reasoning", "summary": [part], "encrypted_content": SEAL}}))
            }
            ResponsesItem::Message => {
                let id = format!("msg_demo_{index}");
                let part = json!({"type": "output_text", "annotations": [], "text": text});
                self.event("response.output_text.done", json!({"item_id": id, "output_index": index, "content_index": 0, "text": text}))
                    + &self.event("response.content_part.done", json!({"item_id": id, "output_index": index, "content_index": 0, "part": part}))
                    + &self.event("response.output_item.done", json!({"output_index": index, "item": {"id": id, "type": "message", "role": "assistant", "status": "completed", "content": [part]}}))
            }
        }
    }

    fn ensure(&mut self, item: ResponsesItem) -> (String, u64) {
        if let Some((index, open)) = self.open {
            if open == item {
                return (String::new(), index);
            }
        }
        let mut s = self.close();
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some((index, item));
        match item {
            ResponsesItem::Reasoning => {
                let id = format!("rs_demo_{index}");
                s += &self.event("response.output_item.added", json!({"output_index": index, "item": {"id": id, "type": "reasoning", "summary": []}}));
                s += &self.event("response.reasoning_summary_part.added", json!({"item_id": id, "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}));
            }
            ResponsesItem::Message => {
                let id = format!("msg_demo_{index}");
                s += &self.event("response.output_item.added", json!({"output_index": index, "item": {"id": id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}}));
                s += &self.event("response.content_part.added", json!({"item_id": id, "output_index": index, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}}));
            }
        }
        (s, index)
    }

    fn response(status: &str, usage: Value) -> Value {
        json!({"id": "resp_demo", "object": "response", "model": "ponder-demo", "status": status, "output": [], "usage": usage})
    }
}

impl Framing for Responses {
    fn begin(&mut self, out: &mut Vec<Emit>) {
        let response = Self::response("in_progress", Value::Null);
        let s = self.event("response.created", json!({"response": response}))
            + &self.event("response.in_progress", json!({"response": response}));
        out.push(chunk(s));
    }

    fn think(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        let (mut s, index) = self.ensure(ResponsesItem::Reasoning);
        self.text.push_str(text);
        s += &self.event("response.reasoning_summary_text.delta", json!({"item_id": format!("rs_demo_{index}"), "output_index": index, "summary_index": 0, "delta": text}));
        out.push(chunk(s));
    }

    fn answer(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        let (mut s, index) = self.ensure(ResponsesItem::Message);
        self.text.push_str(text);
        s += &self.event("response.output_text.delta", json!({"item_id": format!("msg_demo_{index}"), "output_index": index, "content_index": 0, "delta": text}));
        out.push(chunk(s));
    }

    /// A reasoning item that ends with no summary: encrypted reasoning only.
    fn hidden(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        let mut s = self.close();
        let index = self.next_index;
        self.next_index += 1;
        let item = json!({"id": format!("rs_demo_{index}"), "type": "reasoning", "summary": [], "encrypted_content": SEAL});
        s += &self.event(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        );
        out.push(chunk(s));
        out.push(Emit::Pause(pause));
        let done = self.event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        out.push(chunk(done));
    }

    fn error(&mut self, message: &str, out: &mut Vec<Emit>) {
        let s = self.event(
            "error",
            json!({"code": "server_error", "message": message, "param": null}),
        );
        out.push(chunk(s));
    }

    fn tool(&mut self, tool: &DemoTool, out: &mut Vec<Emit>) {
        let mut s = self.close();
        let index = self.next_index;
        self.next_index += 1;
        let (kind, id) = if tool.name == "code_execution" {
            ("code_interpreter_call", format!("ci_demo_{index}"))
        } else {
            ("web_search_call", format!("ws_demo_{index}"))
        };
        s += &self.event(
            "response.output_item.added",
            json!({"output_index": index, "item": {"id": id, "type": kind, "status": "in_progress"}}),
        );
        out.push(chunk(s));
        out.push(Emit::Pause(tool.runs_for));
        let status = if tool.ok { "completed" } else { "failed" };
        let item = if tool.name == "code_execution" {
            json!({"id": id, "type": kind, "status": status, "code": tool.input, "container_id": "cntr_demo", "outputs": [{"type": "logs", "logs": tool.output}]})
        } else {
            let sources: Vec<Value> = tool
                .sources
                .iter()
                .map(|(url, _)| json!({"type": "url", "url": url}))
                .collect();
            json!({"id": id, "type": kind, "status": status, "action": {"type": "search", "query": tool.input, "sources": sources}})
        };
        let s = self.event(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        out.push(chunk(s));
    }

    fn cite(&mut self, url: &str, title: &str, out: &mut Vec<Emit>) {
        let (mut s, index) = self.ensure(ResponsesItem::Message);
        let at = self.text.len();
        s += &self.event(
            "response.output_text.annotation.added",
            json!({"item_id": format!("msg_demo_{index}"), "output_index": index, "content_index": 0, "annotation_index": 0,
                "annotation": {"type": "url_citation", "url": url, "title": title, "start_index": at, "end_index": at}}),
        );
        out.push(chunk(s));
    }

    fn end(&mut self, finish: &str, counts: &Counts, out: &mut Vec<Emit>) {
        let usage = json!({
            "input_tokens": PROMPT_TOKENS,
            "output_tokens": counts.output(),
            "output_tokens_details": {"reasoning_tokens": counts.reasoning()},
            "total_tokens": PROMPT_TOKENS + counts.output(),
        });
        let mut s = self.close();
        if finish == "length" {
            let mut response = Self::response("incomplete", usage);
            response["incomplete_details"] = json!({"reason": "max_output_tokens"});
            s += &self.event("response.incomplete", json!({"response": response}));
        } else {
            let response = Self::response("completed", usage);
            s += &self.event("response.completed", json!({"response": response}));
        }
        out.push(chunk(s));
    }
}

// ---------- Gemini ----------

#[derive(Default)]
struct Gemini {
    sse: bool,
    started: bool,
    signed: bool,
    hidden: bool,
}

impl Gemini {
    fn object(&mut self, value: &Value) -> String {
        if self.sse {
            format!("data: {value}\r\n\r\n")
        } else if self.started {
            format!(",\r\n{value}")
        } else {
            self.started = true;
            format!("[{value}")
        }
    }

    fn close(&self) -> String {
        if self.sse {
            String::new()
        } else {
            "\n]".into()
        }
    }

    fn usage(&self, counts: &Counts) -> Value {
        let details: Vec<Value> = counts
            .by_modality()
            .into_iter()
            .map(|(modality, n)| json!({"modality": modality, "tokenCount": n}))
            .collect();
        let mut usage =
            json!({"promptTokenCount": counts.prompt(), "promptTokensDetails": details});
        if counts.answer() > 0 {
            usage["candidatesTokenCount"] = json!(counts.answer());
        }
        if counts.reasoning() > 0 {
            usage["thoughtsTokenCount"] = json!(counts.reasoning());
        }
        usage["totalTokenCount"] = json!(counts.prompt() + counts.output());
        usage
    }

    fn candidate(&mut self, parts: Value, finish: Option<&str>, counts: &Counts) -> String {
        let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        let usage = self.usage(counts);
        self.object(&json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "ponder-demo", "responseId": "demo"}))
    }
}

impl Framing for Gemini {
    fn begin(&mut self, _: &mut Vec<Emit>) {}

    fn think(&mut self, text: &str, counts: &Counts, out: &mut Vec<Emit>) {
        self.hidden = true;
        let s = self.candidate(json!([{"text": text, "thought": true}]), None, counts);
        out.push(chunk(s));
    }

    /// The first answer part carries the thought signature, as gemini-2.5-pro sends it.
    fn answer(&mut self, text: &str, counts: &Counts, out: &mut Vec<Emit>) {
        let mut part = json!({"text": text});
        if self.hidden && !self.signed {
            self.signed = true;
            part["thoughtSignature"] = json!(SEAL);
        }
        let s = self.candidate(json!([part]), None, counts);
        out.push(chunk(s));
    }

    /// Gemini says nothing while it reasons; the thought count shows it afterwards.
    fn hidden(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        self.hidden = true;
        out.push(Emit::Pause(pause));
    }

    fn error(&mut self, message: &str, out: &mut Vec<Emit>) {
        let s = self
            .object(&json!({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}}))
            + &self.close();
        out.push(chunk(s));
    }

    /// Code runs as `executableCode` and `codeExecutionResult` parts; a search is Google
    /// Search grounding (its queries and pages).
    fn tool(&mut self, tool: &DemoTool, out: &mut Vec<Emit>) {
        let counts = Counts::default();
        if tool.name == "code_execution" {
            let s = self.candidate(
                json!([{"executableCode": {"language": "PYTHON", "code": tool.input}}]),
                None,
                &counts,
            );
            out.push(chunk(s));
            out.push(Emit::Pause(tool.runs_for));
            let outcome = if tool.ok {
                "OUTCOME_OK"
            } else {
                "OUTCOME_FAILED"
            };
            let s = self.candidate(
                json!([{"codeExecutionResult": {"outcome": outcome, "output": tool.output}}]),
                None,
                &counts,
            );
            out.push(chunk(s));
        } else {
            out.push(Emit::Pause(tool.runs_for));
            let chunks: Vec<Value> = tool
                .sources
                .iter()
                .map(|(url, title)| json!({"web": {"uri": url, "title": title}}))
                .collect();
            let candidate = json!({"content": {"parts": [], "role": "model"}, "index": 0,
                "groundingMetadata": {"webSearchQueries": [tool.input], "groundingChunks": chunks}});
            let s = self.object(&json!({"candidates": [candidate], "modelVersion": "ponder-demo", "responseId": "demo"}));
            out.push(chunk(s));
        }
    }

    fn end(&mut self, finish: &str, counts: &Counts, out: &mut Vec<Emit>) {
        let reason = match finish {
            "length" => "MAX_TOKENS",
            _ => "STOP",
        };
        let s = self.candidate(json!([{"text": ""}]), Some(reason), counts) + &self.close();
        out.push(chunk(s));
    }
}

// ---------- Ollama ----------

/// Ollama runs no tools of its own: a demo tool is a pause, and citations are not marked.
struct Ollama;

fn ollama_line(message: Value, done: Option<(&str, &Counts)>) -> Emit {
    let mut line = json!({"model": "ponder-demo", "created_at": "2025-01-01T00:00:00Z", "message": message, "done": done.is_some()});
    if let Some((reason, counts)) = done {
        line["done_reason"] = json!(reason);
        line["prompt_eval_count"] = json!(PROMPT_TOKENS);
        line["eval_count"] = json!(counts.output());
        line["total_duration"] = json!(1_000_000_000u64);
    }
    chunk(format!("{line}\n"))
}

impl Framing for Ollama {
    fn begin(&mut self, _: &mut Vec<Emit>) {}

    fn think(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        out.push(ollama_line(
            json!({"role": "assistant", "content": "", "thinking": text}),
            None,
        ));
    }

    fn answer(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        out.push(ollama_line(
            json!({"role": "assistant", "content": text}),
            None,
        ));
    }

    /// Ollama has no hidden reasoning: the model is just silent.
    fn hidden(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        out.push(Emit::Pause(pause));
    }

    fn error(&mut self, message: &str, out: &mut Vec<Emit>) {
        out.push(chunk(format!("{}\n", json!({"error": message}))));
    }

    fn end(&mut self, finish: &str, counts: &Counts, out: &mut Vec<Emit>) {
        out.push(ollama_line(
            json!({"role": "assistant", "content": ""}),
            Some((finish, counts)),
        ));
    }
}

/// Renders a script as an OpenAI Chat Completions stream.
pub fn render_openai(script: &Script) -> Vec<Emit> {
    render(ProviderKind::OpenAi, script, true)
}

/// Splits a chunk holding a multi-byte character into two writes in the middle of it.
pub fn split_multibyte(emits: Vec<Emit>) -> Vec<Emit> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::demo_upstream::scenarios::{script, ANSWER, THINKING};
    use crate::server::providers::{parser_for, Piece};

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
    fn splitting_really_cuts_inside_a_character() {
        let emits = split_multibyte(vec![Emit::Chunk(Bytes::from("é"))]);
        assert_eq!(emits.len(), 2);
        let Emit::Chunk(first) = &emits[0] else {
            panic!()
        };
        assert!(std::str::from_utf8(first).is_err());
    }

    /// What a provider's parser reads back from a rendering: reasoning, answer, and whether it
    /// ended properly.
    fn read_back(provider: ProviderKind, emits: &[Emit]) -> (String, String, bool) {
        let mut parser = parser_for(provider, false);
        let mut pieces = Vec::new();
        for emit in emits {
            if let Emit::Chunk(bytes) = emit {
                parser.feed(bytes, &mut pieces);
            }
        }
        parser.finish(&mut pieces);
        let (mut thinking, mut answer, mut ended) = (String::new(), String::new(), false);
        for piece in pieces {
            match piece {
                Piece::Reasoning { text, .. } => thinking.push_str(&text),
                Piece::Answer(text) => answer.push_str(&text),
                Piece::Finish(_) | Piece::End => ended = true,
                _ => {}
            }
        }
        (thinking, answer, ended)
    }

    #[test]
    fn every_format_reads_back_as_the_script_through_its_parser() {
        let providers = [
            ProviderKind::OpenAi,
            ProviderKind::Anthropic,
            ProviderKind::Responses,
            ProviderKind::Gemini,
            ProviderKind::Ollama,
        ];
        for provider in providers {
            let (thinking, answer, ended) =
                read_back(provider, &render(provider, &script("hi"), true));
            assert_eq!(thinking, THINKING, "{provider:?}");
            assert_eq!(answer, ANSWER, "{provider:?}");
            assert!(ended, "{provider:?} ended without its end marker");
        }
        let (thinking, answer, _) = read_back(
            ProviderKind::Gemini,
            &render(ProviderKind::Gemini, &script("hi"), false),
        );
        assert_eq!(
            (thinking.as_str(), answer.as_str()),
            (THINKING, ANSWER),
            "Gemini's JSON array"
        );
    }

    #[test]
    fn a_cut_and_a_stall_are_control_steps_not_bytes() {
        let cut = render_openai(&script("[drop]"));
        assert_eq!(cut.last(), Some(&Emit::Cut));
        let stall = render_openai(&script("[stall]"));
        assert!(stall.contains(&Emit::Stall));
        let (_, _, ended) = read_back(ProviderKind::OpenAi, &cut);
        assert!(!ended, "a cut stream has no end marker");
    }

    #[test]
    fn a_gemini_array_is_one_json_value_when_whole() {
        let emits = render(ProviderKind::Gemini, &script("hi"), false);
        let body: Vec<u8> = emits
            .iter()
            .filter_map(|e| match e {
                Emit::Chunk(b) => Some(b.to_vec()),
                _ => None,
            })
            .flatten()
            .collect();
        let value: serde_json::Value = serde_json::from_slice(&body).expect("a JSON array");
        assert!(value.as_array().is_some_and(|a| !a.is_empty()));
    }

    #[test]
    fn ollama_lines_are_json_each_and_the_last_is_done() {
        let emits = render(ProviderKind::Ollama, &script("hi"), true);
        let body: String = emits
            .iter()
            .filter_map(|e| match e {
                Emit::Chunk(b) => Some(String::from_utf8_lossy(b).into_owned()),
                _ => None,
            })
            .collect();
        let lines: Vec<serde_json::Value> = body
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.last().and_then(|l| l["done"].as_bool()), Some(true));
        assert!(lines[..lines.len() - 1].iter().all(|l| l["done"] == false));
    }

    #[test]
    fn the_tools_scenario_reads_back_as_steps_between_blocks_with_sources_and_citations() {
        use crate::domain::TurnEvent;
        use crate::server::turn::TurnAssembler;
        let expect: [(ProviderKind, &[&str], usize, usize); 6] = [
            (
                ProviderKind::OpenAi,
                &["web_search", "code_execution"],
                3,
                2,
            ),
            (
                ProviderKind::Anthropic,
                &["web_search", "code_execution"],
                3,
                2,
            ),
            (
                ProviderKind::Responses,
                &["web_search", "code_interpreter"],
                3,
                2,
            ),
            (
                ProviderKind::Gemini,
                &["google_search", "code_execution"],
                3,
                0,
            ),
            (
                ProviderKind::Interactions,
                &["google_search", "code_execution"],
                3,
                0,
            ),
            (ProviderKind::Ollama, &[], 0, 0),
        ];
        for (provider, tools, sources, cites) in expect {
            let mut parser = parser_for(provider, false);
            let mut pieces = Vec::new();
            for emit in render(provider, &script("[tools]"), true) {
                if let Emit::Chunk(bytes) = emit {
                    parser.feed(&bytes, &mut pieces);
                }
            }
            parser.finish(&mut pieces);
            let mut asm = TurnAssembler::new(true);
            let mut events = Vec::new();
            for (t, piece) in pieces.into_iter().enumerate() {
                asm.push(piece, t as u64, &mut events);
            }
            asm.end_of_stream(1_000, &mut events);
            let names: Vec<&str> = events
                .iter()
                .filter_map(|e| match e {
                    TurnEvent::ToolStart { name, .. } => Some(name.as_str()),
                    _ => None,
                })
                .collect();
            let mut unique = names.clone();
            unique.dedup();
            assert_eq!(unique, tools, "{provider:?}");
            let finished = events
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        TurnEvent::ToolEnd {
                            status: crate::domain::ToolStatus::Finished,
                            ..
                        }
                    )
                })
                .count();
            assert_eq!(finished, tools.len(), "{provider:?}");
            let count = |f: fn(&TurnEvent) -> bool| events.iter().filter(|e| f(e)).count();
            assert_eq!(
                count(|e| matches!(e, TurnEvent::Source { .. })),
                sources,
                "{provider:?}"
            );
            assert_eq!(
                count(|e| matches!(e, TurnEvent::Cite { .. })),
                cites,
                "{provider:?}"
            );
            let blocks = if tools.is_empty() { 1 } else { 3 };
            assert_eq!(
                count(|e| matches!(e, TurnEvent::ThinkingStart { .. })),
                blocks,
                "{provider:?}"
            );
            if !tools.is_empty() && provider != ProviderKind::Gemini {
                let first_tool = events
                    .iter()
                    .position(|e| matches!(e, TurnEvent::ToolStart { .. }))
                    .unwrap();
                let second_block = events
                    .iter()
                    .position(|e| matches!(e, TurnEvent::ThinkingStart { block: 1, .. }))
                    .unwrap();
                assert!(
                    first_tool < second_block,
                    "{provider:?}: the search comes between the first two blocks"
                );
            }
            assert!(
                matches!(events.last(), Some(TurnEvent::Done { .. })),
                "{provider:?}"
            );
        }
    }
}
