//! Inputs shared by the test modules.

/// The XSS corpus: `(label, payload)` records from `tests/fixtures/xss-payloads.txt`.
///
/// Format (also read by the end-to-end suite): each record starts with a line
/// `----8<---- <label>`; the payload is every line after it up to the next such line, without
/// the final newline. Payloads may span lines.
pub fn xss_payloads() -> Vec<(&'static str, &'static str)> {
    const FILE: &str = include_str!("../fixtures/xss-payloads.txt");
    const MARK: &str = "----8<---- ";
    let body = FILE
        .strip_prefix(MARK)
        .expect("the corpus starts with a record");
    body.split(&format!("\n{MARK}"))
        .map(|record| {
            let (label, payload) = record.split_once('\n').expect("a label line");
            (label, payload.strip_suffix('\n').unwrap_or(payload))
        })
        .collect()
}

/// Markdown around a payload (`{}`), as a model would stream it: a payload must not find a
/// context where it becomes live.
pub const CONTEXTS: [&str; 14] = [
    "Intro paragraph.\n\n{}\n\nOutro.",
    "- item\n- {}\n- item",
    "> {}",
    "| a | b |\n|---|---|\n| {} | x |",
    "**{}**",
    "[{}](https://ok.example)",
    "```\n{}\n```\n\nafter",
    "1. one\n\n   {}\n\n2. two",
    "Inline $x^2 {}$ math.",
    "$$\n{}\n$$",
    "\\( {} \\) and \\[ {} \\]",
    "Cited.[^1] {}[^2]",
    "[^1]: {}",
    "[^{}]",
];

/// A long, realistic answer of about `target` bytes: headings, paragraphs with inline markup,
/// tight and loose lists, nested lists, code blocks, tables, quotes and rules.
pub fn long_answer(target: usize) -> String {
    let mut s = String::from(
        "# Migrating the service\n\nHere is a step-by-step plan, with the **why** for each step and \
         code you can paste.\n\n",
    );
    let mut i = 0;
    while s.len() < target {
        i += 1;
        s.push_str(&format!(
            "## Step {i}: configure part {i}\n\n\
             Step {i} changes *one* thing at a time, so a failure points at its cause. \
             Read the [docs](https://docs.example/step/{i} \"Step {i}\") first, then run `make check-{i}`.\n\
             The second line of this paragraph is a soft break, and this one ends with a hard break  \n\
             right here.\n\n\
             1. Back up the data.\n\
             2. Apply the change:\n   - edit `config-{i}.toml`\n   - restart the worker\n\
             3. Verify the result.\n\n\
             ```rust\nfn step_{i}(input: &str) -> Result<u32, Error> {{\n    let n: u32 = input.trim().parse()?;\n    \
             Ok(n * {i})\n}}\n```\n\n\
             | setting | before | after |\n|:--|:-:|--:|\n| workers | {i} | {} |\n| timeout | 30 s | 10 s |\n\n\
             > **Note:** step {i} is safe to repeat.\n> Nothing breaks if you run it twice.\n\n\
             - [x] planned\n- [ ] done\n\n\
             * loose item one\n\n* loose item two, with a second paragraph\n\n  that continues here.\n\n\
             ---\n\n",
            i * 2
        ));
    }
    s.push_str("That's all: run the checks once more and you are done.\n");
    s
}

/// Every prefix of `text` that ends on a character boundary, shortest first.
pub fn prefixes(text: &str) -> impl Iterator<Item = &str> {
    text.char_indices()
        .map(|(i, _)| i)
        .skip(1)
        .chain([text.len()])
        .map(move |end| &text[..end])
}
