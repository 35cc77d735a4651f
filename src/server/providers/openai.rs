//! OpenAI-compatible Chat Completions, as the many servers that speak it really send it:
//! `delta.reasoning_content` (DeepSeek, xAI, Qwen, llama.cpp), `delta.reasoning` (vLLM, Groq,
//! OpenRouter, Ollama's /v1), OpenRouter's `reasoning_details` (readable, summarized or
//! encrypted), Mistral's `content` array with thinking parts; `[DONE]` is optional,
//! `finish_reason` ends the turn. Usage comes on its own chunk, on the finish chunk or in
//! `x_groq`, and xAI counts reasoning outside `completion_tokens`. Errors arrive as an `error`
//! key (OpenAI, OpenRouter — even on a chunk that also carries choices), as an `event: error`
//! frame (Groq) or as `{"object":"error"}` (vLLM).

use crate::domain::FinishReason;
use crate::server::config::ProviderKind;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    effective_settings, AnswerNow, FrameHandler, Piece, Sse, TurnOptions, UpstreamRequest,
};
use crate::domain::{ChatMessage, Role, ThinkingKind, Usage};
use crate::server::config::Config;

/// The request body: streaming, with usage in the last chunk.
///
/// Effort goes as `reasoning_effort`; thinking on/off as `chat_template_kwargs.enable_thinking`
/// (vLLM, SGLang and llama.cpp pass it to Qwen-style templates). "Answer now" by prefill sends
/// the assistant message to continue with `continue_final_message` (vLLM; llama.cpp continues a
/// final assistant message by itself).
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
    let mut list = role_content(ProviderKind::OpenAi, messages);
    for (sent, message) in list.iter_mut().zip(messages) {
        if !message.replay.is_empty() {
            sent["reasoning_details"] = Value::Array(message.replay.clone());
        }
    }
    if let Some(text) = &options.instructions {
        list.insert(
            0,
            json!({"role": system_role(&options.model), "content": text}),
        );
    }
    let mut body = json!({
        "model": options.model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": options.max_tokens(config),
    });
    options.put_sampling(&mut body, "temperature", "top_p");
    let settings = effective_settings(options);
    for (key, value) in reasoning_fields(dialect(base_url, &options.model), settings) {
        body[key] = value;
    }
    if let Some(AnswerNow::Prefill(reasoning)) = &options.answer_now {
        list.push(json!({"role": "assistant", "content": AnswerNow::prefill_text(reasoning)}));
        body["continue_final_message"] = json!(true);
        body["add_generation_prompt"] = json!(false);
    }
    body["messages"] = Value::Array(list);
    UpstreamRequest {
        url: format!("{base_url}/chat/completions"),
        headers,
        body,
    }
}

/// Which server behind the Chat Completions wire, for its reasoning switches: known hosted
/// APIs by their host, self-hosted servers (vLLM, SGLang, llama.cpp, LM Studio) by the model's
/// chat template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `reasoning: {effort}`; off is effort `none`.
    OpenRouter,
    /// DeepSeek's and Kimi's APIs: `thinking: {type: enabled|disabled}`, `reasoning_effort`
    /// of `low` or `high`.
    ThinkingType,
    /// Alibaba Model Studio: top-level `enable_thinking`.
    DashScope,
    /// A self-hosted DeepSeek V3.1/V3.2 template: `chat_template_kwargs.thinking`.
    TemplateThinking,
    /// Every other server: `chat_template_kwargs.enable_thinking` (Qwen3, GLM and most
    /// templates) and `reasoning_effort`.
    Template,
}

/// The role instructions go in: `developer` for OpenAI's reasoning models (o1 and later, GPT-5),
/// which take it in place of `system`; `system` for every other model, since many self-hosted
/// chat templates know no other.
pub fn system_role(model: &str) -> &'static str {
    let model = model.to_ascii_lowercase();
    let name = model.rsplit('/').next().unwrap_or(&model);
    let reasoning = ["o1", "o3", "o4"]
        .iter()
        .any(|family| name == *family || name.starts_with(&format!("{family}-")))
        || name.starts_with("gpt-5");
    if reasoning {
        "developer"
    } else {
        "system"
    }
}

/// The dialect of the server at `base_url` serving `model`.
pub fn dialect(base_url: &str, model: &str) -> Dialect {
    let host = url::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default();
    let on = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
    if on("openrouter.ai") {
        return Dialect::OpenRouter;
    }
    if on("deepseek.com") || on("moonshot.ai") || on("moonshot.cn") {
        return Dialect::ThinkingType;
    }
    if on("aliyuncs.com") {
        return Dialect::DashScope;
    }
    let model = model.to_ascii_lowercase();
    if model.contains("deepseek-v3.1") || model.contains("deepseek-v3.2") {
        return Dialect::TemplateThinking;
    }
    Dialect::Template
}

/// The body fields that carry `settings` in `dialect`.
pub fn reasoning_fields(
    dialect: Dialect,
    settings: crate::domain::ReasoningSettings,
) -> Vec<(&'static str, Value)> {
    use crate::domain::Effort;
    let mut fields = Vec::new();
    match dialect {
        Dialect::OpenRouter => {
            let effort = match settings.thinking {
                Some(false) => Some("none"),
                _ => settings.effort.map(Effort::as_str),
            };
            if let Some(effort) = effort {
                fields.push(("reasoning", json!({ "effort": effort })));
            }
        }
        Dialect::ThinkingType => {
            if let Some(on) = settings.thinking {
                let kind = if on { "enabled" } else { "disabled" };
                fields.push(("thinking", json!({ "type": kind })));
            }
            if let Some(effort) = settings.effort {
                let word = match effort {
                    Effort::Minimal | Effort::Low => "low",
                    Effort::Medium | Effort::High | Effort::Xhigh => "high",
                    Effort::Max => "max",
                };
                fields.push(("reasoning_effort", json!(word)));
            }
        }
        Dialect::DashScope | Dialect::TemplateThinking | Dialect::Template => {
            if let Some(effort) = settings.effort {
                fields.push(("reasoning_effort", json!(effort.as_str())));
            }
            if let Some(on) = settings.thinking {
                fields.push(match dialect {
                    Dialect::DashScope => ("enable_thinking", json!(on)),
                    Dialect::TemplateThinking => {
                        ("chat_template_kwargs", json!({ "thinking": on }))
                    }
                    _ => ("chat_template_kwargs", json!({ "enable_thinking": on })),
                });
            }
        }
    }
    fields
}

/// `[{"role": "user"|"assistant", "content": "…"}]`, the shape most providers share; a reader's
/// message with files carries them as `wire`'s content parts (Ollama: an `images` list).
pub(crate) fn role_content(wire: ProviderKind, messages: &[ChatMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            match (wire, m.files.is_empty()) {
                (_, true) => json!({"role": role, "content": m.content}),
                (ProviderKind::Ollama, false) => {
                    let (content, images) = super::files::ollama_message(&m.content, &m.files);
                    json!({"role": role, "content": content, "images": images})
                }
                (_, false) => json!({
                    "role": role,
                    "content": super::files::user_content(wire, &m.content, &m.files),
                }),
            }
        })
        .collect()
}

#[derive(Deserialize, Default)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<UsageIn>,
    #[serde(default)]
    x_groq: Option<XGroq>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    object: Option<String>,
    #[serde(default)]
    message: Option<Value>,
    /// Perplexity: the addresses the answer's `[1]`, `[2]` markers refer to, repeated in
    /// every chunk.
    #[serde(default)]
    citations: Option<Vec<Value>>,
    /// Perplexity: the same sources with their titles.
    #[serde(default)]
    search_results: Option<Vec<Value>>,
}

#[derive(Deserialize, Default)]
struct XGroq {
    #[serde(default)]
    usage: Option<UsageIn>,
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
    reasoning_details: Option<Vec<Value>>,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
    /// OpenRouter's web search: `url_citation` annotations.
    #[serde(default)]
    annotations: Option<Vec<Value>>,
    /// Groq's compound systems: the server tools they ran, once as they start and again with
    /// their output (and a search's results).
    #[serde(default)]
    executed_tools: Option<Vec<Value>>,
}

#[derive(Deserialize, Default)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize, Default)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// A function call whose arguments are still streaming.
#[derive(Default)]
struct CallIn {
    /// The id its step was announced with.
    id: String,
    /// The provider's id of the call, once one arrived.
    provider_id: Option<String>,
    name: String,
    arguments: String,
}

/// How much of a call's streamed arguments is kept to summarize them.
const MAX_ARGUMENTS: usize = 64 * 1024;

/// `content` (and a Mistral thinking part's `thinking`) is a string, or an array of typed
/// parts, sometimes both in the same stream; anything else is ignored. Read by hand rather than
/// as an untagged enum, which would buffer every value before trying each shape.
enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
    Other,
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> serde::de::Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_str<E>(self, v: &str) -> Result<Content, E> {
                Ok(Content::Text(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Content, E> {
                Ok(Content::Text(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Content, A::Error> {
                let mut parts = Vec::new();
                while let Some(part) = seq.next_element()? {
                    parts.push(part);
                }
                Ok(Content::Parts(parts))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Content, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Content::Other)
            }
            fn visit_unit<E>(self) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Content, E> {
                Ok(Content::Other)
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

#[derive(Deserialize)]
struct ContentPart {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thinking: Option<Content>,
}

/// The text of a field of an OpenRouter `reasoning_details` element.
fn detail_field(detail: &Value, key: &str) -> Option<String> {
    detail.get(key).and_then(Value::as_str).map(str::to_string)
}

/// OpenRouter's `reasoning_details` of one response, merged as they stream (the elements of one
/// `index` arrive in pieces: their texts join, their other fields are the latest), to be sent
/// back whole with the answer.
#[derive(Default)]
struct ReasoningDetails {
    merged: Vec<Value>,
    bytes: usize,
    lost: bool,
}

impl ReasoningDetails {
    fn add(&mut self, detail: &Value) {
        let text_len = |v: &Value| v.as_str().map_or(0, str::len);
        self.bytes += detail.as_object().map_or(0, |o| {
            o.iter().map(|(k, v)| k.len() + text_len(v) + 8).sum()
        });
        if self.lost || self.bytes > super::MAX_STATE_BYTES {
            self.lost = true;
            self.merged.clear();
            return;
        }
        let same = |m: &&mut Value| {
            detail.get("index").is_some()
                && m.get("index") == detail.get("index")
                && m.get("type") == detail.get("type")
        };
        let (Some(into), Some(from)) = (
            self.merged
                .iter_mut()
                .find(same)
                .and_then(Value::as_object_mut),
            detail.as_object(),
        ) else {
            self.merged.push(detail.clone());
            return;
        };
        for (key, value) in from {
            match (into.get_mut(key), value) {
                (Some(Value::String(kept)), Value::String(more))
                    if matches!(key.as_str(), "text" | "summary") =>
                {
                    kept.push_str(more)
                }
                _ => {
                    into.insert(key.clone(), value.clone());
                }
            }
        }
    }

    fn flush(&mut self, out: &mut Vec<Piece>) {
        if std::mem::take(&mut self.lost) {
            out.push(Piece::StateLost);
        }
        out.extend(self.merged.drain(..).map(Piece::State));
        self.bytes = 0;
    }
}

#[derive(Deserialize, Default)]
struct UsageIn {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens_details: Option<Details>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct Details {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl UsageIn {
    fn normalize(&self) -> Usage {
        let reasoning = self
            .completion_tokens_details
            .as_ref()
            .and_then(|d| d.reasoning_tokens)
            .or(self.reasoning_tokens);
        let mut output = self.completion_tokens;
        // xAI leaves reasoning out of completion_tokens; its total says so.
        if let (Some(p), Some(c), Some(r), Some(t)) = (
            self.prompt_tokens,
            self.completion_tokens,
            reasoning,
            self.total_tokens,
        ) {
            if r > 0 && t == p + c + r {
                output = Some(c + r);
            }
        }
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: output,
            reasoning_tokens: reasoning,
            file_tokens: None,
            cached_input_tokens: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens),
            ..Default::default()
        }
    }
}

/// Frame handling for one Chat Completions stream.
#[derive(Default)]
pub struct ChatFrames {
    done: bool,
    /// The kind of the reasoning run in progress, so OpenRouter's repeated encrypted details
    /// open one block, not one per chunk.
    reasoning: Option<ThinkingKind>,
    /// Function calls by their `index`, until the choice finishes.
    calls: std::collections::BTreeMap<u64, CallIn>,
    /// Perplexity's sources already given (each chunk repeats them all).
    sources_given: usize,
    /// Groq's executed tools already shown, by index.
    executed: std::collections::BTreeSet<u64>,
    /// OpenRouter's reasoning details so far, given as reasoning state when the choice ends.
    details: ReasoningDetails,
}

/// Parser for one Chat Completions stream.
pub type ChatCompletionsParser = Sse<ChatFrames>;

impl ChatFrames {
    fn reasoning(&mut self, text: String, kind: ThinkingKind, out: &mut Vec<Piece>) {
        if !text.is_empty() {
            self.reasoning = Some(kind);
            out.push(Piece::Reasoning { text, kind });
        }
    }

    fn answer(&mut self, text: String, out: &mut Vec<Piece>) {
        if !text.is_empty() {
            self.reasoning = None;
            out.push(Piece::Answer(text));
        }
    }

    fn delta(&mut self, delta: Delta, out: &mut Vec<Piece>) {
        let mut plain = false;
        for text in [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .flatten()
        {
            plain |= !text.is_empty();
            self.reasoning(text, ThinkingKind::Raw, out);
        }
        // OpenRouter repeats `reasoning` inside `reasoning_details`: the details only count
        // when they are all there is.
        for detail in delta.reasoning_details.iter().flatten() {
            self.details.add(detail);
        }
        if !plain {
            for detail in delta.reasoning_details.iter().flatten() {
                let text = |key| detail_field(detail, key);
                match detail
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                {
                    "reasoning.text" => {
                        self.reasoning(text("text").unwrap_or_default(), ThinkingKind::Raw, out)
                    }
                    "reasoning.summary" => self.reasoning(
                        text("summary").or(text("text")).unwrap_or_default(),
                        ThinkingKind::Summary,
                        out,
                    ),
                    "reasoning.encrypted" if self.reasoning.is_none() => {
                        self.reasoning = Some(ThinkingKind::Redacted);
                        out.push(Piece::BlockStart {
                            kind: ThinkingKind::Redacted,
                        });
                    }
                    _ => {}
                }
            }
        }
        match delta.content {
            Some(Content::Text(text)) => self.answer(text, out),
            Some(Content::Parts(parts)) => self.parts(parts, out),
            Some(Content::Other) | None => {}
        }
        for call in delta.tool_calls.into_iter().flatten() {
            self.tool_call(call, out);
        }
        for tool in delta.executed_tools.into_iter().flatten() {
            self.executed_tool(&tool, out);
        }
        for annotation in delta.annotations.into_iter().flatten() {
            let cited = annotation.get("url_citation").unwrap_or(&annotation);
            let field = |k: &str| cited.get(k).and_then(Value::as_str);
            if let Some(url) = field("url") {
                out.push(Piece::Cite {
                    url: url.to_string(),
                    title: field("title").map(str::to_string),
                });
            }
        }
    }

    /// A piece of a function call: its first piece names it (the step shows at once), the
    /// arguments are summarized when the choice finishes.
    fn tool_call(&mut self, call: ToolCallDelta, out: &mut Vec<Piece>) {
        let id = call.id.filter(|id| !id.is_empty());
        // Without an `index` (some compatible servers send each call whole), a call is known by
        // its id; a piece with neither continues the last call.
        let last = self.calls.keys().next_back().copied();
        let index = match (call.index, &id) {
            (Some(index), _) => index,
            (None, Some(id)) => self
                .calls
                .iter()
                .find(|(_, c)| c.provider_id.as_deref() == Some(id.as_str()))
                .map(|(i, _)| *i)
                .unwrap_or_else(|| last.map_or(0, |k| k + 1)),
            (None, None) => last.unwrap_or(0),
        };
        let function = call.function.unwrap_or_default();
        let known = self.calls.contains_key(&index);
        if !known && self.calls.len() >= super::MAX_PENDING {
            return;
        }
        let entry = self.calls.entry(index).or_default();
        if entry.provider_id.is_none() {
            entry.provider_id = id;
        }
        if let Some(name) = function.name.filter(|n| !n.is_empty()) {
            entry.name = name;
        }
        if let Some(args) = function.arguments {
            if entry.arguments.len() + args.len() <= MAX_ARGUMENTS {
                entry.arguments.push_str(&args);
            }
        }
        if !known {
            // The id the step is known by from now on, whatever id arrives later.
            entry.id = entry
                .provider_id
                .clone()
                .unwrap_or_else(|| format!("call-{index}"));
            out.push(Piece::ToolCall {
                id: entry.id.clone(),
                name: entry.name.clone(),
                input: String::new(),
            });
        }
    }

    /// One of Groq's executed tools: the step when it first shows, its end once it carries an
    /// output.
    fn executed_tool(&mut self, tool: &Value, out: &mut Vec<Piece>) {
        let index = tool.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = format!("executed-{index}");
        let name = match tool.get("type").and_then(Value::as_str).unwrap_or_default() {
            "search" => "web_search",
            "python" => "code_execution",
            "visit" => "visit_website",
            other => other,
        }
        .to_string();
        if !self.executed.contains(&index) && self.executed.len() >= super::MAX_PENDING {
            return;
        }
        if self.executed.insert(index) {
            let input = match tool.get("arguments") {
                Some(Value::String(args)) => super::tool_input(args),
                Some(args) => super::input_of(args),
                None => String::new(),
            };
            out.push(Piece::ToolCall {
                id: id.clone(),
                name: name.clone(),
                input,
            });
        }
        let Some(output) = tool.get("output").filter(|o| !o.is_null()) else {
            return;
        };
        super::sources_from(tool.pointer("/search_results/results"), out);
        out.push(Piece::ToolResult {
            id,
            name,
            ok: true,
            output: output
                .as_str()
                .map_or_else(|| output.to_string(), str::to_string),
        });
    }

    /// The calls of a finished choice, with their whole arguments.
    fn flush_calls(&mut self, out: &mut Vec<Piece>) {
        for (_, call) in std::mem::take(&mut self.calls) {
            out.push(Piece::ToolCall {
                id: call.id,
                name: call.name,
                input: super::tool_input(&call.arguments),
            });
        }
    }

    /// Perplexity's sources, numbered as its `[n]` markers count them; only the new ones.
    fn perplexity_sources(
        &mut self,
        citations: Vec<Value>,
        results: Vec<Value>,
        out: &mut Vec<Piece>,
    ) {
        let titled: Vec<(String, Option<String>)> = if results.is_empty() {
            citations
                .iter()
                .filter_map(|c| c.as_str().map(|u| (u.to_string(), None)))
                .collect()
        } else {
            results
                .iter()
                .filter_map(|r| {
                    let url = r.get("url")?.as_str()?.to_string();
                    Some((
                        url,
                        r.get("title").and_then(Value::as_str).map(str::to_string),
                    ))
                })
                .collect()
        };
        for (url, title) in titled.into_iter().skip(self.sources_given) {
            self.sources_given += 1;
            out.push(Piece::Source { url, title });
        }
    }

    fn parts(&mut self, parts: Vec<ContentPart>, out: &mut Vec<Piece>) {
        for part in parts {
            match (part.kind.as_str(), part.thinking) {
                ("thinking", Some(thinking)) => self.thinking(thinking, out),
                ("text", _) => self.answer(part.text.unwrap_or_default(), out),
                _ => {}
            }
        }
    }

    fn thinking(&mut self, thinking: Content, out: &mut Vec<Piece>) {
        match thinking {
            Content::Text(text) => self.reasoning(text, ThinkingKind::Raw, out),
            Content::Parts(parts) => {
                for part in parts {
                    self.reasoning(part.text.unwrap_or_default(), ThinkingKind::Raw, out);
                }
            }
            Content::Other => {}
        }
    }
}

impl FrameHandler for ChatFrames {
    fn is_over(&self) -> bool {
        self.done
    }

    fn on_frame(&mut self, event: Option<&str>, data: &str, out: &mut Vec<Piece>) {
        if data == "[DONE]" {
            self.flush_calls(out);
            self.details.flush(out);
            self.done = true;
            out.push(Piece::End);
            return;
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(e) => {
                super::skip_unparseable("openai", &e, data.len());
                if event == Some("error") {
                    out.push(super::unreadable_error());
                }
                return;
            }
        };
        let citations = chunk.citations.unwrap_or_default();
        let results = chunk.search_results.unwrap_or_default();
        if citations.len().max(results.len()) > self.sources_given {
            self.perplexity_sources(citations, results, out);
        }
        for choice in chunk.choices {
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.flush_calls(out);
                self.details.flush(out);
                out.push(Piece::Finish(FinishReason::parse(&reason)));
            }
        }
        if let Some(u) = chunk.usage.or_else(|| chunk.x_groq.and_then(|x| x.usage)) {
            out.push(Piece::Usage(u.normalize()));
        }
        let vllm_error = (chunk.object.as_deref() == Some("error")).then(|| {
            let message = chunk.message.clone().unwrap_or(Value::Null);
            json!({ "message": message })
        });
        match chunk.error.filter(|e| !e.is_null()).or(vllm_error) {
            Some(error) => {
                out.push(super::error_piece(&error));
            }
            None if event == Some("error") => out.push(super::unreadable_error()),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Failure;

    fn parse(body: &str) -> Vec<Piece> {
        crate::server::providers::parse_whole(ChatCompletionsParser::default(), body.as_bytes())
    }

    fn raw(t: &str) -> Piece {
        Piece::Reasoning {
            text: t.into(),
            kind: ThinkingKind::Raw,
        }
    }

    #[test]
    fn each_server_gets_its_own_reasoning_switches() {
        use crate::domain::{Effort, ReasoningSettings};
        let fields = |base: &str, model: &str, thinking: Option<bool>, effort: Option<Effort>| {
            let mut body = json!({});
            for (k, v) in reasoning_fields(
                dialect(base, model),
                ReasoningSettings::reasoning(thinking, effort),
            ) {
                body[k] = v;
            }
            body
        };
        assert_eq!(
            fields(
                "https://openrouter.ai/api/v1",
                "anthropic/claude-opus-4.7",
                None,
                Some(Effort::High)
            ),
            json!({"reasoning": {"effort": "high"}})
        );
        assert_eq!(
            fields("https://openrouter.ai/api/v1", "x", Some(false), None),
            json!({"reasoning": {"effort": "none"}})
        );
        assert_eq!(
            fields(
                "https://api.deepseek.com/v1",
                "deepseek-v4-pro",
                Some(true),
                Some(Effort::Medium)
            ),
            json!({"thinking": {"type": "enabled"}, "reasoning_effort": "high"})
        );
        assert_eq!(
            fields("https://api.moonshot.ai/v1", "kimi-k2.6", Some(false), None),
            json!({"thinking": {"type": "disabled"}})
        );
        assert_eq!(
            fields(
                "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
                "qwen3-max",
                Some(false),
                None
            ),
            json!({"enable_thinking": false})
        );
        assert_eq!(
            fields(
                "http://gpu-box:8000/v1",
                "deepseek-ai/DeepSeek-V3.1",
                Some(true),
                None
            ),
            json!({"chat_template_kwargs": {"thinking": true}})
        );
        assert_eq!(
            fields(
                "http://localhost:8000/v1",
                "Qwen/Qwen3-8B",
                Some(false),
                Some(Effort::Low)
            ),
            json!({"chat_template_kwargs": {"enable_thinking": false}, "reasoning_effort": "low"})
        );
        assert_eq!(
            fields("http://localhost:8080/v1", "m", None, None),
            json!({})
        );
        assert_eq!(dialect("not a url", "m"), Dialect::Template);
        assert_eq!(
            dialect("https://evil-openrouter.ai/v1", "m"),
            Dialect::Template
        );
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
                raw("R"),
                Piece::Answer("A".into()),
                raw("S"),
                Piece::Finish("stop".into()),
                Piece::Usage(Usage {
                    input_tokens: Some(1),
                    output_tokens: Some(2),
                    reasoning_tokens: Some(1),
                    file_tokens: None,
                    ..Default::default()
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
    fn comments_event_lines_and_crlf_are_framing_only() {
        let out = parse(
            ": OPENROUTER PROCESSING\r\n\r\nevent: message\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\r\n\r\n",
        );
        assert_eq!(out, [Piece::Answer("ok".into())]);
    }

    #[test]
    fn an_error_key_is_an_error_piece_and_its_status_decides_retry() {
        let out = parse("data: {\"error\":{\"message\":\"overloaded\"}}\n\n");
        assert_eq!(
            out,
            [Piece::Error(crate::server::providers::model_error(
                Some("overloaded"),
                true
            ))]
        );
        let out = parse("data: {\"error\":{\"code\":400,\"message\":\"Token limit reached\"},\"choices\":[{\"delta\":{\"content\":\"\"}}]}\n\n");
        assert!(matches!(
            out.as_slice(),
            [Piece::Error(Failure {
                retryable: false,
                ..
            })]
        ));
    }

    #[test]
    fn groq_error_events_and_vllm_error_objects_are_errors() {
        let out = parse("event: error\ndata: {\"error\":{\"message\":\"bad tool\",\"type\":\"invalid_request_error\",\"status_code\":400}}\n\n");
        assert_eq!(
            out,
            [Piece::Error(crate::server::providers::model_error(
                Some("bad tool"),
                false
            ))]
        );
        let out = parse("event: error\ndata: {oops\n\n");
        assert!(matches!(out.as_slice(), [Piece::Error(Failure { .. })]));
        let out =
            parse("data: {\"object\":\"error\",\"message\":\"engine dead\",\"code\":500}\n\n");
        assert_eq!(
            out,
            [Piece::Error(crate::server::providers::model_error(
                Some("engine dead"),
                true
            ))]
        );
    }

    #[test]
    fn reasoning_details_count_only_without_plain_reasoning() {
        let out = parse(
            "data: {\"choices\":[{\"delta\":{\"reasoning\":\"a\",\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"a\"}]}}]}\n\n\
             data: {\"choices\":[{\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.summary\",\"summary\":\"s\"}]}}]}\n\n",
        );
        assert_eq!(
            out,
            [
                raw("a"),
                Piece::Reasoning {
                    text: "s".into(),
                    kind: ThinkingKind::Summary
                }
            ]
        );
    }

    #[test]
    fn encrypted_details_open_one_redacted_block_per_run() {
        let enc = "data: {\"choices\":[{\"delta\":{\"content\":\"\",\"reasoning\":null,\"reasoning_details\":[{\"type\":\"reasoning.encrypted\",\"data\":\"x\"}]}}]}\n\n";
        let body = format!(
            "{enc}{enc}data: {{\"choices\":[{{\"delta\":{{\"content\":\"A\"}}}}]}}\n\n{enc}"
        );
        let out = parse(&body);
        let start = Piece::BlockStart {
            kind: ThinkingKind::Redacted,
        };
        assert_eq!(out, [start.clone(), Piece::Answer("A".into()), start]);
    }

    #[test]
    fn mistral_content_arrays_and_strings_mix() {
        let out = parse(
            "data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":\"hm\"}]}]}}]}\n\n\
             data: {\"choices\":[{\"delta\":{\"content\":\".\"}}]}\n\n\
             data: {\"choices\":[{\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"4\"}]}}]}\n\n",
        );
        assert_eq!(
            out,
            [
                raw("hm"),
                Piece::Answer(".".into()),
                Piece::Answer("4".into())
            ]
        );
    }

    #[test]
    fn usage_variants_normalize() {
        let usage = |body: &str| match parse(body).pop() {
            Some(Piece::Usage(u)) => u,
            other => panic!("{other:?}"),
        };
        // The prompt cache's part of the input.
        let u = usage("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1486,\"completion_tokens\":651,\"prompt_tokens_details\":{\"cached_tokens\":1408}}}\n\n");
        assert_eq!(
            (u.input_tokens, u.cached_input_tokens),
            (Some(1486), Some(1408))
        );
        // xAI: reasoning outside completion_tokens.
        let u = usage("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":354,\"completion_tokens_details\":{\"reasoning_tokens\":340}}}\n\n");
        assert_eq!(u.output_tokens, Some(342));
        assert_eq!(u.reasoning_tokens, Some(340));
        // Azure DeepSeek: reasoning_tokens at the top level.
        let u = usage("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":19,\"total_tokens\":1739,\"completion_tokens\":1720,\"reasoning_tokens\":7}}\n\n");
        assert_eq!(
            u,
            Usage {
                input_tokens: Some(19),
                output_tokens: Some(1720),
                reasoning_tokens: Some(7),
                file_tokens: None,
                ..Default::default()
            }
        );
        // Older Groq: only in x_groq.
        let u = usage("data: {\"choices\":[],\"x_groq\":{\"usage\":{\"prompt_tokens\":21,\"completion_tokens\":988}}}\n\n");
        assert_eq!(u.input_tokens, Some(21));
        assert_eq!(u.output_tokens, Some(988));
    }

    #[test]
    fn nothing_is_read_after_done() {
        let out =
            parse("data: [DONE]\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n");
        assert_eq!(out, [Piece::End]);
    }

    #[test]
    fn the_request_streams_with_usage_and_carries_the_key_only_in_a_header() {
        let config = Config::from_lookup(|n| match n {
            "PONDER_API_KEY" => Some("sk-x".into()),
            "PONDER_MODEL" => Some("m".into()),
            _ => None,
        })
        .unwrap();
        let req = request(
            &config,
            "http://h/v1",
            &[ChatMessage::user("hi")],
            &super::super::TurnOptions::default_for(&config),
        );
        assert_eq!(req.url, "http://h/v1/chat/completions");
        assert_eq!(req.body["stream"], true);
        assert_eq!(req.body["model"], "m");
        assert_eq!(req.body["messages"][0]["role"], "user");
        assert!(!req.body.to_string().contains("sk-x"));
        assert!(req
            .headers
            .contains(&("authorization", "Bearer sk-x".into())));
    }

    #[test]
    fn function_calls_openrouter_annotations_and_perplexity_sources() {
        let out = parse(concat!(
            "data: {\"citations\":[\"https://a.example/\"],\"choices\":[{\"delta\":{\"content\":\"A [1]\"}}]}\n\n",
            "data: {\"citations\":[\"https://a.example/\",\"https://b.example/\"],\"choices\":[{\"delta\":{\"annotations\":[{\"type\":\"url_citation\",\"url_citation\":{\"url\":\"https://c.example/\",\"title\":\"C\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"weather\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n",
        ));
        let call = |input: &str| Piece::ToolCall {
            id: "c1".into(),
            name: "weather".into(),
            input: input.into(),
        };
        assert_eq!(
            out,
            [
                Piece::Source {
                    url: "https://a.example/".into(),
                    title: None
                },
                Piece::Answer("A [1]".into()),
                Piece::Source {
                    url: "https://b.example/".into(),
                    title: None
                },
                Piece::Cite {
                    url: "https://c.example/".into(),
                    title: Some("C".into())
                },
                call(""),
                call("{\"city\":\"Paris\"}"),
                Piece::Finish("tool_calls".into()),
                Piece::End,
            ]
        );
    }

    #[test]
    fn reasoning_details_are_merged_by_index_and_go_back_with_their_answer() {
        let out = parse(
            "data: {\"choices\":[{\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"a\",\"index\":0}]}}]}\n\n\
             data: {\"choices\":[{\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"b\",\"signature\":\"sig\",\"index\":0},{\"type\":\"reasoning.encrypted\",\"data\":\"enc\",\"index\":1}]}}]}\n\n\
             data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\n",
        );
        let details = vec![
            json!({"type": "reasoning.text", "text": "ab", "signature": "sig", "index": 0}),
            json!({"type": "reasoning.encrypted", "data": "enc", "index": 1}),
        ];
        assert_eq!(super::super::states(&out), details);
        let config =
            Config::from_lookup(|n| (n == "PONDER_PROVIDER").then(|| "openai".into())).unwrap();
        let messages = [
            ChatMessage::user("q"),
            ChatMessage {
                replay: details.clone(),
                ..ChatMessage::assistant("a")
            },
            ChatMessage::user("q2"),
        ];
        let body = request(&config, "http://u", &messages, &TurnOptions::default()).body;
        assert_eq!(body["messages"][1]["reasoning_details"], json!(details));
        assert!(body["messages"][0].get("reasoning_details").is_none());
    }
}
