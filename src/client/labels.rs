//! The words a thinking block shows, derived from its state. Pure, so every label is tested.

use super::turn_state::{BlockState, BlockStatus, TurnPhase, TurnState};
use crate::domain::attachment::readable_bytes;
use crate::domain::file_ref::{Kind, SendAs};
use crate::domain::{Effort, Failure, ThinkingKind, ToolStatus, Usage};
use crate::i18n::{fill, Locale};

/// Whitespace-separated words, as the reader would count them.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// "4.2s" below a minute, "1m 12s" above, in the locale's numbers and units. `None` under one
/// second: such a time is noise.
pub fn format_duration(ms: u64, l: Locale) -> Option<String> {
    let c = l.catalogue();
    if ms < 1000 {
        return None;
    }
    if ms < 60_000 {
        return Some(fill(
            c.seconds_short,
            &[("n", &l.one_decimal(ms as f64 / 1000.0))],
        ));
    }
    let secs = ms / 1000;
    Some(fill(
        c.minutes_seconds_short,
        &[("m", &l.integer(secs / 60)), ("s", &l.integer(secs % 60))],
    ))
}

/// Whole seconds for the live counter: "(12s)".
pub fn live_seconds(ms: u64, l: Locale) -> String {
    fill(l.catalogue().seconds_short, &[("n", &l.integer(ms / 1000))])
}

/// The header of a block: "Thinking… (12s)" while streaming, "Thought for 4.2s · 234 words"
/// when done, "Thinking stopped after 3.0s · 12 words" when interrupted.
pub fn header(block: &BlockState, now: f64, l: Locale) -> String {
    let c = l.catalogue();
    let ms = block.elapsed_ms(now);
    match block.status {
        BlockStatus::Streaming => fill(c.thinking_live, &[("time", &live_seconds(ms, l))]),
        BlockStatus::Done => with_words(c.thought, c.thought_for, block, ms, l),
        BlockStatus::Interrupted => {
            with_words(c.thinking_stopped, c.thinking_stopped_after, block, ms, l)
        }
    }
}

/// The same as [`header`] for a block restored from storage (no live clock).
pub fn restored_header(block: &BlockState, l: Locale) -> String {
    header(block, block.started_at, l)
}

fn with_words(bare: &str, timed: &str, block: &BlockState, ms: u64, l: Locale) -> String {
    let c = l.catalogue();
    let mut label = match format_duration(ms, l) {
        Some(t) => fill(timed, &[("time", &t)]),
        None => bare.to_string(),
    };
    if block.cut_short && block.status == BlockStatus::Done {
        label = fill(c.cut_short, &[("label", &label)]);
    }
    let words = match &block.remote {
        Some(remote) if block.text.is_empty() => remote.words as usize,
        _ => word_count(&block.text),
    };
    if words > 0 {
        label.push_str(c.separator);
        label.push_str(&l.count(&c.words, words as u64));
    }
    label
}

/// The browser tab's title: the chat's title first, so tabs tell chats apart. Ponder's name is
/// the same in every language.
/// A chat's title as its header shows it: a title Ponder made in the reader's words, an
/// untitled chat's header empty.
pub fn shown_title(c: &crate::i18n::Catalogue, stored: &str) -> String {
    if stored.trim().is_empty() {
        String::new()
    } else {
        crate::i18n::title(c, stored)
    }
}

pub fn tab_title(chat_title: &str) -> String {
    let title = chat_title.trim();
    if title.is_empty() {
        "Ponder".into()
    } else {
        format!("{title} · Ponder")
    }
}

/// The small note on where the reasoning came from, when it is not the raw scratchpad.
pub fn origin_note(kind: ThinkingKind, l: Locale) -> Option<&'static str> {
    match kind {
        ThinkingKind::Raw => None,
        ThinkingKind::Summary => Some(l.catalogue().origin_summary),
        ThinkingKind::Redacted => Some(l.catalogue().origin_redacted),
        ThinkingKind::Hidden => Some(l.catalogue().origin_hidden),
    }
}

/// The polite announcement once a block is over: "Thought for 4 seconds".
pub fn announcement(block: &BlockState, now: f64, l: Locale) -> String {
    let c = l.catalogue();
    let secs = block.elapsed_ms(now) / 1000;
    match (block.status, secs) {
        (BlockStatus::Interrupted, _) => c.thinking_stopped.into(),
        (_, 0) => c.announce_under_a_second.into(),
        (_, s) => l.count(&c.announce_thought_for, s),
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
pub fn announcements(before: &Milestones, after: &TurnState, now: f64, l: Locale) -> Vec<String> {
    let c = l.catalogue();
    let mut out = Vec::new();
    if after.blocks.len() > before.blocks.len() && after.phase == TurnPhase::Thinking {
        out.push(c.thinking.to_string());
    }
    for b in &after.blocks {
        let was = before
            .blocks
            .iter()
            .find(|(index, _)| *index == b.index)
            .map(|(_, status)| *status);
        if b.status == BlockStatus::Done && was != Some(BlockStatus::Done) {
            out.push(announcement(b, now, l));
        }
    }
    for (i, t) in after.tools.iter().enumerate() {
        let was = before.tools.get(i).copied();
        let name = tool_label(&t.name, l);
        let said = match t.status {
            ToolStatus::Running if was.is_none() => c.announce_tool_running,
            ToolStatus::Finished if was != Some(t.status) => c.announce_tool_done,
            ToolStatus::Failed if was != Some(t.status) => c.announce_tool_failed,
            _ => continue,
        };
        out.push(fill(said, &[("tool", &name)]));
    }
    if before.phase != after.phase {
        match after.phase {
            TurnPhase::Streaming => out.push(c.announce_generating.into()),
            TurnPhase::Done => out.push(c.announce_done.into()),
            TurnPhase::Error => {
                let message = after
                    .error
                    .as_ref()
                    .map(|e| failure_text(e, l))
                    .unwrap_or_default();
                out.push(fill(c.announce_error, &[("message", &message)]));
            }
            TurnPhase::Stopped => out.push(c.announce_stopped.into()),
            TurnPhase::Thinking => {}
        }
    }
    out
}

/// A tool's name as a reader reads it: the common server tools by what they do, any other by
/// its own name.
pub fn tool_label(name: &str, l: Locale) -> String {
    let c = l.catalogue();
    match name {
        "web_search" | "search" | "web_search_preview" => c.tool_web_search.into(),
        "google_search" => c.tool_google_search.into(),
        "code_execution" | "code_interpreter" | "bash_code_execution" | "python" => {
            c.tool_code_execution.into()
        }
        "web_fetch" | "visit_website" => c.tool_web_page.into(),
        "file_search" => c.tool_file_search.into(),
        other => other.to_string(),
    }
}

/// A tool step's state in words.
pub fn tool_status(status: ToolStatus, l: Locale) -> &'static str {
    let c = l.catalogue();
    match status {
        ToolStatus::Running => c.tool_running,
        ToolStatus::Finished => c.tool_done,
        ToolStatus::Failed => c.tool_failed,
    }
}

/// The note a finished turn without an answer shows ([`TurnState::fallback_code`]), in the
/// reader's language.
pub fn fallback_words(code: crate::domain::ErrorCode, l: Locale) -> &'static str {
    let c = l.catalogue();
    match code {
        crate::domain::ErrorCode::ToolCallsUnsupported => c.error_tool_calls,
        crate::domain::ErrorCode::EmptyAnswer => c.error_empty_answer,
        _ => c.error_no_answer_after_thinking,
    }
}

/// What a failure says in the reader's language, from its code and parameters; a failure this
/// build has no words for shows its English message.
pub fn failure_text(f: &Failure, l: Locale) -> String {
    crate::i18n::errors::text(f, l).unwrap_or_else(|| f.message.clone())
}

/// What a file's chip says after its name: its size, its kind once known (a PDF's pages when
/// they were counted), and how it went to the model once the server has said
/// (`2 KiB · Image · sent as image`, `1.2 MiB · PDF, 12 pages · sent as text`).
pub fn file_about(
    size: u64,
    kind: Option<Kind>,
    pages: Option<u32>,
    sent: Option<SendAs>,
    l: Locale,
) -> String {
    let t = l.catalogue();
    let mut about = readable_bytes(size);
    if let Some(kind) = kind {
        about.push_str(" · ");
        about.push_str(match kind {
            Kind::Image => t.kind_image,
            Kind::Pdf => t.kind_pdf,
            Kind::Text => t.kind_text,
        });
    }
    if let (Some(Kind::Pdf), Some(n)) = (kind, pages) {
        about.push_str(", ");
        about.push_str(&l.count(&t.pdf_pages, u64::from(n)));
    }
    if let Some(how) = sent {
        about.push_str(" · ");
        about.push_str(match how {
            SendAs::Image => t.sent_as_image,
            SendAs::Document => t.sent_as_document,
            SendAs::Text => t.sent_as_text,
            SendAs::Pages => t.sent_as_pages,
        });
    }
    about
}

/// The answer's usage line, as far as the upstream counted: `1,290 tokens in (1,032 from files)
/// · 40 out (12 thinking) · USD 0.0012`, after `≈` when a count was estimated from characters;
/// `None` when it counted nothing.
pub fn usage_line(u: &Usage, l: Locale) -> Option<String> {
    let c = l.catalogue();
    let count = |n: u64, with: Option<u64>, said: &str, of: &str| {
        let mut s = fill(said, &[("n", &l.integer(n))]);
        if let Some(part) = with.filter(|p| *p > 0) {
            s.push_str(&format!(" ({})", fill(of, &[("n", &l.integer(part))])));
        }
        s
    };
    let parts: Vec<String> = [
        u.input_tokens
            .map(|n| count(n, u.file_tokens, c.tokens_in, c.from_files)),
        u.output_tokens
            .map(|n| count(n, u.reasoning_tokens, c.tokens_out, c.of_thinking)),
    ]
    .into_iter()
    .flatten()
    .chain(u.cost.as_ref().map(|c| {
        format!(
            "{} {}",
            c.currency,
            crate::domain::usage::micros_text(c.micros)
        )
    }))
    .collect();
    let mut line = parts.join(" · ");
    if let Some(when) = &u.limit_reached {
        line.push_str(" · ");
        line.push_str(&fill(c.limit_reached, &[("when", when)]));
    }
    (!parts.is_empty()).then(|| {
        if u.estimated {
            format!("≈ {line}")
        } else {
            line
        }
    })
}

/// An effort level in the reader's language.
pub fn effort_word(effort: Effort, t: &'static crate::i18n::Catalogue) -> &'static str {
    match effort {
        Effort::Minimal => t.effort_minimal,
        Effort::Low => t.effort_low,
        Effort::Medium => t.effort_medium,
        Effort::High => t.effort_high,
        Effort::Xhigh => t.effort_xhigh,
        Effort::Max => t.effort_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const EN: Locale = Locale::En;
    use crate::domain::{ThinkingKind, TurnEvent};

    #[test]
    fn tools_read_as_what_they_do() {
        assert_eq!(tool_label("web_search", EN), "Web search");
        assert_eq!(tool_label("bash_code_execution", EN), "Code execution");
        assert_eq!(
            tool_label("ask_question (deepwiki)", EN),
            "ask_question (deepwiki)"
        );
        assert_eq!(tool_status(crate::domain::ToolStatus::Failed, EN), "Failed");
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
            heard.extend(announcements(&before, &s, 0.0, EN));
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
            heard.extend(announcements(&before, &s, 0.0, EN));
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
            header(&block(BlockStatus::Done, &words, Some(4200)), 0.0, EN),
            "Thought for 4.2s · 234 words"
        );
        assert_eq!(
            header(
                &block(BlockStatus::Done, &"w ".repeat(12), Some(400)),
                0.0,
                EN
            ),
            "Thought · 12 words"
        );
        assert_eq!(
            header(&block(BlockStatus::Done, "", Some(3000)), 0.0, EN),
            "Thought for 3.0s"
        );
        assert_eq!(
            header(&block(BlockStatus::Done, "one", Some(72_000)), 0.0, EN),
            "Thought for 1m 12s · 1 word"
        );
    }

    #[test]
    fn a_block_cut_short_says_so() {
        let mut b = block(BlockStatus::Done, "w w", Some(12_000));
        b.cut_short = true;
        assert_eq!(
            header(&b, 0.0, EN),
            "Thought for 12.0s (cut short) · 2 words"
        );
        b.text.clear();
        assert_eq!(header(&b, 0.0, EN), "Thought for 12.0s (cut short)");
    }

    #[test]
    fn streaming_label_counts_live_seconds() {
        assert_eq!(
            header(&block(BlockStatus::Streaming, "x", None), 12_400.0, EN),
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
            header(&b, 99_000.0, EN),
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
            announcement(&block(BlockStatus::Done, "", Some(4200)), 0.0, EN),
            "Thought for 4 seconds"
        );
        assert_eq!(
            announcement(&block(BlockStatus::Done, "", Some(200)), 0.0, EN),
            "Thought for less than a second"
        );
    }

    #[test]
    fn labels_follow_each_languages_grammar_and_numbers() {
        let done = block(BlockStatus::Done, &"w ".repeat(234), Some(4200));
        let one = block(BlockStatus::Done, "w", Some(4200));
        let two = block(BlockStatus::Done, "w w", Some(72_000));
        assert_eq!(
            header(&done, 0.0, Locale::PtBr),
            "Pensou por 4,2 s · 234 palavras"
        );
        assert_eq!(
            header(&one, 0.0, Locale::PtBr),
            "Pensou por 4,2 s · 1 palavra"
        );
        assert_eq!(header(&done, 0.0, Locale::Ja), "思考時間：4.2秒 · 234語");
        assert_eq!(header(&two, 0.0, Locale::Ja), "思考時間：1分12秒 · 2語");
        assert_eq!(header(&done, 0.0, Locale::Ar), "فكّر لمدة 4.2 ث · 234 كلمة");
        assert_eq!(header(&one, 0.0, Locale::Ar), "فكّر لمدة 4.2 ث · كلمة واحدة");
        assert_eq!(header(&two, 0.0, Locale::Ar), "فكّر لمدة 1 د 12 ث · كلمتان");
        let live = block(BlockStatus::Streaming, "x", None);
        assert_eq!(header(&live, 12_400.0, Locale::PtBr), "Pensando… (12 s)");
        assert_eq!(header(&live, 12_400.0, Locale::Ja), "思考中…（12秒）");
        let mut cut = block(BlockStatus::Done, "a b c", Some(3000));
        cut.cut_short = true;
        assert_eq!(
            header(&cut, 0.0, Locale::PtBr),
            "Pensou por 3,0 s (encurtado) · 3 palavras"
        );
        assert_eq!(
            header(&cut, 0.0, Locale::Ar),
            "فكّر لمدة 3.0 ث (قُطع مبكرًا) · 3 كلمات"
        );
        let stopped = BlockState {
            ended_at: Some(3000.0),
            ..block(BlockStatus::Interrupted, "", None)
        };
        assert_eq!(header(&stopped, 0.0, Locale::Ja), "3.0秒で思考を中断");
        let quick = block(BlockStatus::Done, &"w ".repeat(12), Some(400));
        assert_eq!(header(&quick, 0.0, Locale::PtBr), "Pensou · 12 palavras");
    }

    #[test]
    fn announcements_are_in_the_readers_language() {
        let b = |ms| block(BlockStatus::Done, "", Some(ms));
        assert_eq!(
            announcement(&b(1000), 0.0, Locale::PtBr),
            "Pensou por 1 segundo"
        );
        assert_eq!(
            announcement(&b(4000), 0.0, Locale::PtBr),
            "Pensou por 4 segundos"
        );
        assert_eq!(announcement(&b(4000), 0.0, Locale::Ja), "4秒間思考しました");
        assert_eq!(announcement(&b(2000), 0.0, Locale::Ar), "فكّر لمدة ثانيتين");
        assert_eq!(announcement(&b(4000), 0.0, Locale::Ar), "فكّر لمدة 4 ثوانٍ");
        assert_eq!(
            announcement(&b(12_000), 0.0, Locale::Ar),
            "فكّر لمدة 12 ثانية"
        );
        assert_eq!(
            tool_label("web_search", Locale::Ja),
            Locale::Ja.catalogue().tool_web_search
        );
        assert_eq!(tool_label("my_tool", Locale::Ar), "my_tool");
    }

    #[test]
    fn a_file_chip_says_size_kind_and_how_it_went_in_the_readers_words() {
        assert_eq!(file_about(900, None, None, None, EN), "900 bytes");
        assert_eq!(
            file_about(2048, Some(Kind::Image), None, Some(SendAs::Image), EN),
            "2 KiB · Image · sent as image"
        );
        assert_eq!(
            file_about(3 << 20, Some(Kind::Pdf), Some(12), Some(SendAs::Text), EN),
            "3 MiB · PDF, 12 pages · sent as text"
        );
        let pt = Locale::PtBr;
        assert_eq!(
            file_about(
                3 << 20,
                Some(Kind::Pdf),
                Some(1),
                Some(SendAs::Document),
                pt
            ),
            "3 MiB · PDF, 1 página · enviado como documento"
        );
    }

    #[test]
    fn the_usage_line_says_what_the_files_and_the_thinking_took_where_counted() {
        let mut u = Usage {
            input_tokens: Some(1290),
            output_tokens: Some(40),
            reasoning_tokens: Some(12),
            file_tokens: Some(1032),
            ..Default::default()
        };
        assert_eq!(
            usage_line(&u, EN).as_deref(),
            Some("1,290 tokens in (1,032 from files) · 40 out (12 thinking)")
        );
        u.file_tokens = None;
        u.reasoning_tokens = Some(0);
        assert_eq!(
            usage_line(&u, EN).as_deref(),
            Some("1,290 tokens in · 40 out")
        );
        u.input_tokens = None;
        assert_eq!(usage_line(&u, EN).as_deref(), Some("40 out"));
        assert_eq!(usage_line(&Usage::default(), EN), None);
        let priced = Usage {
            output_tokens: Some(40),
            estimated: true,
            cost: Some(crate::domain::usage::Cost {
                micros: 1_200,
                currency: "USD".into(),
            }),
            ..Usage::default()
        };
        assert_eq!(
            usage_line(&priced, EN).as_deref(),
            Some("≈ 40 out · USD 0.0012")
        );
        let crossed = Usage {
            limit_reached: Some("2026-12-07T00:00:00Z".into()),
            ..priced
        };
        assert_eq!(
            usage_line(&crossed, EN).as_deref(),
            Some(
                "≈ 40 out · USD 0.0012 · usage limit reached: new turns from 2026-12-07T00:00:00Z"
            )
        );
        assert_eq!(
            usage_line(
                &Usage {
                    input_tokens: Some(5),
                    file_tokens: Some(3),
                    ..Usage::default()
                },
                Locale::Ja
            )
            .as_deref(),
            Some("入力 5 トークン (うちファイル 3)")
        );
    }
}
