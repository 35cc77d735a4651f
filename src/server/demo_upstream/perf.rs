//! The `[perf]` scenario's text: about 100 KB of reasoning and 50 KB of answer written the way
//! a model writes them (paragraphs, lists, code blocks, tables), the same bytes every run, so
//! the UI benchmark measures the page and not the luck of a generator.

/// Bytes of reasoning the `[perf]` scenario streams (at least).
pub const THINKING_BYTES: usize = 100 * 1024;
/// Bytes of answer the `[perf]` scenario streams (at least).
pub const ANSWER_BYTES: usize = 50 * 1024;

const OPENERS: [&str; 10] = [
    "Let me check whether",
    "So",
    "Wait —",
    "If that holds,",
    "On the other hand,",
    "Hmm, it looks like",
    "Then",
    "It follows that",
    "Before going on, note that",
    "Double-checking:",
];
const SUBJECTS: [&str; 12] = [
    "the cache",
    "the parser",
    "this loop",
    "the second term",
    "the request path",
    "the index",
    "each worker",
    "the retry budget",
    "the outer sum",
    "the lock",
    "the error estimate",
    "the last branch",
];
const VERBS: [&str; 10] = [
    "dominates",
    "bounds",
    "depends on",
    "hides",
    "doubles",
    "matches",
    "shortens",
    "invalidates",
    "simplifies",
    "moves",
];
const OBJECTS: [&str; 12] = [
    "the total cost",
    "the worst case",
    "the error term",
    "every later step",
    "the hot path",
    "the first estimate",
    "what we measured before",
    "the boundary condition",
    "the allocation count",
    "the expected answer",
    "the slow start",
    "the invariant",
];
const CODE: [&str; 8] = [
    "let total = items.iter().map(|x| x.cost).sum::<u64>();",
    "if budget < step {",
    "    return Err(Error::Exhausted { at: step });",
    "}",
    "for (i, w) in workers.iter_mut().enumerate() {",
    "    w.assign(i % shards);",
    "cache.insert(key, value.clone());",
    "assert!(lo <= hi, \"empty range\");",
];

/// Formulas a model writes while it reasons and answers, for the rich variant.
const FORMULAS: [&str; 8] = [
    "$O(n \\log n)$",
    "$\\frac{a+b}{2}$",
    "\\(\\sum_{i=1}^{n} x_i^2\\)",
    "$e^{-\\lambda t}$",
    "$\\sqrt{\\sigma^2 + \\mu^2}$",
    "\\(p \\le 0.05\\)",
    "$\\binom{n}{k}$",
    "$\\lim_{x \\to 0} \\frac{\\sin x}{x} = 1$",
];
const DISPLAY: [&str; 3] = [
    "$$\\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}$$",
    "\\[ \\mathbb{E}[X] = \\sum_{k} k \\, P(X = k) \\]",
    "$$\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix} \\begin{pmatrix} x \\\\ y \\end{pmatrix}$$",
];
const LANGUAGES: [(&str, &[&str]); 3] = [
    (
        "python",
        &[
            "def total(items):",
            "    # sum the costs",
            "    return sum(x.cost for x in items)",
        ],
    ),
    (
        "ts",
        &[
            "const total = (items: Item[]): number =>",
            "  items.reduce((s, x) => s + x.cost, 0);",
        ],
    ),
    (
        "bash",
        &["for f in *.log; do", "  grep -c \"error\" \"$f\"", "done"],
    ),
];

/// A deterministic source of choices (xorshift64).
struct Picks(u64);

impl Picks {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn one<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.next(words.len())]
    }

    fn sentence(&mut self) -> String {
        let mut s = format!(
            "{} {} {} {}",
            self.one(&OPENERS),
            self.one(&SUBJECTS),
            self.one(&VERBS),
            self.one(&OBJECTS)
        );
        match self.next(6) {
            0 => s.push_str(&format!(", since `n = {}`", self.next(900) + 100)),
            1 => s.push_str(", which is **not** what I expected"),
            2 => s.push_str(&format!(" by about {}%", self.next(90) + 5)),
            3 => s.push_str(", at least for *small* inputs"),
            _ => {}
        }
        s.push('.');
        s
    }

    fn paragraph(&mut self, out: &mut String) {
        let sentences: Vec<String> = (0..3 + self.next(4)).map(|_| self.sentence()).collect();
        out.push_str(&sentences.join(" "));
        out.push_str("\n\n");
    }

    fn list(&mut self, numbered: bool, out: &mut String) {
        for i in 1..=3 + self.next(3) {
            let marker = if numbered {
                format!("{i}.")
            } else {
                "-".into()
            };
            out.push_str(&format!("{marker} {}\n", self.sentence()));
        }
        out.push('\n');
    }

    fn code(&mut self, out: &mut String) {
        out.push_str("```rust\n");
        for _ in 0..4 + self.next(5) {
            out.push_str(self.one(&CODE));
            out.push('\n');
        }
        out.push_str("```\n\n");
    }

    fn table(&mut self, rows: usize, out: &mut String) {
        out.push_str("| case | input | result | note |\n|---|---:|---:|---|\n");
        for i in 1..=rows {
            out.push_str(&format!(
                "| {i} | {} | {} | {} |\n",
                self.next(10_000),
                self.next(1_000),
                self.one(&OBJECTS)
            ));
        }
        out.push('\n');
    }
}

/// The reasoning: paragraphs with numbered and bulleted lists, code and now and then a small
/// table, as a model thinks aloud.
pub fn thinking() -> String {
    thinking_of(THINKING_BYTES)
}

/// [`thinking`] of at least `bytes`.
pub fn thinking_of(bytes: usize) -> String {
    let mut picks = Picks(0x9E37_79B9_7F4A_7C15);
    let mut out = String::with_capacity(bytes + 1024);
    let mut section = 0;
    while out.len() < bytes {
        section += 1;
        picks.paragraph(&mut out);
        match section % 6 {
            0 => picks.code(&mut out),
            1 | 4 => picks.list(true, &mut out),
            2 => picks.paragraph(&mut out),
            3 => picks.list(false, &mut out),
            _ if section % 12 == 5 => picks.table(4, &mut out),
            _ => picks.paragraph(&mut out),
        }
    }
    out
}

/// The answer: titled sections of paragraphs, lists and code, and one larger table.
pub fn answer() -> String {
    answer_of(ANSWER_BYTES)
}

/// [`answer`] of at least `bytes`.
pub fn answer_of(bytes: usize) -> String {
    let mut picks = Picks(0xD1B5_4A32_D192_ED03);
    let mut out = String::with_capacity(bytes + 1024);
    out.push_str("# What the measurements show\n\n");
    let mut section = 0;
    while out.len() < bytes {
        section += 1;
        out.push_str(&format!("## Part {section}\n\n"));
        picks.paragraph(&mut out);
        picks.list(section % 2 == 0, &mut out);
        if section % 3 == 0 {
            picks.code(&mut out);
        }
        if section == 6 {
            picks.table(12, &mut out);
        }
        picks.paragraph(&mut out);
    }
    out.push_str("That is the whole picture.\n");
    out
}

/// The rich variant of a text: a formula after some sentences, a display formula after some
/// paragraphs, and every other Rust code block in another language.
fn enrich(text: &str, seed: u64) -> String {
    let mut picks = Picks(seed);
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut in_code = false;
    let mut blocks = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("```") {
            if !in_code {
                blocks += 1;
                if blocks % 2 == 0 {
                    let (lang, lines) = LANGUAGES[picks.next(LANGUAGES.len())];
                    out.push_str(&format!("```{lang}\n"));
                    for l in lines {
                        out.push_str(l);
                        out.push('\n');
                    }
                    in_code = true;
                    continue;
                }
            }
            in_code = !in_code;
            out.push_str(line);
            continue;
        }
        if in_code {
            if blocks % 2 == 1 {
                out.push_str(line);
            }
            continue;
        }
        match line.strip_suffix(".\n") {
            Some(body) if !body.starts_with('|') && picks.next(3) == 0 => {
                out.push_str(body);
                out.push_str(", roughly ");
                out.push_str(picks.one(&FORMULAS));
                out.push_str(".\n");
                if picks.next(4) == 0 {
                    // Blank lines around it: a list item after it starts its own list rather
                    // than running into the formula's paragraph.
                    out.push('\n');
                    out.push_str(picks.one(&DISPLAY));
                    out.push_str("\n\n");
                }
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// `[perf-rich]`'s reasoning: [`thinking`] with formulas and code in several languages.
pub fn rich_thinking() -> String {
    enrich(&thinking(), 0x5851_F42D_4C95_7F2D)
}

/// `[perf-rich]`'s answer: [`answer`] with formulas and code in several languages.
pub fn rich_answer() -> String {
    enrich(&answer(), 0x1405_7B7E_F767_814F)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::render;

    #[test]
    fn the_texts_have_their_size_and_are_the_same_every_time() {
        let (t, a) = (thinking(), answer());
        assert!(
            (THINKING_BYTES..THINKING_BYTES + 2048).contains(&t.len()),
            "{}",
            t.len()
        );
        assert!(
            (ANSWER_BYTES..ANSWER_BYTES + 2048).contains(&a.len()),
            "{}",
            a.len()
        );
        assert_eq!(t, thinking());
        assert_eq!(a, answer());
        assert_ne!(t[..1000], t[50_000..51_000], "the text varies");
    }

    #[test]
    fn the_texts_hold_every_kind_of_block() {
        for text in [thinking(), answer()] {
            let html = render(&text);
            for element in [
                "<p>", "<ol>", "<ul>", "<pre>", "<table>", "<code>", "<strong>",
            ] {
                assert!(html.contains(element), "no {element}");
            }
        }
        assert!(render(&answer()).contains("<h2>"));
    }

    #[test]
    fn the_rich_variant_holds_formulas_and_code_in_several_languages() {
        for text in [rich_thinking(), rich_answer()] {
            let html = render(&text);
            assert!(html.matches("math-inline").count() > 20, "few formulas");
            assert!(html.contains("math-display"));
            assert!(html.contains("language-rust") && html.matches("language-").count() >= 4);
            // Every list item of the text is still one (what the UI benchmark counts).
            let items = text
                .lines()
                .filter(|l| {
                    l.starts_with("- ")
                        || l.split_once(". ").is_some_and(|(n, _)| {
                            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                        })
                })
                .count();
            assert_eq!(html.matches("<li>").count(), items);
        }
    }
}
