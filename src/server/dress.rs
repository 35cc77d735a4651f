//! Formulas and code in HTML the server drew, typeset and highlighted on the server: for the
//! shared page, which runs no script, so nothing can ask for them later as the chat page does.
//!
//! The renderer leaves each formula as its source in `<code class="math-inline">` (or
//! `"math-display"`) and each fenced block with a language as `<pre><code class="language-…">`.
//! [`items`] finds them; [`Dressing`] holds what the converters made of them (taken once, when a
//! link's snapshot is taken, so a visitor's view costs no conversion); [`Dressing::apply`] puts
//! it in place. The converters' output is checked against the page's own allow-lists before it
//! is kept (MathML elements and attributes; highlighting's `hl-` spans around the very same
//! text); anything else keeps its source.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::domain::{CodeItem, MathItem};
use crate::markdown as policy;

const MATH_INLINE: &str = "<code class=\"math-inline\">";
const MATH_DISPLAY: &str = "<code class=\"math-display\">";
const CODE: &str = "<pre><code class=\"language-";
const CODE_END: &str = "</code>";

/// One formula or code block found in HTML: where its source starts and ends.
enum Found {
    Math {
        item: MathItem,
        whole: (usize, usize),
    },
    Code {
        item: CodeItem,
        text: (usize, usize),
    },
}

fn scan(html: &str) -> Vec<Found> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < html.len() {
        let next = [MATH_INLINE, MATH_DISPLAY, CODE]
            .into_iter()
            .filter_map(|marker| html[at..].find(marker).map(|i| (at + i, marker)))
            .min_by_key(|(i, _)| *i);
        let Some((start, marker)) = next else {
            break;
        };
        let open_end = start + marker.len();
        if marker == CODE {
            let Some(quote) = html[open_end..].find("\">").map(|i| open_end + i) else {
                break;
            };
            let Some(end) = html[quote..].find(CODE_END).map(|i| quote + i) else {
                break;
            };
            let text = (quote + 2, end);
            found.push(Found::Code {
                item: CodeItem {
                    lang: unescaped(&html[open_end..quote]),
                    code: unescaped(&html[text.0..text.1]),
                },
                text,
            });
            at = end + CODE_END.len();
        } else {
            let Some(end) = html[open_end..].find(CODE_END).map(|i| open_end + i) else {
                break;
            };
            found.push(Found::Math {
                item: MathItem {
                    tex: unescaped(&html[open_end..end]),
                    display: marker == MATH_DISPLAY,
                },
                whole: (start, end + CODE_END.len()),
            });
            at = end + CODE_END.len();
        }
    }
    found
}

/// The formulas and the code blocks with a language in `html`, in order.
pub fn items(html: &str) -> (Vec<MathItem>, Vec<CodeItem>) {
    let mut math = Vec::new();
    let mut code = Vec::new();
    for f in scan(html) {
        match f {
            Found::Math { item, .. } => math.push(item),
            Found::Code { item, .. } => code.push(item),
        }
    }
    (math, code)
}

/// What the converters made of a drawing's formulas and code blocks (only the results that
/// passed the allow-lists).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Dressing {
    #[serde(default)]
    math: Vec<(MathItem, String)>,
    #[serde(default)]
    code: Vec<(CodeItem, String)>,
}

impl Dressing {
    /// Keeps the converters' results, in the order of `math` and `code`, that pass the checks.
    pub fn new(
        math: &[MathItem],
        typeset: Vec<Option<String>>,
        code: &[CodeItem],
        highlighted: Vec<Option<String>>,
    ) -> Dressing {
        Dressing {
            math: math
                .iter()
                .zip(typeset)
                .filter_map(|(item, m)| Some((item.clone(), m.filter(|m| is_clean_math(m))?)))
                .collect(),
            code: code
                .iter()
                .zip(highlighted)
                .filter_map(|(item, h)| {
                    Some((
                        item.clone(),
                        h.filter(|h| is_clean_highlight(h, &item.code))?,
                    ))
                })
                .collect(),
        }
    }

    /// `html` with each formula and code block this dressing knows in place of its source.
    pub fn apply(&self, html: &str) -> String {
        if self.math.is_empty() && self.code.is_empty() {
            return html.to_string();
        }
        let math: HashMap<&MathItem, &str> =
            self.math.iter().map(|(i, m)| (i, m.as_str())).collect();
        let code: HashMap<&CodeItem, &str> =
            self.code.iter().map(|(i, h)| (i, h.as_str())).collect();
        let mut out = String::with_capacity(html.len());
        let mut last = 0;
        for f in scan(html) {
            match f {
                Found::Math { item, whole } => {
                    if let Some(m) = math.get(&item) {
                        out.push_str(&html[last..whole.0]);
                        out.push_str(m);
                        last = whole.1;
                    }
                }
                Found::Code { item, text } => {
                    if let Some(h) = code.get(&item) {
                        out.push_str(&html[last..text.0]);
                        out.push_str(h);
                        last = text.1;
                    }
                }
            }
        }
        out.push_str(&html[last..]);
        out
    }
}

fn unescaped(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// One tag of markup: its name, whether it closes, its attributes.
struct Tag<'a> {
    name: &'a str,
    attributes: Vec<(&'a str, &'a str)>,
}

/// The tags of `markup` in order, and whether its text holds nothing but text: `None` when
/// anything in it is not a plain tag with double-quoted attributes.
fn tags(markup: &str) -> Option<Vec<Tag<'_>>> {
    let mut out = Vec::new();
    let mut rest = markup;
    while let Some(open) = rest.find('<') {
        if rest[..open].contains('>') {
            return None;
        }
        let close = rest[open..].find('>')? + open;
        let inside = &rest[open + 1..close];
        let (closing, inside) = match inside.strip_prefix('/') {
            Some(i) => (true, i),
            None => (false, inside.strip_suffix('/').unwrap_or(inside)),
        };
        let name_end = inside
            .find(|c: char| c.is_whitespace())
            .unwrap_or(inside.len());
        let name = &inside[..name_end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return None;
        }
        let mut attributes = Vec::new();
        let mut attrs = inside[name_end..].trim_start();
        while !attrs.is_empty() {
            let eq = attrs.find("=\"")?;
            let attr = attrs[..eq].trim();
            let value_end = attrs[eq + 2..].find('"')? + eq + 2;
            if attr.is_empty() || !attr.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return None;
            }
            attributes.push((attr, &attrs[eq + 2..value_end]));
            attrs = attrs[value_end + 1..].trim_start();
        }
        if closing && !attributes.is_empty() {
            return None;
        }
        out.push(Tag { name, attributes });
        rest = &rest[close + 1..];
    }
    (!rest.contains('>')).then_some(out)
}

/// One `<math>` element of the MathML allow-list's elements and attributes only.
fn is_clean_math(mathml: &str) -> bool {
    let Some(found) = tags(mathml.trim()) else {
        return false;
    };
    mathml.trim_start().starts_with("<math")
        && mathml.trim_end().ends_with("</math>")
        && found.iter().all(|t| {
            matches!(policy::math_element(t.name, true), policy::Verdict::Keep)
                && t.attributes
                    .iter()
                    .all(|(n, v)| policy::math_attribute(t.name, n, v).as_deref() == Some(*v))
        })
}

/// Spans with highlighting classes only, around exactly the block's text.
fn is_clean_highlight(html: &str, code: &str) -> bool {
    let Some(found) = tags(html) else {
        return false;
    };
    let spans = found.iter().all(|t| {
        t.name == "span"
            && t.attributes
                .iter()
                .all(|(n, v)| *n == "class" && policy::highlight_class(v).as_deref() == Some(*v))
    });
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        rest = rest[open..]
            .find('>')
            .map_or("", |close| &rest[open + close + 1..]);
    }
    text.push_str(rest);
    spans && unescaped(&text) == code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html() -> String {
        crate::markdown::render(
            "Euler: $e^{i\\pi} + 1 = 0$ and\n\n$$a < b$$\n\n```rust\nfn main() { let x = \"<&>\"; }\n```\n\n```\nplain\n```",
        )
    }

    #[test]
    fn formulas_and_fenced_code_are_found_with_their_source() {
        let (math, code) = items(&html());
        assert_eq!(
            math,
            [
                MathItem {
                    tex: "e^{i\\pi} + 1 = 0".into(),
                    display: false
                },
                MathItem {
                    tex: "a < b".into(),
                    display: true
                }
            ]
        );
        assert_eq!(
            code,
            [CodeItem {
                lang: "rust".into(),
                code: "fn main() { let x = \"<&>\"; }\n".into()
            }]
        );
    }

    #[test]
    fn the_converters_output_takes_the_sources_place() {
        let html = html();
        let (math, code) = items(&html);
        let typeset: Vec<Option<String>> = math.iter().map(crate::server::rich::mathml).collect();
        let highlighted: Vec<Option<String>> =
            code.iter().map(crate::server::rich::highlighted).collect();
        let dressing = Dressing::new(&math, typeset, &code, highlighted);
        let dressed = dressing.apply(&html);
        assert!(
            !dressed.contains("math-inline") && !dressed.contains("math-display"),
            "{dressed}"
        );
        assert_eq!(dressed.matches("<math").count(), 2, "{dressed}");
        assert!(dressed.contains("class=\"hl-"), "{dressed}");
        assert!(dressed.contains("<pre><code>plain"), "{dressed}");
        let json = serde_json::to_string(&dressing).unwrap();
        let back: Dressing = serde_json::from_str(&json).unwrap();
        assert_eq!(back.apply(&html), dressed);
    }

    #[test]
    fn output_outside_the_allow_lists_keeps_the_source() {
        let html = html();
        let (math, code) = items(&html);
        let hostile = Dressing::new(
            &math,
            vec![
                Some("<math><mi href=\"javascript:alert(1)\">x</mi></math>".into()),
                Some("<math><script>alert(1)</script></math>".into()),
            ],
            &code,
            vec![Some(
                "<span class=\"evil\">fn main() { let x = \"&lt;&amp;&gt;\"; }\n</span>".into(),
            )],
        );
        assert_eq!(hostile.apply(&html), html);
        let other_text = Dressing::new(
            &[],
            vec![],
            &code,
            vec![Some("<span class=\"hl-k\">rm -rf /</span>".into())],
        );
        assert_eq!(other_text.apply(&html), html);
        assert!(is_clean_math("<math display=\"block\"><mi>x</mi></math>"));
        assert!(!is_clean_math("<math><mi>x</mi></math><img src=x>"));
        assert!(!is_clean_math("<math><mi>x<</mi></math>"));
    }
}
