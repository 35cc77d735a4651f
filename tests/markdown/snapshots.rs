//! Reviewed renderings of ordinary markdown, stored in `tests/snapshots/` (insta). A change in
//! output fails here; review it with `cargo insta review` or by reading the `.snap.new` file.

use ponder::markdown::render;

use crate::checker::assert_safe;
use crate::samples::long_answer;

const CASES: &[(&str, &str)] = &[
    ("empty", ""),
    (
        "headings",
        "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\n\nSetext one\n===\n\nSetext two\n---\n\n#No space is text",
    ),
    (
        "emphasis",
        "Plain *em* _em_ **strong** __strong__ ***both*** ~~struck~~ and `code`.\n\nA second paragraph with snake_case_words and 2*3*4.",
    ),
    (
        "lists",
        "- a\n- b\n- c\n\n1. one\n2. two\n3. three\n\nText between.\n\n7. starts at seven\n8. eight\n\n* star\n+ plus",
    ),
    (
        "nested_lists",
        "- a\n  - a.1\n    - a.1.i\n  - a.2\n- b\n  1. b.1\n  2. b.2\n     ```sh\n     make\n     ```\n- c",
    ),
    (
        "loose_list",
        "- first\n\n- second\n\n  with a second paragraph\n\n- third",
    ),
    ("task_list", "- [ ] todo\n- [x] done\n- plain item"),
    (
        "table",
        "| Left | Center | Right | None |\n|:-----|:------:|------:|------|\n| `a` | **b** | [c](https://c.example) | d \\| pipe |\n| 1 | 2 | 3 |\n| x<br>y | | | extra | cells |",
    ),
    ("table_header_only", "| a | b |\n|---|---|"),
    (
        "code_with_language",
        "```rust\nfn main() {\n    println!(\"<hi> & bye\");\n}\n```",
    ),
    ("code_without_language", "```\nplain text\n  indented\n```"),
    ("code_indented", "Text:\n\n    indented code\n    <b>not bold</b>\n"),
    ("code_tilde_fence_odd_info", "~~~ c++ extra words\nint x;\n~~~\n\n```\"><b>\nx\n```"),
    ("code_nested_fences", "````markdown\n```js\nalert(1)\n```\n````"),
    ("code_unclosed_fence", "```python\nprint(1)\n\nstill code"),
    ("inline_code", "Use `a < b && c`, ``code with ` tick``, and ` padded `."),
    (
        "links",
        "[inline](https://a.example), [titled](https://b.example \"Title\"), [ref][r], [collapsed][], <https://auto.example/x?y=1&z=2>, <me@mail.example>, [relative](/x), [bad](javascript:alert(1)).\n\n[r]: https://ref.example\n[collapsed]: https://collapsed.example",
    ),
    (
        "images",
        "![alt text](https://img.example/a.png \"T\") and [![badge](https://img.example/b.svg)](https://ci.example) and ![](https://img.example/c.png) and ![x](/local.png)",
    ),
    (
        "blockquotes",
        "> quoted **text**\nlazy continuation\n\n> outer\n>> inner\n>\n> - list in quote\n>\n> ```\n> code in quote\n> ```",
    ),
    ("hard_breaks", "line one  \nline two\\\nline three\nsoft break"),
    ("rules", "above\n\n---\n\nbetween\n\n***\n\n___\nbelow"),
    (
        "raw_html_is_text",
        "<div align=\"center\">\n  <b>block html</b>\n</div>\n\nInline <kbd>Ctrl</kbd> and a<br>break and <!-- comment -->.",
    ),
    (
        "citations",
        "Rust 1.85 shipped the 2024 edition.[^1] The guide lists the changes.[^2][^12]\n\nNot citations: [^0], [^note], [^12345], `[^1]`.\n\n[^note]: A model's own footnote, with **markup**.",
    ),
    ("entities", "&copy; &amp; &lt;tag&gt; &#x1F600; &nbsp;|&#0;| &notanentity;"),
    ("rtl_text", "مرحبا **بالعالم**\n\nשלום [קישור](https://he.example)"),
    (
        "unicode_and_emoji",
        "Emoji 🎉, combining é, CJK 日本語, zero\u{200b}width, and a \u{202e}reversed\u{202c} run.\n\n`if access \u{202e}\u{2066}// admin\u{2069}\u{2066}` and\n\n```js\nif (role != \"user\u{202e} \u{2066}// admin\u{2069} \u{2066}\") {}\n```",
    ),
];

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

#[test]
fn ordinary_markdown_matches_reviewed_snapshots() {
    for (name, markdown) in CASES {
        let html = render(markdown);
        assert_safe(name, markdown, &html);
        let mut settings = settings();
        settings.set_description(*markdown);
        settings.bind(|| insta::assert_snapshot!(*name, html));
    }
}

#[test]
fn a_long_answer_matches_its_reviewed_snapshot() {
    let markdown = long_answer(3_000);
    let html = render(&markdown);
    assert_safe("long answer", &markdown, &html);
    let mut settings = settings();
    settings.set_description(markdown);
    settings.bind(|| insta::assert_snapshot!("long_answer", html));
}
