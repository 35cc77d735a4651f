//! Rich content for the page, made on the server: formulas (LaTeX to MathML) and highlighted
//! code. The page's first load carries neither converter (see the README's first-load figures);
//! a finished block asks for its formulas or its code once, and the answer goes through the
//! browser's allow-list like everything else the page shows.

use std::sync::OnceLock;

use math_core::{LatexToMathML, MathCoreConfig, MathDisplay};
use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

use crate::domain::{CodeItem, MathItem};

/// The longest formula converted; a longer one stays source.
pub const MAX_FORMULA_CHARS: usize = 20_000;

/// The most formulas one request converts.
pub const MAX_FORMULAS: usize = 500;

fn converter() -> Option<&'static LatexToMathML> {
    static CONVERTER: OnceLock<Option<LatexToMathML>> = OnceLock::new();
    CONVERTER
        .get_or_init(|| LatexToMathML::new(MathCoreConfig::default()).ok())
        .as_ref()
}

/// The MathML of one formula, or `None` when it does not parse (the page then keeps showing
/// its source, in code style).
pub fn mathml(item: &MathItem) -> Option<String> {
    if item.tex.trim().is_empty() || item.tex.chars().count() > MAX_FORMULA_CHARS {
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
        .map(|converted| converted.mathml)
}

/// The longest code block highlighted; a longer one stays plain.
pub const MAX_CODE_BYTES: usize = 100 * 1024;

/// The most code blocks one request highlights.
pub const MAX_BLOCKS: usize = 100;

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

/// The block's text as highlighted HTML: spans with `hl-` classes around the escaped text, or
/// `None` for a language the set does not know, an empty or too long block.
pub fn highlighted(item: &CodeItem) -> Option<String> {
    if item.code.is_empty() || item.code.len() > MAX_CODE_BYTES {
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
        html.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    Some(html.finalize())
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
            ("sh", "ls -la\n"),
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
