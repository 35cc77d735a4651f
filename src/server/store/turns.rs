//! The running turns as the database knows them, for several replicas on one PostgreSQL.
//!
//! Each replica notes the turns it runs (`running_turns`: owner, replica, the answer written)
//! and beats a heartbeat (`replicas`). Every event of a running turn is written, numbered, to
//! `turn_events` (the source of truth for viewers elsewhere) and announced with `NOTIFY` on
//! [`EVENTS_CHANNEL`], which wakes the replicas that have viewers of it; a command for a turn on
//! another replica is checked against its owner here, then passed on with `NOTIFY` on
//! [`CHANNEL`]. The survivors end the turns of a replica whose heartbeat stopped.
//!
//! With SQLite (one process) nothing here is written: the in-process registry is the whole
//! truth, and the events stay in memory.

use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::Executor;

use super::scope::Scoped;
use super::{now_ms, Backend, Store, StoreError};

/// The channel turn commands travel on between replicas (`stop:<turn>`, `answer-now:<turn>`).
pub const CHANNEL: &str = "ponder_turn_control";

/// The channel that carries new events to the other replicas: a batch's frames themselves, as
/// JSON (`["<replica>",[["<turn>",seq,last,"<frame>"],…]]`, as many notifications as they need),
/// so a replica with viewers needs no query to follow a turn. A frame too long for a notification
/// is announced instead (`<turn>:<seq>` pairs joined by commas) and read from the table, as is
/// anything a replica finds missing (`*`: read everything followed).
pub const EVENTS_CHANNEL: &str = "ponder_turn_events";

/// The database's clock in ms since the epoch: heartbeats and the reaper's cut-off are read on
/// one clock, so a replica whose own clock runs fast takes nobody for dead.
const DB_NOW_MS: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// The longest notification payload PostgreSQL takes is 8,000 bytes.
const MAX_PAYLOAD: usize = 7_900;

/// One numbered event of a turn, as stored: its SSE frame and whether it ends the turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredFrame {
    pub turn: String,
    pub seq: u64,
    pub frame: String,
    pub last: bool,
}

/// A running (or just ended) turn of the caller's, as another replica sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedTurn {
    pub started_at: i64,
    pub ended: bool,
}

impl Scoped<'_> {
    /// Records that the caller's turn `id` runs on `replica`, writing the answer `version_id`
    /// (PostgreSQL only).
    pub async fn note_running_turn(
        &self,
        id: &str,
        replica: &str,
        version_id: Option<&str>,
    ) -> Result<(), StoreError> {
        if self.backend() != Backend::Postgres {
            return Ok(());
        }
        self.insert_running_turn(self.pool(), id, replica, version_id)
            .await
    }

    /// The row of [`Self::note_running_turn`], written by `to` (the pool, or the transaction
    /// that opens the turn's answer).
    pub(super) async fn insert_running_turn<'e, E>(
        &self,
        to: E,
        id: &str,
        replica: &str,
        version_id: Option<&str>,
    ) -> Result<(), StoreError>
    where
        E: sqlx::Executor<'e, Database = sqlx::Any>,
    {
        sqlx::query(
            "INSERT INTO running_turns (id, user_id, started_at, replica, version_id) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(self.user_id())
        .bind(now_ms())
        .bind(replica)
        .bind(version_id)
        .execute(to)
        .await?;
        Ok(())
    }

    /// Passes `command` (`stop`, `answer-now`) to the replica running the caller's turn `id`;
    /// false when no such turn of the caller's runs anywhere (or the database is not shared).
    pub async fn forward_command(&self, id: &str, command: &str) -> Result<bool, StoreError> {
        if self.backend() != Backend::Postgres {
            return Ok(false);
        }
        let found: Option<String> = sqlx::query_scalar(
            "SELECT id FROM running_turns WHERE id = $1 AND user_id = $2 AND ended_at IS NULL",
        )
        .bind(id)
        .bind(self.user_id())
        .fetch_optional(self.pool())
        .await?;
        let Some(id) = found else {
            return Ok(false);
        };
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(format!("{command}:{id}"))
            .execute(self.pool())
            .await?;
        Ok(true)
    }

    /// The caller's turn `id` as the database knows it (PostgreSQL only): running, or ended and
    /// still kept for late viewers.
    pub async fn shared_turn(&self, id: &str) -> Result<Option<SharedTurn>, StoreError> {
        if self.backend() != Backend::Postgres {
            return Ok(None);
        }
        let found: Option<(i64, Option<i64>)> = sqlx::query_as(
            "SELECT started_at, ended_at FROM running_turns WHERE id = $1 AND user_id = $2",
        )
        .bind(id)
        .bind(self.user_id())
        .fetch_optional(self.pool())
        .await?;
        Ok(found.map(|(started_at, ended_at)| SharedTurn {
            started_at,
            ended: ended_at.is_some(),
        }))
    }
}

impl Store {
    /// Marks the running turn `id` ended (whoever owned it); its events stay a while for
    /// viewers that reconnect late.
    pub async fn end_running_turn(&self, id: &str) -> Result<(), StoreError> {
        if self.backend() != Backend::Postgres {
            return Ok(());
        }
        sqlx::query("UPDATE running_turns SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL")
            .bind(now_ms())
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// At the start of a single-process server (SQLite): an answer still marked streaming was
    /// written by a turn the previous process did not finish (it was killed), so it is
    /// interrupted, and its open blocks with it.
    pub async fn interrupt_unfinished_answers(&self) -> Result<u64, StoreError> {
        if self.backend() != Backend::Sqlite {
            return Ok(0);
        }
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "UPDATE thinking_blocks SET interrupted = 1 WHERE duration_ms IS NULL AND version_id IN \
             (SELECT id FROM message_versions WHERE status = 'streaming')",
        )
        .execute(&mut *tx)
        .await?;
        let done = sqlx::query(
            "UPDATE message_versions SET status = 'interrupted' WHERE status = 'streaming'",
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}

/// The turn tables of a shared PostgreSQL, on a small pool of their own: the event relay's
/// writes and reads never queue behind the history's.
#[derive(Clone, Debug)]
pub struct SharedTurns {
    pool: PgPool,
}

impl SharedTurns {
    /// Connects to the PostgreSQL at `url`. Event writes do not wait for the disk: the events
    /// are a relay, and a turn's answer is saved durably by the history.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(15))
            .after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute("SET synchronous_commit = off").await?;
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        Ok(SharedTurns { pool })
    }

    /// Writes a batch of events of `replica`'s turns and sends them to the other replicas, in
    /// one statement. Only turns still running are written: once a turn has ended (its owner
    /// ended it after its last event, or a survivor ended it for a replica taken for dead) its
    /// log is closed, so a replica that was cut off and comes back cannot add to it. The rows
    /// are locked while the statement runs, so a survivor ending one waits for it, or it for the
    /// survivor. When a turn of the batch was closed nothing is announced, and the other
    /// replicas read the rest from the table (within a second); the refused turns are returned.
    pub async fn append(
        &self,
        replica: &str,
        frames: &[StoredFrame],
    ) -> Result<Vec<String>, StoreError> {
        if frames.is_empty() {
            return Ok(Vec::new());
        }
        let turns: Vec<&str> = frames.iter().map(|f| f.turn.as_str()).collect();
        let seqs: Vec<i64> = frames.iter().map(|f| f.seq as i64).collect();
        let texts: Vec<&str> = frames.iter().map(|f| f.frame.as_str()).collect();
        let lasts: Vec<bool> = frames.iter().map(|f| f.last).collect();
        let mut distinct = turns.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let (_, closed): (i64, Vec<String>) = sqlx::query_as(
            "WITH open AS (SELECT id FROM running_turns WHERE id = ANY($7::text[]) \
             AND ended_at IS NULL FOR SHARE), \
             added AS (INSERT INTO turn_events (turn_id, seq, frame, last) \
             SELECT t.* FROM UNNEST($1::text[], $2::bigint[], $3::text[], $4::bool[]) \
             AS t(turn_id, seq, frame, last) WHERE t.turn_id IN (SELECT id FROM open) \
             ON CONFLICT DO NOTHING), \
             told AS (SELECT pg_notify($5, note) FROM UNNEST($6::text[]) AS note \
             WHERE (SELECT count(*) FROM open) = cardinality($7::text[])) \
             SELECT (SELECT count(*) FROM told), \
             ARRAY(SELECT t FROM UNNEST($7::text[]) AS t WHERE t NOT IN (SELECT id FROM open))",
        )
        .bind(&turns)
        .bind(&seqs)
        .bind(&texts)
        .bind(&lasts)
        .bind(EVENTS_CHANNEL)
        .bind(notes(replica, frames))
        .bind(&distinct)
        .fetch_one(&self.pool)
        .await?;
        Ok(closed)
    }

    /// The events of each turn after its cursor, in order.
    pub async fn read(&self, cursors: &[(String, u64)]) -> Result<Vec<StoredFrame>, StoreError> {
        if cursors.is_empty() {
            return Ok(Vec::new());
        }
        let turns: Vec<&str> = cursors.iter().map(|(t, _)| t.as_str()).collect();
        let after: Vec<i64> = cursors.iter().map(|(_, a)| *a as i64).collect();
        let rows: Vec<(String, i64, String, bool)> = sqlx::query_as(
            "SELECT e.turn_id, e.seq, e.frame, e.last FROM turn_events e \
             JOIN UNNEST($1::text[], $2::bigint[]) AS c(turn_id, after) \
             ON e.turn_id = c.turn_id AND e.seq > c.after ORDER BY e.turn_id, e.seq",
        )
        .bind(&turns)
        .bind(&after)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(turn, seq, frame, last)| StoredFrame {
                turn,
                seq: seq.max(0) as u64,
                frame,
                last,
            })
            .collect())
    }

    /// Which of `ids` ended before `before` (ms), or are gone.
    pub async fn ended(&self, ids: &[String], before: i64) -> Result<Vec<String>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_scalar(
            "SELECT c.id FROM UNNEST($1::text[]) AS c(id) LEFT JOIN running_turns t ON t.id = c.id \
             WHERE t.id IS NULL OR t.ended_at < $2",
        )
        .bind(ids)
        .bind(before)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Notes that viewers on this replica watch `ids` now (for `PONDER_ORPHAN_TURNS=stop`).
    pub async fn watching(&self, ids: &[String]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query("UPDATE running_turns SET watched_at = $1 WHERE id = ANY($2)")
            .bind(now_ms())
            .bind(ids)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// True when a viewer on another replica watched turn `id` since `since` (ms).
    pub async fn watched_since(&self, id: &str, since: i64) -> Result<bool, StoreError> {
        let watched: Option<Option<i64>> =
            sqlx::query_scalar("SELECT watched_at FROM running_turns WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(watched.flatten().is_some_and(|at| at >= since))
    }

    /// This replica is alive now. False when its row had been removed (it was taken for
    /// dead): the row is written again.
    pub async fn heartbeat(&self, replica: &str, started_at: i64) -> Result<bool, StoreError> {
        let updated = sqlx::query(&format!(
            "UPDATE replicas SET heartbeat_at = {DB_NOW_MS} WHERE id = $1"
        ))
        .bind(replica)
        .execute(&self.pool)
        .await?;
        if updated.rows_affected() == 1 {
            return Ok(true);
        }
        sqlx::query(&format!(
            "INSERT INTO replicas (id, started_at, heartbeat_at) VALUES ($1, $2, {DB_NOW_MS}) \
             ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at"
        ))
        .bind(replica)
        .bind(started_at)
        .execute(&self.pool)
        .await?;
        Ok(false)
    }

    /// Marks turn `id` ended (it ran on this replica); its events stay a while.
    pub async fn end_turn(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE running_turns SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL")
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// This replica stops (a clean shutdown): its turns are over by now, so any still recorded
    /// as running are marked ended, and its row goes.
    pub async fn leave(&self, replica: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE running_turns SET ended_at = $1 WHERE replica = $2 AND ended_at IS NULL",
        )
        .bind(now_ms())
        .bind(replica)
        .execute(&self.pool)
        .await?;
        sqlx::query("DELETE FROM replicas WHERE id = $1")
            .bind(replica)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Ends the turns of replicas whose heartbeat is older than `timeout` (on the database's
    /// clock): each answer still streaming is marked interrupted (its open blocks too), and a
    /// turn whose log has no last event gets `last_frame(seq)`, announced to the viewers.
    /// Several survivors may run this at once; each turn is ended by one. Turns recorded by a
    /// release without heartbeats (no replica named) are left alone. Also forgets turns that
    /// ended more than `keep` ago, with their events. Returns the turns ended here.
    pub async fn reap(
        &self,
        timeout: Duration,
        keep: Duration,
        last_frame: impl Fn(u64) -> String,
    ) -> Result<Vec<String>, StoreError> {
        let now = now_ms();
        sqlx::query(&format!(
            "DELETE FROM replicas WHERE heartbeat_at < {DB_NOW_MS} - $1"
        ))
        .bind(timeout.as_millis() as i64)
        .execute(&self.pool)
        .await?;
        let orphans: Vec<(String, Option<String>)> = sqlx::query_as(
            "SELECT id, version_id FROM running_turns t WHERE ended_at IS NULL AND replica <> '' \
             AND NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = t.replica)",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut ended = Vec::new();
        for (id, version) in orphans {
            let mut tx = self.pool.begin().await?;
            let claimed = sqlx::query(
                "UPDATE running_turns SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL",
            )
            .bind(now)
            .bind(&id)
            .execute(&mut *tx)
            .await?;
            if claimed.rows_affected() != 1 {
                continue;
            }
            if let Some(version) = &version {
                sqlx::query(
                    "UPDATE thinking_blocks SET interrupted = 1 WHERE duration_ms IS NULL AND version_id = \
                     (SELECT id FROM message_versions WHERE id = $1 AND status = 'streaming')",
                )
                .bind(version)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "UPDATE message_versions SET status = 'interrupted' WHERE id = $1 AND status = 'streaming'",
                )
                .bind(version)
                .execute(&mut *tx)
                .await?;
            }
            let (newest, over): (i64, bool) = sqlx::query_as(
                "SELECT COALESCE(MAX(seq), 0) AS newest, COALESCE(BOOL_OR(last), FALSE) AS over \
                 FROM turn_events WHERE turn_id = $1",
            )
            .bind(&id)
            .fetch_one(&mut *tx)
            .await?;
            if !over {
                let seq = newest.max(0) as u64 + 1;
                sqlx::query(
                    "INSERT INTO turn_events (turn_id, seq, frame, last) VALUES ($1, $2, $3, TRUE) \
                     ON CONFLICT DO NOTHING",
                )
                .bind(&id)
                .bind(seq as i64)
                .bind(last_frame(seq))
                .execute(&mut *tx)
                .await?;
                sqlx::query("SELECT pg_notify($1, $2)")
                    .bind(EVENTS_CHANNEL)
                    .bind(format!("{id}:{seq}"))
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            ended.push(id);
        }
        sqlx::query("DELETE FROM running_turns WHERE ended_at < $1")
            .bind(now - keep.as_millis() as i64)
            .execute(&self.pool)
            .await?;
        Ok(ended)
    }
}

/// The notifications for a batch: its frames, as many to a notification as fit; a frame too
/// long for one is announced by its turn and sequence number instead.
fn notes(replica: &str, frames: &[StoredFrame]) -> Vec<String> {
    let head = serde_json::to_string(replica).unwrap_or_else(|_| "\"\"".into());
    let open = format!("[{head},[");
    let mut notes = Vec::new();
    let mut note = open.clone();
    let mut announced: Vec<(&str, u64)> = Vec::new();
    for f in frames {
        let item = serde_json::json!([f.turn, f.seq, f.last, f.frame]).to_string();
        if open.len() + item.len() + 2 > MAX_PAYLOAD {
            announced.push((&f.turn, f.seq));
            continue;
        }
        if note.len() > open.len() && note.len() + 1 + item.len() + 2 > MAX_PAYLOAD {
            note.push_str("]]");
            notes.push(std::mem::replace(&mut note, open.clone()));
        }
        if note.len() > open.len() {
            note.push(',');
        }
        note.push_str(&item);
    }
    if note.len() > open.len() {
        note.push_str("]]");
        notes.push(note);
    }
    if !announced.is_empty() {
        notes.extend(announcements(&announced));
    }
    notes
}

/// Announcements of frames not carried: each turn's newest sequence number, as many `turn:seq`
/// pairs to a notification as fit.
fn announcements(frames: &[(&str, u64)]) -> Vec<String> {
    let mut newest: Vec<(&str, u64)> = Vec::new();
    for &(turn, seq) in frames {
        match newest.iter_mut().find(|(t, _)| *t == turn) {
            Some((_, s)) => *s = (*s).max(seq),
            None => newest.push((turn, seq)),
        }
    }
    let mut notes = Vec::new();
    let mut note = String::new();
    for (turn, seq) in newest {
        let pair = format!("{turn}:{seq}");
        if !note.is_empty() && note.len() + 1 + pair.len() > MAX_PAYLOAD {
            notes.push(std::mem::take(&mut note));
        }
        if !note.is_empty() {
            note.push(',');
        }
        note.push_str(&pair);
    }
    if !note.is_empty() {
        notes.push(note);
    }
    notes
}

/// What one notification on [`EVENTS_CHANNEL`] says.
#[derive(Debug, PartialEq, Eq)]
pub enum Note<'a> {
    /// Frames sent by `from`.
    Frames {
        from: String,
        frames: Vec<StoredFrame>,
    },
    /// Turns with new frames to read from the table, by newest sequence number.
    Announced(Vec<(&'a str, u64)>),
    /// Read everything followed.
    Everything,
}

/// Reads a notification on [`EVENTS_CHANNEL`]; one that is not understood asks for everything.
pub fn read_note(payload: &str) -> Note<'_> {
    if !payload.starts_with('[') {
        return match announced(payload) {
            Some(pairs) => Note::Announced(pairs),
            None => Note::Everything,
        };
    }
    type Carried = (String, Vec<(String, u64, bool, String)>);
    match serde_json::from_str::<Carried>(payload) {
        Ok((from, frames)) => Note::Frames {
            from,
            frames: frames
                .into_iter()
                .map(|(turn, seq, last, frame)| StoredFrame {
                    turn,
                    seq,
                    frame,
                    last,
                })
                .collect(),
        },
        Err(_) => Note::Everything,
    }
}

/// True when the notification `payload` carries frames sent by `replica` (a replica skips its
/// own without reading them).
pub fn sent_by(payload: &str, replica: &str) -> bool {
    payload
        .strip_prefix("[\"")
        .and_then(|rest| rest.strip_prefix(replica))
        .is_some_and(|rest| rest.starts_with('"'))
}

/// Reads an announcement: `None` means "everything" (`*`).
pub fn announced(payload: &str) -> Option<Vec<(&str, u64)>> {
    if payload == "*" {
        return None;
    }
    Some(
        payload
            .split(',')
            .filter_map(|pair| {
                let (turn, seq) = pair.rsplit_once(':')?;
                Some((turn, seq.parse().ok()?))
            })
            .collect(),
    )
}

/// Listens on `channels` of the PostgreSQL at `url` for as long as the server runs, handing
/// each notification (channel, payload) to `deliver`, and `reconnected` after each (re)connect
/// (what was announced meanwhile was missed); reconnects after a failure.
pub async fn listen(
    url: String,
    channels: &[&str],
    deliver: impl Fn(&str, &str) + Send + 'static,
    reconnected: impl Fn() + Send + 'static,
) {
    let mut wait = Duration::from_millis(500);
    loop {
        match sqlx::postgres::PgListener::connect(&url).await {
            Ok(mut listener) => {
                if let Err(e) = listener.listen_all(channels.iter().copied()).await {
                    tracing::warn!(error = %e, "could not listen for turn notifications");
                } else {
                    wait = Duration::from_millis(500);
                    reconnected();
                    loop {
                        match listener.recv().await {
                            Ok(note) => deliver(note.channel(), note.payload()),
                            Err(e) => {
                                tracing::warn!(error = %e, "the turn listener lost its connection");
                                break;
                            }
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not connect the turn listener"),
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announcement_names_each_turns_newest_event() {
        let notes = announcements(&[("a", 1), ("b", 4), ("a", 3)]);
        assert_eq!(notes, ["a:3,b:4"]);
        assert_eq!(
            read_note(&notes[0]),
            Note::Announced(vec![("a", 3), ("b", 4)])
        );
        assert_eq!(read_note("*"), Note::Everything);
        assert_eq!(announced("a:x,b:2,junk"), Some(vec![("b", 2)]));
    }

    #[test]
    fn a_batch_travels_as_its_frames_in_as_many_notifications_as_it_needs() {
        let frames: Vec<StoredFrame> = (0..400)
            .map(|i| StoredFrame {
                turn: format!("turn-{}", i % 7),
                seq: i,
                frame: format!("id: {i}\ndata: {{\"type\":\"delta\",\"text\":\"é \\\" {i}\"}}\n\n"),
                last: i == 399,
            })
            .collect();
        let notes = notes("replica-a", &frames);
        assert!(notes.len() > 1);
        assert!(notes.iter().all(|n| n.len() <= MAX_PAYLOAD));
        assert!(notes
            .iter()
            .all(|n| sent_by(n, "replica-a") && !sent_by(n, "replica")));
        let mut back = Vec::new();
        for n in &notes {
            match read_note(n) {
                Note::Frames { from, frames } => {
                    assert_eq!(from, "replica-a");
                    back.extend(frames);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(back, frames);
    }

    #[test]
    fn a_frame_too_long_for_a_notification_is_announced_and_read_from_the_table() {
        let long = StoredFrame {
            turn: "t".into(),
            seq: 3,
            frame: "x".repeat(MAX_PAYLOAD),
            last: false,
        };
        let short = StoredFrame {
            seq: 4,
            frame: "id: 4\n".into(),
            ..long.clone()
        };
        let notes = notes("r", &[long, short.clone()]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            matches!(read_note(&notes[0]), Note::Frames { frames, .. } if frames == vec![short])
        );
        assert_eq!(read_note(&notes[1]), Note::Announced(vec![("t", 3)]));
        assert_eq!(read_note("[not json"), Note::Everything);
    }
}
