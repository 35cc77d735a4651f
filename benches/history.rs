//! `make bench-history`, part one: opening a big conversation. A conversation of 1,000 messages
//! holding 36 MB of reasoning is written to a fresh database (SQLite, and PostgreSQL when
//! `--database postgres://…` is given), the release server is started on it, and the request
//! that paints the conversation (`conversations/get`: messages and block headers, no reasoning
//! text) is timed 200 times, with its size, whole and as the last page of 40 messages the page
//! asks for. Opening one block (`blocks/text`) is timed too.
//! Part two (persisted streaming turns) is the load harness with `--stored`.
//! `--only indexing`: what a turn's end costs in search indexing on an index of a million
//! entries (benches/history/indexing.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ponder::domain::history::{Import, ImportBlock, ImportMessage, ImportVersion, VersionStatus};
use ponder::domain::{Role, ThinkingKind};
use ponder::server::store::Store;

#[path = "history/indexing.rs"]
mod indexing;

type Res<T> = Result<T, String>;

const MESSAGES: usize = 1000;
const REASONING_BYTES: usize = 36_000_000;
const OPENS: usize = 200;
/// The page the browser asks for when it opens a conversation.
const PAGE: usize = 40;

fn reasoning(i: usize, len: usize) -> String {
    let words = [
        "considering",
        "the",
        "constraint",
        "again",
        "so",
        "maybe",
        "a",
        "cleaner",
        "route",
        "exists",
        "check",
        "edge",
        "cases",
        "first",
        "then",
        "answer",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut k = i;
    while out.len() < len {
        out.push_str(words[k % words.len()]);
        out.push(' ');
        k = k.wrapping_mul(31).wrapping_add(7);
    }
    out.truncate(len);
    out
}

fn big_conversation() -> Import {
    let pairs = MESSAGES / 2;
    let per_block = REASONING_BYTES / pairs;
    let mut messages = Vec::with_capacity(MESSAGES);
    for i in 0..pairs {
        let at = 1_764_489_600_000 + (i as i64) * 60_000;
        messages.push(ImportMessage {
            role: Role::User,
            created_at: at,
            active: 0,
            versions: vec![ImportVersion {
                content: format!("Question {i}: how does step {i} follow from the last one?"),
                status: VersionStatus::Done,
                error: None,
                created_at: at,
                blocks: Vec::new(),
                tools: Vec::new(),
                sources: Vec::new(),
                files: Vec::new(),
                usage: None,
            }],
        });
        messages.push(ImportMessage {
            role: Role::Assistant,
            created_at: at + 1,
            active: 0,
            versions: vec![ImportVersion {
                content: format!(
                    "Step {i} follows because the invariant holds before and after it. {}",
                    "The argument is the same as before, with the new bound. ".repeat(4)
                ),
                status: VersionStatus::Done,
                error: None,
                created_at: at + 1,
                blocks: vec![ImportBlock {
                    kind: ThinkingKind::Raw,
                    text: reasoning(i, per_block),
                    duration_ms: Some(12_000),
                    interrupted: false,
                }],
                tools: Vec::new(),
                sources: Vec::new(),
                files: Vec::new(),
                usage: None,
            }],
        });
    }
    Import {
        instructions: None,
        key: "bench-36mb".into(),
        title: "A long proof".into(),
        created_at: 1_764_489_600_000,
        messages,
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn run(url: &str, engine: &str) -> Res<String> {
    let store = Store::open(url).await.map_err(|e| e.to_string())?;
    let who = store
        .identity_for_name("local", true)
        .await
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let conversation = big_conversation();
    store
        .scoped(&who)
        .import_conversation(None, &conversation)
        .await
        .map_err(|e| e.to_string())?;
    let write_s = started.elapsed().as_secs_f64();
    drop(store);

    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var("PONDER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/ponder"));
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port())
        .parse()
        .map_err(|e| format!("{e}"))?;
    let _server = Child(
        Command::new(&bin)
            .env("LEPTOS_SITE_ADDR", addr.to_string())
            .env("LEPTOS_SITE_ROOT", root.join("target/site"))
            .env("PONDER_DATABASE_URL", url)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e} (build it with `make server`)", bin.display()))?,
    );
    let http = reqwest::Client::new();
    let base = format!("http://{addr}/api");
    let until = Instant::now() + Duration::from_secs(20);
    let list = loop {
        if let Ok(r) = http
            .post(format!("{base}/conversations/list"))
            .json(&serde_json::json!({}))
            .send()
            .await
        {
            if r.status().is_success() {
                break r
                    .json::<serde_json::Value>()
                    .await
                    .map_err(|e| e.to_string())?;
            }
        }
        if Instant::now() > until {
            return Err("the server did not answer within 20 s".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let id = list[0]["id"].as_str().ok_or("no conversation")?.to_string();

    let (times, bytes, whole) = opens(&http, &base, serde_json::json!({"id": id})).await?;
    let messages = whole["messages"].as_array().ok_or("no messages")?;
    if messages.len() != MESSAGES {
        return Err(format!("{} messages, not {MESSAGES}", messages.len()));
    }
    let last_block = messages[MESSAGES - 1]["versions"][0]["blocks"][0]["id"]
        .as_str()
        .ok_or("no block")?
        .to_string();
    let page = serde_json::json!({"id": id, "page": {"last": PAGE}});
    let (page_times, page_bytes, last) = opens(&http, &base, page).await?;
    let shown = last["messages"].as_array().map_or(0, Vec::len);
    if shown != PAGE || last["first"] != MESSAGES - PAGE {
        return Err(format!(
            "the last page held {shown} messages from {}",
            last["first"]
        ));
    }
    let (block_times, block_bytes, _) = timed(
        &http,
        &format!("{base}/blocks/text"),
        serde_json::json!({"id": last_block}),
        50,
    )
    .await?;
    Ok(format!(
        "| {engine} | {write_s:.1} s | {:.1} ms | {:.1} ms | {:.1} ms | {:.0} KiB | {:.1} / {:.1} ms | {:.1} KiB | {:.1} ms | {:.0} KiB |",
        percentile(&times, 50.0),
        percentile(&times, 95.0),
        percentile(&times, 100.0),
        bytes as f64 / 1024.0,
        percentile(&page_times, 50.0),
        percentile(&page_times, 95.0),
        page_bytes as f64 / 1024.0,
        percentile(&block_times, 95.0),
        block_bytes as f64 / 1024.0,
    ))
}

/// `conversations/get` with `body`, `OPENS` times.
async fn opens(
    http: &reqwest::Client,
    base: &str,
    body: serde_json::Value,
) -> Res<(Vec<f64>, usize, serde_json::Value)> {
    timed(http, &format!("{base}/conversations/get"), body, OPENS).await
}

/// `url` posted `body` `runs` times: the sorted times (ms), the size of the answer and the
/// answer itself.
async fn timed(
    http: &reqwest::Client,
    url: &str,
    body: serde_json::Value,
    runs: usize,
) -> Res<(Vec<f64>, usize, serde_json::Value)> {
    let mut times = Vec::with_capacity(runs);
    let mut last = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let response = http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .bytes()
            .await
            .map_err(|e| e.to_string())?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        last = response.to_vec();
    }
    times.sort_by(f64::total_cmp);
    let value = serde_json::from_slice(&last).map_err(|e| e.to_string())?;
    Ok((times, last.len(), value))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let database = args
        .iter()
        .position(|a| a == "--database")
        .and_then(|i| args.get(i + 1).cloned());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bench history: {e}");
            std::process::exit(1);
        }
    };
    // PONDER_BENCH_KEEP: keep the SQLite database there, for the browser's half of the bench.
    let keep = std::env::var("PONDER_BENCH_KEEP").ok().map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target/bench")
            .join(format!("history-{}", std::process::id()))
    });
    let _ = std::fs::remove_dir_all(&dir);
    let mut runs = vec![(
        format!("sqlite://{}/ponder.db", dir.display()),
        "SQLite".to_string(),
    )];
    if let Some(url) = database {
        runs.push((url, "PostgreSQL".to_string()));
    }
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    if only.as_deref() == Some("indexing") {
        println!("## Search indexing at a turn's end, on an index of a million entries\n");
        println!("| engine | entries | filled by imports in | question stored p50 / p95 | answer's final save p50 / p95 / max | before: one delete by ref_id |");
        println!("|---|---|---|---|---|---|");
        let mut failed = false;
        for (url, engine) in runs {
            match runtime.block_on(indexing::run(&url, &engine)) {
                Ok(row) => println!("{row}"),
                Err(e) => {
                    println!("| {engine} | failed: {e} |");
                    failed = true;
                }
            }
        }
        if keep.is_none() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        std::process::exit(i32::from(failed));
    }
    println!(
        "## Opening a conversation of {MESSAGES} messages with {} MB of reasoning ({OPENS} opens)\n",
        REASONING_BYTES / 1_000_000
    );
    println!(
        "| engine | write | whole p50 | whole p95 | whole max | response | last {PAGE} p50 / p95 | response | one block p95 | block |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut failed = false;
    for (url, engine) in runs {
        match runtime.block_on(run(&url, &engine)) {
            Ok(row) => println!("{row}"),
            Err(e) => {
                println!("| {engine} | failed: {e} |");
                failed = true;
            }
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if failed {
        std::process::exit(1);
    }
}
