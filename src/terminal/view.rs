//! What the terminal shows, as plain data: the transcript (questions, turns folded by the
//! browser's own reducer, notices) and the lines it draws at a width, a mode and a time. Pure,
//! so every header, live line, mode and frozen state is tested natively; the ratatui shell only
//! paints these lines.

use super::live::LiveLayout;
use super::markdown::{Piece, StyledLine, Tone};
use super::text;
use crate::client::labels;
use crate::client::turn_state::{BlockState, BlockStatus, Step, TurnState};
use crate::domain::attachment::FileRef;
use crate::domain::{ThinkingKind, ToolStatus, ToolStep};

/// How finished thinking blocks are shown. Running blocks always show their header and the
/// live line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Each finished block as one line: `Thought for 12s · 234 words`.
    #[default]
    Overview,
    /// Every block's full text, expanded.
    Detail,
}

impl Mode {
    /// The view's name as the key line shows it, in the terminal's language.
    pub fn label(self) -> &'static str {
        let words = &super::locale().catalogue().terminal;
        match self {
            Mode::Overview => words.mode_overview,
            Mode::Detail => words.mode_detail,
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Mode::Overview => "overview",
            Mode::Detail => "detail",
        }
    }

    pub fn from_key(key: &str) -> Option<Mode> {
        match key {
            "overview" => Some(Mode::Overview),
            "detail" => Some(Mode::Detail),
            _ => None,
        }
    }

    pub fn toggled(self) -> Mode {
        match self {
            Mode::Overview => Mode::Detail,
            Mode::Detail => Mode::Overview,
        }
    }
}

/// One assistant turn: the reducer's state, plus how many bytes of stream arrived (so a turn
/// whose reasoning is hidden visibly makes progress).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn {
    pub state: TurnState,
    pub bytes: u64,
}

/// One thing in the transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// The reader's message and the files sent with it.
    User(String, Vec<FileRef>),
    Assistant(Box<Turn>),
    /// A line from the client itself (a replayed conversation's title, a failure to connect).
    Notice(String),
}

const SPINNER: [char; 4] = ['⠋', '⠙', '⠸', '⠴'];

/// The transcript as lines `cols` wide, at client time `now` (ms): each item's
/// [`item_lines`], a blank line between two.
pub fn lines(items: &[Item], mode: Mode, now: f64, cols: usize) -> Vec<StyledLine> {
    let mut out = Vec::new();
    for item in items {
        if !out.is_empty() {
            out.push(StyledLine::default());
        }
        out.extend(item_lines(item, mode, now, cols));
    }
    out
}

/// True while what `item` shows can change by itself (a running turn: its clock, spinner and
/// live line move with time). The lines of any other item depend only on it, the mode and the
/// width.
pub fn is_live(item: &Item) -> bool {
    matches!(item, Item::Assistant(turn) if turn.state.phase.is_running())
}

/// One item as lines `cols` wide, at client time `now` (ms; read only by a live item).
pub fn item_lines(item: &Item, mode: Mode, now: f64, cols: usize) -> Vec<StyledLine> {
    item_lines_kept(item, mode, now, cols, &mut LiveLayout::default())
}

/// [`item_lines`], keeping in `live` the lines of a running turn's finished parts from one
/// frame to the next.
pub fn item_lines_kept(
    item: &Item,
    mode: Mode,
    now: f64,
    cols: usize,
    live: &mut LiveLayout,
) -> Vec<StyledLine> {
    let cols = cols.max(8);
    let mut out = Vec::new();
    match item {
        Item::User(question, files) => {
            for (i, row) in text::wrap(&text::sanitize(question), cols - 2)
                .into_iter()
                .enumerate()
            {
                let marker = if i == 0 { "› " } else { "  " };
                out.push(line(vec![
                    piece(marker, Tone::Marker),
                    piece(&row, Tone::Strong),
                ]));
            }
            for f in files {
                let chip = text::sanitize(&super::attach::chip(f));
                for row in text::wrap(&chip, cols.saturating_sub(4).max(4)) {
                    out.push(line(vec![
                        piece("  + ", Tone::Marker),
                        piece(&row, Tone::Quote),
                    ]));
                }
            }
        }
        Item::Notice(note) => {
            for row in text::wrap(&text::sanitize(note), cols) {
                out.push(line(vec![piece(&row, Tone::Quote)]));
            }
        }
        Item::Assistant(turn) => turn_lines(turn, mode, now, cols, live, &mut out),
    }
    out
}

fn turn_lines(
    turn: &Turn,
    mode: Mode,
    now: f64,
    cols: usize,
    live: &mut LiveLayout,
    out: &mut Vec<StyledLine>,
) {
    let state = &turn.state;
    for step in state.steps() {
        match step {
            Step::Block(i) => {
                let shown = Shown { mode, now, cols };
                block_lines(i, &state.blocks[i], turn.bytes, shown, live, out)
            }
            Step::Tool(i) => out.push(tool_line(&state.tools[i], cols)),
        }
    }
    if state.phase.is_running()
        && state.blocks.is_empty()
        && state.tools.is_empty()
        && state.answer.is_empty()
    {
        let spin = SPINNER[(now / 250.0) as usize % SPINNER.len()];
        out.push(line(vec![piece(
            &format!("{spin} {}", super::locale().catalogue().terminal.waiting),
            Tone::Marker,
        )]));
    }
    let answer = if state.answer.trim().is_empty() {
        state.fallback_text().unwrap_or("")
    } else {
        state.answer.as_str()
    };
    if !answer.is_empty() {
        live.answer(answer, cols, out);
    }
    if !state.sources.is_empty() {
        out.push(line(vec![piece("Sources", Tone::Heading)]));
        for source in &state.sources {
            let entry = format!(
                "[{}] {} — {}",
                source.n,
                text::sanitize(source.label()),
                text::sanitize(source.domain())
            );
            for row in text::wrap(&entry, cols) {
                out.push(line(vec![piece(&row, Tone::Quote)]));
            }
        }
    }
    if let Some(error) = &state.error {
        let mut text = format!("✗ {}", labels::failure_text(error, super::locale()));
        if error.retryable {
            text.push(' ');
            text.push_str(super::locale().catalogue().terminal.retry_hint);
        }
        for row in text::wrap(&text::sanitize(&text), cols) {
            out.push(line(vec![piece(&row, Tone::Strong)]));
        }
    } else if state.phase == crate::client::turn_state::TurnPhase::Stopped {
        out.push(line(vec![piece("■ stopped", Tone::Marker)]));
    }
    if !state.phase.is_running() {
        if let Some(usage) = state
            .usage
            .as_ref()
            .and_then(|u| labels::usage_line(u, super::locale()))
        {
            out.push(line(vec![piece(&usage, Tone::Marker)]));
        }
    }
}

/// A tool step on one line: what it is, what it was asked, how it went (the browser's words).
fn tool_line(tool: &ToolStep, cols: usize) -> StyledLine {
    let mut text = format!(
        "⚙ {}",
        labels::tool_label(&text::sanitize(&tool.name), super::locale())
    );
    if !tool.input.is_empty() {
        text.push_str(" · ");
        text.push_str(&text::sanitize(&tool.input));
    }
    text.push_str(" — ");
    text.push_str(labels::tool_status(tool.status, super::locale()));
    let tone = if tool.status == ToolStatus::Failed {
        Tone::Strong
    } else {
        Tone::Marker
    };
    line(vec![piece(&text::fit_start(&text, cols), tone)])
}

/// The header of a block as the terminal shows it (the browser's words).
pub fn block_header(block: &BlockState, now: f64) -> String {
    let mut header = labels::header(block, now, super::locale());
    if block.status == BlockStatus::Interrupted {
        header.push(' ');
        header.push_str(super::locale().catalogue().terminal.incomplete);
    }
    header
}

/// True when the provider sends no readable reasoning for this block.
fn hidden(block: &BlockState) -> bool {
    matches!(block.kind, ThinkingKind::Redacted | ThinkingKind::Hidden) || !block.has_text()
}

/// How an item is shown: the mode, the client's time (ms) and the width.
#[derive(Clone, Copy)]
struct Shown {
    mode: Mode,
    now: f64,
    cols: usize,
}

fn block_lines(
    index: usize,
    block: &BlockState,
    bytes: u64,
    shown: Shown,
    live: &mut LiveLayout,
    out: &mut Vec<StyledLine>,
) {
    let Shown { mode, now, cols } = shown;
    let streaming = block.status == BlockStatus::Streaming;
    let sign = if streaming { "▸ " } else { "▪ " };
    let header = block_header(block, now);
    out.push(line(vec![
        piece(sign, Tone::Marker),
        piece(&text::fit_start(&header, cols - 2), Tone::Heading),
    ]));
    if hidden(block) {
        let c = super::locale().catalogue();
        let why = if block.kind == ThinkingKind::Redacted {
            c.origin_redacted
        } else {
            c.terminal.hidden_reasoning
        };
        let note = if streaming {
            let spin = SPINNER[(now / 250.0) as usize % SPINNER.len()];
            let received = crate::i18n::fill(c.terminal.received, &[("size", &size(bytes))]);
            format!("{why} · {received} {spin}")
        } else {
            why.to_string()
        };
        out.push(line(vec![
            piece("  ", Tone::Plain),
            piece(&text::fit_start(&note, cols - 2), Tone::Quote),
        ]));
        return;
    }
    match (mode, streaming) {
        (Mode::Overview, true) => out.push(line(vec![
            piece("  ", Tone::Plain),
            piece(&text::live_line(&block.text, cols - 2), Tone::Quote),
        ])),
        (Mode::Overview, false) => {}
        (Mode::Detail, _) => {
            for row in live.reasoning_rows(index, &block.text, cols - 2) {
                out.push(line(vec![
                    piece("  ", Tone::Plain),
                    piece(&row, Tone::Quote),
                ]));
            }
        }
    }
}

/// "812 B", "1.2 KB", "3.4 MB".
pub fn size(bytes: u64) -> String {
    match bytes {
        0..1000 => format!("{bytes} B"),
        1000..1_000_000 => format!("{:.1} KB", bytes as f64 / 1000.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_000_000.0),
    }
}

fn piece(text: &str, tone: Tone) -> Piece {
    Piece {
        text: text.to_string(),
        tone,
    }
}

fn line(pieces: Vec<Piece>) -> StyledLine {
    StyledLine { pieces }
}

/// Which of `total` lines a view `height` rows tall shows, `back` lines up from the bottom
/// (0 follows the newest line): the first line and the corrected `back`.
pub fn window(total: usize, height: usize, back: usize) -> (usize, usize) {
    let most = total.saturating_sub(height);
    let back = back.min(most);
    (most - back, back)
}

/// A stored conversation replayed as a transcript: each turn as it finished, each block done
/// ("Thought" with no time when none was stored).
pub fn replay(conversation: &crate::domain::history::Conversation) -> Vec<Item> {
    let mut items = Vec::new();
    if conversation.first > 0 {
        let l = super::locale();
        items.push(Item::Notice(l.count(
            &l.catalogue().terminal.earlier_hidden,
            conversation.first as u64,
        )));
    }
    for message in &conversation.messages {
        let versions = &message.versions;
        let Some(version) = versions.get(message.active).or(versions.last()) else {
            continue;
        };
        match message.role {
            crate::domain::Role::User => {
                items.push(Item::User(version.content.clone(), version.files.clone()))
            }
            crate::domain::Role::Assistant => items.push(Item::Assistant(Box::new(Turn {
                state: crate::client::saved_chat::turn_from_stored(version),
                bytes: 0,
            }))),
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Failure, TurnEvent};

    fn texts(lines: &[StyledLine]) -> Vec<String> {
        lines.iter().map(StyledLine::text).collect()
    }

    fn turn_with(events: &[TurnEvent], at: f64) -> Turn {
        let mut state = TurnState::started(0.0);
        for e in events {
            state.apply(e, at);
        }
        Turn { state, bytes: 0 }
    }

    fn start(block: u32, kind: ThinkingKind) -> TurnEvent {
        TurnEvent::ThinkingStart {
            block,
            kind,
            at_ms: None,
        }
    }

    fn think(block: u32, text: &str) -> TurnEvent {
        TurnEvent::Thinking {
            block,
            text: text.into(),
        }
    }

    #[test]
    fn a_streaming_block_shows_its_clock_and_the_newest_line_of_its_reasoning() {
        let turn = turn_with(
            &[
                start(0, ThinkingKind::Raw),
                think(0, "First I check the base case.\nThen the step"),
            ],
            0.0,
        );
        let items = [
            Item::User("Prove it".into(), Vec::new()),
            Item::Assistant(Box::new(turn)),
        ];
        let shown = texts(&lines(&items, Mode::Overview, 10_400.0, 40));
        assert_eq!(shown[0], "› Prove it");
        assert_eq!(shown[2], "▸ Thinking… (10s)");
        assert_eq!(shown[3], "  Then the step");
        let later = texts(&lines(&items, Mode::Overview, 11_400.0, 40));
        assert_eq!(later[2], "▸ Thinking… (11s)", "the clock moves");
    }

    #[test]
    fn the_live_line_is_cut_to_the_width_by_columns_keeping_the_newest_words() {
        let turn = turn_with(
            &[
                start(0, ThinkingKind::Raw),
                think(0, "日本語で考えています。とても長い推論の行です"),
            ],
            0.0,
        );
        let shown = lines(
            &[Item::Assistant(Box::new(turn))],
            Mode::Overview,
            1000.0,
            20,
        );
        let live = shown[1].text();
        assert!(text::width(&live) <= 20, "{live:?}");
        assert!(live.ends_with("行です"), "{live:?}");
        assert!(live.contains('…'));
    }

    #[test]
    fn finished_blocks_are_one_line_in_overview_and_expanded_in_detail() {
        let mut turn = turn_with(
            &[
                start(0, ThinkingKind::Raw),
                think(0, "alpha beta\ngamma"),
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(12_000),
                    cut_short: false,
                },
                TurnEvent::Delta {
                    text: "The answer.".into(),
                },
            ],
            0.0,
        );
        turn.state.phase = crate::client::turn_state::TurnPhase::Done;
        let items = [Item::Assistant(Box::new(turn))];
        let overview = texts(&lines(&items, Mode::Overview, 0.0, 60));
        assert_eq!(overview, ["▪ Thought for 12.0s · 3 words", "The answer."]);
        let detail = texts(&lines(&items, Mode::Detail, 0.0, 60));
        assert_eq!(
            detail,
            [
                "▪ Thought for 12.0s · 3 words",
                "  alpha beta",
                "  gamma",
                "The answer."
            ]
        );
    }

    #[test]
    fn two_blocks_keep_their_own_times() {
        let turn = turn_with(
            &[
                start(0, ThinkingKind::Raw),
                think(0, "one"),
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(2_000),
                    cut_short: false,
                },
                start(1, ThinkingKind::Raw),
                think(1, "two"),
                TurnEvent::ThinkingEnd {
                    block: 1,
                    duration_ms: Some(5_500),
                    cut_short: false,
                },
            ],
            0.0,
        );
        let shown = texts(&lines(
            &[Item::Assistant(Box::new(turn))],
            Mode::Overview,
            0.0,
            60,
        ));
        assert_eq!(
            &shown[..2],
            ["▪ Thought for 2.0s · 1 word", "▪ Thought for 5.5s · 1 word"]
        );
    }

    #[test]
    fn hidden_reasoning_still_shows_the_clock_the_note_and_bytes_arriving() {
        let redacted = turn_with(&[start(0, ThinkingKind::Redacted)], 0.0);
        let items = [Item::Assistant(Box::new(redacted))];
        let shown = texts(&lines(&items, Mode::Overview, 3_000.0, 60));
        assert!(
            shown[1].starts_with("  redacted · "),
            "encrypted for safety is not hidden: {shown:?}"
        );
        let mut turn = turn_with(&[start(0, ThinkingKind::Hidden)], 0.0);
        turn.bytes = 1_234;
        let items = [Item::Assistant(Box::new(turn.clone()))];
        let shown = texts(&lines(&items, Mode::Overview, 3_000.0, 60));
        assert_eq!(shown[0], "▸ Thinking… (3s)");
        assert!(shown[1].starts_with("  reasoning hidden by the provider · 1.2 KB received"));
        turn.state.apply(
            &TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(4_000),
                cut_short: false,
            },
            4_000.0,
        );
        let done = texts(&lines(
            &[Item::Assistant(Box::new(turn))],
            Mode::Detail,
            5_000.0,
            60,
        ));
        assert_eq!(
            done[..2],
            ["▪ Thought for 4.0s", "  reasoning hidden by the provider"]
        );
    }

    #[test]
    fn a_stream_that_ends_without_thinking_end_freezes_the_block_as_incomplete() {
        let mut turn = turn_with(&[start(0, ThinkingKind::Raw), think(0, "half a")], 0.0);
        turn.state.end_of_stream(3_000.0);
        let at_end = texts(&lines(
            &[Item::Assistant(Box::new(turn.clone()))],
            Mode::Overview,
            3_000.0,
            80,
        ));
        let much_later = texts(&lines(
            &[Item::Assistant(Box::new(turn))],
            Mode::Overview,
            60_000.0,
            80,
        ));
        assert_eq!(
            at_end[0],
            "▪ Thinking stopped after 3.0s · 2 words (incomplete)"
        );
        assert_eq!(at_end, much_later, "the time is frozen");
        assert!(
            at_end.iter().any(|l| l.contains("try again")),
            "the stream-drop message is shown: {at_end:?}"
        );
    }

    #[test]
    fn an_error_says_what_happened_and_how_to_retry() {
        let mut turn = turn_with(&[], 0.0);
        turn.state
            .fail(Failure::new("The model server is busy", true), 1.0);
        let shown = texts(&lines(
            &[Item::Assistant(Box::new(turn))],
            Mode::Overview,
            1.0,
            80,
        ));
        assert!(
            shown.contains(&"✗ The model server is busy (Ctrl-R retries)".to_string()),
            "{shown:?}"
        );
        let mut fatal = turn_with(&[], 0.0);
        fatal.state.error = Some(Failure::new("bad key", false));
        let shown = texts(&lines(
            &[Item::Assistant(Box::new(fatal))],
            Mode::Overview,
            1.0,
            80,
        ));
        assert!(shown.contains(&"✗ bad key".to_string()), "{shown:?}");
    }

    #[test]
    fn hostile_output_never_reaches_the_terminal_as_control_characters() {
        let turn = turn_with(
            &[
                start(0, ThinkingKind::Raw),
                think(0, "\u{1b}]0;pwned\u{7}\u{1b}[2Jthinking\u{202e}"),
                TurnEvent::Delta {
                    text: "\u{1b}]52;c;ZXZpbA==\u{7}answer \u{1b}[31mred".into(),
                },
            ],
            0.0,
        );
        let items = [
            Item::User("\u{1b}[1A up".into(), Vec::new()),
            Item::Assistant(Box::new(turn)),
        ];
        for mode in [Mode::Overview, Mode::Detail] {
            for l in texts(&lines(&items, mode, 1.0, 40)) {
                assert!(
                    !l.chars()
                        .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
                    "{l:?}"
                );
            }
        }
    }

    #[test]
    fn every_line_fits_the_width() {
        let turn = turn_with(
            &[
                start(0, ThinkingKind::Raw),
                think(0, &"wide 漢字 and 👨‍👩‍👧 words ".repeat(30)),
                TurnEvent::Delta {
                    text: "# Title\n\n- a list item that is rather long indeed\n\n```\ncode line that is long enough to wrap around\n```".into(),
                },
            ],
            0.0,
        );
        let items = [Item::Assistant(Box::new(turn))];
        for cols in [8, 13, 20, 41] {
            for mode in [Mode::Overview, Mode::Detail] {
                for l in lines(&items, mode, 1.0, cols) {
                    assert!(text::width(&l.text()) <= cols, "{cols}: {:?}", l.text());
                }
            }
        }
    }

    #[test]
    fn a_replayed_conversation_shows_each_block_finished_and_thought_without_a_stored_time() {
        use crate::domain::history::{BlockHeader, Conversation, Message, Version, VersionStatus};
        let version = |content: &str, blocks| Version {
            id: format!("v-{content}"),
            content: content.into(),
            status: VersionStatus::Done,
            error: None,
            model: None,
            settings: Default::default(),
            created_at: 1,
            blocks,
            tools: Vec::new(),
            sources: Vec::new(),
            files: Vec::new(),
            usage: None,
            turn: None,
            compared: None,
        };
        let block = |id: &str, duration_ms| BlockHeader {
            id: id.into(),
            kind: ThinkingKind::Raw,
            duration_ms,
            words: 7,
            chars: 30,
            reader_open: None,
            cut_short: false,
            interrupted: false,
            running_ms: None,
            text: Some("seven words of stored reasoning right here".into()),
        };
        let conversation = Conversation {
            id: "c".into(),
            title: "t".into(),
            workspace_id: "w".into(),
            created_at: 1,
            updated_at: 1,
            rev: 1,
            model: None,
            settings: Default::default(),
            first: 4,
            instructions: None,
            messages: vec![
                Message {
                    id: "u".into(),
                    role: crate::domain::Role::User,
                    created_at: 1,
                    active: 0,
                    versions: vec![version("Why?", vec![])],
                },
                Message {
                    id: "a".into(),
                    role: crate::domain::Role::Assistant,
                    created_at: 2,
                    active: 0,
                    versions: vec![version(
                        "Because.",
                        vec![block("b1", None), block("b2", Some(12_000))],
                    )],
                },
            ],
        };
        let items = replay(&conversation);
        let shown = texts(&lines(&items, Mode::Overview, 99_999.0, 60));
        assert_eq!(
            shown,
            [
                "4 earlier messages are not shown",
                "",
                "› Why?",
                "",
                "▪ Thought · 7 words",
                "▪ Thought for 12.0s · 7 words",
                "Because.",
            ]
        );
    }

    #[test]
    fn the_view_follows_the_bottom_unless_scrolled_back() {
        assert_eq!(window(100, 20, 0), (80, 0));
        assert_eq!(window(100, 20, 30), (50, 30));
        assert_eq!(window(100, 20, 500), (0, 80), "no further than the top");
        assert_eq!(window(5, 20, 3), (0, 0));
    }

    #[test]
    fn modes_toggle_and_round_trip_by_key() {
        assert_eq!(Mode::Overview.toggled(), Mode::Detail);
        for m in [Mode::Overview, Mode::Detail] {
            assert_eq!(Mode::from_key(m.key()), Some(m));
        }
        assert_eq!(Mode::from_key("loud"), None);
    }

    #[test]
    fn tool_steps_sit_between_blocks_and_sources_follow_the_answer_with_escapes_removed() {
        let turn = turn_with(
            &[
                start(0, ThinkingKind::Raw),
                think(0, "Search first."),
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(2000),
                    cut_short: false,
                },
                TurnEvent::ToolStart {
                    tool: 0,
                    name: "web_search".into(),
                    input: "rust\u{1b}]0;pwned\u{7} 2024".into(),
                },
                TurnEvent::ToolEnd {
                    tool: 0,
                    status: ToolStatus::Finished,
                    output: String::new(),
                },
                TurnEvent::Source {
                    n: 1,
                    url: "https://www.rust-lang.org/".into(),
                    title: Some("Rust\u{1b}[2J".into()),
                },
                TurnEvent::Delta {
                    text: "Shipped.".into(),
                },
                TurnEvent::Cite { n: 1 },
            ],
            0.0,
        );
        let shown = texts(&lines(
            &[Item::Assistant(Box::new(turn))],
            Mode::Overview,
            9_000.0,
            60,
        ));
        let tool = shown
            .iter()
            .position(|l| l.starts_with("⚙ Web search · rust"))
            .expect("tool line");
        assert!(shown[tool].ends_with("— Done"), "{shown:?}");
        assert!(
            shown[0].starts_with("▪ Thought"),
            "the block comes first: {shown:?}"
        );
        let sources = shown.iter().position(|l| l == "Sources").expect("sources");
        assert!(sources > tool);
        assert!(shown[sources + 1].starts_with("[1] Rust"), "{shown:?}");
        assert!(shown[sources + 1].ends_with("— rust-lang.org"), "{shown:?}");
        assert!(shown.iter().all(|l| !l.contains('\u{1b}')), "{shown:?}");
    }

    /// One stored conversation, as the page restores it (through the browser's saved copy), as
    /// `ponder chat` replays it and as the Markdown export writes it: the same turn, to the
    /// field, with math, a footnote citation, a tool step and a hidden-reasoning block.
    #[test]
    fn the_page_the_terminal_and_the_export_read_a_stored_chat_alike() {
        use crate::client::saved_chat::{self, export_markdown, SavedChat};
        use crate::domain::history::{BlockHeader, Conversation, Message, Version, VersionStatus};
        use crate::domain::{SourceRef, ToolStatus, ToolStep};
        let answer = "The area is $\\pi r^2$ [^1].";
        let block = |kind, text: Option<&str>| BlockHeader {
            id: format!("b-{kind:?}"),
            kind,
            duration_ms: Some(1200),
            words: 3,
            chars: 20,
            reader_open: None,
            interrupted: false,
            cut_short: false,
            running_ms: None,
            text: text.map(str::to_string),
        };
        let answered = Version {
            id: "v".into(),
            content: answer.into(),
            status: VersionStatus::Done,
            error: None,
            model: Some("demo".into()),
            settings: Default::default(),
            created_at: 5,
            blocks: vec![
                block(ThinkingKind::Raw, Some("circle area formula")),
                block(ThinkingKind::Hidden, Some("")),
            ],
            tools: vec![ToolStep {
                name: "web_search".into(),
                input: "circle area".into(),
                status: ToolStatus::Finished,
                output: "1 result".into(),
                after_blocks: 1,
            }],
            sources: vec![SourceRef {
                n: 1,
                url: "https://example.org/circle".into(),
                title: Some("Circle".into()),
            }],
            files: Vec::new(),
            usage: None,
            turn: None,
            compared: None,
        };
        let asked = Version {
            id: "q".into(),
            content: "Area of a circle?".into(),
            blocks: Vec::new(),
            tools: Vec::new(),
            sources: Vec::new(),
            model: None,
            ..answered.clone()
        };
        let message = |id: &str, role, v: &Version| Message {
            id: id.into(),
            role,
            created_at: 5,
            active: 0,
            versions: vec![v.clone()],
        };
        let conversation = Conversation {
            id: "c".into(),
            title: "Circles".into(),
            workspace_id: "w".into(),
            created_at: 1,
            updated_at: 5,
            rev: 1,
            model: None,
            settings: Default::default(),
            first: 0,
            instructions: None,
            messages: vec![
                message("u", crate::domain::Role::User, &asked),
                message("a", crate::domain::Role::Assistant, &answered),
            ],
        };
        let cached = serde_json::to_string(&SavedChat::server_copy(conversation.clone())).unwrap();
        let record = saved_chat::parse_conversation(&cached).unwrap().chat;
        let page = saved_chat::turn_from_stored(record.messages[1].shown().unwrap());
        let terminal = match replay(&conversation).pop() {
            Some(Item::Assistant(turn)) => turn.state,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            page, terminal,
            "the page and the terminal restore the same turn"
        );
        assert_eq!(terminal.answer, answer);
        assert_eq!(terminal.tools, answered.tools);
        assert_eq!(terminal.sources, answered.sources);
        assert_eq!(terminal.blocks[1].kind, ThinkingKind::Hidden);
        let export = export_markdown(&record, true, crate::i18n::Locale::En);
        assert!(export.starts_with("# Circles"), "{export}");
        assert!(export.contains(answer), "the answer as stored: {export}");
        assert!(
            export.contains("[^1]: [Circle](<https://example.org/circle>)"),
            "{export}"
        );
        assert!(export.contains("circle area formula"), "{export}");
        assert!(export.contains("Tool `web_search` (finished)"), "{export}");
        assert!(
            export.contains("(reasoning hidden by the provider)"),
            "{export}"
        );
    }
}
