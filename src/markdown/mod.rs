//! The one markdown renderer, and the only source of raw HTML in the app. Answers and thinking
//! both go through it: [`render`] for a finished text, [`IncrementalMarkdown`] while a text
//! streams in.
//!
//! Model output is hostile input, so rendering is two independent layers:
//! 1. [`writer`] turns pulldown-cmark events into HTML and chooses every element and attribute
//!    itself: raw HTML in the text is shown as text, images become links (a remote image would
//!    leak data by its URL the moment it loads), link URLs must be absolute `http`, `https` or
//!    `mailto` and are written in canonical form, table alignment is a class, not a style.
//!    Every link gets `target="_blank"` and `rel="noopener noreferrer nofollow"`.
//! 2. [`policy`] is an explicit allow-list of the same elements, attributes, classes and URL
//!    rule, as data and plain decisions. The browser applies it to the tree its own parser
//!    built from that HTML, before the tree reaches the page (`ui::dom::sanitized_fragment`),
//!    after the browser's Sanitizer API where there is one.
//!
//! No I/O: the same code runs natively and in the browser. The one thing that differs is the URL
//! parser, a parameter ([`UrlParser`]): the browser brings its own. The server alone has one
//! more layer, [`sanitize`]: the same allow-list as a configuration of ammonia, through which
//! every HTML the server draws passes (the page's download has no room for ammonia's parser).

mod incremental;
mod math;
mod policy;
#[cfg(feature = "ssr")]
mod sanitize;
mod writer;

use pulldown_cmark::{Options, Parser};

pub use incremental::{finished_len, IncrementalMarkdown, RenderStats, Update};
pub use math::dollar_delimiters;
pub use policy::{
    allowed_elements, allowed_math_elements, attribute, copy_labels, element, highlight_class,
    math_attribute, math_element, safe_url, set_copy_labels, whatwg_url, UrlParser, Verdict,
    COPY_CODE_LABEL, LINK_ATTRIBUTES,
};
#[cfg(feature = "ssr")]
pub use sanitize::{allow_list_change, ammonia_change, markup_depth, sanitize, MAX_DEPTH};

/// Puts typeset formulas and highlighted code in place of their source in rendered markdown
/// (the server's drawing of a shared link, which keeps them).
pub type Dress<'a> = dyn Fn(&str) -> String + 'a;

/// CommonMark plus the GitHub extensions models use: tables, strikethrough, task lists, and
/// math (`$…$`, `$$…$$`; LaTeX's `\(…\)` and `\[…\]` are read as those, see [`math`]): a
/// formula is written as its source in `<code class="math-inline">` or `"math-display"`, which
/// the page typesets once its block is finished. Dollar amounts stay text (`$5 and $10`: a
/// closing `$` cannot follow a space). Footnote references are read in the older syntax, where a
/// reference needs no definition: `[^3]` is a citation of the answer's source 3 (the turn's
/// `cite` events leave them), written as `<span class="cite">[3]</span>`; a definition a model
/// writes itself keeps its label as text. Heading attributes (`{#id}`) and metadata blocks
/// stay off: they add ids, classes or raw blocks that model output has no use for.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_MATH
        | Options::ENABLE_OLD_FOOTNOTES
}

/// The markdown events of `markdown` as every renderer reads them (the page's HTML, the
/// terminal's lines): the same extensions, LaTeX delimiters read as math.
pub fn parse(markdown: &str, each: impl FnMut(pulldown_cmark::Event<'_>)) {
    parse_read(&math::dollar_delimiters(markdown), each);
}

/// The markdown events of a text whose LaTeX delimiters [`dollar_delimiters`] already read: a
/// reader that lays out a growing text in parts reads it once ([`finished_len`] finds the parts)
/// and parses each part.
pub fn parse_read(read: &str, mut each: impl FnMut(pulldown_cmark::Event<'_>)) {
    for event in Parser::new_ext(read, options()) {
        each(event);
    }
}

/// Renders markdown to HTML that holds only what [`policy`] allows, judging links with the
/// `url` crate ([`whatwg_url`]); see [`render_with`].
pub fn render(markdown: &str) -> String {
    render_with(markdown, whatwg_url)
}

/// Renders markdown to HTML that holds only what [`policy`] allows, judging link addresses
/// with `urls`.
///
/// The output is well-formed (every element the writer opens it closes, and all text and
/// attribute values are escaped) and stable: the same text always gives the same bytes.
pub fn render_with(markdown: &str, urls: UrlParser) -> String {
    let markdown = math::dollar_delimiters(markdown);
    let mut html = String::with_capacity(markdown.len() + markdown.len() / 2);
    writer::push_html(&mut html, Parser::new_ext(&markdown, options()), urls);
    html
}

#[cfg(test)]
pub(crate) use tests::deep_markdown;

#[cfg(test)]
mod tests {
    use super::*;

    /// Markdown nested 100,000 levels deep in each way it nests.
    pub fn deep_markdown() -> Vec<(&'static str, String)> {
        const DEPTH: usize = 100_000;
        vec![
            ("quotes", format!("{} x", ">".repeat(DEPTH))),
            ("spaced quotes", format!("{}x", "> ".repeat(DEPTH))),
            ("lists", format!("{}x", "- ".repeat(DEPTH))),
            ("ordered lists", format!("{}x", "1. ".repeat(DEPTH))),
            ("quoted lists", format!("{}x", "> - ".repeat(DEPTH / 2))),
            (
                "indented lists",
                (0..500)
                    .map(|i| format!("{}- x\n", "  ".repeat(i)))
                    .collect(),
            ),
            ("brackets", format!("{}x", "[".repeat(DEPTH))),
            (
                "links",
                format!("{}x{}", "[".repeat(DEPTH), "](https://a.io)".repeat(DEPTH)),
            ),
            (
                "emphasis",
                format!("{}x{}", "*_".repeat(DEPTH / 2), "_*".repeat(DEPTH / 2)),
            ),
            (
                "strong",
                format!("{}x{}", "**".repeat(DEPTH / 2), "**".repeat(DEPTH / 2)),
            ),
            ("images", format!("{}x", "![".repeat(DEPTH / 2))),
            ("html", format!("{}x", "<div>".repeat(DEPTH / 5))),
            (
                "dollars",
                format!("{}x{}", "$".repeat(DEPTH / 2), "$".repeat(DEPTH / 2)),
            ),
            ("backticks", format!("{}x", "`".repeat(DEPTH))),
        ]
    }

    /// No input nests the renderer's own code: each of these renders, whole and incrementally,
    /// on a thread with a 256 KiB stack, where recursion per level would overflow and fail.
    #[test]
    fn deep_markdown_renders_on_a_small_stack() {
        let render_all = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                for (name, text) in deep_markdown() {
                    let html = render(&text);
                    assert!(!html.is_empty(), "{name}");
                    let mut incremental = IncrementalMarkdown::new();
                    incremental.update(&text[..text.len() / 2]);
                    incremental.finish(&text);
                    assert_eq!(incremental.html(), html, "{name}");
                }
            })
            .unwrap();
        render_all.join().unwrap();
    }

    #[test]
    fn ordinary_markdown_renders() {
        assert_eq!(
            render("**bold** and *it*"),
            "<p><strong>bold</strong> and <em>it</em></p>\n"
        );
        assert!(render("- a\n- b").contains("<li>a</li>"));
        assert!(render("| a | b |\n|---|---|\n| 1 | 2 |").contains("<td>1</td>"));
    }

    #[test]
    fn bare_addresses_become_links_but_not_in_code_or_inside_links() {
        let out = render("Read https://example.com/a_b_c, then `https://in.code` and [x](https://l.io) https://l.io/y.");
        assert!(
            out.contains("<a href=\"https://example.com/a_b_c\" rel=\"noopener noreferrer nofollow\">https://example.com/a_b_c</a>,")
                || out.contains(">https://example.com/a_b_c</a>,"),
            "{out}"
        );
        assert!(out.contains("<code>https://in.code</code>"), "{out}");
        assert_eq!(out.matches("<a ").count(), 3, "{out}");
        assert!(!render("javascript:alert(1)").contains("<a"));
        let long = format!("https://example.com/{}", "a".repeat(200));
        assert!(render(&long).contains(&format!(">{long}</a>")));
    }

    #[test]
    fn raw_html_is_text() {
        let out = render("<script>alert(1)</script> <b onclick=x>hi</b>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<b"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn links_are_safe_and_open_in_a_new_tab() {
        assert_eq!(
            render("[x](https://example.com)"),
            "<p><a href=\"https://example.com/\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">x</a></p>\n"
        );
        assert_eq!(render("[x](javascript:alert(1))"), "<p>x</p>\n");
        assert_eq!(render("[x](/api/chat)"), "<p>x</p>\n");
    }

    #[test]
    fn images_become_links() {
        assert_eq!(
            render("![secret *alt*](https://evil.example/leak?data=1 \"t\")"),
            "<p><a class=\"md-image\" href=\"https://evil.example/leak?data=1\" title=\"t\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">🖼 secret alt</a></p>\n"
        );
        assert_eq!(
            render("[![logo](https://x.example/l.png)](https://x.example)"),
            "<p><a href=\"https://x.example/\" target=\"_blank\" rel=\"noopener noreferrer nofollow\"><span class=\"md-image\">🖼 logo</span></a></p>\n"
        );
    }

    #[test]
    fn code_blocks_get_a_label_and_a_copy_button() {
        assert_eq!(
            render("```rust\nfn main() {}\n```"),
            "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">rust</span>\
             <button class=\"copy-code\" type=\"button\" aria-label=\"Copy code\">Copy</button></div>\
             <pre><code class=\"language-rust\">fn main() {}\n</code></pre></div>\n"
        );
    }

    #[test]
    fn table_alignment_is_a_class() {
        assert_eq!(
            render("| a | b |\n|:-:|--:|\n| 1 | 2 |"),
            "<table><thead><tr><th class=\"align-center\">a</th><th class=\"align-right\">b</th></tr></thead><tbody>\n\
             <tr><td class=\"align-center\">1</td><td class=\"align-right\">2</td></tr>\n</tbody></table>\n"
        );
    }
}
