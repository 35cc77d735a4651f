//! Streaming render: finished top-level blocks are rendered once, only the open tail again.
//!
//! # When a block is finished
//!
//! CommonMark decides block structure line by line: a line either continues the open blocks
//! or closes them, and a closed block never reopens. So once a *later* top-level block has
//! begun, every block before it is closed and its text is final. Two details make "has begun"
//! precise:
//!
//! - The line that begins the next block must be complete (end in a newline). An incomplete
//!   line can still change meaning: `Foo\n#` is a paragraph and an empty heading, `Foo\n#x`
//!   is one paragraph.
//! - The line *after* it must be complete too, because pulldown-cmark looks one line ahead:
//!   `| a |` starts a table only if a delimiter row follows, and `foo\n| a |\n|--` can still
//!   turn back into one paragraph when the next character is not `-`, `|` or `:`.
//!
//! Everything else that looks like a late change stays inside one top-level block, which is
//! the open tail until then: `Foo\n===` (a setext heading), `- a\n\n- b` (a list that became
//! loose), an unclosed code fence (it runs to the end of the text), a table growing rows,
//! lazy continuation lines of a block quote.
//!
//! # Link reference definitions
//!
//! They are global: `[x]` in an early block is a link if `[x]: url` appears anywhere, and the
//! first definition of a label wins. The definitions found in finished text are handed to the
//! tail's parse (through pulldown-cmark's broken-link callback), so later blocks resolve them
//! as a whole-text parse would. For each label a finished block used without a finished
//! definition, the renderer remembers what it resolved to (a definition further down, or
//! nothing); if a later parse resolves that label differently (a definition arrived, changed
//! while being typed, or vanished), or the tail redefines and uses a finished label, the
//! finished part is rebuilt from scratch ([`Update::Reset`]). Models rarely write reference
//! links, so this is rare; it keeps the output exact.
//!
//! With these rules, after every update `finished_html() + tail_html()` equals
//! [`super::render`] of the text so far (tests check this at every byte of tricky inputs).
//! [`IncrementalMarkdown::finish`] still makes one whole-text render when the text has
//! reference definitions: pulldown-cmark caps reference expansions by text size, a limit a
//! tail-only parse cannot reproduce.

use std::collections::HashMap;
use std::ops::Range;

use pulldown_cmark::{BrokenLink, CowStr, Event, LinkType, Parser, Tag};
use unicase::UniCase;

use super::{options, render_with, whatwg_url, writer, UrlParser};

/// Renders a growing markdown text incrementally.
///
/// Feed it the *whole* text so far on every change ([`update`](Self::update)); read
/// [`finished_html`](Self::finished_html) (only ever appended to, until a reset) and
/// [`tail_html`](Self::tail_html) (replaced on every update). When the stream ends, call
/// [`finish`](Self::finish). A text that is not an extension of the previous one (a reclassify
/// or a regenerate cleared it) simply starts over.
#[derive(Debug)]
pub struct IncrementalMarkdown {
    urls: UrlParser,
    text: String,
    /// Length of the finished text: the start of the line where the open tail begins.
    boundary: usize,
    finished_html: String,
    tail_html: String,
    /// Reference definitions in the finished text (label → URL, title), first one kept.
    definitions: HashMap<Label, Definition>,
    /// Labels finished blocks used that no finished definition settles, with the definition
    /// they were rendered with (`None`: not defined then).
    finished_uses: HashMap<Label, Option<Definition>>,
    has_definitions: bool,
    done: bool,
    stats: RenderStats,
}

/// What an [`IncrementalMarkdown::update`] or [`IncrementalMarkdown::finish`] changed, so a view
/// can patch the DOM instead of replacing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// The text is the same as last time: nothing changed.
    Unchanged,
    /// `finished_html()[from..]` was appended (it may be empty) and `tail_html()` replaced.
    Appended {
        /// Byte offset in `finished_html()` where the new finished blocks start.
        from: usize,
    },
    /// Everything was rebuilt: replace the finished HTML and the tail.
    Reset,
}

/// Counters that show how much work the renderer did (for tests and measurements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderStats {
    /// Top-level blocks rendered into the finished HTML. Each block is rendered into it
    /// exactly once, unless a reset throws the finished HTML away.
    pub blocks_finished: usize,
    /// Renders of the open tail (one per update that changed the text).
    pub tail_renders: usize,
    /// Bytes handed to the markdown parser over all updates.
    pub bytes_parsed: usize,
    /// Times the finished part was thrown away: a text that did not extend the previous
    /// one, or a late reference definition.
    pub resets: usize,
    /// Whole-text renders made by `finish` (only for texts with reference definitions).
    pub full_renders: usize,
}

impl Default for IncrementalMarkdown {
    fn default() -> Self {
        Self::new()
    }
}

impl IncrementalMarkdown {
    /// An empty renderer that judges links with the `url` crate ([`whatwg_url`]).
    pub fn new() -> Self {
        Self::with_urls(whatwg_url)
    }

    /// An empty renderer that judges links with `urls` (the browser passes its own parser).
    pub fn with_urls(urls: UrlParser) -> Self {
        Self {
            urls,
            text: String::new(),
            boundary: 0,
            finished_html: String::new(),
            tail_html: String::new(),
            definitions: HashMap::new(),
            finished_uses: HashMap::new(),
            has_definitions: false,
            done: false,
            stats: RenderStats::default(),
        }
    }

    /// Takes the whole text so far and re-renders what the new part touched.
    pub fn update(&mut self, text: &str) -> Update {
        let converted = super::math::dollar_delimiters(text);
        self.update_converted(&converted)
    }

    fn update_converted(&mut self, text: &str) -> Update {
        if self.text == text && (self.stats.tail_renders > 0 || self.done) {
            return Update::Unchanged;
        }
        let mut reset = false;
        if self.done || !text.starts_with(&self.text[..self.boundary]) {
            self.clear();
            reset = true;
        }
        self.text.truncate(self.boundary);
        self.text.push_str(&text[self.boundary..]);
        let from = self.finished_html.len();
        if self.render_tail() || reset {
            Update::Reset
        } else {
            Update::Appended { from }
        }
    }

    /// Takes the final text and makes the HTML exact: afterwards `finished_html()` equals
    /// [`render`](super::render) of `text` and `tail_html()` is empty.
    ///
    /// Costs one tail render, or one whole-text render if the text has reference definitions.
    pub fn finish(&mut self, text: &str) -> Update {
        let converted = super::math::dollar_delimiters(text);
        if self.done && self.text == *converted {
            return Update::Unchanged;
        }
        let update = self.update_converted(&converted);
        self.done = true;
        if self.has_definitions {
            self.finished_html = render_with(text, self.urls);
            self.tail_html.clear();
            self.stats.full_renders += 1;
            return Update::Reset;
        }
        let tail_from = self.finished_html.len();
        let tail = std::mem::take(&mut self.tail_html);
        self.finished_html.push_str(&tail);
        match update {
            Update::Reset => Update::Reset,
            Update::Appended { from } => Update::Appended { from },
            Update::Unchanged => Update::Appended { from: tail_from },
        }
    }

    /// HTML of the finished blocks: grows by appending between resets.
    pub fn finished_html(&self) -> &str {
        &self.finished_html
    }

    /// HTML of the open tail: replaced on every update.
    pub fn tail_html(&self) -> &str {
        &self.tail_html
    }

    /// The whole sanitized HTML so far.
    pub fn html(&self) -> String {
        let mut html = String::with_capacity(self.finished_html.len() + self.tail_html.len());
        html.push_str(&self.finished_html);
        html.push_str(&self.tail_html);
        html
    }

    /// Work counters since creation.
    pub fn stats(&self) -> RenderStats {
        self.stats
    }

    fn clear(&mut self) {
        let had_output = self.stats.tail_renders > 0 || self.done;
        self.boundary = 0;
        self.finished_html.clear();
        self.tail_html.clear();
        self.definitions.clear();
        self.finished_uses.clear();
        self.has_definitions = false;
        self.done = false;
        if had_output {
            self.stats.resets += 1;
        }
    }

    /// Parses the text after `boundary`, moves the blocks that are now finished into the
    /// finished HTML, and renders the rest as the tail. Returns whether it had to reset.
    fn render_tail(&mut self) -> bool {
        let mut reset = false;
        loop {
            let tail = &self.text[self.boundary..];
            let definitions = &self.definitions;
            let mut unresolved: Vec<(usize, Label)> = Vec::new();
            let callback = |link: BrokenLink<'_>| {
                let label = UniCase::new(link.reference.to_string());
                match definitions.get(&label) {
                    Some(def) => Some((CowStr::from(def.0.clone()), CowStr::from(def.1.clone()))),
                    None => {
                        unresolved.push((link.span.start, label));
                        None
                    }
                }
            };
            let parser = Parser::new_with_broken_link_callback(tail, options(), Some(callback))
                .into_offset_iter();
            let tail_definitions: HashMap<Label, (Definition, usize)> = parser
                .reference_definitions()
                .iter()
                .map(|(label, def)| {
                    let title = def.title.as_deref().unwrap_or("").to_string();
                    let definition = (def.dest.to_string(), title);
                    (
                        UniCase::new(label.to_string()),
                        (definition, def.span.start),
                    )
                })
                .collect();
            let mut events: Vec<(Event<'_>, Range<usize>)> = parser.collect();
            self.stats.bytes_parsed += tail.len();
            if self.resolves_differently(&events, &tail_definitions) {
                drop(events);
                self.clear();
                reset = true;
                continue;
            }
            self.stats.tail_renders += 1;
            self.has_definitions |= !tail_definitions.is_empty() || !self.definitions.is_empty();

            let blocks = top_level_blocks(&events);
            if let Some((index, cut)) = last_finished(tail, &blocks) {
                let tail_events = events.split_off(blocks[index].first_event);
                for (label, (definition, at)) in tail_definitions {
                    if at < cut {
                        self.definitions.entry(label).or_insert(definition);
                    }
                }
                for (at, label) in unresolved {
                    if at < cut {
                        self.finished_uses.insert(label, None);
                    }
                }
                for (event, _) in &events {
                    if let Some((label, definition)) = reference_use(event) {
                        if !self.definitions.contains_key(&label) {
                            self.finished_uses.insert(label, Some(definition));
                        }
                    }
                }
                writer::push_html(
                    &mut self.finished_html,
                    events.into_iter().map(|(event, _)| event),
                    self.urls,
                );
                self.stats.blocks_finished += index;
                self.boundary += cut;
                events = tail_events;
            }
            self.tail_html.clear();
            writer::push_html(
                &mut self.tail_html,
                events.into_iter().map(|(event, _)| event),
                self.urls,
            );
            return reset;
        }
    }

    /// Whether this parse resolves some reference differently from a whole-text parse: a
    /// finished block used a label whose (first) definition is in the tail and has since
    /// appeared, changed or gone; or the tail redefines a finished label and uses it, where
    /// the whole text would use the finished (first) definition.
    fn resolves_differently(
        &self,
        events: &[(Event<'_>, Range<usize>)],
        tail_definitions: &HashMap<Label, (Definition, usize)>,
    ) -> bool {
        let finished_use_changed = self.finished_uses.iter().any(|(label, seen)| {
            tail_definitions
                .get(label)
                .map(|(definition, _)| definition)
                != seen.as_ref()
        });
        let redefined_use = || {
            events.iter().any(|(event, _)| {
                reference_use(event).is_some_and(|(label, definition)| {
                    self.definitions
                        .get(&label)
                        .is_some_and(|first| *first != definition)
                })
            })
        };
        finished_use_changed || redefined_use()
    }
}

type Label = UniCase<String>;
/// A reference definition's URL and title.
type Definition = (String, String);

/// The label and resolution of a reference-style link or image (`[text][label]`, `[label][]`,
/// `[label]`).
fn reference_use(event: &Event<'_>) -> Option<(Label, Definition)> {
    let (Event::Start(Tag::Link {
        link_type,
        dest_url,
        title,
        id,
    })
    | Event::Start(Tag::Image {
        link_type,
        dest_url,
        title,
        id,
    })) = event
    else {
        return None;
    };
    let by_reference = matches!(
        link_type,
        LinkType::Reference
            | LinkType::ReferenceUnknown
            | LinkType::Collapsed
            | LinkType::CollapsedUnknown
            | LinkType::Shortcut
            | LinkType::ShortcutUnknown
    );
    by_reference.then(|| {
        let label = UniCase::new(id.to_string());
        (label, (dest_url.to_string(), title.to_string()))
    })
}

/// A top-level block of a parse: where its events and its text start and end.
struct Block {
    first_event: usize,
    text: Range<usize>,
}

fn top_level_blocks(events: &[(Event<'_>, Range<usize>)]) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut depth = 0usize;
    for (index, (event, range)) in events.iter().enumerate() {
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    blocks.push(Block {
                        first_event: index,
                        text: range.clone(),
                    });
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ if depth == 0 => blocks.push(Block {
                first_event: index,
                text: range.clone(),
            }),
            _ => {}
        }
    }
    blocks
}

/// Finds the last block that begins on a complete line followed by another complete line
/// (see the module docs), and returns its index and the start of its line: every block
/// before it is finished.
fn last_finished(tail: &str, blocks: &[Block]) -> Option<(usize, usize)> {
    (1..blocks.len()).rev().find_map(|index| {
        let cut = line_start(tail, blocks[index].text.start);
        let after_previous = blocks[index - 1].text.end <= cut;
        (after_previous && complete_lines(&tail[cut..]) >= 2).then_some((index, cut))
    })
}

/// How many bytes at the start of `text` are finished top-level blocks (see the module docs),
/// for a reader that lays out a growing text in parts: the blocks before that length are laid
/// out the same whatever follows. `None` when the text defines a link reference (which changes
/// blocks before it: such a text is laid out whole). `text` is read as [`super::parse_read`]
/// reads it (its math delimiters already read by [`super::dollar_delimiters`]).
pub fn finished_len(text: &str) -> Option<usize> {
    let parser = Parser::new_ext(text, options()).into_offset_iter();
    if parser.reference_definitions().iter().next().is_some() {
        return None;
    }
    let events: Vec<(Event<'_>, Range<usize>)> = parser.collect();
    let blocks = top_level_blocks(&events);
    Some(last_finished(text, &blocks).map_or(0, |(_, cut)| cut))
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1)
}

/// Counts the lines of `text` that end in `\n` (or `\r\n`), up to two. A lone `\r` ends a line
/// for CommonMark but not for every one of pulldown-cmark's scanners: a fence's info string runs
/// to the next `\n`, so "```a\rb" opens a code block until a backtick arrives before it (found
/// by the `markdown` fuzz target). A text whose lines end in `\r` alone is laid out whole.
fn complete_lines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').take(2).count()
}

#[cfg(test)]
mod tests {
    use super::super::render;
    use super::*;

    /// Applies updates the way the page does: append to the finished element, replace the tail.
    #[derive(Default)]
    struct Dom {
        done: String,
        tail: String,
    }

    impl Dom {
        fn apply(&mut self, md: &IncrementalMarkdown, update: Update) {
            match update {
                Update::Unchanged => return,
                Update::Appended { from } => self.done.push_str(&md.finished_html()[from..]),
                Update::Reset => self.done = md.finished_html().to_string(),
            }
            self.tail = md.tail_html().to_string();
        }
    }

    #[test]
    fn a_page_following_the_updates_ends_with_the_exact_render() {
        let text = "First paragraph.\n\n1. one\n2. two\n\nLast paragraph.\n";
        // Finished at once (a restored message).
        let mut fresh = IncrementalMarkdown::new();
        let update = fresh.finish(text);
        let mut dom2 = Dom::default();
        dom2.apply(&fresh, update);
        assert_eq!(dom2.done + &dom2.tail, render(text));
        // Streamed piece by piece, then finished.
        for step in [1, 3, 7] {
            let mut md = IncrementalMarkdown::new();
            let mut dom = Dom::default();
            let mut end = 0;
            while end < text.len() {
                end = (end + step).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                let update = md.update(&text[..end]);
                dom.apply(&md, update);
                assert_eq!(
                    format!("{}{}", dom.done, dom.tail),
                    render(&text[..end]),
                    "step {step} at {end}"
                );
            }
            let update = md.finish(text);
            dom.apply(&md, update);
            assert_eq!(dom.tail, "");
            assert_eq!(dom.done, render(text), "step {step}");
        }
    }

    #[test]
    fn line_endings_are_counted_once() {
        assert_eq!(complete_lines("a\r\nb\r\n"), 2);
        assert_eq!(
            complete_lines("a\rb"),
            0,
            "a lone \\r does not end every scanner's line"
        );
        assert_eq!(complete_lines("a\nb"), 1);
        assert_eq!(complete_lines("\n\n\n"), 2);
        assert_eq!(line_start("ab\ncd", 4), 3);
        assert_eq!(line_start("abcd", 2), 0);
    }
}
