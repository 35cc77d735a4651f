//! The turn lifecycle as a pure reducer: `apply(&mut TurnState, &TurnEvent, now)`.
//!
//! Everything the bubble and its thinking blocks show is derived from this state, so every
//! edge of the stream (late pieces, missing ends, reclassification, drops, stops) is decided
//! here and tested natively. The clock is passed in, in milliseconds.

use serde::{Deserialize, Serialize};

use crate::domain::answer::{Answer, Body, ThinkingBlock};
use crate::domain::rich::end_running_tools;
use crate::domain::{
    ErrorCode, Failure, ReasoningSettings, SourceRef, ThinkingKind, ToolStep, TurnEvent, Usage,
};

/// Where a turn is in its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TurnPhase {
    /// Sent; reasoning may be streaming, no answer yet.
    #[default]
    Thinking,
    /// The answer is streaming.
    Streaming,
    /// Finished normally.
    Done,
    /// Failed; see [`TurnState::error`].
    Error,
    /// The reader pressed Stop.
    Stopped,
}

crate::domain::wire::wire_names!(TurnPhase {
    Thinking = "thinking",
    Streaming = "streaming",
    Done = "done",
    Error = "error",
    Stopped = "stopped",
});

impl TurnPhase {
    /// True while the turn may still change.
    pub fn is_running(self) -> bool {
        matches!(self, TurnPhase::Thinking | TurnPhase::Streaming)
    }
}

/// Where a thinking block is in its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockStatus {
    #[default]
    Streaming,
    Done,
    /// The stream ended (error, drop, stop) before the block's end: its time is frozen.
    Interrupted,
}

crate::domain::wire::wire_names!(BlockStatus {
    Streaming = "streaming",
    Done = "done",
    Interrupted = "interrupted",
});

/// One reasoning block of a turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockState {
    pub index: u32,
    pub kind: ThinkingKind,
    pub text: String,
    pub status: BlockStatus,
    /// The server's measurement, when it sent one.
    pub duration_ms: Option<u64>,
    /// Client clock when the block appeared, for the live elapsed time and as a fallback.
    pub started_at: f64,
    /// Client clock when the block ended or was interrupted.
    pub ended_at: Option<f64>,
    /// Answer text or a tool step arrived after this block began: the block's moment is over,
    /// so automatic behaviour collapses it.
    #[serde(default)]
    pub answer_followed: bool,
    /// The reader's own open/closed choice; `Some` means the reader owns the block.
    #[serde(default)]
    pub reader_open: Option<bool>,
    /// The server's id of a stored block whose text has not been loaded yet, with its word
    /// count: the header shows it, and the text is fetched when the block opens.
    #[serde(default)]
    pub remote: Option<RemoteText>,
    /// The reader asked for the answer before the model was done thinking.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

/// A stored block's text, still on the server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteText {
    pub id: String,
    pub words: u64,
}

impl ThinkingBlock for BlockState {
    fn begun(index: u32, at: f64) -> Self {
        BlockState {
            index,
            started_at: at,
            ..Default::default()
        }
    }

    fn index(&self) -> u32 {
        self.index
    }

    fn set_kind(&mut self, kind: ThinkingKind) {
        self.kind = kind;
    }

    fn text_mut(&mut self) -> &mut String {
        &mut self.text
    }

    fn end(&mut self, duration_ms: Option<u64>, cut_short: bool, now: f64) {
        self.cut_short |= cut_short;
        if self.status == BlockStatus::Streaming {
            self.status = BlockStatus::Done;
            self.ended_at = Some(now);
        }
        if duration_ms.is_some() {
            self.duration_ms = duration_ms;
        }
    }

    fn is_open(&self) -> bool {
        self.status == BlockStatus::Streaming
    }

    fn interrupt(&mut self, now: f64) {
        self.status = BlockStatus::Interrupted;
        self.ended_at = Some(now);
    }
}

impl BlockState {
    /// The block's duration: the server's figure, else the client's own measurement, else the
    /// live elapsed time (at `now`) while it still streams.
    pub fn elapsed_ms(&self, now: f64) -> u64 {
        if let Some(ms) = self.duration_ms {
            return ms;
        }
        let end = self.ended_at.unwrap_or(now);
        (end - self.started_at).max(0.0) as u64
    }

    /// Whether the reader has anything to expand: its text, or a stored block's text still on
    /// the server (it loads when the block opens).
    pub fn has_text(&self) -> bool {
        !self.text.trim().is_empty() || self.remote.as_ref().is_some_and(|r| r.words > 0)
    }
}

/// Text shown when the stream ends with neither `done` nor `error` after some frames.
pub const STREAM_DROPPED: &str = "The stream ended before my answer finished — try again?";
/// Text shown when the model thought but wrote no answer.
pub const THOUGHT_NO_ANSWER: &str = "I thought about it but didn't reach an answer — try again?";
/// Text shown when the model asked for a tool Ponder does not run and wrote no answer.
pub const TOOL_CALL_NO_ANSWER: &str =
    "The model asked the app to run a tool, which Ponder does not do, and wrote no answer.";
/// Text shown when the model sent neither thinking nor answer.
pub const EMPTY_ANSWER: &str = "The model sent back an empty answer — try again?";
/// Text shown when the connection closed before any frame arrived.
pub const CLOSED_BEFORE_START: &str =
    "The connection closed before the model sent anything — try again?";

/// The failure shown when nothing at all arrived in time.
pub fn no_response(guard_secs: u64) -> Failure {
    Failure::coded(
        ErrorCode::FirstFrameTimeout,
        format!("No response from the model within {guard_secs} s — try again?"),
        true,
    )
    .with("seconds", guard_secs)
}

/// The English text of a turn that finished without an answer, by its code (see
/// [`TurnState::fallback_code`]).
pub fn fallback_message(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::ToolCallsUnsupported => TOOL_CALL_NO_ANSWER,
        ErrorCode::EmptyAnswer => EMPTY_ANSWER,
        _ => THOUGHT_NO_ANSWER,
    }
}

/// One part of an assistant turn above its answer: a thinking block or a tool step, by its
/// position in [`TurnState::blocks`] or [`TurnState::tools`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    Block(usize),
    Tool(usize),
}

/// Blocks and tools in stream order: each tool after the blocks that began before it (a
/// stored tool that claims more blocks than there are comes last).
pub fn step_order(blocks: usize, tools: &[ToolStep]) -> Vec<Step> {
    let mut out = Vec::with_capacity(blocks + tools.len());
    let mut next_tool = 0;
    for block in 0..=blocks {
        while next_tool < tools.len() && tools[next_tool].after_blocks as usize <= block {
            out.push(Step::Tool(next_tool));
            next_tool += 1;
        }
        if block < blocks {
            out.push(Step::Block(block));
        }
    }
    out.extend((next_tool..tools.len()).map(Step::Tool));
    out
}

/// What a turn shows above its answer: a thinking block, one tool step, or a run of tool steps
/// next to each other (`first..end` of [`TurnState::tools`]), folded into one line that opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    Block(usize),
    Tool(usize),
    Tools(usize, usize),
}

/// [`step_order`] with every run of two or more tool steps between the same blocks folded.
pub fn parts(steps: &[Step]) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::with_capacity(steps.len());
    for step in steps {
        let folded = match (*step, out.last()) {
            (Step::Tool(i), Some(Part::Tools(first, end))) if *end == i => {
                Some(Part::Tools(*first, i + 1))
            }
            (Step::Tool(i), Some(Part::Tool(prev))) if *prev + 1 == i => {
                Some(Part::Tools(*prev, i + 1))
            }
            _ => None,
        };
        match folded {
            Some(part) => {
                out.pop();
                out.push(part);
            }
            None => out.push(match *step {
                Step::Tool(i) => Part::Tool(i),
                Step::Block(i) => Part::Block(i),
            }),
        }
    }
    out
}

/// The whole visible state of one assistant turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnState {
    pub phase: TurnPhase,
    pub blocks: Vec<BlockState>,
    /// The tools the model used, in the order they began.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolStep>,
    /// The sources the answer may cite; `[^n]` in the answer refers to the one numbered `n`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceRef>,
    pub answer: String,
    pub finish_reason: Option<crate::domain::FinishReason>,
    pub usage: Option<Usage>,
    pub error: Option<Failure>,
    /// At least one event arrived.
    pub saw_frame: bool,
    pub total_ms: Option<u64>,
    /// Client clock when the answer's first text arrived (a comparison's figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_answer_at: Option<f64>,
    /// Client clock when the turn began.
    #[serde(default)]
    pub created_at: f64,
    /// Streamed on this page (a restored turn is not live: its blocks start collapsed).
    #[serde(skip)]
    pub live: bool,
    /// The model that answered, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the turn was asked with.
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    pub settings: ReasoningSettings,
    /// One answer of a comparison: whether the reader kept it, and their thumbs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compared: Option<crate::domain::compare::Compared>,
}

impl TurnState {
    /// A turn that was just sent, at client time `now`.
    pub fn started(now: f64) -> Self {
        TurnState {
            created_at: now,
            live: true,
            ..Self::default()
        }
    }

    /// A turn that was just sent (at time 0; tests and defaults).
    pub fn new() -> Self {
        Self::started(0.0)
    }

    /// The stored copy of an answer whose turn still runs, shown while the page joins it: running,
    /// no error, its unfinished blocks open again, each timed from `running_ms[i]` ago (how long
    /// the server said it had been going; from `now` when it did not say).
    pub fn resuming(&self, now: f64, running_ms: &[Option<u64>]) -> TurnState {
        let mut t = self.clone();
        t.phase = if t.answer.is_empty() {
            TurnPhase::Thinking
        } else {
            TurnPhase::Streaming
        };
        t.error = None;
        t.live = true;
        for (i, b) in t.blocks.iter_mut().enumerate() {
            if b.status == BlockStatus::Interrupted && b.duration_ms.is_none() {
                b.status = BlockStatus::Streaming;
                b.started_at = now - running_ms.get(i).copied().flatten().unwrap_or(0) as f64;
                b.ended_at = None;
            }
        }
        t
    }

    /// The state a joined turn's replay starts from: nothing arrived yet; the model and settings
    /// of the copy shown are kept.
    pub fn joined(shown: &TurnState, now: f64) -> TurnState {
        TurnState {
            model: shown.model.clone(),
            settings: shown.settings,
            compared: shown.compared,
            ..TurnState::started(now)
        }
    }

    fn answer(&mut self) -> Answer<'_, BlockState> {
        Answer {
            blocks: &mut self.blocks,
            body: Body {
                text: &mut self.answer,
                tools: &mut self.tools,
                sources: &mut self.sources,
            },
        }
    }

    fn interrupt_open_blocks(&mut self, now: f64) {
        self.answer().interrupt(now);
    }

    /// Applies one event. Events after the terminal one change nothing.
    pub fn apply(&mut self, event: &TurnEvent, now: f64) {
        // A viewer that joined late learns when the turn really began.
        if let TurnEvent::Clock { turn_ms } = event {
            self.created_at = now - *turn_ms as f64;
            return;
        }
        // Where the turn is stored is not a sign of the model: it does not count as a frame.
        if !self.phase.is_running()
            || matches!(event, TurnEvent::Turn { .. } | TurnEvent::Started { .. })
        {
            return;
        }
        self.saw_frame = true;
        match event {
            TurnEvent::Delta { .. } => {
                self.phase = TurnPhase::Streaming;
                self.first_answer_at.get_or_insert(now);
            }
            TurnEvent::Reclassify { .. } => self.phase = TurnPhase::Thinking,
            _ => {}
        }
        if matches!(event, TurnEvent::Delta { .. } | TurnEvent::ToolStart { .. }) {
            for b in &mut self.blocks {
                b.answer_followed = true;
            }
        }
        let began = Some(self.created_at);
        if self.answer().apply(event, now, began) {
            return;
        }
        match event {
            TurnEvent::Done { .. } if event.is_stop() => {
                self.interrupt_open_blocks(now);
                self.phase = TurnPhase::Stopped;
                self.finish_reason = Some(crate::domain::FinishReason::Stopped);
            }
            TurnEvent::Done {
                finish_reason,
                usage,
                total_ms,
                ..
            } => {
                for b in &mut self.blocks {
                    if b.status == BlockStatus::Streaming {
                        b.status = BlockStatus::Done;
                        b.ended_at = Some(now);
                    }
                }
                end_running_tools(&mut self.tools);
                self.phase = TurnPhase::Done;
                self.finish_reason = Some(finish_reason.clone());
                self.usage = usage.clone();
                self.total_ms = Some(*total_ms);
            }
            TurnEvent::Error(failure) => {
                self.interrupt_open_blocks(now);
                self.phase = TurnPhase::Error;
                self.error = Some(failure.clone());
            }
            _ => {}
        }
    }

    /// The byte stream ended. Without a terminal event this is a dropped stream.
    pub fn end_of_stream(&mut self, now: f64) {
        if self.phase.is_running() {
            let failure = if self.saw_frame {
                Failure::coded(ErrorCode::StreamDropped, STREAM_DROPPED, true)
            } else {
                Failure::coded(ErrorCode::ClosedBeforeStart, CLOSED_BEFORE_START, true)
            };
            self.fail(failure, now);
        }
    }

    /// The transport failed (network error, HTTP error before streaming).
    pub fn fail(&mut self, failure: Failure, now: f64) {
        if self.phase.is_running() {
            self.interrupt_open_blocks(now);
            self.phase = TurnPhase::Error;
            self.error = Some(failure);
        }
    }

    /// The pre-token guard fired: nothing at all arrived within `guard_secs`.
    pub fn no_frame_within(&mut self, guard_secs: u64, now: f64) {
        if !self.saw_frame {
            self.fail(no_response(guard_secs), now);
        }
    }

    /// The reader pressed Stop: what arrived stays, marked stopped.
    pub fn stop(&mut self, now: f64) {
        if self.phase.is_running() {
            self.interrupt_open_blocks(now);
            self.phase = TurnPhase::Stopped;
        }
    }

    /// The text to show in place of an answer when the turn finished without one.
    pub fn fallback_text(&self) -> Option<&'static str> {
        self.fallback_code().map(fallback_message)
    }

    /// Why a turn that finished shows no answer (`tool_calls_unsupported`, `empty_answer`,
    /// `no_answer_after_thinking`), for the page to say in the reader's language; `None` when
    /// it has an answer or has not finished.
    pub fn fallback_code(&self) -> Option<ErrorCode> {
        if self.phase != TurnPhase::Done || !self.answer.trim().is_empty() {
            return None;
        }
        Some(
            if self.finish_reason == Some(crate::domain::FinishReason::ToolCalls) {
                ErrorCode::ToolCallsUnsupported
            } else if self.blocks.is_empty() {
                ErrorCode::EmptyAnswer
            } else {
                ErrorCode::NoAnswerAfterThinking
            },
        )
    }

    /// The thinking blocks and tool steps in the order they came, for the bubble to show
    /// above the answer.
    pub fn steps(&self) -> Vec<Step> {
        step_order(self.blocks.len(), &self.tools)
    }

    /// [`Self::steps`] as the page shows them: runs of tool steps folded.
    pub fn parts(&self) -> Vec<Part> {
        parts(&self.steps())
    }

    /// Where the run of tool steps beginning at `first` ends (exclusive).
    pub fn run_end(&self, first: usize) -> usize {
        self.parts()
            .into_iter()
            .find_map(|p| match p {
                Part::Tools(f, end) if f == first => Some(end),
                _ => None,
            })
            .unwrap_or(first + 1)
    }

    /// True when the bubble should offer Retry.
    pub fn wants_retry(&self) -> bool {
        match self.phase {
            TurnPhase::Error => true,
            TurnPhase::Done => self.fallback_text().is_some(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_of_tool_steps_folds_into_one_part_and_a_lone_step_stays() {
        use super::{parts, Part, Step};
        let steps = [
            Step::Tool(0),
            Step::Block(0),
            Step::Tool(1),
            Step::Tool(2),
            Step::Tool(3),
            Step::Block(1),
            Step::Tool(4),
        ];
        assert_eq!(
            parts(&steps),
            [
                Part::Tool(0),
                Part::Block(0),
                Part::Tools(1, 4),
                Part::Block(1),
                Part::Tool(4)
            ]
        );
        assert_eq!(parts(&[]), []);
    }

    use super::*;
    use crate::domain::ToolStatus;

    #[test]
    fn a_stored_block_whose_text_is_still_on_the_server_can_be_expanded() {
        let mut block = BlockState::default();
        assert!(!block.has_text());
        block.remote = Some(RemoteText {
            id: "b1".into(),
            words: 0,
        });
        assert!(!block.has_text(), "nothing to load");
        block.remote = Some(RemoteText {
            id: "b1".into(),
            words: 82,
        });
        assert!(block.has_text());
    }

    fn start(block: u32) -> TurnEvent {
        TurnEvent::ThinkingStart {
            block,
            kind: ThinkingKind::Raw,
            at_ms: None,
        }
    }
    fn think(block: u32, t: &str) -> TurnEvent {
        TurnEvent::Thinking {
            block,
            text: t.into(),
        }
    }
    fn end(block: u32, ms: Option<u64>) -> TurnEvent {
        TurnEvent::ThinkingEnd {
            block,
            duration_ms: ms,
            cut_short: false,
        }
    }
    fn delta(t: &str) -> TurnEvent {
        TurnEvent::Delta { text: t.into() }
    }
    fn done() -> TurnEvent {
        TurnEvent::Done {
            finish_reason: "stop".into(),
            usage: None,
            thinking_chars: 0,
            total_ms: 10,
        }
    }
    fn run(events: &[TurnEvent]) -> TurnState {
        let mut s = TurnState::new();
        for (i, e) in events.iter().enumerate() {
            s.apply(e, i as f64 * 100.0);
        }
        s
    }

    #[test]
    fn the_lifecycle_goes_thinking_streaming_done() {
        let mut s = TurnState::new();
        assert_eq!(s.phase, TurnPhase::Thinking);
        s.apply(&start(0), 0.0);
        s.apply(&think(0, "hm"), 1.0);
        assert_eq!(s.phase, TurnPhase::Thinking);
        assert_eq!(s.blocks[0].status, BlockStatus::Streaming);
        s.apply(&end(0, Some(4200)), 2.0);
        s.apply(&delta("A"), 3.0);
        assert_eq!(s.phase, TurnPhase::Streaming);
        s.apply(&done(), 4.0);
        assert_eq!(s.phase, TurnPhase::Done);
        assert_eq!(s.blocks[0].elapsed_ms(1e9), 4200);
        assert_eq!(s.answer, "A");
    }

    #[test]
    fn nothing_changes_after_the_terminal_event() {
        let s = run(&[delta("a"), done(), delta("b"), TurnEvent::error("x", true)]);
        assert_eq!(s.answer, "a");
        assert_eq!(s.phase, TurnPhase::Done);
    }

    #[test]
    fn late_thinking_appends_to_its_block() {
        let s = run(&[
            start(0),
            think(0, "a"),
            end(0, Some(5)),
            delta("x"),
            think(0, "b"),
        ]);
        assert_eq!(s.blocks[0].text, "ab");
        assert_eq!(s.blocks[0].status, BlockStatus::Done);
        assert_eq!(s.phase, TurnPhase::Streaming);
    }

    #[test]
    fn tools_sit_between_the_blocks_they_came_between_and_citations_mark_the_answer() {
        let tool = |tool: u32, input: &str| TurnEvent::ToolStart {
            tool,
            name: "web_search".into(),
            input: input.into(),
        };
        let s = run(&[
            start(0),
            end(0, Some(5)),
            tool(0, ""),
            tool(0, "rust"),
            TurnEvent::ToolEnd {
                tool: 0,
                status: ToolStatus::Finished,
                output: "2 results".into(),
            },
            start(1),
            end(1, Some(5)),
            TurnEvent::Source {
                n: 2,
                url: "https://b.example/".into(),
                title: None,
            },
            TurnEvent::Source {
                n: 1,
                url: "https://a.example/".into(),
                title: Some("A".into()),
            },
            delta("Fast."),
            TurnEvent::Cite { n: 1 },
            TurnEvent::Cite { n: 9 },
            tool(1, "x"),
            TurnEvent::error("cut", true),
        ]);
        assert_eq!(s.tools.len(), 2);
        assert_eq!(s.tools[0].after_blocks, 1);
        assert_eq!(s.tools[0].input, "rust");
        assert_eq!(s.tools[0].status, ToolStatus::Finished);
        assert_eq!(s.tools[1].after_blocks, 2);
        assert_eq!(s.tools[1].status, ToolStatus::Failed, "cut by the error");
        assert_eq!(
            s.answer, "Fast.[^1]",
            "no marker for a source never announced"
        );
        assert_eq!(s.sources.iter().map(|s| s.n).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn steps_follow_the_stream_and_survive_inconsistent_stored_data() {
        let tool = |after_blocks| ToolStep {
            after_blocks,
            ..ToolStep::default()
        };
        use Step::{Block, Tool};
        assert_eq!(step_order(0, &[]), []);
        assert_eq!(
            step_order(2, &[tool(0), tool(1), tool(1), tool(2)]),
            [Tool(0), Block(0), Tool(1), Tool(2), Block(1), Tool(3)]
        );
        assert_eq!(
            step_order(1, &[tool(5), tool(0)]),
            [Block(0), Tool(0), Tool(1)]
        );
        let mut s = run(&[delta("x")]);
        s.tools.push(tool(0));
        s.finish_reason = Some("tool_calls".into());
        s.answer.clear();
        s.phase = TurnPhase::Done;
        assert_eq!(s.fallback_text(), Some(TOOL_CALL_NO_ANSWER));
        assert_eq!(s.fallback_code(), Some(ErrorCode::ToolCallsUnsupported));
    }

    #[test]
    fn thinking_without_start_still_makes_a_block() {
        let s = run(&[think(3, "x")]);
        assert_eq!(s.blocks.len(), 1);
        assert_eq!(s.blocks[0].index, 3);
    }

    #[test]
    fn only_blocks_before_an_answer_delta_are_followed_by_it() {
        let s = run(&[
            start(0),
            think(0, "a"),
            end(0, None),
            delta("x"),
            start(1),
            think(1, "b"),
        ]);
        assert!(s.blocks[0].answer_followed);
        assert!(!s.blocks[1].answer_followed);
    }

    #[test]
    fn blocks_are_independent() {
        let s = run(&[
            start(0),
            think(0, "a"),
            end(0, Some(1000)),
            delta("x"),
            start(1),
            think(1, "b"),
            end(1, Some(2000)),
            done(),
        ]);
        assert_eq!(s.blocks.len(), 2);
        assert_eq!(s.blocks[1].text, "b");
        assert_eq!(s.blocks[1].duration_ms, Some(2000));
    }

    #[test]
    fn a_viewer_that_joins_late_times_the_block_from_its_real_start() {
        // Joined at client time 50_000 a turn that began 12 s earlier, whose block began 2 s in.
        let mut t = TurnState::started(50_000.0);
        t.apply(&TurnEvent::Clock { turn_ms: 12_000 }, 50_000.0);
        assert!(!t.saw_frame, "the clock is not a sign of the model");
        t.apply(
            &TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: Some(2_000),
            },
            50_010.0,
        );
        assert_eq!(t.created_at, 38_000.0);
        assert_eq!(t.blocks[0].started_at, 40_000.0);
        assert_eq!(t.blocks[0].elapsed_ms(51_000.0), 11_000);
        // A start from the future (clocks apart) is taken as now.
        t.apply(
            &TurnEvent::ThinkingStart {
                block: 1,
                kind: ThinkingKind::Raw,
                at_ms: Some(90_000),
            },
            50_020.0,
        );
        assert_eq!(t.blocks[1].started_at, 50_020.0);
    }

    #[test]
    fn a_stored_copy_shown_while_joining_runs_with_its_blocks_clock_from_the_server() {
        let mut stored = run(&[
            start(0),
            think(0, "a"),
            end(0, Some(900)),
            start(1),
            think(1, "b"),
        ]);
        stored.fail(Failure::new("interrupted", true), 10.0);
        let shown = stored.resuming(20_000.0, &[None, Some(3_000)]);
        assert_eq!(shown.phase, TurnPhase::Thinking);
        assert!(shown.error.is_none());
        assert_eq!(
            shown.blocks[0].status,
            BlockStatus::Done,
            "a finished block stays"
        );
        assert_eq!(shown.blocks[1].status, BlockStatus::Streaming);
        assert_eq!(shown.blocks[1].elapsed_ms(20_500.0), 3_500);
    }

    #[test]
    fn a_stop_from_any_viewer_freezes_open_blocks_and_keeps_what_arrived() {
        let mut t = run(&[start(0), think(0, "partial")]);
        t.apply(
            &TurnEvent::Done {
                finish_reason: crate::domain::FinishReason::Stopped,
                usage: None,
                thinking_chars: 7,
                total_ms: 900,
            },
            900.0,
        );
        assert_eq!(t.phase, TurnPhase::Stopped);
        assert_eq!(t.blocks[0].status, BlockStatus::Interrupted);
        assert_eq!(t.blocks[0].ended_at, Some(900.0));
        assert_eq!(t.blocks[0].text, "partial");
        assert!(!t.wants_retry());
    }

    #[test]
    fn a_drop_interrupts_open_blocks_and_keeps_what_arrived() {
        let mut s = run(&[start(0), think(0, "partial")]);
        s.end_of_stream(1000.0);
        assert_eq!(s.phase, TurnPhase::Error);
        assert_eq!(s.error.as_ref().unwrap().message, STREAM_DROPPED);
        assert_eq!(s.error.as_ref().unwrap().code, ErrorCode::StreamDropped);
        assert_eq!(s.blocks[0].status, BlockStatus::Interrupted);
        assert_eq!(s.blocks[0].elapsed_ms(99_999.0), 1000);
        assert_eq!(s.blocks[0].text, "partial");
    }

    #[test]
    fn an_error_event_interrupts_too() {
        let s = run(&[
            start(0),
            think(0, "a"),
            TurnEvent::error("upstream died", true),
        ]);
        assert_eq!(s.blocks[0].status, BlockStatus::Interrupted);
        assert!(s.wants_retry());
    }

    #[test]
    fn the_pre_token_guard_fires_only_without_frames() {
        let mut s = TurnState::new();
        s.no_frame_within(120, 5.0);
        assert_eq!(s.phase, TurnPhase::Error);
        let error = s.error.unwrap();
        assert!(error.message.contains("120 s"));
        assert_eq!(error.code, ErrorCode::FirstFrameTimeout);
        assert_eq!(error.param("seconds"), "120");
        let mut s = TurnState::new();
        s.end_of_stream(5.0);
        let error = s.error.unwrap();
        assert_eq!(error.message, CLOSED_BEFORE_START);
        assert_eq!(error.code, ErrorCode::ClosedBeforeStart);
        let mut s = run(&[start(0)]);
        s.no_frame_within(120, 5.0);
        assert_eq!(s.phase, TurnPhase::Thinking);
    }

    #[test]
    fn thinking_without_answer_gets_the_fallback() {
        let s = run(&[start(0), think(0, "a"), end(0, None), done()]);
        assert_eq!(s.fallback_text(), Some(THOUGHT_NO_ANSWER));
        assert_eq!(s.fallback_code(), Some(ErrorCode::NoAnswerAfterThinking));
        assert!(s.wants_retry());
        let s = run(&[done()]);
        assert_eq!(s.fallback_text(), Some(EMPTY_ANSWER));
        assert_eq!(s.fallback_code(), Some(ErrorCode::EmptyAnswer));
        let s = run(&[delta("x"), done()]);
        assert_eq!(s.fallback_text(), None);
        assert_eq!(s.fallback_code(), None);
    }

    #[test]
    fn reclassify_moves_the_answer_into_the_block() {
        let s = run(&[
            delta("step one "),
            delta("step two"),
            start(0),
            TurnEvent::Reclassify { block: 0 },
        ]);
        assert_eq!(s.answer, "");
        assert_eq!(s.blocks[0].text, "step one step two");
        assert_eq!(s.phase, TurnPhase::Thinking);
        let s = run(&[
            delta("scratch"),
            start(0),
            TurnEvent::Reclassify { block: 0 },
            end(0, Some(7)),
            delta("answer"),
            done(),
        ]);
        assert_eq!(s.answer, "answer");
        assert_eq!(s.blocks[0].text, "scratch");
        assert_eq!(s.blocks[0].status, BlockStatus::Done);
    }

    #[test]
    fn stop_keeps_content_and_marks_the_turn() {
        let mut s = run(&[start(0), think(0, "a"), end(0, Some(1)), delta("half")]);
        s.stop(500.0);
        assert_eq!(s.phase, TurnPhase::Stopped);
        assert_eq!(s.answer, "half");
        s.apply(&delta("more"), 600.0);
        assert_eq!(s.answer, "half");
    }

    #[test]
    fn client_time_is_the_fallback_duration() {
        let mut s = TurnState::new();
        s.apply(&start(0), 1000.0);
        assert_eq!(s.blocks[0].elapsed_ms(3500.0), 2500);
        s.apply(&end(0, None), 2000.0);
        assert_eq!(s.blocks[0].elapsed_ms(99_999.0), 1000);
    }
}
