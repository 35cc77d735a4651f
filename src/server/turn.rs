//! One turn: the request to the upstream, its bytes through the provider's parser, and the
//! [`TurnAssembler`] that numbers blocks, times them and guarantees exactly one terminal event.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::{BoxFuture, Fuse};
use futures::{FutureExt, StreamExt};
use tokio::time::{sleep_until, Sleep};

use super::providers::{self, Piece, WireParser};
use super::redact::TurnRedactor;
use super::state::{AppState, Shutdown};
use crate::api::sse::{encode_event, KEEP_ALIVE};
use crate::domain::{ChatMessage, ThinkingKind, TurnEvent, Usage};

/// How a turn ended, for the log line and the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Error,
    ClientClosed,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Error => "error",
            Outcome::ClientClosed => "client_closed",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct OpenBlock {
    index: u32,
    kind: ThinkingKind,
    started_ms: u64,
}

/// Turns provider pieces into turn events. Pure: the caller passes the clock in.
#[derive(Debug)]
pub struct TurnAssembler {
    stream_thinking: bool,
    next_block: u32,
    open: Option<OpenBlock>,
    finish_reason: Option<String>,
    usage: Usage,
    /// Characters of reasoning, counted even when thinking is not streamed.
    pub thinking_chars: u64,
    /// Characters of answer.
    pub answer_chars: u64,
    /// Time of the first reasoning piece, in ms since the turn began.
    pub first_thinking_ms: Option<u64>,
    /// Time of the first answer piece, in ms since the turn began.
    pub first_answer_ms: Option<u64>,
    /// Characters of reasoning and answer together the turn may stream.
    max_chars: u64,
    /// The turn was ended by the character cap.
    pub capped: bool,
    outcome: Option<Outcome>,
}

impl TurnAssembler {
    pub fn new(stream_thinking: bool) -> Self {
        TurnAssembler {
            stream_thinking,
            next_block: 0,
            open: None,
            finish_reason: None,
            usage: Usage::default(),
            thinking_chars: 0,
            answer_chars: 0,
            first_thinking_ms: None,
            first_answer_ms: None,
            max_chars: u64::MAX,
            capped: false,
            outcome: None,
        }
    }

    /// Ends the turn as `done` with `finish_reason: "length"` once `max_chars` characters of
    /// reasoning and answer have streamed: an upstream that ignores `max_tokens` cannot stream
    /// forever.
    pub fn with_char_limit(mut self, max_chars: u64) -> Self {
        self.max_chars = max_chars;
        self
    }

    /// Cuts `text` to what the character cap still allows; true when the cap is reached.
    fn take_allowance(&mut self, text: &mut String) -> bool {
        let used = self.thinking_chars + self.answer_chars;
        let left = self.max_chars.saturating_sub(used);
        let count = text.chars().count() as u64;
        if count <= left {
            return false;
        }
        let cut = text
            .char_indices()
            .nth(left as usize)
            .map_or(text.len(), |(i, _)| i);
        text.truncate(cut);
        true
    }

    fn cap(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        self.capped = true;
        self.finish_reason = Some("length".into());
        self.done(now_ms, out);
    }

    /// How the turn ended, once it has.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    pub fn is_finished(&self) -> bool {
        self.outcome.is_some()
    }

    fn emit(&self, event: TurnEvent, out: &mut Vec<TurnEvent>) {
        let thinking_event = matches!(
            event,
            TurnEvent::ThinkingStart { .. }
                | TurnEvent::Thinking { .. }
                | TurnEvent::ThinkingEnd { .. }
                | TurnEvent::Reclassify { .. }
        );
        if self.stream_thinking || !thinking_event {
            out.push(event);
        }
    }

    fn open_block(&mut self, kind: ThinkingKind, now_ms: u64, out: &mut Vec<TurnEvent>) -> u32 {
        self.close_block(now_ms, out);
        let index = self.next_block;
        self.next_block += 1;
        self.open = Some(OpenBlock {
            index,
            kind,
            started_ms: now_ms,
        });
        self.first_thinking_ms.get_or_insert(now_ms);
        self.emit(TurnEvent::ThinkingStart { block: index, kind }, out);
        index
    }

    fn close_block(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        if let Some(block) = self.open.take() {
            let duration_ms = now_ms.saturating_sub(block.started_ms);
            self.emit(
                TurnEvent::ThinkingEnd {
                    block: block.index,
                    duration_ms: Some(duration_ms),
                },
                out,
            );
        }
    }

    /// Feeds one piece at `now_ms` (milliseconds since the turn began).
    pub fn push(&mut self, piece: Piece, now_ms: u64, out: &mut Vec<TurnEvent>) {
        if self.is_finished() {
            return;
        }
        match piece {
            Piece::BlockStart { kind } => {
                self.open_block(kind, now_ms, out);
            }
            Piece::Reasoning { mut text, kind } => {
                let block = match self.open {
                    Some(open) if open.kind == kind => open.index,
                    _ => self.open_block(kind, now_ms, out),
                };
                let capped = self.take_allowance(&mut text);
                if !text.is_empty() {
                    self.thinking_chars += text.chars().count() as u64;
                    self.emit(TurnEvent::Thinking { block, text }, out);
                }
                if capped {
                    self.cap(now_ms, out);
                }
            }
            Piece::BlockKind { kind } => {
                if let Some(open) = self.open.as_mut().filter(|o| o.kind != kind) {
                    open.kind = kind;
                    let block = open.index;
                    self.emit(TurnEvent::ThinkingStart { block, kind }, out);
                }
            }
            Piece::BlockEnd => self.close_block(now_ms, out),
            Piece::Answer(mut text) => {
                if text.is_empty() {
                    return;
                }
                self.close_block(now_ms, out);
                let capped = self.take_allowance(&mut text);
                if !text.is_empty() {
                    self.first_answer_ms.get_or_insert(now_ms);
                    self.answer_chars += text.chars().count() as u64;
                    out.push(TurnEvent::Delta { text });
                }
                if capped {
                    self.cap(now_ms, out);
                }
            }
            Piece::Reclassify => {
                let started = self.first_answer_ms.take().unwrap_or(now_ms);
                let block = self.open_block(ThinkingKind::Raw, started, out);
                self.emit(TurnEvent::Reclassify { block }, out);
                self.thinking_chars += self.answer_chars;
                self.answer_chars = 0;
                self.close_block(now_ms, out);
            }
            Piece::Usage(u) => {
                self.usage.input_tokens = u.input_tokens.or(self.usage.input_tokens);
                self.usage.output_tokens = u.output_tokens.or(self.usage.output_tokens);
                self.usage.reasoning_tokens = u.reasoning_tokens.or(self.usage.reasoning_tokens);
            }
            Piece::Finish(reason) => self.finish_reason = Some(reason),
            Piece::End => self.done(now_ms, out),
            Piece::Error { message, retryable } => self.fail(message, retryable, out),
            Piece::TooLong { limit } => self.fail(
                format!(
                    "The model server sent a line over {}; Ponder stopped reading its stream.",
                    human_bytes(limit)
                ),
                false,
                out,
            ),
        }
    }

    fn done(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        self.close_block(now_ms, out);
        let usage = (!self.usage.is_empty()).then(|| self.usage.clone());
        out.push(TurnEvent::Done {
            finish_reason: self.finish_reason.clone().unwrap_or_else(|| "stop".into()),
            usage,
            thinking_chars: self.thinking_chars,
            total_ms: now_ms,
        });
        self.outcome = Some(Outcome::Done);
    }

    /// The upstream body ended. Without a finish reason or end marker the stream was cut.
    pub fn end_of_stream(&mut self, now_ms: u64, out: &mut Vec<TurnEvent>) {
        if self.is_finished() {
            return;
        }
        if self.finish_reason.is_some() {
            self.done(now_ms, out);
        } else {
            self.fail(
                "The model's stream was cut off before it finished.".into(),
                true,
                out,
            );
        }
    }

    /// Ends the turn with an error. An open block gets no `thinking_end`: it was interrupted.
    pub fn fail(&mut self, message: String, retryable: bool, out: &mut Vec<TurnEvent>) {
        if self.is_finished() {
            return;
        }
        self.open = None;
        out.push(TurnEvent::Error { message, retryable });
        self.outcome = Some(Outcome::Error);
    }
}

/// A byte count as people read it: `1 MiB`, `512 KiB`, `900 bytes`.
pub fn human_bytes(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// The SSE bytes of one turn, pulled by the HTTP response: when the browser stops reading or
/// goes away, the upstream is no longer read or is dropped with it.
pub fn turn_stream(
    state: Arc<AppState>,
    messages: Vec<ChatMessage>,
) -> impl futures::Stream<Item = Bytes> + Send {
    let run = TurnRun::new(state, messages);
    futures::stream::unfold(run, |mut run| async move {
        let frame = run.next_frame().await?;
        Some((frame, run))
    })
}

/// What ended a wait on the upstream before the upstream did.
enum Interrupt {
    KeepAlive,
    Deadline,
    Shutdown,
}

/// What a turn's waits on the upstream race against: one timer, for the turn's deadline and its
/// next keep-alive, and the end of the shutdown grace period. The timer is moved only when it has
/// rung or is set later than asked, not for every chunk: a chunk pushes both times back, and
/// re-arming a timer per chunk was a timer-wheel insert and removal for every event. A ring
/// before the asked time is checked against the clock.
struct Waits {
    alarm: Option<Pin<Box<Sleep>>>,
    grace_over: Fuse<BoxFuture<'static, ()>>,
}

impl Waits {
    fn new(shutdown: Arc<Shutdown>) -> Self {
        Waits {
            alarm: None,
            grace_over: async move { shutdown.grace_over().await }.boxed().fuse(),
        }
    }

    /// Runs `work` until it finishes, unless `deadline` passes, `keep_alive_at` comes or the
    /// grace period ends first.
    async fn race<T>(
        &mut self,
        work: impl Future<Output = T>,
        deadline: Instant,
        keep_alive_at: Instant,
    ) -> Result<T, Interrupt> {
        tokio::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return Ok(out),
                _ = ring(&mut self.alarm, deadline.min(keep_alive_at)) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(Interrupt::Deadline);
                    }
                    if now >= keep_alive_at {
                        return Err(Interrupt::KeepAlive);
                    }
                }
                _ = &mut self.grace_over => return Err(Interrupt::Shutdown),
            }
        }
    }
}

async fn ring(alarm: &mut Option<Pin<Box<Sleep>>>, at: Instant) {
    let at = tokio::time::Instant::from_std(at);
    let sleep = match alarm {
        Some(sleep) => {
            if sleep.is_elapsed() || sleep.deadline() > at {
                sleep.as_mut().reset(at);
            }
            sleep
        }
        None => alarm.insert(Box::pin(sleep_until(at))),
    };
    sleep.as_mut().await
}

enum Phase {
    NotStarted,
    Connecting(futures::future::BoxFuture<'static, reqwest::Result<reqwest::Response>>),
    Streaming {
        body: futures::stream::BoxStream<'static, reqwest::Result<Bytes>>,
        parser: Box<dyn WireParser>,
    },
    Over,
}

struct TurnRun {
    state: Arc<AppState>,
    messages: Vec<ChatMessage>,
    started: Instant,
    phase: Phase,
    asm: TurnAssembler,
    pieces: Vec<Piece>,
    events: Vec<TurnEvent>,
    redactor: TurnRedactor,
    redacted: Vec<TurnEvent>,
    first_byte_seen: bool,
    last_upstream: Instant,
    /// When the browser last got a frame: a keep-alive is due one interval later.
    last_sent: Instant,
    waits: Waits,
    logged: bool,
}

impl TurnRun {
    fn new(state: Arc<AppState>, messages: Vec<ChatMessage>) -> Self {
        let now = Instant::now();
        state.metrics.turn_started();
        let waits = Waits::new(state.shutdown.clone());
        TurnRun {
            asm: TurnAssembler::new(state.config.stream_thinking)
                .with_char_limit(state.config.limits.max_turn_chars),
            redactor: TurnRedactor::new(state.redactor.clone()),
            redacted: Vec::new(),
            state,
            messages,
            started: now,
            phase: Phase::NotStarted,
            pieces: Vec::new(),
            events: Vec::new(),
            first_byte_seen: false,
            last_upstream: now,
            last_sent: now,
            waits,
            logged: false,
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    async fn next_frame(&mut self) -> Option<Bytes> {
        let frame = self.produce().await;
        if frame.is_some() {
            self.last_sent = Instant::now();
        }
        frame
    }

    async fn produce(&mut self) -> Option<Bytes> {
        loop {
            if !self.events.is_empty() {
                for event in self.events.drain(..) {
                    self.redactor.push(event, &mut self.redacted);
                }
                if self.redacted.is_empty() {
                    continue;
                }
                let mut out = String::new();
                for event in self.redacted.drain(..) {
                    encode_event(&event, &mut out);
                }
                return Some(Bytes::from(out));
            }
            if self.asm.is_finished() {
                self.phase = Phase::Over;
                self.log();
                return None;
            }
            match &mut self.phase {
                Phase::Over => return None,
                Phase::NotStarted => self.send_request(),
                Phase::Connecting(_) => {
                    if let Some(keep_alive) = self.connect().await {
                        return Some(keep_alive);
                    }
                }
                Phase::Streaming { .. } => {
                    if let Some(keep_alive) = self.read().await {
                        return Some(keep_alive);
                    }
                }
            }
        }
    }

    fn send_request(&mut self) {
        let config = &self.state.config;
        let req = providers::build_request(config, &self.state.upstream_base, &self.messages);
        let mut builder = self.state.http.post(&req.url).json(&req.body);
        for (name, value) in &req.headers {
            builder = builder.header(*name, value);
        }
        self.phase = Phase::Connecting(Box::pin(builder.send()));
    }

    /// Waits for the upstream's response headers. A server that loads the model first can take
    /// minutes to send them, so this too returns keep-alive comments while it waits.
    async fn connect(&mut self) -> Option<Bytes> {
        let config = self.state.config.clone();
        let Phase::Connecting(pending) = &mut self.phase else {
            return None;
        };
        let deadline = self.started + config.first_byte_timeout;
        let keep_alive_at = self.last_sent + config.keep_alive;
        let response = match self
            .waits
            .race(&mut *pending, deadline, keep_alive_at)
            .await
        {
            Ok(response) => response,
            Err(why) => {
                let timeout = format!(
                    "The model server did not answer within {} s.",
                    config.first_byte_timeout.as_secs_f64()
                );
                return self.interrupted(
                    why,
                    ("first_byte_timeout", timeout),
                    "Ponder is shutting down; try again in a moment.",
                );
            }
        };
        let response = match response {
            Ok(r) => r,
            Err(e) => {
                let (kind, message) = describe_request_error(&e, &self.state.upstream_base);
                self.fail_upstream(kind, message, true);
                return None;
            }
        };
        let status = response.status();
        if status.is_redirection() {
            let to = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(origin_of)
                .unwrap_or_else(|| "another address".into());
            let message = format!(
                "The model server answered {status}, a redirect to {to}. Ponder follows no redirects, so the key and the conversation only ever go to PONDER_UPSTREAM_URL: set it to the address the server redirects to."
            );
            self.fail_upstream("redirect", message, false);
            return None;
        }
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let body = read_error_body(response).await;
            let detail = providers::error_message_from_body(&body);
            let mut message = format!("The model server answered {status}");
            if !detail.is_empty() {
                message.push_str(": ");
                message.push_str(&detail);
            }
            if let Some(after) = retry_after {
                message.push_str(&format!(" (retry after {after} s)"));
            }
            let retryable =
                status.as_u16() == 429 || status.is_server_error() || status.as_u16() == 408;
            let kind = if status.is_server_error() {
                "http_5xx"
            } else {
                "http_4xx"
            };
            self.fail_upstream(kind, message, retryable);
            return None;
        }
        self.phase = Phase::Streaming {
            body: response.bytes_stream().boxed(),
            parser: providers::parser(&config),
        };
        None
    }

    /// Reads the next upstream chunk into events. Returns a keep-alive comment when the upstream
    /// has been silent for the keep-alive interval.
    async fn read(&mut self) -> Option<Bytes> {
        let config = self.state.config.clone();
        let started = self.started;
        let Phase::Streaming { body, parser } = &mut self.phase else {
            return None;
        };
        let deadline = if self.first_byte_seen {
            self.last_upstream + config.idle_timeout
        } else {
            self.started + config.first_byte_timeout
        };
        let keep_alive_at = self.last_sent + config.keep_alive;
        let chunk = match self.waits.race(body.next(), deadline, keep_alive_at).await {
            Ok(chunk) => chunk,
            Err(why) => {
                let timeout = if self.first_byte_seen {
                    (
                        "idle_timeout",
                        format!(
                            "The model server went silent for {} s in the middle of the answer.",
                            config.idle_timeout.as_secs_f64()
                        ),
                    )
                } else {
                    (
                        "first_byte_timeout",
                        format!(
                            "The model server did not start answering within {} s.",
                            config.first_byte_timeout.as_secs_f64()
                        ),
                    )
                };
                return self.interrupted(
                    why,
                    timeout,
                    "Ponder is shutting down; this answer was cut short.",
                );
            }
        };
        let now_ms = started.elapsed().as_millis() as u64;
        match chunk {
            Some(Ok(bytes)) => {
                self.first_byte_seen = true;
                self.last_upstream = Instant::now();
                parser.feed(&bytes, &mut self.pieces);
            }
            Some(Err(e)) => {
                let message = format!(
                    "The connection to the model server broke: {}",
                    e.without_url()
                );
                parser.finish(&mut self.pieces);
                self.apply_pieces(now_ms);
                self.fail_upstream("connection_reset", message, true);
                return None;
            }
            None => {
                parser.finish(&mut self.pieces);
                self.apply_pieces(now_ms);
                if !self.asm.is_finished() {
                    let before = self.events.len();
                    self.asm.end_of_stream(now_ms, &mut self.events);
                    if self.asm.outcome() == Some(Outcome::Error) && self.events.len() > before {
                        self.state.metrics.upstream_error("truncated");
                    }
                }
                return None;
            }
        }
        self.apply_pieces(now_ms);
        None
    }

    fn apply_pieces(&mut self, now_ms: u64) {
        for piece in self.pieces.drain(..) {
            match &piece {
                Piece::Error { message, .. } => {
                    self.state.metrics.upstream_error("in_stream");
                    tracing::warn!(kind = "in_stream", detail = %message, "upstream failure");
                }
                Piece::TooLong { limit } => {
                    self.state.metrics.upstream_error("line_too_long");
                    tracing::warn!(kind = "line_too_long", limit = *limit, "upstream failure");
                }
                _ => {}
            }
            self.asm.push(piece, now_ms, &mut self.events);
        }
        if self.asm.capped {
            self.asm.capped = false;
            self.state.metrics.upstream_error("turn_too_long");
            tracing::warn!(
                kind = "turn_too_long",
                limit = self.state.config.limits.max_turn_chars,
                "upstream failure: the turn reached PONDER_MAX_TURN_CHARS; ended as length"
            );
        }
        if self.asm.is_finished() {
            self.phase = Phase::Over;
        }
    }

    /// Ends a wait on the upstream that something else cut short: a keep-alive falls due, or
    /// the turn fails with `timeout` or with the shutdown message.
    fn interrupted(
        &mut self,
        why: Interrupt,
        timeout: (&'static str, String),
        shutting_down: &str,
    ) -> Option<Bytes> {
        match why {
            Interrupt::KeepAlive => Some(Bytes::from_static(KEEP_ALIVE.as_bytes())),
            Interrupt::Deadline => {
                let (kind, message) = timeout;
                self.fail_upstream(kind, message, true);
                None
            }
            Interrupt::Shutdown => {
                self.fail_upstream("shutdown", shutting_down.into(), true);
                None
            }
        }
    }

    fn fail_upstream(&mut self, kind: &'static str, message: String, retryable: bool) {
        self.state.metrics.upstream_error(kind);
        tracing::warn!(kind, detail = %message, "upstream failure");
        self.asm.fail(message, retryable, &mut self.events);
        self.phase = Phase::Over;
    }

    fn log(&mut self) {
        if self.logged {
            return;
        }
        self.logged = true;
        let outcome = self.asm.outcome().unwrap_or(Outcome::ClientClosed);
        let total_ms = self.now_ms();
        let ttft_ms = self.asm.first_thinking_ms.or(self.asm.first_answer_ms);
        self.state.metrics.turn_finished(
            outcome,
            self.asm.first_thinking_ms,
            self.asm.first_answer_ms,
            Duration::from_millis(total_ms),
            self.asm.thinking_chars,
            self.asm.answer_chars,
        );
        tracing::info!(
            model = %self.state.config.model,
            thinking_chars = self.asm.thinking_chars,
            answer_chars = self.asm.answer_chars,
            ttft_ms = ttft_ms.map(|v| v as i64).unwrap_or(-1),
            total_ms,
            outcome = outcome.name(),
            "turn"
        );
    }
}

impl Drop for TurnRun {
    fn drop(&mut self) {
        self.log();
    }
}

async fn read_error_body(response: reqwest::Response) -> String {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    let read = async {
        while let Some(Ok(chunk)) = stream.next().await {
            body.extend_from_slice(&chunk);
            if body.len() > 64 * 1024 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
    String::from_utf8_lossy(&body).into_owned()
}

/// `scheme://host[:port]` of a URL, for messages that must not repeat its path or query.
fn origin_of(url: &str) -> String {
    let url = super::config::without_userinfo(url);
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            format!("{scheme}://{host}")
        }
        None => "another address".into(),
    }
}

fn describe_request_error(e: &reqwest::Error, raw_base: &str) -> (&'static str, String) {
    let base = &super::config::without_userinfo(raw_base);
    let host = base
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or(base);
    if e.is_connect() {
        let mut cause = String::new();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            cause = s.to_string();
            source = s.source();
        }
        (
            "connect",
            format!("Could not reach the model server at {host}: {cause}"),
        )
    } else if e.is_timeout() {
        (
            "connect_timeout",
            format!("Connecting to the model server at {host} timed out."),
        )
    } else {
        (
            "request",
            format!(
                "The request to the model server at {host} failed: {}",
                e.to_string().replace(raw_base, host).replace(base, host)
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pieces: Vec<(u64, Piece)>, stream_thinking: bool) -> Vec<TurnEvent> {
        let mut asm = TurnAssembler::new(stream_thinking);
        let mut out = Vec::new();
        let mut last = 0;
        for (t, p) in pieces {
            asm.push(p, t, &mut out);
            last = t;
        }
        asm.end_of_stream(last, &mut out);
        out
    }

    fn reasoning(t: &str) -> Piece {
        Piece::Reasoning {
            text: t.into(),
            kind: ThinkingKind::Raw,
        }
    }

    #[test]
    fn thinking_then_answer_is_one_timed_block_then_deltas() {
        let out = run(
            vec![
                (10, reasoning("a")),
                (20, reasoning("b")),
                (50, Piece::Answer("x".into())),
                (60, Piece::Finish("stop".into())),
            ],
            true,
        );
        assert_eq!(
            out,
            [
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Raw
                },
                TurnEvent::Thinking {
                    block: 0,
                    text: "a".into()
                },
                TurnEvent::Thinking {
                    block: 0,
                    text: "b".into()
                },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(40)
                },
                TurnEvent::Delta { text: "x".into() },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 2,
                    total_ms: 60
                },
            ]
        );
    }

    #[test]
    fn reasoning_after_answer_opens_the_next_block() {
        let out = run(
            vec![
                (0, reasoning("a")),
                (1, Piece::Answer("x".into())),
                (2, reasoning("b")),
                (3, Piece::End),
            ],
            true,
        );
        assert!(out.contains(&TurnEvent::ThinkingStart {
            block: 1,
            kind: ThinkingKind::Raw
        }));
        assert!(out.contains(&TurnEvent::ThinkingEnd {
            block: 1,
            duration_ms: Some(1)
        }));
    }

    #[test]
    fn a_stream_without_finish_is_an_error_and_the_block_stays_open() {
        let out = run(vec![(0, reasoning("a"))], true);
        assert!(matches!(
            out.last(),
            Some(TurnEvent::Error {
                retryable: true,
                ..
            })
        ));
        assert!(!out
            .iter()
            .any(|e| matches!(e, TurnEvent::ThinkingEnd { .. })));
    }

    #[test]
    fn exactly_one_terminal_event_whatever_follows() {
        let out = run(
            vec![
                (
                    0,
                    Piece::Error {
                        message: "x".into(),
                        retryable: false,
                    },
                ),
                (1, Piece::Answer("late".into())),
                (2, Piece::End),
            ],
            true,
        );
        assert_eq!(out, [TurnEvent::error("x", false)]);
    }

    #[test]
    fn the_kill_switch_drops_thinking_but_counts_it() {
        let out = run(
            vec![
                (0, reasoning("abc")),
                (5, Piece::Answer("x".into())),
                (6, Piece::End),
            ],
            false,
        );
        assert_eq!(
            out,
            [
                TurnEvent::Delta { text: "x".into() },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 3,
                    total_ms: 6
                },
            ]
        );
    }

    #[test]
    fn reclassify_moves_the_answer_so_far_into_a_block() {
        let out = run(
            vec![
                (5, Piece::Answer("think".into())),
                (9, Piece::Reclassify),
                (10, Piece::Answer("ans".into())),
                (11, Piece::End),
            ],
            true,
        );
        assert_eq!(
            out,
            [
                TurnEvent::Delta {
                    text: "think".into()
                },
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Raw
                },
                TurnEvent::Reclassify { block: 0 },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(4)
                },
                TurnEvent::Delta { text: "ans".into() },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 5,
                    total_ms: 11
                },
            ]
        );
    }

    #[test]
    fn a_block_whose_kind_is_corrected_restarts_with_the_same_index() {
        let out = run(
            vec![
                (
                    0,
                    Piece::BlockStart {
                        kind: ThinkingKind::Summary,
                    },
                ),
                (
                    20,
                    Piece::BlockKind {
                        kind: ThinkingKind::Redacted,
                    },
                ),
                (
                    20,
                    Piece::BlockKind {
                        kind: ThinkingKind::Redacted,
                    },
                ),
                (20, Piece::BlockEnd),
                (30, Piece::End),
            ],
            true,
        );
        assert_eq!(
            &out[..3],
            [
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Summary
                },
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Redacted
                },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(20)
                },
            ]
        );
    }

    #[test]
    fn redacted_blocks_start_and_end_with_no_text() {
        let out = run(
            vec![
                (
                    0,
                    Piece::BlockStart {
                        kind: ThinkingKind::Redacted,
                    },
                ),
                (30, Piece::BlockEnd),
                (
                    31,
                    Piece::Usage(Usage {
                        input_tokens: Some(1),
                        output_tokens: None,
                        reasoning_tokens: None,
                    }),
                ),
                (
                    32,
                    Piece::Usage(Usage {
                        input_tokens: None,
                        output_tokens: Some(2),
                        reasoning_tokens: None,
                    }),
                ),
                (40, Piece::End),
            ],
            true,
        );
        assert_eq!(
            out,
            [
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Redacted
                },
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(30)
                },
                TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: Some(Usage {
                        input_tokens: Some(1),
                        output_tokens: Some(2),
                        reasoning_tokens: None
                    }),
                    thinking_chars: 0,
                    total_ms: 40,
                },
            ]
        );
    }
}
