//! What rendered markdown may contain: the URL rule, the code-language rule, and the ammonia
//! policy that re-checks everything the writer produced.
//!
//! The writer ([`super::writer`]) only ever emits the elements and attributes listed here, so
//! for well-behaved input ammonia removes nothing. It runs anyway, as a second, independent
//! layer: if a future change to the writer (or a pulldown-cmark upgrade) let something through,
//! this allow-list still stands between model output and `inner_html`. Every builder call below
//! is spelled out, including the ones that restate a default, so the policy reads in one place.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use ammonia::{Builder, Url, UrlRelative};

/// The URL schemes a link may use. Everything else (`javascript:`, `vbscript:`, `data:`,
/// `file:`, `blob:`, custom app schemes) is dropped, whatever its case or encoding.
const URL_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// Longest code-fence language kept as a class name; longer info strings are not languages.
const MAX_LANGUAGE_LEN: usize = 32;

/// Returns the canonical form of `raw` if it is an absolute `http`, `https` or `mailto` URL.
///
/// The URL is parsed by the WHATWG URL parser (the `url` crate, the same algorithm browsers
/// use), so control characters, tabs, newlines, leading spaces and letter case are handled the
/// way a browser would handle them; the caller has already decoded entities (pulldown-cmark
/// does, and so does the HTML parser in ammonia). Anything without a scheme is relative and
/// refused: a relative link would point at Ponder itself (`/api/…`). The *serialized* URL is
/// returned, not the input: `http:api/chat` is relative to an `http:` page in a browser but
/// absolute to a parser without a base, and its serialization `http://api/chat` removes that
/// ambiguity, as it does for IDN hosts (punycode) and unescaped characters.
pub(super) fn safe_url(raw: &str) -> Option<String> {
    let url = Url::parse(raw).ok()?;
    let allowed = match url.scheme() {
        "http" | "https" => url.host().is_some(),
        "mailto" => true,
        _ => false,
    };
    allowed.then(|| url.into())
}

/// The first bare `http://` or `https://` address in `text` at or after `from`, as a byte range:
/// it starts at a word boundary (not inside another URL, as in `blob:https://…`) and runs to whitespace or `<`, `>`, `"`, without the punctuation
/// that ends a sentence around it (`.`, `,`, `:`, `;`, `!`, `?`, quotes, and a `)` or `]` it did
/// not open). Prose like "see https://example.com/a_(b)." links `https://example.com/a_(b)`.
pub(super) fn bare_url(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut at = from;
    while at < text.len() {
        let rest = text.get(at..)?;
        let found = [rest.find("https://"), rest.find("http://")]
            .into_iter()
            .flatten()
            .min()?;
        let start = at + found;
        let boundary = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && !":/@.-_~%+=&?#\\".contains(c));
        let scheme = if text[start..].starts_with("https://") {
            8
        } else {
            7
        };
        let mut end = text[start..]
            .find(|c: char| c.is_whitespace() || c.is_control() || "<>\"`".contains(c))
            .map_or(text.len(), |n| start + n);
        loop {
            let url = &text[start..end];
            let Some(last) = url.chars().next_back() else {
                break;
            };
            let unbalanced = |open: char, close: char| {
                last == close && url.matches(close).count() > url.matches(open).count()
            };
            if ".,:;!?'*_~".contains(last) || unbalanced('(', ')') || unbalanced('[', ']') {
                end -= last.len_utf8();
            } else {
                break;
            }
        }
        if boundary && end > start + scheme {
            return Some((start, end));
        }
        at = start + scheme;
    }
    None
}

/// Returns the language named by a fence's info string, if it is a plausible language name.
///
/// Only the leading run of `[A-Za-z0-9_+#.-]` of the first word is taken (`rust,ignore` →
/// `rust`, `c++`, `objective-c`), up to 32 characters. The name becomes part of a class
/// attribute and a visible label, so nothing that could end an attribute, add a second class,
/// or spoof another label gets in.
pub(super) fn safe_language(info: &str) -> Option<&str> {
    let word = info.split_ascii_whitespace().next()?;
    let end = word
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_+#.-".contains(c)))
        .unwrap_or(word.len());
    let lang = &word[..end];
    (!lang.is_empty() && lang.len() <= MAX_LANGUAGE_LEN).then_some(lang)
}

/// Sanitizes writer output with [`policy`].
pub(super) fn clean(html: &str) -> String {
    policy().clean(html).to_string()
}

/// The ammonia allow-list, built once.
///
/// Line by line:
/// - `Builder::empty()`: start from nothing, not from ammonia's default list (which allows
///   `img`, `area`, `map`, `abbr`, …): every allowed element is named below.
/// - `tags`: exactly what [`super::writer`] emits: text blocks, lists, tables, inline
///   emphasis, links, and the code-block frame (`div`, `span`, `button`). No `img`, `svg`,
///   `math`, `iframe`, `object`, `embed`, `form`, `input`, `style`, `link`, `meta`, `base`.
/// - `clean_content_tags`: `script` and `style` vanish with their content rather than
///   being unwrapped into visible text.
/// - `generic_attributes` empty and no generic prefixes: ammonia's default would allow `lang`
///   and `title` everywhere; no attribute is allowed on every element. In particular no
///   `style`, no `on*`, no `id` or `name` (which would clobber `window`/`document` globals).
/// - `tag_attributes`: `a` gets `href`, `title` and `class`; `code` gets `class`; `ol` gets
///   `start`; `button` gets `type` and `aria-label`; `div`, `span`, `th` and `td` get `class`
///   through `allowed_classes` below.
/// - `allowed_classes`: the fixed class names the writer uses, so model output cannot borrow
///   the app's own classes (a fake "error" banner, a fake bubble). `code` is checked by the
///   attribute filter instead, because its class carries the language.
/// - `tag_attribute_values`: the copy button's `type="button"` (never a submit button) and
///   its fixed `aria-label`.
/// - `attribute_filter`: `href` is replaced by its canonical form from [`safe_url`] (or
///   dropped); `code` keeps only `language-<safe name>`; `ol start` keeps only digits.
/// - `url_schemes`: `http`, `https`, `mailto`; `url_relative(Deny)`: no relative URLs.
/// - `link_rel`: every link gets `rel="noopener noreferrer nofollow"`: the opened page gets
///   no `window.opener` and no `Referer`, and search engines get no endorsement.
/// - `set_tag_attribute_value("a", "target", "_blank")`: links open in a new tab, so a
///   click never navigates away from a running turn. It is the only set attribute, so the
///   attribute order (and the output) is stable.
/// - `strip_comments`: comments can hide conditional-comment and mXSS tricks.
/// - `id_prefix(None)`: moot, as no `id` is allowed.
fn policy() -> &'static Builder<'static> {
    static POLICY: OnceLock<Builder<'static>> = OnceLock::new();
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
            "blockquote",
            "ul",
            "ol",
            "li",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "pre",
            "code",
            "strong",
            "em",
            "del",
            "a",
            "div",
            "span",
            "button",
        ]
        .into_iter()
        .collect();
        let tag_attributes: HashMap<&str, HashSet<&str>> = [
            ("a", ["href", "title"].into_iter().collect()),
            ("code", ["class"].into_iter().collect()),
            ("ol", ["start"].into_iter().collect()),
        ]
        .into_iter()
        .collect();
        let classes = |names: &[&'static str]| names.iter().copied().collect::<HashSet<_>>();
        let allowed_classes: HashMap<&str, HashSet<&str>> = [
            ("a", classes(&["md-image"])),
            ("span", classes(&["code-lang", "md-image"])),
            ("div", classes(&["code-block", "code-head"])),
            ("button", classes(&["copy-code"])),
            (
                "th",
                classes(&["align-left", "align-center", "align-right"]),
            ),
            (
                "td",
                classes(&["align-left", "align-center", "align-right"]),
            ),
        ]
        .into_iter()
        .collect();
        let button_values: HashMap<&str, HashSet<&str>> = [
            ("type", classes(&["button"])),
            ("aria-label", classes(&["Copy code"])),
        ]
        .into_iter()
        .collect();

        let mut b = Builder::empty();
        b.tags(tags)
            .clean_content_tags(["script", "style"].into_iter().collect())
            .generic_attributes(HashSet::new())
            .tag_attributes(tag_attributes)
            .allowed_classes(allowed_classes)
            .tag_attribute_values([("button", button_values)].into_iter().collect())
            .attribute_filter(filter_attribute)
            .url_schemes(URL_SCHEMES.into_iter().collect())
            .url_relative(UrlRelative::Deny)
            .link_rel(Some("noopener noreferrer nofollow"))
            .set_tag_attribute_value("a", "target", "_blank")
            .strip_comments(true)
            .id_prefix(None);
        b
    })
}

fn filter_attribute<'u>(element: &str, attribute: &str, value: &'u str) -> Option<Cow<'u, str>> {
    match (element, attribute) {
        ("a", "href") => safe_url(value).map(Cow::Owned),
        ("code", "class") => {
            let lang = value.strip_prefix("language-")?;
            (safe_language(lang) == Some(lang)).then_some(Cow::Borrowed(value))
        }
        ("ol", "start") => {
            let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
            digits.then_some(Cow::Borrowed(value))
        }
        _ => Some(Cow::Borrowed(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(text: &str) -> Vec<&str> {
        let mut found = Vec::new();
        let mut from = 0;
        while let Some((a, b)) = bare_url(text, from) {
            found.push(&text[a..b]);
            from = b;
        }
        found
    }

    #[test]
    fn bare_addresses_are_found_without_the_punctuation_around_them() {
        assert_eq!(urls("see https://example.com."), ["https://example.com"]);
        assert_eq!(
            urls("(docs: https://en.wikipedia.org/wiki/Rust_(language)), and http://a.io/x?y=1!"),
            [
                "https://en.wikipedia.org/wiki/Rust_(language)",
                "http://a.io/x?y=1"
            ]
        );
        assert_eq!(
            urls("\"https://q.example/a\" said"),
            ["https://q.example/a"]
        );
        assert_eq!(
            urls("https://"),
            Vec::<&str>::new(),
            "a scheme alone is no address"
        );
        assert_eq!(urls("xhttps://not.a.link"), Vec::<&str>::new());
        assert_eq!(
            urls("<blob:https://x.example/1> view-source:https://y.example"),
            Vec::<&str>::new(),
            "an address inside another scheme's URL is not one of its own"
        );
        assert_eq!(urls("javascript:alert(1) ftp://x.y"), Vec::<&str>::new());
        assert_eq!(
            urls("日本 https://例え.jp/パス 終"),
            ["https://例え.jp/パス"]
        );
        assert_eq!(urls("https://a.io<b>"), ["https://a.io"]);
    }

    #[test]
    fn only_absolute_web_and_mail_urls_pass() {
        assert_eq!(
            safe_url("https://example.com/a b").as_deref(),
            Some("https://example.com/a%20b")
        );
        assert_eq!(
            safe_url("mailto:a@b.example").as_deref(),
            Some("mailto:a@b.example")
        );
        for bad in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            " \u{1}javascript:alert(1)",
            "java\tscript:alert(1)",
            "java\nscript:alert(1)",
            "vbscript:msgbox(1)",
            "data:text/html,<script>alert(1)</script>",
            "/api/chat",
            "api/chat",
            "//evil.example/x",
            "#top",
            "?q=1",
            "javascript%3Aalert(1)",
            "file:///etc/passwd",
            "blob:https://example.com/x",
        ] {
            assert_eq!(safe_url(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn scheme_relative_forms_become_unambiguous() {
        assert_eq!(
            safe_url("http:api/chat").as_deref(),
            Some("http://api/chat")
        );
        assert_eq!(
            safe_url("https:/x.example").as_deref(),
            Some("https://x.example/")
        );
    }

    #[test]
    fn languages_are_plain_names() {
        assert_eq!(safe_language("rust"), Some("rust"));
        assert_eq!(safe_language("rust,ignore"), Some("rust"));
        assert_eq!(safe_language("  c++ extra"), Some("c++"));
        assert_eq!(safe_language("\"><script>"), None);
        assert_eq!(safe_language("{r}"), None);
        assert_eq!(safe_language(""), None);
        assert_eq!(safe_language(&"a".repeat(33)), None);
    }

    #[test]
    fn the_policy_alone_strips_what_the_writer_never_emits() {
        let dirty = concat!(
            "<p id=x name=y style=\"color:red\" onclick=\"alert(1)\" lang=en>p</p>",
            "<img src=\"https://evil.example/x.png\">",
            "<svg><script>alert(1)</script></svg><math><mi>x</mi></math>",
            "<a href=\"javascript:alert(1)\">j</a>",
            "<a href=\"/api/chat\">r</a>",
            "<a href=\"http:api/chat\" class=\"bubble md-image\">h</a>",
            "<code class=\"language-x bubble\">c</code>",
            "<div class=\"error code-block\">d</div>",
            "<button type=\"submit\" formaction=\"https://evil.example\" aria-label=\"Copy code\">b</button>",
            "<ol start=\"1 onclick\"><li>i</li></ol>",
            "<style>p{}</style><iframe src=\"https://evil.example\"></iframe><!-- c -->",
        );
        assert_eq!(
            clean(dirty),
            concat!(
                "<p>p</p>",
                "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\">j</a>",
                "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\">r</a>",
                "<a href=\"http://api/chat\" class=\"md-image\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">h</a>",
                "<code>c</code>",
                "<div class=\"code-block\">d</div>",
                "<button aria-label=\"Copy code\">b</button>",
                "<ol><li>i</li></ol>",
            )
        );
    }
}
