//! The code highlighter on any text, in the languages models write: no panic, done (or given up)
//! within its deadline and the time one line may take, and what it writes is the block's text
//! in `hl-` spans and nothing else.
#![no_main]

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use ponder::domain::CodeItem;
use ponder::server::rich::{highlight_all, BLOCK_TIME};

const LANGS: [&str; 20] = [
    "rust", "python", "js", "ts", "bash", "perl", "ruby", "html", "css", "sql", "yaml", "json",
    "c", "cpp", "go", "java", "diff", "latex", "markdown", "php",
];

/// The block's text back from the highlighted HTML.
fn text_of(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        text.push_str(&rest[..at]);
        let end = rest[at..].find('>').map_or(rest.len(), |e| at + e + 1);
        let tag = &rest[at..end];
        assert!(
            tag == "</span>" || (tag.starts_with("<span class=\"hl-") && !tag[1..].contains('<')),
            "tag {tag:?} in {html}"
        );
        rest = &rest[end..];
    }
    text.push_str(rest);
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fuzz_target!(|data: &[u8]| {
    let Some((&lang, body)) = data.split_first() else {
        return;
    };
    let Ok(code) = std::str::from_utf8(body) else {
        return;
    };
    let item = CodeItem {
        lang: LANGS[usize::from(lang) % LANGS.len()].to_string(),
        code: code.to_string(),
    };
    let started = Instant::now();
    let out = highlight_all(std::slice::from_ref(&item), &AtomicBool::new(false));
    let took = started.elapsed();
    assert!(took < BLOCK_TIME + Duration::from_secs(3), "{took:?} on one block");
    if let Some(html) = &out[0] {
        assert_eq!(text_of(html), item.code);
    }
    let cancelled = highlight_all(std::slice::from_ref(&item), &AtomicBool::new(true));
    assert_eq!(cancelled[0], None);
});
