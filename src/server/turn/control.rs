//! The running turns a reader can reach from another request: each turn registers under an id
//! it sends first (`started`), and `POST /api/turn/answer-now`, `POST /api/turn/stop` and
//! `GET /api/turn/events` find it there. Only the user who started a turn finds it; anyone else
//! gets the answer of an unknown id. A stored turn's log stays reachable for
//! [`KEEP_ENDED`] after it ends, so a viewer that reconnects just then still gets the end.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

use super::log::TurnLog;

/// How long the log of a finished turn stays reachable for viewers that reconnect.
pub const KEEP_ENDED: Duration = Duration::from_secs(60);

/// What a reader can ask of a running turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// End the reasoning now and answer with what was thought.
    AnswerNow,
    /// End the turn here, keeping what arrived.
    Stop,
    /// End the turn with an error: the other replicas took this one for dead and ended its
    /// turns for their viewers (never sent between replicas).
    Abandon,
}

impl Command {
    /// The command's name on the wire between replicas.
    pub fn name(self) -> &'static str {
        match self {
            Command::AnswerNow => "answer-now",
            Command::Stop => "stop",
            Command::Abandon => "abandon",
        }
    }

    /// Reads a command passed on by another replica: `name:turn` (a bare id is "Answer now",
    /// as replicas of the previous release sent it).
    pub fn parse(payload: &str) -> Option<(Command, &str)> {
        match payload.split_once(':') {
            Some(("answer-now", id)) => Some((Command::AnswerNow, id)),
            Some(("stop", id)) => Some((Command::Stop, id)),
            Some(_) => None,
            None if !payload.is_empty() => Some((Command::AnswerNow, payload)),
            None => None,
        }
    }
}

struct Entry {
    owner: String,
    /// Present while the turn runs.
    tx: Option<mpsc::Sender<Command>>,
    /// A stored turn's frames, for its viewers.
    log: Option<Arc<TurnLog>>,
    /// The turn's shared log is no longer this replica's to tell (see
    /// [`TurnControls::abandon_all`]).
    disowned: bool,
}

/// The registry, shared by every serving thread.
pub struct TurnControls {
    turns: Mutex<HashMap<String, Entry>>,
    /// Ended turns whose log is still kept, oldest first.
    ended: Mutex<VecDeque<(Instant, String)>>,
    /// How many turns run now; shutdown waits for none.
    running: watch::Sender<usize>,
    /// With several replicas: the database that knows which turns run, and where a command for
    /// a turn on another replica is passed on.
    shared: std::sync::OnceLock<crate::server::store::Store>,
}

impl Default for TurnControls {
    fn default() -> Self {
        TurnControls {
            turns: Mutex::default(),
            ended: Mutex::default(),
            running: watch::channel(0).0,
            shared: std::sync::OnceLock::new(),
        }
    }
}

/// A turn's place in the registry. Dropping it (the turn ended) ends the turn there; its log
/// stays for [`KEEP_ENDED`].
pub struct Registration {
    pub id: String,
    /// The turn's frames, for a stored turn.
    pub log: Option<Arc<TurnLog>>,
    controls: Arc<TurnControls>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.controls.end(&self.id, self.log.is_some());
        // A stored turn's task strikes it off itself (and a shutdown waits for that); a turn
        // stored nowhere is struck off in the background.
        if self.log.is_some() {
            return;
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
    /// Registers a new turn of `owner` (a user id), with its log when the turn is stored; the
    /// receiver gets its commands.
    pub fn register(
        self: &Arc<Self>,
        owner: &str,
        log: Option<Arc<TurnLog>>,
    ) -> (Registration, mpsc::Receiver<Command>) {
        let id = crate::server::store::ids::new_id();
        let (tx, commands) = mpsc::channel(4);
        self.sweep();
        if let Ok(mut turns) = self.turns.lock() {
            turns.insert(
                id.clone(),
                Entry {
                    owner: owner.to_string(),
                    tx: Some(tx),
                    log: log.clone(),
                    disowned: false,
                },
            );
        }
        self.running.send_modify(|n| *n += 1);
        let registration = Registration {
            id,
            log,
            controls: self.clone(),
        };
        (registration, commands)
    }

    fn end(&self, id: &str, keep_log: bool) {
        if let Ok(mut turns) = self.turns.lock() {
            if keep_log {
                if let Some(entry) = turns.get_mut(id) {
                    entry.tx = None;
                }
            } else {
                turns.remove(id);
            }
        }
        if keep_log {
            if let Ok(mut ended) = self.ended.lock() {
                ended.push_back((Instant::now(), id.to_string()));
            }
        }
        self.running.send_modify(|n| *n = n.saturating_sub(1));
        self.sweep();
    }

    /// Forgets the logs of turns that ended longer than [`KEEP_ENDED`] ago.
    fn sweep(&self) {
        let mut gone = Vec::new();
        if let Ok(mut ended) = self.ended.lock() {
            while ended
                .front()
                .is_some_and(|(at, _)| at.elapsed() >= KEEP_ENDED)
            {
                if let Some((_, id)) = ended.pop_front() {
                    gone.push(id);
                }
            }
        }
        if gone.is_empty() {
            return;
        }
        if let Ok(mut turns) = self.turns.lock() {
            for id in gone {
                if turns.get(&id).is_some_and(|e| e.tx.is_none()) {
                    turns.remove(&id);
                }
            }
        }
    }

    /// Sends `command` to the turn `id` if `owner` started it and it still runs.
    pub fn send(&self, owner: &str, id: &str, command: Command) -> bool {
        let Ok(turns) = self.turns.lock() else {
            return false;
        };
        match turns.get(id) {
            Some(Entry {
                owner: o,
                tx: Some(tx),
                ..
            }) if o == owner => tx.try_send(command).is_ok(),
            _ => false,
        }
    }

    /// Sends `command` to the turn `id` of this process, whoever owns it: for a command another
    /// replica checked and passed on, or the server's own decision (an unwatched turn).
    pub fn send_here(&self, id: &str, command: Command) -> bool {
        let Ok(turns) = self.turns.lock() else {
            return false;
        };
        turns
            .get(id)
            .and_then(|entry| entry.tx.as_ref())
            .is_some_and(|tx| tx.try_send(command).is_ok())
    }

    /// The log of `owner`'s stored turn `id` on this replica, running or ended a moment ago.
    pub fn log_for(&self, owner: &str, id: &str) -> Option<Arc<TurnLog>> {
        self.sweep();
        let turns = self.turns.lock().ok()?;
        turns
            .get(id)
            .filter(|entry| entry.owner == owner && !entry.disowned)
            .and_then(|entry| entry.log.clone())
    }

    /// True when `id` runs here (whoever owns it) and this replica still tells its story.
    pub fn runs_here(&self, id: &str) -> bool {
        self.turns
            .lock()
            .map(|t| t.get(id).is_some_and(|e| e.tx.is_some() && !e.disowned))
            .unwrap_or(false)
    }

    /// Ends every turn running here (their viewers here get an error) and disowns every log
    /// kept here: this replica lost the database and the others end its turns as they find
    /// them, so a viewer who joins later reads the shared log, not this copy.
    pub fn abandon_all(&self) -> usize {
        let Ok(mut turns) = self.turns.lock() else {
            return 0;
        };
        let mut abandoned = 0;
        for entry in turns.values_mut() {
            entry.disowned = true;
            if entry
                .tx
                .as_ref()
                .is_some_and(|tx| tx.try_send(Command::Abandon).is_ok())
            {
                abandoned += 1;
            }
        }
        abandoned
    }

    /// Shares the running turns through `store` (PostgreSQL, several replicas).
    pub fn share_through(&self, store: crate::server::store::Store) {
        let _ = self.shared.set(store);
    }

    /// True when the running turns are shared with other replicas.
    pub fn is_shared(&self) -> bool {
        self.shared.get().is_some()
    }

    /// How many turns run now.
    pub fn running(&self) -> usize {
        *self.running.borrow()
    }

    /// Follows how many turns run (shutdown waits for none).
    pub fn running_changes(&self) -> watch::Receiver<usize> {
        self.running.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_owner_reaches_a_running_turn() {
        let controls = Arc::new(TurnControls::default());
        let (turn, mut commands) = controls.register("alice", None);
        assert!(!controls.send("bob", &turn.id, Command::AnswerNow));
        assert!(!controls.send("alice", "nope", Command::AnswerNow));
        assert!(controls.send("alice", &turn.id, Command::AnswerNow));
        assert!(controls.send("alice", &turn.id, Command::Stop));
        assert_eq!(commands.try_recv().ok(), Some(Command::AnswerNow));
        assert_eq!(commands.try_recv().ok(), Some(Command::Stop));
        let id = turn.id.clone();
        assert_eq!(controls.running(), 1);
        drop(turn);
        assert!(!controls.send("alice", &id, Command::AnswerNow));
        assert_eq!(controls.running(), 0);
    }

    #[test]
    fn an_ended_stored_turn_keeps_its_log_for_its_owner_only() {
        let controls = Arc::new(TurnControls::default());
        let log = TurnLog::new(0);
        let (turn, _commands) = controls.register("alice", Some(log));
        let id = turn.id.clone();
        assert!(controls.log_for("alice", &id).is_some());
        assert!(controls.log_for("bob", &id).is_none());
        assert!(controls.runs_here(&id));
        drop(turn);
        assert!(!controls.runs_here(&id));
        assert!(controls.log_for("alice", &id).is_some(), "kept a while");
        assert!(!controls.send_here(&id, Command::Stop), "no longer runs");
    }

    #[test]
    fn abandoning_all_ends_the_running_turns_and_disowns_every_kept_log() {
        let controls = Arc::new(TurnControls::default());
        let (ended, _) = controls.register("alice", Some(TurnLog::new(0)));
        let ended_id = ended.id.clone();
        drop(ended);
        let (running, mut commands) = controls.register("alice", Some(TurnLog::new(0)));
        let (_unstored, mut unstored_commands) = controls.register("bob", None);
        assert_eq!(controls.abandon_all(), 2, "the two that run");
        assert_eq!(commands.try_recv().ok(), Some(Command::Abandon));
        assert_eq!(unstored_commands.try_recv().ok(), Some(Command::Abandon));
        for id in [&ended_id, &running.id] {
            assert!(
                controls.log_for("alice", id).is_none(),
                "joins read the shared log"
            );
            assert!(!controls.runs_here(id));
        }
        assert!(
            running.log.is_some(),
            "the turn itself still writes its own log"
        );
    }

    #[test]
    fn commands_passed_between_replicas_read_back() {
        for command in [Command::AnswerNow, Command::Stop] {
            let payload = format!("{}:abc", command.name());
            assert_eq!(Command::parse(&payload), Some((command, "abc")));
        }
        assert_eq!(Command::parse("abc"), Some((Command::AnswerNow, "abc")));
        assert_eq!(Command::parse("nuke:abc"), None);
        assert_eq!(Command::parse(""), None);
    }
}
