//! Turns shared by several replicas on one PostgreSQL, with no other moving part.
//!
//! The replica running a turn writes each of its frames to the database in batches (one
//! statement per batch: the rows, and `NOTIFY`s carrying the frames themselves); a replica with
//! viewers of a turn it does not run keeps a copy of the turn's log ([`TurnLog::mirror`]), fed
//! by those notifications. The table is the source of truth: a copy starts from it, and a
//! frame too long to carry, a gap (a notification missed) or a reconnected listener is read
//! from it, as is everything followed once a second in any case. Every replica beats a
//! heartbeat; each one ends the turns of a replica whose heartbeat stopped, so their viewers
//! see the turn interrupted, not thinking forever.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, Notify};

use super::control::{Command, TurnControls, KEEP_ENDED};
use super::log::{Frame, TurnLog};
use super::wording;
use crate::domain::TurnEvent;
use crate::server::store::now_ms;
use crate::server::store::turns::{self, Note, SharedTurns, StoredFrame, CHANNEL, EVENTS_CHANNEL};
use crate::server::store::StoreError;
use crate::wire::sse::encode_numbered_event;

/// How often replicas beat and look for dead ones, and when one counts as dead.
#[derive(Clone, Copy, Debug)]
pub struct Liveness {
    pub heartbeat: Duration,
    pub timeout: Duration,
}

/// Turns still to read from the database: some (with the newest sequence number announced),
/// or every copy kept here.
#[derive(Default)]
struct Pending {
    turns: HashMap<String, u64>,
    all: bool,
}

/// One replica's part in sharing turns.
pub struct Relay {
    db: SharedTurns,
    replica: String,
    controls: Arc<TurnControls>,
    /// Frames handed to the writers and not yet written (a clean shutdown waits for none).
    unwritten: Arc<std::sync::atomic::AtomicUsize>,
    /// One writer per lane; a turn's frames always take the same lane, so they stay in order,
    /// and its end follows them.
    outgoing: Vec<mpsc::UnboundedSender<Outgoing>>,
    mirrors: Mutex<HashMap<String, Weak<TurnLog>>>,
    pending: Mutex<Pending>,
    wake: Notify,
    /// When the last heartbeat that the database took was sent (see [`Relay::fenced`]).
    beat_ok: Mutex<Instant>,
    fenced: std::sync::atomic::AtomicBool,
}

impl Relay {
    /// Joins the replicas sharing the PostgreSQL at `url`: beats at once, then starts the
    /// writer, the listener, the reader and the heartbeat (which also ends dead replicas'
    /// turns) in the background.
    pub async fn start(
        url: &str,
        controls: Arc<TurnControls>,
        liveness: Liveness,
    ) -> Result<Arc<Relay>, StoreError> {
        let db = SharedTurns::connect(url).await?;
        let replica = crate::server::store::ids::new_id();
        let started_at = now_ms();
        db.heartbeat(&replica, started_at).await?;
        let mut outgoing = Vec::with_capacity(WRITERS);
        let mut lanes = Vec::with_capacity(WRITERS);
        for _ in 0..WRITERS {
            let (tx, rx) = mpsc::unbounded_channel();
            outgoing.push(tx);
            lanes.push(rx);
        }
        let relay = Arc::new(Relay {
            db,
            replica,
            controls: controls.clone(),
            unwritten: Arc::default(),
            outgoing,
            mirrors: Mutex::default(),
            pending: Mutex::default(),
            wake: Notify::new(),
            beat_ok: Mutex::new(Instant::now()),
            fenced: std::sync::atomic::AtomicBool::new(false),
        });
        for frames in lanes {
            tokio::spawn(write(
                relay.db.clone(),
                relay.replica.clone(),
                relay.unwritten.clone(),
                frames,
            ));
        }
        let (heard, reconnected) = (Arc::downgrade(&relay), Arc::downgrade(&relay));
        tokio::spawn(turns::listen(
            url.to_string(),
            &[CHANNEL, EVENTS_CHANNEL],
            move |channel, payload| {
                if let Some(relay) = heard.upgrade() {
                    relay.heard(&controls, channel, payload);
                }
            },
            move || {
                if let Some(relay) = reconnected.upgrade() {
                    relay.read_all();
                }
            },
        ));
        tokio::spawn(read(Arc::downgrade(&relay)));
        tokio::spawn(beat(Arc::downgrade(&relay), started_at, liveness));
        tokio::spawn(fence(Arc::downgrade(&relay), liveness));
        tracing::info!(replica = %relay.replica, "sharing running turns through PostgreSQL");
        Ok(relay)
    }

    /// True while this replica has gone too long without reaching the database: the others
    /// are about to take it for dead and end its turns, so it has ended them itself and refuses
    /// new ones (503) until a heartbeat gets through again.
    pub fn fenced(&self) -> bool {
        self.fenced.load(std::sync::atomic::Ordering::Acquire)
    }

    /// This replica's id (in `running_turns.replica`).
    pub fn replica(&self) -> &str {
        &self.replica
    }

    fn lane(&self, turn: &str) -> &mpsc::UnboundedSender<Outgoing> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        turn.hash(&mut hasher);
        &self.outgoing[hasher.finish() as usize % self.outgoing.len()]
    }

    /// Hands a local turn's new frames to the writer.
    pub fn publish(&self, turn: &str, frames: &[Frame]) {
        let lane = self.lane(turn);
        self.unwritten
            .fetch_add(frames.len(), std::sync::atomic::Ordering::AcqRel);
        for frame in frames {
            let _ = lane.send(Outgoing::Frame(StoredFrame {
                turn: turn.to_string(),
                seq: frame.seq,
                frame: String::from_utf8_lossy(&frame.bytes).into_owned(),
                last: frame.last,
            }));
        }
    }

    /// The copy of turn `id` (begun at `began_ms`, run by another replica) kept here for its
    /// viewers, filled with what the database has so far.
    pub async fn mirror(&self, id: &str, began_ms: i64) -> Result<Arc<TurnLog>, StoreError> {
        let log = {
            let mut mirrors = self
                .mirrors
                .lock()
                .map_err(|_| StoreError::Unavailable("the turn copies' lock is poisoned".into()))?;
            if let Some(log) = mirrors.get(id).and_then(Weak::upgrade) {
                return Ok(log);
            }
            let log = TurnLog::mirror(began_ms);
            mirrors.insert(id.to_string(), Arc::downgrade(&log));
            log
        };
        let frames = self.db.read(&[(id.to_string(), 0)]).await?;
        log.extend(frames.into_iter().map(frame_of));
        Ok(log)
    }

    /// True when a viewer on another replica watched turn `id` since `since` (ms).
    pub async fn watched_elsewhere(&self, id: &str, since: i64) -> bool {
        self.db.watched_since(id, since).await.unwrap_or(true)
    }

    /// Marks turn `id`, which ran here, ended (its events stay a while for late viewers) once
    /// its frames are written: an ended turn's log takes no more. Waits for that a while; if
    /// the database is out of reach the writer does it later.
    pub async fn ended(&self, id: &str) {
        let (done, written) = tokio::sync::oneshot::channel();
        if self
            .lane(id)
            .send(Outgoing::End(id.to_string(), done))
            .is_ok()
        {
            let _ = tokio::time::timeout(END_WAIT, written).await;
        }
    }

    /// Leaves the replicas (a clean shutdown, once this replica's turns are over): the frames
    /// still queued are written first (for at most a few seconds), then every turn recorded as
    /// running here is marked ended and this replica's row goes, so nobody reaps it.
    pub async fn leave(&self) {
        let until = Instant::now() + Duration::from_secs(5);
        while self.unwritten.load(std::sync::atomic::Ordering::Acquire) > 0
            && Instant::now() < until
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if let Err(e) = self.db.leave(&self.replica).await {
            tracing::warn!(error = %e, "could not sign this replica off");
        }
    }

    fn heard(&self, controls: &TurnControls, channel: &str, payload: &str) {
        if channel == CHANNEL {
            if let Some((command, id)) = Command::parse(payload) {
                controls.send_here(id, command);
            }
            return;
        }
        if turns::sent_by(payload, &self.replica) {
            return;
        }
        let behind: Vec<(String, u64)> = {
            let Ok(mirrors) = self.mirrors.lock() else {
                return;
            };
            let follows = |turn: &str| mirrors.get(turn).and_then(Weak::upgrade);
            match turns::read_note(payload) {
                Note::Everything => {
                    drop(mirrors);
                    self.read_all();
                    return;
                }
                Note::Announced(pairs) => pairs
                    .into_iter()
                    .filter(|(turn, seq)| follows(turn).is_some_and(|log| log.last_seq() < *seq))
                    .map(|(turn, seq)| (turn.to_string(), seq))
                    .collect(),
                // Carried frames go straight into the copies; one that leaves a gap (a
                // notification missed) is read from the table.
                Note::Frames { frames, .. } => {
                    let mut behind = Vec::new();
                    for frame in frames {
                        if let Some(log) = follows(&frame.turn) {
                            let (turn, seq) = (frame.turn.clone(), frame.seq);
                            if !log.extend([frame_of(frame)]) {
                                behind.push((turn, seq));
                            }
                        }
                    }
                    behind
                }
            }
        };
        if behind.is_empty() {
            return;
        }
        if let Ok(mut pending) = self.pending.lock() {
            for (turn, seq) in behind {
                let newest = pending.turns.entry(turn).or_default();
                *newest = (*newest).max(seq);
            }
        }
        self.wake.notify_one();
    }

    fn read_all(&self) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.all = true;
        }
        self.wake.notify_one();
    }

    /// The copies kept here that viewers still read, by turn.
    fn live_mirrors(&self) -> Vec<(String, Arc<TurnLog>)> {
        let Ok(mut mirrors) = self.mirrors.lock() else {
            return Vec::new();
        };
        mirrors.retain(|_, log| log.strong_count() > 0);
        mirrors
            .iter()
            .filter_map(|(id, log)| Some((id.clone(), log.upgrade()?)))
            .collect()
    }

    /// Reads what the pending turns (or all) are missing into their copies.
    async fn catch_up(&self, everything: bool) -> Result<(), StoreError> {
        let pending = self
            .pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default();
        let mirrors = if everything || pending.all {
            self.live_mirrors()
        } else {
            let Ok(mirrors) = self.mirrors.lock() else {
                return Ok(());
            };
            pending
                .turns
                .keys()
                .filter_map(|id| Some((id.clone(), mirrors.get(id)?.upgrade()?)))
                .collect()
        };
        let wanted: Vec<&(String, Arc<TurnLog>)> = mirrors
            .iter()
            .filter(|(_, log)| !log.is_finished())
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let cursors: Vec<(String, u64)> = wanted
            .iter()
            .map(|(id, log)| (id.clone(), log.last_seq()))
            .collect();
        let frames = self.db.read(&cursors).await?;
        let mut by_turn: HashMap<&str, Vec<Frame>> = HashMap::new();
        for frame in &frames {
            by_turn
                .entry(frame.turn.as_str())
                .or_default()
                .push(frame_of(frame.clone()));
        }
        let mut gaps = false;
        for (id, log) in &wanted {
            if let Some(frames) = by_turn.remove(id.as_str()) {
                gaps |= !log.extend(frames);
            }
        }
        if gaps {
            // What is missing is not in the table yet (or never will be): the once-a-second
            // read tries again, without a busy loop.
            tracing::debug!("a copy of a turn found a gap in its events");
        }
        Ok(())
    }

    /// Once a second: the copies of turns that ended long enough ago without their last frame
    /// arriving are closed; the turns viewers here watch are noted as watched.
    async fn tidy(&self) -> Result<(), StoreError> {
        let mirrors = self.live_mirrors();
        let open: Vec<String> = mirrors
            .iter()
            .filter(|(_, log)| !log.is_finished())
            .map(|(id, _)| id.clone())
            .collect();
        let ended: HashSet<String> = self
            .db
            .ended(&open, now_ms() - ENDED_SETTLES.as_millis() as i64)
            .await?
            .into_iter()
            .collect();
        if !ended.is_empty() {
            self.catch_up(true).await?;
            for (id, log) in &mirrors {
                if ended.contains(id) && !log.is_finished() {
                    log.close();
                }
            }
        }
        let watched: Vec<String> = mirrors
            .iter()
            .filter(|(_, log)| log.viewers() > 0 && !log.is_finished())
            .map(|(id, _)| id.clone())
            .collect();
        self.db.watching(&watched).await?;
        Ok(())
    }
}

/// How long after a turn's end its copies wait for its last frame before closing without it.
const ENDED_SETTLES: Duration = Duration::from_secs(5);

fn frame_of(stored: StoredFrame) -> Frame {
    Frame {
        seq: stored.seq,
        bytes: bytes::Bytes::from(stored.frame),
        last: stored.last,
    }
}

/// The most frames one statement writes.
const MAX_BATCH: usize = 2_000;

/// The shortest period the heartbeat and the fence tick at, whatever a tiny
/// `PONDER_HEARTBEAT` asks (a zero period would stop them).
const MIN_TICK: Duration = Duration::from_millis(1);

/// How long a finished turn's task waits for its end to be recorded.
const END_WAIT: Duration = Duration::from_secs(10);

/// What a writer lane carries: a frame to write, or a turn to mark ended after its frames.
enum Outgoing {
    Frame(StoredFrame),
    End(String, tokio::sync::oneshot::Sender<()>),
}

/// Writers working at once, each on a connection of its own: a statement's round trip is most
/// of a batch's cost, so two overlap where one would queue.
const WRITERS: usize = 2;

/// Writes local turns' frames in order, a batch per statement: whatever queued while the last
/// statement ran. A failure is retried (backing off up to 5 s) rather than leaving a gap that
/// viewers elsewhere would wait on.
async fn write(
    db: SharedTurns,
    replica: String,
    unwritten: Arc<std::sync::atomic::AtomicUsize>,
    mut frames: mpsc::UnboundedReceiver<Outgoing>,
) {
    let mut next = None;
    loop {
        let first = match next.take() {
            Some(first) => first,
            None => match frames.recv().await {
                Some(first) => first,
                None => return,
            },
        };
        let first = match first {
            Outgoing::Frame(frame) => frame,
            Outgoing::End(turn, done) => {
                if let Err(e) = db.end_turn(&turn).await {
                    tracing::warn!(error = %e, "a finished turn could not be struck off");
                }
                let _ = done.send(());
                continue;
            }
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match frames.try_recv() {
                Ok(Outgoing::Frame(frame)) => batch.push(frame),
                Ok(end) => {
                    next = Some(end);
                    break;
                }
                Err(_) => break,
            }
        }
        let began = Instant::now();
        append(&db, &replica, &batch).await;
        unwritten.fetch_sub(batch.len(), std::sync::atomic::Ordering::AcqRel);
        tracing::debug!(
            frames = batch.len(),
            ms = began.elapsed().as_secs_f64() * 1e3,
            "turn events shared"
        );
    }
}

/// Writes one batch, retrying while the database is unavailable. The frames of a turn whose
/// log is closed (it could not be recorded as running, or the others ended it while this
/// replica was out of reach) are left out, so they cannot hold up the others.
async fn append(db: &SharedTurns, replica: &str, batch: &[StoredFrame]) {
    let mut wait = Duration::from_millis(100);
    loop {
        match db.append(replica, batch).await {
            Ok(closed) => {
                for turn in closed {
                    tracing::warn!(
                        turn,
                        "a turn's events were not shared: it is not running (any more) as far as the other replicas know"
                    );
                }
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, frames = batch.len(), "turn events could not be shared; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Fills the copies kept here: when woken by a notification, and once a second in any case.
async fn read(relay: Weak<Relay>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let Some(woken) = relay
            .upgrade()
            .map(|r| async move { r.wake.notified().await })
        else {
            return;
        };
        let periodic = tokio::select! {
            _ = woken => false,
            _ = tick.tick() => true,
        };
        let Some(relay) = relay.upgrade() else {
            return;
        };
        let result = if periodic {
            match relay.catch_up(true).await {
                Ok(()) => relay.tidy().await,
                Err(e) => Err(e),
            }
        } else {
            relay.catch_up(false).await
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, "turn events from other replicas could not be read");
        }
    }
}

/// Beats this replica's heartbeat and ends the turns of replicas whose heartbeat stopped.
async fn beat(relay: Weak<Relay>, started_at: i64, liveness: Liveness) {
    let mut tick = tokio::time::interval(liveness.heartbeat.max(MIN_TICK));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(relay) = relay.upgrade() else {
            return;
        };
        let sent = Instant::now();
        let beat = tokio::time::timeout(
            liveness.heartbeat,
            relay.db.heartbeat(&relay.replica, started_at),
        )
        .await
        .unwrap_or_else(|_| Err(StoreError::Unavailable("the heartbeat timed out".into())));
        if beat.is_ok() {
            if let Ok(mut ok) = relay.beat_ok.lock() {
                *ok = sent;
            }
            if relay
                .fenced
                .swap(false, std::sync::atomic::Ordering::AcqRel)
            {
                tracing::warn!(replica = %relay.replica, "the database is reachable again: this replica takes new turns");
            }
        }
        match beat {
            Ok(true) => {}
            Ok(false) => {
                // The others ended this replica's turns for their viewers; going on with them
                // would write over what they stored. They end here too, with an error.
                let abandoned = relay.controls.abandon_all();
                tracing::error!(
                    replica = %relay.replica,
                    turns = abandoned,
                    "this replica had been taken for dead (its heartbeat was late): its running turns are ended"
                );
            }
            Err(e) => {
                tracing::warn!(error = %e, "the heartbeat could not be written");
                continue;
            }
        }
        match relay
            .db
            .reap(liveness.timeout, KEEP_ENDED, interrupted_frame)
            .await
        {
            Ok(ended) if !ended.is_empty() => tracing::warn!(
                turns = ended.len(),
                "ended the turns of a replica that stopped beating"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "looking for dead replicas failed"),
        }
    }
}

/// Ends this replica's turns before the others take it for dead. The survivors end a replica's
/// turns `timeout` after the last heartbeat the database took, which was sent no earlier than
/// the one recorded here; so this replica stops its own turns (their viewers here get one error,
/// as the viewers elsewhere will) and takes no new ones `timeout - heartbeat` after it, checked
/// four times a heartbeat, well before that.
async fn fence(relay: Weak<Relay>, liveness: Liveness) {
    let after = liveness.timeout.saturating_sub(liveness.heartbeat);
    let mut tick = tokio::time::interval((liveness.heartbeat / 4).max(MIN_TICK));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(relay) = relay.upgrade() else {
            return;
        };
        let Ok(silent) = relay.beat_ok.lock().map(|ok| ok.elapsed()) else {
            return;
        };
        if silent < after || relay.fenced() {
            continue;
        }
        relay
            .fenced
            .store(true, std::sync::atomic::Ordering::Release);
        let abandoned = relay.controls.abandon_all();
        tracing::error!(
            replica = %relay.replica,
            turns = abandoned,
            silent_ms = silent.as_millis() as u64,
            "this replica cannot reach the database: its running turns are ended and it takes no new ones until it can"
        );
    }
}

/// The last frame of a turn whose replica died.
fn interrupted_frame(seq: u64) -> String {
    let mut text = String::new();
    encode_numbered_event(seq, &TurnEvent::Error(wording::replica_died()), &mut text);
    text
}
