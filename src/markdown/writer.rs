//! pulldown-cmark events to HTML, with every element and attribute chosen here.
//!
//! pulldown-cmark's own `push_html` writes raw HTML through, `<img src>` for images and
//! `style` for table alignment; this writer emits only what [`super::policy`] allows, so the
//! sanitizer is a second layer rather than the only one. It keeps no state across top-level
//! blocks (each block's output ends with a newline), which lets the incremental renderer write
//! blocks one at a time and still match a whole-document render byte for byte.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, LinkType, Tag, TagEnd, TextMergeStream};

use super::policy::{bare_url, safe_language, safe_url, UrlParser, LINK_ATTRIBUTES};

/// Appends the HTML for `events` to `out`.
/// Link addresses are judged with `urls` (see [`UrlParser`]).
pub(super) fn push_html<'a>(
    out: &mut String,
    events: impl IntoIterator<Item = Event<'a>>,
    urls: UrlParser,
) {
    let mut writer = Writer {
        out,
        urls,
        at_line_start: true,
        links: Vec::new(),
        image: None,
        html_block: None,
        in_code_block: false,
        table_alignments: Vec::new(),
        table_cell: 0,
        in_table_head: false,
    };
    // Text arrives in one piece per run (the parser splits it at `_`, `*`, `[`…), so a bare
    // address is seen whole.
    for event in TextMergeStream::new(events.into_iter()) {
        writer.event(event);
    }
}

struct Writer<'o> {
    out: &'o mut String,
    urls: UrlParser,
    at_line_start: bool,
    /// One entry per open markdown link: whether an `<a>` was written for it. Links inside a
    /// link (and links with a refused URL) keep their text but lose their anchor, so anchors
    /// never nest.
    links: Vec<bool>,
    image: Option<Image>,
    /// Raw HTML block text, collected to be shown as one paragraph of text.
    html_block: Option<String>,
    in_code_block: bool,
    table_alignments: Vec<Alignment>,
    table_cell: usize,
    in_table_head: bool,
}

/// An image being collected: its alt text is plain text, whatever markup it holds.
struct Image {
    url: String,
    title: String,
    alt: String,
    depth: usize,
}

impl Writer<'_> {
    fn event(&mut self, event: Event<'_>) {
        if let Some(image) = &mut self.image {
            match event {
                Event::Start(_) => image.depth += 1,
                Event::End(_) if image.depth > 0 => image.depth -= 1,
                Event::End(_) => self.end_image(),
                Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                    image.alt.push_str(&t)
                }
                Event::Html(t) | Event::InlineHtml(t) => image.alt.push_str(&t),
                Event::SoftBreak | Event::HardBreak | Event::Rule => image.alt.push(' '),
                Event::FootnoteReference(_) | Event::TaskListMarker(_) => {}
            }
            return;
        }
        if let Some(block) = &mut self.html_block {
            match event {
                Event::Html(t) | Event::InlineHtml(t) | Event::Text(t) => block.push_str(&t),
                Event::End(TagEnd::HtmlBlock) => self.end_html_block(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) if self.in_code_block => self.code(&text),
            Event::Text(text) if self.links.iter().any(|open| *open) => self.text(&text),
            Event::Text(text) => self.linked_text(&text),
            Event::Code(text) => {
                self.raw("<code>");
                self.code(&text);
                self.raw("</code>");
            }
            Event::InlineMath(text) => {
                self.raw("<code class=\"math-inline\">");
                self.text(&text);
                self.raw("</code>");
            }
            Event::DisplayMath(text) => {
                self.raw("<code class=\"math-display\">");
                self.text(&text);
                self.raw("</code>");
            }
            Event::Html(html) => self.text(&html),
            Event::InlineHtml(html) if is_line_break(&html) => self.raw("<br>\n"),
            Event::InlineHtml(html) => self.text(&html),
            Event::SoftBreak => self.raw("\n"),
            Event::HardBreak => self.raw("<br>\n"),
            Event::Rule => {
                self.block_start();
                self.raw("<hr>\n");
            }
            Event::FootnoteReference(name) if is_citation(&name) => {
                self.raw("<span class=\"cite\">");
                self.text(&format!("[{name}]"));
                self.raw("</span>");
            }
            Event::FootnoteReference(name) => {
                self.text("[^");
                self.text(&name);
                self.text("]");
            }
            Event::TaskListMarker(done) => self.text(if done { "☑ " } else { "☐ " }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.open_block("<p>"),
            Tag::Heading { level, .. } => {
                self.block_start();
                self.raw("<");
                self.raw(heading(level));
                self.raw(">");
            }
            Tag::BlockQuote(_) => self.open_block("<blockquote>\n"),
            Tag::CodeBlock(kind) => {
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => safe_language(info),
                    CodeBlockKind::Indented => None,
                };
                self.block_start();
                self.raw(
                    "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">",
                );
                self.text(lang.unwrap_or("text"));
                let (text, name) = super::policy::copy_labels();
                self.raw("</span><button class=\"copy-code\" type=\"button\" aria-label=\"");
                self.attr(name);
                self.raw("\">");
                self.text(text);
                self.raw("</button></div><pre><code");
                if let Some(lang) = lang {
                    self.raw(" class=\"language-");
                    self.attr(lang);
                    self.raw("\"");
                }
                self.raw(">");
                self.in_code_block = true;
            }
            Tag::HtmlBlock => self.html_block = Some(String::new()),
            Tag::List(Some(1)) => self.open_block("<ol>\n"),
            Tag::List(Some(start)) => {
                self.block_start();
                self.raw("<ol start=\"");
                self.raw(&start.to_string());
                self.raw("\">\n");
            }
            Tag::List(None) => self.open_block("<ul>\n"),
            Tag::Item => self.open_block("<li>"),
            Tag::Table(alignments) => {
                self.table_alignments = alignments;
                self.open_block("<table>");
            }
            Tag::TableHead => {
                self.in_table_head = true;
                self.table_cell = 0;
                self.raw("<thead><tr>");
            }
            Tag::TableRow => {
                self.table_cell = 0;
                self.raw("<tr>");
            }
            Tag::TableCell => {
                self.raw(if self.in_table_head { "<th" } else { "<td" });
                match self.table_alignments.get(self.table_cell) {
                    Some(Alignment::Left) => self.raw(" class=\"align-left\">"),
                    Some(Alignment::Center) => self.raw(" class=\"align-center\">"),
                    Some(Alignment::Right) => self.raw(" class=\"align-right\">"),
                    Some(Alignment::None) | None => self.raw(">"),
                }
            }
            Tag::Emphasis => self.raw("<em>"),
            Tag::Strong => self.raw("<strong>"),
            Tag::Strikethrough => self.raw("<del>"),
            Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            } => {
                let inside_link = self.links.iter().any(|open| *open);
                let url = if link_type == LinkType::Email {
                    safe_url(&format!("mailto:{dest_url}"), self.urls)
                } else {
                    safe_url(&dest_url, self.urls)
                };
                match url.filter(|_| !inside_link) {
                    Some(url) => {
                        self.raw("<a href=\"");
                        self.attr(&url);
                        self.raw("\"");
                        self.title(&title);
                        self.link_attributes();
                        self.raw(">");
                        self.links.push(true);
                    }
                    None => self.links.push(false),
                }
            }
            Tag::Image {
                dest_url, title, ..
            } => {
                self.image = Some(Image {
                    url: dest_url.to_string(),
                    title: title.to_string(),
                    alt: String::new(),
                    depth: 0,
                })
            }
            // A model's own footnote: its label as a line of text, its content as it is.
            Tag::FootnoteDefinition(label) => {
                self.open_block("<p>");
                self.text(&format!("[^{label}]:"));
                self.raw("</p>\n");
            }
            // Not enabled in the parser options; their content is kept as plain text.
            Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Superscript
            | Tag::Subscript
            | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.raw("</p>\n"),
            TagEnd::Heading(level) => {
                self.raw("</");
                self.raw(heading(level));
                self.raw(">\n");
            }
            TagEnd::BlockQuote(_) => self.close_block("</blockquote>\n"),
            TagEnd::CodeBlock => {
                self.in_code_block = false;
                self.raw("</code></pre></div>\n");
            }
            TagEnd::HtmlBlock => {}
            TagEnd::List(true) => self.close_block("</ol>\n"),
            TagEnd::List(false) => self.close_block("</ul>\n"),
            TagEnd::Item => self.raw("</li>\n"),
            TagEnd::Table => self.raw("</tbody></table>\n"),
            TagEnd::TableHead => {
                self.in_table_head = false;
                self.raw("</tr></thead><tbody>\n");
            }
            TagEnd::TableRow => self.raw("</tr>\n"),
            TagEnd::TableCell => {
                self.raw(if self.in_table_head { "</th>" } else { "</td>" });
                self.table_cell += 1;
            }
            TagEnd::Emphasis => self.raw("</em>"),
            TagEnd::Strong => self.raw("</strong>"),
            TagEnd::Strikethrough => self.raw("</del>"),
            TagEnd::Link => {
                if self.links.pop() == Some(true) {
                    self.raw("</a>");
                }
            }
            TagEnd::Image => {}
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::MetadataBlock(_) => {}
        }
    }

    /// An image is never loaded: it becomes a link to its URL (or plain text when the URL is
    /// refused or the image sits inside a link), so model output cannot make the browser
    /// fetch anything by itself.
    fn end_image(&mut self) {
        let Some(image) = self.image.take() else {
            return;
        };
        let alt = if image.alt.trim().is_empty() {
            "image"
        } else {
            image.alt.as_str()
        };
        let inside_link = self.links.iter().any(|open| *open);
        match safe_url(&image.url, self.urls).filter(|_| !inside_link) {
            Some(url) => {
                self.raw("<a class=\"md-image\" href=\"");
                self.attr(&url);
                self.raw("\"");
                self.title(&image.title);
                self.link_attributes();
                self.raw(">🖼 ");
                self.text(alt);
                self.raw("</a>");
            }
            None => {
                self.raw("<span class=\"md-image\">🖼 ");
                self.text(alt);
                self.raw("</span>");
            }
        }
    }

    /// Raw HTML from the model is shown as what it is: text.
    fn end_html_block(&mut self) {
        let Some(block) = self.html_block.take() else {
            return;
        };
        self.open_block("<p>");
        self.text(block.trim_end_matches('\n'));
        self.raw("</p>\n");
    }

    fn open_block(&mut self, tag: &str) {
        self.block_start();
        self.raw(tag);
    }

    fn close_block(&mut self, tag: &str) {
        self.block_start();
        self.raw(tag);
    }

    /// Block tags start on their own line (a tight list item's text has no `<p>` and no
    /// trailing newline).
    fn block_start(&mut self) {
        if !self.at_line_start {
            self.raw("\n");
        }
    }

    fn title(&mut self, title: &str) {
        if !title.is_empty() {
            self.raw(" title=\"");
            self.attr(title);
            self.raw("\"");
        }
    }

    fn link_attributes(&mut self) {
        for (name, value) in LINK_ATTRIBUTES {
            self.raw(" ");
            self.raw(name);
            self.raw("=\"");
            self.raw(value);
            self.raw("\"");
        }
    }

    fn raw(&mut self, s: &str) {
        if let Some(last) = s.chars().last() {
            self.out.push_str(s);
            self.at_line_start = last == '\n';
        }
    }

    /// Prose, with its bare `http(s)://` addresses made links (as readers expect from chat).
    fn linked_text(&mut self, s: &str) {
        let mut written = 0;
        let mut from = 0;
        while let Some((start, end)) = bare_url(s, from) {
            if let Some(url) = safe_url(&s[start..end], self.urls) {
                self.text(&s[written..start]);
                self.raw("<a href=\"");
                self.attr(&url);
                self.raw("\"");
                self.link_attributes();
                self.raw(">");
                self.text(&s[start..end]);
                self.raw("</a>");
                written = end;
            }
            from = end;
        }
        self.text(&s[written..]);
    }

    fn text(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        escape_text(self.out, s);
        self.at_line_start = s.ends_with('\n');
    }

    /// Code is text, except that bidirectional control characters are shown as `[U+202E]`:
    /// invisible, they can make displayed code differ from what Copy puts on the clipboard
    /// ("Trojan Source", CVE-2021-42574). In prose they stay, scoped to their paragraph.
    fn code(&mut self, s: &str) {
        let mut rest = s;
        while let Some(at) = rest.find(is_bidi_control) {
            let c = rest[at..].chars().next().unwrap_or_default();
            self.text(&rest[..at]);
            self.text(&format!("[U+{:04X}]", u32::from(c)));
            rest = &rest[at + c.len_utf8()..];
        }
        self.text(rest);
    }

    fn attr(&mut self, s: &str) {
        escape_attribute(self.out, s);
    }
}

fn heading(level: pulldown_cmark::HeadingLevel) -> &'static str {
    use pulldown_cmark::HeadingLevel::*;
    match level {
        H1 => "h1",
        H2 => "h2",
        H3 => "h3",
        H4 => "h4",
        H5 => "h5",
        H6 => "h6",
    }
}

/// `<br>`, `<br/>` and `<br />` (any case) inside a paragraph or table cell: the one inline
/// tag models write on purpose (line breaks in table cells), mapped to a fixed `<br>`.
fn is_line_break(html: &str) -> bool {
    let tag = html.as_bytes();
    let inner = match tag {
        [b'<', inner @ .., b'>'] => inner,
        _ => return false,
    };
    let inner = inner.strip_suffix(b"/").unwrap_or(inner).trim_ascii_end();
    inner.eq_ignore_ascii_case(b"br")
}

/// Embedding, override and isolate controls: the characters that reorder displayed text.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Escapes element content as the HTML serializer does (`&`, `<`, `>`, no-break space), so the
/// output is canonical: parsing and serializing it again gives the same bytes. Line ends become
/// `\n`, as the HTML parser makes them anyway, and NUL becomes U+FFFD, as CommonMark asks.
fn escape_text(out: &mut String, s: &str) {
    escape(out, s, false);
}

/// Escapes a double-quoted attribute value as the HTML serializer does (`&`, `"`, no-break
/// space).
fn escape_attribute(out: &mut String, s: &str) {
    escape(out, s, true);
}

fn escape(out: &mut String, s: &str, attribute: bool) {
    let mut last = 0;
    for (i, c) in s.char_indices() {
        let entity = match c {
            '&' => "&amp;",
            '\u{a0}' => "&nbsp;",
            '"' if attribute => "&quot;",
            '<' if !attribute => "&lt;",
            '>' if !attribute => "&gt;",
            '\r' if s[i + 1..].starts_with('\n') => "",
            '\r' => "\n",
            '\0' => "\u{fffd}",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(entity);
        last = i + c.len_utf8();
    }
    out.push_str(&s[last..]);
}

/// A footnote label that is a source's number (`[^3]`): a citation marker.
fn is_citation(label: &str) -> bool {
    (1..=4).contains(&label.len())
        && label.bytes().all(|b| b.is_ascii_digit())
        && !label.starts_with('0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_break_tags_are_recognized_exactly() {
        for yes in ["<br>", "<BR>", "<br/>", "<br />", "<Br  />"] {
            assert!(is_line_break(yes), "{yes}");
        }
        for no in [
            "<br onclick=x>",
            "<bra>",
            "<b>",
            "<br",
            "br>",
            "< br>",
            "<br x/>",
        ] {
            assert!(!is_line_break(no), "{no}");
        }
    }

    #[test]
    fn bidi_controls_in_code_are_made_visible() {
        let mut out = String::new();
        push_html(
            &mut out,
            pulldown_cmark::Parser::new("`a\u{202e}b` c\u{202e}d\n\n```\nx\u{2066}y\n```"),
            super::super::whatwg_url,
        );
        assert_eq!(
            out,
            "<p><code>a[U+202E]b</code> c\u{202e}d</p>\n<div class=\"code-block\"><div class=\"code-head\">\
             <span class=\"code-lang\">text</span><button class=\"copy-code\" type=\"button\" \
             aria-label=\"Copy code\">Copy</button></div><pre><code>x[U+2066]y\n</code></pre></div>\n"
        );
    }

    #[test]
    fn escaping_matches_the_html_serializer() {
        let mut text = String::new();
        escape_text(&mut text, "a<b>&\"c'\u{a0}\r\nd\re\0");
        assert_eq!(text, "a&lt;b&gt;&amp;\"c'&nbsp;\nd\ne\u{fffd}");
        let mut attribute = String::new();
        escape_attribute(&mut attribute, "a<b>&\"c'\u{a0}");
        assert_eq!(attribute, "a<b>&amp;&quot;c'&nbsp;");
    }
}
