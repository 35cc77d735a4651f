//! The incremental renderer: exact at every step, safe at every step, and lazy.

use ponder::markdown::{render, IncrementalMarkdown, Update};

use crate::checker::assert_safe;
use ponder::server::demo_upstream::tokens;

use crate::samples::{long_answer, prefixes};

/// Top-level blocks of a text, counted the way the renderer sees them.
fn top_level_blocks(text: &str) -> usize {
    use pulldown_cmark::{Event, Options, Parser};
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut depth = 0usize;
    let mut blocks = 0;
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Start(_) => {
                blocks += usize::from(depth == 0);
                depth += 1;
            }
            Event::End(_) => depth -= 1,
            _ => blocks += usize::from(depth == 0),
        }
    }
    blocks
}

/// Feeds every character-boundary prefix of `text`, checking exactness and append-only
/// finished HTML at each step, then `finish`.
fn stream_every_prefix(text: &str) -> IncrementalMarkdown {
    let mut md = IncrementalMarkdown::new();
    let mut finished = String::new();
    for prefix in prefixes(text) {
        let update = md.update(prefix);
        assert_eq!(md.html(), render(prefix), "differs after {prefix:?}");
        match update {
            Update::Appended { from } => {
                assert_eq!(from, finished.len());
                assert!(
                    md.finished_html().starts_with(&finished),
                    "finished HTML changed after {prefix:?}"
                );
            }
            Update::Reset => {}
            Update::Unchanged => panic!("a longer text is a change"),
        }
        finished = md.finished_html().to_string();
    }
    md.finish(text);
    assert_eq!(md.finished_html(), render(text));
    assert_eq!(md.tail_html(), "");
    md
}

/// Inputs whose block structure changes late: each is streamed byte by byte and must equal a
/// whole render at every step.
const TRICKY: &[&str] = &[
    "Foo\n===\n\nBar\n---\n\nBaz\n",
    "Foo\n#\n\nx\n",
    "Foo\n#x\nmore\n\nnext\n",
    "para\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter\n",
    "foo\n| a |\n|--x\nmore\n\nend\n",
    "| a |\n|--|\nrow without pipes\n\npara\n",
    "| a | b |\n|---|---\n| 1 | 2 |\n| 3 | 4 |\n# h\n",
    "- a\n- b\n\n- c\n\nd\n\n1. x\n\n   y\n2. z\n\ne\n",
    "1. a\n\n\n2. b\n\n3) c\n",
    "- a\n\nFoo\n---\n- b\n",
    "> quote\nlazy\n\n> new\n\npara\n",
    "```\ncode\n\n\nmore\n```\nafter\n\n~~~\nx\n~~~~\ny\n",
    "````\n```\ninner\n```\n````\n\nout\n",
    "    indented\n\n    more\nx\n\n    again\n",
    "Text with *emphasis\nacross* lines\n\nnext `code\nspan` end\n",
    "<div>\nhtml\n\nafter\n\n<pre>\n\nstill\n</pre>\nlast\n",
    "* * *\n- - -\n___\ntext\n",
    "-\tfoo\n\n\tbar\n\nbaz\n",
    "a\r\n\r\nb\r\n===\r\n\r\n- x\r\n- y\r\n",
    "a\rb\r\rc\r# h\r",
    "p\n```a\rb\rc``\n\nq\n",
    "# h1\n## h2\ntext\n### h3\n",
    "Term\n: not a definition list\n\n[^1]: not a footnote\n",
    "<https://a.example>\n\n<x@y.example> [link](https://b.example \"t\")\n",
    "Area $\\int_0^1 x^2\\,dx$ is \\(\\frac{1}{3}\\).\n\n$$a_1 *b* c_2$$\n\n\\[ E = mc^2 \\]\n\n$5 and $10.\n",
];

#[test]
fn tricky_block_boundaries_match_a_whole_render_at_every_byte() {
    for text in TRICKY {
        let md = stream_every_prefix(text);
        assert_eq!(md.stats().resets, 0, "{text:?}");
    }
}

/// Reference definitions are global; late ones rebuild, early ones reach the tail.
#[test]
fn reference_definitions_anywhere_keep_the_output_exact() {
    for text in [
        "[foo]\n\npara\n\n[foo]: https://a.example\n\n[foo] again\n",
        "[foo]: https://a.example\n\n[foo]\n\n[foo]: https://b.example\n\n[foo]\n",
        "[foo]: https://a.example\n'title'\n\npara\n\n[FOO] and [Foo][]\n",
        "[a b]: https://a.example\n\npara\n\n[A  B] and [a\nb]\n",
        "[ẞ]: https://a.example\n\npara\n\n[ss] [ß]\n",
        "[x]: https://a.example\n\n> [x]\n>\n> [y]\n\n[y]: https://b.example\n",
    ] {
        stream_every_prefix(text);
    }
    let mut md = IncrementalMarkdown::new();
    md.update("[foo]\n\npara\n\nmore\n\n");
    let before = md.stats().resets;
    assert_eq!(
        md.update("[foo]\n\npara\n\nmore\n\n[foo]: https://a.example\n"),
        Update::Reset
    );
    assert_eq!(md.stats().resets, before + 1);
    assert!(
        md.html().contains("href=\"https://a.example/\""),
        "{}",
        md.html()
    );
}

#[test]
fn a_streamed_long_answer_is_exact_safe_and_lazy() {
    let text = long_answer(8_000);
    let mut md = IncrementalMarkdown::new();
    let mut so_far = String::new();
    let mut finished = String::new();
    let mut naive_bytes = 0;
    for (i, token) in tokens(&text).into_iter().enumerate() {
        so_far.push_str(token);
        naive_bytes += so_far.len();
        assert!(matches!(md.update(&so_far), Update::Appended { .. }));
        assert!(
            md.finished_html().starts_with(&finished),
            "a finished block changed"
        );
        finished = md.finished_html().to_string();
        // A whole render per step is the quadratic cost this type avoids; in a debug build,
        // comparing against it at every 5th token keeps the test quick. The tricky inputs
        // above are compared at every byte.
        if i % 5 == 0 {
            let html = md.html();
            assert_safe("long answer", &so_far, &html);
            assert_eq!(
                html,
                render(&so_far),
                "differs after {} bytes",
                so_far.len()
            );
        }
    }
    let stats = md.stats();
    assert_eq!(stats.resets, 0);
    let blocks = top_level_blocks(&text);
    // Every block but the open tail (one or two blocks) was rendered into the finished HTML,
    // and none twice: a re-render would push the count past the number of blocks.
    assert!(
        stats.blocks_finished <= blocks && stats.blocks_finished + 2 >= blocks,
        "{} finished of {blocks}",
        stats.blocks_finished
    );
    assert!(
        stats.bytes_parsed * 20 < naive_bytes,
        "parsed {} bytes, a full re-render each time parses {naive_bytes}",
        stats.bytes_parsed
    );
    assert_eq!(
        md.finish(&text),
        Update::Appended {
            from: finished.len()
        }
    );
    assert_eq!(md.finished_html(), render(&text));
    assert_eq!(md.stats().full_renders, 0);
}

#[test]
fn finished_blocks_are_rendered_once() {
    let paragraphs: Vec<String> = (1..=50).map(|i| format!("Paragraph {i}.\n\n")).collect();
    let mut md = IncrementalMarkdown::new();
    let mut text = String::new();
    for paragraph in &paragraphs {
        text.push_str(paragraph);
        md.update(&text);
    }
    // The last paragraph's line is followed by one complete line only: it and the one
    // before may still be open; the 48 before are final.
    assert_eq!(md.stats().blocks_finished, 49);
    assert_eq!(md.stats().tail_renders, 50);
    // Each update parses at most the previous paragraph and the new one.
    assert!(md.stats().bytes_parsed <= 50 * 2 * "Paragraph 50.\n\n".len());
    md.update(&text);
    assert_eq!(
        md.stats().tail_renders,
        50,
        "the same text again is no work"
    );
}

#[test]
fn a_code_fence_arriving_in_pieces_never_breaks_the_prefix() {
    let text = "Intro with `code`.\n\n```rust\nfn main() {\n    println!(\"</code></pre><p>\");\n}\n```\n\nAfter the fence.\n\n- list\n";
    let mut md = IncrementalMarkdown::new();
    for prefix in prefixes(text) {
        md.update(prefix);
        let html = md.html();
        assert_safe("fence", prefix, &html);
        assert_eq!(html, render(prefix));
        if prefix.contains("```") {
            assert!(
                md.html()
                    .starts_with("<p>Intro with <code>code</code>.</p>\n"),
                "{html}"
            );
            assert_eq!(
                html.matches("<div class=\"code-block\">").count(),
                1,
                "{html}"
            );
        }
    }
}

#[test]
fn lists_and_tables_arriving_in_pieces_render_at_every_step() {
    let text = "Steps:\n\n1. first\n2. second\n   - nested\n3. third\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\nDone.\n";
    let mut md = IncrementalMarkdown::new();
    for prefix in prefixes(text) {
        md.update(prefix);
        let html = md.html();
        assert_safe("list and table", prefix, &html);
        assert_eq!(html, render(prefix));
        if prefix.ends_with("|---|:-:|\n") {
            assert!(html.contains("<th class=\"align-center\">b</th>"), "{html}");
        }
    }
}

#[test]
fn a_text_that_is_not_an_extension_starts_over() {
    let mut md = IncrementalMarkdown::new();
    md.update("first paragraph\n\nsecond\n\nthird\n");
    assert!(!md.finished_html().is_empty());
    assert_eq!(
        md.update("first paragraph\n\nsecond\n\nthird\n"),
        Update::Unchanged
    );
    assert_eq!(md.update("other"), Update::Reset);
    assert_eq!(md.html(), render("other"));
    // Nothing was finished yet, so a shorter text only replaces the tail.
    assert_eq!(md.update(""), Update::Appended { from: 0 });
    assert_eq!(md.html(), "");
    md.finish("done\n\nnow");
    assert_eq!(md.finish("done\n\nnow"), Update::Unchanged);
    assert_eq!(md.update("done\n\nnow, more"), Update::Reset);
    assert_eq!(md.html(), render("done\n\nnow, more"));
}

#[test]
fn finish_renders_the_whole_text_when_references_exist() {
    let text = "[a]\n\nx\n\ny\n\n[a]: https://a.example\n";
    let mut md = IncrementalMarkdown::new();
    let mut end = 0;
    for token in tokens(text) {
        end += token.len();
        md.update(&text[..end]);
    }
    assert_eq!(md.finish(text), Update::Reset);
    assert_eq!(md.finished_html(), render(text));
    assert_eq!(md.stats().full_renders, 1);
}
