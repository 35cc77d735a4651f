//! The writes of every running stored turn, grouped. Streaming states are written together
//! once a second: each turn hands over its latest state (at most once a second); the writer
//! takes all that are waiting and writes them in one transaction ([`Store::save_streaming`]).
//! Final states do not wait a second: the first one starts a writer at once, and the states
//! that end while it writes go together in its next transaction ([`Store::save_finals`]), each
//! turn awaiting its own result.
//!
//! The writers run only while states are waiting, so they need no start and no stop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use crate::server::store::finals::FinalState;
use crate::server::store::streaming::StreamingState;
use crate::server::store::usage::LedgerLine;
use crate::server::store::{Store, StoreError};

/// How often a streaming answer is written at most.
pub const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// A batch's waiting items, and whether a writer task is on its way to take them.
struct Queue<T> {
    items: T,
    writing: bool,
}

impl<T: Default> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            items: T::default(),
            writing: false,
        }
    }
}

fn lock<T>(queue: &Mutex<Queue<T>>) -> std::sync::MutexGuard<'_, Queue<T>> {
    queue.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Adds to the queue; true when the caller is to start a writer (none is on its way).
fn put<T>(queue: &Mutex<Queue<T>>, add: impl FnOnce(&mut T)) -> bool {
    let mut waiting = lock(queue);
    add(&mut waiting.items);
    !std::mem::replace(&mut waiting.writing, true)
}

/// What the writer takes next (`split` leaves in the queue what is for a later round); `None`
/// when nothing waits, and then the writer is gone (in the same lock, so the next item starts
/// another).
fn take<T>(
    queue: &Mutex<Queue<T>>,
    empty: impl Fn(&T) -> bool,
    split: impl FnOnce(&mut T) -> T,
) -> Option<T> {
    let mut waiting = lock(queue);
    if empty(&waiting.items) {
        waiting.writing = false;
        return None;
    }
    Some(split(&mut waiting.items))
}

/// Lets the next item start a writer again if this one ends in any other way (a panic, its
/// runtime stopping), emptied when the writer leaves by [`take`]. With `drop_waiting`, what
/// waits is dropped too, so that turns awaiting their result are told it will not come.
struct Writing<'a, T: Default> {
    queue: Option<&'a Mutex<Queue<T>>>,
    drop_waiting: bool,
}

impl<T: Default> Drop for Writing<'_, T> {
    fn drop(&mut self) {
        if let Some(queue) = self.queue {
            let mut waiting = lock(queue);
            waiting.writing = false;
            if self.drop_waiting {
                waiting.items = T::default();
            }
        }
    }
}

type Streaming = HashMap<String, (StreamingState, Arc<AtomicBool>)>;

/// The states waiting for the next write, shared by the turns of one server.
#[derive(Default)]
pub struct StreamingBatch {
    /// By answer version: the latest state, and the flag its turn reads to learn that its
    /// answer is not being saved.
    waiting: Mutex<Queue<Streaming>>,
}

impl StreamingBatch {
    /// Hands over a turn's latest state (merged with one still waiting), starting the writer
    /// if none is on its way.
    pub fn put(self: &Arc<Self>, store: &Store, state: StreamingState, failed: Arc<AtomicBool>) {
        let start = put(&self.waiting, |states| {
            match states.get_mut(state.version_id()) {
                Some((kept, _)) => kept.merge(state),
                None => {
                    states.insert(state.version_id().to_string(), (state, failed));
                }
            }
        });
        if start {
            tokio::spawn(self.clone().write(store.clone()));
        }
    }

    /// Drops a waiting state of `version_id`: its final state is being written instead.
    pub fn forget(&self, version_id: &str) {
        lock(&self.waiting).items.remove(version_id);
    }

    async fn write(self: Arc<Self>, store: Store) {
        let mut running = Writing {
            queue: Some(&self.waiting),
            drop_waiting: false,
        };
        loop {
            tokio::time::sleep(FLUSH_EVERY).await;
            let Some(taken) = take(&self.waiting, HashMap::is_empty, std::mem::take) else {
                running.queue = None;
                return;
            };
            let (states, flags): (Vec<StreamingState>, Vec<Arc<AtomicBool>>) =
                taken.into_values().unzip();
            if let Err(e) = store.save_streaming(&states).await {
                tracing::error!(error = %e, turns = states.len(), "streaming answers could not be saved");
                for failed in flags {
                    failed.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

type Reply = oneshot::Sender<Result<(), StoreError>>;

/// What a [`Batch`] writes: many at once, each with its own result.
pub trait Written: Send + Sync + Sized + 'static {
    /// At most this many in one write.
    const MAX: usize;
    /// Writes `items` together; one result for each.
    fn write_all(
        store: &Store,
        items: &[Self],
    ) -> impl std::future::Future<Output = Vec<Result<(), StoreError>>> + Send;
}

/// Final states in one transaction at most: each is a savepoint, and PostgreSQL slows every
/// session's snapshots once a transaction has more than 64 subtransactions (two an answer
/// with a reasoning state). A long batch would also hold SQLite's writers back.
impl Written for FinalState {
    const MAX: usize = 32;
    async fn write_all(store: &Store, items: &[Self]) -> Vec<Result<(), StoreError>> {
        store.save_finals(items).await
    }
}

/// Usage lines, a statement for a hundred: where each turn's line was a transaction of its
/// own (three round trips to SQLite's thread, and a place in the writers' queue).
impl Written for LedgerLine {
    const MAX: usize = 100;
    async fn write_all(store: &Store, items: &[Self]) -> Vec<Result<(), StoreError>> {
        store.record_usages(items).await
    }
}

/// Items waiting for the next write, shared by the turns of one server: the first starts a
/// writer at once, and the items that come while it writes go together in its next write,
/// each turn awaiting its own result.
pub struct Batch<T> {
    waiting: Mutex<Queue<Vec<(T, Reply)>>>,
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Batch {
            waiting: Mutex::default(),
        }
    }
}

/// The final states of answers.
pub type FinalBatch = Batch<FinalState>;
/// The turns' usage lines.
pub type UsageBatch = Batch<LedgerLine>;

impl<T: Written> Batch<T> {
    /// Writes `item` with the others that come meanwhile; its own result.
    pub async fn save(self: &Arc<Self>, store: &Store, item: T) -> Result<(), StoreError> {
        let (reply, result) = oneshot::channel();
        if put(&self.waiting, |items| items.push((item, reply))) {
            tokio::spawn(self.clone().write(store.clone()));
        }
        result.await.unwrap_or_else(|_| {
            Err(StoreError::Unavailable(
                "the writer of a batch stopped".into(),
            ))
        })
    }

    async fn write(self: Arc<Self>, store: Store) {
        let mut running = Writing {
            queue: Some(&self.waiting),
            drop_waiting: true,
        };
        let first = |items: &mut Vec<(T, Reply)>| {
            let rest = items.split_off(items.len().min(T::MAX));
            std::mem::replace(items, rest)
        };
        while let Some(taken) = take(&self.waiting, Vec::is_empty, first) {
            let (items, replies): (Vec<T>, Vec<Reply>) = taken.into_iter().unzip();
            tracing::debug!(items = items.len(), "written together");
            let results = T::write_all(&store, &items).await;
            for (reply, result) in replies.into_iter().zip(results) {
                let _ = reply.send(result);
            }
        }
        running.queue = None;
    }
}
