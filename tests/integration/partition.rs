//! Faults across hosts, not processes: three Ponder replicas and PostgreSQL, each a host of its
//! own in network namespaces this test makes (see `common::netns`), with a viewer on each
//! replica, also a host of its own. The replicas reach PostgreSQL over a back network and the
//! viewers reach the replicas over a front one, so a cable can be pulled between any two.
//!
//! Each test plays one fault during a long turn and then checks the invariants:
//! - every viewer gets every event once, in order, and exactly one terminal event, last;
//! - no answer stays `streaming`;
//! - an answer a viewer saw finish (`done`) stays stored as it was seen;
//! - a replica cut off from the database, and healed, never writes over what the survivors
//!   stored (no late `done` over `interrupted`, no second message, one last event in the log);
//! - a replica that cannot reach the database refuses new turns (503, and `/readyz` says so)
//!   until it can, and then serves again.
//!
//! `make chaos` runs the same faults many times over (`PONDER_CHAOS_ROUNDS`), with the cut
//! at a different moment of the turn each round.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use common::browser::Browser;
use common::netns::{Host, Net, Wire};
use common::process::Process;
use futures::StreamExt;
use ponder::domain::TurnEvent;
use ponder::wire::sse::SseDecoder;
use serde_json::json;

/// Heartbeat and timeout of the replicas: one taken for dead after 2 s of silence.
const HEARTBEAT: &str = "0.3";
const REPLICA_TIMEOUT: &str = "2";
/// A viewer that hears nothing for this long (the server sends a keep-alive every 0.5 s)
/// takes the connection for lost and reconnects, as the page does.
const SILENCE: Duration = Duration::from_secs(2);
/// No fault here may keep a viewer from its terminal event for longer.
const PATIENCE: Duration = Duration::from_secs(60);

const ADMIN: (&str, &str) = ("root", "root-password-1");

/// PostgreSQL as a host of its own: a cluster made with `initdb`, listening on the back network
/// (and on a socket in its directory, where the test reads what was stored).
struct Postgres {
    host: Host,
    dir: PathBuf,
    bin: PathBuf,
}

impl Postgres {
    fn start(host: Host) -> Postgres {
        let bin = common::postgres::server_bin();
        let dir = std::env::temp_dir().join(format!("{}-pg", host.name));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("cluster dir");
        let pg = Postgres { host, dir, bin };
        pg.own();
        let data = pg.data();
        pg.as_postgres(&pg.bin.join("initdb"))
            .args(["-D", &data, "-U", "ponder", "--auth=trust", "-E", "UTF8"])
            .args(["--no-sync", "--no-instructions"])
            .run();
        let hba = format!("{data}/pg_hba.conf");
        let mut rules = std::fs::read_to_string(&hba).expect("pg_hba.conf");
        rules.push_str("host all all 10.80.2.0/24 trust\n");
        std::fs::write(&hba, rules).expect("pg_hba.conf");
        pg.ctl(&["start"]);
        Command::new(pg.bin.join("createdb"))
            .args(["-h", &pg.socket(), "-p", "5432", "-U", "ponder", "ponder"])
            .run();
        pg
    }

    fn own(&self) {
        Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&self.dir)
            .run();
    }

    fn data(&self) -> String {
        self.dir.join("data").to_string_lossy().into_owned()
    }

    fn socket(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }

    fn as_postgres(&self, program: &std::path::Path) -> Command {
        let mut command = self.host.command("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    }

    fn ctl(&self, what: &[&str]) {
        let options = format!(
            "-c listen_addresses={} -p 5432 -c unix_socket_directories={} -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
            self.host.address(Wire::Back),
            self.socket()
        );
        let log = self.dir.join("log").to_string_lossy().into_owned();
        self.as_postgres(&self.bin.join("pg_ctl"))
            .args([
                "-D",
                &self.data(),
                "-o",
                &options,
                "-l",
                &log,
                "-w",
                "-m",
                "fast",
            ])
            .args(what)
            .run();
    }

    fn url(&self) -> String {
        format!(
            "postgres://ponder@{}:5432/ponder",
            self.host.address(Wire::Back)
        )
    }

    /// One value read from the database, over its socket.
    fn read(&self, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                &self.socket(),
                "-p",
                "5432",
                "-U",
                "ponder",
                "-d",
                "ponder",
            ])
            .args(["-Atc", sql])
            .output()
            .expect("psql");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn count(&self, sql: &str) -> i64 {
        self.read(sql).parse().expect("a count")
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self
            .as_postgres(&self.bin.join("pg_ctl"))
            .args(["-D", &self.data(), "-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

trait Run {
    fn run(&mut self);
}

impl Run for Command {
    fn run(&mut self) {
        let out = self.output().expect("run a command");
        assert!(
            out.status.success(),
            "{self:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// One replica: its host, its process (none once killed) and its address.
struct Replica {
    host: Host,
    process: Option<Process>,
    base: String,
}

/// The hosts, the database, three replicas and a viewer host for each, with the admin's
/// session cookie.
struct World {
    replicas: Vec<Replica>,
    viewers: Vec<Host>,
    db: Postgres,
    cookie: String,
    _net: Net,
}

impl World {
    async fn new() -> World {
        let mut net = Net::new();
        let db = Postgres::start(net.host("pg", &[Wire::Back]));
        let replicas: Vec<Replica> = (1..=3)
            .map(|n| {
                let host = net.host(&format!("r{n}"), &[Wire::Front, Wire::Back]);
                let listen = format!("{}:3000", host.address(Wire::Front));
                let process = Process::start_in(
                    &host,
                    &[
                        ("LEPTOS_SITE_ADDR", listen.as_str()),
                        ("PONDER_AUTH", "password"),
                        ("PONDER_DATABASE_URL", &db.url()),
                        ("PONDER_DEMO_DELAY_MS", "40"),
                        ("PONDER_HEARTBEAT", HEARTBEAT),
                        ("PONDER_REPLICA_TIMEOUT", REPLICA_TIMEOUT),
                        ("PONDER_KEEP_ALIVE", "0.5"),
                    ],
                );
                Replica {
                    host,
                    process: Some(process),
                    base: format!("http://{listen}"),
                }
            })
            .collect();
        let viewers: Vec<Host> = (1..=3)
            .map(|n| net.host(&format!("v{n}"), &[Wire::Front]))
            .collect();
        let base = replicas[0].base.clone();
        let cookie = viewers[0]
            .run(move || async move {
                let admin = Browser::at(base);
                admin
                    .ok("auth/setup", json!({"name": ADMIN.0, "password": ADMIN.1}))
                    .await;
                let cookie = admin.session.lock().expect("lock").clone();
                cookie.expect("a session cookie")
            })
            .await;
        World {
            replicas,
            viewers,
            db,
            cookie,
            _net: net,
        }
    }

    fn browser(&self, replica: usize) -> Browser {
        let browser = Browser::at(self.replicas[replica].base.clone());
        *browser.session.lock().expect("lock") = Some(self.cookie.clone());
        browser
    }

    /// Starts a turn on `replica` from viewer `viewer`'s host and returns its id and where it
    /// is stored, leaving it running (stored turns run whether or not anyone watches).
    async fn start(&self, viewer: usize, replica: usize, content: &str) -> (String, String) {
        let browser = self.browser(replica);
        let body = json!({"content": content});
        self.viewers[viewer]
            .run(move || async move {
                let response = browser
                    .request("/api/chat", body.to_string())
                    .send()
                    .await
                    .expect("a turn");
                assert_eq!(response.status(), 200);
                let frames = read_until(response, |frames| frames.len() >= 2).await;
                let turn = match &frames[0].1 {
                    TurnEvent::Started { turn } => turn.clone(),
                    other => panic!("a turn starts with its id: {other:?}"),
                };
                let conversation = match &frames[1].1 {
                    TurnEvent::Turn { conversation, .. } => conversation.clone(),
                    other => panic!("then where it is stored: {other:?}"),
                };
                (turn, conversation)
            })
            .await
    }

    /// A whole turn on `replica`, read by the one who asked: its events.
    async fn ask(&self, viewer: usize, replica: usize, content: &str) -> Vec<TurnEvent> {
        let browser = self.browser(replica);
        let body = json!({"content": content});
        self.viewers[viewer]
            .run(move || async move {
                let (status, events) = browser.turn(body).await;
                assert_eq!(status, 200, "{events:?}");
                events
            })
            .await
    }

    /// Viewer `viewer` follows `turn` from its first event, on the replicas `bases` in turn
    /// (the next one when a connection drops or goes silent), to its terminal event.
    fn follow(
        &self,
        viewer: usize,
        turn: &str,
        bases: &[usize],
    ) -> tokio::task::JoinHandle<Followed> {
        let host = self.viewers[viewer].clone();
        let bases: Vec<String> = bases
            .iter()
            .map(|&r| self.replicas[r].base.clone())
            .collect();
        let (cookie, turn) = (self.cookie.clone(), turn.to_string());
        tokio::spawn(async move { host.run(move || follow(bases, cookie, turn)).await })
    }

    /// Waits (bounded) until the turn's log in the database holds `n` events.
    async fn logged(&self, turn: &str, n: i64) {
        let deadline = Instant::now() + PATIENCE;
        while self.db.count(&format!(
            "SELECT count(*) FROM turn_events WHERE turn_id = '{turn}'"
        )) < n
        {
            assert!(
                Instant::now() < deadline,
                "the turn never logged {n} events"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The stored status of the answer in `conversation` (its last message's version).
    fn status(&self, conversation: &str) -> String {
        self.db.read(&format!(
            "SELECT v.status FROM message_versions v JOIN messages m ON m.id = v.message_id \
             WHERE m.conversation_id = '{conversation}' AND m.role = 'assistant' \
             ORDER BY m.position DESC, v.idx DESC LIMIT 1"
        ))
    }

    /// Waits (bounded) until no answer is stored `streaming`: the survivors ended, or the
    /// owner saved, every turn.
    async fn nothing_streaming(&self) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = self
                .db
                .count("SELECT count(*) FROM message_versions WHERE status = 'streaming'");
            if left == 0 {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{left} answers still stored as streaming"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `/readyz` of `replica`, asked from viewer `viewer`'s host.
    async fn ready(&self, viewer: usize, replica: usize) -> u16 {
        let url = format!("{}/readyz", self.replicas[replica].base);
        self.viewers[viewer]
            .run(move || async move {
                let asked = reqwest::Client::new()
                    .get(url)
                    .timeout(SILENCE)
                    .send()
                    .await;
                asked.map(|r| r.status().as_u16()).unwrap_or(0)
            })
            .await
    }

    /// Waits (bounded) until `/readyz` of `replica` answers `status`.
    async fn until_ready_is(&self, viewer: usize, replica: usize, status: u16) {
        let deadline = Instant::now() + PATIENCE;
        while self.ready(viewer, replica).await != status {
            assert!(
                Instant::now() < deadline,
                "replica {replica} never answered {status} at /readyz"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn kill(&mut self, replica: usize) {
        let mut process = self.replicas[replica].process.take().expect("running");
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(process.child.id() as i32, libc::SIGKILL);
        }
        let _ = process.wait_exit(Duration::from_secs(5));
    }
}

/// What one viewer saw of a turn: each numbered event, in the order it arrived, and how often
/// it had to reconnect.
#[derive(Debug)]
struct Followed {
    events: Vec<(u64, TurnEvent)>,
    reconnects: usize,
    finished: bool,
}

impl Followed {
    /// Every event once and in order from the first, and exactly one terminal event, last.
    fn check(&self, who: &str) {
        assert!(self.finished, "{who} never got a terminal event: {self:#?}");
        let seqs: Vec<u64> = self.events.iter().map(|(s, _)| *s).collect();
        let expected: Vec<u64> = (1..=seqs.len() as u64).collect();
        assert_eq!(seqs, expected, "{who}: a gap or a duplicate");
        let terminals = self.events.iter().filter(|(_, e)| e.is_terminal()).count();
        assert_eq!(terminals, 1, "{who}: {self:#?}");
        assert!(
            self.events.last().is_some_and(|(_, e)| e.is_terminal()),
            "{who}"
        );
    }

    fn last(&self) -> &TurnEvent {
        &self.events.last().expect("an event").1
    }
}

fn numbered(frames: Vec<ponder::wire::sse::SseFrame>, into: &mut Vec<(u64, TurnEvent)>) {
    for f in frames {
        let Some(id) = f.id.and_then(|id| id.parse().ok()) else {
            continue;
        };
        into.push((id, serde_json::from_str(&f.data).expect("a turn event")));
    }
}

/// Reads numbered events from `response` until `enough` says so (or the stream ends).
async fn read_until(
    response: reqwest::Response,
    enough: impl Fn(&[(u64, TurnEvent)]) -> bool,
) -> Vec<(u64, TurnEvent)> {
    let mut decoder = SseDecoder::new();
    let (mut frames, mut events) = (Vec::new(), Vec::new());
    let mut body = response.bytes_stream();
    while let Some(Ok(chunk)) = body.next().await {
        decoder.push(&chunk, &mut frames).expect("frames");
        numbered(std::mem::take(&mut frames), &mut events);
        if enough(&events) {
            break;
        }
    }
    events
}

/// A viewer's loop, as the page's: join the turn after the last event it has, read until the
/// terminal event; on a dropped or silent connection, try the next replica.
async fn follow(bases: Vec<String>, cookie: String, turn: String) -> Followed {
    let http = reqwest::Client::new();
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Followed {
        events: Vec::new(),
        reconnects: 0,
        finished: false,
    };
    for base in bases.iter().cycle() {
        if Instant::now() > deadline {
            break;
        }
        let mut request = http
            .get(format!("{base}/api/turn/events?turn={turn}"))
            .header("cookie", &cookie);
        if let Some((after, _)) = seen.events.last() {
            request = request.header("last-event-id", after.to_string());
        }
        if let Ok(Ok(response)) = tokio::time::timeout(SILENCE, request.send()).await {
            if response.status() == 200 {
                let mut decoder = SseDecoder::new();
                let mut frames = Vec::new();
                let mut body = response.bytes_stream();
                while let Ok(Some(Ok(chunk))) = tokio::time::timeout(SILENCE, body.next()).await {
                    decoder.push(&chunk, &mut frames).expect("frames");
                    numbered(std::mem::take(&mut frames), &mut seen.events);
                    if seen.events.last().is_some_and(|(_, e)| e.is_terminal()) {
                        seen.finished = true;
                        return seen;
                    }
                }
            }
        }
        seen.reconnects += 1;
        // The page backs off before it tries again; so does this viewer, briefly.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    seen
}

fn rounds() -> usize {
    std::env::var("PONDER_CHAOS_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// How far into the turn (in logged events) the fault comes in round `round`.
fn fault_at(round: usize) -> i64 {
    10 + (round as i64 * 37) % 120
}

fn is_replica_gone(event: &TurnEvent) -> bool {
    matches!(event, TurnEvent::Error(f) if f.retryable && f.message.contains("stopped before it finished"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_turn_ends_it_once_for_every_viewer() {
    for round in 0..rounds() {
        let mut world = World::new().await;
        let (turn, conversation) = world.start(0, 0, "[long-think] then die").await;
        let viewers: Vec<_> = (0..3)
            .map(|v| world.follow(v, &turn, &[v, (v + 1) % 3, (v + 2) % 3]))
            .collect();
        world.logged(&turn, fault_at(round)).await;
        world.kill(0);
        let mut seen = Vec::new();
        for viewer in viewers {
            seen.push(viewer.await.expect("a viewer"));
        }
        for (n, followed) in seen.iter().enumerate() {
            followed.check(&format!("viewer {n}, round {round}"));
            assert!(is_replica_gone(followed.last()), "{:?}", followed.last());
        }
        assert!(
            seen[0].reconnects >= 1,
            "the killed replica's viewer moved on"
        );
        assert_eq!(
            seen[1].events, seen[2].events,
            "the same turn for both survivors' viewers"
        );
        // The viewer that moved may have seen a few more frames on the replica that died than
        // it wrote down (its writes are batched); then its end comes numbered after them
        // (`TurnLog::end_after`). Everything the survivors' viewers saw, it saw the same.
        let (moved, stayed) = (&seen[0].events, &seen[1].events);
        let written = stayed.len() - 1;
        assert!(
            moved.len() >= stayed.len() && moved[..written] == stayed[..written],
            "and for the viewer that moved: {moved:?} against {stayed:?}"
        );
        assert_eq!(moved.last().map(|e| &e.1), stayed.last().map(|e| &e.1));
        world.nothing_streaming().await;
        assert_eq!(world.status(&conversation), "interrupted");
        // The survivors take new turns.
        for replica in [1, 2] {
            let events = world.ask(replica, replica, "still there?").await;
            assert!(
                matches!(events.last(), Some(TurnEvent::Done { .. })),
                "{events:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_cut_off_from_the_database_ends_its_turns_refuses_new_ones_and_never_overwrites_the_survivors(
) {
    let world = World::new().await;
    // An answer its reader saw finish, before anything goes wrong.
    let before = world.ask(0, 0, "an answer to keep").await;
    assert!(
        matches!(before.last(), Some(TurnEvent::Done { .. })),
        "{before:?}"
    );
    let kept = world.db.read(
        "SELECT v.id || ' ' || md5(v.content) FROM message_versions v \
         JOIN messages m ON m.id = v.message_id WHERE m.role = 'assistant'",
    );
    for round in 0..rounds() {
        let (turn, conversation) = world.start(0, 0, "[long-think] cut me off").await;
        let viewers: Vec<_> = (0..3).map(|v| world.follow(v, &turn, &[v])).collect();
        world.logged(&turn, fault_at(round)).await;
        world.replicas[0].host.cut(Wire::Back);

        // The replica finds itself cut off before the others take it for dead: its readiness
        // says so and it refuses new turns.
        world.until_ready_is(0, 0, 503).await;
        let browser = world.browser(0);
        let (status, body) = world.viewers[0]
            .run(move || async move {
                browser
                    .call("chat", json!({"content": "a turn while cut off"}))
                    .await
            })
            .await;
        assert_eq!(status, 503, "{body}");
        assert_eq!(body["code"], "database_unavailable", "{body}");

        let mut seen = Vec::new();
        for viewer in viewers {
            seen.push(viewer.await.expect("a viewer"));
        }
        for (n, followed) in seen.iter().enumerate() {
            followed.check(&format!("viewer {n}, round {round}"));
            assert!(
                matches!(followed.last(), TurnEvent::Error(f) if f.retryable),
                "{:?}",
                followed.last()
            );
        }
        for survivor in &seen[1..] {
            assert!(is_replica_gone(survivor.last()), "{:?}", survivor.last());
        }

        world.replicas[0].host.heal(Wire::Back);
        world.until_ready_is(0, 0, 200).await;
        let after = world.ask(0, 0, "back again").await;
        assert!(
            matches!(after.last(), Some(TurnEvent::Done { .. })),
            "{after:?}"
        );

        // What the survivors stored stands: one question, one answer, interrupted, one end.
        world.nothing_streaming().await;
        assert_eq!(world.status(&conversation), "interrupted", "round {round}");
        assert_eq!(
            world.db.count(&format!(
                "SELECT count(*) FROM messages WHERE conversation_id = '{conversation}'"
            )),
            2
        );
        assert_eq!(
            world.db.count(&format!(
                "SELECT count(*) FROM message_versions v JOIN messages m ON m.id = v.message_id \
                 WHERE m.conversation_id = '{conversation}'"
            )),
            2
        );
        assert_eq!(
            world.db.count(&format!(
                "SELECT count(*) FROM turn_events WHERE turn_id = '{turn}' AND last"
            )),
            1,
            "one last event in the shared log"
        );
        // Joining the turn now, anywhere, replays that one end.
        let replay = world.follow(1, &turn, &[0]).await.expect("a late viewer");
        replay.check("a late viewer on the healed replica");
        assert_eq!(replay.events, seen[1].events);
    }
    let (id, digest) = kept.split_once(' ').expect("one answer done");
    assert_eq!(
        world.db.read(&format!(
            "SELECT status || ' ' || md5(content) FROM message_versions WHERE id = '{id}'"
        )),
        format!("done {digest}"),
        "the answer seen finished is still stored as it was seen"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_restart_mid_turn_ends_every_turn_once_and_the_replicas_carry_on() {
    let world = World::new().await;
    let before = world.ask(0, 1, "an answer to keep").await;
    assert!(
        matches!(before.last(), Some(TurnEvent::Done { .. })),
        "{before:?}"
    );
    let mut finished = 0;
    for round in 0..rounds() {
        let (turn, conversation) = world.start(1, 1, "[long-think] restart the database").await;
        let viewers: Vec<_> = (0..3).map(|v| world.follow(v, &turn, &[v])).collect();
        world.logged(&turn, fault_at(round)).await;
        world.db.ctl(&["restart"]);
        let mut seen = Vec::new();
        for viewer in viewers {
            seen.push(viewer.await.expect("a viewer"));
        }
        for (n, followed) in seen.iter().enumerate() {
            followed.check(&format!("viewer {n}, round {round}"));
        }
        assert_eq!(seen[0].events, seen[1].events, "round {round}");
        assert_eq!(seen[2].events, seen[1].events, "round {round}");
        world.nothing_streaming().await;
        let stored = world.status(&conversation);
        match seen[1].last() {
            TurnEvent::Done { .. } => {
                assert_eq!(stored, "done", "what was seen finished");
                finished += 1;
            }
            TurnEvent::Error(f) => {
                assert!(f.retryable, "{f:?}");
                assert!(
                    ["error", "interrupted"].contains(&stored.as_str()),
                    "{stored}"
                );
            }
            other => panic!("{other:?}"),
        }
        for replica in 0..3 {
            let events = world.ask(replica, replica, "after the restart").await;
            assert!(
                matches!(events.last(), Some(TurnEvent::Done { .. })),
                "replica {replica}: {events:?}"
            );
        }
    }
    let done = world.db.count(
        "SELECT count(*) FROM message_versions v JOIN messages m ON m.id = v.message_id \
         WHERE m.role = 'assistant' AND v.status = 'done'",
    );
    assert_eq!(
        done,
        1 + finished + 3 * rounds() as i64,
        "every answer seen finished is stored so"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_viewer_cut_off_from_its_replica_gets_exactly_what_it_missed_after_the_heal() {
    let world = World::new().await;
    for round in 0..rounds() {
        let (turn, _) = world.start(0, 0, "[long-think] lose the viewer").await;
        let watching = world.follow(0, &turn, &[0]);
        let cut_off = world.follow(1, &turn, &[1]);
        world.logged(&turn, fault_at(round) / 2).await;
        world.viewers[1].cut(Wire::Front);
        let at_cut = world.db.count(&format!(
            "SELECT count(*) FROM turn_events WHERE turn_id = '{turn}'"
        ));
        // The turn goes on while the viewer hears nothing, for longer than it waits before it
        // takes the connection for lost (75 events at 40 ms: 3 s).
        world.logged(&turn, at_cut + 75).await;
        world.viewers[1].heal(Wire::Front);
        let (watching, cut_off) = (
            watching.await.expect("viewer"),
            cut_off.await.expect("viewer"),
        );
        watching.check("the viewer left alone");
        cut_off.check("the viewer cut off");
        assert!(cut_off.reconnects >= 1, "{cut_off:#?}");
        assert_eq!(cut_off.events, watching.events, "round {round}");
        assert!(matches!(watching.last(), TurnEvent::Done { .. }));
    }
}
