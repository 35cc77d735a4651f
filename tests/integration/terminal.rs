//! `ponder chat` against a real Ponder with its demo model. Once end to end in a real terminal:
//! tmux runs the real binary, keys go in with `send-keys`, and what is on the screen comes back
//! with `capture-pane`. Otherwise in-process: the same chat, its keys fed as key events and its
//! frames drawn into ratatui's `TestBackend`, over real HTTP; a turn's connection cut by a real
//! proxy is rejoined. Also `ponder ask`, as a script would run it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::process::Process;
use common::TestApp;
use ponder::domain::{ChatRequest, TurnEvent};
use ponder::terminal::app::Chat;
use ponder::terminal::client::Server;
use ponder::terminal::follow::{self, Progress, Source};
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

struct Tmux {
    socket: String,
    dir: std::path::PathBuf,
    config: std::path::PathBuf,
}

impl Tmux {
    /// A tmux server of its own, running `ponder chat --server url` in a 100×30 pane, with the
    /// client's config file in a directory of its own.
    fn start(name: &str, url: &str) -> Tmux {
        let socket = format!("ponder-{}-{name}", std::process::id());
        let dir = std::env::temp_dir().join(&socket);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let t = Tmux {
            socket,
            config: dir.join("chat.json"),
            dir,
        };
        let command = format!(
            "env PONDER_CHAT_CONFIG={} TERM=xterm-256color {} chat --server {url}",
            t.config().display(),
            env!("CARGO_BIN_EXE_ponder"),
        );
        t.run(&command);
        t
    }

    fn run(&self, command: &str) {
        let t = self;
        t.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "30",
            "-s",
            "t",
        ]);
        t.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        t.tmux(&["set-option", "-g", "set-clipboard", "on"]);
        t.tmux(&["set-option", "-g", "allow-rename", "on"]);
        t.tmux(&["select-pane", "-t", "t", "-T", "before-ponder"]);
        t.tmux(&["respawn-pane", "-k", "-t", "t", command]);
        t.wait_for("Ctrl-C twice", Duration::from_secs(20));
    }

    fn config(&self) -> std::path::PathBuf {
        self.config.clone()
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs (the Makefile installs Debian's tmux)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn type_line(&self, text: &str) {
        self.keys(&["-l", text]);
        self.keys(&["Enter"]);
    }

    fn wait_until(&self, what: &str, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
        let until = Instant::now() + limit;
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < until,
                "waited {limit:?} for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, needle: &str, limit: Duration) -> String {
        self.wait_until(needle, limit, |s| s.contains(needle))
    }

    fn format(&self, f: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", "t", f])
            .trim()
            .to_string()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn server(delay_ms: &str) -> (Process, String) {
    let demo = format!("127.0.0.1:{}", free_port());
    let process = Process::start(&[
        ("PONDER_DEMO_DELAY_MS", delay_ms),
        ("PONDER_DEMO_ADDR", &demo),
    ]);
    (process, format!("http://{demo}"))
}

/// The line under the live block's header.
fn live_line(screen: &str) -> Option<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines.iter().rposition(|l| l.contains("▸ Thinking… ("))?;
    lines.get(at + 1).map(|l| l.trim().to_string())
}

#[test]
fn in_a_real_terminal_the_turn_streams_live_hostile_output_stays_inert_and_ctrl_c_twice_quits() {
    let (process, _) = server("25");
    let t = Tmux::start("live", &process.url(""));
    t.type_line("[long-think] prove it");
    let first = t.wait_for("▸ Thinking… (", Duration::from_secs(20));
    let seen = live_line(&first).expect("a live line under the header");
    // The live line changes as reasoning arrives, and the clock counts.
    t.wait_until("the live line to change", Duration::from_secs(20), |s| {
        live_line(s).is_some_and(|l| !l.is_empty() && l != seen)
    });
    t.wait_for("▸ Thinking… (1s)", Duration::from_secs(20));
    let done = t.wait_for("▪ Thought for", Duration::from_secs(60));
    assert!(!done.contains("▸ Thinking…"), "{done}");
    t.wait_for("Ctrl-C twice", Duration::from_secs(20));
    assert!(!done.contains("Step 12: I check"), "{done}");
    // Detail expands the block, and the mode is written to the config file the variable names.
    t.keys(&["Tab"]);
    let detail = t.wait_for("detail mode", Duration::from_secs(5));
    assert!(
        detail.contains("Step 12: I check"),
        "the reasoning is expanded:\n{detail}"
    );
    let kept = std::fs::read_to_string(t.config()).expect("the mode is kept in the config file");
    assert!(kept.contains("\"detail\""), "{kept}");

    // Escapes in the model's output never reach the terminal.
    t.keys(&["C-n"]);
    t.type_line("[tty] try to break out");
    let screen = t.wait_for("end of the hostile answer.", Duration::from_secs(60));
    assert!(
        screen.contains("› [tty] try to break out"),
        "nothing cleared the screen or moved the cursor:\n{screen}"
    );
    assert!(screen.contains("Terminal-safe answer:"), "{screen}");
    assert!(
        !screen.contains("pwned"),
        "no escape's payload shows as text either:\n{screen}"
    );
    assert_eq!(
        t.format("#{pane_title}"),
        "before-ponder",
        "the title is untouched"
    );
    assert_eq!(
        t.tmux(&["list-buffers"]).trim(),
        "",
        "no OSC 52 clipboard write reached the terminal"
    );

    // Ctrl-C twice quits, and the terminal is given back: no alternate screen, the pane's
    // program has exited.
    t.keys(&["C-c"]);
    t.wait_for("Ctrl-C again quits", Duration::from_secs(5));
    t.keys(&["C-c"]);
    // tmux marks the pane dead when its terminal closes and learns the exit status when it
    // reaps the process, which it sometimes does only many seconds later (seen: a zombie left
    // for over 10 s); until then the kernel keeps the zombie's status in /proc.
    let until = Instant::now() + Duration::from_secs(15);
    let (status, signal) = loop {
        if let Some(ended) = pane_exit(&t) {
            break ended;
        }
        assert!(
            Instant::now() < until,
            "ponder chat did not quit:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(signal, 0, "not killed by a signal");
    assert_eq!(status, 0);
    assert_eq!(
        t.format("#{alternate_on}"),
        "0",
        "the alternate screen is left"
    );
}

/// How the pane's program ended, `(exit status, signal)`, once it has: from tmux when tmux has
/// reaped it, else from the zombie's `/proc/<pid>/stat` (its 52nd field holds the status as
/// `waitpid` reports it).
fn pane_exit(t: &Tmux) -> Option<(i32, i32)> {
    if t.format("#{pane_dead}") != "1" {
        return None;
    }
    let (status, signal) = (
        t.format("#{pane_dead_status}"),
        t.format("#{pane_dead_signal}"),
    );
    if !status.is_empty() || !signal.is_empty() {
        return Some((status.parse().unwrap_or(-1), signal.parse().unwrap_or(0)));
    }
    let pid = t.format("#{pane_pid}");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    if fields.first() != Some(&"Z") {
        return None;
    }
    let code: i32 = fields.get(49)?.parse().ok()?;
    Some(((code >> 8) & 0xff, code & 0x7f))
}

#[test]
fn ponder_ask_streams_the_answer_to_stdout_and_the_thinking_to_stderr() {
    let (process, _) = server("1");
    let ask = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ponder"))
            .arg("ask")
            .args(args)
            .args(["--server", &process.url("")])
            .env_remove("PONDER_SERVER")
            .output()
            .expect("ponder ask runs")
    };
    let out = ask(&["why is the sky blue?"]);
    assert!(out.status.success(), "{out:?}");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stderr.contains("Thinking…") && stderr.contains("Thought"),
        "{stderr}"
    );
    assert!(!stdout.contains("Thinking…"), "{stdout}");
    assert!(!stdout.trim().is_empty());
    assert!(
        stderr.contains("12 tokens in · ") && stderr.contains(" thinking)"),
        "the usage line after the answer: {stderr}"
    );

    let off = ask(&["--thinking=off", "[tty] escape"]);
    assert!(off.status.success());
    assert!(
        off.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&off.stderr)
    );
    assert!(
        !off.stdout.iter().any(|b| *b == 0x1b || *b == 0x07),
        "no escape byte reaches stdout"
    );

    let failed = ask(&["[error] break"]);
    assert_eq!(
        failed.status.code(),
        Some(1),
        "an error event exits non-zero"
    );
    assert!(String::from_utf8_lossy(&failed.stderr).contains("overloaded"));

    let tools = ask(&["[tools] when?"]);
    assert!(tools.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&tools.stdout),
        String::from_utf8_lossy(&tools.stderr),
    );
    assert!(
        stderr.contains("⚙ Web search · Rust 2024 edition release — Done"),
        "{stderr}"
    );
    assert!(stdout.contains("20 February 2025.[^1]"), "{stdout}");
    assert!(
        stdout.contains("[^1]: [Announcing Rust 1.85.0 and Rust 2024](<https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/>)"),
        "the sources follow the answer as footnotes: {stdout}"
    );

    let json = ask(&["--json", "--thinking=off", "hello"]);
    assert!(json.status.success());
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect();
    assert_eq!(
        events.last().map(|e| e["type"].clone()),
        Some("done".into())
    );
    assert!(
        events.iter().any(|e| e["type"] == "thinking"),
        "--json prints every event"
    );
}

/// `ponder ask --models`: one question to three of the demo's models at once (the deep one
/// always thinks, the mini one never), each answer with its thinking line and its figures, in
/// the order named; `--json` tags each event with its model; one model's failure fails the run.
#[test]
fn ponder_ask_compares_models_side_by_side_with_their_figures() {
    let (process, _) = server("1");
    let ask = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ponder"))
            .arg("ask")
            .args(args)
            .args(["--server", &process.url("")])
            .env_remove("PONDER_SERVER")
            .output()
            .expect("ponder ask runs")
    };
    let out = ask(&[
        "--models",
        "ponder-demo-deep,ponder-demo,ponder-demo-mini",
        "why is the sky blue?",
    ]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let sections: Vec<&str> = stdout.split("━━ ").skip(1).collect();
    assert_eq!(sections.len(), 3, "{stdout}");
    for (section, model) in sections.iter().zip([
        "ponder-demo-deep ━━",
        "ponder-demo ━━",
        "ponder-demo-mini ━━",
    ]) {
        assert!(section.starts_with(model), "{section}");
        assert!(section.contains("first answer token at "), "{section}");
        assert!(section.contains("s in all"), "{section}");
    }
    assert!(
        sections[0].contains("\nThought") && sections[0].contains("reasoning tokens"),
        "{}",
        sections[0]
    );
    assert!(sections[2].contains("no thinking"), "{}", sections[2]);
    assert!(!sections[2].contains("\nThought"), "{}", sections[2]);

    let json = ask(&[
        "--json",
        "--models",
        "ponder-demo,ponder-demo-mini",
        "hello",
    ]);
    assert!(json.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON line per event"))
        .collect();
    for model in ["ponder-demo", "ponder-demo-mini"] {
        let ends = lines
            .iter()
            .filter(|l| l["model"] == model && l["event"]["type"] == "done")
            .count();
        assert_eq!(ends, 1, "{model}: {lines:?}");
    }

    let unknown = ask(&["--models", "ponder-demo,no-such-model", "hello"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no-such-model"),
        "{unknown:?}"
    );
    let one = ask(&["--models", "ponder-demo", "hello"]);
    assert_eq!(one.status.code(), Some(2), "{one:?}");
}

#[test]
fn ponder_ask_with_no_server_starts_the_built_in_one() {
    let data = std::env::temp_dir().join(format!("ponder-ask-data-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_ponder"))
        .args(["ask", "--thinking=off", "hello there"])
        .env_remove("PONDER_SERVER")
        .env_remove("PONDER_UPSTREAM_URL")
        .env("XDG_DATA_HOME", &data)
        .env("PONDER_DEMO_DELAY_MS", "1")
        .output()
        .expect("ponder ask runs");
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Here is what I found"),
        "{out:?}"
    );
    let _ = std::fs::remove_dir_all(data);
}

/// `ponder chat`'s chat in-process on a 100×30 `TestBackend`, against a real server.
struct Screen {
    chat: Chat,
    terminal: Terminal<TestBackend>,
}

impl Screen {
    fn on(app: &TestApp) -> Screen {
        let server = Server::new(&app.url(""), None).expect("a client");
        Screen {
            chat: Chat::new(server, true, None, ""),
            terminal: Terminal::new(TestBackend::new(100, 30)).expect("a test terminal"),
        }
    }

    fn text(&mut self) -> String {
        self.terminal.draw(|f| self.chat.draw(f)).expect("drawn");
        let buffer = self.terminal.backend().buffer();
        (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    async fn key(&mut self, key: KeyEvent) {
        let effects = self.chat.on_key(key);
        self.chat.apply(effects).await;
    }

    async fn ctrl(&mut self, c: char) {
        self.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
            .await;
    }

    async fn type_line(&mut self, text: &str) {
        for c in text.chars() {
            self.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
                .await;
        }
        self.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
            .await;
    }

    /// Follows the running turn, redrawing as the shell does (on each progress and on a tick,
    /// for the clock), until the screen satisfies `ok`.
    async fn wait_until(
        &mut self,
        what: &str,
        limit: Duration,
        ok: impl Fn(&str) -> bool,
    ) -> String {
        let until = Instant::now() + limit;
        loop {
            let screen = self.text();
            if ok(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < until,
                "waited {limit:?} for {what}; the screen:\n{screen}"
            );
            let tick = Duration::from_millis(100);
            if let Ok(Some(progress)) = tokio::time::timeout(tick, self.chat.next_progress()).await
            {
                let effects = self.chat.on_progress(progress);
                self.chat.apply(effects).await;
            }
        }
    }

    async fn wait_for(&mut self, needle: &str, limit: Duration) -> String {
        self.wait_until(needle, limit, |s| s.contains(needle)).await
    }

    /// Waits for the turn to end: the input box no longer says it is thinking.
    async fn wait_idle(&mut self, limit: Duration) -> String {
        self.wait_until("the turn to end", limit, |s| s.contains("┌ message "))
            .await
    }
}

async fn demo_stats(app: &TestApp) -> serde_json::Value {
    let base = app.state.upstream_base.clone();
    let root = base.trim_end_matches('/').trim_end_matches("/v1");
    reqwest::get(format!("{root}/demo/stats"))
        .await
        .expect("stats")
        .json()
        .await
        .expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_stops_the_turn_on_the_server_and_hidden_reasoning_and_a_drop_are_shown() {
    let app = TestApp::spawn(&[("PONDER_DEMO_DELAY_MS", "20")]).await;
    let mut s = Screen::on(&app);
    s.type_line("[long-think] stop me").await;
    s.wait_for("▸ Thinking… (", Duration::from_secs(20)).await;
    s.key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)).await;
    let stopped = s.wait_for("■ stopped", Duration::from_secs(5)).await;
    assert!(
        stopped.contains("Thinking stopped") && stopped.contains("(incomplete)"),
        "the interrupted block is frozen and marked:\n{stopped}"
    );
    let until = Instant::now() + Duration::from_secs(5);
    while demo_stats(&app).await["disconnected"].as_u64().unwrap_or(0) < 1 {
        assert!(
            Instant::now() < until,
            "the demo model never saw the stop: {}",
            demo_stats(&app).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Reasoning the provider encrypted still shows the clock, says so, and counts bytes.
    s.ctrl('n').await;
    s.type_line("[redacted] keep it secret").await;
    let hidden = s
        .wait_until("the redacted block", Duration::from_secs(20), |s| {
            s.contains("redacted · ") && s.contains("received")
        })
        .await;
    assert!(hidden.contains("▸ Thinking… ("), "{hidden}");
    s.wait_for("▪ Thought for", Duration::from_secs(20)).await;

    // A stream the model drops mid-answer shows the browser's message and the retry key.
    s.ctrl('n').await;
    s.type_line("[drop] cut me off").await;
    s.wait_for("Ctrl-R retries", Duration::from_secs(30)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_chats_open_from_the_picker_continue_on_the_server_and_a_streaming_one_is_followed_live(
) {
    let app = TestApp::spawn(&[("PONDER_DEMO_DELAY_MS", "5")]).await;
    let mut s = Screen::on(&app);
    s.type_line("[two-blocks] remember this").await;
    s.wait_for("Verified: the answer stands.", Duration::from_secs(30))
        .await;
    s.wait_idle(Duration::from_secs(10)).await;
    s.ctrl('n').await;
    assert!(!s.text().contains("remember this"));

    // The picker lists the stored chats; Enter replays one, each block finished.
    s.ctrl('p').await;
    let picker = s.text();
    assert!(picker.contains("chats · Enter: open"), "{picker}");
    assert!(picker.contains("› [two-blocks] remember this"), "{picker}");
    s.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
        .await;
    let replayed = s.text();
    assert!(
        replayed.contains("“[two-blocks] remember this”"),
        "{replayed}"
    );
    assert!(
        replayed.contains("Verified: the answer stands."),
        "{replayed}"
    );
    assert_eq!(replayed.matches("▪ Thought").count(), 2, "{replayed}");
    assert!(!replayed.contains("▸ Thinking"), "{replayed}");

    // The next question continues that conversation on the server.
    s.type_line("and one more").await;
    s.wait_until("the follow-up answered", Duration::from_secs(30), |s| {
        s.matches("▪ Thought").count() >= 3 && s.contains("┌ message ")
    })
    .await;
    let direct = Server::new(&app.url(""), None).expect("a client");
    let list = direct.conversations().await.expect("the list");
    let stored = direct
        .conversation(&list[0].id, 10)
        .await
        .expect("the chat");
    assert_eq!(list.len(), 1);
    assert_eq!(stored.messages.len(), 4);

    // A turn started elsewhere (a browser, say) whose page went away: opening its chat follows
    // it live, its clock counting from the turn's start, not a stored copy marked interrupted.
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let request = ChatRequest {
        content: Some("[long-think] follow me from the terminal".into()),
        ..ChatRequest::stateless(Vec::new())
    };
    let elsewhere = tokio::spawn(async move {
        follow::follow(
            &direct,
            Source::Send(Box::new(request)),
            Duration::from_secs(30),
            tx,
        )
        .await
    });
    let conversation = loop {
        match progress.recv().await.expect("the turn runs") {
            Progress::Events(events) => {
                if let Some(id) = events.iter().find_map(|e| match e {
                    TurnEvent::Turn { conversation, .. } => Some(conversation.clone()),
                    _ => None,
                }) {
                    break id;
                }
            }
            Progress::Bytes(_) => {}
            other => panic!("{other:?}"),
        }
    };
    elsewhere.abort();
    let mut joined = Screen::on(&app);
    let effects = vec![ponder::terminal::app::Effect::Open(conversation)];
    joined.chat.apply(effects).await;
    let live = joined
        .wait_for("▸ Thinking… (", Duration::from_secs(10))
        .await;
    assert!(!live.contains("interrupted"), "{live}");
    let done = joined
        .wait_for(
            "Let me know if you want more detail.",
            Duration::from_secs(30),
        )
        .await;
    assert!(
        done.contains("▪ Thought for") && !done.contains("▸ Thinking"),
        "{done}"
    );
}

/// A TCP proxy to `to` that cuts its first connection once `cut` bytes of the server's answer
/// went through, as a proxy's timeout or a reset does mid-stream; later connections pass.
async fn cutting_proxy(to: std::net::SocketAddr, cut: u64) -> std::net::SocketAddr {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut first = true;
        while let Ok((client, _)) = listener.accept().await {
            let limit = std::mem::take(&mut first).then_some(cut);
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_server, mut to_server) = server.into_split();
                let up = tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
                });
                let _ = match limit {
                    Some(n) => {
                        tokio::io::copy(&mut (&mut from_server).take(n), &mut to_client).await
                    }
                    None => tokio::io::copy(&mut from_server, &mut to_client).await,
                };
                up.abort();
            });
        }
    });
    addr
}

/// Follows a turn to its end, returning everything it reported.
async fn followed(server: &Server, source: Source) -> Vec<Progress> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    follow::follow(server, source, Duration::from_secs(30), tx).await;
    let mut all = Vec::new();
    while let Ok(p) = rx.try_recv() {
        all.push(p);
    }
    all
}

fn events_of(progress: &[Progress]) -> Vec<TurnEvent> {
    progress
        .iter()
        .filter_map(|p| match p {
            Progress::Events(events) => Some(events.clone()),
            _ => None,
        })
        .flatten()
        .filter(|e| !matches!(e, TurnEvent::Clock { .. }))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_connection_breaks_is_rejoined_after_its_last_event_and_arrives_whole() {
    let app = TestApp::spawn(&[("PONDER_DEMO_DELAY_MS", "5")]).await;
    let proxy = cutting_proxy(app.addr, 6_000).await;
    let through_proxy = Server::new(&format!("http://{proxy}"), None).expect("a client");
    let request = ChatRequest {
        content: Some("[long-think] cut me off and come back".into()),
        ..ChatRequest::stateless(Vec::new())
    };
    let progress = followed(&through_proxy, Source::Send(Box::new(request))).await;
    let lost = progress.iter().position(|p| *p == Progress::Lost);
    let back = progress.iter().position(|p| *p == Progress::Back);
    assert!(
        matches!((lost, back), (Some(l), Some(b)) if l < b),
        "the connection broke mid-turn and came back: {:?}",
        progress
            .iter()
            .filter(|p| !matches!(p, Progress::Events(_) | Progress::Bytes(_)))
            .collect::<Vec<_>>()
    );
    let got = events_of(&progress);
    assert!(
        matches!(got.last(), Some(TurnEvent::Done { .. })),
        "{:?}",
        got.last()
    );

    // The whole turn as the server keeps it, from its first event, on a connection of its own.
    let turn = got
        .iter()
        .find_map(|e| match e {
            TurnEvent::Started { turn } => Some(turn.clone()),
            _ => None,
        })
        .expect("the turn's id");
    let direct = Server::new(&app.url(""), None).expect("a client");
    let whole = events_of(&followed(&direct, Source::Join(turn)).await);
    assert_eq!(got.len(), whole.len(), "nothing missed or doubled");
    assert_eq!(got, whole);
}

#[tokio::test]
async fn attach_in_the_chat_sends_the_file_and_shows_how_it_went_and_ask_takes_files() {
    let app = TestApp::spawn(&[("PONDER_DEMO_DELAY_MS", "1")]).await;
    let dir = std::env::temp_dir().join(format!("ponder-attach-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let notes = dir.join("meeting-notes.md");
    std::fs::write(&notes, "Agenda: ship the attachments today").expect("file");
    std::fs::write(dir.join("page.png"), "<html>not an image</html>").expect("file");

    let mut s = Screen::on(&app);
    // Tab completes the path; Enter uploads it; the status line lists it.
    for c in format!("/attach {}/meet", dir.display()).chars() {
        s.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
            .await;
    }
    s.key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)).await;
    s.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))
        .await;
    let shown = s.text();
    assert!(
        shown.contains("attached meeting-notes.md · 34 bytes · Text"),
        "{shown}"
    );
    // A file that is not what its name says is refused with the server's reason.
    s.type_line(&format!("/attach {}", dir.join("page.png").display()))
        .await;
    let shown = s.text();
    assert!(shown.contains("not attached: page.png"), "{shown}");

    s.type_line("What is on it?").await;
    s.wait_for("I received 1 file(s)", Duration::from_secs(30))
        .await;
    s.wait_idle(Duration::from_secs(10)).await;
    let shown = s.text();
    assert!(
        shown.contains(r#"text "meeting-notes.md": "Agenda: ship the attachments today""#),
        "{shown}"
    );
    assert!(
        shown.contains("+ meeting-notes.md · 34 bytes · Text · sent as text"),
        "{shown}"
    );
    assert!(
        !shown.contains("files: "),
        "nothing waits any more: {shown}"
    );

    // ponder ask --file: the file goes with the question; the chip is on stderr.
    let url = app.url("");
    let ask = move |args: Vec<String>| {
        let url = url.clone();
        async move {
            let out = tokio::task::spawn_blocking(move || {
                Command::new(env!("CARGO_BIN_EXE_ponder"))
                    .args(["ask", "--thinking=off", "--server", &url])
                    .args(args)
                    .env_remove("PONDER_SERVER")
                    .output()
                    .expect("ponder ask runs")
            })
            .await
            .expect("joined");
            let said = (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
            assert!(out.status.success(), "{said:?}");
            said
        }
    };
    let file = |p: &std::path::Path| p.display().to_string();
    let (stdout, stderr) = ask(vec!["--file".into(), file(&notes), "summarise".into()]).await;
    assert!(
        stderr.contains("+ meeting-notes.md · 34 bytes · Text"),
        "{stderr}"
    );
    assert!(stdout.contains("I received 1 file(s)"), "{stdout}");

    // --as text: the demo model reads documents, yet this PDF goes as the text read from it.
    let paper = dir.join("paper.pdf");
    std::fs::write(&paper, common::pdf(&["Findings of the review"])).expect("file");
    let (stdout, stderr) = ask(vec![
        "--as".into(),
        "text".into(),
        "--file".into(),
        file(&paper),
        "what does it find?".into(),
    ])
    .await;
    assert!(stderr.contains("paper.pdf · "), "{stderr}");
    assert!(stderr.contains("→ As its text"), "{stderr}");
    assert!(
        stdout.contains(r#"text "paper.pdf": "Findings of the review"#),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).expect("clean");
}
