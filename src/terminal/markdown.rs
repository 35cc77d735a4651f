//! Answers as styled terminal lines: markdown laid out for a fixed number of columns.
//!
//! The output is plain data (text plus a [`Tone`] per piece), so the chat view maps tones to its
//! own styles and this module stays testable without a terminal. Model output is hostile: the
//! whole input is sanitized before parsing and every text the parser hands back is sanitized
//! again, because character references (`&#x1b;`) decode to control characters only after
//! parsing. Nothing is ever interpreted as HTML or as a terminal command.

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Tag, TagEnd};

use super::text;

/// What a piece of text is, for the view to pick a style: the renderer decides structure,
/// the view decides looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Strong,
    Emphasis,
    Code,
    CodeBlock,
    Heading,
    Link,
    Quote,
    Marker,
    Rule,
}

/// A run of text in one tone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub text: String,
    pub tone: Tone,
}

/// One terminal row: pieces in order, at most the `cols` it was rendered for, with neighbouring
/// pieces of the same tone merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StyledLine {
    pub pieces: Vec<Piece>,
}

impl StyledLine {
    /// The row's text without tones, for searching, copying and tests.
    pub fn text(&self) -> String {
        self.pieces.iter().map(|p| p.text.as_str()).collect()
    }
}

/// Renders `markdown` as lines at most `cols` columns wide.
///
/// Paragraphs are word-wrapped by display width, keeping each word's tone, and separated by one
/// empty line; code blocks keep their lines verbatim (indented two columns, broken only when
/// longer than the row); links show their URL, since the terminal can't follow them; quotes and
/// lists are drawn with prefixes. `cols == 0` has room for nothing and gives no lines.
pub fn render(markdown: &str, cols: usize) -> Vec<StyledLine> {
    render_read(&read(markdown), cols)
}

/// `markdown` as [`render`] reads it: its control characters removed, its LaTeX delimiters read
/// as math. A growing text is read once, then laid out in parts (`super::live`).
pub fn read(markdown: &str) -> String {
    crate::markdown::dollar_delimiters(&text::sanitize(markdown)).into_owned()
}

/// Renders a text [`read`] already read, as [`render`] does.
pub fn render_read(read: &str, cols: usize) -> Vec<StyledLine> {
    if cols == 0 {
        return Vec::new();
    }
    let mut renderer = Renderer::new(cols);
    crate::markdown::parse_read(read, |event| renderer.event(event));
    renderer.finish()
}

fn piece(text: impl Into<String>, tone: Tone) -> Piece {
    Piece {
        text: text.into(),
        tone,
    }
}

enum Block {
    Quote,
    List {
        next: Option<u64>,
        items: usize,
        loose: bool,
    },
    Item {
        marker: String,
        shown: bool,
    },
}

struct Anchor {
    start: usize,
    url: String,
    image: bool,
    email: bool,
}

struct Renderer {
    cols: usize,
    lines: Vec<StyledLine>,
    blocks: Vec<Block>,
    inline: Vec<Piece>,
    tones: Vec<Tone>,
    anchors: Vec<Anchor>,
    heading: bool,
    code: Option<(Option<String>, String)>,
    cells: Vec<Vec<Piece>>,
    need_blank: bool,
}

impl Renderer {
    fn new(cols: usize) -> Self {
        Renderer {
            cols,
            lines: Vec::new(),
            blocks: Vec::new(),
            inline: Vec::new(),
            tones: Vec::new(),
            anchors: Vec::new(),
            heading: false,
            code: None,
            cells: Vec::new(),
            need_blank: false,
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => match &mut self.code {
                Some((_, code)) => code.push_str(&t),
                None => {
                    let tone = self.tone();
                    self.push_text(&text::sanitize(&t).replace('\n', " "), tone);
                }
            },
            Event::Code(t) => self.push_text(&text::sanitize(&t), Tone::Code),
            Event::Html(t) | Event::InlineHtml(t) => {
                let tone = if self.heading {
                    Tone::Heading
                } else {
                    Tone::Plain
                };
                self.push_text(&text::sanitize(&t), tone);
            }
            Event::InlineMath(t) => self.push_text(&text::sanitize(&t), Tone::Code),
            // A display formula's own line breaks around it are not rows of their own.
            Event::DisplayMath(t) => self.push_text(&text::sanitize(t.trim()), Tone::Code),
            Event::FootnoteReference(t) => {
                let tone = self.tone();
                self.push_text(&format!("[{}]", text::sanitize(&t)), tone);
            }
            Event::SoftBreak => self.push_text(" ", Tone::Plain),
            Event::HardBreak => self.push_text("\n", Tone::Plain),
            Event::Rule => {
                self.flush_inline();
                let avail = self.avail();
                self.emit(vec![piece("─".repeat(avail), Tone::Rule)]);
                self.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                self.push_text(if done { "☑ " } else { "☐ " }, Tone::Marker)
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {
                self.flush_inline();
                if matches!(self.blocks.last(), Some(Block::Item { .. })) {
                    let list = self.blocks.len().checked_sub(2);
                    if let Some(Block::List { loose, .. }) =
                        list.and_then(|i| self.blocks.get_mut(i))
                    {
                        *loose = true;
                    }
                }
            }
            Tag::Heading { .. } => {
                self.flush_inline();
                self.heading = true;
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.materialize_blank();
                self.blocks.push(Block::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => text::sanitize(&info)
                        .split_whitespace()
                        .next()
                        .map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush_inline();
                self.blocks.push(Block::List {
                    next: start,
                    items: 0,
                    loose: false,
                });
            }
            Tag::Item => {
                self.flush_inline();
                let mut marker = String::from("• ");
                if let Some(Block::List { next, items, loose }) = self.blocks.last_mut() {
                    if let Some(n) = next {
                        marker = format!("{n}. ");
                        *n = n.saturating_add(1);
                    }
                    if *items > 0 && !*loose {
                        self.need_blank = false;
                    }
                    *items += 1;
                }
                self.materialize_blank();
                self.blocks.push(Block::Item {
                    marker,
                    shown: false,
                });
            }
            Tag::Table(_) | Tag::TableHead | Tag::TableRow => {
                self.flush_inline();
                self.cells.clear();
            }
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.tones.push(Tone::Emphasis),
            Tag::Strong => self.tones.push(Tone::Strong),
            Tag::Strikethrough | Tag::Superscript | Tag::Subscript => {
                let tone = self.tone();
                self.tones.push(tone);
            }
            Tag::Link {
                link_type,
                dest_url,
                ..
            } => self.anchors.push(Anchor {
                start: self.inline.len(),
                url: text::sanitize(&dest_url),
                image: false,
                email: link_type == LinkType::Email,
            }),
            Tag::Image { dest_url, .. } => self.anchors.push(Anchor {
                start: self.inline.len(),
                url: text::sanitize(&dest_url),
                image: true,
                email: false,
            }),
            Tag::HtmlBlock
            | Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush_inline(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush_inline();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.heading = false;
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.blocks.pop();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.emit_code(lang, &code);
                }
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.blocks.pop();
                self.need_blank = true;
            }
            TagEnd::Item => {
                self.flush_inline();
                if matches!(self.blocks.last(), Some(Block::Item { shown: false, .. })) {
                    self.emit(Vec::new());
                }
                self.blocks.pop();
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                self.cells.push(cell);
            }
            TagEnd::TableHead => self.emit_table_row(true),
            TagEnd::TableRow => self.emit_table_row(false),
            TagEnd::Table => {
                self.cells.clear();
                self.need_blank = true;
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.tones.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                if let Some(anchor) = self.anchors.pop() {
                    self.close_anchor(anchor);
                }
            }
        }
    }

    fn tone(&self) -> Tone {
        if self.heading {
            Tone::Heading
        } else {
            self.tones.last().copied().unwrap_or(Tone::Plain)
        }
    }

    fn push_text(&mut self, text: &str, tone: Tone) {
        if !text.is_empty() {
            self.inline.push(piece(text, tone));
        }
    }

    fn close_anchor(&mut self, anchor: Anchor) {
        let start = anchor.start.min(self.inline.len());
        let label: String = self.inline[start..]
            .iter()
            .map(|p| p.text.as_str())
            .collect();
        let label = label.trim();
        if anchor.image {
            let alt = self.inline.split_off(start);
            if label.is_empty() {
                self.inline.push(piece("[image]", Tone::Marker));
            } else {
                self.inline.push(piece("[image: ", Tone::Marker));
                self.inline.extend(alt);
                self.inline.push(piece("]", Tone::Marker));
            }
            if !anchor.url.is_empty() {
                self.inline.push(piece(" ", Tone::Plain));
                self.inline
                    .push(piece(format!("<{}>", anchor.url), Tone::Link));
            }
            return;
        }
        if anchor.url.is_empty() {
            return;
        }
        let same = label == anchor.url
            || anchor.url.strip_prefix("mailto:") == Some(label)
            || (anchor.email && !label.is_empty());
        if same {
            let shown = label.to_string();
            self.inline.truncate(start);
            self.inline.push(piece(shown, Tone::Link));
        } else if label.is_empty() {
            self.inline
                .push(piece(format!("<{}>", anchor.url), Tone::Link));
        } else {
            self.inline.push(piece(" ", Tone::Plain));
            self.inline
                .push(piece(format!("<{}>", anchor.url), Tone::Link));
        }
    }

    /// The prefix segments of the open quotes and list items, outermost dropped first while
    /// they would take more than half the row, so deep nesting on a narrow screen still leaves
    /// room for the text.
    fn prefix(&self, blank: bool) -> Vec<Piece> {
        let mut segments: Vec<Piece> = self
            .blocks
            .iter()
            .filter_map(|block| match block {
                Block::Quote => Some(piece("│ ", Tone::Quote)),
                Block::List { .. } => None,
                Block::Item { marker, shown } if *shown || blank => {
                    Some(piece(" ".repeat(text::width(marker)), Tone::Plain))
                }
                Block::Item { marker, .. } => Some(piece(marker.clone(), Tone::Marker)),
            })
            .collect();
        let mut total: usize = segments.iter().map(|p| text::width(&p.text)).sum();
        let mut drop = 0;
        while total > self.cols / 2 && drop < segments.len() {
            total -= text::width(&segments[drop].text);
            drop += 1;
        }
        segments.drain(..drop);
        segments
    }

    fn avail(&self) -> usize {
        let used: usize = self
            .prefix(false)
            .iter()
            .map(|p| text::width(&p.text))
            .sum();
        self.cols.saturating_sub(used).max(1)
    }

    fn materialize_blank(&mut self) {
        if self.need_blank && !self.lines.is_empty() {
            let prefix = self.prefix(true);
            self.push_line(prefix, true);
        }
        self.need_blank = false;
    }

    fn emit(&mut self, content: Vec<Piece>) {
        self.materialize_blank();
        let mut pieces = self.prefix(false);
        let blank = content.iter().all(|p| p.text.is_empty());
        pieces.extend(content);
        for block in &mut self.blocks {
            if let Block::Item { shown, .. } = block {
                *shown = true;
            }
        }
        self.push_line(pieces, blank);
    }

    fn push_line(&mut self, pieces: Vec<Piece>, trim: bool) {
        let mut line = StyledLine::default();
        for p in pieces {
            if p.text.is_empty() {
                continue;
            }
            match line.pieces.last_mut() {
                Some(last) if last.tone == p.tone => last.text.push_str(&p.text),
                _ => line.pieces.push(p),
            }
        }
        if trim {
            while let Some(last) = line.pieces.last_mut() {
                let kept = last.text.trim_end().len();
                last.text.truncate(kept);
                if last.text.is_empty() {
                    line.pieces.pop();
                } else {
                    break;
                }
            }
        }
        self.lines.push(clip(line, self.cols));
    }

    fn emit_wrapped(&mut self, pieces: &[Piece]) {
        let runs: Vec<(Tone, &str)> = pieces.iter().map(|p| (p.tone, p.text.as_str())).collect();
        let rows = text::wrap_tagged(&runs, self.avail());
        for row in rows {
            self.emit(row.into_iter().map(|(tone, t)| piece(t, tone)).collect());
        }
    }

    fn flush_inline(&mut self) {
        let pieces = std::mem::take(&mut self.inline);
        if pieces.iter().all(|p| p.text.trim().is_empty()) {
            return;
        }
        self.emit_wrapped(&pieces);
    }

    fn emit_code(&mut self, lang: Option<String>, code: &str) {
        let avail = self.avail();
        if let Some(lang) = lang {
            self.emit(vec![piece(text::fit_start(&lang, avail), Tone::Marker)]);
        }
        let indent = " ".repeat(2.min(avail - 1));
        let body = code.strip_suffix('\n').unwrap_or(code);
        if body.is_empty() && code.is_empty() {
            return;
        }
        for line in body.split('\n') {
            let line = text::sanitize(line);
            for row in text::hard_wrap(&line, avail - indent.len()) {
                if row.is_empty() {
                    self.emit(Vec::new());
                } else {
                    self.emit(vec![piece(format!("{indent}{row}"), Tone::CodeBlock)]);
                }
            }
        }
    }

    fn emit_table_row(&mut self, head: bool) {
        let cells = std::mem::take(&mut self.cells);
        self.inline.clear();
        let mut row = Vec::new();
        for (i, cell) in cells.into_iter().enumerate() {
            if i > 0 {
                row.push(piece(" │ ", Tone::Marker));
            }
            row.extend(cell.into_iter().map(|p| match p.tone {
                Tone::Plain if head => piece(p.text, Tone::Strong),
                _ => p,
            }));
        }
        let row_width: usize = row.iter().map(|p| text::width(&p.text)).sum();
        self.emit_wrapped(&row);
        if head {
            let avail = self.avail();
            self.emit(vec![piece("─".repeat(row_width.min(avail)), Tone::Rule)]);
        }
    }

    fn finish(mut self) -> Vec<StyledLine> {
        self.flush_inline();
        if let Some((lang, code)) = self.code.take() {
            self.emit_code(lang, &code);
        }
        let blank = |line: &StyledLine| line.text().trim().is_empty();
        while self.lines.last().is_some_and(blank) {
            self.lines.pop();
        }
        let leading = self.lines.iter().take_while(|l| blank(l)).count();
        self.lines.drain(..leading);
        self.lines
    }
}

/// Cuts a line that would overflow `cols`, ending it in `…`. The layout never builds one; this
/// is the guarantee that a mistake there still can't spill past the edge of the terminal.
fn clip(line: StyledLine, cols: usize) -> StyledLine {
    let total: usize = line.pieces.iter().map(|p| text::width(&p.text)).sum();
    if total <= cols {
        return line;
    }
    let mut budget = cols.saturating_sub(1);
    let mut pieces = Vec::new();
    for p in line.pieces {
        let w = text::width(&p.text);
        if w <= budget {
            budget -= w;
            pieces.push(p);
            continue;
        }
        let cut = text::fit_start(&p.text, budget + 1);
        pieces.push(piece(cut, p.tone));
        return StyledLine { pieces };
    }
    StyledLine { pieces }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[StyledLine]) -> Vec<String> {
        lines.iter().map(StyledLine::text).collect()
    }

    /// The page's markdown front end: math in every delimiter, footnote citations and task
    /// lists read as the page reads them.
    #[test]
    fn math_citations_and_task_lists_read_as_on_the_page() {
        let lines = check(
            "Energy $E = mc^2$ and \\(a+b\\), cited[^3].\n\n- [x] done\n- [ ] open",
            60,
        );
        assert_eq!(
            texts(&lines),
            [
                "Energy E = mc^2 and a+b, cited[3].",
                "",
                "• ☑ done",
                "• ☐ open"
            ]
        );
        let math: Vec<&Piece> = lines[0]
            .pieces
            .iter()
            .filter(|p| p.tone == Tone::Code)
            .collect();
        assert_eq!(
            math.len(),
            2,
            "each formula is shown as its source: {math:?}"
        );
    }

    /// Renders and checks what must hold for every input: no line wider than `cols`, no control
    /// or bidi character anywhere, no empty piece, no leading or trailing empty line.
    fn check(markdown: &str, cols: usize) -> Vec<StyledLine> {
        let lines = render(markdown, cols);
        for line in &lines {
            let t = line.text();
            assert!(
                text::width(&t) <= cols,
                "{cols} cols, line {t:?} from {markdown:?}"
            );
            assert!(
                !t.chars().any(|c| c.is_control()
                    || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')),
                "{t:?} from {markdown:?}"
            );
            assert!(line.pieces.iter().all(|p| !p.text.is_empty()), "{line:?}");
        }
        if let (Some(first), Some(last)) = (lines.first(), lines.last()) {
            assert!(!first.text().trim().is_empty(), "{markdown:?}");
            assert!(!last.text().trim().is_empty(), "{markdown:?}");
        }
        lines
    }

    /// No input nests the terminal renderer or its text helpers: the page renderer's deep
    /// corpus (100,000 levels) renders within the width on a thread with a 256 KiB stack, where
    /// recursion per level would overflow and fail.
    #[test]
    fn deep_markdown_renders_on_a_small_stack() {
        let render_all = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                for (name, markdown) in crate::markdown::deep_markdown() {
                    assert!(!check(&markdown, 40).is_empty(), "{name}");
                    assert!(!text::wrap(&markdown, 40).is_empty(), "{name}");
                    assert!(!text::live_line(&markdown, 40).is_empty(), "{name}");
                }
            })
            .unwrap();
        render_all.join().unwrap();
    }

    fn tone_of(lines: &[StyledLine], needle: &str) -> Tone {
        lines
            .iter()
            .flat_map(|l| &l.pieces)
            .find(|p| p.text.contains(needle))
            .map(|p| p.tone)
            .unwrap_or_else(|| panic!("{needle:?} not in {lines:?}"))
    }

    #[test]
    fn paragraphs_wrap_and_are_separated_by_one_empty_line() {
        let lines = check("one two three four five\n\nsix seven", 10);
        assert_eq!(
            texts(&lines),
            ["one two", "three four", "five", "", "six seven"]
        );
        assert_eq!(render("", 40), Vec::new());
        assert_eq!(render("\n\n\n", 40), Vec::new());
        assert_eq!(render("text", 0), Vec::new());
    }

    #[test]
    fn soft_and_hard_breaks() {
        assert_eq!(texts(&check("one\ntwo", 40)), ["one two"]);
        assert_eq!(texts(&check("one  \ntwo", 40)), ["one", "two"]);
        assert_eq!(texts(&check("one\\\ntwo", 40)), ["one", "two"]);
    }

    #[test]
    fn headings_are_one_heading_line() {
        let lines = check("# Title\n\nBody text\n\n### Sub *part*", 40);
        assert_eq!(texts(&lines), ["Title", "", "Body text", "", "Sub part"]);
        assert_eq!(lines[0].pieces, [piece("Title", Tone::Heading)]);
        assert_eq!(lines[4].pieces, [piece("Sub part", Tone::Heading)]);
        let lines = check("## A rather long heading that wraps", 12);
        assert_eq!(texts(&lines), ["A rather", "long heading", "that wraps"]);
        assert!(lines
            .iter()
            .flat_map(|l| &l.pieces)
            .all(|p| p.tone == Tone::Heading));
        let lines = check("Setext\n======", 40);
        assert_eq!(lines[0].pieces, [piece("Setext", Tone::Heading)]);
    }

    #[test]
    fn emphasis_and_code_have_tones() {
        let lines = check("plain **bold** *it* `code` ~~gone~~", 80);
        assert_eq!(
            lines[0].pieces,
            [
                piece("plain ", Tone::Plain),
                piece("bold", Tone::Strong),
                piece(" ", Tone::Plain),
                piece("it", Tone::Emphasis),
                piece(" ", Tone::Plain),
                piece("code", Tone::Code),
                piece(" gone", Tone::Plain),
            ]
        );
        assert_eq!(
            tone_of(&check("**bold *both***", 40), "both"),
            Tone::Emphasis
        );
    }

    #[test]
    fn a_bold_word_stays_strong_on_the_next_line() {
        let lines = check("aaaa bbbb **strong** tail", 10);
        assert_eq!(texts(&lines), ["aaaa bbbb", "strong", "tail"]);
        assert_eq!(lines[1].pieces, [piece("strong", Tone::Strong)]);
        let lines = check("xxxxxx **bold**, yes", 9);
        assert_eq!(
            lines[1].pieces,
            [piece("bold", Tone::Strong), piece(", yes", Tone::Plain)]
        );
    }

    #[test]
    fn code_blocks_keep_their_lines() {
        let md =
            "Before\n\n```rust\nfn main() {\n    let x = 1;\n\n        deep();\n}\n```\n\nAfter";
        let lines = check(md, 40);
        assert_eq!(
            texts(&lines),
            [
                "Before",
                "",
                "rust",
                "  fn main() {",
                "      let x = 1;",
                "",
                "          deep();",
                "  }",
                "",
                "After"
            ]
        );
        assert_eq!(lines[2].pieces, [piece("rust", Tone::Marker)]);
        assert_eq!(
            lines[4].pieces,
            [piece("      let x = 1;", Tone::CodeBlock)]
        );
    }

    #[test]
    fn code_blocks_are_hard_wrapped_not_reflowed() {
        let lines = check("```\nlet alpha = beta + gamma;\n```", 12);
        assert_eq!(texts(&lines), ["  let alpha ", "  = beta + g", "  amma;"]);
        let lines = check("    indented code\n    \tand a tab", 40);
        assert_eq!(texts(&lines), ["  indented code", "      and a tab"]);
        assert!(lines
            .iter()
            .flat_map(|l| &l.pieces)
            .all(|p| p.tone == Tone::CodeBlock));
    }

    #[test]
    fn unclosed_code_block_still_renders() {
        let lines = check("```py\nprint(1)", 40);
        assert_eq!(texts(&lines), ["py", "  print(1)"]);
    }

    #[test]
    fn links_show_text_and_url() {
        let lines = check("See [the docs](https://example.com/docs) now.", 80);
        assert_eq!(
            texts(&lines),
            ["See the docs <https://example.com/docs> now."]
        );
        assert_eq!(tone_of(&lines, "<https"), Tone::Link);
        assert_eq!(tone_of(&lines, "the docs"), Tone::Plain);
        let lines = check("Go to <https://example.com> or https://example.com", 80);
        assert_eq!(
            texts(&lines),
            ["Go to https://example.com or https://example.com"]
        );
        assert_eq!(tone_of(&lines, "https"), Tone::Link);
        let lines = check("[https://a.b](https://a.b) <me@example.com>", 80);
        assert_eq!(texts(&lines), ["https://a.b me@example.com"]);
        assert_eq!(texts(&check("[**bold** link](u)", 80)), ["bold link <u>"]);
        assert_eq!(texts(&check("[](https://x.y)", 80)), ["<https://x.y>"]);
    }

    #[test]
    fn long_links_wrap_inside_the_width() {
        let lines = check(
            "Read [this](https://example.com/a/very/long/path/that/does/not/fit) please",
            20,
        );
        assert!(lines.len() > 2);
        let joined: String = texts(&lines).concat();
        assert!(joined.contains("https://example.com"), "{joined}");
    }

    #[test]
    fn images_are_text() {
        let lines = check("![a cat](https://img.example/cat.png)", 80);
        assert_eq!(
            texts(&lines),
            ["[image: a cat] <https://img.example/cat.png>"]
        );
        assert_eq!(tone_of(&lines, "[image: "), Tone::Marker);
        assert_eq!(texts(&check("![](x.png)", 80)), ["[image] <x.png>"]);
    }

    #[test]
    fn block_quotes_have_a_bar() {
        let lines = check("> quoted words here\n>\n> second paragraph", 12);
        assert_eq!(
            texts(&lines),
            ["│ quoted", "│ words here", "│", "│ second", "│ paragraph"]
        );
        assert_eq!(lines[0].pieces[0], piece("│ ", Tone::Quote));
        let lines = check("> outer\n>\n> > inner\n\nafter", 40);
        assert_eq!(texts(&lines), ["│ outer", "│", "│ │ inner", "", "after"]);
        let lines = check("before\n\n> quote", 40);
        assert_eq!(texts(&lines), ["before", "", "│ quote"]);
    }

    #[test]
    fn lists_have_markers() {
        let lines = check("- one\n- two\n- three", 40);
        assert_eq!(texts(&lines), ["• one", "• two", "• three"]);
        assert_eq!(lines[0].pieces[0], piece("• ", Tone::Marker));
        let lines = check("3. three\n4. four", 40);
        assert_eq!(texts(&lines), ["3. three", "4. four"]);
        let lines = check("1. one\n\n2. two", 40);
        assert_eq!(texts(&lines), ["1. one", "", "2. two"]);
        let lines = check("Intro:\n\n- a\n- b\n\nOutro", 40);
        assert_eq!(texts(&lines), ["Intro:", "", "• a", "• b", "", "Outro"]);
        assert_eq!(texts(&check("-\n- b", 40)), ["•", "• b"]);
    }

    #[test]
    fn nested_lists_indent_and_wrap_aligned() {
        let md =
            "- top level item that wraps\n  - nested item that also wraps\n    - deepest\n- back";
        let lines = check(md, 16);
        assert_eq!(
            texts(&lines),
            [
                "• top level item",
                "  that wraps",
                "  • nested item",
                "    that also",
                "    wraps",
                "    • deepest",
                "• back",
            ]
        );
        let lines = check("1. first\n   - sub\n2. second", 40);
        assert_eq!(texts(&lines), ["1. first", "   • sub", "2. second"]);
        let lines = check("- item\n\n  second paragraph", 40);
        assert_eq!(texts(&lines), ["• item", "", "  second paragraph"]);
        let lines = check("- a\n  ```\n  code\n  ```", 40);
        assert_eq!(texts(&lines), ["• a", "    code"]);
    }

    #[test]
    fn quote_inside_list_and_list_inside_quote() {
        assert_eq!(texts(&check("> - a\n> - b", 40)), ["│ • a", "│ • b"]);
        assert_eq!(texts(&check("- > q", 40)), ["• │ q"]);
    }

    #[test]
    fn rule_fills_the_width() {
        let lines = check("above\n\n---\n\nbelow", 10);
        assert_eq!(texts(&lines), ["above", "", &"─".repeat(10), "", "below"]);
        assert_eq!(lines[2].pieces[0].tone, Tone::Rule);
        let lines = check("> ***", 10);
        assert_eq!(texts(&lines), [format!("│ {}", "─".repeat(8))]);
    }

    #[test]
    fn tables_join_cells() {
        let lines = check("| a | b |\n|---|---|\n| 1 | **2** |\n| x | |", 40);
        assert_eq!(texts(&lines), ["a │ b", "─────", "1 │ 2", "x │"]);
        assert_eq!(tone_of(&lines, "a"), Tone::Strong);
        assert_eq!(tone_of(&lines, "1"), Tone::Plain);
        assert_eq!(tone_of(&lines, "2"), Tone::Strong);
        let lines = check(
            "| column one | column two |\n|---|---|\n| a long cell value | b |",
            12,
        );
        assert!(lines.len() > 3);
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let lines = check(
            "<div onclick=\"x\">\nhi\n</div>\n\nText <b>bold</b> <script>x</script>",
            80,
        );
        assert_eq!(
            texts(&lines),
            [
                "<div onclick=\"x\">",
                "hi",
                "</div>",
                "",
                "Text <b>bold</b> <script>x</script>"
            ]
        );
        assert!(lines
            .iter()
            .flat_map(|l| &l.pieces)
            .all(|p| p.tone == Tone::Plain));
    }

    #[test]
    fn escape_sequences_never_reach_the_output() {
        let md = "Answer \x1b]0;pwned\x07 text \x1b[2J more \x1b]52;c;QUJD\x07 \u{9b}31m red\n\n\
                  ```\n\x1b[31mcode\x1b[0m\n```\n\n# \x1b[1mHead\n\n[x](https://e\x1b[2J.com)";
        let lines = check(md, 40);
        let all: String = texts(&lines).join("\n");
        assert!(!all.contains('\x1b'), "{all:?}");
        assert!(!all.contains("pwned"), "{all:?}");
        assert!(!all.contains("[2J"), "{all:?}");
        assert!(all.contains("Answer"), "{all:?}");
        assert!(all.contains("  code"), "{all:?}");
        assert!(all.contains("<https://e.com>"), "{all:?}");
    }

    #[test]
    fn character_references_cannot_smuggle_controls() {
        let lines = check("a &#x1b;[2J &#27;]0;t&#7; &#x202e;rev &#x9b;1m &#9;tab", 40);
        let all: String = texts(&lines).concat();
        assert!(
            !all.contains('\x1b') && !all.contains('\u{202e}'),
            "{all:?}"
        );
        assert!(!all.contains('\u{9b}') && !all.contains('\t'), "{all:?}");
        let lines = check("[a](&#x1b;[2J) ![b](&#x1b;]0;x)", 40);
        assert!(!texts(&lines).concat().contains('\x1b'));
    }

    #[test]
    fn cjk_paragraphs_wrap_by_width() {
        let lines = check("日本語のテキストはスペースなしで折り返されます。", 10);
        assert!(lines.len() >= 5);
        assert!(lines.iter().all(|l| text::width(&l.text()) <= 10));
        assert_eq!(lines[0].text(), "日本語のテ");
        let lines = check("中文 **粗体字** 和 English", 7);
        assert_eq!(texts(&lines), ["中文", "粗体字", "和", "English"]);
        assert_eq!(tone_of(&lines, "粗体字"), Tone::Strong);
    }

    #[test]
    fn a_200_char_word_is_broken() {
        let word = "a".repeat(200);
        let lines = check(&format!("start {word} end"), 30);
        assert_eq!(lines.len(), 8);
        assert_eq!(lines[0].text(), "start");
        assert!(lines[1..7].iter().all(|l| l.text() == "a".repeat(30)));
        assert_eq!(lines[7].text(), format!("{} end", "a".repeat(20)));
        let lines = check(&format!("- {word}"), 30);
        assert!(lines[0].text().starts_with("• aaa"));
        assert!(lines[1..].iter().all(|l| l.text().starts_with("  a")));
    }

    #[test]
    fn deep_nesting_on_a_narrow_screen_still_fits() {
        let md = "> > > > > > > > > > deep quote text here";
        let lines = check(md, 10);
        assert!(lines.iter().any(|l| l.text().contains("deep")));
        let md = "- a\n  - b\n    - c\n      - d\n        - e\n          - f wraps a bit";
        for cols in 1..=20 {
            check(md, cols);
        }
        let lines = check("123456789. nine digits", 8);
        assert!(texts(&lines).concat().contains("nine"));
    }

    #[test]
    fn hostile_corpus_fits_every_width() {
        let corpus = [
            "# Heading with `code` and **bold** and a [link](https://example.com/x/y/z)",
            "Para with 日本語のテキスト and 👨\u{200d}👩\u{200d}👧 emoji 🇯🇵 e\u{301}",
            "> quote\n> > nested quote with a long line of words that wraps\n>\n> - list in quote",
            "1. one\n2. two\n   1. nested\n      more\n\n   para\n3. three",
            "- [ ] task\n- [x] done",
            "```\n\tcode with tab and a very long line that must be hard wrapped somewhere\n```",
            "| a | b | c |\n|:-|:-:|-:|\n| 1 | 2 | 3 |\n| long cell text | 日本語 | `x` |",
            "***\n---\n___",
            "<details><summary>s</summary>\n\nhidden\n\n</details>",
            "Line with hard  \nbreak and soft\nbreak",
            "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]52;c;SGk=\x07\u{9b}31m\u{202e}evil\u{202c}",
            "![img](https://e.x/i.png \"title\") [ref][r]\n\n[r]: https://ref.example",
            "Footnote[^1]\n\n[^1]: note",
            "* * *\n\n+ plus\n+ list\n\n10. ten\n11. eleven",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "&#x1b;[2J&#27;]0;x&#7;&#x202e;",
            "   \n\n   \n",
            "```\n\n\n```",
            "> ```\n> quoted code\n> ```",
            "- ```\n  code in list\n  ```\n- item",
            "Setext\n---",
            "~~strike~~ ***both*** _em_ __strong__",
        ];
        for md in corpus {
            for cols in 1..=40 {
                check(md, cols);
            }
            check(md, 80);
            check(md, 200);
        }
    }
}
