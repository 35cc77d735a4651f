//! The demo model speaking Google's Interactions API: the request it checks (the
//! `Api-Revision` header, a streamed `input`) and the step events it streams: a `thought` step
//! with its summary (when `thinking_summaries` asks for one) and always a signature, a
//! `model_output` step, server tools as call and result steps, `interaction.completed` with the
//! usage.

use std::time::Duration;

use axum::http::HeaderMap;
use serde_json::{json, Value};

use super::frame_kit::{chunk, sse_event, tool_arguments, Counts, Framing};
use super::pacer::Emit;
use super::scenarios::DemoTool;

/// What the demo requires of an Interactions request, as the real API does.
pub(super) fn validate(headers: &HeaderMap, body: &Value) -> Result<(), String> {
    if !headers.contains_key("api-revision") {
        return Err("Api-Revision: header is required".into());
    }
    let input_given = body.get("input").is_some_and(|i| {
        i.as_str().is_some_and(|s| !s.is_empty()) || i.as_array().is_some_and(|a| !a.is_empty())
    });
    if !input_given {
        return Err("input: a non-empty string or list of steps is required".into());
    }
    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        return Err("this demo only streams: set stream to true".into());
    }
    Ok(())
}

/// The text of the last `user_input` step (or the input, when it is a string).
pub(super) fn last_user_input(body: &Value) -> String {
    if let Some(text) = body["input"].as_str() {
        return text.to_string();
    }
    body["input"]
        .as_array()
        .and_then(|steps| {
            steps
                .iter()
                .rev()
                .find(|s| s["type"] == "user_input" || s["role"] == "user")
        })
        .map(|step| match &step["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        })
        .unwrap_or_default()
}

/// Which step is open, and the next step's index.
#[derive(Default)]
pub(super) struct Interactions {
    open: Option<Open>,
    next: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Thought,
    Output,
}

impl Interactions {
    fn event(name: &str, mut data: Value) -> String {
        data["event_type"] = json!(name);
        sse_event(name, &data)
    }

    /// Closes the open step (a thought with its signature) and returns the frames.
    fn close(&mut self) -> String {
        let Some(open) = self.open.take() else {
            return String::new();
        };
        let index = self.next - 1;
        let mut s = String::new();
        if open == Open::Thought {
            s += &Self::event(
                "step.delta",
                json!({"index": index, "delta": {"type": "thought_signature", "signature": super::frame_kit::SEAL}}),
            );
        }
        s + &Self::event("step.stop", json!({"index": index}))
    }

    fn ensure(&mut self, open: Open) -> String {
        if self.open == Some(open) {
            return String::new();
        }
        let mut s = self.close();
        let kind = match open {
            Open::Thought => "thought",
            Open::Output => "model_output",
        };
        s += &Self::event(
            "step.start",
            json!({"index": self.next, "step": {"type": kind}}),
        );
        self.next += 1;
        self.open = Some(open);
        s
    }
}

impl Framing for Interactions {
    fn begin(&mut self, out: &mut Vec<Emit>) {
        let created = Self::event(
            "interaction.created",
            json!({"interaction": {"status": "in_progress", "object": "interaction", "model": "ponder-demo"}}),
        );
        out.push(chunk(created));
    }

    fn think(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        let mut s = self.ensure(Open::Thought);
        s += &Self::event(
            "step.delta",
            json!({"index": self.next - 1, "delta": {"type": "thought_summary", "content": {"type": "text", "text": text}}}),
        );
        out.push(chunk(s));
    }

    fn answer(&mut self, text: &str, _: &Counts, out: &mut Vec<Emit>) {
        let mut s = self.ensure(Open::Output);
        s += &Self::event(
            "step.delta",
            json!({"index": self.next - 1, "delta": {"type": "text", "text": text}}),
        );
        out.push(chunk(s));
    }

    /// A thought step that carries only its signature (no summary asked for, or none given).
    fn hidden(&mut self, pause: Duration, out: &mut Vec<Emit>) {
        let mut s = self.close();
        s += &self.ensure(Open::Thought);
        out.push(chunk(s));
        out.push(Emit::Pause(pause));
        out.push(chunk(self.close()));
    }

    fn error(&mut self, message: &str, out: &mut Vec<Emit>) {
        out.push(chunk(Self::event(
            "error",
            json!({"error": {"code": "unavailable", "message": message}}),
        )));
    }

    fn tool(&mut self, tool: &DemoTool, out: &mut Vec<Emit>) {
        let name = if tool.name == "code_execution" {
            "code_execution"
        } else {
            "google_search"
        };
        let mut s = self.close();
        let call = self.next;
        let id = format!("demo_call_{call}");
        s += &Self::event(
            "step.start",
            json!({"index": call, "step": {"id": id, "type": format!("{name}_call")}}),
        );
        s += &Self::event(
            "step.delta",
            json!({"index": call, "delta": {"type": format!("{name}_call"), "arguments": tool_arguments(tool)}}),
        );
        s += &Self::event("step.stop", json!({"index": call}));
        out.push(chunk(s));
        out.push(Emit::Pause(tool.runs_for));
        let result = call + 1;
        self.next = result + 1;
        let mut s = Self::event(
            "step.start",
            json!({"index": result, "step": {"call_id": id, "type": format!("{name}_result")}}),
        );
        let found: Vec<Value> = tool
            .sources
            .iter()
            .map(|(url, title)| json!({"url": url, "title": title}))
            .collect();
        let output = if found.is_empty() {
            json!(tool.output)
        } else {
            json!(found)
        };
        s += &Self::event(
            "step.delta",
            json!({"index": result, "delta": {"type": format!("{name}_result"), "result": output, "is_error": !tool.ok}}),
        );
        s += &Self::event("step.stop", json!({"index": result}));
        out.push(chunk(s));
    }

    /// A citation is an annotation on the answer step, as the API sends search grounding.
    fn cite(&mut self, url: &str, title: &str, out: &mut Vec<Emit>) {
        let mut s = self.ensure(Open::Output);
        s += &Self::event(
            "step.delta",
            json!({"index": self.next - 1, "delta": {"type": "text_annotation_delta", "annotations": [{"type": "url_citation", "url": url, "title": title}]}}),
        );
        out.push(chunk(s));
    }

    fn end(&mut self, finish: &str, counts: &Counts, out: &mut Vec<Emit>) {
        let status = match finish {
            "length" => "incomplete",
            "tool_calls" => "requires_action",
            _ => "completed",
        };
        let by_modality: Vec<_> = counts
            .by_modality()
            .into_iter()
            .map(|(modality, n)| json!({"modality": modality.to_ascii_lowercase(), "tokens": n}))
            .collect();
        let usage = json!({
            "total_input_tokens": counts.prompt(),
            "input_tokens_by_modality": by_modality,
            "total_output_tokens": counts.answer(),
            "total_thought_tokens": counts.reasoning(),
            "total_tokens": counts.prompt() + counts.answer() + counts.reasoning(),
        });
        let s = self.close()
            + &Self::event(
                "interaction.completed",
                json!({"interaction": {"status": status, "usage": usage, "object": "interaction", "model": "ponder-demo"}}),
            );
        out.push(chunk(s));
    }
}
