//! `ponder chat` driven as a person would, in a real terminal: tmux runs the real binary against
//! a real Ponder with its demo model, keys go in with `send-keys`, and what is on the screen comes
//! back with `capture-pane`. Also `ponder ask`, as a script would run it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::process::Process;

struct Tmux {
    socket: String,
    dir: std::path::PathBuf,
    config: std::path::PathBuf,
}

impl Tmux {
    /// A tmux server of its own, running `ponder chat --server url` in a 100×30 pane.
    fn start(name: &str, url: &str) -> Tmux {
        Self::start_args(name, url, "")
    }

    /// Starts `ponder chat` with more arguments, in a session of its own.
    fn start_args(name: &str, url: &str, more: &str) -> Tmux {
        let dir = std::env::temp_dir().join(format!("ponder-{}-{name}", std::process::id()));
        Self::start_with(name, url, dir.join("chat.json"), more)
    }

    /// The same, with the client's config file at `config`.
    fn start_with(name: &str, url: &str, config: std::path::PathBuf, more: &str) -> Tmux {
        let socket = format!("ponder-{}-{name}", std::process::id());
        let dir = std::env::temp_dir().join(&socket);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let t = Tmux {
            socket,
            dir,
            config,
        };
        let command = format!(
            "env PONDER_CHAT_CONFIG={} TERM=xterm-256color {} chat --server {url} {more}",
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

fn stats(demo: &str) -> serde_json::Value {
    let body = Command::new("curl")
        .args(["-s", &format!("{demo}/demo/stats")])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    serde_json::from_str(&body).unwrap_or_default()
}

/// The line under the live block's header.
fn live_line(screen: &str) -> Option<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines.iter().rposition(|l| l.contains("▸ Thinking… ("))?;
    lines.get(at + 1).map(|l| l.trim().to_string())
}

#[test]
fn the_thinking_block_streams_live_then_stays_as_thought_for_and_modes_toggle_and_persist() {
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
    // Overview: the finished block is one line; detail expands its text.
    assert!(!done.contains("Step 12: I check"), "{done}");
    t.keys(&["Tab"]);
    let detail = t.wait_for("detail mode", Duration::from_secs(5));
    assert!(
        detail.contains("Step 12: I check"),
        "the reasoning is expanded:\n{detail}"
    );
    let kept = std::fs::read_to_string(t.config()).expect("the mode is kept in the config file");
    assert!(kept.contains("\"detail\""), "{kept}");
    t.keys(&["Tab"]);
    t.wait_for("overview mode", Duration::from_secs(5));
    assert!(std::fs::read_to_string(t.config())
        .expect("config")
        .contains("\"overview\""));

    // Two blocks in one turn: each its own header, with its own time.
    t.keys(&["C-n"]);
    t.type_line("[two-blocks] check twice");
    let two = t.wait_until("two finished blocks", Duration::from_secs(60), |s| {
        s.matches("▪ Thought").count() == 2 && s.contains("Verified: the answer stands.")
    });
    assert!(two.contains("check twice"), "{two}");

    // The mode chosen is what the next run starts with.
    t.keys(&["Tab"]);
    t.wait_for("detail mode", Duration::from_secs(5));
    let config = std::env::temp_dir().join(format!("ponder-{}-kept.json", std::process::id()));
    std::fs::copy(t.config(), &config).expect("the config file is written");
    drop(t);
    let again = Tmux::start_with("live-again", &process.url(""), config.clone(), "");
    again.wait_for("detail · Tab: overview", Duration::from_secs(10));
    drop(again);
    let _ = std::fs::remove_file(config);
}

#[test]
fn esc_stops_the_turn_the_block_freezes_and_the_model_sees_the_disconnect() {
    let (process, demo) = server("60");
    let t = Tmux::start("stop", &process.url(""));
    t.type_line("[long-think] stop me");
    t.wait_for("▸ Thinking… (", Duration::from_secs(20));
    t.keys(&["Escape"]);
    let stopped = t.wait_for("■ stopped", Duration::from_secs(5));
    assert!(
        stopped.contains("Thinking stopped") && stopped.contains("(incomplete)"),
        "the interrupted block is frozen and marked:\n{stopped}"
    );
    let until = Instant::now() + Duration::from_secs(3);
    while stats(&demo)["disconnected"].as_u64().unwrap_or(0) < 1 {
        assert!(
            Instant::now() < until,
            "the demo model never saw the disconnect: {}",
            stats(&demo)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let frozen = live_header(&stopped);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        live_header(&t.screen()),
        frozen,
        "the time does not move after a stop"
    );

    // Reasoning the provider encrypted (OpenRouter's encrypted details, on this openai server)
    // still shows the clock, says so, and counts bytes arriving.
    t.keys(&["C-n"]);
    t.type_line("[redacted] keep it secret");
    let hidden = t.wait_for("redacted · ", Duration::from_secs(20));
    assert!(
        hidden.contains("▸ Thinking… (") && hidden.contains("received"),
        "{hidden}"
    );
    t.wait_for("▪ Thought for 1.", Duration::from_secs(20));

    // A stream that drops mid-answer shows the browser's message and the retry key.
    t.keys(&["C-n"]);
    t.type_line("[drop] cut me off");
    t.wait_for("Ctrl-R retries", Duration::from_secs(30));

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

fn live_header(screen: &str) -> Option<String> {
    screen
        .lines()
        .find(|l| l.contains("Thinking stopped"))
        .map(str::to_string)
}

#[test]
fn hostile_output_leaves_the_screen_the_title_and_the_clipboard_alone() {
    let (process, _) = server("1");
    let t = Tmux::start("hostile", &process.url(""));
    t.type_line("[tty] try to break out");
    let screen = t.wait_for("end of the hostile answer.", Duration::from_secs(30));
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

#[test]
fn past_conversations_replay_from_the_server_with_each_block_finished() {
    let (process, _) = server("1");
    let t = Tmux::start("replay", &process.url(""));
    t.type_line("[two-blocks] remember this");
    t.wait_for("Verified: the answer stands.", Duration::from_secs(30));
    t.keys(&["C-n"]);
    t.wait_until("a new chat", Duration::from_secs(5), |s| {
        !s.contains("remember this")
    });
    // The picker lists the stored chats; Enter replays one.
    t.keys(&["C-p"]);
    t.wait_for("chats · Enter: open", Duration::from_secs(5));
    t.keys(&["Enter"]);
    let replayed = t.wait_for("Verified: the answer stands.", Duration::from_secs(10));
    assert!(
        replayed.contains("“[two-blocks] remember this”"),
        "{replayed}"
    );
    assert_eq!(replayed.matches("▪ Thought").count(), 2, "{replayed}");
    assert!(
        !replayed.contains("▸ Thinking"),
        "replayed blocks are finished:\n{replayed}"
    );
    drop(t);

    // --conversation opens one directly.
    let list = Command::new("curl")
        .args(["-s", "-H", "content-type: application/json", "-d", "{}"])
        .arg(process.url("/api/conversations/list"))
        .output()
        .expect("curl");
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).expect("the list");
    let id = list[0]["id"].as_str().expect("a stored chat").to_string();
    let direct = Tmux::start_args(
        "replay-direct",
        &process.url(""),
        &format!("--conversation {id}"),
    );
    let shown = direct.wait_for("Verified: the answer stands.", Duration::from_secs(10));
    assert!(shown.contains("› [two-blocks] remember this"), "{shown}");
    // And the next question continues that conversation on the server.
    direct.type_line("and one more");
    direct.wait_until("the follow-up answered", Duration::from_secs(30), |s| {
        s.matches("▪ Thought").count() >= 3 && s.contains("Ctrl-C twice")
    });
    let after = Command::new("curl")
        .args(["-s", "-H", "content-type: application/json", "-d"])
        .arg(format!("{{\"id\":\"{id}\"}}"))
        .arg(process.url("/api/conversations/get"))
        .output()
        .expect("curl");
    let after: serde_json::Value = serde_json::from_slice(&after.stdout).expect("the chat");
    assert_eq!(after["messages"].as_array().map(Vec::len), Some(4));
}

#[test]
fn a_conversation_opened_while_its_answer_streams_is_followed_live() {
    let (process, _) = server("40");
    // A turn started elsewhere (a browser, say) whose page then went away.
    let started = Command::new("curl")
        .args([
            "-s",
            "-N",
            "-m",
            "1",
            "-H",
            "content-type: application/json",
            "-d",
        ])
        .arg(r#"{"content":"[long-think] follow me from the terminal"}"#)
        .arg(process.url("/api/chat"))
        .output()
        .expect("curl");
    let head = String::from_utf8_lossy(&started.stdout);
    let conversation = head
        .split("\"conversation\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the turn says where it is stored")
        .to_string();
    let t = Tmux::start_args(
        "join",
        &process.url(""),
        &format!("--conversation {conversation}"),
    );
    // Live, not a stored copy marked interrupted: the clock counts from the turn's start.
    let live = t.wait_for("▸ Thinking… (", Duration::from_secs(10));
    assert!(!live.contains("interrupted"), "{live}");
    let done = t.wait_for("▪ Thought for", Duration::from_secs(30));
    assert!(!done.contains("▸ Thinking"), "{done}");
    t.wait_for(
        "Let me know if you want more detail.",
        Duration::from_secs(30),
    );
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
