//! Send, stop and retry: the chat server function → the turn decoder → the reducer → signals.

use std::sync::atomic::{AtomicU64, Ordering};

use futures::channel::oneshot;
use futures::{FutureExt, StreamExt};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::turn_state::TurnState;
use crate::api::chat::chat;
use crate::api::sse::TurnDecoder;
use crate::domain::{ChatMessage, Role, TurnEvent};

/// Milliseconds on the client's clock (0 on the server, where turns never run).
pub fn now_ms() -> f64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0.0
    }
}

/// One message in the conversation as the page shows it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Stable key for the list: appending a token re-renders only its own bubble.
    pub id: u64,
    pub role: Role,
    /// The user's text (user entries only).
    pub text: String,
    /// The assistant's turn (assistant entries only).
    pub turn: Option<RwSignal<TurnState>>,
    /// When the message was written, in client ms.
    pub created_at: f64,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The conversation on the page and the turn that may be running.
#[derive(Clone, Copy)]
pub struct ChatController {
    pub entries: RwSignal<Vec<Entry>>,
    /// The running turn's stop switch, present while a turn streams.
    stop: StoredValue<Option<oneshot::Sender<()>>, LocalStorage>,
    pub running: RwSignal<bool>,
    /// Seconds without any frame before the pre-token guard gives up.
    pub guard_secs: RwSignal<u64>,
}

impl Default for ChatController {
    fn default() -> Self {
        Self::new()
    }
}

impl ChatController {
    pub fn new() -> Self {
        ChatController {
            entries: RwSignal::new(Vec::new()),
            stop: StoredValue::new_local(None),
            running: RwSignal::new(false),
            guard_secs: RwSignal::new(120),
        }
    }

    /// The history to send: user texts and finished assistant answers, thinking excluded.
    fn history(entries: &[Entry]) -> Vec<ChatMessage> {
        entries
            .iter()
            .filter_map(|e| match e.role {
                Role::User => Some(ChatMessage::user(e.text.clone())),
                Role::Assistant => {
                    let answer = e.turn?.with_untracked(|t| t.answer.clone());
                    (!answer.trim().is_empty()).then(|| ChatMessage::assistant(answer))
                }
            })
            .collect()
    }

    /// Sends a user message and streams the assistant's turn.
    pub fn send(&self, text: String) {
        if self.running.get_untracked() || text.trim().is_empty() {
            return;
        }
        let now = now_ms();
        let turn = RwSignal::new(TurnState::new());
        let mut messages = Vec::new();
        self.entries.update(|entries| {
            entries.push(Entry {
                id: next_id(),
                role: Role::User,
                text,
                turn: None,
                created_at: now,
            });
            messages = Self::history(entries);
            entries.push(Entry {
                id: next_id(),
                role: Role::Assistant,
                text: String::new(),
                turn: Some(turn),
                created_at: now,
            });
        });
        self.start(messages, turn);
    }

    /// Runs the last user message again in a fresh turn that replaces `turn`'s content.
    pub fn retry(&self, turn: RwSignal<TurnState>) {
        if self.running.get_untracked() {
            return;
        }
        let messages = self.entries.with_untracked(|entries| {
            let upto = entries
                .iter()
                .position(|e| e.turn == Some(turn))
                .unwrap_or(entries.len());
            Self::history(&entries[..upto])
        });
        turn.set(TurnState::new());
        self.start(messages, turn);
    }

    /// Ends the running turn at once; what arrived stays, marked stopped.
    pub fn stop(&self) {
        self.stop.update_value(|s| {
            if let Some(tx) = s.take() {
                let _ = tx.send(());
            }
        });
    }

    fn start(&self, messages: Vec<ChatMessage>, turn: RwSignal<TurnState>) {
        let (tx, rx) = oneshot::channel();
        self.stop.set_value(Some(tx));
        self.running.set(true);
        let running = self.running;
        let stop = self.stop;
        let guard_secs = self.guard_secs.get_untracked();
        spawn_local(async move {
            run_turn(messages, turn, rx, guard_secs).await;
            stop.set_value(None);
            running.set(false);
        });
    }
}

fn apply_all(turn: RwSignal<TurnState>, events: &mut Vec<TurnEvent>) {
    if events.is_empty() {
        return;
    }
    let now = now_ms();
    turn.update(|t| {
        for e in events.drain(..) {
            t.apply(&e, now);
        }
    });
}

async fn run_turn(
    messages: Vec<ChatMessage>,
    turn: RwSignal<TurnState>,
    stop: oneshot::Receiver<()>,
    guard_secs: u64,
) {
    let mut stop = stop.fuse();
    let mut guard = sleep(std::time::Duration::from_secs(guard_secs)).fuse();
    let mut call = Box::pin(chat(messages).fuse());
    let stream = futures::select! {
        result = call => result,
        _ = stop => { turn.update(|t| t.stop(now_ms())); return; }
        _ = guard => { turn.update(|t| t.no_frame_within(guard_secs, now_ms())); return; }
    };
    let mut bytes = match stream {
        Ok(stream) => stream.into_inner(),
        Err(e) => {
            turn.update(|t| t.fail(e.message, e.retryable, now_ms()));
            return;
        }
    };
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    loop {
        futures::select! {
            chunk = bytes.next().fuse() => match chunk {
                Some(Ok(chunk)) => {
                    decoder.push(&chunk, &mut events);
                    apply_all(turn, &mut events);
                    if !turn.with_untracked(|t| t.phase.is_running()) {
                        return;
                    }
                }
                Some(Err(_)) | None => break,
            },
            _ = stop => {
                turn.update(|t| t.stop(now_ms()));
                return;
            }
            _ = guard => {
                let gave_up = turn.with_untracked(|t| !t.saw_frame);
                if gave_up {
                    turn.update(|t| t.no_frame_within(guard_secs, now_ms()));
                    return;
                }
            }
        }
    }
    decoder.finish(&mut events);
    apply_all(turn, &mut events);
    turn.update(|t| t.end_of_stream(now_ms()));
}

/// A future that resolves after `duration` (never on the server, where turns do not run).
fn sleep(
    duration: std::time::Duration,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
    let (tx, rx) = oneshot::channel::<()>();
    set_timeout(
        move || {
            let _ = tx.send(());
        },
        duration,
    );
    Box::pin(async move {
        if rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}
