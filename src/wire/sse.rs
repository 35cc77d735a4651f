//! Server-sent events, both ways: encoding turn events for the browser, and decoding any SSE
//! or newline-delimited byte stream whatever its chunk boundaries.
//!
//! Decoding works on bytes and only turns whole lines into text, so a multi-byte character
//! split across network chunks is never mangled. The same decoder reads the upstream provider
//! streams on the server and Ponder's own turn stream in the browser.

use crate::domain::TurnEvent;

/// The comment line sent while the upstream is silent, so proxies keep the connection open.
pub const KEEP_ALIVE: &str = ": keep-alive\n\n";

/// Appends one turn event as an SSE frame (`data: {json}` and a blank line) to `out`.
///
/// JSON escapes newlines inside strings, so the frame always has exactly one `data:` line.
pub fn encode_event(event: &TurnEvent, out: &mut String) {
    out.push_str("data: ");
    match serde_json::to_string(event) {
        Ok(json) => out.push_str(&json),
        Err(_) => out.push_str(
            r#"{"type":"error","message":"event could not be encoded","retryable":true,"code":"other"}"#,
        ),
    }
    out.push_str("\n\n");
}

/// Appends one event of a resumable turn: its sequence number as the SSE `id:` (what a viewer
/// that reconnects sends back as `Last-Event-ID`), then the event as [`encode_event`] writes it.
pub fn encode_numbered_event(seq: u64, event: &TurnEvent, out: &mut String) {
    out.push_str("id: ");
    out.push_str(&seq.to_string());
    out.push('\n');
    encode_event(event, out);
}

/// The line cap upstream decoders get unless configured: a line past it is a broken or hostile
/// stream, not a message.
pub const DEFAULT_LINE_LIMIT: usize = 1 << 20;

/// A line (or frame, or object) grew past the decoder's limit: the stream cannot be read on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLong {
    pub limit: usize,
}

/// The UTF-8 byte-order mark, which some servers put before the first line of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Splits bytes into lines ended by LF, CRLF or a lone CR, across any chunking. A byte-order
/// mark at the very start is dropped, and a line longer than the limit stops the decoder.
#[derive(Debug)]
pub struct LineDecoder {
    buf: Vec<u8>,
    scanned: usize,
    skip_lf: bool,
    started: bool,
    limit: usize,
    overflowed: bool,
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::with_limit(usize::MAX)
    }
}

impl LineDecoder {
    /// A decoder that refuses lines over `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        LineDecoder {
            buf: Vec::new(),
            scanned: 0,
            skip_lf: false,
            started: false,
            limit,
            overflowed: false,
        }
    }

    /// Feeds a chunk; calls `on_line` with each complete line, without its terminator. Once a
    /// line has outgrown the limit, nothing more is read and every call answers [`TooLong`].
    pub fn push(
        &mut self,
        mut chunk: &[u8],
        mut on_line: impl FnMut(&[u8]),
    ) -> Result<(), TooLong> {
        if self.overflowed {
            return Err(TooLong { limit: self.limit });
        }
        if self.skip_lf {
            self.skip_lf = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        self.buf.extend_from_slice(chunk);
        if !self.started {
            if self.buf.len() < BOM.len() && BOM.starts_with(&self.buf) {
                return Ok(());
            }
            self.started = true;
            if self.buf.starts_with(BOM) {
                self.buf.drain(..BOM.len());
            }
        }
        let mut start = 0;
        let mut i = self.scanned;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' => {
                    if i - start > self.limit {
                        return self.overflow();
                    }
                    on_line(&self.buf[start..i]);
                    start = i + 1;
                }
                b'\r' => {
                    if i - start > self.limit {
                        return self.overflow();
                    }
                    on_line(&self.buf[start..i]);
                    if i + 1 == self.buf.len() {
                        self.skip_lf = true;
                    } else if self.buf[i + 1] == b'\n' {
                        i += 1;
                    }
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if self.buf.len() > self.limit {
            return self.overflow();
        }
        Ok(())
    }

    fn overflow(&mut self) -> Result<(), TooLong> {
        self.overflowed = true;
        self.buf = Vec::new();
        self.scanned = 0;
        Err(TooLong { limit: self.limit })
    }

    /// Ends the input: a last line without a terminator is still a line.
    pub fn finish(&mut self, mut on_line: impl FnMut(&[u8])) {
        if !self.buf.is_empty() && !self.overflowed {
            on_line(&self.buf);
        }
        self.buf.clear();
        self.scanned = 0;
        self.skip_lf = false;
    }

    /// Bytes held while waiting for the end of a line.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The longest line this decoder accepts.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// One dispatched SSE event: its `event:` name, if any, its `data:` lines joined by `\n`, and
/// the `id:` it carried, if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseFrame {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
}

/// Turns SSE lines into frames, following the WHATWG event-stream rules: comments are
/// skipped, `data:` lines accumulate, a blank line dispatches. The line limit also bounds a
/// frame's data, however many lines it is made of.
#[derive(Debug, Default)]
pub struct SseDecoder {
    lines: LineDecoder,
    frame: PendingFrame,
}

/// The frame being read: its fields so far, and whether it outgrew the limit.
#[derive(Debug, Default)]
struct PendingFrame {
    event: Option<String>,
    id: Option<String>,
    data: String,
    has_data: bool,
    too_long: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that refuses lines and frames over `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        SseDecoder {
            lines: LineDecoder::with_limit(limit),
            ..Self::default()
        }
    }

    /// Feeds a chunk and appends every frame it completes to `out`. A frame whose data
    /// outgrows the limit is never dispatched, and the decoder stops.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseFrame>) -> Result<(), TooLong> {
        let limit = self.lines.limit();
        if self.frame.too_long {
            return Err(TooLong { limit });
        }
        let frame = &mut self.frame;
        self.lines
            .push(chunk, |line| frame.on_line(line, limit, out))?;
        if self.frame.too_long {
            self.frame = PendingFrame {
                too_long: true,
                ..PendingFrame::default()
            };
            return Err(TooLong { limit });
        }
        Ok(())
    }

    /// Ends the input. A frame not followed by a blank line is still dispatched: some servers
    /// close the body right after their last `data:` line.
    pub fn finish(&mut self, out: &mut Vec<SseFrame>) {
        let limit = self.lines.limit();
        let frame = &mut self.frame;
        self.lines.finish(|line| frame.on_line(line, limit, out));
        self.frame.on_line(b"", limit, out);
    }

    /// Bytes held while waiting for the end of a line.
    pub fn buffered(&self) -> usize {
        self.lines.buffered() + self.frame.data.len()
    }
}

impl PendingFrame {
    fn on_line(&mut self, line: &[u8], limit: usize, out: &mut Vec<SseFrame>) {
        if self.too_long {
            return;
        }
        if line.is_empty() {
            if self.has_data {
                out.push(SseFrame {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                    id: self.id.take(),
                });
            }
            self.event = None;
            self.id = None;
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
                if self.data.len() > limit {
                    self.data = String::new();
                    self.too_long = true;
                }
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            // The WHATWG rules ignore an id holding NUL.
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned())
            }
            _ => {}
        }
    }
}

/// Decodes Ponder's own turn stream: frames whose data is a [`TurnEvent`], remembering the
/// sequence number of the last numbered one (what to resume after).
#[derive(Debug, Default)]
pub struct TurnDecoder {
    sse: SseDecoder,
    frames: Vec<SseFrame>,
    last_id: Option<u64>,
}

impl TurnDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk and appends the events it completes. A frame that is not a known event is
    /// skipped, so a newer server can add event types without breaking an older page.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<TurnEvent>) {
        // Ponder's own stream has no line limit: the decoder never refuses it.
        let _ = self.sse.push(chunk, &mut self.frames);
        self.drain(out);
    }

    /// Ends the input and appends what the last bytes completed.
    pub fn finish(&mut self, out: &mut Vec<TurnEvent>) {
        self.sse.finish(&mut self.frames);
        self.drain(out);
    }

    /// The `id:` of the last event decoded that carried one: a reconnecting viewer sends it as
    /// `Last-Event-ID` and gets what followed it.
    pub fn last_id(&self) -> Option<u64> {
        self.last_id
    }

    fn drain(&mut self, out: &mut Vec<TurnEvent>) {
        for frame in self.frames.drain(..) {
            if let Some(id) = frame.id.as_deref().and_then(|id| id.trim().parse().ok()) {
                self.last_id = Some(id);
            }
            if let Ok(event) = serde_json::from_slice::<TurnEvent>(frame.data.as_bytes()) {
                out.push(event);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ThinkingKind;

    fn lines_of(chunks: &[&[u8]]) -> Vec<String> {
        let mut dec = LineDecoder::default();
        let mut lines = Vec::new();
        for chunk in chunks {
            dec.push(chunk, |l| {
                lines.push(String::from_utf8_lossy(l).into_owned())
            })
            .unwrap();
        }
        dec.finish(|l| lines.push(String::from_utf8_lossy(l).into_owned()));
        lines
    }

    #[test]
    fn lines_end_at_lf_crlf_and_cr_even_when_split() {
        assert_eq!(lines_of(&[b"a\nb\r\nc\rd"]), ["a", "b", "c", "d"]);
        assert_eq!(lines_of(&[b"a\r", b"\nb"]), ["a", "b"]);
        assert_eq!(lines_of(&[b"a\r", b"\r\nb"]), ["a", "", "b"]);
        assert_eq!(lines_of(&[b"ab", b"c\n", b"\n"]), ["abc", ""]);
    }

    #[test]
    fn a_byte_order_mark_at_the_start_is_dropped_even_when_split() {
        assert_eq!(lines_of(&[b"\xEF\xBB\xBFdata: a\n"]), ["data: a"]);
        assert_eq!(lines_of(&[b"\xEF", b"\xBB", b"\xBFa\nb"]), ["a", "b"]);
        assert_eq!(
            lines_of(&[b"\xEF\xBBx\n"]),
            ["\u{FFFD}x"],
            "not a whole mark: kept"
        );
        assert_eq!(
            lines_of(&[b"a\n\xEF\xBB\xBFb\n"]),
            ["a", "\u{FEFF}b"],
            "only at the start"
        );
    }

    #[test]
    fn a_line_over_the_limit_stops_the_decoder_with_bounded_memory() {
        let mut dec = LineDecoder::with_limit(1024);
        let mut lines = 0;
        assert!(dec.push(b"short\n", |_| lines += 1).is_ok());
        let chunk = [b'x'; 512];
        let mut result = Ok(());
        for _ in 0..10 {
            result = dec.push(&chunk, |_| lines += 1);
            assert!(dec.buffered() <= 1024 + chunk.len());
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(TooLong { limit: 1024 }));
        assert_eq!(dec.buffered(), 0);
        assert_eq!(
            dec.push(b"\nmore\n", |_| lines += 1),
            Err(TooLong { limit: 1024 })
        );
        assert_eq!(lines, 1);
        // A long line inside one chunk, terminated, is refused too.
        let mut dec = LineDecoder::with_limit(8);
        assert!(dec.push(b"123456789\n", |_| {}).is_err());
        let mut dec = LineDecoder::with_limit(8);
        assert!(dec.push(b"12345678\n", |_| {}).is_ok());
    }

    #[test]
    fn a_frame_over_the_limit_in_one_chunk_is_never_dispatched() {
        let mut dec = SseDecoder::with_limit(16);
        let mut out = Vec::new();
        let result = dec.push(
            b"data: 0123456789\ndata: 0123456789\n\ndata: x\n\n",
            &mut out,
        );
        assert_eq!(result, Err(TooLong { limit: 16 }));
        assert!(out.is_empty(), "{out:?}");
        // Replacement characters count: invalid bytes grow three times when decoded.
        let mut dec = SseDecoder::with_limit(16);
        assert!(dec
            .push(b"data: \xff\xff\xff\xff\xff\xff\n\n", &mut out)
            .is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn a_frame_of_many_short_data_lines_is_bounded_too() {
        let mut dec = SseDecoder::with_limit(1000);
        let mut out = Vec::new();
        let mut failed = false;
        for _ in 0..200 {
            if dec.push(b"data: 0123456789\n", &mut out).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
        assert!(out.is_empty());
        assert!(dec.buffered() < 2000);
    }

    #[test]
    fn sse_frames_follow_the_event_stream_rules() {
        let mut dec = SseDecoder::new();
        let mut out = Vec::new();
        dec.push(
            b": comment\nevent: ping\ndata: {}\n\ndata:one\ndata: two\nid: 7\n\nevent: lonely\n\n",
            &mut out,
        )
        .unwrap();
        assert_eq!(
            out,
            [
                SseFrame {
                    event: Some("ping".into()),
                    data: "{}".into(),
                    id: None,
                },
                SseFrame {
                    event: None,
                    data: "one\ntwo".into(),
                    id: Some("7".into()),
                },
            ]
        );
    }

    #[test]
    fn a_last_frame_without_blank_line_is_dispatched_at_the_end() {
        let mut dec = SseDecoder::new();
        let mut out = Vec::new();
        dec.push(b"data: [DONE]", &mut out).unwrap();
        assert!(out.is_empty());
        dec.finish(&mut out);
        assert_eq!(out[0].data, "[DONE]");
    }

    fn sample_events() -> Vec<TurnEvent> {
        vec![
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: Some(3),
            },
            TurnEvent::Thinking {
                block: 0,
                text: "Ünïcödé 🤔 \"quoted\"\nnext line".into(),
            },
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(12),
                cut_short: false,
            },
            TurnEvent::Delta {
                text: "日本語の答え".into(),
            },
            TurnEvent::Done {
                finish_reason: "stop".into(),
                usage: None,
                thinking_chars: 30,
                total_ms: 99,
            },
        ]
    }

    #[test]
    fn turn_events_survive_every_split_point() {
        let events = sample_events();
        let mut wire = String::from(KEEP_ALIVE);
        for e in &events {
            encode_event(e, &mut wire);
        }
        let bytes = wire.as_bytes();
        for cut in 0..=bytes.len() {
            let mut dec = TurnDecoder::new();
            let mut out = Vec::new();
            dec.push(&bytes[..cut], &mut out);
            dec.push(&bytes[cut..], &mut out);
            dec.finish(&mut out);
            assert_eq!(out, events, "split at byte {cut}");
        }
        let mut dec = TurnDecoder::new();
        let mut out = Vec::new();
        for b in bytes {
            dec.push(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(out, events, "one byte at a time");
    }

    #[test]
    fn numbered_events_tell_the_last_id_at_every_split_point() {
        let events = sample_events();
        let mut wire = String::new();
        for (i, e) in events.iter().enumerate() {
            encode_numbered_event(i as u64 + 1, e, &mut wire);
            if i == 1 {
                wire.push_str(KEEP_ALIVE);
            }
        }
        let bytes = wire.as_bytes();
        for cut in 0..=bytes.len() {
            let mut dec = TurnDecoder::new();
            let mut out = Vec::new();
            dec.push(&bytes[..cut], &mut out);
            assert_eq!(dec.last_id(), (!out.is_empty()).then_some(out.len() as u64));
            dec.push(&bytes[cut..], &mut out);
            dec.finish(&mut out);
            assert_eq!(out, events, "split at byte {cut}");
            assert_eq!(dec.last_id(), Some(events.len() as u64));
        }
    }

    #[test]
    fn unknown_events_are_skipped() {
        let mut dec = TurnDecoder::new();
        let mut out = Vec::new();
        dec.push(
            b"data: {\"type\":\"future\"}\n\ndata: {\"type\":\"delta\",\"text\":\"x\"}\n\n",
            &mut out,
        );
        assert_eq!(out, [TurnEvent::Delta { text: "x".into() }]);
    }
}
