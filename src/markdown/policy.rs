//! What rendered markdown may contain: the URL rule, the code-language rule, and the allow-list
//! that re-checks everything the writer produced.
//!
//! The writer ([`super::writer`]) only ever emits the elements and attributes listed here, so
//! for well-behaved output the second layer removes nothing. It runs anyway, independent of the
//! writer: if a future change to the writer (or a pulldown-cmark upgrade) let something through,
//! this allow-list still stands between model output and the page. The list is data and plain
//! decisions ([`element`], [`attribute`]); the browser applies them to the tree *its own* parser
//! built (`ui::dom::sanitized_fragment`), so what is checked is exactly what is shown, and no
//! second HTML parser has to agree with the browser's.

use url::Url;

/// Parses an address the way a browser does and returns its serialization, or `None` when it is
/// not an absolute URL. The writer and the allow-list take it as a parameter: natively it is the
/// `url` crate ([`whatwg_url`]); the browser passes its own `URL` (the same WHATWG algorithm),
/// which keeps the `url` crate and its IDNA tables out of the download.
pub type UrlParser = fn(&str) -> Option<String>;

/// Longest code-fence language kept as a class name; longer info strings are not languages.
const MAX_LANGUAGE_LEN: usize = 32;

/// The [`UrlParser`] for native callers (tests, benchmarks): the `url` crate, an implementation
/// of the WHATWG URL standard browsers follow.
pub fn whatwg_url(raw: &str) -> Option<String> {
    Url::parse(raw).ok().map(String::from)
}

/// Returns the canonical form of `raw` if it is an absolute `http`, `https` or `mailto` URL.
/// Everything else (`javascript:`, `vbscript:`, `data:`, `file:`, `blob:`, custom app schemes)
/// is refused, whatever its case or encoding.
///
/// `parse` is a WHATWG URL parser, so control characters, tabs, newlines, leading spaces and
/// letter case are handled the way a browser would handle them; the caller has already decoded
/// entities (pulldown-cmark does, and so does the browser's HTML parser). Anything without a
/// scheme is relative and refused: a relative link would point at Ponder itself (`/api/…`). The
/// *serialized* URL is returned, not the input: `http:api/chat` is relative to an `http:` page
/// in a browser but absolute to a parser without a base, and its serialization
/// `http://api/chat` removes that ambiguity, as it does for IDN hosts (punycode) and unescaped
/// characters. A serialized URL starts with its lower-case scheme, and `http`/`https` ones
/// always carry a host, so the prefix says it all.
pub fn safe_url(raw: &str, parse: UrlParser) -> Option<String> {
    let url = parse(raw)?;
    let web = ["http://", "https://"].iter().any(|p| {
        url.strip_prefix(p)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
    });
    (web || url.starts_with("mailto:")).then_some(url)
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

/// What the allow-list does with an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// One of the elements the writer emits: it stays, with the attributes [`attribute`] keeps.
    Keep,
    /// Not on the list: the element goes and its content stays, to be checked in turn, so
    /// nothing the reader could read is lost.
    Unwrap,
    /// Never text for the reader (scripts, styles, templates, and every SVG or MathML element,
    /// whose `a`, `script` and `style` are not HTML's): goes with everything inside it.
    Remove,
}

/// The writer's whole vocabulary, each element with the attributes it may carry: text blocks,
/// lists, tables, inline emphasis, links, and the code-block frame (`div`, `span`, `button`).
/// No `img`, `svg`, `math`, `iframe`, `object`, `embed`, `form`, `input`, `style`, `link`,
/// `meta`, `base`.
const ELEMENTS: [(&str, &[&str]); 28] = [
    ("p", &[]),
    ("br", &[]),
    ("hr", &[]),
    ("h1", &[]),
    ("h2", &[]),
    ("h3", &[]),
    ("h4", &[]),
    ("h5", &[]),
    ("h6", &[]),
    ("blockquote", &[]),
    ("ul", &[]),
    ("ol", &["start"]),
    ("li", &[]),
    ("table", &[]),
    ("thead", &[]),
    ("tbody", &[]),
    ("tr", &[]),
    ("th", &["class"]),
    ("td", &["class"]),
    ("pre", &[]),
    ("code", &["class"]),
    ("strong", &[]),
    ("em", &[]),
    ("del", &[]),
    ("a", &["href", "title", "class", "target", "rel"]),
    ("div", &["class"]),
    ("span", &["class"]),
    ("button", &["class", "type", "aria-label"]),
];

/// The allowed elements with the names of the attributes each may carry (their values are
/// [`attribute`]'s to judge), e.g. for the browser's Sanitizer API.
pub fn allowed_elements() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    ELEMENTS.into_iter()
}

/// Elements removed with their content rather than unwrapped into visible text.
pub(super) const REMOVED: [&str; 3] = ["script", "style", "template"];

/// The fixed class names the writer uses, per element, so model output cannot borrow the app's
/// own classes (a fake "error" banner, a fake bubble). `code` is checked apart, because its
/// class carries the language.
const CLASSES: [(&str, &[&str]); 6] = [
    ("a", &["md-image"]),
    ("span", &["code-lang", "md-image", "cite"]),
    ("div", &["code-block", "code-head"]),
    ("button", &["copy-code"]),
    ("th", &ALIGNMENTS),
    ("td", &ALIGNMENTS),
];

const ALIGNMENTS: [&str; 3] = ["align-left", "align-center", "align-right"];

/// What every link carries: it opens in a new tab, so a click never navigates away from a
/// running turn, and the opened page gets no `window.opener` and no `Referer` (and search
/// engines no endorsement).
pub const LINK_ATTRIBUTES: [(&str, &str); 2] = [
    ("target", "_blank"),
    ("rel", "noopener noreferrer nofollow"),
];

/// The copy button's accessible name in English: model output cannot put its own words on a
/// Ponder control, so only the catalogues' names for it pass.
pub const COPY_CODE_LABEL: &str = "Copy code";

static COPY_LABELS: std::sync::OnceLock<(&'static str, &'static str)> = std::sync::OnceLock::new();

/// Sets the words of the code blocks' copy button (its text, its accessible name) for the rest
/// of the page's life: a page is in one language, and changing it reloads the page.
pub fn set_copy_labels(text: &'static str, name: &'static str) {
    let _ = COPY_LABELS.set((text, name));
}

/// The copy button's text and accessible name (English unless the page set its own).
pub fn copy_labels() -> (&'static str, &'static str) {
    COPY_LABELS
        .get()
        .copied()
        .unwrap_or(("Copy", COPY_CODE_LABEL))
}

fn is_copy_label(value: &str) -> bool {
    value == COPY_CODE_LABEL
        || crate::i18n::Locale::ALL
            .iter()
            .any(|l| l.catalogue().copy_code == value)
}

/// The verdict for an element, by its lower-case local name; `html` is whether it is in the
/// HTML namespace.
pub fn element(name: &str, html: bool) -> Verdict {
    if !html || REMOVED.contains(&name) {
        Verdict::Remove
    } else if ELEMENTS.iter().any(|(e, _)| *e == name) {
        Verdict::Keep
    } else {
        Verdict::Unwrap
    }
}

/// The value a kept element's attribute keeps, or `None` to drop the attribute.
///
/// No attribute is allowed on every element: in particular no `style`, no `on*`, no `id` or
/// `name` (which would clobber `window`/`document` globals). Per element: `a` keeps `href` in
/// the canonical form from [`safe_url`] and its `title`, and gets [`LINK_ATTRIBUTES`]; `code`
/// keeps only `class="language-<safe name>"`; `ol start` only digits; `button` only
/// `type="button"` (never a submit button) and its fixed label; `class` on `a`, `span`, `div`,
/// `button`, `th` and `td` keeps only the names in [`CLASSES`].
pub fn attribute(element: &str, name: &str, value: &str, parse: UrlParser) -> Option<String> {
    let (_, names) = ELEMENTS.iter().find(|(e, _)| *e == element)?;
    if !names.contains(&name) {
        return None;
    }
    match (element, name) {
        ("a", "href") => safe_url(value, parse),
        ("a", "title") => Some(value.to_string()),
        ("a", "target" | "rel") => LINK_ATTRIBUTES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string()),
        ("code", "class") if MATH_SOURCE.contains(&value) => Some(value.to_string()),
        ("code", "class") => {
            let lang = value.strip_prefix("language-")?;
            (safe_language(lang) == Some(lang)).then(|| value.to_string())
        }
        ("ol", "start") => {
            let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| value.to_string())
        }
        ("button", "type") => (value == "button").then(|| value.to_string()),
        ("button", "aria-label") => is_copy_label(value).then(|| value.to_string()),
        (_, "class") => {
            let (_, allowed) = CLASSES.iter().find(|(e, _)| *e == element)?;
            let kept: Vec<&str> = value
                .split_ascii_whitespace()
                .filter(|c| allowed.contains(c))
                .collect();
            (!kept.is_empty()).then(|| kept.join(" "))
        }
        _ => None,
    }
}

/// The `class` of a span in highlighted code, kept only when every name carries the `hl-`
/// prefix and plain characters (`hl-keyword hl-control hl-c++`): the app's own classes cannot
/// be borrowed, and nothing can end the attribute.
pub fn highlight_class(value: &str) -> Option<String> {
    let mut names = value.split_ascii_whitespace().peekable();
    names.peek()?;
    let plain = names.all(|name| {
        name.strip_prefix("hl-").is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+#._-".contains(c))
        })
    });
    (plain && value.len() <= 512).then(|| value.to_string())
}

/// The classes of a formula's source, as the writer leaves it for the page to typeset.
const MATH_SOURCE: [&str; 2] = ["math-inline", "math-display"];

/// MathML Core's presentation elements: what a typeset formula is made of. No `annotation-xml`
/// (it can hold HTML), no `maction`, nothing that links or loads.
const MATH_ELEMENTS: [&str; 29] = [
    "math",
    "semantics",
    "annotation",
    "mrow",
    "mi",
    "mn",
    "mo",
    "ms",
    "mtext",
    "mspace",
    "mfrac",
    "msqrt",
    "mroot",
    "msub",
    "msup",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mmultiscripts",
    "mprescripts",
    "none",
    "mtable",
    "mtr",
    "mtd",
    "mstyle",
    "mpadded",
    "mphantom",
    "merror",
];

/// The attributes a typeset formula may carry: layout only. No `href`, `style`, `class`, `id`
/// or event handler; `mathcolor`/`mathbackground` are left out with the colours.
const MATH_ATTRIBUTES: [&str; 25] = [
    "display",
    "mathvariant",
    "stretchy",
    "fence",
    "separator",
    "lspace",
    "rspace",
    "accent",
    "accentunder",
    "columnalign",
    "rowalign",
    "columnspan",
    "rowspan",
    "displaystyle",
    "scriptlevel",
    "linethickness",
    "width",
    "height",
    "depth",
    "voffset",
    "form",
    "largeop",
    "movablelimits",
    "symmetric",
    "encoding",
];

/// The MathML elements with the attributes each may carry, e.g. for the browser's Sanitizer API.
pub fn allowed_math_elements() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    MATH_ELEMENTS.into_iter().map(|e| (e, &MATH_ATTRIBUTES[..]))
}

/// The verdict for an element of a typeset formula, by its local name; `mathml` is whether it
/// is in the MathML namespace (an HTML or SVG element inside a formula goes, with its content).
pub fn math_element(name: &str, mathml: bool) -> Verdict {
    if !mathml {
        Verdict::Remove
    } else if MATH_ELEMENTS.contains(&name) {
        Verdict::Keep
    } else if name == "annotation-xml" || name == "maction" {
        Verdict::Remove
    } else {
        Verdict::Unwrap
    }
}

/// The value an attribute of a typeset formula keeps, or `None` to drop it: only
/// [`MATH_ATTRIBUTES`], with short values of plain characters (lengths, keywords, numbers), so
/// nothing can carry a URL or script.
pub fn math_attribute(_element: &str, name: &str, value: &str) -> Option<String> {
    if !MATH_ATTRIBUTES.contains(&name) || value.len() > 64 {
        return None;
    }
    let plain = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " .-+%#/".contains(c));
    plain.then(|| value.to_string())
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
    fn highlighted_code_keeps_only_its_own_classes() {
        assert_eq!(
            highlight_class("hl-keyword hl-control hl-c++").as_deref(),
            Some("hl-keyword hl-control hl-c++")
        );
        for bad in [
            "",
            "error",
            "hl-keyword bubble",
            "hl-",
            "hl-x\"onclick",
            "hl-a:b",
            "hl-<",
        ] {
            assert_eq!(highlight_class(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn formulas_keep_their_layout_and_nothing_that_links_styles_or_runs() {
        assert_eq!(math_element("mfrac", true), Verdict::Keep);
        assert_eq!(math_element("math", false), Verdict::Remove, "not MathML");
        assert_eq!(math_element("script", false), Verdict::Remove);
        assert_eq!(math_element("annotation-xml", true), Verdict::Remove);
        assert_eq!(math_element("maction", true), Verdict::Remove);
        assert_eq!(math_element("mfancy", true), Verdict::Unwrap);
        assert_eq!(
            math_attribute("mspace", "width", "0.16666667em").as_deref(),
            Some("0.16666667em")
        );
        assert_eq!(
            math_attribute("math", "display", "block").as_deref(),
            Some("block")
        );
        for (name, value) in [
            ("href", "https://example.com"),
            ("style", "color:red"),
            ("class", "error"),
            ("onclick", "alert(1)"),
            ("id", "x"),
            ("mathcolor", "red"),
            ("width", "expression(alert(1))"),
            ("width", "url(javascript:x)"),
            ("display", "block\"onmouseover=alert(1)"),
        ] {
            assert_eq!(
                math_attribute("mspace", name, value),
                None,
                "{name}={value}"
            );
        }
        assert_eq!(
            attribute("code", "class", "math-inline", whatwg_url).as_deref(),
            Some("math-inline")
        );
        assert_eq!(
            attribute("code", "class", "math-inline bubble", whatwg_url),
            None
        );
    }

    #[test]
    fn only_absolute_web_and_mail_urls_pass() {
        assert_eq!(
            safe_url("https://example.com/a b", whatwg_url).as_deref(),
            Some("https://example.com/a%20b")
        );
        assert_eq!(
            safe_url("mailto:a@b.example", whatwg_url).as_deref(),
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
            assert_eq!(safe_url(bad, whatwg_url), None, "{bad:?}");
        }
    }

    #[test]
    fn scheme_relative_forms_become_unambiguous() {
        assert_eq!(
            safe_url("http:api/chat", whatwg_url).as_deref(),
            Some("http://api/chat")
        );
        assert_eq!(
            safe_url("https:/x.example", whatwg_url).as_deref(),
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
    fn the_allow_list_keeps_only_the_writers_vocabulary() {
        assert_eq!(element("p", true), Verdict::Keep);
        assert_eq!(element("a", true), Verdict::Keep);
        assert_eq!(element("button", true), Verdict::Keep);
        for unwrapped in [
            "img", "iframe", "form", "input", "object", "b", "font", "noscript",
        ] {
            assert_eq!(element(unwrapped, true), Verdict::Unwrap, "{unwrapped}");
        }
        for removed in ["script", "style", "template"] {
            assert_eq!(element(removed, true), Verdict::Remove, "{removed}");
        }
        for foreign in ["a", "script", "svg", "math", "mi", "p"] {
            assert_eq!(
                element(foreign, false),
                Verdict::Remove,
                "{foreign} outside HTML"
            );
        }
    }

    #[test]
    fn attributes_keep_only_safe_values() {
        let keep = |e: &str, n: &str, v: &str| attribute(e, n, v, whatwg_url);
        for (e, n) in [
            ("p", "id"),
            ("p", "name"),
            ("p", "style"),
            ("p", "onclick"),
            ("p", "lang"),
            ("a", "onmouseover"),
            ("button", "formaction"),
            ("div", "style"),
        ] {
            assert_eq!(keep(e, n, "x"), None, "{e}[{n}]");
        }
        assert_eq!(keep("a", "href", "javascript:alert(1)"), None);
        assert_eq!(keep("a", "href", "/api/chat"), None);
        assert_eq!(
            keep("a", "href", "http:api/chat").as_deref(),
            Some("http://api/chat")
        );
        assert_eq!(keep("a", "title", "t").as_deref(), Some("t"));
        assert_eq!(keep("a", "target", "_top").as_deref(), Some("_blank"));
        assert_eq!(
            keep("a", "rel", "opener").as_deref(),
            Some("noopener noreferrer nofollow")
        );
        assert_eq!(
            keep("a", "class", "bubble md-image").as_deref(),
            Some("md-image")
        );
        assert_eq!(
            keep("div", "class", "error code-block").as_deref(),
            Some("code-block")
        );
        assert_eq!(keep("div", "class", "error"), None);
        assert_eq!(keep("p", "class", "md-image"), None);
        assert_eq!(
            keep("code", "class", "language-rust").as_deref(),
            Some("language-rust")
        );
        assert_eq!(keep("code", "class", "language-x bubble"), None);
        assert_eq!(keep("ol", "start", "3").as_deref(), Some("3"));
        assert_eq!(keep("ol", "start", "1 onclick"), None);
        assert_eq!(keep("button", "type", "submit"), None);
        assert_eq!(keep("button", "type", "button").as_deref(), Some("button"));
        assert_eq!(keep("button", "aria-label", "Pay now"), None);
        assert_eq!(
            keep("button", "aria-label", COPY_CODE_LABEL).as_deref(),
            Some("Copy code")
        );
    }
}
