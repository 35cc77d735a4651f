//! The running turns a reader can steer from another request: each turn registers under an id
//! it sends to its reader (`X-Ponder-Turn`), and `POST /api/turn/answer-now` reaches it there.
//! Only the user who started a turn finds it; anyone else gets the answer of an unknown id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// What a reader can ask of a running turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// End the reasoning now and answer with what was thought.
    AnswerNow,
}

struct Entry {
    owner: String,
    tx: mpsc::Sender<Command>,
}

/// The registry, shared by every serving thread.
#[derive(Default)]
pub struct TurnControls {
    turns: Mutex<HashMap<String, Entry>>,
    /// With several replicas: the database that knows which turns run, and where a command for
    /// a turn on another replica is passed on.
    shared: std::sync::OnceLock<crate::server::store::Store>,
}

/// A turn's place in the registry. Dropping it (the turn ended or its reader left) removes
/// the turn.
pub struct Registration {
    pub id: String,
    controls: Arc<TurnControls>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut turns) = self.controls.turns.lock() {
            turns.remove(&self.id);
        }
        if let (Some(store), Ok(runtime)) = (
            self.controls.shared.get(),
            tokio::runtime::Handle::try_current(),
        ) {
            let (store, id) = (store.clone(), std::mem::take(&mut self.id));
            runtime.spawn(async move {
                if let Err(e) = store.end_running_turn(&id).await {
                    tracing::warn!(error = %e, "a finished turn could not be struck off");
                }
            });
        }
    }
}

impl TurnControls {
    /// Registers a new turn of `owner` (a user id); the receiver gets its commands.
    pub fn register(self: &Arc<Self>, owner: &str) -> (Registration, mpsc::Receiver<Command>) {
        let id = crate::server::store::ids::new_id();
        let (tx, commands) = mpsc::channel(4);
        if let Ok(mut turns) = self.turns.lock() {
            turns.insert(
                id.clone(),
                Entry {
                    owner: owner.to_string(),
                    tx,
                },
            );
        }
        let registration = Registration {
            id,
            controls: self.clone(),
        };
        (registration, commands)
    }

    /// Sends `command` to the turn `id` if `owner` started it and it still runs.
    pub fn send(&self, owner: &str, id: &str, command: Command) -> bool {
        let Ok(turns) = self.turns.lock() else {
            return false;
        };
        match turns.get(id) {
            Some(entry) if entry.owner == owner => entry.tx.try_send(command).is_ok(),
            _ => false,
        }
    }

    /// Sends `command` to the turn `id` of this process, whoever owns it: for a command another
    /// replica checked and passed on.
    pub fn send_here(&self, id: &str, command: Command) -> bool {
        let Ok(turns) = self.turns.lock() else {
            return false;
        };
        turns
            .get(id)
            .is_some_and(|entry| entry.tx.try_send(command).is_ok())
    }

    /// Shares the running turns through `store` (PostgreSQL, several replicas) and starts
    /// listening for commands passed on from the other replicas.
    pub fn share_through(self: &Arc<Self>, store: crate::server::store::Store, url: String) {
        if self.shared.set(store).is_err() {
            return;
        }
        let me = self.clone();
        tokio::spawn(crate::server::store::turns::listen(url, move |id| {
            me.send_here(id, Command::AnswerNow);
        }));
    }

    /// True when the running turns are shared with other replicas.
    pub fn is_shared(&self) -> bool {
        self.shared.get().is_some()
    }

    /// How many turns run now.
    pub fn running(&self) -> usize {
        self.turns.lock().map(|t| t.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_reaches_a_running_turn() {
        let controls = Arc::new(TurnControls::default());
        let (turn, mut commands) = controls.register("alice");
        assert!(!controls.send("bob", &turn.id, Command::AnswerNow));
        assert!(!controls.send("alice", "nope", Command::AnswerNow));
        assert!(controls.send("alice", &turn.id, Command::AnswerNow));
        assert_eq!(commands.try_recv().ok(), Some(Command::AnswerNow));
        let id = turn.id.clone();
        drop(turn);
        assert!(!controls.send("alice", &id, Command::AnswerNow));
        assert_eq!(controls.running(), 0);
    }
}
