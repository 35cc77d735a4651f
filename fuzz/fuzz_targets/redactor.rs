//! The redactor on any text, whole and split in two: no panic, the secret never survives (in
//! any ASCII case), and text that holds no secret comes out unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ponder::server::redact::{Redactor, StreamRedactor};

const SECRET: &str = "sk-Fuzz-0123456789";

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let redactor = Redactor::new([SECRET]);
    let whole = redactor.redact(text);
    assert!(!whole.to_ascii_lowercase().contains(&SECRET.to_ascii_lowercase()));
    let mut cut = usize::from(cut).min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut stream = StreamRedactor::default();
    let mut shown = stream.push(&redactor, text[..cut].to_string());
    shown.push_str(&stream.push(&redactor, text[cut..].to_string()));
    shown.push_str(&stream.flush(&redactor));
    assert!(!shown.to_ascii_lowercase().contains(&SECRET.to_ascii_lowercase()));
    if whole == text {
        assert_eq!(shown, text, "text that holds no secret passes unchanged, split or not");
    }
});
