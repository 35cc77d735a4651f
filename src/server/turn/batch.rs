//! The streaming states of every running stored turn, written together once a second. Each
//! turn hands over its latest state (at most once a second); the writer takes all that are
//! waiting and writes them in one transaction ([`Store::save_streaming`]). Final states do not
//! wait for it: each turn writes its own at once.
//!
//! The writer runs only while states are waiting, so it needs no start and no stop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::server::store::streaming::StreamingState;
use crate::server::store::Store;

/// How often a streaming answer is written at most.
pub const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

#[derive(Default)]
struct Waiting {
    /// By answer version: the latest state, and the flag its turn reads to learn that its
    /// answer is not being saved.
    states: HashMap<String, (StreamingState, Arc<AtomicBool>)>,
    /// A writer task is on its way.
    writing: bool,
}

/// The states waiting for the next write, shared by the turns of one server.
#[derive(Default)]
pub struct StreamingBatch {
    waiting: Mutex<Waiting>,
}

impl StreamingBatch {
    /// Hands over a turn's latest state (merged with one still waiting), starting the writer
    /// if none is on its way.
    pub fn put(self: &Arc<Self>, store: &Store, state: StreamingState, failed: Arc<AtomicBool>) {
        let mut waiting = self.lock();
        match waiting.states.get_mut(state.version_id()) {
            Some((kept, _)) => kept.merge(state),
            None => {
                waiting
                    .states
                    .insert(state.version_id().to_string(), (state, failed));
            }
        }
        if !waiting.writing {
            waiting.writing = true;
            tokio::spawn(self.clone().write(store.clone()));
        }
    }

    /// Drops a waiting state of `version_id`: its final state is being written instead.
    pub fn forget(&self, version_id: &str) {
        self.lock().states.remove(version_id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn write(self: Arc<Self>, store: Store) {
        let mut done = Done(Some(self.clone()));
        loop {
            tokio::time::sleep(FLUSH_EVERY).await;
            let taken = {
                let mut waiting = self.lock();
                if waiting.states.is_empty() {
                    waiting.writing = false;
                    done.0 = None;
                    return;
                }
                std::mem::take(&mut waiting.states)
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

/// Lets the next state start a writer again if this one ends in any way (its runtime too).
struct Done(Option<Arc<StreamingBatch>>);

impl Drop for Done {
    fn drop(&mut self) {
        if let Some(batch) = &self.0 {
            batch.lock().writing = false;
        }
    }
}
