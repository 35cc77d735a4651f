//! Formulas for the page: LaTeX to MathML, on the server. The page's first load carries no
//! converter (see the README's first-load figures); a finished block with math asks for its
//! formulas once, and the answer goes through the browser's MathML allow-list like everything
//! else the page shows.

use std::sync::OnceLock;

use math_core::{LatexToMathML, MathCoreConfig, MathDisplay};

use crate::domain::MathItem;

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
}
