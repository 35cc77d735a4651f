//! The running turn laid out as it grows. A 150 KB turn streams in thousands of pieces; laying
//! its whole answer out again for each frame made `ponder chat` spend 36× the CPU of `ponder ask`
//! and fall seconds behind the stream. Here the finished part of each growing text keeps its
//! lines, and a frame lays out only what follows it: for the answer, the finished top-level
//! markdown blocks ([`crate::markdown::finished_len`]); for reasoning shown whole, its complete
//! lines. The lines are the same as laying out the whole text (tests check it at every byte).

use std::collections::HashMap;

use super::markdown::{self, StyledLine};
use super::text;

/// The lines kept for the running turn's growing texts, at one width.
#[derive(Debug, Default)]
pub struct LiveLayout {
    answer: Grown,
    /// Reasoning shown whole, by block.
    thinking: HashMap<usize, Rows>,
}

/// One growing text: its finished part (as read) and that part's lines, laid out `cols` wide.
#[derive(Debug, Default)]
struct Grown {
    cols: usize,
    done: String,
    lines: Vec<StyledLine>,
    /// The text defines a link reference: it is laid out whole on every frame.
    whole: bool,
}

impl Grown {
    /// Starts over unless `read` extends the finished part at the same width.
    fn keep_if_extended(&mut self, read: &str, cols: usize) {
        if self.cols != cols || !read.starts_with(&self.done) {
            *self = Grown {
                cols,
                ..Grown::default()
            };
        }
    }

    /// Appends `lines`, the next part's, after a separating empty line when both have lines.
    fn append(&mut self, lines: Vec<StyledLine>) {
        if !self.lines.is_empty() && !lines.is_empty() {
            self.lines.push(StyledLine { pieces: Vec::new() });
        }
        self.lines.extend(lines);
    }
}

impl LiveLayout {
    /// Forgets everything kept (the running turn ended or another began).
    pub fn clear(&mut self) {
        *self = LiveLayout::default();
    }

    /// The answer's lines, as [`markdown::render`] gives them, `cols` wide.
    pub fn answer(&mut self, answer: &str, cols: usize, out: &mut Vec<StyledLine>) {
        let read = markdown::read(answer);
        let grown = &mut self.answer;
        grown.keep_if_extended(&read, cols);
        if !grown.whole {
            let tail = &read[grown.done.len()..];
            match crate::markdown::finished_len(tail) {
                None => grown.whole = true,
                Some(0) => {}
                Some(cut) => {
                    let part = &tail[..cut];
                    grown.append(markdown::render_read(part, cols));
                    grown.done.push_str(part);
                }
            }
        }
        if grown.whole {
            out.extend(markdown::render_read(&read, cols));
            return;
        }
        let tail = markdown::render_read(&read[grown.done.len()..], cols);
        out.extend(grown.lines.iter().cloned());
        if !grown.lines.is_empty() && !tail.is_empty() {
            out.push(StyledLine { pieces: Vec::new() });
        }
        out.extend(tail);
    }

    /// Block `index`'s reasoning as rows `cols` wide, as `text::wrap` of the whole of it gives
    /// them: the rows of its complete lines are kept, the last line is wrapped each frame.
    pub fn reasoning_rows(&mut self, index: usize, reasoning: &str, cols: usize) -> Vec<String> {
        let clean = text::sanitize(reasoning);
        let kept = self.thinking.entry(index).or_default();
        if kept.cols != cols || !clean.starts_with(&kept.done) {
            *kept = Rows {
                cols,
                ..Rows::default()
            };
        }
        let tail = &clean[kept.done.len()..];
        if let Some(end) = tail.rfind('\n') {
            let part = &tail[..=end];
            kept.rows.extend(text::wrap(part, cols));
            kept.done.push_str(part);
        }
        let mut rows = kept.rows.clone();
        rows.extend(text::wrap(&clean[kept.done.len()..], cols));
        rows
    }
}

/// A growing reasoning text's complete lines (`done`) and their rows, `cols` wide.
#[derive(Debug, Default)]
struct Rows {
    cols: usize,
    done: String,
    rows: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: &[&str] = &[
        "# Title\n\nA paragraph that wraps over the width of the terminal, with *emphasis* and `code`.\n\n- one\n- two\n\n  still two\n- three\n\n```rust\nfn main() {}\n\n// a blank line inside\n```\n\nAfter the code.\n",
        "Setext\n===\n\n> a quote\nlazy line\n\n1. first\n2. second\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nText after the table $x^2$ and\n\n$$\n\\frac{a}{b}\n$$\n\nend",
        "A [link][x] before its definition.\n\nMore text.\n\n[x]: https://example.com\n\nAnd after.\n",
        "Para one\n\n    indented code\n\n    still code\n\nPara two\n***\nPara three\n\n~~~\nunclosed fence\n\nnever closed",
        "Thinking with \u{1b}[31mcolour\u{1b}[0m\nand a tab\there\n\n\nmany blank lines\n\n- a\n\n\n- b\n",
        "A note[^1] and <b>html</b>.\n\n<div>\nblock html\n</div>\n\n[^1]: the note\n\n> quote\n> > nested\n> ```\n> code in a quote\n> ```\n\n10. ten\n11. eleven\n\n    continued\n\nLast $$x$$ words",
    ];

    fn texts(lines: &[StyledLine]) -> Vec<String> {
        lines.iter().map(StyledLine::text).collect()
    }

    #[test]
    fn the_answer_grown_byte_by_byte_has_the_lines_of_the_whole_text() {
        for text in TEXTS {
            for cols in [20, 57] {
                let mut live = LiveLayout::default();
                for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                    let mut out = Vec::new();
                    live.answer(&text[..end], cols, &mut out);
                    assert_eq!(
                        texts(&out),
                        texts(&markdown::render(&text[..end], cols)),
                        "{:?} at {end}, {cols} wide",
                        &text[..end]
                    );
                }
            }
        }
    }

    #[test]
    fn finished_blocks_are_laid_out_once() {
        let text = TEXTS[0];
        let mut live = LiveLayout::default();
        let mut out = Vec::new();
        live.answer(text, 40, &mut out);
        let kept = live.answer.done.len();
        assert!(kept > text.len() / 2, "{kept} of {}", text.len());
        let mut out = Vec::new();
        live.answer(&format!("{text}\nmore"), 40, &mut out);
        assert!(live.answer.done.len() >= kept);
    }

    #[test]
    fn a_text_that_is_not_an_extension_or_a_new_width_starts_over() {
        let mut live = LiveLayout::default();
        let mut out = Vec::new();
        live.answer(TEXTS[0], 40, &mut out);
        for (text, cols) in [(TEXTS[1], 40), (TEXTS[1], 30)] {
            let mut out = Vec::new();
            live.answer(text, cols, &mut out);
            assert_eq!(texts(&out), texts(&markdown::render(text, cols)));
        }
    }

    #[test]
    fn reasoning_grown_byte_by_byte_has_the_rows_of_the_whole_text() {
        for text in TEXTS {
            let mut live = LiveLayout::default();
            for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                let rows = live.reasoning_rows(0, &text[..end], 23);
                assert_eq!(
                    rows,
                    text::wrap(&text::sanitize(&text[..end]), 23),
                    "{:?}",
                    &text[..end]
                );
            }
        }
    }
}
