//! The log of a resumable turn: every event it sent, numbered from 1 and encoded once, so that
//! any number of viewers (the tab that asked, a reloaded tab, another device, a viewer on
//! another replica) read the same frames from wherever they left off. A viewer is a cursor into
//! the log; the turn itself never waits for one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::Stream;
use tokio::sync::{watch, Notify};

use crate::domain::TurnEvent;
use crate::server::store::now_ms;
use crate::wire::sse::{encode_event, encode_numbered_event, KEEP_ALIVE};

/// One numbered frame: its sequence number, its SSE bytes (`id:` and `data:`), and whether it
/// ends the turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub seq: u64,
    pub bytes: Bytes,
    pub last: bool,
}

/// A turn's encoded frames, back to back in one buffer: a thousand running turns of a hundred
/// small events each would otherwise hold a hundred thousand separate allocations.
#[derive(Default)]
struct Frames {
    bytes: Vec<u8>,
    /// Where each frame ends in `bytes`; frame `i` has sequence number `i + 1`.
    ends: Vec<usize>,
    finished: bool,
    /// Finished without its last frame (a remote copy closed): the newest frame is no end.
    cut: bool,
    /// Where a frame is encoded before it joins `bytes`, kept so that an event costs no
    /// allocation of its own.
    scratch: String,
}

impl Frames {
    fn len(&self) -> u64 {
        self.ends.len() as u64
    }

    fn push(&mut self, frame: &[u8]) {
        self.bytes.extend_from_slice(frame);
        self.ends.push(self.bytes.len());
    }

    /// Everything after the first `count` frames.
    fn after(&self, count: u64) -> &[u8] {
        let start = match count {
            0 => 0,
            n => self
                .ends
                .get(n as usize - 1)
                .copied()
                .unwrap_or(self.bytes.len()),
        };
        &self.bytes[start..]
    }

    fn last(&self) -> Option<&[u8]> {
        (!self.ends.is_empty()).then(|| self.after(self.len() - 1))
    }

    /// The turn is over: what is kept for late viewers holds no spare room.
    fn finish(&mut self) {
        self.finished = true;
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// The frames of one turn and the viewers reading them.
pub struct TurnLog {
    frames: Mutex<Frames>,
    /// The last sequence number appended.
    seq: AtomicU64,
    /// Wakes the viewers waiting for a frame (or for the end). One `Notify`, not a `watch`:
    /// a `watch` wakes through eight of them, and this is rung for every event of every turn.
    moved: Notify,
    /// When the turn began (ms since the epoch): thinking blocks are timed from it.
    began_ms: i64,
    /// Viewers reading now.
    viewers: watch::Sender<usize>,
    /// A copy of a turn another replica runs, kept from the database.
    remote: bool,
}

/// What a viewer got from the log: the frames after its cursor as one buffer, the sequence
/// number of the last of them, and whether the turn is over.
#[derive(Debug)]
pub struct Read {
    pub bytes: Option<Bytes>,
    pub last: u64,
    pub finished: bool,
}

impl TurnLog {
    /// The log of a turn that runs here and began at `began_ms`.
    pub fn new(began_ms: i64) -> Arc<Self> {
        Self::build(began_ms, false)
    }

    /// The copy of a turn that runs on another replica and began at `began_ms`.
    pub fn mirror(began_ms: i64) -> Arc<Self> {
        Self::build(began_ms, true)
    }

    fn build(began_ms: i64, remote: bool) -> Arc<Self> {
        Arc::new(TurnLog {
            frames: Mutex::default(),
            seq: AtomicU64::new(0),
            moved: Notify::new(),
            began_ms,
            viewers: watch::channel(0).0,
            remote,
        })
    }

    /// True for the copy of a turn another replica runs.
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// Milliseconds since the turn began.
    pub fn turn_ms(&self) -> u64 {
        (now_ms() - self.began_ms).max(0) as u64
    }

    /// When the turn began (ms since the epoch).
    pub fn began_ms(&self) -> i64 {
        self.began_ms
    }

    /// Appends the events the turn just sent, numbering and encoding each once. A block's start
    /// is stamped with its time in the turn. With `frames` (other replicas read them), returns
    /// the new frames too.
    pub fn append(&self, events: Vec<TurnEvent>, frames: bool) -> Vec<Frame> {
        let at = self.turn_ms();
        let mut added = Vec::new();
        let Ok(mut log) = self.frames.lock() else {
            return added;
        };
        if log.finished {
            return added;
        }
        let mut text = std::mem::take(&mut log.scratch);
        for mut event in events {
            if let TurnEvent::ThinkingStart { at_ms, .. } = &mut event {
                at_ms.get_or_insert(at);
            }
            let seq = log.len() + 1;
            text.clear();
            encode_numbered_event(seq, &event, &mut text);
            log.push(text.as_bytes());
            let last = event.is_terminal();
            if frames {
                added.push(Frame {
                    seq,
                    bytes: Bytes::copy_from_slice(text.as_bytes()),
                    last,
                });
            }
            if last {
                log.finish();
                break;
            }
        }
        if !log.finished {
            text.clear();
            log.scratch = text;
        }
        let newest = log.len();
        drop(log);
        self.moved_to(newest);
        added
    }

    /// Records `newest` as the last sequence number and wakes the viewers if it moved.
    fn moved_to(&self, newest: u64) {
        if self.seq.swap(newest, Ordering::AcqRel) != newest {
            self.moved.notify_waiters();
        }
    }

    /// Appends frames of a remote turn in order. A frame already here is skipped; one that
    /// leaves a gap stops the copy and is reported (false), so the caller reads the missing
    /// frames first.
    pub fn extend(&self, frames: impl IntoIterator<Item = Frame>) -> bool {
        let Ok(mut log) = self.frames.lock() else {
            return false;
        };
        let mut in_order = true;
        for frame in frames {
            let next = log.len() + 1;
            if log.finished || frame.seq < next {
                continue;
            }
            if frame.seq > next {
                in_order = false;
                break;
            }
            log.push(&frame.bytes);
            if frame.last {
                log.finish();
            }
        }
        let newest = log.len();
        drop(log);
        self.moved_to(newest);
        in_order
    }

    /// Ends a remote copy whose turn is over without its last frame reaching here.
    pub fn close(&self) {
        if let Ok(mut log) = self.frames.lock() {
            log.cut |= !log.finished;
            log.finished = true;
        }
        self.moved.notify_waiters();
    }

    /// The frames after sequence number `after`.
    pub fn read_after(&self, after: u64) -> Read {
        let Ok(log) = self.frames.lock() else {
            return Read {
                bytes: None,
                last: after,
                finished: true,
            };
        };
        let total = log.len();
        let finished = log.finished;
        if after >= total {
            return Read {
                bytes: None,
                last: after,
                finished,
            };
        }
        Read {
            bytes: Some(Bytes::copy_from_slice(log.after(after))),
            last: total,
            finished,
        }
    }

    /// The end the survivors wrote for a turn whose replica died, numbered `after + 1`, for a
    /// viewer whose `after` is already at or past it. Such a viewer watched on the replica that
    /// died and saw more of the turn than it wrote down: its numbers run past the shared log's,
    /// and without this it would wait for an end it can never get. (Any other end is the turn's
    /// own, which a viewer at that number already has.)
    pub fn end_after(&self, after: u64) -> Option<Bytes> {
        let log = self.frames.lock().ok()?;
        if !log.finished || log.cut || after < log.len() {
            return None;
        }
        let last = log.last()?;
        let died = std::str::from_utf8(last)
            .ok()
            .and_then(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
            .and_then(|data| serde_json::from_str::<TurnEvent>(data).ok())
            .is_some_and(|end| {
                matches!(end, TurnEvent::Error(f) if f.code == crate::domain::ErrorCode::ReplicaDied)
            });
        if !died {
            return None;
        }
        let body = last.iter().position(|&b| b == b'\n')?;
        let mut frame = BytesMut::with_capacity(last.len() + 8);
        frame.extend_from_slice(format!("id: {}", after + 1).as_bytes());
        frame.extend_from_slice(&last[body..]);
        Some(frame.freeze())
    }

    /// The sequence number of the newest frame.
    pub fn last_seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// True once the turn's last frame is in the log.
    pub fn is_finished(&self) -> bool {
        self.frames.lock().map(|l| l.finished).unwrap_or(true)
    }

    /// Counts a viewer until the returned guard is dropped.
    pub fn watch(self: &Arc<Self>) -> Viewer {
        self.viewers.send_modify(|n| *n += 1);
        Viewer { log: self.clone() }
    }

    /// Viewers reading now.
    pub fn viewers(&self) -> usize {
        *self.viewers.borrow()
    }

    /// Follows the number of viewers (for the unwatched-turn policy).
    pub fn viewer_changes(&self) -> watch::Receiver<usize> {
        self.viewers.subscribe()
    }
}

/// One viewer of a log; it stops being counted when dropped.
pub struct Viewer {
    log: Arc<TurnLog>,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.log.viewers.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// How a viewer's response is made.
pub struct Follow {
    /// The last sequence number the viewer has (0: none).
    pub after: u64,
    /// A keep-alive comment is sent after this long without a frame.
    pub keep_alive: Duration,
    /// Start with a `clock` event (a viewer joining a running turn).
    pub clock: bool,
    /// Resolves when the server's shutdown grace is over: a viewer of a remote copy ends
    /// then (and reconnects elsewhere); a local turn sends its own last `error` first.
    pub grace_over: futures::future::BoxFuture<'static, ()>,
}

/// The bytes a viewer is sent: optionally the `clock`, then every frame after its cursor as it
/// arrives, keep-alive comments while the turn is quiet, and the end once the turn's last frame
/// is out.
pub fn follow(log: Arc<TurnLog>, how: Follow) -> impl Stream<Item = Bytes> + Send {
    struct State {
        viewer: Viewer,
        cursor: u64,
        clock: bool,
        keep_alive: Duration,
        grace_over: futures::future::Fuse<futures::future::BoxFuture<'static, ()>>,
        done: bool,
        /// When the viewer was last sent something, and the one timer its keep-alive rings on
        /// (moved only when it rings early, not for every frame).
        last_sent: std::time::Instant,
        alarm: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    }
    use futures::FutureExt;
    let state = State {
        viewer: log.watch(),
        cursor: how.after,
        clock: how.clock,
        keep_alive: how.keep_alive,
        grace_over: how.grace_over.fuse(),
        done: false,
        last_sent: std::time::Instant::now(),
        alarm: None,
    };
    futures::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        if std::mem::take(&mut st.clock) {
            let mut text = String::new();
            encode_event(
                &TurnEvent::Clock {
                    turn_ms: st.viewer.log.turn_ms(),
                },
                &mut text,
            );
            return Some((Bytes::from(text), st));
        }
        let log = st.viewer.log.clone();
        loop {
            let moved = log.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            let read = log.read_after(st.cursor);
            if let Some(bytes) = read.bytes {
                st.cursor = read.last;
                st.done = read.finished;
                st.last_sent = std::time::Instant::now();
                return Some((bytes, st));
            }
            if read.finished {
                st.done = true;
                return log.end_after(st.cursor).map(|end| (end, st));
            }
            let remote = log.is_remote();
            tokio::select! {
                _ = &mut moved => {}
                _ = super::alarm::ring(&mut st.alarm, st.last_sent + st.keep_alive) => {
                    let now = std::time::Instant::now();
                    if now >= st.last_sent + st.keep_alive {
                        st.last_sent = now;
                        return Some((Bytes::from_static(KEEP_ALIVE.as_bytes()), st));
                    }
                }
                _ = &mut st.grace_over, if remote => return None,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ThinkingKind;
    use crate::wire::sse::TurnDecoder;
    use futures::{FutureExt, StreamExt};

    fn events() -> Vec<TurnEvent> {
        vec![
            TurnEvent::Started { turn: "t".into() },
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            TurnEvent::Thinking {
                block: 0,
                text: "hm".into(),
            },
            TurnEvent::Delta { text: "ok".into() },
            TurnEvent::Done {
                finish_reason: "stop".into(),
                usage: None,
                thinking_chars: 2,
                total_ms: 5,
            },
        ]
    }

    fn decode(bytes: &[u8]) -> (Vec<TurnEvent>, Option<u64>) {
        let mut dec = TurnDecoder::new();
        let mut out = Vec::new();
        dec.push(bytes, &mut out);
        dec.finish(&mut out);
        (out, dec.last_id())
    }

    #[test]
    fn every_cursor_reads_exactly_what_follows_it() {
        let log = TurnLog::new(now_ms());
        let added = log.append(events(), true);
        assert_eq!(added.len(), 5);
        assert!(log.is_finished());
        let (all, last) = decode(&log.read_after(0).bytes.unwrap());
        assert_eq!(last, Some(5));
        assert!(matches!(
            all[1],
            TurnEvent::ThinkingStart { at_ms: Some(_), .. }
        ));
        for after in 0..5 {
            let read = log.read_after(after);
            let (tail, _) = decode(&read.bytes.unwrap());
            assert_eq!(tail, all[after as usize..], "after {after}");
            assert_eq!(read.last, 5);
        }
        assert!(log.read_after(5).bytes.is_none());
        assert!(log.read_after(9).bytes.is_none());
    }

    #[test]
    fn frames_are_returned_only_when_asked_and_the_log_is_the_same_either_way() {
        let (asked, quiet) = (TurnLog::new(0), TurnLog::new(0));
        let mut returned = Vec::new();
        let stamped: Vec<TurnEvent> = events()
            .into_iter()
            .map(|e| match e {
                TurnEvent::ThinkingStart { block, kind, .. } => TurnEvent::ThinkingStart {
                    block,
                    kind,
                    at_ms: Some(7),
                },
                e => e,
            })
            .collect();
        for chunk in stamped.chunks(2) {
            returned.extend(asked.append(chunk.to_vec(), true));
            assert!(quiet.append(chunk.to_vec(), false).is_empty());
        }
        let all = asked.read_after(0).bytes.unwrap();
        assert_eq!(quiet.read_after(0).bytes.unwrap(), all);
        let joined: Vec<u8> = returned.iter().flat_map(|f| f.bytes.to_vec()).collect();
        assert_eq!(joined, all.to_vec());
        assert_eq!(
            returned.iter().map(|f| f.seq).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert!(quiet.is_finished() && returned[4].last);
    }

    #[test]
    fn nothing_is_appended_after_the_last_frame() {
        let log = TurnLog::new(now_ms());
        log.append(events(), true);
        assert!(log
            .append(vec![TurnEvent::Delta { text: "x".into() }], true)
            .is_empty());
        assert_eq!(log.last_seq(), 5);
    }

    #[test]
    fn a_remote_copy_takes_frames_in_order_and_reports_a_gap() {
        let source = TurnLog::new(now_ms());
        let frames = source.append(events(), true);
        let copy = TurnLog::mirror(source.began_ms());
        assert!(copy.extend(frames[..2].iter().cloned()));
        assert!(
            copy.extend(frames[1..3].iter().cloned()),
            "a repeat is skipped"
        );
        assert!(!copy.extend(frames[4..].iter().cloned()), "a gap");
        assert_eq!(copy.last_seq(), 3);
        assert!(copy.extend(frames[3..].iter().cloned()));
        assert!(copy.is_finished());
        assert_eq!(
            copy.read_after(0).bytes.unwrap(),
            source.read_after(0).bytes.unwrap()
        );
    }

    #[tokio::test]
    async fn a_viewer_gets_the_live_tail_then_the_end_and_is_counted() {
        let log = TurnLog::new(now_ms());
        log.append(events()[..2].to_vec(), true);
        let how = Follow {
            after: 1,
            keep_alive: Duration::from_secs(60),
            clock: true,
            grace_over: futures::future::pending().boxed(),
        };
        let mut viewer = Box::pin(follow(log.clone(), how));
        let (clock, _) = decode(&viewer.next().await.unwrap());
        assert!(matches!(clock[..], [TurnEvent::Clock { .. }]));
        assert_eq!(log.viewers(), 1);
        let (first, id) = decode(&viewer.next().await.unwrap());
        assert!(
            matches!(
                first[..],
                [TurnEvent::ThinkingStart {
                    block: 0,
                    at_ms: Some(_),
                    ..
                }]
            ),
            "{first:?}"
        );
        assert_eq!(id, Some(2));
        let writer = log.clone();
        tokio::spawn(async move {
            tokio::task::yield_now().await;
            writer.append(events()[2..].to_vec(), true);
        });
        let mut rest = Vec::new();
        while let Some(bytes) = viewer.next().await {
            rest.extend(decode(&bytes).0);
        }
        assert_eq!(rest, events()[2..]);
        drop(viewer);
        assert_eq!(log.viewers(), 0);
    }

    #[tokio::test]
    async fn a_viewer_past_the_end_of_a_finished_log_gets_its_end_once_numbered_after_what_it_has()
    {
        let log = TurnLog::new(now_ms());
        let mut died = events();
        died.pop();
        died.push(TurnEvent::Error(
            crate::server::turn::wording::replica_died(),
        ));
        let frames = log.append(died.clone(), true);
        let total = frames.len() as u64;
        let view = |after| {
            let how = Follow {
                after,
                keep_alive: Duration::from_secs(60),
                clock: false,
                grace_over: futures::future::pending().boxed(),
            };
            follow(log.clone(), how).collect::<Vec<Bytes>>()
        };
        for after in [total, total + 7] {
            let got = view(after).await;
            assert_eq!(got.len(), 1, "after {after}");
            let (end, id) = decode(&got[0]);
            assert_eq!(end, died[died.len() - 1..], "after {after}");
            assert_eq!(id, Some(after + 1));
        }
        assert_eq!(
            view(0).await.concat(),
            log.read_after(0).bytes.unwrap(),
            "from the start: the log as it is"
        );

        // A turn's own end is not given twice: a viewer at its number already has it.
        let own = TurnLog::new(now_ms());
        own.append(events(), true);
        assert_eq!(own.end_after(events().len() as u64), None);

        // A remote copy closed without its end has no end to give.
        let copy = TurnLog::mirror(log.began_ms());
        copy.extend(frames[..2].iter().cloned());
        copy.close();
        assert_eq!(copy.end_after(2), None);
        assert_eq!(
            copy.end_after(1),
            None,
            "and a viewer behind reads on as usual"
        );
    }

    #[tokio::test]
    async fn a_quiet_turn_sends_keep_alives() {
        let log = TurnLog::new(now_ms());
        log.append(events()[..1].to_vec(), true);
        let how = Follow {
            after: 1,
            keep_alive: Duration::from_millis(10),
            clock: false,
            grace_over: futures::future::pending().boxed(),
        };
        let mut viewer = Box::pin(follow(log, how));
        assert_eq!(viewer.next().await.unwrap(), KEEP_ALIVE.as_bytes());
    }
}
