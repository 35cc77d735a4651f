//! Secrets never leave the server: every text that goes to a browser or a log line passes
//! through one [`Redactor`], built at start from the API key and any password in the upstream
//! URL.
//!
//! Matching is done on decoded text (after JSON and SSE decoding), ignoring ASCII case and
//! reading `%XY` escapes as the byte they stand for, so a key echoed plain, upper-cased, or
//! percent-encoded (wholly or in part) is found. Base64 copies are found at any alignment inside
//! a longer base64 string (as in `Basic` credentials). A streamed text is redacted with a
//! [`StreamRedactor`], which holds back only a tail that could be the start of a secret, so a key
//! split across two deltas is caught too.

use crate::domain::FinishReason;
use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine;

use crate::domain::{Failure, TurnEvent};

/// What a secret is replaced with.
pub const MASK: &str = "[redacted]";

/// Secrets shorter than this are not looked for: they would mask ordinary words.
const MIN_SECRET: usize = 4;

/// Base64 fragments shorter than this are not looked for: they occur in ordinary text.
const MIN_BASE64: usize = 8;

/// Finds and masks the configured secrets in any text.
#[derive(Clone, Debug)]
pub struct Redactor {
    /// Normalized forms (ASCII lower-case bytes) of every way a secret may appear.
    needles: Vec<Vec<u8>>,
    first_bytes: [bool; 256],
    longest: usize,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new([])
    }
}

/// One unit of normalized text: the byte it stands for and where it is in the original.
#[derive(Clone, Copy)]
struct Unit {
    byte: u8,
    start: usize,
    end: usize,
}

impl Redactor {
    /// A redactor for `secrets`; empty ones and ones under four bytes are ignored.
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let mut needles: Vec<Vec<u8>> = Vec::new();
        for secret in secrets {
            if secret.len() < MIN_SECRET {
                continue;
            }
            needles.push(secret.as_bytes().to_ascii_lowercase());
            for core in base64_cores(secret.as_bytes()) {
                if core.len() >= MIN_BASE64 {
                    needles.push(core.to_ascii_lowercase());
                }
            }
        }
        needles.sort();
        needles.dedup();
        let mut first_bytes = [false; 256];
        for needle in &needles {
            first_bytes[needle[0] as usize] = true;
        }
        let longest = needles.iter().map(Vec::len).max().unwrap_or(0);
        Redactor {
            needles,
            first_bytes,
            longest,
        }
    }

    /// True when there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// A failure with every secret masked: its message and every parameter's value (an upstream's
    /// `detail` may repeat the key as the message does).
    pub fn redact_failure(&self, mut failure: Failure) -> Failure {
        if self.is_empty() {
            return failure;
        }
        if let Cow::Owned(masked) = self.redact(&failure.message) {
            failure.message = masked;
        }
        for value in failure.params.values_mut() {
            if let Cow::Owned(masked) = self.redact(value) {
                *value = masked;
            }
        }
        failure
    }

    /// `text` with every copy of a secret replaced by [`MASK`].
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.is_empty() || text.len() < MIN_SECRET {
            return Cow::Borrowed(text);
        }
        let units = normalize(text);
        let spans = self.matches(&units);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(MASK);
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// [`Self::redact`] for a summary that may have been cut (it then ends in `…`): a secret
    /// the cut left only the start of is masked too, when that start is long enough to mean
    /// something (a few characters of a prefix like `sk-` reveal nothing).
    pub fn redact_summary(&self, text: &str) -> String {
        let text = self.redact(text).into_owned();
        let Some(body) = text.strip_suffix('…') else {
            return text;
        };
        let cut = self.partial_tail(body);
        if body.len() - cut < MIN_CUT_SECRET {
            return text;
        }
        format!("{}{MASK}…", &body[..cut])
    }

    /// Byte spans of `text` (from `units`) covered by a secret, in order, not overlapping.
    fn matches(&self, units: &[Unit]) -> Vec<(usize, usize)> {
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < units.len() {
            if !self.first_bytes[units[i].byte as usize] {
                i += 1;
                continue;
            }
            let found = self
                .needles
                .iter()
                .filter(|n| n.len() <= units.len() - i)
                .filter(|n| n.iter().zip(&units[i..]).all(|(b, u)| *b == u.byte))
                .map(Vec::len)
                .max();
            match found {
                Some(len) => {
                    spans.push((units[i].start, units[i + len - 1].end));
                    i += len;
                }
                None => i += 1,
            }
        }
        spans
    }

    /// Where the longest tail of `text` starts that could be the beginning of a secret (the
    /// text's length when none could).
    fn partial_tail(&self, text: &str) -> usize {
        if self.is_empty() {
            return text.len();
        }
        let from = text.len().saturating_sub(self.longest * 3);
        let from = (from..=text.len())
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(text.len());
        let tail = &text[from..];
        let units = normalize(tail);
        // A `%` or `%X` at the very end may become an escape once the next piece arrives: its
        // units stand for one byte not known yet.
        let t = tail.as_bytes();
        let n = t.len();
        let open_units = if n >= 1 && t[n - 1] == b'%' {
            1
        } else if n >= 2 && t[n - 2] == b'%' && t[n - 1].is_ascii_hexdigit() {
            2
        } else {
            0
        };
        let complete = units.len().saturating_sub(open_units);
        for k in 0..=complete {
            let rest = &units[k..complete];
            if rest.is_empty() && open_units == 0 {
                break;
            }
            let is_prefix = self.needles.iter().any(|needle| {
                needle.len() > rest.len() && needle.iter().zip(rest).all(|(b, u)| *b == u.byte)
            });
            if is_prefix {
                return from + units[k].start;
            }
        }
        text.len()
    }
}

/// How much of a secret's start a cut summary may end with before it is masked.
const MIN_CUT_SECRET: usize = 4;

/// Masks secrets in a text that arrives in pieces (the reasoning of a block, the answer).
#[derive(Debug, Default)]
pub struct StreamRedactor {
    held: String,
}

impl StreamRedactor {
    /// The next piece; returns what can be shown now. A tail that may be the start of a secret
    /// is held until the next piece or [`Self::flush`].
    pub fn push(&mut self, redactor: &Redactor, piece: String) -> String {
        if redactor.is_empty() {
            return piece;
        }
        let mut text = std::mem::take(&mut self.held);
        text.push_str(&piece);
        let mut text = redactor.redact(&text).into_owned();
        let cut = redactor.partial_tail(&text);
        self.held = text[cut..].to_string();
        text.truncate(cut);
        text
    }

    /// The text ended: what was held back, redacted.
    pub fn flush(&mut self, redactor: &Redactor) -> String {
        let held = std::mem::take(&mut self.held);
        redactor.redact(&held).into_owned()
    }
}

/// Masks secrets in every event of one turn before it is framed for the browser: the reasoning
/// and the answer as streams (a secret split across two pieces is caught), the error message
/// and the finish reason whole. Text held back is let out, in order, before the next event of
/// another kind.
pub struct TurnRedactor {
    redactor: Arc<Redactor>,
    thinking: StreamRedactor,
    thinking_block: Option<u32>,
    answer: StreamRedactor,
}

impl TurnRedactor {
    pub fn new(redactor: Arc<Redactor>) -> Self {
        TurnRedactor {
            redactor,
            thinking: StreamRedactor::default(),
            thinking_block: None,
            answer: StreamRedactor::default(),
        }
    }

    /// Appends `event`, redacted, to `out`, after any held text it has to follow.
    pub fn push(&mut self, event: TurnEvent, out: &mut Vec<TurnEvent>) {
        if self.redactor.is_empty() {
            out.push(event);
            return;
        }
        match event {
            TurnEvent::Thinking { block, text } => {
                if self.thinking_block != Some(block) {
                    self.flush_thinking(out);
                }
                self.flush_answer(out);
                self.thinking_block = Some(block);
                let text = self.thinking.push(&self.redactor, text);
                if !text.is_empty() {
                    out.push(TurnEvent::Thinking { block, text });
                }
            }
            TurnEvent::Delta { text } => {
                self.flush_thinking(out);
                let text = self.answer.push(&self.redactor, text);
                if !text.is_empty() {
                    out.push(TurnEvent::Delta { text });
                }
            }
            TurnEvent::Error(failure) => {
                self.flush_all(out);
                out.push(TurnEvent::Error(self.redactor.redact_failure(failure)));
            }
            TurnEvent::Done {
                finish_reason,
                usage,
                thinking_chars,
                total_ms,
            } => {
                self.flush_all(out);
                out.push(TurnEvent::Done {
                    finish_reason: FinishReason::parse(
                        &self.redactor.redact(finish_reason.as_str()),
                    ),
                    usage,
                    thinking_chars,
                    total_ms,
                });
            }
            TurnEvent::ToolStart { tool, name, input } => {
                self.flush_all(out);
                out.push(TurnEvent::ToolStart {
                    tool,
                    name: self.redactor.redact_summary(&name),
                    input: self.redactor.redact_summary(&input),
                });
            }
            TurnEvent::ToolEnd {
                tool,
                status,
                output,
            } => {
                self.flush_all(out);
                out.push(TurnEvent::ToolEnd {
                    tool,
                    status,
                    output: self.redactor.redact_summary(&output),
                });
            }
            TurnEvent::Source { n, url, title } => {
                self.flush_all(out);
                out.push(TurnEvent::Source {
                    n,
                    url: self.redactor.redact(&url).into_owned(),
                    title: title.map(|t| self.redactor.redact_summary(&t)),
                });
            }
            other => {
                self.flush_all(out);
                out.push(other);
            }
        }
    }

    fn flush_all(&mut self, out: &mut Vec<TurnEvent>) {
        self.flush_thinking(out);
        self.flush_answer(out);
    }

    fn flush_thinking(&mut self, out: &mut Vec<TurnEvent>) {
        let text = self.thinking.flush(&self.redactor);
        if let (false, Some(block)) = (text.is_empty(), self.thinking_block) {
            out.push(TurnEvent::Thinking { block, text });
        }
    }

    fn flush_answer(&mut self, out: &mut Vec<TurnEvent>) {
        let text = self.answer.flush(&self.redactor);
        if !text.is_empty() {
            out.push(TurnEvent::Delta { text });
        }
    }
}

/// The text as a sequence of bytes to match against: ASCII lower-cased, `%XY` read as its byte.
fn normalize(text: &str) -> Vec<Unit> {
    let bytes = text.as_bytes();
    let mut units = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                units.push(Unit {
                    byte: (hi << 4 | lo).to_ascii_lowercase(),
                    start: i,
                    end: i + 3,
                });
                i += 3;
                continue;
            }
        }
        units.push(Unit {
            byte: bytes[i].to_ascii_lowercase(),
            start: i,
            end: i + 1,
        });
        i += 1;
    }
    units
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The base64 characters that encode only `secret`'s bytes, for each of the three alignments it
/// can have inside a longer encoded string, in the standard and the URL-safe alphabet.
fn base64_cores(secret: &[u8]) -> Vec<Vec<u8>> {
    let mut cores = Vec::new();
    for offset in 0..3usize {
        let mut input = vec![0u8; offset];
        input.extend_from_slice(secret);
        for engine in [
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            let encoded = engine.encode(&input);
            let first = (8 * offset).div_ceil(6);
            let last = (8 * (offset + secret.len())) / 6;
            if last > first && last <= encoded.len() {
                cores.push(encoded.as_bytes()[first..last].to_vec());
            }
        }
    }
    cores
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-Test-0123456789abcdefXYZ";

    fn redactor() -> Redactor {
        Redactor::new([KEY, "hunter2pass"])
    }

    #[test]
    fn plain_and_case_changed_copies_are_masked() {
        let r = redactor();
        assert_eq!(r.redact(&format!("key {KEY} end")), "key [redacted] end");
        assert_eq!(
            r.redact(&KEY.to_ascii_uppercase()),
            "[redacted]",
            "upper-cased"
        );
        assert_eq!(r.redact("nothing here"), "nothing here");
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn percent_encoded_copies_are_masked_wholly_or_in_part() {
        let r = redactor();
        let full: String = KEY.bytes().map(|b| format!("%{b:02X}")).collect();
        assert_eq!(r.redact(&format!("u={full}&x")), "u=[redacted]&x");
        let lower: String = KEY.bytes().map(|b| format!("%{b:02x}")).collect();
        assert_eq!(r.redact(&lower), "[redacted]");
        let mixed = KEY.replacen('-', "%2d", 1);
        assert_eq!(r.redact(&mixed), "[redacted]");
    }

    #[test]
    fn base64_copies_are_masked_at_every_alignment() {
        let r = redactor();
        for prefix in ["", "a", "ab", "user:", "Bearer "] {
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{prefix}{KEY}!"));
            let out = r.redact(&encoded);
            assert!(out.contains(MASK), "{prefix:?}: {encoded} -> {out}");
            let url = base64::engine::general_purpose::URL_SAFE.encode(format!("{prefix}{KEY}"));
            assert!(r.redact(&url).contains(MASK), "url-safe {prefix:?}");
        }
    }

    #[test]
    fn short_secrets_are_ignored() {
        let r = Redactor::new(["abc", ""]);
        assert!(r.is_empty());
        assert_eq!(r.redact("abc abc"), "abc abc");
    }

    #[test]
    fn non_ascii_secrets_and_text_stay_whole() {
        let r = Redactor::new(["pässwörd"]);
        assert_eq!(r.redact("é pässwörd ü"), "é [redacted] ü");
        assert_eq!(r.redact("p%C3%A4sswörd"), "[redacted]");
        assert_eq!(r.redact("日本語"), "日本語");
    }

    fn streamed(r: &Redactor, pieces: &[&str]) -> (String, Vec<String>) {
        let mut s = StreamRedactor::default();
        let mut shown = Vec::new();
        for p in pieces {
            shown.push(s.push(r, p.to_string()));
        }
        shown.push(s.flush(r));
        (shown.concat(), shown)
    }

    #[test]
    fn a_secret_split_across_pieces_is_masked() {
        let r = redactor();
        for cut in 1..KEY.len() {
            let (a, b) = KEY.split_at(cut);
            let (text, _) = streamed(&r, &[&format!("x {a}"), &format!("{b} y")]);
            assert_eq!(text, "x [redacted] y", "cut at {cut}");
        }
        let bytes: Vec<String> = format!("<{KEY}>").chars().map(String::from).collect();
        let pieces: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(streamed(&r, &pieces).0, "<[redacted]>");
    }

    #[test]
    fn a_split_percent_escape_is_held_until_complete() {
        let r = redactor();
        let full: String = KEY.bytes().map(|b| format!("%{b:02X}")).collect();
        let (a, b) = full.split_at(1);
        assert_eq!(streamed(&r, &[a, b]).0, MASK);
        let (a, b) = full.split_at(2);
        assert_eq!(streamed(&r, &[a, b]).0, MASK);
    }

    #[test]
    fn ordinary_text_streams_without_delay() {
        let r = redactor();
        let (text, shown) = streamed(&r, &["Hello, ", "world. ", "Fine."]);
        assert_eq!(text, "Hello, world. Fine.");
        assert_eq!(shown[0], "Hello, ");
        assert_eq!(shown[1], "world. ");
        // Only a tail that begins like a secret waits for the next piece.
        let (text, shown) = streamed(&r, &["ask", " more"]);
        assert_eq!(text, "ask more");
        assert_eq!(shown[0], "a");
    }

    #[test]
    fn a_turn_keeps_its_event_order_and_masks_every_text() {
        use crate::domain::ThinkingKind;
        let (a, b) = KEY.split_at(5);
        let events = vec![
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            TurnEvent::Thinking {
                block: 0,
                text: format!("I see {a}"),
            },
            TurnEvent::Thinking {
                block: 0,
                text: format!("{b}."),
            },
            TurnEvent::Thinking {
                block: 0,
                text: " Then s".into(),
            },
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(1),
                cut_short: false,
            },
            TurnEvent::Delta {
                text: format!("Answer {a}"),
            },
            TurnEvent::Error(Failure::new(format!("upstream said {KEY}"), true)),
        ];
        let mut turn = TurnRedactor::new(Arc::new(redactor()));
        let mut out = Vec::new();
        for e in events {
            turn.push(e, &mut out);
        }
        let wire = serde_json::to_string(&out).unwrap();
        assert!(!wire.contains(a) || !wire.contains(b), "{wire}");
        assert!(!wire
            .to_ascii_lowercase()
            .contains(&KEY.to_ascii_lowercase()));
        let thinking: String = out
            .iter()
            .filter_map(|e| match e {
                TurnEvent::Thinking { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(thinking, "I see [redacted]. Then s");
        // The held " s" came out before the block's end, and the partial answer before the error.
        let end = out
            .iter()
            .position(|e| matches!(e, TurnEvent::ThinkingEnd { .. }))
            .unwrap();
        assert!(matches!(&out[end - 1], TurnEvent::Thinking { text, .. } if text.ends_with('s')));
        assert!(matches!(&out[out.len() - 2], TurnEvent::Delta { .. }));
        assert!(
            matches!(out.last(), Some(TurnEvent::Error(Failure { message, .. })) if message == "upstream said [redacted]")
        );
    }

    #[test]
    fn an_errors_params_are_masked_like_its_message() {
        use crate::domain::ErrorCode;
        let failure = Failure::coded(
            ErrorCode::UpstreamStatus,
            format!("The model server answered 401 Unauthorized: bad key {KEY}"),
            false,
        )
        .with("status", 401)
        .with("detail", format!("bad key {}", KEY.to_ascii_uppercase()));
        let mut turn = TurnRedactor::new(Arc::new(redactor()));
        let mut out = Vec::new();
        turn.push(TurnEvent::Error(failure), &mut out);
        let [TurnEvent::Error(masked)] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert_eq!(masked.code, ErrorCode::UpstreamStatus);
        assert_eq!(masked.param("status"), "401");
        assert_eq!(masked.param("detail"), "bad key [redacted]");
        assert!(masked.message.ends_with("bad key [redacted]"), "{masked:?}");
        let wire = serde_json::to_string(&out).unwrap().to_ascii_lowercase();
        assert!(!wire.contains(&KEY.to_ascii_lowercase()), "{wire}");
    }

    #[test]
    fn tool_steps_and_sources_are_masked_and_a_citation_follows_the_text_it_marks() {
        let events = vec![
            TurnEvent::ToolStart {
                tool: 0,
                name: format!("tool {KEY}"),
                input: format!("query {KEY}"),
            },
            TurnEvent::ToolEnd {
                tool: 0,
                status: crate::domain::ToolStatus::Finished,
                output: format!("found {KEY}"),
            },
            TurnEvent::Source {
                n: 1,
                url: format!("https://x.example/?k={KEY}"),
                title: Some(format!("T {KEY}")),
            },
            TurnEvent::Delta {
                text: "Fact a".into(),
            },
            TurnEvent::Cite { n: 1 },
        ];
        let mut turn = TurnRedactor::new(Arc::new(redactor()));
        let mut out = Vec::new();
        for e in events {
            turn.push(e, &mut out);
        }
        let wire = serde_json::to_string(&out).unwrap();
        assert!(!wire.contains(KEY), "{wire}");
        assert_eq!(wire.matches(MASK).count(), 5, "{wire}");
        let cite = out
            .iter()
            .position(|e| matches!(e, TurnEvent::Cite { .. }))
            .unwrap();
        let before: String = out[..cite]
            .iter()
            .filter_map(|e| match e {
                TurnEvent::Delta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(before, "Fact a", "the held tail came out before the marker");
    }

    #[test]
    fn a_secret_a_summary_cut_is_masked_from_its_start() {
        let r = redactor();
        let cut = format!("stdout: {}…", &KEY[..12]);
        assert_eq!(r.redact_summary(&cut), format!("stdout: {MASK}…"));
        let short = format!("stdout: {}…", &KEY[..2]);
        assert_eq!(
            r.redact_summary(&short),
            short,
            "two characters reveal nothing"
        );
        assert_eq!(r.redact_summary("results…"), "results…");
        assert_eq!(
            r.redact_summary(&format!("a {KEY} b")),
            format!("a {MASK} b")
        );
    }
}
