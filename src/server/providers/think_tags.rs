//! Reasoning written inline as `<think>…</think>` in the answer text (DeepSeek-R1 distills,
//! QwQ, Qwen3 on servers without a reasoning parser).
//!
//! Tags are looked for in decoded text (Groq sends `\u003cthink\u003e`), may be split across
//! pieces (`<thi` + `nk>`), and are honoured only at the start of the message: a `<think>`
//! later in the answer, in code for instance, stays text. When the chat template opened the
//! tag before the stream began, only `</think>` arrives: with `think_start` everything before
//! it is reasoning; without, the text already sent as answer is reclassified.

use super::{Piece, WireParser};
use crate::domain::{Failure, ThinkingKind};

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Nothing but whitespace yet; an opening tag may come.
    Start,
    /// As `Start`, but text without a tag is reasoning (`think_start`).
    StartThinking,
    /// Inside the reasoning, until `</think>`.
    Thinking,
    /// Answer text with no opening tag seen: a `</think>` means it was reasoning.
    Answer,
    /// After the reasoning: everything is answer, no tag is honoured.
    After,
}

/// Leading whitespace kept before the first tag or text: what a model writes there carries no
/// meaning, and an upstream sending nothing else must not grow the buffer without end.
const MAX_LEADING_WS: usize = 1024;

/// The inline-tag state machine over the answer text of one message. Pure.
#[derive(Debug)]
pub struct ThinkTags {
    mode: Mode,
    /// Text held back: leading whitespace, or a suffix that may be the start of a tag.
    held: String,
    /// Whitespace at the start of the reasoning or the answer is dropped.
    strip_ws: bool,
    /// Reasoning of the current `<think>` section was emitted (so its end closes a block).
    thought: bool,
    /// Answer text was emitted in `Answer` mode.
    answered: bool,
}

impl ThinkTags {
    /// `think_start`: the model's template opens `<think>` itself.
    pub fn new(think_start: bool) -> Self {
        ThinkTags {
            mode: if think_start {
                Mode::StartThinking
            } else {
                Mode::Start
            },
            held: String::new(),
            strip_ws: false,
            thought: false,
            answered: false,
        }
    }

    /// Feeds one piece of answer text as the provider sent it.
    pub fn push(&mut self, text: String, out: &mut Vec<Piece>) {
        if text.is_empty() {
            return;
        }
        if self.mode == Mode::After && self.held.is_empty() && !self.strip_ws {
            out.push(Piece::Answer(text));
            return;
        }
        if self.held.is_empty() {
            self.held = text;
        } else {
            self.held.push_str(&text);
        }
        self.run(out);
    }

    /// Emits what is held back: the message ended or something other than text came.
    pub fn flush(&mut self, out: &mut Vec<Piece>) {
        if self.held.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.held);
        match self.mode {
            Mode::Thinking | Mode::StartThinking => {
                if !text.trim().is_empty() {
                    self.reason(text, out);
                }
            }
            Mode::Start | Mode::Answer | Mode::After => {
                if !(self.strip_ws && text.trim().is_empty()) {
                    out.push(Piece::Answer(text));
                }
            }
        }
    }

    fn reason(&mut self, text: String, out: &mut Vec<Piece>) {
        if !text.is_empty() {
            self.thought = true;
            out.push(Piece::Reasoning {
                text,
                kind: ThinkingKind::Raw,
            });
        }
    }

    fn answer(&mut self, text: String, out: &mut Vec<Piece>) {
        if !text.is_empty() {
            if self.mode == Mode::Answer {
                self.answered = true;
            }
            out.push(Piece::Answer(text));
        }
    }

    fn strip_leading_ws(&mut self) -> bool {
        if self.strip_ws {
            let trimmed = self.held.trim_start();
            if trimmed.is_empty() {
                self.held.clear();
                return false;
            }
            let cut = self.held.len() - trimmed.len();
            self.held.drain(..cut);
            self.strip_ws = false;
        }
        true
    }

    /// Takes the held text before `</think>` (true, the tag dropped) or, without the tag, all
    /// but a suffix that may be its start (false).
    fn take_until_close(&mut self) -> (String, bool) {
        match self.held.find(CLOSE) {
            Some(at) => {
                let rest = self.held.split_off(at + CLOSE.len());
                self.held.truncate(at);
                (std::mem::replace(&mut self.held, rest), true)
            }
            None => {
                let keep = self.held.len() - partial_tag_suffix(&self.held, CLOSE);
                let held = self.held.split_off(keep);
                (std::mem::replace(&mut self.held, held), false)
            }
        }
    }

    fn run(&mut self, out: &mut Vec<Piece>) {
        loop {
            match self.mode {
                Mode::Start | Mode::StartThinking => {
                    let trimmed = self.held.trim_start();
                    if trimmed.is_empty() {
                        // Only whitespace so far: keep a little of it, not an endless run.
                        if self.held.len() > MAX_LEADING_WS {
                            let cut = (0..=MAX_LEADING_WS)
                                .rev()
                                .find(|&i| self.held.is_char_boundary(i))
                                .unwrap_or(0);
                            self.held.truncate(cut);
                        }
                        return;
                    }
                    if let Some(rest) = trimmed.strip_prefix(OPEN) {
                        self.held = rest.to_string();
                        self.mode = Mode::Thinking;
                        self.strip_ws = true;
                        continue;
                    }
                    if OPEN.starts_with(trimmed) {
                        return;
                    }
                    if self.mode == Mode::Start {
                        self.mode = Mode::Answer;
                    } else {
                        self.mode = Mode::Thinking;
                        self.strip_ws = true;
                    }
                }
                Mode::Thinking => {
                    if !self.strip_leading_ws() {
                        return;
                    }
                    let (text, closed) = self.take_until_close();
                    self.reason(text, out);
                    if !closed {
                        return;
                    }
                    if self.thought {
                        out.push(Piece::BlockEnd);
                    }
                    self.mode = Mode::After;
                    self.strip_ws = true;
                }
                Mode::Answer => {
                    let (text, closed) = self.take_until_close();
                    self.answer(text, out);
                    if !closed {
                        return;
                    }
                    if self.answered {
                        out.push(Piece::Reclassify);
                    }
                    self.mode = Mode::After;
                    self.strip_ws = true;
                }
                Mode::After => {
                    if self.strip_leading_ws() {
                        let text = std::mem::take(&mut self.held);
                        self.answer(text, out);
                    }
                    return;
                }
            }
        }
    }
}

/// Length of the longest suffix of `text` that is a proper prefix of `tag`.
fn partial_tag_suffix(text: &str, tag: &str) -> usize {
    let max = (tag.len() - 1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n) && tag.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

/// Wraps a parser whose answer text may carry inline `<think>` tags.
pub struct WithThinkTags<P> {
    inner: P,
    tags: ThinkTags,
    scratch: Vec<Piece>,
}

impl<P: WireParser> WithThinkTags<P> {
    pub fn new(inner: P, think_start: bool) -> Self {
        WithThinkTags {
            inner,
            tags: ThinkTags::new(think_start),
            scratch: Vec::new(),
        }
    }

    fn route(&mut self, out: &mut Vec<Piece>) {
        for piece in self.scratch.drain(..) {
            match piece {
                Piece::Answer(text) => self.tags.push(text, out),
                // Text held back (a partial tag) comes before whatever is not text: a marker
                // or a tool card never lands ahead of the words before it.
                Piece::Finish(_)
                | Piece::End
                | Piece::Error(Failure { .. })
                | Piece::Cite { .. }
                | Piece::Source { .. }
                | Piece::ToolCall { .. }
                | Piece::ToolResult { .. } => {
                    self.tags.flush(out);
                    out.push(piece);
                }
                other => out.push(other),
            }
        }
    }
}

impl<P: WireParser> WireParser for WithThinkTags<P> {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<Piece>) {
        self.inner.feed(chunk, &mut self.scratch);
        self.route(out);
    }

    fn finish(&mut self, out: &mut Vec<Piece>) {
        self.inner.finish(&mut self.scratch);
        self.route(out);
        self.tags.flush(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(pieces: &[&str], think_start: bool) -> Vec<Piece> {
        let mut tags = ThinkTags::new(think_start);
        let mut out = Vec::new();
        for p in pieces {
            tags.push(p.to_string(), &mut out);
        }
        tags.flush(&mut out);
        merge(out)
    }

    /// Joins neighbouring text pieces of the same kind, so tests state the meaning only.
    fn merge(pieces: Vec<Piece>) -> Vec<Piece> {
        let mut out: Vec<Piece> = Vec::new();
        for p in pieces {
            match (out.last_mut(), p) {
                (Some(Piece::Answer(a)), Piece::Answer(b)) => a.push_str(&b),
                (Some(Piece::Reasoning { text: a, .. }), Piece::Reasoning { text: b, .. }) => {
                    a.push_str(&b)
                }
                (_, p) => out.push(p),
            }
        }
        out
    }

    fn r(t: &str) -> Piece {
        Piece::Reasoning {
            text: t.into(),
            kind: ThinkingKind::Raw,
        }
    }

    fn a(t: &str) -> Piece {
        Piece::Answer(t.into())
    }

    #[test]
    fn tags_at_the_start_split_reasoning_from_answer() {
        let expected = vec![r("plan it\n"), Piece::BlockEnd, a("Answer.")];
        assert_eq!(
            split(
                &["<think>", "\n", "plan", " it\n", "</think>", "\n\n", "Answer."],
                false
            ),
            expected
        );
        assert_eq!(
            split(&["\n <thi", "nk>\nplan it\n</th", "ink>\n\nAnswer."], false),
            expected
        );
    }

    #[test]
    fn every_split_of_a_tagged_message_means_the_same() {
        let text = "<think>\nI think → 日本 ok\n</think>\n\nAnswer <think> stays.";
        let whole = split(&[text], false);
        assert_eq!(
            whole,
            vec![
                r("I think → 日本 ok\n"),
                Piece::BlockEnd,
                a("Answer <think> stays.")
            ]
        );
        for (i, _) in text.char_indices() {
            assert_eq!(
                split(&[&text[..i], &text[i..]], false),
                whole,
                "split at {i}"
            );
        }
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(split(&refs, false), whole);
    }

    #[test]
    fn a_think_tag_after_answer_text_is_text() {
        assert_eq!(
            split(&["Use `", "<think>", "` tags."], false),
            vec![a("Use `<think>` tags.")]
        );
        assert_eq!(split(&["plain answer"], false), vec![a("plain answer")]);
    }

    #[test]
    fn a_closing_tag_without_an_opening_one_reclassifies() {
        assert_eq!(
            split(&["Let me", " think.\n</th", "ink>\n\nThe answer."], false),
            vec![a("Let me think.\n"), Piece::Reclassify, a("The answer.")]
        );
    }

    #[test]
    fn think_start_never_sends_scratchpad_text_as_answer() {
        let expected = vec![r("Let me think.\n"), Piece::BlockEnd, a("The answer.")];
        assert_eq!(
            split(&["Let me", " think.\n</th", "ink>\n\nThe answer."], true),
            expected
        );
        assert_eq!(
            split(&["<think>\n", "Let me think.\n</think>The answer."], true),
            expected
        );
        assert_eq!(
            split(&["thinking forever"], true),
            vec![r("thinking forever")]
        );
    }

    #[test]
    fn an_empty_think_section_shows_nothing() {
        assert_eq!(
            split(&["<think>\n\n</think>\n\n", "Hi"], false),
            vec![a("Hi")]
        );
        assert_eq!(split(&["</think>Hi"], false), vec![a("Hi")]);
    }

    #[test]
    fn a_held_partial_tag_is_text_when_the_message_ends() {
        assert_eq!(split(&["<thi"], false), vec![a("<thi")]);
        assert_eq!(split(&["ok <"], false), vec![a("ok <")]);
        assert_eq!(split(&["<think>abc </thi"], false), vec![r("abc </thi")]);
    }

    #[test]
    fn partial_suffixes_respect_char_boundaries() {
        assert_eq!(partial_tag_suffix("abc</th", CLOSE), 4);
        assert_eq!(partial_tag_suffix("abc<", CLOSE), 1);
        assert_eq!(partial_tag_suffix("日本", CLOSE), 0);
        assert_eq!(partial_tag_suffix("", CLOSE), 0);
    }
}
