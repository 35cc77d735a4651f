//! Following a turn's stream: reading it, decoding its events, applying them once per frame,
//! reconnecting to a turn the server keeps, and Stop. Its code is not in the page's first
//! download: `make site` splits it into a WebAssembly chunk of its own (`pkg/<stem>.turn.wasm`),
//! fetched when the first text is typed ([`want`]) or when a turn starts or is joined
//! ([`follow`]). If it cannot be fetched, the turn ends with a retryable error: the message is
//! kept and Retry fetches it again.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use futures::{FutureExt, StreamExt};
use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use super::browser::now_ms;
use super::decisions;
use super::turn_state::TurnState;
use crate::api::codec::TurnStream;
use crate::api::error::ApiError;
use crate::domain::{ChatRequest, ErrorCode, Failure, TurnEvent};
use crate::wire::sse::TurnDecoder;

/// What following a turn needs of the page. The controller, which owns the page's signals,
/// implements it; a trait, so that this module does not depend on the controller.
pub trait TurnHost: Copy + 'static {
    /// Applies decoded events to `turn` in one update.
    fn apply(&self, turn: RwSignal<TurnState>, events: Vec<TurnEvent>);
    /// Moves `turn` by a step of its own (Stop, a failure, the end of the stream).
    fn transition(&self, turn: RwSignal<TurnState>, change: impl FnOnce(&mut TurnState));
    /// The server stored the turn: the ids of its conversation and messages, and how the files
    /// of the reader's message went.
    fn on_stored(
        &self,
        turn: RwSignal<TurnState>,
        conversation: String,
        user_message: Option<String>,
        message: String,
        sent_as: Vec<crate::domain::attachment::SendAs>,
    );
    /// The server's id of `turn` (for "Answer now" and Stop), once it has one.
    fn started(&self, turn: RwSignal<TurnState>, id: String);
    /// Ends the server's turn `id`.
    fn stop_on_server(&self, id: String);
    /// Says in the status line that the connection was lost (or clears it).
    fn connection_lost(&self, lost: bool);
    /// Starts the turn `request` asks for (the chat server function).
    fn send(&self, request: ChatRequest) -> Call;
    /// The events of the server's turn `id` after the one numbered `after`.
    fn events(&self, id: String, after: Option<u64>) -> Call;
    /// Resolves after `duration`.
    fn sleep(&self, duration: std::time::Duration) -> LocalBoxFuture<'static, ()>;
    /// Runs `then` before the first paint at least `after` from now.
    fn on_frame(&self, after: std::time::Duration, then: Box<dyn FnOnce()>);
}

/// A request for a turn's stream.
pub type Call = LocalBoxFuture<'static, Result<TurnStream, ApiError>>;

/// Follows one turn: the host, where its events come from, the turn shown, the page's Stop,
/// and the seconds the pre-token guard waits.
type Run<H> = fn(
    H,
    Source,
    RwSignal<TurnState>,
    oneshot::Receiver<Leave>,
    u64,
) -> LocalBoxFuture<'static, Ended>;

/// What the chunk gives the page.
pub struct TurnCode<H> {
    run: Run<H>,
    warm_up: fn(),
}

impl<H: TurnHost> TurnCode<H> {
    /// The code, as the split point returns it: only that point reaches it, so all of it is in
    /// the chunk.
    pub fn new() -> Self {
        TurnCode {
            run: |host, source, turn, stop, guard_secs| {
                run_turn(host, source, turn, stop, guard_secs).boxed_local()
            },
            warm_up: warm_up_decoder,
        }
    }
}

impl<H: TurnHost> Default for TurnCode<H> {
    fn default() -> Self {
        Self::new()
    }
}

thread_local! {
    static WANTED: Cell<bool> = const { Cell::new(false) };
}

/// Starts fetching the code ahead of the first turn (once a page), and compiles its decoder on
/// a sample at the next idle moment, so the first send waits for neither.
pub fn want<H: TurnHost>(
    code: impl std::future::Future<Output = Result<TurnCode<H>, SplitLoaderError>> + 'static,
) {
    if WANTED.replace(true) {
        return;
    }
    leptos::task::spawn_local(async move {
        match code.await {
            Ok(code) => request_idle_callback(code.warm_up),
            // The first turn fetches it again, and says so if it still cannot.
            Err(_) => WANTED.set(false),
        }
    });
}

/// Follows the turn from `source` in `turn` until it ends (see [`run_turn`]), once the code is
/// here; without it the turn ends with a retryable error (the message stays, Retry tries
/// again).
pub async fn follow<H: TurnHost>(
    host: H,
    code: impl std::future::Future<Output = Result<TurnCode<H>, SplitLoaderError>>,
    source: Source,
    turn: RwSignal<TurnState>,
    stop: oneshot::Receiver<Leave>,
    guard_secs: u64,
) -> Ended {
    match code.await {
        Ok(code) => (code.run)(host, source, turn, stop, guard_secs).await,
        Err(e) => {
            leptos::logging::warn!("the turn's code could not be fetched: {e}");
            let failure = Failure::coded(
                ErrorCode::PonderUnreachable,
                crate::i18n::EN.errors.ponder_unreachable,
                true,
            );
            host.transition(turn, |t| t.fail(failure, now_ms()));
            Ended::Shown
        }
    }
}

/// Decodes a few sample frames: the browser compiles each function on its first call.
fn warm_up_decoder() {
    let mut events = Vec::new();
    let mut decoder = TurnDecoder::new();
    decoder.push(
        b"data: {\"type\":\"thinking_start\",\"block\":0,\"kind\":\"raw\"}\n\ndata: {\"type\":\"delta\",\"text\":\"x\"}\n\n",
        &mut events,
    );
    decoder.finish(&mut events);
}

/// Collects decoded events and applies them before a paint, at most once per
/// [`decisions::UPDATE_INTERVAL_MS`]; a replay first replaces the turn's state in the same
/// update, so the stored copy never blinks.
#[derive(Clone)]
struct FrameBatch {
    pending: Rc<RefCell<Vec<TurnEvent>>>,
    scheduled: Rc<Cell<bool>>,
    fresh: Rc<RefCell<Option<TurnState>>>,
    last: Rc<Cell<Option<f64>>>,
}

impl FrameBatch {
    fn new() -> Self {
        FrameBatch {
            pending: Rc::default(),
            scheduled: Rc::default(),
            fresh: Rc::default(),
            last: Rc::default(),
        }
    }

    /// The next update starts from `state` (a replay from the turn's first event).
    fn start_over(&self, state: TurnState) {
        *self.fresh.borrow_mut() = Some(state);
    }

    fn push<H: TurnHost>(&self, chat: H, turn: RwSignal<TurnState>, events: &mut Vec<TurnEvent>) {
        if events.is_empty() {
            return;
        }
        self.pending.borrow_mut().append(events);
        if !self.scheduled.replace(true) {
            let this = self.clone();
            let after = decisions::update_wait(now_ms(), self.last.get());
            chat.on_frame(
                after,
                Box::new(move || {
                    this.scheduled.set(false);
                    this.flush(chat, turn);
                }),
            );
        }
    }

    fn flush<H: TurnHost>(&self, chat: H, turn: RwSignal<TurnState>) {
        let events = std::mem::take(&mut *self.pending.borrow_mut());
        self.last.set(Some(now_ms()));
        if let Some(fresh) = self.fresh.borrow_mut().take() {
            turn.set(fresh);
        }
        chat.apply(turn, events);
    }
}

/// How the page ends its part in a running turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leave {
    /// The reader pressed Stop.
    Stop,
    /// Another chat is shown: a turn the server keeps goes on without this page.
    Detach,
}

/// Where a turn's events come from: the request that starts it, or a turn already running.
pub enum Source {
    /// Boxed: a request is far larger than a turn's id.
    Send(Box<ChatRequest>),
    Join(String),
}

/// How following a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The turn's state says why (done, error, stopped, dropped).
    Shown,
    /// The turn to join is over and no longer kept: the stored conversation holds it.
    Gone,
}

/// Follows a turn until its last event: reads its stream, decodes and applies the events once
/// per animation frame, and, for a turn the server keeps, reconnects after a broken connection
/// with the last event it has (so nothing is missed or doubled) until the server is back or
/// the reconnection budget is spent. Stop ends the turn on the server too.
async fn run_turn<H: TurnHost>(
    chat: H,
    source: Source,
    turn: RwSignal<TurnState>,
    stop: oneshot::Receiver<Leave>,
    guard_secs: u64,
) -> Ended {
    let mut stop = stop.fuse();
    let mut guard = chat
        .sleep(std::time::Duration::from_secs(guard_secs))
        .fuse();
    let (stored, mut turn_id, mut pending) = match source {
        Source::Send(request) => (request.is_stored(), None, Some(chat.send(*request).fuse())),
        Source::Join(id) => (true, Some(id), None),
    };
    // A joined turn is replayed from its start: the stored copy shown meanwhile is replaced.
    let mut replay = turn_id.is_some();
    let mut last_id: Option<u64> = None;
    let mut saw_frame = false;
    let mut stopping = false;
    let mut attempt = 0u32;
    let batch = FrameBatch::new();
    loop {
        let call = match pending.take() {
            Some(call) => call,
            None => {
                let Some(id) = turn_id.clone() else {
                    break;
                };
                chat.events(id, last_id).fuse()
            }
        };
        let mut call = call;
        let response = futures::select! {
            result = call => result,
            how = stop => {
                if how.unwrap_or(Leave::Detach) == Leave::Stop {
                    chat.transition(turn, |t| t.stop(now_ms()));
                    match turn_id.clone() {
                        Some(id) => chat.stop_on_server(id),
                        // The turn's id is its first event: wait for it, then stop it.
                        None => stopping = stored,
                    }
                }
                if !stopping {
                    return Ended::Shown;
                }
                call.await
            }
            _ = guard => {
                if !saw_frame {
                    chat.transition(turn, |t| t.no_frame_within(guard_secs, now_ms()));
                    return Ended::Shown;
                }
                call.await
            }
        };
        let mut bytes = match response {
            Ok(stream) => {
                chat.connection_lost(false);
                stream.into_inner()
            }
            // The turn is over and no longer kept: the stored conversation holds the whole of it.
            Err(e) if turn_id.is_some() && e.0.code == crate::domain::ErrorCode::TurnNotFound => {
                return Ended::Gone
            }
            Err(e) => {
                if let Some(delay) = decisions::reconnect(stored, turn_id.as_deref(), &mut attempt)
                {
                    chat.connection_lost(true);
                    chat.sleep(delay).await;
                    continue;
                }
                chat.transition(turn, |t| t.fail(e.0, now_ms()));
                return Ended::Shown;
            }
        };
        if std::mem::take(&mut replay) {
            batch.start_over(TurnState::joined(&turn.get_untracked(), now_ms()));
        }
        let mut decoder = TurnDecoder::new();
        let mut events = Vec::new();
        loop {
            futures::select! {
                chunk = bytes.next().fuse() => match chunk {
                    Some(Ok(chunk)) => {
                        decoder.push(&chunk, &mut events);
                        if decoder.last_id() > last_id {
                            // Something new arrived: the reconnection budget starts again.
                            last_id = decoder.last_id();
                            attempt = 0;
                        }
                        let mut started = None;
                        events.retain(|e| match e {
                            TurnEvent::Turn { conversation, user_message, message, sent_as, .. } => {
                                chat.on_stored(turn, conversation.clone(), user_message.clone(), message.clone(), sent_as.clone());
                                false
                            }
                            TurnEvent::Started { turn } => {
                                started = Some(turn.clone());
                                false
                            }
                            _ => true,
                        });
                        if let Some(id) = started {
                            chat.started(turn, id.clone());
                            turn_id = Some(id.clone());
                            if stopping {
                                chat.stop_on_server(id);
                                return Ended::Shown;
                            }
                        }
                        if stopping {
                            continue;
                        }
                        saw_frame |= events.iter().any(|e| !matches!(e, TurnEvent::Clock { .. }));
                        let terminal = events.iter().any(TurnEvent::is_terminal);
                        batch.push(chat, turn, &mut events);
                        if terminal {
                            batch.flush(chat, turn);
                            return Ended::Shown;
                        }
                    }
                    Some(Err(_)) | None => break,
                },
                how = stop => {
                    batch.flush(chat, turn);
                    if how.unwrap_or(Leave::Detach) == Leave::Stop {
                        chat.transition(turn, |t| t.stop(now_ms()));
                        match turn_id.clone() {
                            Some(id) if stored => chat.stop_on_server(id),
                            None if stored => { stopping = true; continue; }
                            _ => {}
                        }
                    }
                    return Ended::Shown;
                }
                _ = guard => {
                    if !saw_frame {
                        batch.flush(chat, turn);
                        chat.transition(turn, |t| t.no_frame_within(guard_secs, now_ms()));
                        // Given up on here, so it is not left running on the server either.
                        if let Some(id) = turn_id.clone().filter(|_| stored) {
                            chat.stop_on_server(id);
                        }
                        return Ended::Shown;
                    }
                }
            }
        }
        if stopping {
            return Ended::Shown;
        }
        // The connection broke before the turn's last event: a turn the server keeps is still
        // running there (or has just finished), so the page reconnects and asks for what follows
        // the last event it has. A frame cut off by the break is dropped (it comes again).
        match decisions::reconnect(stored, turn_id.as_deref(), &mut attempt) {
            Some(delay) => {
                batch.flush(chat, turn);
                chat.connection_lost(true);
                chat.sleep(delay).await;
            }
            None => {
                decoder.finish(&mut events);
                batch.push(chat, turn, &mut events);
                batch.flush(chat, turn);
                chat.transition(turn, |t| t.end_of_stream(now_ms()));
                return Ended::Shown;
            }
        }
    }
    chat.transition(turn, |t| t.end_of_stream(now_ms()));
    Ended::Shown
}
#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::time::Duration;

    use super::*;
    use crate::client::turn_state::TurnPhase;
    use crate::wire::sse::encode_numbered_event;

    /// What the scripted server does with one call.
    enum Reply {
        /// Sends these events (numbered from their position), then drops the connection, or
        /// keeps it open without a word when `hold`.
        Events(Vec<(u64, TurnEvent)>, bool),
        Fails(Failure),
    }

    thread_local! {
        /// The pre-token guard's time runs out once a connection waits without a word (else it
        /// never does).
        static GUARD_RUNS_OUT: Cell<bool> = const { Cell::new(false) };
        /// A connection is open and silent.
        static HELD: Cell<bool> = const { Cell::new(false) };
        /// The guard's time ran out: a silent connection then drops.
        static FIRED: Cell<bool> = const { Cell::new(false) };
    }

    /// A connection that stays open without a word, until the guard's time runs out; then it
    /// drops.
    fn silence() -> impl futures::Stream<Item = bytes::Bytes> + Send {
        futures::stream::poll_fn(|cx| {
            if FIRED.get() {
                return std::task::Poll::Ready(None);
            }
            HELD.set(true);
            if GUARD_RUNS_OUT.get() {
                cx.waker().wake_by_ref();
            }
            std::task::Poll::Pending
        })
    }

    /// A server and a page, scripted: what each call gets, and what the follower did.
    #[derive(Default)]
    struct Script {
        replies: RefCell<VecDeque<Reply>>,
        calls: RefCell<Vec<String>>,
        stopped_on_server: RefCell<Vec<String>>,
        lost: RefCell<Vec<bool>>,
        waits: RefCell<Vec<Duration>>,
        /// How long each update waited for.
        frames: RefCell<Vec<Duration>>,
        /// The reader presses Stop once this many events were applied.
        stop_after: Cell<Option<usize>>,
        stop: RefCell<Option<oneshot::Sender<Leave>>>,
        applied: Cell<usize>,
    }

    #[derive(Clone, Copy)]
    struct Host(&'static Script);

    impl Host {
        fn reply(&self, call: String) -> Call {
            self.0.calls.borrow_mut().push(call);
            let reply = self.0.replies.borrow_mut().pop_front();
            match reply {
                Some(Reply::Events(events, hold)) => {
                    let mut text = String::new();
                    for (seq, e) in &events {
                        encode_numbered_event(*seq, e, &mut text);
                    }
                    let frames = futures::stream::iter([bytes::Bytes::from(text)]);
                    let stream = if hold {
                        TurnStream::new(frames.chain(silence()))
                    } else {
                        TurnStream::new(frames)
                    };
                    futures::future::ready(Ok(stream)).boxed_local()
                }
                Some(Reply::Fails(f)) => futures::future::ready(Err(ApiError(f))).boxed_local(),
                None => futures::future::pending().boxed_local(),
            }
        }
    }

    impl TurnHost for Host {
        fn apply(&self, turn: RwSignal<TurnState>, events: Vec<TurnEvent>) {
            let count = events.len();
            turn.update(|t| events.iter().for_each(|e| t.apply(e, 1.0)));
            self.0.applied.set(self.0.applied.get() + count);
            if self
                .0
                .stop_after
                .get()
                .is_some_and(|n| self.0.applied.get() >= n)
            {
                if let Some(tx) = self.0.stop.borrow_mut().take() {
                    let _ = tx.send(Leave::Stop);
                }
            }
        }

        fn transition(&self, turn: RwSignal<TurnState>, change: impl FnOnce(&mut TurnState)) {
            turn.update(change);
        }

        fn on_stored(
            &self,
            _: RwSignal<TurnState>,
            _: String,
            _: Option<String>,
            _: String,
            _: Vec<crate::domain::attachment::SendAs>,
        ) {
        }

        fn started(&self, _: RwSignal<TurnState>, _: String) {}

        fn stop_on_server(&self, id: String) {
            self.0.stopped_on_server.borrow_mut().push(id);
        }

        fn connection_lost(&self, lost: bool) {
            self.0.lost.borrow_mut().push(lost);
        }

        fn send(&self, _: ChatRequest) -> Call {
            self.reply("send".into())
        }

        fn events(&self, id: String, after: Option<u64>) -> Call {
            self.reply(format!("events {id} after {after:?}"))
        }

        fn sleep(&self, duration: Duration) -> LocalBoxFuture<'static, ()> {
            self.0.waits.borrow_mut().push(duration);
            if duration < Duration::from_secs(GUARD) {
                return futures::future::ready(()).boxed_local();
            }
            futures::future::poll_fn(|_| {
                if GUARD_RUNS_OUT.get() && HELD.get() {
                    FIRED.set(true);
                    std::task::Poll::Ready(())
                } else {
                    std::task::Poll::Pending
                }
            })
            .boxed_local()
        }

        fn on_frame(&self, after: Duration, then: Box<dyn FnOnce()>) {
            self.0.frames.borrow_mut().push(after);
            then();
        }
    }

    const GUARD: u64 = 120;

    fn started(id: &str) -> TurnEvent {
        TurnEvent::Started { turn: id.into() }
    }

    fn delta(text: &str) -> TurnEvent {
        TurnEvent::Delta { text: text.into() }
    }

    fn done() -> TurnEvent {
        TurnEvent::Done {
            finish_reason: "stop".into(),
            usage: None,
            thinking_chars: 0,
            total_ms: 10,
        }
    }

    /// A request the server keeps (so a dropped stream is reconnected to).
    fn stored() -> Source {
        Source::Send(Box::new(ChatRequest {
            content: Some("hi".into()),
            ..ChatRequest::stateless(Vec::new())
        }))
    }

    fn stateless() -> Source {
        Source::Send(Box::new(ChatRequest::stateless(Vec::new())))
    }

    /// Follows a turn from `source` against `replies`; the script tells what happened.
    fn follow(
        source: Source,
        replies: Vec<Reply>,
        prepare: impl FnOnce(&Script),
    ) -> (Ended, TurnState, &'static Script) {
        let owner = Owner::new();
        owner.set();
        let script: &'static Script = Box::leak(Box::default());
        *script.replies.borrow_mut() = replies.into();
        prepare(script);
        let (tx, rx) = oneshot::channel();
        *script.stop.borrow_mut() = Some(tx);
        let turn = RwSignal::new(TurnState::started(0.0));
        let ended = futures::executor::block_on(run_turn(Host(script), source, turn, rx, GUARD));
        (ended, turn.get_untracked(), script)
    }

    #[test]
    fn a_dropped_stream_of_a_kept_turn_is_followed_again_from_its_last_event() {
        let (ended, turn, script) = follow(
            stored(),
            vec![
                Reply::Events(vec![(1, started("t1")), (2, delta("Hel"))], false),
                Reply::Events(vec![(3, delta("lo")), (4, done())], false),
            ],
            |_| {},
        );
        assert_eq!(ended, Ended::Shown);
        assert_eq!(turn.phase, TurnPhase::Done);
        assert_eq!(turn.answer, "Hello");
        assert_eq!(*script.calls.borrow(), ["send", "events t1 after Some(2)"]);
        assert_eq!(*script.lost.borrow(), [false, true, false]);
        assert_eq!(script.waits.borrow()[1..], [Duration::ZERO]);
        assert_eq!(
            *script.frames.borrow(),
            [Duration::ZERO, Duration::from_millis(50)],
            "the first events are shown at the next frame, later ones one interval after the last update"
        );
    }

    #[test]
    fn a_dropped_stream_of_a_turn_nobody_keeps_ends_as_dropped_with_what_arrived() {
        let (_, turn, script) = follow(
            stateless(),
            vec![Reply::Events(vec![(1, delta("Hel"))], false)],
            |_| {},
        );
        assert_eq!(turn.phase, TurnPhase::Error);
        assert_eq!(turn.answer, "Hel");
        assert_eq!(turn.error.map(|e| e.code), Some(ErrorCode::StreamDropped));
        assert_eq!(*script.calls.borrow(), ["send"]);
    }

    #[test]
    fn a_kept_turn_is_retried_until_the_reconnection_budget_is_spent() {
        let unreachable = || Reply::Fails(Failure::new("down", true));
        let mut replies = vec![Reply::Events(vec![(1, started("t1"))], false)];
        replies.extend((0..20).map(|_| unreachable()));
        let (_, turn, script) = follow(stored(), replies, |_| {});
        assert_eq!(turn.phase, TurnPhase::Error);
        let tries = script.calls.borrow().len() - 1;
        assert_eq!(
            tries, 12,
            "one try per delay, then the last failure is shown"
        );
        assert_eq!(script.lost.borrow().last(), Some(&true));
    }

    #[test]
    fn stop_ends_the_turn_here_and_on_the_server() {
        let (ended, turn, script) = follow(
            stored(),
            vec![Reply::Events(
                vec![(1, started("t1")), (2, delta("Hel"))],
                true,
            )],
            |s| s.stop_after.set(Some(1)),
        );
        assert_eq!(ended, Ended::Shown);
        assert_eq!(turn.phase, TurnPhase::Stopped);
        assert_eq!(turn.answer, "Hel");
        assert_eq!(*script.stopped_on_server.borrow(), ["t1"]);
    }

    #[test]
    fn a_silent_server_is_given_up_on_after_the_guard_and_its_turn_stopped() {
        let (_, turn, script) = follow(
            stored(),
            vec![Reply::Events(vec![(1, started("t1"))], true)],
            |_| GUARD_RUNS_OUT.set(true),
        );
        assert_eq!(turn.phase, TurnPhase::Error);
        assert_eq!(turn.answer, "");
        assert_eq!(*script.stopped_on_server.borrow(), ["t1"]);
        assert_eq!(script.waits.borrow()[0], Duration::from_secs(GUARD));
    }

    #[test]
    fn the_guard_does_not_end_a_turn_that_already_spoke() {
        let (_, turn, script) = follow(
            stored(),
            vec![
                Reply::Events(vec![(1, started("t1")), (2, delta("Hi"))], false),
                Reply::Events(vec![(3, done())], false),
            ],
            |_| GUARD_RUNS_OUT.set(true),
        );
        assert_eq!(turn.phase, TurnPhase::Done);
        assert_eq!(turn.answer, "Hi");
        assert!(script.stopped_on_server.borrow().is_empty());
    }

    #[test]
    fn joining_a_turn_whose_log_is_gone_hands_over_to_the_stored_copy() {
        let (ended, _, script) = follow(
            Source::Join("t9".into()),
            vec![Reply::Fails(Failure::coded(
                ErrorCode::TurnNotFound,
                "gone",
                false,
            ))],
            |_| {},
        );
        assert_eq!(ended, Ended::Gone);
        assert_eq!(*script.calls.borrow(), ["events t9 after None"]);
    }
}
