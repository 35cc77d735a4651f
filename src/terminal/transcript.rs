//! The transcript the shell holds, and its lines laid out once. Markdown parsing and wrapping
//! are the costly part of a frame; a finished item's lines depend only on the item, the mode
//! and the width, so [`Layout`] keeps them and lays out again only the live tail (a running
//! turn, whose clock and live line move with time). The key is sound by construction: every
//! mutable access to an item through [`Transcript`] gives it a new version.

use std::collections::HashMap;

use super::live::LiveLayout;
use super::markdown::StyledLine;
use super::view::{self, Item, Mode, Turn};

/// The items shown, each with a version that changes whenever it may have changed.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<(u64, Item)>,
    next: u64,
}

impl Transcript {
    fn version(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    pub fn items(&self) -> impl DoubleEndedIterator<Item = &Item> + ExactSizeIterator {
        self.entries.iter().map(|(_, item)| item)
    }

    pub fn last(&self) -> Option<&Item> {
        self.entries.last().map(|(_, item)| item)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn push(&mut self, item: Item) {
        let version = self.version();
        self.entries.push((version, item));
    }

    pub fn pop(&mut self) -> Option<Item> {
        self.entries.pop().map(|(_, item)| item)
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Shows `items` in place of everything (a conversation opened).
    pub fn replace(&mut self, items: Vec<Item>) {
        self.clear();
        for item in items {
            self.push(item);
        }
    }

    /// The last item, to change it.
    pub fn last_mut(&mut self) -> Option<&mut Item> {
        let version = self.version();
        let (v, item) = self.entries.last_mut()?;
        *v = version;
        Some(item)
    }

    /// The files of the newest reader's message, to change them.
    pub fn question_files_mut(&mut self) -> Option<&mut Vec<crate::domain::attachment::FileRef>> {
        let version = self.version();
        self.entries
            .iter_mut()
            .rev()
            .find_map(|(v, item)| match item {
                Item::User(_, files) => {
                    *v = version;
                    Some(files)
                }
                _ => None,
            })
    }

    /// The newest assistant turn, to change it.
    pub fn turn_mut(&mut self) -> Option<&mut Turn> {
        let version = self.version();
        self.entries
            .iter_mut()
            .rev()
            .find_map(|(v, item)| match item {
                Item::Assistant(turn) => {
                    *v = version;
                    Some(&mut **turn)
                }
                _ => None,
            })
    }
}

/// How many items a [`Layout`] laid out, and how many it reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Finished items laid out (first seen, or changed, or at a new width or mode).
    pub laid: usize,
    /// Finished items whose lines were reused.
    pub reused: usize,
    /// Live items laid out (every time: they move with the clock).
    pub live: usize,
}

/// The lines of finished items, by version, width and mode.
#[derive(Debug, Default)]
pub struct Layout {
    kept: HashMap<u64, (usize, Mode, Vec<StyledLine>)>,
    /// The running turn's finished parts, kept from frame to frame.
    live: LiveLayout,
    /// What the layouts so far did.
    pub counts: Counts,
}

/// The transcript's lines, as slices of the kept ones and of the live tail's.
pub struct Lines<'a> {
    parts: Vec<Part<'a>>,
    len: usize,
}

enum Part<'a> {
    Blank,
    Kept(&'a [StyledLine]),
    Live(Vec<StyledLine>),
}

impl Part<'_> {
    fn lines(&self) -> &[StyledLine] {
        const BLANK: &[StyledLine] = &[StyledLine { pieces: Vec::new() }];
        match self {
            Part::Blank => BLANK,
            Part::Kept(lines) => lines,
            Part::Live(lines) => lines,
        }
    }
}

impl Lines<'_> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The lines from `first`, `count` of them at most.
    pub fn window(&self, first: usize, count: usize) -> impl Iterator<Item = &StyledLine> {
        self.parts
            .iter()
            .flat_map(Part::lines)
            .skip(first)
            .take(count)
    }
}

impl Layout {
    /// The transcript as [`view::lines`] draws it, `cols` wide at client time `now` (ms), laying
    /// out only what is live or not kept yet.
    pub fn lines<'a>(
        &'a mut self,
        transcript: &Transcript,
        mode: Mode,
        now: f64,
        cols: usize,
    ) -> Lines<'a> {
        self.kept
            .retain(|version, _| transcript.entries.iter().any(|(v, _)| v == version));
        let mut live = HashMap::new();
        for (version, item) in &transcript.entries {
            if view::is_live(item) {
                self.counts.live += 1;
                let lines = view::item_lines_kept(item, mode, now, cols, &mut self.live);
                live.insert(*version, lines);
                continue;
            }
            match self.kept.get(version) {
                Some((c, m, _)) if *c == cols && *m == mode => self.counts.reused += 1,
                _ => {
                    self.counts.laid += 1;
                    let lines = view::item_lines(item, mode, now, cols);
                    self.kept.insert(*version, (cols, mode, lines));
                }
            }
        }
        if live.is_empty() {
            self.live.clear();
        }
        let mut parts = Vec::new();
        let mut len = 0;
        for (version, _) in &transcript.entries {
            let part = match live.remove(version) {
                Some(lines) => Part::Live(lines),
                None => match self.kept.get(version) {
                    Some((_, _, lines)) => Part::Kept(lines),
                    None => continue,
                },
            };
            if part.lines().is_empty() {
                continue;
            }
            if len > 0 {
                parts.push(Part::Blank);
                len += 1;
            }
            len += part.lines().len();
            parts.push(part);
        }
        Lines { parts, len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::turn_state::TurnState;
    use crate::domain::TurnEvent;

    fn turn(answer: &str, done: bool) -> Item {
        let mut state = TurnState::started(0.0);
        state.apply(
            &TurnEvent::Delta {
                text: answer.into(),
            },
            1.0,
        );
        if done {
            state.apply(
                &TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 0,
                    total_ms: 2,
                },
                2.0,
            );
        }
        Item::Assistant(Box::new(Turn { state, bytes: 0 }))
    }

    fn texts(lines: &Lines) -> Vec<String> {
        lines.window(0, usize::MAX).map(StyledLine::text).collect()
    }

    fn transcript(items: Vec<Item>) -> Transcript {
        let mut t = Transcript::default();
        t.replace(items);
        t
    }

    fn chat() -> Transcript {
        transcript(vec![
            Item::Notice("“a chat”".into()),
            Item::User("**first** question".into(), Vec::new()),
            turn(
                "# An answer\n\nwith *markdown* that wraps over the width",
                true,
            ),
            Item::User("second".into(), Vec::new()),
            turn("streaming so far", false),
        ])
    }

    fn counts(laid: usize, reused: usize, live: usize) -> Counts {
        Counts { laid, reused, live }
    }

    #[test]
    fn finished_items_are_laid_out_once_and_only_the_live_tail_each_frame() {
        let t = chat();
        let mut layout = Layout::default();
        let items: Vec<Item> = t.items().cloned().collect();
        for (tick, now) in [1_000.0, 1_250.0, 1_500.0, 1_750.0].into_iter().enumerate() {
            let shown = texts(&layout.lines(&t, Mode::Overview, now, 30));
            let whole: Vec<String> = view::lines(&items, Mode::Overview, now, 30)
                .iter()
                .map(StyledLine::text)
                .collect();
            assert_eq!(shown, whole, "the same lines as laying out everything");
            assert_eq!(layout.counts, counts(4, 4 * tick, tick + 1));
        }
    }

    #[test]
    fn a_tick_with_nothing_running_lays_out_nothing() {
        let mut t = chat();
        let live = t.pop();
        assert!(live.as_ref().is_some_and(view::is_live));
        let mut layout = Layout::default();
        layout.lines(&t, Mode::Overview, 0.0, 40);
        let after_first = layout.counts;
        layout.lines(&t, Mode::Overview, 60_000.0, 40);
        assert_eq!(layout.counts.laid, after_first.laid);
        assert_eq!(layout.counts.live, 0);
    }

    #[test]
    fn a_changed_item_width_or_mode_is_laid_out_again() {
        let mut t = chat();
        let mut layout = Layout::default();
        layout.lines(&t, Mode::Overview, 0.0, 40);
        assert_eq!(layout.counts.laid, 4);
        layout.lines(&t, Mode::Overview, 0.0, 41);
        assert_eq!(layout.counts.laid, 8, "a new width");
        layout.lines(&t, Mode::Detail, 0.0, 41);
        assert_eq!(layout.counts.laid, 12, "a new mode");
        t.pop();
        t.push(turn("done now", true));
        if let Some(turn) = t.turn_mut() {
            turn.bytes += 1;
        }
        let shown = texts(&layout.lines(&t, Mode::Detail, 0.0, 41));
        assert_eq!(
            layout.counts.laid, 13,
            "only the changed item is laid out again"
        );
        assert_eq!(shown.last().map(String::as_str), Some("done now"));
    }
}
