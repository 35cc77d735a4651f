//! Every recorded reasoning or error stream of a supported provider (tests/fixtures/providers,
//! real captures from public repositories), replayed through its adapter and the turn
//! assembler: the text the reader ends up with equals the concatenation in the source, blocks
//! open and close where the provider says with the right kind, usage and the terminal event
//! are the recorded ones. Then the same bytes re-chunked at every byte offset and at random
//! split points, with garbage lines inserted, and cut short: the events do not change (or end
//! in `error`), and no U+FFFD appears.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use common::{fixtures, reader_view};

use ponder::domain::{Failure, ThinkingKind, TurnEvent};
use ponder::server::config::ProviderKind;
use ponder::server::providers::parser_with_limit;
use ponder::server::turn::replay::Collector;
use ponder::server::turn::TurnAssembler;
use ponder::wire::sse::DEFAULT_LINE_LIMIT;
use serde_json::Value;
use ProviderKind::{Anthropic, Gemini, Interactions, Ollama, OpenAi, Responses};
use ThinkingKind::{Hidden, Raw, Redacted, Summary};

#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    Done(&'static str),
    Error { retryable: bool },
}

type Counts = [Option<u64>; 3];

#[derive(Clone)]
struct Case {
    file: &'static str,
    part: usize,
    provider: ProviderKind,
    /// The model the request named, where Ponder would have sent that request: it decides how
    /// the Anthropic adapter labels readable thinking. Empty reads as a model that takes a
    /// manual budget.
    model: &'static str,
    think_start: bool,
    /// A change to the recorded bytes, for a variant no recording shows.
    derive: Option<fn(Vec<u8>) -> Vec<u8>>,
    /// The kind of each `thinking_start`, in order.
    blocks: &'static [ThinkingKind],
    end: End,
    /// input, output, reasoning tokens in `done`.
    usage: Counts,
}

impl Case {
    fn name(&self) -> String {
        let mut name = format!("{}#{}", self.file, self.part);
        if self.think_start {
            name.push_str(" (think_start)");
        }
        if self.derive.is_some() {
            name.push_str(" (derived)");
        }
        name
    }

    fn body(&self) -> Vec<u8> {
        let body = fixtures::body(self.file, self.part);
        match self.derive {
            Some(f) => f(body),
            None => body,
        }
    }
}

fn c(
    file: &'static str,
    provider: ProviderKind,
    blocks: &'static [ThinkingKind],
    end: End,
    usage: Counts,
) -> Case {
    Case {
        file,
        part: 0,
        provider,
        model: "",
        think_start: false,
        derive: None,
        blocks,
        end,
        usage,
    }
}

const STOP: End = End::Done("stop");
const TOOLS: End = End::Done("tool_calls");
const FINAL_ERROR: End = End::Error { retryable: false };

fn u(input: u64, output: u64, reasoning: Option<u64>) -> Counts {
    [Some(input), Some(output), reasoning]
}

/// The DeepSeek-R1 stream with its opening `<think>` token removed: what a server sends when
/// the chat template opened the tag (FIXTURES.md: no such recording exists).
fn without_opening_tag(body: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8(body).expect("UTF-8 fixture");
    text.replacen(r#""content":"<think>""#, r#""content":"""#, 1)
        .into_bytes()
}

fn cases() -> Vec<Case> {
    let chat = |f: &'static str| format!("openai-chat/{f}");
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let oc = |f: &'static str| leak(chat(f));
    let ant = |f: &'static str| leak(format!("anthropic/{f}"));
    let rsp = |f: &'static str| leak(format!("openai-responses/{f}"));
    let gem = |f: &'static str| leak(format!("gemini/{f}"));
    let gi = |f: &'static str| leak(format!("gemini-interactions/{f}"));
    let hf = "inline-think/extracted/test_hf_model_thinking_part_iter.yaml.interaction0.sse";
    let mut v = vec![
        // Chat Completions, reasoning in its own field.
        c(oc("alibaba-reasoning.chunks.txt"), OpenAi, &[Raw], STOP, u(24, 1355, Some(1084))),
        c(oc("azure-deepseek-reasoning.1.chunks.txt"), OpenAi, &[Raw], STOP, u(19, 1720, Some(0))),
        c(oc("azure-model-router.1.chunks.txt"), OpenAi, &[], STOP, u(15, 78, Some(64))),
        c(oc("cererebras-structured-output-tools.1.chunks.txt"), OpenAi, &[Raw], TOOLS, u(322, 104, Some(97))),
        Case {
            part: 1,
            ..c(oc("cererebras-structured-output-tools.1.chunks.txt"), OpenAi, &[Raw], TOOLS, u(433, 122, Some(108)))
        },
        c(oc("deepseek-reasoning.chunks.txt"), OpenAi, &[Raw], STOP, u(18, 219, Some(205))),
        c(oc("deepseek-tool-call.chunks.txt"), OpenAi, &[Raw], TOOLS, u(339, 83, Some(39))),
        c(oc("groq-reasoning.chunks.txt"), OpenAi, &[Raw], STOP, u(17, 1107, Some(963))),
        c(oc("openai-text.chunks.txt"), OpenAi, &[], STOP, u(16, 300, Some(0))),
        // xAI leaves reasoning out of completion_tokens (2): output is 2 + 340.
        c(oc("xai-text.chunks.txt"), OpenAi, &[Raw], STOP, u(12, 342, Some(340))),
        c(oc("extracted/test_deepseek_model_thinking_stream.yaml.interaction0.sse"), OpenAi, &[Raw], STOP, u(6, 212, Some(198))),
        c(oc("extracted/test_openrouter_stream_error.yaml.interaction0.sse"), OpenAi, &[Raw], FINAL_ERROR, [None; 3]),
        c(oc("extracted/test_openrouter_stream_with_reasoning.yaml.interaction0.sse"), OpenAi, &[Redacted], STOP, u(9, 104, Some(0))),
        c(oc("extracted/test_openrouter_streaming_reasoning.yaml.interaction0.sse"), OpenAi, &[Raw], STOP, u(43, 36, Some(13))),
        c(oc("extracted/test_tool_use_failed_error_streaming.yaml.interaction0.sse"), OpenAi, &[Raw], FINAL_ERROR, [None; 3]),
        c(oc("extracted/test_tool_use_failed_error_streaming.yaml.interaction1.sse"), OpenAi, &[Raw], TOOLS, u(304, 49, Some(23))),
        c(oc("extracted/test_tool_use_failed_error_streaming.yaml.interaction2.sse"), OpenAi, &[Raw], STOP, u(339, 58, Some(38))),
        c(oc("extracted/test_zai_thinking_stream.yaml.interaction0.sse"), OpenAi, &[Raw], STOP, u(13, 564, Some(561))),
        // Mistral's content arrays.
        c("mistral/mistral-reasoning.chunks.txt", OpenAi, &[Raw], STOP, u(10, 46, None)),
        c("mistral/extracted/test_mistral_model_thinking_part_iter.yaml.interaction0.sse", OpenAi, &[Raw], STOP, u(10, 232, None)),
        // Inline <think> tags, JSON-escaped on Groq; the parsed variant of the same model.
        c("inline-think/extracted/test_groq_model_thinking_part_iter.yaml.interaction0.sse", OpenAi, &[Raw], STOP, u(21, 988, None)),
        c("inline-think/extracted/test_groq_model_thinking_part_iter.yaml.interaction1.sse", OpenAi, &[Raw], STOP, u(573, 1509, None)),
        c(hf, OpenAi, &[Raw], STOP, u(10, 955, None)),
        Case {
            think_start: true,
            ..c(hf, OpenAi, &[Raw], STOP, u(10, 955, None))
        },
        Case {
            derive: Some(without_opening_tag),
            ..c(hf, OpenAi, &[Raw], STOP, u(10, 955, None))
        },
        Case {
            derive: Some(without_opening_tag),
            think_start: true,
            ..c(hf, OpenAi, &[Raw], STOP, u(10, 955, None))
        },
        // Anthropic Messages. Input counts include the cached prompt.
        c(ant("anthropic-clear-thinking.1.chunks.txt"), Anthropic, &[Raw], STOP, u(69, 53, None)),
        c(ant("anthropic-code-execution-20260120-prompt-cache.1.chunks.txt"), Anthropic, &[], STOP, u(6 + 3337 + 6289, 198, Some(0))),
        c(ant("anthropic-combined-context-editing.1.chunks.txt"), Anthropic, &[Raw], STOP, u(50, 485, None)),
        c(ant("extracted/test_anthropic_mcp_servers_stream.yaml.interaction0.sse"), Anthropic, &[Raw], STOP, u(3042, 354, None)),
        c(ant("extracted/test_anthropic_model_thinking_part_redacted_stream.yaml.interaction0.sse"), Anthropic, &[Redacted, Redacted], STOP, u(92, 189, None)),
        c(ant("extracted/test_anthropic_model_thinking_part_stream.yaml.interaction0.sse"), Anthropic, &[Raw], STOP, u(43, 282, None)),
        c(ant("extracted/test_anthropic_model_web_search_tool_stream.yaml.interaction0.sse"), Anthropic, &[Raw], STOP, u(22397, 637, None)),
        c(ant("extracted/test_fixed_version_tool_chain_with_thinking_display_regression.yaml.interaction0.sse"), Anthropic, &[Raw], TOOLS, u(598, 92, Some(53))),
        c(ant("extracted/test_fixed_version_tool_chain_with_thinking_display_regression.yaml.interaction1.sse"), Anthropic, &[], STOP, u(707, 89, Some(0))),
        // Adaptive thinking as Ponder asks Opus 4.6 for it: the thinking is a summary.
        Case {
            model: "claude-opus-4-6",
            ..c(ant("extracted/test_opus_46_adaptive_thinking.yaml.interaction0.sse"), Anthropic, &[Summary], STOP, u(34, 44, None))
        },
        c(ant("extracted/test_pause_turn_web_search_streaming_vcr.yaml.interaction0.sse"), Anthropic, &[Raw], End::Done("pause_turn"), u(404500, 943, Some(261))),
        c(ant("extracted/test_pause_turn_web_search_streaming_vcr.yaml.interaction1.sse"), Anthropic, &[], STOP, u(482529, 1310, Some(0))),
        c(ant("extracted/test_thinking_prompt.yaml.interaction0.sse"), Anthropic, &[Raw], STOP, u(46, 84, None)),
        // Sonnet 5 asked for adaptive thinking summarized, as Ponder asks it: a summary.
        Case {
            model: "claude-sonnet-5",
            ..c(ant("anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt"), Anthropic, &[Summary], STOP, u(47, 373, Some(62)))
        },
        // The same question with the display left at its default, omitted: only a signature.
        Case {
            model: "claude-sonnet-5",
            ..c(ant("anthropic-claude-sonnet-5-reasoning-generic.chunks.txt"), Anthropic, &[Hidden], STOP, u(47, 496, Some(62)))
        },
        // Sonnet 5 asked without `thinking` (and with the advisor tool): omitted thinking again.
        c(ant("extracted/test_anthropic_advisor_tool_stream.yaml.interaction0.sse"), Anthropic, &[Hidden], STOP, u(2411, 145, Some(47))),
        // Sonnet 4.6 asked with a manual budget, which Ponder never sends it: raw thinking.
        c(ant("extracted/test_anthropic_code_execution_tool_stream.yaml.interaction0.sse"), Anthropic, &[Raw], STOP, u(4714, 304, None)),
        c(ant("extracted/test_sonnet_46_effort_without_thinking.yaml.interaction0.sse"), Anthropic, &[], STOP, u(17, 12, None)),
        // OpenAI Responses and the servers that copy it.
        c(rsp("github-copilot-id-rotation.1.chunks.txt"), Responses, &[Summary], STOP, u(19, 105, Some(44))),
        c(rsp("lmstudio-tool-call.1.chunks.txt"), Responses, &[Raw], TOOLS, u(182, 61, Some(48))),
        c(rsp("openai-error.1.chunks.txt"), Responses, &[], FINAL_ERROR, [None; 3]),
        c(rsp("xai-text-with-reasoning-streaming-store-false.1.chunks.txt"), Responses, &[Summary], STOP, u(216, 831, Some(253))),
        c(rsp("xai-text-with-reasoning-streaming.1.chunks.txt"), Responses, &[Summary], STOP, u(216, 923, Some(323))),
        c(rsp("extracted/test_deepseek_responses[text_stream].yaml.interaction0.sse"), Responses, &[Raw], STOP, u(90, 15, Some(7))),
        c(rsp("extracted/test_deepseek_responses[function_tool_stream].yaml.interaction0.sse"), Responses, &[Raw], TOOLS, u(366, 59, Some(14))),
        c(rsp("extracted/test_deepseek_responses[function_tool_stream].yaml.interaction1.sse"), Responses, &[], STOP, u(440, 14, Some(0))),
        // Reasoning items that never show text (encrypted only): hidden blocks.
        c(rsp("extracted/test_openai_responses_phase_streamed_on_part_start.yaml.interaction0.sse"), Responses, &[Hidden], TOOLS, u(63, 69, Some(26))),
        c(rsp("extracted/test_openai_responses_phase_streamed_on_part_start.yaml.interaction1.sse"), Responses, &[], STOP, u(147, 16, Some(0))),
        c(rsp("extracted/test_openai_responses_streaming_usage.yaml.interaction0.sse"), Responses, &[Hidden], TOOLS, u(53, 469, Some(448))),
        // OpenRouter announces its reasoning item like OpenAI (no `content` list): the block
        // starts as a summary before its raw text shows (see providers/responses.rs).
        c(rsp("extracted/test_openai_responses_raw_cot_stream_openrouter.yaml.interaction0.sse"), Responses, &[Raw], STOP, u(78, 37, Some(22))),
        c(rsp("extracted/test_openai_responses_thinking_part_iter.yaml.interaction0.sse"), Responses, &[Summary], STOP, u(13, 1680, Some(1408))),
        c(rsp("extracted/test_openai_responses_thinking_with_code_execution_tool_stream.yaml.interaction0.sse"), Responses, &[Summary], STOP, u(3727, 347, Some(128))),
        // Gemini: output counts thoughts too; reasoning without thought text is a redacted block.
        c(gem("google-reasoning-gemini3.chunks.txt"), Gemini, &[Hidden], STOP, u(9, 23 + 302, Some(302))),
        c(gem("google-reasoning.chunks.txt"), Gemini, &[Hidden], STOP, u(9, 29 + 256, Some(256))),
        c(gem("google-tool-call-gemini3.chunks.txt"), Gemini, &[Hidden], TOOLS, u(29, 15 + 804, Some(804))),
        c(gem("extracted/test_google_model_thinking_part_iter.yaml.interaction0.sse"), Gemini, &[Summary], STOP, u(34, 469 + 787, Some(787))),
        c(gem("extracted/test_google_streaming_tool_call_thought_signature.yaml.interaction0.sse"), Gemini, &[Hidden], TOOLS, u(29, 10 + 202, Some(202))),
        c(gem("extracted/test_google_streaming_tool_call_thought_signature.yaml.interaction1.sse"), Gemini, &[], STOP, u(257, 8, None)),
        c(gem("extracted/test_prompt.yaml.interaction0.json-array"), Gemini, &[Summary], STOP, u(11, 2 + 291, Some(291))),
        c(gem("extracted/test_tools.yaml.interaction0.json-array"), Gemini, &[Summary], TOOLS, u(32, 12 + 42, Some(42))),
        c(gem("extracted/test_tools.yaml.interaction1.json-array"), Gemini, &[], TOOLS, u(105, 13, None)),
        c(gem("extracted/test_tools.yaml.interaction2.json-array"), Gemini, &[], STOP, u(137, 6, None)),
        c(gem("extracted/test_tools_with_gemini_3_thought_signatures.yaml.interaction0.json-array"), Gemini, &[Hidden], TOOLS, u(60, 16 + 32, Some(32))),
        c(gem("extracted/test_tools_with_gemini_3_thought_signatures.yaml.interaction1.json-array"), Gemini, &[], STOP, u(121, 9, None)),
        // Ollama (the only capture is of /api/generate, which the adapter also reads).
        c("ollama/extracted/ollama_generate_stream_json.md.demo0.ndjson", Ollama, &[Raw], STOP, u(81, 58, None)),
    ];
    // Google's Interactions API (gemini-2.5-flash): every recorded thought step carries only
    // its signature, so each is a hidden block; output counts the thoughts.
    v.extend([
        c(
            gi("basic.chunks.txt"),
            Interactions,
            &[Hidden],
            STOP,
            u(7, 26 + 115, Some(115)),
        ),
        c(
            gi("google-search.chunks.txt"),
            Interactions,
            &[Hidden],
            STOP,
            u(22, 590 + 1173, Some(1173)),
        ),
        c(
            gi("multi-turn-stateful-turn1.chunks.txt"),
            Interactions,
            &[Hidden],
            STOP,
            u(10, 31 + 137, Some(137)),
        ),
        c(
            gi("multi-turn-stateful-turn2.chunks.txt"),
            Interactions,
            &[Hidden],
            STOP,
            u(12, 54 + 391, Some(391)),
        ),
        c(
            gi("multi-turn-stateless-turn1.chunks.txt"),
            Interactions,
            &[Hidden],
            STOP,
            u(10, 29 + 174, Some(174)),
        ),
        c(
            gi("multi-turn-stateless-turn2.chunks.txt"),
            Interactions,
            &[Hidden],
            STOP,
            u(52, 22 + 395, Some(395)),
        ),
        c(
            gi("tool-call-step1.chunks.txt"),
            Interactions,
            &[Hidden],
            TOOLS,
            u(53, 15 + 65, Some(65)),
        ),
        c(
            gi("tool-call-step2.chunks.txt"),
            Interactions,
            &[Hidden],
            STOP,
            u(161, 19, Some(0)),
        ),
    ]);
    // Several responses recorded one after the other: a reasoning one, then tool loops.
    for file in [
        "openai-reasoning-encrypted-content.1.chunks.txt",
        "azure-reasoning-encrypted-content.1.chunks.txt",
    ] {
        let (first, rest) = if file.starts_with("openai") {
            ((134, 28), [(221, 26), (260, 26), (299, 12)])
        } else {
            ((137, 28), [(237, 26), (276, 26), (315, 12)])
        };
        // Each response but the last stops for the calculator the app is to run.
        v.push(c(
            rsp(file),
            Responses,
            &[Summary],
            TOOLS,
            u(first.0, first.1, Some(0)),
        ));
        for (part, (i, o)) in rest.into_iter().enumerate() {
            let end = if part + 1 < 3 { TOOLS } else { STOP };
            v.push(Case {
                part: part + 1,
                ..c(rsp(file), Responses, &[], end, u(i, o, Some(0)))
            });
        }
    }
    v
}

/// The events of one replay, with a clock that ticks once per piece.
fn replay<'a>(case: &Case, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<TurnEvent> {
    replay_with_state(case, chunks).0
}

/// The events of one replay and the reasoning state it returned for the next turn (collected
/// as the server does).
fn replay_with_state<'a>(
    case: &Case,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<TurnEvent>, Option<Vec<Value>>) {
    let mut parser = parser_with_limit(
        case.provider,
        case.model,
        case.think_start,
        DEFAULT_LINE_LIMIT,
    );
    let mut asm = TurnAssembler::new(true);
    let mut state = Collector::default();
    let (mut pieces, mut events, mut clock) = (Vec::new(), Vec::new(), 0);
    let mut apply = |pieces: &mut Vec<_>, events: &mut Vec<TurnEvent>, clock: &mut u64| {
        for piece in pieces.drain(..) {
            *clock += 7;
            if !state.take(&piece) {
                asm.push(piece, *clock, events);
            }
        }
    };
    for chunk in chunks {
        parser.feed(chunk, &mut pieces);
        apply(&mut pieces, &mut events, &mut clock);
    }
    parser.finish(&mut pieces);
    apply(&mut pieces, &mut events, &mut clock);
    asm.end_of_stream(clock, &mut events);
    (events, state.into_items())
}

fn replay_whole(case: &Case) -> Vec<TurnEvent> {
    let body = case.body();
    replay(case, [body.as_slice()])
}

// ---------- what the source says, read independently of the adapters ----------

/// The `data:` payloads of an SSE body (comments, `event:` lines and framing dropped).
fn sse_payloads(body: &str) -> Vec<String> {
    let body = body.replace("\r\n", "\n");
    body.split("\n\n")
        .map(|frame| {
            frame
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|d| !d.trim().is_empty() && d.trim() != "[DONE]")
        .collect()
}

fn payloads(case: &Case) -> Vec<Value> {
    let body = String::from_utf8(case.body()).expect("UTF-8 fixture");
    let texts: Vec<String> = if case.file.ends_with(".json-array") {
        let all: Vec<Value> = serde_json::from_str(&body).expect("JSON array");
        return all;
    } else if case.file.ends_with(".ndjson") {
        body.lines().map(str::to_string).collect()
    } else {
        sse_payloads(&body)
    };
    texts
        .iter()
        .filter_map(|t| serde_json::from_str(t).ok())
        .collect()
}

fn s(v: &Value, path: &[&str]) -> String {
    let mut v = v;
    for key in path {
        match v.get(key) {
            Some(next) => v = next,
            None => return String::new(),
        }
    }
    v.as_str().unwrap_or_default().to_string()
}

/// (reasoning, answer) as concatenated from the source.
fn source_text(case: &Case) -> (String, String) {
    let (mut think, mut answer) = (String::new(), String::new());
    let all = payloads(case);
    match case.provider {
        OpenAi => {
            for p in &all {
                for ch in p["choices"].as_array().into_iter().flatten() {
                    let d = &ch["delta"];
                    let plain = s(d, &["reasoning_content"]) + &s(d, &["reasoning"]);
                    think.push_str(&plain);
                    if plain.is_empty() {
                        for det in d["reasoning_details"].as_array().into_iter().flatten() {
                            think.push_str(&s(det, &["text"]));
                            think.push_str(&s(det, &["summary"]));
                        }
                    }
                    match &d["content"] {
                        Value::String(t) => answer.push_str(t),
                        Value::Array(parts) => {
                            for part in parts {
                                if part["type"] == "thinking" {
                                    for t in part["thinking"].as_array().into_iter().flatten() {
                                        think.push_str(&s(t, &["text"]));
                                    }
                                } else {
                                    answer.push_str(&s(part, &["text"]));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            if let Some((before, after)) = answer.clone().split_once("</think>") {
                let before = before.trim_start();
                match before.strip_prefix("<think>") {
                    Some(inner) => think.push_str(inner.trim_start()),
                    None if case.think_start => think.push_str(before),
                    // Reclassified: exactly what was shown as answer.
                    None => think.push_str(answer.split_once("</think>").map_or("", |x| x.0)),
                }
                answer = after.trim_start().to_string();
            }
        }
        Anthropic => {
            for p in &all {
                think.push_str(&s(p, &["delta", "thinking"]));
                think.push_str(&s(p, &["content_block", "thinking"]));
                if p["delta"]["type"] == "text_delta" {
                    answer.push_str(&s(p, &["delta", "text"]));
                }
                if p["content_block"]["type"] == "text" {
                    answer.push_str(&s(p, &["content_block", "text"]));
                }
            }
        }
        Responses => {
            let mut parts_with_text = std::collections::HashMap::new();
            for p in &all {
                let t = s(p, &["type"]);
                let item = p["output_index"].as_u64().unwrap_or(0);
                if t == "response.reasoning_summary_part.added"
                    && parts_with_text.get(&item) == Some(&true)
                {
                    think.push_str("\n\n");
                    parts_with_text.insert(item, false);
                }
                if t == "response.reasoning_summary_text.delta"
                    || t == "response.reasoning_text.delta"
                {
                    let d = s(p, &["delta"]);
                    if !d.is_empty() {
                        parts_with_text.insert(item, true);
                    }
                    think.push_str(&d);
                }
                if t == "response.output_text.delta" {
                    answer.push_str(&s(p, &["delta"]));
                }
            }
        }
        Gemini => {
            for p in &all {
                for part in p["candidates"][0]["content"]["parts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    if part["thought"] == true {
                        think.push_str(&s(part, &["text"]));
                    } else {
                        answer.push_str(&s(part, &["text"]));
                    }
                }
            }
        }
        // Google's Interactions API: `step.delta` events name what they add.
        Interactions => {
            for p in all.iter().filter(|p| p["event_type"] == "step.delta") {
                let d = &p["delta"];
                match d["type"].as_str() {
                    Some("text") => answer.push_str(&s(d, &["text"])),
                    Some("thought_summary") => think.push_str(&s(d, &["content", "text"])),
                    _ => {}
                }
            }
        }
        Ollama => {
            for p in &all {
                think.push_str(&s(p, &["thinking"]));
                think.push_str(&s(p, &["message", "thinking"]));
                answer.push_str(&s(p, &["response"]));
                answer.push_str(&s(p, &["message", "content"]));
            }
        }
    }
    (think, answer)
}

// ---------- checks ----------

/// Every way `events` differs from what the case says, as readable lines.
fn problems(case: &Case, events: &[TurnEvent]) -> Vec<String> {
    let mut bad = Vec::new();
    let name = case.name();
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    if terminals != 1 || !events.last().is_some_and(TurnEvent::is_terminal) {
        bad.push(format!(
            "{name}: {terminals} terminal events, last {:?}",
            events.last()
        ));
    }
    match (case.end, events.last()) {
        (
            End::Done(reason),
            Some(TurnEvent::Done {
                finish_reason,
                usage,
                ..
            }),
        ) => {
            if finish_reason != reason {
                bad.push(format!("{name}: finish {finish_reason}, want {reason}"));
            }
            let got = usage
                .as_ref()
                .map(|u| [u.input_tokens, u.output_tokens, u.reasoning_tokens]);
            if got != Some(case.usage) {
                bad.push(format!("{name}: usage {got:?}, want {:?}", case.usage));
            }
        }
        (
            End::Error { retryable },
            Some(TurnEvent::Error(Failure {
                retryable: r,
                message,
                ..
            })),
        ) => {
            if *r != retryable {
                bad.push(format!("{name}: retryable {r} ({message})"));
            }
        }
        (end, last) => bad.push(format!("{name}: ended {last:?}, want {end:?}")),
    }
    // A second thinking_start for the open block corrects its kind: count each block once,
    // with its final kind.
    let mut kinds: Vec<ThinkingKind> = Vec::new();
    let mut last_block: Option<u32> = None;
    for e in events {
        if let TurnEvent::ThinkingStart { block, kind, .. } = e {
            if last_block == Some(*block) {
                if let Some(k) = kinds.last_mut() {
                    *k = *kind;
                }
            } else {
                kinds.push(*kind);
            }
            last_block = Some(*block);
        }
    }
    if kinds != case.blocks {
        bad.push(format!("{name}: blocks {kinds:?}, want {:?}", case.blocks));
    }
    let mut open: Option<u32> = None;
    let mut next = 0;
    for e in events {
        match e {
            TurnEvent::ThinkingStart { block, .. } if open == Some(*block) => {}
            TurnEvent::ThinkingStart { block, .. } => {
                if open.is_some() || *block != next {
                    bad.push(format!(
                        "{name}: block {block} starts while {open:?} is open"
                    ));
                }
                open = Some(*block);
                next += 1;
            }
            TurnEvent::Thinking { block, text } if open != Some(*block) || text.is_empty() => {
                bad.push(format!(
                    "{name}: thinking for {block} while {open:?} is open"
                ));
            }
            TurnEvent::ThinkingEnd {
                block, duration_ms, ..
            } => {
                if open != Some(*block) || duration_ms.is_none() {
                    bad.push(format!("{name}: end of {block} while {open:?} is open"));
                }
                open = None;
            }
            TurnEvent::Delta { text } if open.is_some() || text.is_empty() => {
                bad.push(format!("{name}: delta inside block {open:?}"));
            }
            TurnEvent::Reclassify { block } if open != Some(*block) => {
                bad.push(format!(
                    "{name}: reclassify into {block} while {open:?} is open"
                ));
            }
            TurnEvent::Done { .. } if open.is_some() => {
                bad.push(format!("{name}: done with block {open:?} still open"));
            }
            _ => {}
        }
    }
    let (think, answer) = reader_view(events);
    let (want_think, want_answer) = source_text(case);
    if think != want_think {
        bad.push(format!(
            "{name}: reasoning differs ({} vs {} chars)\n got: {:?}\nwant: {:?}",
            think.len(),
            want_think.len(),
            think.chars().take(200).collect::<String>(),
            want_think.chars().take(200).collect::<String>()
        ));
    }
    if answer != want_answer {
        bad.push(format!(
            "{name}: answer differs ({} vs {} chars)\n got: {:?}\nwant: {:?}",
            answer.len(),
            want_answer.len(),
            answer.chars().take(200).collect::<String>(),
            want_answer.chars().take(200).collect::<String>()
        ));
    }
    if think.contains('\u{FFFD}') || answer.contains('\u{FFFD}') {
        bad.push(format!("{name}: U+FFFD in the text"));
    }
    bad
}

fn assert_no_problems(problems: Vec<String>) {
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn there_are_more_than_fifty_recorded_streams() {
    let cases = cases();
    let recorded = cases
        .iter()
        .filter(|c| c.derive.is_none() && !c.think_start)
        .count();
    assert!(recorded > 50, "{recorded}");
}

#[test]
fn every_recorded_stream_replays_to_its_text_blocks_usage_and_end() {
    let mut all = Vec::new();
    for case in cases() {
        all.extend(problems(&case, &replay_whole(&case)));
    }
    assert_no_problems(all);
}

#[test]
fn a_missing_opening_tag_is_reclassified_or_never_shown_as_answer() {
    let hf = "inline-think/extracted/test_hf_model_thinking_part_iter.yaml.interaction0.sse";
    let base = c(hf, OpenAi, &[Raw], STOP, u(10, 955, None));
    let reclassified = replay_whole(&Case {
        derive: Some(without_opening_tag),
        ..base.clone()
    });
    assert!(reclassified.contains(&TurnEvent::Reclassify { block: 0 }));
    let with_start = replay_whole(&Case {
        derive: Some(without_opening_tag),
        think_start: true,
        ..base.clone()
    });
    assert!(!with_start
        .iter()
        .any(|e| matches!(e, TurnEvent::Reclassify { .. })));
    // With think_start the first delta comes after the block ended, and it is the answer.
    let first_delta = with_start
        .iter()
        .position(|e| matches!(e, TurnEvent::Delta { .. }));
    let end = with_start
        .iter()
        .position(|e| matches!(e, TurnEvent::ThinkingEnd { .. }));
    assert!(end < first_delta, "{with_start:?}");
    assert_eq!(reader_view(&with_start), reader_view(&replay_whole(&base)));
}

/// Splits `bytes` into chunks of the sizes a small generator picks, from 1 to `max` bytes.
fn random_chunks(bytes: &[u8], seed: u64, max: usize) -> Vec<&[u8]> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = 1 + (state % max as u64) as usize;
        let end = (at + len).min(bytes.len());
        out.push(&bytes[at..end]);
        at = end;
    }
    out
}

#[test]
fn one_byte_at_a_time_changes_no_event() {
    let mut bad = Vec::new();
    for case in cases() {
        let body = case.body();
        let whole = replay_with_state(&case, [body.as_slice()]);
        let bytes = replay_with_state(&case, body.chunks(1));
        if bytes != whole {
            bad.push(format!("{}: byte-at-a-time events differ", case.name()));
        }
    }
    assert_no_problems(bad);
}

#[test]
fn a_split_at_every_byte_offset_changes_no_event() {
    // Every offset of every stream up to 4 KB (quadratic work); the larger ones are covered
    // by the one-byte-at-a-time replay, where every offset is a boundary at once.
    let mut bad = Vec::new();
    for case in cases() {
        let body = case.body();
        if body.len() > 4 * 1024 {
            continue;
        }
        let whole = replay_with_state(&case, [body.as_slice()]);
        for cut in 0..=body.len() {
            if replay_with_state(&case, [&body[..cut], &body[cut..]]) != whole {
                bad.push(format!("{}: split at {cut} differs", case.name()));
                break;
            }
        }
    }
    assert_no_problems(bad);
}

#[test]
fn random_split_points_change_no_event() {
    let mut bad = Vec::new();
    for case in cases() {
        let body = case.body();
        let whole = replay(&case, [body.as_slice()]);
        for seed in 1..=6 {
            let max = [3, 17, 64, 500, 4096, 9][seed as usize % 6];
            if replay(&case, random_chunks(&body, seed, max)) != whole {
                bad.push(format!(
                    "{}: random split (seed {seed}) differs",
                    case.name()
                ));
            }
        }
    }
    assert_no_problems(bad);
}

#[test]
fn lines_that_do_not_parse_are_skipped() {
    let mut bad = Vec::new();
    for case in cases()
        .into_iter()
        .filter(|c| !c.file.ends_with(".json-array"))
    {
        let body = String::from_utf8(case.body()).expect("UTF-8");
        let whole = replay(&case, [body.as_bytes()]);
        let garbage = if case.file.ends_with(".ndjson") {
            "{\"message\": not json at all\nnot even braces\n"
        } else {
            "data: {\"choices\": [ not json\n\ndata: \u{1}\u{2}\n\n"
        };
        let mut noisy = String::new();
        let separator = if case.file.ends_with(".ndjson") {
            "\n"
        } else {
            "\n\n"
        };
        for (i, piece) in body.split_inclusive(separator).enumerate() {
            noisy.push_str(piece);
            if i % 5 == 0 {
                noisy.push_str(garbage);
            }
        }
        if replay(&case, [noisy.as_bytes()]) != whole {
            bad.push(format!("{}: garbage lines changed the events", case.name()));
        }
    }
    assert_no_problems(bad);
}

#[test]
fn a_stream_cut_in_the_middle_ends_in_a_retryable_error_never_done() {
    let mut bad = Vec::new();
    for case in cases() {
        let body = case.body();
        let events = replay(&case, [&body[..body.len() / 2]]);
        if !matches!(events.last(), Some(TurnEvent::Error(Failure { .. }))) {
            bad.push(format!(
                "{}: cut stream ended {:?}",
                case.name(),
                events.last()
            ));
        }
        if events.iter().any(|e| matches!(e, TurnEvent::Done { .. })) {
            bad.push(format!("{}: cut stream said done", case.name()));
        }
    }
    assert_no_problems(bad);
}

/// What a replay says beyond text: each tool step as `name:status`, then how many sources
/// and citation markers.
fn rich_summary(events: &[TurnEvent]) -> (Vec<String>, usize, usize) {
    let mut tools: Vec<(String, String)> = Vec::new();
    let (mut sources, mut cites) = (0, 0);
    for e in events {
        match e {
            TurnEvent::ToolStart { tool, name, .. } if *tool as usize == tools.len() => {
                tools.push((name.clone(), "running".into()));
            }
            TurnEvent::ToolEnd { tool, status, .. } => {
                if let Some(t) = tools.get_mut(*tool as usize) {
                    t.1 = serde_json::to_value(status)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                }
            }
            TurnEvent::Source { .. } => sources += 1,
            TurnEvent::Cite { .. } => cites += 1,
            _ => {}
        }
    }
    (
        tools.into_iter().map(|(n, s)| format!("{n}:{s}")).collect(),
        sources,
        cites,
    )
}

/// The tool steps, sources and citations of every recording that has any, as a reader of the
/// recording counts them: tool calls (`server_tool_use`, `mcp_tool_use`, function calls, code
/// interpreter items, `functionCall` parts) with how they ended (a call left to the app, or
/// one cut by a paused turn, fails), distinct source addresses, and citation markers (one per
/// run of citations of one source). Every other recording has none.
#[test]
fn tool_steps_sources_and_citations_replay_as_recorded() {
    let pause0: &[&str] = &[
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:finished",
        "web_search:failed",
    ];
    let expected: &[(&str, usize, &[&str], usize, usize)] = &[
        ("openai-chat/cererebras-structured-output-tools.1.chunks.txt", 0, &["nonUsefulTool:failed"], 0, 0),
        ("openai-chat/cererebras-structured-output-tools.1.chunks.txt", 1, &["nonUsefulTool:failed"], 0, 0),
        ("openai-chat/deepseek-tool-call.chunks.txt", 0, &["weather:failed"], 0, 0),
        ("openai-chat/extracted/test_tool_use_failed_error_streaming.yaml.interaction1.sse", 0, &["get_something_by_name:failed"], 0, 0),
        ("anthropic/anthropic-code-execution-20260120-prompt-cache.1.chunks.txt", 0, &["bash_code_execution:finished"; 2], 0, 0),
        ("anthropic/extracted/test_anthropic_mcp_servers_stream.yaml.interaction0.sse", 0, &["ask_question (deepwiki):finished"], 0, 0),
        ("anthropic/extracted/test_anthropic_model_web_search_tool_stream.yaml.interaction0.sse", 0, &["web_search:finished"; 2], 20, 5),
        ("anthropic/extracted/test_fixed_version_tool_chain_with_thinking_display_regression.yaml.interaction0.sse", 0, &["fixed_version:failed"], 0, 0),
        ("anthropic/extracted/test_pause_turn_web_search_streaming_vcr.yaml.interaction0.sse", 0, pause0, 90, 0),
        ("anthropic/extracted/test_pause_turn_web_search_streaming_vcr.yaml.interaction1.sse", 0, &["web_search:finished"; 5], 51, 17),
        ("anthropic/extracted/test_anthropic_advisor_tool_stream.yaml.interaction0.sse", 0, &["advisor:finished"], 0, 0),
        ("anthropic/extracted/test_anthropic_code_execution_tool_stream.yaml.interaction0.sse", 0, &["bash_code_execution:finished"], 0, 0),
        ("openai-responses/lmstudio-tool-call.1.chunks.txt", 0, &["weather:failed"], 0, 0),
        ("openai-responses/extracted/test_deepseek_responses[function_tool_stream].yaml.interaction0.sse", 0, &["get_temperature:failed"], 0, 0),
        ("openai-responses/extracted/test_openai_responses_phase_streamed_on_part_start.yaml.interaction0.sse", 0, &["get_capital:failed"], 0, 0),
        ("openai-responses/extracted/test_openai_responses_streaming_usage.yaml.interaction0.sse", 0, &["final_result:failed"], 0, 0),
        ("openai-responses/extracted/test_openai_responses_thinking_with_code_execution_tool_stream.yaml.interaction0.sse", 0, &["code_interpreter:finished"; 3], 0, 0),
        ("gemini/extracted/test_google_streaming_tool_call_thought_signature.yaml.interaction0.sse", 0, &["get_country:failed"], 0, 0),
        ("gemini/google-tool-call-gemini3.chunks.txt", 0, &["weather:failed"], 0, 0),
        ("gemini-interactions/google-search.chunks.txt", 0, &["google_search:finished"], 8, 0),
        ("gemini-interactions/tool-call-step1.chunks.txt", 0, &["getWeather:failed"], 0, 0),
        ("gemini/extracted/test_tools.yaml.interaction0.json-array", 0, &["pelican_name_generator:failed"], 0, 0),
        ("gemini/extracted/test_tools.yaml.interaction1.json-array", 0, &["pelican_name_generator:failed"], 0, 0),
        ("gemini/extracted/test_tools_with_gemini_3_thought_signatures.yaml.interaction0.json-array", 0, &["multiply:failed"], 0, 0),
        ("openai-responses/openai-reasoning-encrypted-content.1.chunks.txt", 0, &["calculator:failed"], 0, 0),
        ("openai-responses/openai-reasoning-encrypted-content.1.chunks.txt", 1, &["calculator:failed"], 0, 0),
        ("openai-responses/openai-reasoning-encrypted-content.1.chunks.txt", 2, &["calculator:failed"], 0, 0),
        ("openai-responses/azure-reasoning-encrypted-content.1.chunks.txt", 0, &["calculator:failed"], 0, 0),
        ("openai-responses/azure-reasoning-encrypted-content.1.chunks.txt", 1, &["calculator:failed"], 0, 0),
        ("openai-responses/azure-reasoning-encrypted-content.1.chunks.txt", 2, &["calculator:failed"], 0, 0),
    ];
    let mut bad = Vec::new();
    let mut seen = 0;
    for case in cases()
        .into_iter()
        .filter(|c| !c.think_start && c.derive.is_none())
    {
        let events = replay_whole(&case);
        let (tools, sources, cites) = rich_summary(&events);
        let want = expected
            .iter()
            .find(|(f, part, ..)| *f == case.file && *part == case.part);
        let (want_tools, want_sources, want_cites) = match want {
            Some((_, _, t, s, c)) => {
                seen += 1;
                (t.iter().map(|s| s.to_string()).collect::<Vec<_>>(), *s, *c)
            }
            None => (Vec::new(), 0, 0),
        };
        if (&tools, sources, cites) != (&want_tools, want_sources, want_cites) {
            bad.push(format!(
                "{}: tools {tools:?} sources {sources} cites {cites}, want {want_tools:?} {want_sources} {want_cites}",
                case.name()
            ));
        }
        let mut open_blocks = std::collections::HashSet::new();
        let mut announced = std::collections::HashSet::new();
        for e in &events {
            match e {
                TurnEvent::ThinkingStart { block, .. } => {
                    open_blocks.insert(*block);
                }
                TurnEvent::ThinkingEnd { block, .. } => {
                    open_blocks.remove(block);
                }
                TurnEvent::ToolStart { .. } if !open_blocks.is_empty() => {
                    bad.push(format!(
                        "{}: a tool began inside an open block",
                        case.name()
                    ));
                }
                TurnEvent::Source { n, url, .. } => {
                    if !url.starts_with("https://") && !url.starts_with("http://") {
                        bad.push(format!("{}: source {url}", case.name()));
                    }
                    announced.insert(*n);
                }
                TurnEvent::Cite { n } if !announced.contains(n) => {
                    bad.push(format!("{}: cite {n} before its source", case.name()));
                }
                _ => {}
            }
        }
    }
    assert_eq!(
        seen,
        expected.len(),
        "every expectation matched a recording"
    );
    assert_no_problems(bad);
}

/// Thinking blocks on both sides of a tool stay two blocks, each timed on its own (seed 000
/// R5): the web search recording thinks, searches, then answers; the MCP one thinks, asks,
/// then answers.
#[test]
fn a_tool_step_ends_the_thinking_block_before_it() {
    for file in [
        "anthropic/extracted/test_anthropic_mcp_servers_stream.yaml.interaction0.sse",
        "anthropic/extracted/test_anthropic_model_web_search_tool_stream.yaml.interaction0.sse",
    ] {
        let case = cases().into_iter().find(|c| c.file == file).expect("case");
        let events = replay_whole(&case);
        let end = events
            .iter()
            .position(|e| matches!(e, TurnEvent::ThinkingEnd { .. }))
            .expect("the block ends");
        let tool = events
            .iter()
            .position(|e| matches!(e, TurnEvent::ToolStart { .. }))
            .expect("a tool");
        assert!(end < tool, "{file}: the block ends before the tool starts");
    }
}

/// The opaque strings a recorded stream returns for the next turn, read from its payloads
/// independently of the adapters: Anthropic's signatures and redacted data, the encrypted
/// content of finished Responses reasoning items, Gemini's thought signatures, the Interactions
/// API's thought signatures, OpenRouter's encrypted reasoning details. Joined in stream order.
fn opaque_in_source(case: &Case) -> String {
    let mut out = String::new();
    for p in payloads(case) {
        let mut take = |v: Option<&Value>| {
            if let Some(text) = v.and_then(Value::as_str) {
                out.push_str(text);
            }
        };
        match case.provider {
            Anthropic => {
                take(p.pointer("/delta/signature"));
                take(p.pointer("/content_block/signature"));
                if s(&p, &["content_block", "type"]) == "redacted_thinking" {
                    take(p.pointer("/content_block/data"));
                }
            }
            Responses => {
                if s(&p, &["type"]) == "response.output_item.done"
                    && s(&p, &["item", "type"]) == "reasoning"
                {
                    take(p.pointer("/item/encrypted_content"));
                }
            }
            Gemini => {
                for part in p
                    .pointer("/candidates/0/content/parts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    take(part.get("thoughtSignature"));
                }
            }
            Interactions => {
                if s(&p, &["delta", "type"]) == "thought_signature" {
                    take(p.pointer("/delta/signature"));
                }
                if s(&p, &["step", "type"]) == "thought" {
                    take(p.pointer("/step/signature"));
                }
            }
            OpenAi => {
                for d in p
                    .pointer("/choices/0/delta/reasoning_details")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    take(d.get("signature"));
                    take(d.get("data"));
                }
            }
            Ollama => {}
        }
    }
    out
}

/// The same strings, read from the state the adapter returned.
fn opaque_in_state(items: &[Value]) -> String {
    let mut out = String::new();
    for item in items {
        for key in ["signature", "data", "encrypted_content", "thoughtSignature"] {
            if let Some(text) = item.get(key).and_then(Value::as_str) {
                out.push_str(text);
            }
        }
    }
    out
}

#[test]
fn every_recorded_stream_returns_exactly_its_opaque_reasoning_for_the_next_turn() {
    let mut bad = Vec::new();
    let mut with_state = 0;
    for case in cases() {
        let (_, state) = replay_with_state(&case, [case.body().as_slice()]);
        let source = opaque_in_source(&case);
        let kept = opaque_in_state(state.as_deref().unwrap_or_default());
        if !source.is_empty() {
            with_state += 1;
        }
        if kept != source {
            bad.push(format!(
                "{}: the state holds {} bytes of opaque reasoning, the source {}",
                case.name(),
                kept.len(),
                source.len()
            ));
        }
    }
    assert!(
        with_state >= 15,
        "recorded streams with reasoning state: {with_state}"
    );
    assert_no_problems(bad);
}

/// Each recording's usage, as the ledger counts it: the counts the provider reported are kept
/// (its reasoning field above all), and what it left out is estimated from what streamed and
/// marked so.
#[test]
fn every_recorded_usage_lands_in_the_ledger_line_with_its_reasoning() {
    use ponder::domain::usage::{estimate_tokens, Spend, Streamed};
    let mut bad = Vec::new();
    for case in cases() {
        let events = replay_whole(&case);
        let Some(TurnEvent::Done { usage, .. }) = events.last() else {
            continue;
        };
        let usage = usage.clone().unwrap_or_default();
        let (mut thinking, mut answer) = (0u64, 0u64);
        for e in &events {
            match e {
                TurnEvent::Thinking { text, .. } => thinking += text.chars().count() as u64,
                TurnEvent::Delta { text } => answer += text.chars().count() as u64,
                _ => {}
            }
        }
        let streamed = Streamed {
            input_chars: 400,
            thinking_chars: thinking,
            answer_chars: answer,
            thinking_ms: 0,
            total_ms: 0,
        };
        let line = Spend::of(&usage, streamed);
        let [input, output, reasoning] = case.usage;
        let name = case.name();
        if line.input_tokens != input.unwrap_or(100) {
            bad.push(format!("{name}: input {} for {input:?}", line.input_tokens));
        }
        let want_output = output.unwrap_or_else(|| estimate_tokens(thinking + answer));
        if line.output_tokens != want_output {
            bad.push(format!(
                "{name}: output {} for {output:?}",
                line.output_tokens
            ));
        }
        match reasoning {
            Some(r) if line.reasoning_tokens != r.min(want_output) => bad.push(format!(
                "{name}: reasoning {} for {r}",
                line.reasoning_tokens
            )),
            None if thinking > 0 && want_output > 0 && line.reasoning_tokens == 0 => {
                bad.push(format!("{name}: reasoning streamed but none counted"))
            }
            _ => {}
        }
        let missing = input.is_none() || output.is_none() || (reasoning.is_none() && thinking > 0);
        if line.estimated != missing {
            bad.push(format!(
                "{name}: estimated {} for {:?}",
                line.estimated, case.usage
            ));
        }
    }
    assert_no_problems(bad);
}

/// Every recorded stream's texts (each thinking block, the answer with its citation markers,
/// and the answer with its sources as footnotes), rendered: ammonia configured with the page's
/// allow-list gives the renderer's HTML back unchanged (the differential check of
/// `ponder::markdown::ammonia_change`; the other corpora are in `tests/markdown/ammonia.rs`).
#[test]
fn every_recorded_text_rendered_comes_back_from_ammonia_unchanged() {
    use ponder::domain::rich::{cite_marker, with_footnotes, SourceRef};
    use ponder::markdown::{allow_list_change, ammonia_change, render};
    let mut texts = Vec::new();
    for case in cases() {
        let (mut blocks, mut answer, mut sources) =
            (Vec::<String>::new(), String::new(), Vec::new());
        for event in replay_whole(&case) {
            match event {
                TurnEvent::Thinking { block, text } => {
                    let at = block as usize;
                    if blocks.len() <= at {
                        blocks.resize(at + 1, String::new());
                    }
                    blocks[at].push_str(&text);
                }
                TurnEvent::Delta { text } => answer.push_str(&text),
                TurnEvent::Reclassify { .. } => blocks.push(std::mem::take(&mut answer)),
                TurnEvent::Cite { n } => answer.push_str(&cite_marker(n)),
                TurnEvent::Source { n, url, title } => sources.push(SourceRef { n, url, title }),
                _ => {}
            }
        }
        let name = case.name();
        texts.push((
            format!("{name} answer with its sources"),
            with_footnotes(&answer, &sources),
        ));
        texts.push((format!("{name} answer"), answer));
        texts.extend(
            blocks
                .into_iter()
                .enumerate()
                .map(|(i, b)| (format!("{name} block {i}"), b)),
        );
    }
    let non_empty = texts.iter().filter(|(_, t)| !t.trim().is_empty()).count();
    assert!(non_empty > 100, "only {non_empty} texts");
    let differ: Vec<String> = texts
        .iter()
        .filter_map(|(label, text)| {
            let html = render(text);
            allow_list_change(&html)
                .or_else(|| ammonia_change(&html))
                .map(|d| format!("{label}: {d}"))
        })
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
