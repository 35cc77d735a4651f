//! Rich content for the page, made on the server: formulas (LaTeX to MathML) and highlighted
//! code. The page's first load carries neither converter (see the first-load figures in
//! `docs/src/performance.md`);
//! a finished block asks for its formulas or its code once, and the answer goes through the
//! browser's allow-list like everything else the page shows.
//!
//! Both converters see text a model (or whoever wrote the stored chat) chose, so both are
//! bounded: a formula nested deeper than [`MAX_NESTING`] is not parsed (the converter recurses
//! once per level, and a 4 KB formula used to overflow a serving thread's stack and abort the
//! process), and highlighting stops at a deadline, at a line too long to interrupt, or when the
//! request is gone (the highlighter's regular expressions can take seconds on a crafted block).
//! The API runs both on [`super::rich_work`]'s big-stack threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use math_core::{LatexToMathML, MathCoreConfig, MathDisplay};
use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

use crate::domain::{CodeItem, MathItem};

/// The longest formula converted; a longer one stays source.
pub const MAX_FORMULA_CHARS: usize = 20_000;

/// The most formulas one request converts.
pub use crate::domain::rich::MAX_FORMULAS;

fn converter() -> Option<&'static LatexToMathML> {
    static CONVERTER: OnceLock<Option<LatexToMathML>> = OnceLock::new();
    CONVERTER
        .get_or_init(|| LatexToMathML::new(MathCoreConfig::default()).ok())
        .as_ref()
}

/// The deepest nesting ([`nesting_depth`]) a formula may have to be converted; a deeper one is
/// shown as written. Real formulas stay far below (a continued fraction five levels deep
/// measures about 15); the converter recurses once per level, so the limit is what keeps its
/// stack use small whatever the formula.
pub const MAX_NESTING: usize = 100;

/// What opened a nesting level in [`nesting_depth`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opener {
    Brace,
    Bracket,
    Left,
    Begin,
}

/// How deeply `tex` nests, measured without parsing it (so that no input can make the measure
/// itself deep): each `{`, `\left`, `\begin` and each `[` right after a command opens a level,
/// its closer ends it; a run of commands and `^`/`_` with nothing but spaces between them counts
/// one level each on top, since each may take what follows as its argument (`\sqrt\sqrt x`,
/// `x^\hat\hat y`; a symbol command such as `\,` neither adds nor ends a run). The delimiter
/// after `\left`, `\middle` or `\right` is no bracket. It never measures less than the
/// converter's recursion: closers that do not match are ignored.
pub fn nesting_depth(tex: &str) -> usize {
    let mut open: Vec<(Opener, usize)> = Vec::new();
    let mut chain = 0usize;
    let mut after_word = false;
    let mut deepest = 0usize;
    let mut delimiter_next = false;
    let mut chars = tex.chars().peekable();
    while let Some(c) = chars.next() {
        if delimiter_next && !c.is_whitespace() {
            delimiter_next = false;
            if c != '\\' {
                continue;
            }
        }
        let base = open.last().map_or(0, |&(_, depth)| depth);
        let mut word = String::new();
        match c {
            '\\' => match chars.next() {
                Some(first) if first.is_ascii_alphabetic() => {
                    word.push(first);
                    while let Some(&next) = chars.peek() {
                        if !next.is_ascii_alphabetic() {
                            break;
                        }
                        word.push(next);
                        chars.next();
                    }
                }
                _ => {}
            },
            '{' => {
                open.push((Opener::Brace, base + chain + 1));
                chain = 0;
            }
            '[' if after_word => {
                open.push((Opener::Bracket, base + chain + 1));
                chain = 0;
            }
            '}' | ']' => {
                let kind = if c == '}' {
                    Opener::Brace
                } else {
                    Opener::Bracket
                };
                if open.last().is_some_and(|&(top, _)| top == kind) {
                    open.pop();
                }
                chain = 0;
            }
            '^' | '_' => chain += 1,
            c if c.is_whitespace() => {}
            _ => chain = 0,
        }
        after_word = !word.is_empty() || (after_word && c.is_whitespace());
        match word.as_str() {
            "" => {}
            "left" | "begin" => {
                let kind = if word == "left" {
                    Opener::Left
                } else {
                    Opener::Begin
                };
                open.push((kind, base + chain + 1));
                chain = 0;
                after_word = false;
                delimiter_next = word == "left";
            }
            "middle" => {
                chain = 0;
                after_word = false;
                delimiter_next = true;
            }
            "right" | "end" => {
                let kind = if word == "right" {
                    Opener::Left
                } else {
                    Opener::Begin
                };
                if open.last().is_some_and(|&(top, _)| top == kind) {
                    open.pop();
                }
                chain = 0;
                after_word = false;
                delimiter_next = word == "right";
            }
            _ => chain += 1,
        }
        let now = open.last().map_or(0, |&(_, depth)| depth) + chain;
        deepest = deepest.max(now);
    }
    deepest
}

/// The MathML of one formula, through ammonia with the page's allow-list
/// ([`crate::markdown::sanitize`]), or `None` when it does not parse or nests deeper than
/// [`MAX_NESTING`] (the page then keeps showing its source, in code style). It runs on the
/// calling thread: the API calls it through [`mathml_all`] on a big-stack worker.
pub fn mathml(item: &MathItem) -> Option<String> {
    if item.tex.trim().is_empty()
        || item.tex.chars().count() > MAX_FORMULA_CHARS
        || nesting_depth(&item.tex) > MAX_NESTING
    {
        return None;
    }
    let display = if item.display {
        MathDisplay::Block
    } else {
        MathDisplay::Inline
    };
    converter()?
        .convert_with_local_state(&item.tex, display)
        .ok()
        .map(|converted| crate::markdown::sanitize(&converted.mathml))
}

/// Every formula's MathML, in order (see [`mathml`]); `None` for those not reached before
/// `cancelled` was set (the request is gone).
pub fn mathml_all(items: &[MathItem], cancelled: &AtomicBool) -> Vec<Option<String>> {
    items
        .iter()
        .map(|item| {
            if cancelled.load(Ordering::Relaxed) {
                None
            } else {
                mathml(item)
            }
        })
        .collect()
}

/// The longest code block highlighted; a longer one stays plain.
pub const MAX_CODE_BYTES: usize = 100 * 1024;

/// The longest line highlighted; a block with a longer line stays plain. The highlighter can
/// only be stopped between lines, and a crafted line of a few KB keeps it busy for seconds.
pub const MAX_LINE_BYTES: usize = 1_000;

/// The longest one block is highlighted for; past it the block stays plain.
pub const BLOCK_TIME: Duration = Duration::from_secs(1);

/// The longest one request's blocks are highlighted for, together; the blocks not done by then
/// stay plain.
pub const REQUEST_TIME: Duration = Duration::from_secs(2);

/// The most code blocks one request highlights.
pub use crate::domain::rich::MAX_BLOCKS;

/// The prefix of every class highlighting writes (`hl-keyword hl-control hl-rust`): the
/// allow-list keeps only classes that carry it.
pub const CLASS_PREFIX: &str = "hl-";

fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(two_face::syntax::extra_newlines)
}

/// The names models put on fences that the syntax set knows by another token.
fn token_of(lang: &str) -> String {
    let lang = lang.trim().to_ascii_lowercase();
    match lang.as_str() {
        "shell" | "sh" | "zsh" | "console" | "shellsession" => "bash".into(),
        "c++" | "cc" | "hpp" | "cxx" => "cpp".into(),
        "typescript" | "tsx" => "ts".into(),
        "javascript" | "jsx" | "mjs" => "js".into(),
        "yml" => "yaml".into(),
        "patch" => "diff".into(),
        "golang" => "go".into(),
        "py" | "python3" => "python".into(),
        "jsonc" | "json5" => "json".into(),
        _ => lang,
    }
}

/// The block's text as highlighted HTML, through ammonia with the page's allow-list: spans with
/// `hl-` classes around the escaped text, or
/// `None` for a language the set does not know, an empty or too long block, or one that takes
/// longer than [`BLOCK_TIME`].
pub fn highlighted(item: &CodeItem) -> Option<String> {
    syntaxes();
    highlighted_until(item, Instant::now() + BLOCK_TIME, &AtomicBool::new(false))
}

/// Every block highlighted, in order, within [`BLOCK_TIME`] each and [`REQUEST_TIME`] in all
/// (the syntax definitions' first loading aside);
/// `None` for a block that stays plain, and for every block once `cancelled` is set (the request
/// is gone: the work stops at the next line).
pub fn highlight_all(items: &[CodeItem], cancelled: &AtomicBool) -> Vec<Option<String>> {
    syntaxes();
    let request_end = Instant::now() + REQUEST_TIME;
    items
        .iter()
        .map(|item| {
            let block_end = (Instant::now() + BLOCK_TIME).min(request_end);
            highlighted_until(item, block_end, cancelled)
        })
        .collect()
}

/// The block highlighted, or `None` (see [`highlighted`]) also when `deadline` passes or
/// `cancelled` is set before its last line.
pub fn highlighted_until(
    item: &CodeItem,
    deadline: Instant,
    cancelled: &AtomicBool,
) -> Option<String> {
    if item.code.is_empty()
        || item.code.len() > MAX_CODE_BYTES
        || item
            .code
            .split('\n')
            .any(|line| line.len() > MAX_LINE_BYTES)
    {
        return None;
    }
    let set = syntaxes();
    let syntax = set.find_syntax_by_token(&token_of(&item.lang))?;
    let mut html = ClassedHTMLGenerator::new_with_class_style(
        syntax,
        set,
        ClassStyle::SpacedPrefixed {
            prefix: CLASS_PREFIX,
        },
    );
    for line in LinesWithEndings::from(&item.code) {
        if cancelled.load(Ordering::Relaxed) || Instant::now() >= deadline {
            return None;
        }
        html.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    Some(crate::markdown::sanitize(&pruned(&html.finalize())))
}

/// syntect wraps every scope in a span, and the stylesheet colours a few of them
/// (`style/markdown.css`): the spans of the others are unwrapped, their text kept. At the end of
/// the `[perf]` turn 3,749 of the page's 6,725 elements were highlighting spans. Anything but
/// syntect's own `<span class="…">`, `</span>` and text leaves the HTML as it is.
fn pruned(html: &str) -> String {
    const OPEN: &str = "<span class=\"";
    const CLOSE: &str = "</span>";
    let mut out = String::with_capacity(html.len());
    let mut kept: Vec<bool> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix(CLOSE) {
            match kept.pop() {
                Some(true) => out.push_str(CLOSE),
                Some(false) => {}
                None => return html.to_string(),
            }
            rest = after;
        } else if let Some(after) = rest.strip_prefix(OPEN) {
            let Some(end) = after.find("\">") else {
                return html.to_string();
            };
            let styled = is_styled(&after[..end]);
            if styled {
                out.push_str(&rest[..OPEN.len() + end + 2]);
            }
            kept.push(styled);
            rest = &after[end + 2..];
        } else {
            return html.to_string();
        }
    }
    if !kept.is_empty() {
        return html.to_string();
    }
    out.push_str(rest);
    out
}

/// Whether the stylesheet colours a span with these classes.
fn is_styled(classes: &str) -> bool {
    let has = |name: &str| {
        classes
            .split(' ')
            .any(|c| c.strip_prefix(CLASS_PREFIX) == Some(name))
    };
    [
        "comment", "keyword", "storage", "string", "constant", "support",
    ]
    .iter()
    .any(|c| has(c))
        || (has("entity") && has("name"))
        || (has("markup") && (has("inserted") || has("deleted")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::{math_attribute, math_element, Verdict};

    fn item(tex: &str, display: bool) -> MathItem {
        MathItem {
            tex: tex.into(),
            display,
        }
    }

    #[test]
    fn formulas_become_mathml_and_what_does_not_parse_stays_source() {
        let out = mathml(&item(r"\int_0^1 x^2\,dx", true)).unwrap();
        assert!(
            out.starts_with("<math") && out.contains("<msubsup>"),
            "{out}"
        );
        assert!(out.contains("display=\"block\""), "{out}");
        assert!(mathml(&item("x^2", false)).unwrap().contains("<msup>"));
        assert_eq!(mathml(&item(r"\unknowncmd{x}", false)), None);
        assert_eq!(mathml(&item(r"\href{javascript:alert(1)}{x}", false)), None);
        assert_eq!(mathml(&item("  ", false)), None);
        assert_eq!(
            mathml(&item(&"x".repeat(MAX_FORMULA_CHARS + 1), false)),
            None
        );
    }

    /// Every element and attribute the converter writes for a corpus of what models write is in
    /// the MathML allow-list, so nothing a reader should see is stripped; hostile input inside a
    /// formula comes out as text.
    #[test]
    fn the_converters_vocabulary_is_the_allow_lists() {
        let corpus = [
            r"x^2 + y_1",
            r"\frac{a}{b} \sqrt[3]{x} \sum_{i=1}^{n} i = \frac{n(n+1)}{2}",
            r"\int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2}",
            r"\begin{pmatrix}1&2\\3&4\end{pmatrix} \begin{cases} 0 & x<0 \\ 1 & x \ge 0 \end{cases}",
            r"\lim_{x\to 0}\frac{\sin x}{x} = 1 \quad \forall \epsilon > 0",
            r"\mathbb{R} \mathcal{O}(n \log n) \vec{v} \hat{x} \overline{AB} \underbrace{a+b}_{c}",
            r"\left( \frac{a}{b} \right) \binom{n}{k} \not\equiv \pmod{p}",
            r"\text{<script>alert(1)</script> <img src=x onerror=alert(1)>}",
            r"\operatorname{argmax}_\theta \; \mathbf{x} \boldsymbol{\alpha} \| x \|_2",
            r"\color{red}{x}",
        ];
        for tex in corpus {
            for display in [false, true] {
                let Some(out) = mathml(&item(tex, display)) else {
                    panic!("{tex} should convert");
                };
                assert!(!out.contains("<script"), "{out}");
                assert_eq!(crate::markdown::ammonia_change(&out), None, "{out}");
                let mut rest = out.as_str();
                while let Some(open) = rest.find('<') {
                    rest = &rest[open + 1..];
                    let end = rest.find('>').unwrap_or(rest.len());
                    let tag = rest[..end].trim_end_matches('/');
                    if tag.starts_with('/') {
                        continue;
                    }
                    let mut parts = tag.split_whitespace();
                    let name = parts.next().unwrap_or_default();
                    assert_eq!(math_element(name, true), Verdict::Keep, "{name} in {out}");
                    for attr in tag[name.len()..].split('"').collect::<Vec<_>>().chunks(2) {
                        let key = attr[0].trim().trim_end_matches('=');
                        if key.is_empty() || key == "style" {
                            continue;
                        }
                        let value = attr.get(1).copied().unwrap_or_default();
                        assert!(
                            math_attribute(name, key, value).is_some(),
                            "{key}={value:?} on {name} in {out}"
                        );
                    }
                }
            }
        }
    }

    /// A formula `depth` levels deep in each way the converter nests.
    fn deep_formulas(depth: usize) -> Vec<(&'static str, String)> {
        vec![
            (
                "braces",
                format!("{}x{}", "{".repeat(depth), "}".repeat(depth)),
            ),
            (
                "fractions",
                format!("{}x{}", r"\frac{".repeat(depth), "}{y}".repeat(depth)),
            ),
            (
                "roots",
                format!("{}x{}", r"\sqrt{".repeat(depth), "}".repeat(depth)),
            ),
            ("bare roots", format!("{}x", r"\sqrt".repeat(depth))),
            (
                "superscripts",
                format!("{}x{}", "x^{".repeat(depth), "}".repeat(depth)),
            ),
            ("script commands", format!("x{}y", r"^\hat".repeat(depth))),
            (
                "left right",
                format!("{}x{}", r"\left(".repeat(depth), r"\right)".repeat(depth)),
            ),
            (
                "environments",
                format!(
                    "{}x{}",
                    r"\begin{matrix}".repeat(depth),
                    r"\end{matrix}".repeat(depth)
                ),
            ),
            (
                "optional arguments",
                format!("{}x{}", r"\sqrt[".repeat(depth), "]{2}".repeat(depth)),
            ),
        ]
    }

    #[test]
    fn nesting_is_measured_by_every_construct_that_nests() {
        assert_eq!(nesting_depth(""), 0);
        assert_eq!(nesting_depth("x + y"), 0);
        assert_eq!(nesting_depth("{x}"), 1);
        assert_eq!(nesting_depth("{{x}}{y}"), 2);
        assert_eq!(nesting_depth(r"\frac{a}{b}"), 2);
        assert_eq!(nesting_depth(r"\left( x \right)"), 1);
        assert_eq!(nesting_depth(r"\left\{ x \right\}"), 1);
        assert_eq!(nesting_depth(r"\left[ x \right]"), 1);
        assert_eq!(nesting_depth(r"\left. x \middle| y \right\}"), 1);
        assert_eq!(nesting_depth(r"\sqrt[3]{x}"), 2);
        assert_eq!(nesting_depth(r"[0, 1] + [2, 3]"), 0);
        assert_eq!(nesting_depth(r"[0, 1] \times [2, 3]"), 2);
        assert_eq!(nesting_depth(r"\alpha \, \beta"), 2);
        assert_eq!(nesting_depth(r"\\ \{ \} \[ x"), 0);
        // Closers that match nothing never lower the measure.
        assert_eq!(nesting_depth("}}}{{x"), 2);
        assert_eq!(nesting_depth(r"{\right){x}}"), 2);
        for depth in [1, 10, 50] {
            for (name, tex) in deep_formulas(depth) {
                let measured = nesting_depth(&tex);
                assert!(
                    measured >= depth && measured <= 3 * depth + 2,
                    "{name} at {depth}: {measured}"
                );
            }
        }
    }

    /// What models write stays far below the limit.
    #[test]
    fn real_formulas_are_well_within_the_nesting_limit() {
        let real = [
            r"\int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2}",
            r"x = \cfrac{1}{1 + \cfrac{1}{1 + \cfrac{1}{1 + \cfrac{1}{1 + \cfrac{1}{x}}}}}",
            r"\left( \sum_{i=1}^{n} \left| \frac{a_i^{2}}{b_{i,j}^{k}} \right|^{p} \right)^{1/p}",
            r"\begin{pmatrix} \begin{bmatrix} a & b \\ c & d \end{bmatrix} & 0 \\ 0 & 1 \end{pmatrix}",
            r"\mathbb{E}\left[ \exp\left( \lambda \sum_{k} X_k \right) \right] \le e^{\lambda^2 \sigma^2 / 2}",
        ];
        for tex in real {
            let depth = nesting_depth(tex);
            assert!(depth <= 30, "{tex}: {depth}");
            assert!(mathml(&item(tex, true)).is_some(), "{tex}");
        }
    }

    /// Formulas nested far deeper than the limit (the issue's were 2,000 levels, well under the
    /// length cap) are refused before parsing, and their conversion runs within a small stack:
    /// a construct the measure missed would overflow it and fail the test.
    #[test]
    fn deep_formulas_stay_source_and_need_little_stack() {
        let convert = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                for depth in [MAX_NESTING + 1, 700, 2_000] {
                    for (name, tex) in deep_formulas(depth) {
                        assert!(nesting_depth(&tex) > MAX_NESTING, "{name}");
                        assert_eq!(mathml(&item(&tex, false)), None, "{name}");
                    }
                }
            })
            .unwrap();
        convert.join().unwrap();
    }

    /// At the limit, every construct converts within an eighth of a converter thread's stack,
    /// so the big stack leaves a wide margin should a construct escape the measure.
    #[test]
    fn formulas_at_the_limit_need_an_eighth_of_a_worker_stack() {
        let convert = std::thread::Builder::new()
            .stack_size(crate::server::rich_work::WORKER_STACK / 8)
            .spawn(|| {
                for construct in 0..deep_formulas(1).len() {
                    let (name, tex) = (1..=MAX_NESTING)
                        .rev()
                        .map(|depth| deep_formulas(depth).swap_remove(construct))
                        .find(|(_, tex)| nesting_depth(tex) <= MAX_NESTING)
                        .unwrap();
                    assert!(nesting_depth(&tex) > MAX_NESTING / 3, "{name}");
                    let _ = mathml(&item(&tex, false));
                }
            })
            .unwrap();
        convert.join().unwrap();
    }

    fn code(lang: &str, code: &str) -> CodeItem {
        CodeItem {
            lang: lang.into(),
            code: code.into(),
        }
    }

    /// Every language the issue names is highlighted, under the names models write, and every
    /// class it writes passes the allow-list's class rule.
    #[test]
    fn the_common_languages_are_highlighted_with_allowed_classes() {
        let samples = [
            ("rust", "fn main() { let x: u32 = 5; }\n"),
            ("python", "def f(x):\n    return x  # done\n"),
            ("js", "const a = () => 1;\n"),
            ("javascript", "let s = `t`;\n"),
            ("ts", "let n: number = 1;\n"),
            ("typescript", "interface A { b: string }\n"),
            ("json", "{\"a\": [1, true]}\n"),
            ("bash", "echo \"$HOME\" | grep x\n"),
            ("sh", "ls -la \"$HOME\"\n"),
            ("sql", "SELECT id FROM t WHERE x = 1;\n"),
            ("go", "package main\nfunc main() {}\n"),
            ("c", "int main(void) { return 0; }\n"),
            ("cpp", "std::vector<int> v;\n"),
            ("c++", "auto x = 1;\n"),
            ("java", "class A { void f() {} }\n"),
            ("html", "<p class=\"x\">hi</p>\n"),
            ("css", "a { color: red; }\n"),
            ("yaml", "a: 1\nb: [x]\n"),
            ("diff", "--- a\n+++ b\n-old\n+new\n"),
        ];
        for (lang, text) in samples {
            let Some(html) = highlighted(&code(lang, text)) else {
                panic!("{lang} is not highlighted");
            };
            assert!(html.contains("<span class=\"hl-"), "{lang}: {html}");
            assert_eq!(
                crate::markdown::ammonia_change(&html),
                None,
                "{lang}: {html}"
            );
            let mut rest = html.as_str();
            while let Some(at) = rest.find("class=\"") {
                rest = &rest[at + 7..];
                let end = rest.find('"').unwrap_or(rest.len());
                assert!(
                    crate::markdown::highlight_class(&rest[..end]).as_deref() == Some(&rest[..end]),
                    "{lang}: class {:?}",
                    &rest[..end]
                );
            }
        }
        assert_eq!(highlighted(&code("klingon", "qapla'\n")), None);
        assert_eq!(highlighted(&code("rust", "")), None);
        assert_eq!(
            highlighted(&code("rust", &"x".repeat(MAX_CODE_BYTES + 1))),
            None
        );
    }

    fn text_of(html: &str) -> String {
        let mut text = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        text.replace("&quot;", "\"")
    }

    #[test]
    fn only_the_spans_the_stylesheet_colours_are_kept() {
        let item = code(
            "rust",
            "// multiply\nfn square(x: i64) -> i64 {\n    let s = \"text\";\n    x * x + 1\n}\n",
        );
        let set = syntaxes();
        let syntax = set.find_syntax_by_token("rust").unwrap();
        let mut whole = ClassedHTMLGenerator::new_with_class_style(
            syntax,
            set,
            ClassStyle::SpacedPrefixed {
                prefix: CLASS_PREFIX,
            },
        );
        for line in LinesWithEndings::from(&item.code) {
            whole
                .parse_html_for_line_which_includes_newline(line)
                .unwrap();
        }
        let whole = whole.finalize();
        let kept = highlighted(&item).unwrap();
        let spans = |h: &str| h.matches("<span").count();
        assert!(spans(&kept) * 2 < spans(&whole), "{kept}\n{whole}");
        assert_eq!(text_of(&kept), text_of(&whole));
        assert_eq!(spans(&kept), kept.matches("</span>").count());
        for class in ["hl-comment", "hl-storage", "hl-string", "hl-constant"] {
            assert!(kept.contains(class), "{class}: {kept}");
        }
        assert!(!kept.contains("hl-source"), "{kept}");
    }

    #[test]
    fn what_is_not_syntects_plain_spans_is_left_as_it_is() {
        for html in [
            "<span class=\"hl-meta\">a</span></span>",
            "<span class=\"hl-meta\">open",
            "<b>x</b>",
            "<span class=\"hl-meta\"",
        ] {
            assert_eq!(pruned(html), html);
        }
        assert_eq!(
            pruned("<span class=\"hl-meta\"><span class=\"hl-keyword\">if</span> x</span>"),
            "<span class=\"hl-keyword\">if</span> x"
        );
    }

    #[test]
    fn highlighted_code_is_text_whatever_it_holds() {
        let html = highlighted(&code(
            "html",
            "<script>alert(1)</script><img src=x onerror=alert(1)>\n",
        ))
        .unwrap();
        assert!(
            !html.contains("<script") && !html.contains("<img"),
            "{html}"
        );
        assert!(html.contains("&lt;"), "{html}");
        let html = highlighted(&code("rust", "let s = \"</span><b>x\";\n")).unwrap();
        assert!(!html.contains("<b>"), "{html}");
    }
}
