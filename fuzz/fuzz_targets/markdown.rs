//! The markdown renderer on any text: no panic, no dangerous markup in the output, the
//! incremental renderer (fed in two steps) ends with the same HTML as a whole render, and the
//! output is kept whole by the page's allow-list and comes back unchanged from ammonia
//! configured with it (the differential check, `ponder::markdown::ammonia_change`). The server's sanitizer takes the
//! text as HTML too, without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ponder::markdown::IncrementalMarkdown;

/// Every tag in `html` (text never holds a raw `<`: it is escaped), with its attributes.
fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let end = rest.find('>').unwrap_or(rest.len());
        let inner = rest[..end].trim_start_matches('/');
        rest = &rest[end..];
        let mut parts = inner.splitn(2, char::is_whitespace);
        let name = parts.next().unwrap_or("").to_ascii_lowercase();
        let mut attrs = Vec::new();
        let mut attr_text = parts.next().unwrap_or("");
        while let Some(eq) = attr_text.find("=\"") {
            let attr = attr_text[..eq].trim().to_ascii_lowercase();
            let value_start = eq + 2;
            let value_end = attr_text[value_start..].find('"').map_or(attr_text.len(), |e| value_start + e);
            attrs.push((attr, attr_text[value_start..value_end].to_ascii_lowercase()));
            attr_text = attr_text.get(value_end + 1..).unwrap_or("");
        }
        out.push((name, attrs));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let html = ponder::markdown::render(text);
    for (name, attrs) in tags(&html) {
        assert!(
            !["script", "iframe", "object", "embed", "svg", "math", "style", "form", "img", "base", "meta", "link"]
                .contains(&name.as_str()),
            "<{name}> in {html}"
        );
        for (attr, value) in attrs {
            assert!(!attr.starts_with("on") && attr != "style" && attr != "id" && attr != "name", "{attr} in {html}");
            if attr == "href" {
                assert!(
                    value.starts_with("http://") || value.starts_with("https://") || value.starts_with("mailto:"),
                    "href {value} in {html}"
                );
            }
        }
    }
    assert_eq!(ponder::markdown::allow_list_change(&html), None, "{text:?}");
    if ponder::markdown::markup_depth(&html) <= ponder::markdown::MAX_DEPTH {
        assert_eq!(ponder::markdown::ammonia_change(&html), None, "{text:?}");
    }
    let _ = ponder::markdown::sanitize(text);
    let mut cut = usize::from(cut).min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut incremental = IncrementalMarkdown::new();
    incremental.update(&text[..cut]);
    incremental.finish(text);
    assert_eq!(incremental.html(), html);
});
