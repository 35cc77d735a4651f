//! The allow-list of [`super::policy`] as one configuration of ammonia, for the HTML the server
//! draws: a shared conversation's page and a chat's first paint (answers and thinking, with
//! their typeset formulas and highlighted code), and the formulas and code the server typesets
//! for the page. The page itself keeps its own walk of the allow-list (ammonia's parser is too
//! big for its download); this module is in the server build only.
//!
//! The configuration is built from the policy's data and decisions, not written a second time:
//! the elements ([`super::allowed_elements`], [`super::allowed_math_elements`]) with their
//! attribute names, the elements removed with their content, every attribute value judged by
//! [`super::attribute`] (each `href` by [`super::safe_url`], whose three schemes ammonia is also
//! given as its own first check), [`super::math_attribute`] or [`super::highlight_class`], and
//! [`super::LINK_ATTRIBUTES`] set on every link.
//!
//! [`ammonia_change`] is the differential check between the two: the first place where ammonia,
//! so configured, would change HTML the allow-list lets through ([`allow_list_change`] judges
//! the same HTML by the page's walk natively). The renderer's output over every corpus must be
//! kept whole by both (`tests/markdown/ammonia.rs`, the providers' recorded texts in the
//! integration suite, and the `markdown` fuzz target).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use ammonia::{Builder, UrlRelative};
use html5ever::buffer_queue::BufferQueue;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer};

use super::policy;

/// The URL schemes a link may have: what [`super::safe_url`] lets through.
const SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// Elements that go with everything inside them besides the policy's own (`script`, `style`,
/// `template`): an `svg`, and the MathML elements that can hold HTML or act on a click. The
/// page's walk removes every element outside the vocabulary it checks; ammonia unwraps those
/// that are not listed here, keeping their text.
const REMOVED_TOO: [&str; 3] = ["svg", "annotation-xml", "maction"];

/// The one configuration, built once.
fn builder() -> &'static Builder<'static> {
    static BUILDER: OnceLock<Builder<'static>> = OnceLock::new();
    BUILDER.get_or_init(|| {
        let mut attributes: HashMap<&'static str, HashSet<&'static str>> = HashMap::new();
        for (element, names) in policy::allowed_elements().chain(policy::allowed_math_elements()) {
            attributes
                .entry(element)
                .or_default()
                .extend(names.iter().copied());
        }
        let mut builder = Builder::empty();
        builder
            .tags(attributes.keys().copied().collect())
            .tag_attributes(attributes)
            .generic_attributes(HashSet::new())
            .clean_content_tags(
                policy::REMOVED
                    .iter()
                    .chain(REMOVED_TOO.iter())
                    .copied()
                    .collect(),
            )
            .url_schemes(SCHEMES.into_iter().collect())
            .url_relative(UrlRelative::Deny)
            .link_rel(None)
            .strip_comments(true)
            .attribute_filter(judge);
        for (name, value) in policy::LINK_ATTRIBUTES {
            builder.set_tag_attribute_value("a", name, value);
        }
        builder
    })
}

/// An attribute's value as the allow-list keeps it, `None` to drop it. Ammonia names the
/// element by its local name alone; the markdown and MathML vocabularies share no name, and a
/// `span` may be the writer's (`code-lang`, `cite`…) or highlighting's (`hl-…`).
fn judge<'a>(element: &str, name: &str, value: &'a str) -> Option<Cow<'a, str>> {
    let kept = if policy::math_element(element, true) == policy::Verdict::Keep {
        policy::math_attribute(element, name, value)
    } else if (element, name) == ("span", "class") {
        policy::highlight_class(value)
            .or_else(|| policy::attribute(element, name, value, policy::whatwg_url))
    } else {
        policy::attribute(element, name, value, policy::whatwg_url)
    }?;
    Some(if kept == value {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(kept)
    })
}

/// The deepest markup given to ammonia whole: the depth at which browsers' parsers stop
/// nesting elements. Building a tree costs html5ever time in proportion to its depth at every
/// element (4,000 nested lists took 1.8 s), so a text nested deeper, which no model writes but
/// anyone can send, keeps only its words, and costs the server no more than an ordinary one.
pub const MAX_DEPTH: usize = 512;

/// `html` through ammonia with the allow-list's configuration: what the server sends or draws.
/// Markup nested deeper than [`MAX_DEPTH`] keeps only its text, in one paragraph.
pub fn sanitize(html: &str) -> String {
    if html.is_empty() {
        return String::new();
    }
    let pieces = tokens(html);
    if depth(&pieces) > MAX_DEPTH {
        return builder().clean(&text_only(&pieces)).to_string();
    }
    builder().clean(html).to_string()
}

/// How deep `html` nests its elements, counted as a browser's parser nests well-formed
/// markup (the renderer's): each element that is not void opens a level that its end tag, or
/// the end tag of an element around it, closes.
pub fn markup_depth(html: &str) -> usize {
    depth(&tokens(html))
}

/// Elements that never hold anything, so never open a level.
const VOID: [&str; 13] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

fn depth(pieces: &[Piece]) -> usize {
    let mut open: Vec<&str> = Vec::new();
    let mut deepest = 0;
    for piece in pieces {
        match piece {
            Piece::Open(name, _) if !VOID.contains(&name.as_str()) => {
                open.push(name);
                deepest = deepest.max(open.len());
            }
            Piece::Close(name) => {
                if let Some(at) = open.iter().rposition(|n| n == name) {
                    open.truncate(at);
                }
            }
            _ => {}
        }
    }
    deepest
}

/// The words of `pieces` in one paragraph, a line for each run of text.
fn text_only(pieces: &[Piece]) -> String {
    let mut out = String::from("<p>");
    for piece in pieces {
        if let Piece::Text(text) = piece {
            if text.trim().is_empty() {
                continue;
            }
            if out.len() > 3 {
                out.push('\n');
            }
            for c in text.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    c => out.push(c),
                }
            }
        }
    }
    out.push_str("</p>");
    out
}

/// Where ammonia, with the allow-list's configuration, would change `html`: `None` when it
/// comes back the same (the same elements in the same order, each with the same attributes and
/// values, the same text), else the first difference, with the tokens around it.
///
/// Both sides are read by html5ever's tokenizer, so the serializations may differ (`<br />` and
/// `<br>`, `&quot;` and `"` in text, attribute order) but nothing a browser would build
/// differently does. Markup deeper than [`MAX_DEPTH`] always differs (it keeps only its text).
pub fn ammonia_change(html: &str) -> Option<String> {
    let before = tokens(html);
    let after = tokens(&sanitize(html));
    let at = before
        .iter()
        .zip(&after)
        .position(|(a, b)| a != b)
        .or_else(|| (before.len() != after.len()).then(|| before.len().min(after.len())))?;
    let around = |list: &[Piece]| {
        list.iter()
            .skip(at.saturating_sub(2))
            .take(4)
            .map(|p| format!("{p:?}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    Some(format!(
        "token {at}: the allow-list's {} | ammonia's {}",
        around(&before),
        around(&after)
    ))
}

/// Where the page's allow-list walk (`ui::sanitize`, the markdown vocabulary) would change the
/// renderer's `html`, judged natively on the same tokens: the first element it would not keep,
/// or attribute it would drop or rewrite; `None` when it keeps all of it. With
/// [`ammonia_change`] this makes the differential property whole: what the page keeps comes
/// back from ammonia unchanged.
pub fn allow_list_change(html: &str) -> Option<String> {
    tokens(html).iter().find_map(|piece| {
        let Piece::Open(name, attributes) = piece else {
            return None;
        };
        if policy::element(name, true) != policy::Verdict::Keep {
            return Some(format!("<{name}> is not kept"));
        }
        attributes.iter().find_map(|(attr, value)| {
            let kept = policy::attribute(name, attr, value, policy::whatwg_url);
            (kept.as_deref() != Some(value.as_str()))
                .then(|| format!("{attr}={value:?} on <{name}> becomes {kept:?}"))
        })
    })
}

/// One piece of markup as a browser reads it.
#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Open(String, Vec<(String, String)>),
    Close(String),
    Text(String),
    Comment(String),
    Doctype,
}

#[derive(Default)]
struct Pieces(RefCell<Vec<Piece>>);

impl TokenSink for Pieces {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut pieces = self.0.borrow_mut();
        match token {
            Token::TagToken(Tag {
                kind: TagKind::StartTag,
                name,
                attrs,
                self_closing,
                ..
            }) => {
                let mut attrs: Vec<(String, String)> = attrs
                    .into_iter()
                    .map(|a| (a.name.local.to_string(), a.value.to_string()))
                    .collect();
                attrs.sort();
                pieces.push(Piece::Open(name.to_string(), attrs));
                if self_closing && !VOID.contains(&&*name) {
                    pieces.push(Piece::Close(name.to_string()));
                }
            }
            Token::TagToken(Tag { name, .. }) => pieces.push(Piece::Close(name.to_string())),
            Token::CharacterTokens(text) => push_text(&mut pieces, &text),
            Token::NullCharacterToken => push_text(&mut pieces, "\0"),
            Token::CommentToken(text) => pieces.push(Piece::Comment(text.to_string())),
            Token::DoctypeToken(_) => pieces.push(Piece::Doctype),
            Token::EOFToken | Token::ParseError(_) => {}
        }
        TokenSinkResult::Continue
    }
}

/// Adds `text` to the text before it: a browser's text node is one run, however it was split.
fn push_text(pieces: &mut Vec<Piece>, text: &str) {
    match pieces.last_mut() {
        Some(Piece::Text(before)) => before.push_str(text),
        _ => pieces.push(Piece::Text(text.to_string())),
    }
}

fn tokens(html: &str) -> Vec<Piece> {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(html));
    let tokenizer = Tokenizer::new(Pieces::default(), Default::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.0.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_markup_loses_what_the_allow_list_refuses() {
        let cases = [
            ("<script>alert(1)</script>ok", "ok"),
            ("<style>p{}</style><template><p>x</p></template>ok", "ok"),
            ("<b onclick=\"x()\">bold</b>", "bold"),
            ("<p id=\"x\" style=\"color:red\" class=\"error\">p</p>", "<p>p</p>"),
            ("<a href=\"javascript:alert(1)\">x</a>", "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\">x</a>"),
            ("<a href=\"/api/chat\">x</a>", "<a target=\"_blank\" rel=\"noopener noreferrer nofollow\">x</a>"),
            ("<a href=\"https://a.example\" target=\"_self\" rel=\"opener\">x</a>", "<a href=\"https://a.example/\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">x</a>"),
            ("<img src=x onerror=alert(1)>", ""),
            ("<svg><a href=\"javascript:x\">t</a></svg>after", "after"),
            ("<span class=\"error cite\">s</span>", "<span class=\"cite\">s</span>"),
            ("<span class=\"hl-keyword hl-rust\">fn</span>", "<span class=\"hl-keyword hl-rust\">fn</span>"),
            ("<button type=\"submit\" aria-label=\"Pay now\">b</button>", "<button>b</button>"),
            ("<code class=\"language-rust x\">c</code>", "<code>c</code>"),
            ("<!-- a comment -->text", "text"),
            ("<math><mi href=\"https://a.example\" mathvariant=\"normal\">x</mi><annotation-xml><mtext>y</mtext></annotation-xml></math>", "<math><mi mathvariant=\"normal\">x</mi></math>"),
            ("<form action=\"https://a.example\"><input name=\"q\"></form>", ""),
        ];
        for (hostile, clean) in cases {
            assert_eq!(tokens(&sanitize(hostile)), tokens(clean), "{hostile}");
        }
    }

    #[test]
    fn what_the_writer_emits_comes_back_unchanged() {
        let text = "# Title\n\n**b** *i* ~~d~~ `c` [l](https://a.example \"t\") ![img](https://a.example/i.png)\n\n\
                    1. one\n2. two\n\n- [x] done\n\n> quote\n\n| a | b |\n|:-:|--:|\n| 1 | 2 |\n\n\
                    ```rust\nfn main() {}\n```\n\nA formula $e^{i\\pi}$ and a citation[^2].\n\n$$a < b$$\n\n---\nline  \nbreak";
        let html = super::super::render(text);
        assert_eq!(allow_list_change(&html), None, "{html}");
        assert_eq!(ammonia_change(&html), None, "{html}");
    }

    #[test]
    fn the_check_names_the_first_difference() {
        assert_eq!(ammonia_change("<p>same &amp; <br /> \"same\"</p>"), None);
        let found = ammonia_change("<p>a <img src=\"x\"> b</p>").unwrap_or_default();
        assert!(found.starts_with("token 1:"), "{found}");
        assert!(found.contains("img"), "{found}");
        let found = ammonia_change("<a href=\"https://a.example/\" onclick=\"x\">l</a>");
        assert!(found.is_some_and(|f| f.contains("onclick")));
        assert!(ammonia_change("<p>one</p><!-- two -->").is_some());
        assert_eq!(allow_list_change("<p><a href=\"https://a.example/\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">l</a></p>"), None);
        for changed in [
            "<p><img src=\"x\"></p>",
            "<a href=\"https://a.example\">l</a>",
            "<span class=\"error\">s</span>",
            "<math></math>",
        ] {
            assert!(allow_list_change(changed).is_some(), "{changed}");
        }
    }

    /// Nothing in ammonia or the check recurses per level: deep input is cleaned on a thread
    /// with a 256 KiB stack; past [`MAX_DEPTH`] it keeps its words, at the cost of an ordinary
    /// text (100,000 levels would take ammonia minutes).
    #[test]
    fn deep_markup_is_cleaned_on_a_small_stack() {
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                for (name, text) in super::super::deep_markdown() {
                    let html = super::super::render(&text);
                    let clean = sanitize(&html);
                    if markup_depth(&html) > MAX_DEPTH {
                        assert!(
                            clean.starts_with("<p>") && clean.ends_with("</p>"),
                            "{name}"
                        );
                        assert_eq!(clean.matches('<').count(), 2, "{name}");
                        assert!(clean.contains('x'), "{name}");
                    } else {
                        assert_eq!(ammonia_change(&html), None, "{name}");
                    }
                }
                let nested = |n: usize| {
                    format!("{}x{}", "<blockquote>".repeat(n), "</blockquote>".repeat(n))
                };
                assert_eq!(ammonia_change(&nested(MAX_DEPTH)), None);
                assert_eq!(sanitize(&nested(MAX_DEPTH + 1)), "<p>x</p>");
                assert_eq!(
                    sanitize(&("<p>a &lt; b</p>".repeat(2) + &"<ul><li>".repeat(300) + "c")),
                    "<p>a &lt; b\na &lt; b\nc</p>"
                );
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// Ammonia judges attributes by the element's local name alone, so the two vocabularies
    /// must not share one.
    #[test]
    fn the_markdown_and_math_vocabularies_share_no_name() {
        let html: HashSet<&str> = policy::allowed_elements().map(|(e, _)| e).collect();
        let shared: Vec<&str> = policy::allowed_math_elements()
            .map(|(e, _)| e)
            .filter(|e| html.contains(e))
            .collect();
        assert!(shared.is_empty(), "{shared:?}");
    }

    #[test]
    fn depth_counts_open_elements_as_a_parser_nests_them() {
        assert_eq!(markup_depth("<p>a<br />b</p><hr /><p><em>c</em></p>"), 2);
        assert_eq!(markup_depth("<ul><li><p>a</p></li></ul>"), 3);
        assert_eq!(markup_depth("<div><span></div><div>"), 2);
        assert_eq!(
            markup_depth("<math><mspace width=\"1em\"/><mi>x</mi></math>"),
            2
        );
    }
}
