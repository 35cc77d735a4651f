//! One turn: the request to the upstream, its bytes through the provider's parser and the
//! [`TurnAssembler`], redaction, and the frames the browser pulls. The I/O lives here; the
//! events are decided by the pure [`assembler`], the words by [`wording`].

mod alarm;
pub mod assembler;
pub mod batch;
pub mod control;
pub mod files;
pub mod ledger;
pub mod log;
pub mod persist;
pub mod relay;
pub mod replay;
pub mod wording;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::{BoxFuture, Fuse};
use futures::{FutureExt, StreamExt};
use tokio::time::Sleep;

pub use super::outcome::Outcome;
pub use assembler::TurnAssembler;

use super::config::{AnswerNowMode, OrphanTurns, ProviderKind};
use super::outcome::UpstreamFailure;
use super::providers::{self, AnswerNow, Piece, TurnOptions, WireParser};
use super::redact::TurnRedactor;
use super::state::{AppState, Shutdown};
use crate::domain::{ChatMessage, Failure, TurnEvent};
use crate::wire::sse::{encode_event, KEEP_ALIVE};
use control::{Command, Registration};

/// The SSE bytes of a turn stored nowhere (`messages` in, nothing kept), pulled by the HTTP
/// response: when the browser stops reading or goes away, the upstream is no longer read or is
/// dropped with it. Nobody could pick such a turn up again, so it does not outlive its reader.
pub fn turn_stream(
    state: Arc<AppState>,
    messages: Vec<ChatMessage>,
    options: TurnOptions,
    control: Option<(Registration, tokio::sync::mpsc::Receiver<Command>)>,
    ledger: Option<ledger::Ticket>,
) -> impl futures::Stream<Item = Bytes> + Send {
    let mut run = TurnRun::new(state, messages, options, control);
    run.ledger = ledger;
    futures::stream::unfold(run, |mut run| async move {
        let bytes = match run.next_frame().await? {
            Produced::Events(events) => {
                let mut out = String::new();
                for event in &events {
                    encode_event(event, &mut out);
                }
                Bytes::from(out)
            }
            Produced::KeepAlive => Bytes::from_static(KEEP_ALIVE.as_bytes()),
        };
        Some((bytes, run))
    })
}

/// Starts a stored turn on the server: it runs to its end whether or not anyone watches
/// (unless `PONDER_ORPHAN_TURNS=stop`), writing what it sends to the history and to its log,
/// numbered. `first` (where it is stored) follows `started`. Viewers read the log (see
/// [`log::follow`]); the one that asked is only the first of them.
pub fn start_stored_turn(
    state: Arc<AppState>,
    messages: Vec<ChatMessage>,
    options: TurnOptions,
    control: (Registration, tokio::sync::mpsc::Receiver<Command>),
    first: TurnEvent,
    persist: persist::Persist,
    ledger: Option<ledger::Ticket>,
) -> Option<Arc<log::TurnLog>> {
    let turn_log = control.0.log.clone()?;
    let id = control.0.id.clone();
    let mut run = TurnRun::new(state.clone(), messages, options, Some(control));
    run.events.push(first);
    run.ledger = ledger.map(|t| ledger::Ticket {
        conversation: Some(persist.slot().conversation_id.clone()),
        version: Some(persist.slot().version_id.clone()),
        ..t
    });
    run.persist = Some(persist);
    if state.config.orphan_turns == OrphanTurns::Stop {
        tokio::spawn(stop_when_unwatched(
            state.clone(),
            turn_log.clone(),
            id.clone(),
        ));
    }
    let ending = LastWord {
        log: turn_log.clone(),
        relay: state.relay.clone(),
        id: id.clone(),
    };
    tokio::spawn(async move {
        while let Some(produced) = run.next_frame().await {
            if let Produced::Events(events) = produced {
                let frames = ending.log.append(events, ending.relay.is_some());
                if let Some(relay) = &ending.relay {
                    relay.publish(&ending.id, &frames);
                }
            }
        }
        drop(run);
        // The turn's row says it ended before the task does: a shutdown waits for the task.
        if let Some(relay) = &state.relay {
            relay.ended(&ending.id).await;
        }
        drop(ending);
    });
    Some(turn_log)
}

/// Gives a turn's log its last event if the turn task ends without one (a bug, a panic), so no
/// viewer waits forever.
struct LastWord {
    log: Arc<log::TurnLog>,
    relay: Option<Arc<relay::Relay>>,
    id: String,
}

impl Drop for LastWord {
    fn drop(&mut self) {
        if self.log.is_finished() {
            return;
        }
        let frames = self
            .log
            .append(vec![TurnEvent::Error(wording::stream_cut())], true);
        if let Some(relay) = &self.relay {
            relay.publish(&self.id, &frames);
        }
    }
}

/// `PONDER_ORPHAN_TURNS=stop`: stops the turn once nobody (here or, with several replicas, on
/// another one) has watched it for `PONDER_ORPHAN_GRACE`.
async fn stop_when_unwatched(state: Arc<AppState>, turn_log: Arc<log::TurnLog>, id: String) {
    let grace = state.config.orphan_grace;
    let mut viewers = turn_log.viewer_changes();
    loop {
        if turn_log.is_finished() {
            return;
        }
        if viewers.wait_for(|n| *n == 0).await.is_err() {
            return;
        }
        let since = crate::server::store::now_ms();
        match tokio::time::timeout(grace, viewers.wait_for(|n| *n > 0)).await {
            Ok(Ok(_)) => continue,
            Ok(Err(_)) => return,
            Err(_) => {}
        }
        if let Some(relay) = &state.relay {
            if relay.watched_elsewhere(&id, since).await {
                continue;
            }
        }
        if !turn_log.is_finished() {
            tracing::info!(turn = %id, grace_s = grace.as_secs_f64(), "nobody watched a turn for the grace: stopped (PONDER_ORPHAN_TURNS=stop)");
            state.turns.send_here(&id, Command::Stop);
        }
        return;
    }
}

/// What a turn produced next: events for its readers, or a keep-alive tick while the upstream
/// is silent.
enum Produced {
    Events(Vec<TurnEvent>),
    KeepAlive,
}

/// What ended a wait on the upstream before the upstream did.
enum Interrupt {
    KeepAlive,
    Deadline,
    Shutdown,
    AnswerNow,
    Stop,
    Abandon,
}

/// What a turn's waits on the upstream race against: one timer, for the turn's deadline and its
/// next keep-alive, and the end of the shutdown grace period. The timer is moved only when it has
/// rung or is set later than asked, not for every chunk: a chunk pushes both times back, and
/// re-arming a timer per chunk was a timer-wheel insert and removal for every event. A ring
/// before the asked time is checked against the clock.
struct Waits {
    alarm: Option<Pin<Box<Sleep>>>,
    grace_over: Fuse<BoxFuture<'static, ()>>,
    /// What the reader asks of the running turn from another request.
    commands: Option<tokio::sync::mpsc::Receiver<Command>>,
}

impl Waits {
    fn new(
        shutdown: Arc<Shutdown>,
        commands: Option<tokio::sync::mpsc::Receiver<Command>>,
    ) -> Self {
        Waits {
            alarm: None,
            grace_over: async move { shutdown.grace_over().await }.boxed().fuse(),
            commands,
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
                _ = alarm::ring(&mut self.alarm, deadline.min(keep_alive_at)) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(Interrupt::Deadline);
                    }
                    if now >= keep_alive_at {
                        return Err(Interrupt::KeepAlive);
                    }
                }
                _ = &mut self.grace_over => return Err(Interrupt::Shutdown),
                command = next_command(&mut self.commands) => match command {
                    Some(Command::AnswerNow) => return Err(Interrupt::AnswerNow),
                    Some(Command::Stop) => return Err(Interrupt::Stop),
                    Some(Command::Abandon) => return Err(Interrupt::Abandon),
                    None => self.commands = None,
                },
            }
        }
    }
}

async fn next_command(
    commands: &mut Option<tokio::sync::mpsc::Receiver<Command>>,
) -> Option<Command> {
    match commands {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
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
    options: TurnOptions,
    /// Keeps the turn reachable for "Answer now" while it runs.
    _registration: Option<Registration>,
    /// The reasoning streamed so far, for the follow-up of "Answer now".
    reasoning: String,
    /// The reasoning fields the request now awaited carries, for the error of a refusal.
    sent_settings: String,
    started: Instant,
    /// When the request now awaited was sent: its first byte is due within the timeout.
    request_started: Instant,
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
    /// Writes the turn to the history, for a stored turn.
    persist: Option<persist::Persist>,
    /// The reasoning state the response returns for later turns.
    returned: replay::Collector,
    /// The content of a response the provider paused (`pause_turn`), to continue it with.
    paused: Option<serde_json::Value>,
    /// Continuations of paused responses so far.
    continuations: u32,
    /// Whom the turn's usage line is for; none: the turn is not counted (a title, a test).
    ledger: Option<ledger::Ticket>,
    /// The time its reasoning blocks took, summed as they end.
    thinking_ms: u64,
}

impl TurnRun {
    fn new(
        state: Arc<AppState>,
        messages: Vec<ChatMessage>,
        options: TurnOptions,
        control: Option<(Registration, tokio::sync::mpsc::Receiver<Command>)>,
    ) -> Self {
        let now = Instant::now();
        state.metrics.turn_started();
        let (registration, commands) = match control {
            Some((r, c)) => (Some(r), Some(c)),
            None => (None, None),
        };
        let waits = Waits::new(state.shutdown.clone(), commands);
        let events = registration
            .as_ref()
            .map(|r| TurnEvent::Started { turn: r.id.clone() })
            .into_iter()
            .collect();
        TurnRun {
            asm: TurnAssembler::new(state.config.stream_thinking)
                .with_char_limit(state.config.limits.max_turn_chars),
            redactor: TurnRedactor::new(state.redactor.clone()),
            redacted: Vec::new(),
            state,
            messages,
            options,
            _registration: registration,
            reasoning: String::new(),
            sent_settings: String::new(),
            started: now,
            request_started: now,
            phase: Phase::NotStarted,
            pieces: Vec::new(),
            events,
            first_byte_seen: false,
            last_upstream: now,
            last_sent: now,
            waits,
            logged: false,
            persist: None,
            returned: replay::Collector::default(),
            paused: None,
            continuations: 0,
            ledger: None,
            thinking_ms: 0,
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    async fn next_frame(&mut self) -> Option<Produced> {
        let frame = self.produce().await;
        if frame.is_some() {
            self.last_sent = Instant::now();
        }
        frame
    }

    async fn produce(&mut self) -> Option<Produced> {
        loop {
            if let Some(p) = &self.persist {
                if p.has_failed() && !self.asm.is_finished() {
                    self.asm.fail(persist::not_saved(), &mut self.events);
                    self.phase = Phase::Over;
                }
            }
            if !self.events.is_empty() {
                self.account_for_events();
                for event in self.events.drain(..) {
                    self.redactor.push(event, &mut self.redacted);
                }
                if self.redacted.is_empty() {
                    continue;
                }
                if let Some(p) = &mut self.persist {
                    let ended_well = self.asm.outcome() == Some(Outcome::Done)
                        && self.options.answer_now.is_none();
                    if ended_well && self.redacted.iter().any(TurnEvent::is_terminal) {
                        if let Some(items) = std::mem::take(&mut self.returned).into_items() {
                            p.keep_state(items);
                        }
                    }
                    p.note(&self.redacted);
                    if self.redacted.iter().any(TurnEvent::is_terminal) && !p.final_written().await
                    {
                        for event in &mut self.redacted {
                            if matches!(event, TurnEvent::Done { .. }) {
                                *event = TurnEvent::Error(persist::not_saved());
                            }
                        }
                    }
                }
                if self.redacted.iter().any(TurnEvent::is_terminal) {
                    self.write_ledger().await;
                }
                return Some(Produced::Events(std::mem::take(&mut self.redacted)));
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
        self.request_started = Instant::now();
        let req = providers::build_request(
            config,
            &self.state.upstream_base,
            &self.messages,
            &self.options,
        );
        let mut builder = self.state.http.post(&req.url).json(&req.body);
        for (name, value) in &req.headers {
            builder = builder.header(*name, value);
        }
        self.sent_settings = providers::sent_settings(&req.body, &self.options.settings);
        self.phase = Phase::Connecting(Box::pin(builder.send()));
    }

    /// Waits for the upstream's response headers. A server that loads the model first can take
    /// minutes to send them, so this too returns keep-alive comments while it waits.
    async fn connect(&mut self) -> Option<Produced> {
        let config = self.state.config.clone();
        let Phase::Connecting(pending) = &mut self.phase else {
            return None;
        };
        let deadline = self.request_started + config.first_byte_timeout;
        let keep_alive_at = self.last_sent + config.keep_alive;
        let response = match self
            .waits
            .race(&mut *pending, deadline, keep_alive_at)
            .await
        {
            Ok(response) => response,
            Err(why) => {
                let timeout = wording::no_answer_within(config.first_byte_timeout.as_secs_f64());
                return self.interrupted(why, (UpstreamFailure::FirstByteTimeout, timeout), false);
            }
        };
        let response = match response {
            Ok(r) => r,
            Err(e) => {
                let (kind, failure) =
                    wording::describe_request_error(&e, &self.state.upstream_base);
                self.fail_upstream(kind, failure);
                return None;
            }
        };
        let status = response.status();
        if status.is_redirection() {
            let to = response
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(wording::origin_of)
                .unwrap_or_else(|| "another address".into());
            self.fail_upstream(UpstreamFailure::Redirect, wording::redirected(status, &to));
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
            let settings = std::mem::take(&mut self.sent_settings);
            let refused = matches!(status.as_u16(), 400 | 422);
            let about_state = refused
                && replay::carries_state(&self.messages)
                && replay::names_replayed_state(&detail);
            let about_reasoning =
                refused && !settings.is_empty() && providers::names_a_setting(&detail);
            let failure = if about_state {
                wording::replay_refused(status, &detail)
            } else if about_reasoning {
                wording::setting_refused(status, &settings, &detail)
            } else {
                wording::http_status(status, &detail, retry_after.as_deref())
            };
            let kind = if status.is_server_error() {
                UpstreamFailure::Http5xx
            } else {
                UpstreamFailure::Http4xx
            };
            self.fail_upstream(kind, failure);
            return None;
        }
        self.phase = Phase::Streaming {
            body: response.bytes_stream().boxed(),
            parser: providers::parser_with_limit(
                config.provider,
                &self.options.model,
                config.think_start && self.options.answer_now.is_none(),
                config.limits.max_line_bytes,
            ),
        };
        None
    }

    /// Reads the next upstream chunk into events. Returns a keep-alive comment when the upstream
    /// has been silent for the keep-alive interval.
    async fn read(&mut self) -> Option<Produced> {
        let config = self.state.config.clone();
        let started = self.started;
        let Phase::Streaming { body, parser } = &mut self.phase else {
            return None;
        };
        let deadline = if self.first_byte_seen {
            self.last_upstream + config.idle_timeout
        } else {
            self.request_started + config.first_byte_timeout
        };
        let keep_alive_at = self.last_sent + config.keep_alive;
        let chunk = match self.waits.race(body.next(), deadline, keep_alive_at).await {
            Ok(chunk) => chunk,
            Err(why) => {
                let timeout = if self.first_byte_seen {
                    (
                        UpstreamFailure::IdleTimeout,
                        wording::silent_for(config.idle_timeout.as_secs_f64()),
                    )
                } else {
                    (
                        UpstreamFailure::FirstByteTimeout,
                        wording::no_start_within(config.first_byte_timeout.as_secs_f64()),
                    )
                };
                return self.interrupted(why, timeout, true);
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
                tracing::warn!(error = %e.without_url(), "the model server's stream broke");
                parser.finish(&mut self.pieces);
                self.apply_pieces(now_ms);
                self.fail_upstream(
                    UpstreamFailure::ConnectionReset,
                    wording::connection_broke(),
                );
                return None;
            }
            None => {
                parser.finish(&mut self.pieces);
                self.apply_pieces(now_ms);
                let continuing = matches!(self.phase, Phase::NotStarted);
                if !self.asm.is_finished() && !continuing {
                    let before = self.events.len();
                    self.asm.end_of_stream(now_ms, &mut self.events);
                    if self.asm.outcome() == Some(Outcome::Error) && self.events.len() > before {
                        self.state
                            .metrics
                            .upstream_error(UpstreamFailure::Truncated);
                    }
                }
                return None;
            }
        }
        self.apply_pieces(now_ms);
        None
    }

    fn apply_pieces(&mut self, now_ms: u64) {
        let prefilled = matches!(self.options.answer_now, Some(AnswerNow::Prefill(_)));
        let mut pieces = std::mem::take(&mut self.pieces);
        for piece in pieces.drain(..) {
            if self.returned.take(&piece) {
                continue;
            }
            match piece {
                Piece::Paused(content) if self.continuations < MAX_CONTINUATIONS => {
                    self.paused = Some(content);
                    continue;
                }
                Piece::End if self.paused.is_some() => {
                    self.continue_paused();
                    break;
                }
                _ => {}
            }
            // After a prefill closed `</think>`, whatever comes is the answer, even from a server
            // whose reasoning parser still labels it reasoning.
            let piece = match piece {
                Piece::Reasoning { text, .. } if prefilled => Piece::Answer(text),
                Piece::BlockStart { .. } | Piece::BlockEnd | Piece::BlockKind { .. }
                    if prefilled =>
                {
                    continue
                }
                other => other,
            };
            if let Piece::Reasoning { text, .. } = &piece {
                keep_tail(&mut self.reasoning, text, MAX_KEPT_REASONING);
            }
            match &piece {
                Piece::Error(Failure { message, .. }) => {
                    let kind = UpstreamFailure::InStream;
                    self.state.metrics.upstream_error(kind);
                    tracing::warn!(kind = kind.name(), detail = %message, "upstream failure");
                }
                Piece::TooLong { limit } => {
                    let kind = UpstreamFailure::LineTooLong;
                    self.state.metrics.upstream_error(kind);
                    tracing::warn!(kind = kind.name(), limit = *limit, "upstream failure");
                }
                _ => {}
            }
            self.asm.push(piece, now_ms, &mut self.events);
        }
        self.pieces = pieces;
        if self.asm.capped {
            self.asm.capped = false;
            let kind = UpstreamFailure::TurnTooLong;
            self.state.metrics.upstream_error(kind);
            tracing::warn!(
                kind = kind.name(),
                limit = self.state.config.limits.max_turn_chars,
                "upstream failure: the turn reached PONDER_MAX_TURN_CHARS; ended as length"
            );
        }
        if self.asm.is_finished() {
            self.phase = Phase::Over;
        }
    }

    /// Ends a wait on the upstream that something else cut short: a keep-alive falls due, or
    /// the turn fails with `timeout` or because Ponder shuts down (`streaming`: its stream had
    /// begun).
    fn interrupted(
        &mut self,
        why: Interrupt,
        timeout: (UpstreamFailure, Failure),
        streaming: bool,
    ) -> Option<Produced> {
        match why {
            Interrupt::KeepAlive => {
                if let Some(p) = &mut self.persist {
                    p.flush();
                }
                Some(Produced::KeepAlive)
            }
            Interrupt::Deadline => {
                let (kind, failure) = timeout;
                self.fail_upstream(kind, failure);
                None
            }
            Interrupt::Shutdown => {
                self.fail_upstream(UpstreamFailure::Shutdown, wording::shutting_down(streaming));
                None
            }
            Interrupt::AnswerNow => {
                self.answer_now();
                None
            }
            Interrupt::Stop => {
                let now_ms = self.now_ms();
                self.asm.stop(now_ms, &mut self.events);
                self.phase = Phase::Over;
                None
            }
            Interrupt::Abandon => {
                self.fail_upstream(UpstreamFailure::Shutdown, wording::replica_abandoned());
                None
            }
        }
    }

    /// The provider paused its tool loop: the same turn goes on with a request that sends the
    /// paused response's content back as the assistant's message so far.
    fn continue_paused(&mut self) {
        let Some(serde_json::Value::Array(blocks)) = self.paused.take() else {
            return;
        };
        self.continuations += 1;
        tracing::info!(
            continuation = self.continuations,
            "the model server paused its tool loop; continuing the turn"
        );
        self.messages.push(ChatMessage {
            replay: blocks,
            ..ChatMessage::assistant("")
        });
        self.first_byte_seen = false;
        self.phase = Phase::NotStarted;
    }

    /// "Answer now": the open block ends cut short, the upstream is dropped, and a follow-up
    /// request asks for the answer with the reasoning so far. Ignored once the answer began.
    fn answer_now(&mut self) {
        // Once the answer began (or a follow-up already runs) there is nothing to cut, and the
        // stream goes on untouched.
        if !self.asm.is_thinking() || self.options.answer_now.is_some() {
            return;
        }
        let now_ms = self.now_ms();
        if !self.asm.cut_short(now_ms, &mut self.events) {
            return;
        }
        self.state.metrics.answer_now();
        let reasoning = std::mem::take(&mut self.reasoning);
        let prefill = match self.state.config.answer_now {
            AnswerNowMode::Prefill => true,
            AnswerNowMode::AskAgain => false,
            AnswerNowMode::Auto => matches!(
                self.state.config.provider,
                ProviderKind::OpenAi | ProviderKind::Ollama
            ),
        };
        self.options.answer_now = Some(if prefill {
            AnswerNow::Prefill(reasoning)
        } else {
            AnswerNow::AskAgain(reasoning)
        });
        self.first_byte_seen = false;
        self.phase = Phase::NotStarted;
    }

    fn fail_upstream(&mut self, kind: UpstreamFailure, failure: Failure) {
        self.state.metrics.upstream_error(kind);
        tracing::warn!(kind = kind.name(), detail = %failure.message, "upstream failure");
        self.asm.fail(failure, &mut self.events);
        self.phase = Phase::Over;
    }

    /// What the turn spent so far, the provider's counts completed by estimates.
    fn spend_as(&self, ticket: Option<&ledger::Ticket>) -> crate::domain::usage::Spend {
        crate::domain::usage::Spend::of(
            self.asm.usage(),
            ledger::streamed(
                ticket,
                self.asm.thinking_chars,
                self.asm.answer_chars,
                self.thinking_ms,
                self.now_ms(),
            ),
        )
    }

    /// Writes the turn's usage line before its last event goes out.
    /// A turn that took its reader over a limit says so in its `done`.
    async fn write_ledger(&mut self) {
        let Some(ticket) = self.ledger.take() else {
            return;
        };
        let watch = ticket.who.clone().map(|who| (who, ticket.quotas.clone()));
        let spend = self.spend_as(Some(&ticket));
        let outcome = self.asm.outcome().unwrap_or(Outcome::Error);
        let line = ledger::line(&self.state, ticket, &self.options.model, spend, outcome);
        ledger::write(&self.state.store, &self.state.usage, line).await;
        let Some((who, quotas)) = watch else {
            return;
        };
        if let Some(over) = ledger::reached(&self.state.store, &who, &quotas).await {
            let when = ledger::rfc3339(over.resets_at);
            ledger::amend_done(&mut self.redacted, |u| {
                if let Some(u) = u {
                    u.limit_reached = Some(when.clone());
                }
            });
        }
    }

    /// Sums the reasoning time of the blocks that end, and gives the turn's `done` its final
    /// usage: estimates for what the provider did not count, marked, and the cost.
    fn account_for_events(&mut self) {
        for event in &self.events {
            if let TurnEvent::ThinkingEnd {
                duration_ms: Some(ms),
                ..
            } = event
            {
                self.thinking_ms += ms;
            }
        }
        if !self
            .events
            .iter()
            .any(|e| matches!(e, TurnEvent::Done { .. }))
        {
            return;
        }
        let spend = self.spend_as(self.ledger.as_ref());
        let usage = ledger::final_usage(&self.state, &self.options.model, self.asm.usage(), &spend);
        ledger::amend_done(&mut self.events, |u| *u = Some(usage.clone()));
    }

    fn log(&mut self) {
        if self.logged {
            return;
        }
        self.logged = true;
        let outcome = self.asm.outcome().unwrap_or(Outcome::ClientClosed);
        if let Some(ticket) = self.ledger.take() {
            let spend = self.spend_as(Some(&ticket));
            let line = ledger::line(&self.state, ticket, &self.options.model, spend, outcome);
            ledger::record_later(self.state.store.clone(), line);
        }
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
        if self.asm.first_thinking_ms.is_some() {
            self.state.models.observe_reasoning(&self.options.model);
        }
        tracing::info!(
            model = %self.options.model,
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

/// How many times one turn continues a response its provider paused; the next pause ends it.
const MAX_CONTINUATIONS: u32 = 8;

/// The reasoning kept for "Answer now" at most (bytes); of a longer scratchpad its end is kept,
/// where the model was closest to a conclusion.
const MAX_KEPT_REASONING: usize = 256 * 1024;

/// Appends `text` to `kept`, dropping from the front past `max` bytes (at a character edge).
fn keep_tail(kept: &mut String, text: &str, max: usize) {
    kept.push_str(text);
    if kept.len() > max {
        let mut cut = kept.len() - max * 3 / 4;
        while !kept.is_char_boundary(cut) {
            cut += 1;
        }
        kept.drain(..cut);
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
