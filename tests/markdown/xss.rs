//! Hostile input through the renderer: the corpus, generated URL encodings, and streaming.

use ponder::markdown::{render, IncrementalMarkdown};
use scraper::{Html, Node};

use crate::checker::{assert_safe, violations};
use crate::samples::{prefixes, xss_payloads, CONTEXTS};

fn hrefs(html: &str) -> Vec<String> {
    Html::parse_fragment(html)
        .tree
        .nodes()
        .filter_map(|node| match node.value() {
            Node::Element(element) => element.attr("href").map(str::to_string),
            _ => None,
        })
        .collect()
}

#[test]
fn the_corpus_is_large_and_well_formed() {
    let payloads = xss_payloads();
    assert!(payloads.len() >= 100, "only {} payloads", payloads.len());
    let mut labels: Vec<&str> = payloads.iter().map(|(label, _)| *label).collect();
    labels.sort_unstable();
    labels.dedup();
    assert_eq!(labels.len(), payloads.len(), "labels must be unique");
    for (label, payload) in &payloads {
        assert!(
            !label.trim().is_empty() && !payload.trim().is_empty(),
            "{label:?}"
        );
    }
    let multi_line = payloads.iter().filter(|(_, p)| p.contains('\n')).count();
    assert!(
        multi_line >= 10,
        "multi-line payloads must survive the format"
    );
}

#[test]
fn every_corpus_payload_renders_safely() {
    let failures: Vec<String> = xss_payloads()
        .into_iter()
        .filter_map(|(label, payload)| {
            let html = render(payload);
            let found = violations(&html);
            (!found.is_empty()).then(|| format!("{label}: {html:?}\n  - {}", found.join("\n  - ")))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_corpus_payload_streams_safely_at_every_byte() {
    for (label, payload) in xss_payloads() {
        let mut md = IncrementalMarkdown::new();
        for prefix in prefixes(payload) {
            md.update(prefix);
            let html = md.html();
            assert_safe(label, prefix, &html);
            assert_eq!(
                html,
                render(prefix),
                "{label}: streamed output differs at {prefix:?}"
            );
        }
        md.finish(payload);
        assert_eq!(md.finished_html(), render(payload), "{label}");
    }
}

/// Payloads embedded in an ordinary answer, as the model would stream them: the surrounding
/// markdown must not give a payload a context where it becomes live.
#[test]
fn payloads_inside_ordinary_markdown_stay_inert() {
    for (label, payload) in xss_payloads() {
        for context in CONTEXTS {
            let text = context.replace("{}", payload);
            assert_safe(label, &text, &render(&text));
        }
    }
}

/// Dangerous URLs in every encoding a browser would still decode, in every markdown and HTML
/// syntax that can carry a URL: none may come out as a link.
#[test]
fn encoded_dangerous_urls_never_become_links() {
    let targets = [
        "javascript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<b>x</b>",
        "data:text/html;base64,PHNjcmlwdD4=",
        "file:///etc/passwd",
        "blob:https://x.example/1",
    ];
    let mut checked = 0;
    for target in targets {
        let (scheme, rest) = target.split_once(':').unwrap();
        let mut forms: Vec<String> = vec![
            target.to_string(),
            target.to_uppercase(),
            format!("{}:{rest}", alternate_case(scheme)),
            format!("{}&#58;{rest}", scheme),
            format!("{}&#x3A;{rest}", scheme),
            format!("{}&colon;{rest}", scheme),
            format!("{}%3A{rest}", scheme),
            format!("%{:02X}{}:{rest}", scheme.as_bytes()[0], &scheme[1..]),
            format!(
                "{}:{rest}",
                encode_each(scheme, |c| format!("&#{};", c as u32))
            ),
            format!(
                "{}:{rest}",
                encode_each(scheme, |c| format!("&#x{:x};", c as u32))
            ),
            format!(
                "{}:{rest}",
                encode_each(scheme, |c| format!("&#{:07};", c as u32))
            ),
        ];
        for inside in [
            "\t",
            "\n",
            "\r",
            "&#9;",
            "&#10;",
            "&#13;",
            "&Tab;",
            "&NewLine;",
            "\0",
            "\u{ad}",
            "\u{200b}",
        ] {
            forms.push(format!("{}{inside}{}:{rest}", &scheme[..1], &scheme[1..]));
        }
        let leading = (0u8..=0x20)
            .map(|b| (b as char).to_string())
            .chain(["&#0;", "&#1;", "&#32;", "\u{feff}", "\u{a0}", "\u{3000}"].map(String::from));
        for lead in leading {
            forms.push(format!("{lead}{target}"));
        }
        for form in forms {
            for text in [
                format!("[x]({form})"),
                format!("[x](<{form}>)"),
                format!("![x]({form})"),
                format!("<{form}>"),
                format!("[x][r]\n\n[r]: {form}"),
                format!("[r]: <{form}> \"t\"\n\n[r]"),
                format!("<a href=\"{form}\">x</a>"),
                format!("[a [b]({form}) c](https://ok.example)"),
            ] {
                let html = render(&text);
                assert_safe("encoded URL", &text, &html);
                let links = hrefs(&html);
                assert!(
                    links.iter().all(|h| h == "https://ok.example/"),
                    "{text:?} produced links {links:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} variants");
}

#[test]
fn links_are_written_in_canonical_absolute_form() {
    for (markdown, href) in [
        ("[x](http:api/chat)", "http://api/chat"),
        ("[x](HTTPS://Example.COM/a)", "https://example.com/a"),
        (
            "[x](<https://example.com/a b>)",
            "https://example.com/a%20b",
        ),
        (
            "[x](https://\u{430}pple.example)",
            "https://xn--pple-43d.example/",
        ),
        ("<https://ok.example/\">", "https://ok.example/%22"),
        ("<x@y.example>", "mailto:x@y.example"),
        (
            "[x](https://ok.example/&quot;onmouseover=&quot;)",
            "https://ok.example/%22onmouseover=%22",
        ),
    ] {
        let html = render(markdown);
        assert_safe("canonical", markdown, &html);
        assert_eq!(
            hrefs(&html),
            vec![href.to_string()],
            "{markdown:?} → {html}"
        );
    }
}

#[test]
fn relative_links_are_dropped_but_their_text_kept() {
    for markdown in [
        "[keep me](/api/chat)",
        "[keep me](#x)",
        "[keep me](../x)",
        "[keep me](//evil.example)",
    ] {
        let html = render(markdown);
        assert_eq!(html, "<p>keep me</p>\n", "{markdown}");
    }
}

#[test]
fn images_are_links_never_loads() {
    let html = render("![chart](https://evil.example/c.png?d=1)");
    assert_safe("image", "", &html);
    assert_eq!(
        hrefs(&html),
        vec!["https://evil.example/c.png?d=1".to_string()]
    );
    assert!(html.contains("class=\"md-image\""), "{html}");
    assert!(html.contains("🖼 chart"), "{html}");
}

fn alternate_case(s: &str) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 2 == 0 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

fn encode_each(s: &str, f: impl Fn(char) -> String) -> String {
    s.chars().map(f).collect()
}
