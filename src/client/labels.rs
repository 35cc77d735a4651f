//! The words a thinking block shows, derived from its state. Pure, so every label is tested.

use super::turn_state::{BlockState, BlockStatus, TurnPhase, TurnState};
use crate::domain::ThinkingKind;

/// Whitespace-separated words, as the reader would count them.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// "4.2s" below a minute, "1m 12s" above. `None` under one second: such a time is noise.
pub fn format_duration(ms: u64) -> Option<String> {
    if ms < 1000 {
        return None;
    }
    if ms < 60_000 {
        return Some(format!("{:.1}s", ms as f64 / 1000.0));
    }
    let secs = ms / 1000;
    Some(format!("{}m {}s", secs / 60, secs % 60))
}

/// Whole seconds for the live counter: "(12s)".
pub fn live_seconds(ms: u64) -> String {
    format!("{}s", ms / 1000)
}

/// The header of a block: "Thinking… (12s)" while streaming, "Thought for 4.2s · 234 words"
/// when done, "Thinking stopped after 3.0s · 12 words" when interrupted.
pub fn header(block: &BlockState, now: f64) -> String {
    let ms = block.elapsed_ms(now);
    match block.status {
        BlockStatus::Streaming => format!("Thinking… ({})", live_seconds(ms)),
        BlockStatus::Done if block.cut_short => {
            let mut label = with_words("Thought", "Thought for", block, ms);
            let at = label.find(" · ").unwrap_or(label.len());
            label.insert_str(at, " (cut short)");
            label
        }
        BlockStatus::Done => with_words("Thought", "Thought for", block, ms),
        BlockStatus::Interrupted => {
            with_words("Thinking stopped", "Thinking stopped after", block, ms)
        }
    }
}

/// The same as [`header`] for a block restored from storage (no live clock).
pub fn restored_header(block: &BlockState) -> String {
    header(block, block.started_at)
}

fn with_words(bare: &str, timed: &str, block: &BlockState, ms: u64) -> String {
    let mut label = match format_duration(ms) {
        Some(t) => format!("{timed} {t}"),
        None => bare.to_string(),
    };
    let words = match &block.remote {
        Some(remote) if block.text.is_empty() => remote.words as usize,
        _ => word_count(&block.text),
    };
    if words > 0 {
        label.push_str(&format!(
            " · {} {}",
            words,
            if words == 1 { "word" } else { "words" }
        ));
    }
    label
}

/// The browser tab's title: the chat's title first, so tabs tell chats apart.
pub fn tab_title(chat_title: &str) -> String {
    let title = chat_title.trim();
    if title.is_empty() {
        "Ponder".into()
    } else {
        format!("{title} · Ponder")
    }
}

/// The small note on where the reasoning came from, when it is not the raw scratchpad.
pub fn origin_note(kind: ThinkingKind) -> Option<&'static str> {
    match kind {
        ThinkingKind::Raw => None,
        ThinkingKind::Summary => Some("summary"),
        ThinkingKind::Redacted => Some("redacted"),
    }
}

/// The polite announcement once a block is over: "Thought for 4 seconds".
pub fn announcement(block: &BlockState, now: f64) -> String {
    let secs = block.elapsed_ms(now) / 1000;
    match (block.status, secs) {
        (BlockStatus::Interrupted, _) => "Thinking stopped".into(),
        (_, 0) => "Thought for less than a second".into(),
        (_, 1) => "Thought for 1 second".into(),
        (_, s) => format!("Thought for {s} seconds"),
    }
}

/// The last non-empty line of the thinking so far, for the one-line peek of a collapsed block.
pub fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The part of a turn announcements compare: its phase and each block's status. Taken before
/// a frame's events are applied, instead of a copy of the whole turn with all its text.
#[derive(Clone, Debug, PartialEq)]
pub struct Milestones {
    phase: TurnPhase,
    blocks: Vec<(u32, BlockStatus)>,
    tools: Vec<crate::domain::ToolStatus>,
}

impl Milestones {
    pub fn of(turn: &TurnState) -> Self {
        Milestones {
            phase: turn.phase,
            blocks: turn.blocks.iter().map(|b| (b.index, b.status)).collect(),
            tools: turn.tools.iter().map(|t| t.status).collect(),
        }
    }
}

/// What the polite status region says when a turn moves from `before` to `after`: each
/// transition once, never per token.
pub fn announcements(before: &Milestones, after: &TurnState, now: f64) -> Vec<String> {
    let mut out = Vec::new();
    if after.blocks.len() > before.blocks.len() && after.phase == TurnPhase::Thinking {
        out.push("Thinking…".to_string());
    }
    for b in &after.blocks {
        let was = before
            .blocks
            .iter()
            .find(|(index, _)| *index == b.index)
            .map(|(_, status)| *status);
        if b.status == BlockStatus::Done && was != Some(BlockStatus::Done) {
            out.push(announcement(b, now));
        }
    }
    for (i, t) in after.tools.iter().enumerate() {
        let was = before.tools.get(i).copied();
        let name = tool_label(&t.name);
        match t.status {
            crate::domain::ToolStatus::Running if was.is_none() => out.push(format!("{name}…")),
            crate::domain::ToolStatus::Finished if was != Some(t.status) => {
                out.push(format!("{name} done"))
            }
            crate::domain::ToolStatus::Failed if was != Some(t.status) => {
                out.push(format!("{name} failed"))
            }
            _ => {}
        }
    }
    if before.phase != after.phase {
        match after.phase {
            TurnPhase::Streaming => out.push("Generating…".into()),
            TurnPhase::Done => out.push("Done".into()),
            TurnPhase::Error => {
                let message = after
                    .error
                    .as_ref()
                    .map(|e| e.message.as_str())
                    .unwrap_or("");
                out.push(format!("Error: {message}"));
            }
            TurnPhase::Stopped => out.push("Stopped".into()),
            TurnPhase::Thinking => {}
        }
    }
    out
}

/// A tool's name as a reader reads it: the common server tools by what they do, any other by
/// its own name.
pub fn tool_label(name: &str) -> String {
    match name {
        "web_search" | "search" | "web_search_preview" => "Web search".into(),
        "google_search" => "Google Search".into(),
        "code_execution" | "code_interpreter" | "bash_code_execution" | "python" => {
            "Code execution".into()
        }
        "web_fetch" | "visit_website" => "Web page".into(),
        "file_search" => "File search".into(),
        other => other.to_string(),
    }
}

/// A tool step's state in words.
pub fn tool_status(status: crate::domain::ToolStatus) -> &'static str {
    match status {
        crate::domain::ToolStatus::Running => "Running…",
        crate::domain::ToolStatus::Finished => "Done",
        crate::domain::ToolStatus::Failed => "Failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ThinkingKind, TurnEvent};

    #[test]
    fn tools_read_as_what_they_do() {
        assert_eq!(tool_label("web_search"), "Web search");
        assert_eq!(tool_label("bash_code_execution"), "Code execution");
        assert_eq!(
            tool_label("ask_question (deepwiki)"),
            "ask_question (deepwiki)"
        );
        assert_eq!(tool_status(crate::domain::ToolStatus::Failed), "Failed");
    }

    #[test]
    fn a_tool_is_announced_when_it_starts_and_when_it_ends() {
        let mut s = TurnState::started(0.0);
        let mut heard = Vec::new();
        for e in [
            TurnEvent::ToolStart {
                tool: 0,
                name: "web_search".into(),
                input: String::new(),
            },
            TurnEvent::ToolStart {
                tool: 0,
                name: "web_search".into(),
                input: "rust".into(),
            },
            TurnEvent::ToolEnd {
                tool: 0,
                status: crate::domain::ToolStatus::Finished,
                output: String::new(),
            },
            TurnEvent::ToolStart {
                tool: 1,
                name: "lookup".into(),
                input: String::new(),
            },
            TurnEvent::error("cut", true),
        ] {
            let before = Milestones::of(&s);
            s.apply(&e, 0.0);
            heard.extend(announcements(&before, &s, 0.0));
        }
        assert_eq!(
            heard,
            [
                "Web search…",
                "Web search done",
                "lookup…",
                "lookup failed",
                "Error: cut"
            ]
        );
    }

    #[test]
    fn the_tab_names_the_chat() {
        assert_eq!(tab_title(""), "Ponder");
        assert_eq!(tab_title("  "), "Ponder");
        assert_eq!(
            tab_title("Why is the sky blue?"),
            "Why is the sky blue? · Ponder"
        );
    }

    #[test]
    fn each_transition_is_announced_once() {
        let mut s = TurnState::started(0.0);
        let mut heard = Vec::new();
        let events = [
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            TurnEvent::Thinking {
                block: 0,
                text: "a".into(),
            },
            TurnEvent::Thinking {
                block: 0,
                text: "b".into(),
            },
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(4200),
                cut_short: false,
            },
            TurnEvent::Delta { text: "x".into() },
            TurnEvent::Delta { text: "y".into() },
            TurnEvent::Done {
                finish_reason: "stop".into(),
                usage: None,
                thinking_chars: 2,
                total_ms: 5,
            },
        ];
        for e in &events {
            let before = Milestones::of(&s);
            s.apply(e, 0.0);
            heard.extend(announcements(&before, &s, 0.0));
        }
        assert_eq!(
            heard,
            ["Thinking…", "Thought for 4 seconds", "Generating…", "Done"]
        );
    }

    fn block(status: BlockStatus, text: &str, duration_ms: Option<u64>) -> BlockState {
        BlockState {
            status,
            text: text.into(),
            duration_ms,
            started_at: 0.0,
            ..Default::default()
        }
    }

    #[test]
    fn done_labels_follow_the_spec() {
        let words = "w ".repeat(234);
        assert_eq!(
            header(&block(BlockStatus::Done, &words, Some(4200)), 0.0),
            "Thought for 4.2s · 234 words"
        );
        assert_eq!(
            header(&block(BlockStatus::Done, &"w ".repeat(12), Some(400)), 0.0),
            "Thought · 12 words"
        );
        assert_eq!(
            header(&block(BlockStatus::Done, "", Some(3000)), 0.0),
            "Thought for 3.0s"
        );
        assert_eq!(
            header(&block(BlockStatus::Done, "one", Some(72_000)), 0.0),
            "Thought for 1m 12s · 1 word"
        );
    }

    #[test]
    fn a_block_cut_short_says_so() {
        let mut b = block(BlockStatus::Done, "w w", Some(12_000));
        b.cut_short = true;
        assert_eq!(header(&b, 0.0), "Thought for 12.0s (cut short) · 2 words");
        b.text.clear();
        assert_eq!(header(&b, 0.0), "Thought for 12.0s (cut short)");
    }

    #[test]
    fn streaming_label_counts_live_seconds() {
        assert_eq!(
            header(&block(BlockStatus::Streaming, "x", None), 12_400.0),
            "Thinking… (12s)"
        );
    }

    #[test]
    fn interrupted_label_says_so() {
        let b = BlockState {
            ended_at: Some(3000.0),
            ..block(BlockStatus::Interrupted, "a b", None)
        };
        assert_eq!(
            header(&b, 99_000.0),
            "Thinking stopped after 3.0s · 2 words"
        );
    }

    #[test]
    fn peek_is_the_last_non_empty_line() {
        assert_eq!(
            last_line("first\nso the second term must be…\n\n"),
            "so the second term must be…"
        );
        assert_eq!(last_line(""), "");
    }

    #[test]
    fn announcements_use_whole_seconds() {
        assert_eq!(
            announcement(&block(BlockStatus::Done, "", Some(4200)), 0.0),
            "Thought for 4 seconds"
        );
        assert_eq!(
            announcement(&block(BlockStatus::Done, "", Some(200)), 0.0),
            "Thought for less than a second"
        );
    }
}
