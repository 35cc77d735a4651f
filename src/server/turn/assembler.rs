//! The pure core of a turn: provider pieces in, numbered and timed turn events out, with
//! exactly one terminal event. No I/O and no clock: the caller passes the time in.

use super::wording;
use crate::domain::rich::{summary, TOOL_INPUT_CHARS, TOOL_OUTPUT_CHARS};
use crate::domain::FinishReason;
use crate::domain::{Failure, ThinkingKind, ToolStatus, TurnEvent, Usage};
use crate::server::outcome::Outcome;
use crate::server::providers::Piece;

/// How many sources one turn may list: a stream cannot grow the list without end.
pub const MAX_SOURCES: usize = 200;
pub use crate::domain::answer::MAX_TOOLS;

/// What a tool the model asked for but nobody ran says when the turn ends.
pub const TOOL_NOT_RUN: &str =
    "Not run: the model asked the app to run this tool, and Ponder runs no tools of its own.";
/// What a server tool that never returned says when the turn ends (a paused or cut turn).
pub const TOOL_UNFINISHED: &str = "The turn ended before this tool returned.";

#[derive(Clone, Debug)]
struct ToolSlot {
    id: String,
    ended: bool,
}

#[derive(Clone, Copy, Debug)]
struct OpenBlock {
    index: u32,
    kind: ThinkingKind,
    started_ms: u64,
}

/// Turns provider pieces into turn events. Pure: the caller passes the clock in.
#[derive(Debug)]
pub struct TurnAssembler {
    stream_thinking: bool,
    next_block: u32,
    open: Option<OpenBlock>,
    finish_reason: Option<crate::domain::FinishReason>,
    usage: Usage,
    /// Characters of reasoning, counted even when thinking is not streamed.
    pub thinking_chars: u64,
    /// Characters of answer.
    pub answer_chars: u64,
    /// Time of the first reasoning piece, in ms since the turn began.
    pub first_thinking_ms: Option<u64>,
    /// Time of the first answer piece, in ms since the turn began.
    pub first_answer_ms: Option<u64>,
    /// Characters of reasoning and answer together the turn may stream.
    max_chars: u64,
    /// The turn was ended by the character cap.
    pub capped: bool,
    outcome: Option<Outcome>,
    /// "Answer now" cut the reasoning: what the follow-up still reasons is not shown.
    answering_now: bool,
    tools: Vec<ToolSlot>,
    sources: Vec<String>,
    /// The sources cited since the last answer text: a source is marked once per run of text.
    cited: Vec<u32>,
}

impl TurnAssembler {
    /// The counts the provider reported so far.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    pub fn new(stream_thinking: bool) -> Self {
        TurnAssembler {
            stream_thinking,
            next_block: 0,
            open: None,
            finish_reason: None,
            usage: Usage::default(),
            thinking_chars: 0,
            answer_chars: 0,
            first_thinking_ms: None,
            first_answer_ms: None,
            max_chars: u64::MAX,
            capped: false,
            outcome: None,
            answering_now: false,
            tools: Vec::new(),
            sources: Vec::new(),
            cited: Vec::new(),
        }
    }

    /// Ends the turn as `done` with `finish_reason: "length"` once `max_chars` characters of
    /// reasoning and answer have streamed: an upstream that ignores `max_tokens` cannot stream
    /// forever.
    pub fn with_char_limit(mut self, max_chars: u64) -> Self {
        self.max_chars = max_chars;
        self
    }

    /// Cuts `text` to what the character cap still allows; true when the cap is reached.
    fn take_allowance(&mut self, text: &mut String) -> bool {
        let used = self.thinking_chars + self.answer_chars;
        let left = self.max_chars.saturating_sub(used);
        let count = text.chars().count() as u64;
        if count <= left {
            return false;
        }
        let cut = text
            .char_indices()
            .nth(left as usize)
            .map_or(text.len(), |(i, _)| i);
        text.truncate(cut);
        true
    }

    fn cap(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        self.capped = true;
        self.finish_reason = Some("length".into());
        self.done(now_ms, out);
    }

    /// How the turn ended, once it has.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    pub fn is_finished(&self) -> bool {
        self.outcome.is_some()
    }

    fn emit(&self, event: TurnEvent, out: &mut Vec<TurnEvent>) {
        let thinking_event = matches!(
            event,
            TurnEvent::ThinkingStart { .. }
                | TurnEvent::Thinking { .. }
                | TurnEvent::ThinkingEnd { .. }
                | TurnEvent::Reclassify { .. }
        );
        if self.stream_thinking || !thinking_event {
            out.push(event);
        }
    }

    fn open_block(&mut self, kind: ThinkingKind, now_ms: u64, out: &mut Vec<TurnEvent>) -> u32 {
        self.close_block(now_ms, out);
        let index = self.next_block;
        self.next_block += 1;
        self.open = Some(OpenBlock {
            index,
            kind,
            started_ms: now_ms,
        });
        self.first_thinking_ms.get_or_insert(now_ms);
        self.emit(
            TurnEvent::ThinkingStart {
                block: index,
                kind,
                at_ms: None,
            },
            out,
        );
        index
    }

    fn close_block(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        self.end_block(now_ms, false, out);
    }

    fn end_block(&mut self, now_ms: u64, cut_short: bool, out: &mut Vec<TurnEvent>) {
        if let Some(block) = self.open.take() {
            let duration_ms = now_ms.saturating_sub(block.started_ms);
            self.emit(
                TurnEvent::ThinkingEnd {
                    block: block.index,
                    duration_ms: Some(duration_ms),
                    cut_short,
                },
                out,
            );
        }
    }

    /// True while the model is reasoning and has not begun its answer: "Answer now" applies.
    pub fn is_thinking(&self) -> bool {
        !self.is_finished() && self.open.is_some() && self.first_answer_ms.is_none()
    }

    /// "Answer now": the open block ends here, marked cut short, and reasoning that the
    /// follow-up request still produces is dropped. False when nothing was being thought.
    pub fn cut_short(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) -> bool {
        if !self.is_thinking() {
            return false;
        }
        self.end_block(now_ms, true, out);
        self.answering_now = true;
        self.finish_reason = None;
        true
    }

    /// Feeds one piece at `now_ms` (milliseconds since the turn began).
    pub fn push(&mut self, piece: Piece, now_ms: u64, out: &mut Vec<TurnEvent>) {
        if self.is_finished() {
            return;
        }
        match piece {
            Piece::BlockStart { .. }
            | Piece::Reasoning { .. }
            | Piece::BlockKind { .. }
            | Piece::Reclassify
                if self.answering_now => {}
            Piece::BlockStart { kind } => {
                self.open_block(kind, now_ms, out);
            }
            Piece::Reasoning { mut text, kind } => {
                let block = match self.open {
                    Some(open) if open.kind == kind => open.index,
                    _ => self.open_block(kind, now_ms, out),
                };
                let capped = self.take_allowance(&mut text);
                if !text.is_empty() {
                    self.thinking_chars += text.chars().count() as u64;
                    self.emit(TurnEvent::Thinking { block, text }, out);
                }
                if capped {
                    self.cap(now_ms, out);
                }
            }
            Piece::BlockKind { kind } => {
                if let Some(open) = self.open.as_mut().filter(|o| o.kind != kind) {
                    open.kind = kind;
                    let block = open.index;
                    self.emit(
                        TurnEvent::ThinkingStart {
                            block,
                            kind,
                            at_ms: None,
                        },
                        out,
                    );
                }
            }
            Piece::BlockEnd => self.close_block(now_ms, out),
            Piece::Answer(mut text) => {
                if text.is_empty() {
                    return;
                }
                self.close_block(now_ms, out);
                let capped = self.take_allowance(&mut text);
                if !text.is_empty() {
                    self.cited.clear();
                    self.first_answer_ms.get_or_insert(now_ms);
                    self.answer_chars += text.chars().count() as u64;
                    out.push(TurnEvent::Delta { text });
                }
                if capped {
                    self.cap(now_ms, out);
                }
            }
            Piece::Reclassify => {
                let started = self.first_answer_ms.take().unwrap_or(now_ms);
                let block = self.open_block(ThinkingKind::Raw, started, out);
                self.emit(TurnEvent::Reclassify { block }, out);
                self.thinking_chars += self.answer_chars;
                self.answer_chars = 0;
                self.close_block(now_ms, out);
            }
            Piece::ToolCall { id, name, input } => self.tool_call(id, name, input, now_ms, out),
            Piece::ToolResult {
                id,
                name,
                ok,
                output,
            } => self.tool_result(id, name, ok, output, now_ms, out),
            Piece::Source { url, title } => {
                self.source(url, title, out);
            }
            Piece::Cite { url, title } => {
                if let Some(n) = self.source(url, title, out) {
                    self.cite(n, now_ms, out);
                }
            }
            Piece::Usage(u) => {
                self.usage.input_tokens = u.input_tokens.or(self.usage.input_tokens);
                self.usage.output_tokens = u.output_tokens.or(self.usage.output_tokens);
                self.usage.reasoning_tokens = u.reasoning_tokens.or(self.usage.reasoning_tokens);
                self.usage.file_tokens = u.file_tokens.or(self.usage.file_tokens);
                self.usage.cached_input_tokens =
                    u.cached_input_tokens.or(self.usage.cached_input_tokens);
            }
            Piece::Finish(reason) => self.finish_reason = Some(reason),
            Piece::End => self.done(now_ms, out),
            Piece::Error(failure) => self.fail(failure, out),
            Piece::TooLong { limit } => self.fail(wording::line_too_long(limit), out),
            Piece::State(_) | Piece::StateLost | Piece::Paused(_) => {}
        }
    }

    /// A marker for source `n` here, once per run of answer text; its characters count toward
    /// the turn's cap like the answer's (the marker is answer text in the stored answer).
    fn cite(&mut self, n: u32, now_ms: u64, out: &mut Vec<TurnEvent>) {
        if self.cited.contains(&n) {
            return;
        }
        let marker = crate::domain::rich::cite_marker(n).chars().count() as u64;
        if self.thinking_chars + self.answer_chars + marker > self.max_chars {
            self.cap(now_ms, out);
            return;
        }
        self.cited.push(n);
        self.answer_chars += marker;
        out.push(TurnEvent::Cite { n });
    }

    fn tool_call(
        &mut self,
        id: String,
        name: String,
        input: String,
        now_ms: u64,
        out: &mut Vec<TurnEvent>,
    ) {
        self.close_block(now_ms, out);
        let tool = match self.tools.iter().position(|t| t.id == id && !id.is_empty()) {
            Some(i) => i,
            None if self.tools.len() < MAX_TOOLS => {
                self.tools.push(ToolSlot { id, ended: false });
                self.tools.len() - 1
            }
            None => return,
        };
        out.push(TurnEvent::ToolStart {
            tool: tool as u32,
            name: tool_name(&name),
            input: summary(&input, TOOL_INPUT_CHARS),
        });
    }

    fn tool_result(
        &mut self,
        id: String,
        name: String,
        ok: bool,
        output: String,
        now_ms: u64,
        out: &mut Vec<TurnEvent>,
    ) {
        let known = self.tools.iter().position(|t| t.id == id && !id.is_empty());
        let tool = match known {
            Some(i) => i,
            None => {
                let before = self.tools.len();
                self.tool_call(id, name, String::new(), now_ms, out);
                if self.tools.len() == before {
                    return;
                }
                before
            }
        };
        let Some(slot) = self.tools.get_mut(tool).filter(|t| !t.ended) else {
            return;
        };
        slot.ended = true;
        out.push(TurnEvent::ToolEnd {
            tool: tool as u32,
            status: if ok {
                ToolStatus::Finished
            } else {
                ToolStatus::Failed
            },
            output: summary(&output, TOOL_OUTPUT_CHARS),
        });
    }

    /// The number of the source at `url`, announcing it when it is new; `None` for an address
    /// that is not an absolute web address, or past [`MAX_SOURCES`].
    fn source(
        &mut self,
        url: String,
        title: Option<String>,
        out: &mut Vec<TurnEvent>,
    ) -> Option<u32> {
        let url = crate::markdown::safe_url(url.trim(), crate::markdown::whatwg_url)
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))?;
        if let Some(i) = self.sources.iter().position(|u| *u == url) {
            return Some(i as u32 + 1);
        }
        if self.sources.len() >= MAX_SOURCES {
            return None;
        }
        self.sources.push(url.clone());
        let n = self.sources.len() as u32;
        let title = title
            .map(|t| summary(&t, TOOL_INPUT_CHARS))
            .filter(|t| !t.is_empty());
        out.push(TurnEvent::Source { n, url, title });
        Some(n)
    }

    /// Tools still under way when the turn finished never returned: each ends, failed, saying
    /// why (a call the model left to the app, or a turn that ended first).
    fn end_unrun_tools(&mut self, out: &mut Vec<TurnEvent>) {
        let why = match self.finish_reason {
            Some(FinishReason::ToolCalls) => TOOL_NOT_RUN,
            _ => TOOL_UNFINISHED,
        };
        for (i, slot) in self.tools.iter_mut().enumerate() {
            if !slot.ended {
                slot.ended = true;
                out.push(TurnEvent::ToolEnd {
                    tool: i as u32,
                    status: ToolStatus::Failed,
                    output: why.into(),
                });
            }
        }
    }

    fn done(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        self.close_block(now_ms, out);
        self.end_unrun_tools(out);
        let usage = (!self.usage.is_empty()).then(|| self.usage.clone());
        out.push(TurnEvent::Done {
            finish_reason: self.finish_reason.clone().unwrap_or_else(|| "stop".into()),
            usage,
            thinking_chars: self.thinking_chars,
            total_ms: now_ms,
        });
        self.outcome = Some(Outcome::Done);
    }

    /// The upstream body ended. Without a finish reason or end marker the stream was cut.
    pub fn end_of_stream(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        if self.is_finished() {
            return;
        }
        if self.finish_reason.is_some() {
            self.done(now_ms, out);
        } else {
            self.fail(wording::stream_cut(), out);
        }
    }

    /// A reader stopped the turn: it ends as `done` with `finish_reason` `"stopped"`, keeping
    /// what arrived. An open block gets no `thinking_end`: it was cut where it was.
    pub fn stop(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        if self.is_finished() {
            return;
        }
        self.open = None;
        let usage = (!self.usage.is_empty()).then(|| self.usage.clone());
        out.push(TurnEvent::Done {
            finish_reason: crate::domain::FinishReason::Stopped,
            usage,
            thinking_chars: self.thinking_chars,
            total_ms: now_ms,
        });
        self.outcome = Some(Outcome::Stopped);
    }

    /// Ends the turn with an error. An open block gets no `thinking_end`: it was interrupted.
    pub fn fail(&mut self, failure: Failure, out: &mut Vec<TurnEvent>) {
        if self.is_finished() {
            return;
        }
        self.open = None;
        out.push(TurnEvent::Error(failure));
        self.outcome = Some(Outcome::Error);
    }
}

/// A tool's name as shown: one short line, never empty.
fn tool_name(name: &str) -> String {
    match summary(name, 80) {
        n if n.is_empty() => "tool".into(),
        n => n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_end_the_open_block_and_number_in_order() {
        let mut asm = TurnAssembler::new(true);
        let mut out = Vec::new();
        asm.push(reasoning("plan"), 0, &mut out);
        asm.push(
            Piece::ToolCall {
                id: "a".into(),
                name: "web_search".into(),
                input: String::new(),
            },
            10,
            &mut out,
        );
        asm.push(
            Piece::ToolCall {
                id: "a".into(),
                name: "web_search".into(),
                input: "rust\n  editions".into(),
            },
            11,
            &mut out,
        );
        asm.push(
            Piece::ToolResult {
                id: "a".into(),
                name: String::new(),
                ok: true,
                output: "3 results".into(),
            },
            20,
            &mut out,
        );
        asm.push(
            Piece::ToolResult {
                id: "a".into(),
                name: String::new(),
                ok: false,
                output: "again".into(),
            },
            21,
            &mut out,
        );
        asm.push(reasoning("next"), 30, &mut out);
        assert_eq!(
            &out[3..7],
            [
                TurnEvent::ToolStart {
                    tool: 0,
                    name: "web_search".into(),
                    input: String::new()
                },
                TurnEvent::ToolStart {
                    tool: 0,
                    name: "web_search".into(),
                    input: "rust editions".into()
                },
                TurnEvent::ToolEnd {
                    tool: 0,
                    status: ToolStatus::Finished,
                    output: "3 results".into()
                },
                TurnEvent::ThinkingStart {
                    block: 1,
                    kind: ThinkingKind::Raw,
                    at_ms: None
                },
            ]
        );
        assert!(matches!(out[2], TurnEvent::ThinkingEnd { block: 0, .. }));
    }

    #[test]
    fn a_result_without_its_call_still_makes_a_step_and_unrun_calls_fail_at_the_end() {
        let mut asm = TurnAssembler::new(true);
        let mut out = Vec::new();
        asm.push(
            Piece::ToolResult {
                id: "r".into(),
                name: "web_search".into(),
                ok: true,
                output: String::new(),
            },
            0,
            &mut out,
        );
        asm.push(
            Piece::ToolCall {
                id: "f".into(),
                name: "get_weather".into(),
                input: "{\"city\":\"Paris\"}".into(),
            },
            1,
            &mut out,
        );
        asm.push(Piece::Finish("tool_calls".into()), 2, &mut out);
        asm.end_of_stream(3, &mut out);
        assert_eq!(
            out[0],
            TurnEvent::ToolStart {
                tool: 0,
                name: "web_search".into(),
                input: String::new()
            }
        );
        assert!(matches!(
            out[1],
            TurnEvent::ToolEnd {
                tool: 0,
                status: ToolStatus::Finished,
                ..
            }
        ));
        assert_eq!(
            out[3],
            TurnEvent::ToolEnd {
                tool: 1,
                status: ToolStatus::Failed,
                output: TOOL_NOT_RUN.into()
            }
        );
        assert!(matches!(out[4], TurnEvent::Done { .. }));
    }

    #[test]
    fn citation_markers_count_toward_the_cap_and_a_result_past_the_tool_cap_ends_nothing() {
        let mut asm = TurnAssembler::new(true).with_char_limit(10);
        let mut out = Vec::new();
        let cite = |url: &str| Piece::Cite {
            url: url.into(),
            title: None,
        };
        asm.push(Piece::Answer("12345".into()), 0, &mut out);
        asm.push(cite("https://a.example/"), 1, &mut out);
        asm.push(cite("https://b.example/"), 2, &mut out);
        assert!(
            matches!(out.last(), Some(TurnEvent::Done { finish_reason, .. }) if *finish_reason == FinishReason::Length)
        );
        let cites = out.iter().filter(|e| matches!(e, TurnEvent::Cite { .. }));
        assert_eq!(cites.count(), 1);

        let mut asm = TurnAssembler::new(true);
        let mut out = Vec::new();
        for i in 0..MAX_TOOLS + 5 {
            asm.push(
                Piece::ToolCall {
                    id: format!("t{i}"),
                    name: "x".into(),
                    input: String::new(),
                },
                0,
                &mut out,
            );
        }
        out.clear();
        asm.push(
            Piece::ToolResult {
                id: "unknown".into(),
                name: "x".into(),
                ok: false,
                output: "not mine".into(),
            },
            1,
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn sources_are_numbered_once_and_only_web_addresses_pass() {
        let mut asm = TurnAssembler::new(true);
        let mut out = Vec::new();
        let cite = |url: &str| Piece::Cite {
            url: url.into(),
            title: Some("T".into()),
        };
        asm.push(
            Piece::Source {
                url: "https://a.example/".into(),
                title: None,
            },
            0,
            &mut out,
        );
        asm.push(Piece::Answer("x".into()), 1, &mut out);
        asm.push(cite("https://b.example/p"), 2, &mut out);
        asm.push(cite("https://b.example/p"), 3, &mut out);
        asm.push(cite("javascript:alert(1)"), 4, &mut out);
        asm.push(cite("/relative"), 4, &mut out);
        asm.push(Piece::Answer("y".into()), 5, &mut out);
        asm.push(cite("https://a.example/"), 6, &mut out);
        assert_eq!(
            out,
            [
                TurnEvent::Source {
                    n: 1,
                    url: "https://a.example/".into(),
                    title: None
                },
                TurnEvent::Delta { text: "x".into() },
                TurnEvent::Source {
                    n: 2,
                    url: "https://b.example/p".into(),
                    title: Some("T".into())
                },
                TurnEvent::Cite { n: 2 },
                TurnEvent::Delta { text: "y".into() },
                TurnEvent::Cite { n: 1 },
            ]
        );
    }

    fn run(pieces: Vec<(u64, Piece)>, stream_thinking: bool) -> Vec<TurnEvent> {
        let mut asm = TurnAssembler::new(stream_thinking);
        let mut out = Vec::new();
        let mut last = 0;
        for (t, p) in pieces {
            asm.push(p, t, &mut out);
            last = t;
        }
        asm.end_of_stream(last, &mut out);
        out
    }

    fn reasoning(t: &str) -> Piece {
        Piece::Reasoning {
            text: t.into(),
            kind: ThinkingKind::Raw,
        }
    }

    #[test]
    fn a_stop_ends_the_turn_as_stopped_with_no_end_for_the_open_block() {
        let mut asm = TurnAssembler::new(true);
        let mut out = Vec::new();
        asm.push(reasoning("a"), 10, &mut out);
        out.clear();
        asm.stop(40, &mut out);
        assert_eq!(
            out,
            [TurnEvent::Done {
                finish_reason: "stopped".into(),
                usage: None,
                thinking_chars: 1,
                total_ms: 40,
            }]
        );
        assert_eq!(asm.outcome(), Some(Outcome::Stopped));
        asm.push(Piece::Answer("late".into()), 50, &mut out);
        asm.stop(60, &mut out);
        assert_eq!(out.len(), 1, "nothing after the end");
    }

    #[test]
    fn thinking_then_answer_is_one_timed_block_then_deltas() {
        let out = run(
            vec![
                (10, reasoning("a")),
                (20, reasoning("b")),
                (50, Piece::Answer("x".into())),
                (60, Piece::Finish("stop".into())),
            ],
            true,
        );
        assert_eq!(
            out,
            [
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Raw,
                    at_ms: None,
                },
                TurnEvent::Thinking {
                    block: 0,
                    text: "a".into()
                },
                TurnEvent::Thinking {
                    block: 0,
                    text: "b".into()
                },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(40),
                    cut_short: false,
                },
                TurnEvent::Delta { text: "x".into() },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 2,
                    total_ms: 60
                },
            ]
        );
    }

    #[test]
    fn answer_now_cuts_the_block_once_and_drops_later_reasoning() {
        let mut asm = TurnAssembler::new(true);
        let mut out = Vec::new();
        asm.push(reasoning("a"), 10, &mut out);
        assert!(asm.is_thinking());
        assert!(asm.cut_short(30, &mut out));
        assert!(!asm.cut_short(31, &mut out), "only once");
        asm.push(reasoning("more"), 40, &mut out);
        asm.push(Piece::Answer("x".into()), 50, &mut out);
        asm.push(Piece::Finish("stop".into()), 60, &mut out);
        asm.end_of_stream(60, &mut out);
        assert_eq!(
            out[2],
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(20),
                cut_short: true,
            }
        );
        assert_eq!(out[3], TurnEvent::Delta { text: "x".into() });
        assert_eq!(out.iter().filter(|e| e.is_terminal()).count(), 1);
        assert_eq!(out.len(), 5);
        let mut answered = TurnAssembler::new(true);
        let mut out = Vec::new();
        answered.push(Piece::Answer("x".into()), 1, &mut out);
        assert!(!answered.cut_short(2, &mut out));
    }

    #[test]
    fn reasoning_after_answer_opens_the_next_block() {
        let out = run(
            vec![
                (0, reasoning("a")),
                (1, Piece::Answer("x".into())),
                (2, reasoning("b")),
                (3, Piece::End),
            ],
            true,
        );
        assert!(out.contains(&TurnEvent::ThinkingStart {
            block: 1,
            kind: ThinkingKind::Raw,
            at_ms: None,
        }));
        assert!(out.contains(&TurnEvent::ThinkingEnd {
            block: 1,
            duration_ms: Some(1),
            cut_short: false,
        }));
    }

    #[test]
    fn a_stream_without_finish_is_an_error_and_the_block_stays_open() {
        let out = run(vec![(0, reasoning("a"))], true);
        assert!(matches!(
            out.last(),
            Some(TurnEvent::Error(Failure {
                retryable: true,
                ..
            }))
        ));
        assert!(!out
            .iter()
            .any(|e| matches!(e, TurnEvent::ThinkingEnd { .. })));
    }

    #[test]
    fn exactly_one_terminal_event_whatever_follows() {
        let out = run(
            vec![
                (0, Piece::Error(Failure::new("x", false))),
                (1, Piece::Answer("late".into())),
                (2, Piece::End),
            ],
            true,
        );
        assert_eq!(out, [TurnEvent::error("x", false)]);
    }

    #[test]
    fn the_kill_switch_drops_thinking_but_counts_it() {
        let out = run(
            vec![
                (0, reasoning("abc")),
                (5, Piece::Answer("x".into())),
                (6, Piece::End),
            ],
            false,
        );
        assert_eq!(
            out,
            [
                TurnEvent::Delta { text: "x".into() },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 3,
                    total_ms: 6
                },
            ]
        );
    }

    #[test]
    fn reclassify_moves_the_answer_so_far_into_a_block() {
        let out = run(
            vec![
                (5, Piece::Answer("think".into())),
                (9, Piece::Reclassify),
                (10, Piece::Answer("ans".into())),
                (11, Piece::End),
            ],
            true,
        );
        assert_eq!(
            out,
            [
                TurnEvent::Delta {
                    text: "think".into()
                },
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Raw,
                    at_ms: None,
                },
                TurnEvent::Reclassify { block: 0 },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(4),
                    cut_short: false,
                },
                TurnEvent::Delta { text: "ans".into() },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 5,
                    total_ms: 11
                },
            ]
        );
    }

    #[test]
    fn a_block_whose_kind_is_corrected_restarts_with_the_same_index() {
        let out = run(
            vec![
                (
                    0,
                    Piece::BlockStart {
                        kind: ThinkingKind::Summary,
                    },
                ),
                (
                    20,
                    Piece::BlockKind {
                        kind: ThinkingKind::Redacted,
                    },
                ),
                (
                    20,
                    Piece::BlockKind {
                        kind: ThinkingKind::Redacted,
                    },
                ),
                (20, Piece::BlockEnd),
                (30, Piece::End),
            ],
            true,
        );
        assert_eq!(
            &out[..3],
            [
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Summary,
                    at_ms: None,
                },
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Redacted,
                    at_ms: None,
                },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(20),
                    cut_short: false,
                },
            ]
        );
    }

    #[test]
    fn redacted_blocks_start_and_end_with_no_text() {
        let out = run(
            vec![
                (
                    0,
                    Piece::BlockStart {
                        kind: ThinkingKind::Redacted,
                    },
                ),
                (30, Piece::BlockEnd),
                (
                    31,
                    Piece::Usage(Usage {
                        input_tokens: Some(1),
                        output_tokens: None,
                        reasoning_tokens: None,
                        file_tokens: Some(1),
                        ..Default::default()
                    }),
                ),
                (
                    32,
                    Piece::Usage(Usage {
                        input_tokens: None,
                        output_tokens: Some(2),
                        reasoning_tokens: None,
                        file_tokens: None,
                        ..Default::default()
                    }),
                ),
                (40, Piece::End),
            ],
            true,
        );
        assert_eq!(
            out,
            [
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Redacted,
                    at_ms: None,
                },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(30),
                    cut_short: false,
                },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: Some(Usage {
                        input_tokens: Some(1),
                        output_tokens: Some(2),
                        reasoning_tokens: None,
                        file_tokens: Some(1),
                        ..Default::default()
                    }),
                    thinking_chars: 0,
                    total_ms: 40,
                },
            ]
        );
    }
}
