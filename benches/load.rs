//! Load harness: Ponder (release binary) and LiteLLM proxy, side by side, against one fast stub
//! upstream, with loopback clients that check every event.
//!
//! `make bench` runs it; `cargo bench --no-default-features --features ssr --bench load -- --help`
//! lists its options. The stub and the clients live in this process on one thread each, so
//! they share one clock: the stub stamps each chunk just before writing it, the client stamps
//! each read, and the added latency of an event is the difference. Their own CPU is measured
//! per thread and reported beside the server's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hasher};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ponder::domain::{Failure, TurnEvent};
use ponder::wire::sse::{SseDecoder, SseFrame};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::{Handle, Runtime};
use tokio::sync::Semaphore;
use tokio::time::sleep_until;

type Res<T> = Result<T, String>;

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds on the harness's one monotonic clock.
fn now_ns() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

fn at_ns(ns: u64) -> tokio::time::Instant {
    (*EPOCH.get_or_init(Instant::now) + Duration::from_nanos(ns)).into()
}

// ---------------------------------------------------------------------------------------------
// The script: what the stub sends for one stream, and what its client must receive.

const WORDS: [&str; 16] = [
    "the",
    "model",
    "thinks",
    "about",
    "naïve",
    "日本語",
    "answer",
    "🤔",
    "step",
    "check",
    "whether",
    "light",
    "scatters",
    "blue",
    "because",
    "café",
];

/// One stream's script, carried in the prompt so that LiteLLM forwards it unchanged.
#[derive(Clone, Copy, Debug)]
struct Script {
    sid: u64,
    /// Content events: the first half reasoning, the rest answer.
    n: u32,
    /// Events per second; 0 sends as fast as the connection takes them.
    rate: f64,
    /// Silence before the first event, as a reasoning model thinking before its first token.
    first_ms: u64,
    /// Minimum bytes of text per event.
    size: usize,
}

impl Script {
    fn prompt(&self) -> String {
        format!(
            "bench sid={} n={} rate={} first_ms={} size={} end",
            self.sid, self.n, self.rate, self.first_ms, self.size
        )
    }

    fn parse(body: &str) -> Option<Script> {
        let start = body.find("bench sid=")?;
        let rest = &body[start + "bench ".len()..];
        let end = rest.find(" end")?;
        let mut s = Script {
            sid: 0,
            n: 0,
            rate: 0.0,
            first_ms: 0,
            size: 0,
        };
        for kv in rest[..end].split(' ') {
            let (k, v) = kv.split_once('=')?;
            match k {
                "sid" => s.sid = v.parse().ok()?,
                "n" => s.n = v.parse().ok()?,
                "rate" => s.rate = v.parse().ok()?,
                "first_ms" => s.first_ms = v.parse().ok()?,
                "size" => s.size = v.parse().ok()?,
                _ => return None,
            }
        }
        Some(s)
    }

    fn reasoning(&self, i: u32) -> bool {
        i < self.n / 2
    }

    fn text(&self, i: u32) -> String {
        let mut h = self
            .sid
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(i as u64);
        let mut s = format!(" {}{i}", WORDS[(h % 16) as usize]);
        while s.len() < self.size {
            h = h
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.push(' ');
            s.push_str(WORDS[((h >> 33) % 16) as usize]);
        }
        s
    }

    fn hash(&self) -> u64 {
        let mut h = DefaultHasher::new();
        for i in 0..self.n {
            h.write_u8(self.reasoning(i) as u8);
            h.write(self.text(i).as_bytes());
        }
        h.finish()
    }
}

// ---------------------------------------------------------------------------------------------
// The stub upstream: just enough HTTP/1.1 (keep-alive, chunked) for OpenAI Chat Completions.

/// What the stub saw of one stream.
#[derive(Debug, Default, Clone)]
struct StubStream {
    /// When the request arrived.
    req_at: u64,
    /// Send time of each content event, by index.
    sends: Vec<u64>,
    /// The server on the other side closed the connection before the script ended.
    closed_at: Option<u64>,
    bytes: u64,
}

/// The stub's shared state. Finished streams go through a channel, so that the stub's thread
/// never waits on a lock held by the thread that reads the figures.
struct Stub {
    finished: std::sync::mpsc::Sender<(u64, StubStream)>,
    active: AtomicI64,
    connections: AtomicI64,
    bytes: AtomicU64,
}

async fn read_request(sock: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, String)> {
    let mut tmp = [0u8; 8192];
    loop {
        if let Some(end) = find(buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let length = header(&head, "content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0usize);
            if buf.len() >= end + 4 + length {
                let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
                buf.drain(..end + 4 + length);
                let path = head.split(' ').nth(1).unwrap_or("").to_string();
                return Some((path, body));
            }
        }
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn push_chunk(out: &mut Vec<u8>, frame: &str) {
    let _ = write!(Bytes(out), "{:x}\r\n{frame}\r\n", frame.len());
}

/// `fmt::Write` over a byte vector, so frames are formatted without a temporary string.
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

async fn stub_connection(mut sock: TcpStream, stub: Arc<Stub>) {
    let _ = sock.set_nodelay(true);
    stub.connections.fetch_add(1, Ordering::SeqCst);
    let mut buf = Vec::new();
    while let Some((path, body)) = read_request(&mut sock, &mut buf).await {
        let script = Script::parse(&body).filter(|_| path.ends_with("/chat/completions"));
        let Some(script) = script else {
            let reply = "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 35\r\n\r\n{\"error\":{\"message\":\"not a bench\"}}";
            if sock.write_all(reply.as_bytes()).await.is_err() {
                break;
            }
            continue;
        };
        if !stream_script(&mut sock, script, &stub).await {
            break;
        }
    }
    stub.connections.fetch_sub(1, Ordering::SeqCst);
}

/// Streams one script. Returns false when the other side closed the connection.
async fn stream_script(sock: &mut TcpStream, s: Script, stub: &Stub) -> bool {
    stub.active.fetch_add(1, Ordering::SeqCst);
    let mut rec = StubStream {
        req_at: now_ns(),
        sends: Vec::with_capacity(s.n as usize),
        ..Default::default()
    };
    let (mut rd, mut wr) = sock.split();
    let mut probe = [0u8; 256];
    let start = tokio::time::Instant::now() + Duration::from_millis(s.first_ms);
    let mut out = Vec::with_capacity(512);
    let ok = async {
        let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
        wr.write_all(head).await.ok()?;
        for i in 0..s.n {
            let due = if s.rate > 0.0 {
                start + Duration::from_secs_f64(i as f64 / s.rate)
            } else {
                start
            };
            if due > tokio::time::Instant::now() {
                tokio::select! {
                    _ = sleep_until(due) => {}
                    r = rd.read(&mut probe) => { if matches!(r, Ok(0) | Err(_)) { return None } }
                }
            }
            let sent = now_ns();
            let field = if s.reasoning(i) {
                "reasoning_content"
            } else {
                "content"
            };
            let text = serde_json::to_string(&s.text(i)).ok()?;
            let frame = format!(
                "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"stub\",\"sent_ns\":{sent},\"choices\":[{{\"index\":0,\"delta\":{{\"{field}\":{text}}},\"finish_reason\":null}}]}}\n\n"
            );
            out.clear();
            push_chunk(&mut out, &frame);
            tokio::select! {
                r = wr.write_all(&out) => r.ok()?,
                r = rd.read(&mut probe) => { if matches!(r, Ok(0) | Err(_)) { return None } }
            }
            rec.sends.push(sent);
            rec.bytes += out.len() as u64;
            stub.bytes.fetch_add(out.len() as u64, Ordering::Relaxed);
        }
        out.clear();
        push_chunk(&mut out, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"stub\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
        let usage = format!(
            "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"stub\",\"choices\":[],\"usage\":{{\"prompt_tokens\":12,\"completion_tokens\":{},\"total_tokens\":{}}}}}\n\n",
            s.n,
            s.n + 12
        );
        push_chunk(&mut out, &usage);
        push_chunk(&mut out, "data: [DONE]\n\n");
        out.extend_from_slice(b"0\r\n\r\n");
        wr.write_all(&out).await.ok()?;
        Some(())
    }
    .await
    .is_some();
    if !ok {
        rec.closed_at = Some(now_ns());
    }
    let _ = stub.finished.send((s.sid, rec));
    stub.active.fetch_sub(1, Ordering::SeqCst);
    ok
}

async fn run_stub(listener: TcpListener, stub: Arc<Stub>) {
    while let Ok((sock, _)) = listener.accept().await {
        tokio::spawn(stub_connection(sock, stub.clone()));
    }
}

// ---------------------------------------------------------------------------------------------
// The clients.

/// Where Ponder keeps the turns it serves: stateless (`{"messages": …}`, the client keeps the
/// history), or stored (`{"content": …}`: the server writes each turn as it streams) on SQLite
/// or on PostgreSQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Keep {
    Stateless,
    Sqlite,
    Postgres,
}

/// The stored kind the single-Ponder scenarios (fanout, replicas) use: PostgreSQL when
/// `--database postgres://…` is given.
fn stored_keep() -> Keep {
    match &opts().database {
        Some(url) if url.starts_with("postgres") => Keep::Postgres,
        _ => Keep::Sqlite,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Target {
    Ponder(Keep),
    LiteLlm,
    /// The clients straight on the stub, no proxy between: the harness's own floor, measured
    /// under the same machine conditions.
    Direct,
    /// Debian's nginx as a plain reverse proxy in front of the stub (two workers, no buffering):
    /// what forwarding alone costs on this machine, the floor any proxy stands on.
    Nginx,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Ponder(Keep::Stateless) => "Ponder",
            Target::Ponder(Keep::Sqlite) => "Ponder, stored on SQLite",
            Target::Ponder(Keep::Postgres) => "Ponder, stored on PostgreSQL",
            Target::LiteLlm => "LiteLLM",
            Target::Direct => "no proxy (clients on the stub)",
            Target::Nginx => "nginx (a plain reverse proxy)",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Behaviour {
    Read,
    AbortAfterMs(u64),
    AbortAfterEvents(u32),
    NeverRead(Duration),
}

#[derive(Debug, Default)]
struct ClientResult {
    sid: u64,
    status: u16,
    start: u64,
    first_event: Option<u64>,
    /// (event index, receive time) of each event that matched the script.
    recv: Vec<(u32, u64)>,
    lost: u32,
    duplicated: u32,
    corrupted: u32,
    terminals: u32,
    after_terminal: u32,
    done: bool,
    error: Option<String>,
    hash_ok: bool,
    aborted_at: Option<u64>,
}

struct Check {
    script: Script,
    next: u32,
    hasher: DefaultHasher,
}

impl Check {
    fn matches(&self, j: u32, reasoning: bool, text: &str) -> bool {
        self.script.reasoning(j) == reasoning && self.script.text(j) == text
    }

    fn piece(&mut self, r: &mut ClientResult, reasoning: bool, text: &str, at: u64) {
        if r.terminals > 0 {
            r.after_terminal += 1;
        }
        self.hasher.write_u8(reasoning as u8);
        self.hasher.write(text.as_bytes());
        r.first_event.get_or_insert(at);
        let n = self.script.n;
        if let Some(j) =
            (self.next..n.min(self.next + 64)).find(|&j| self.matches(j, reasoning, text))
        {
            r.lost += j - self.next;
            r.recv.push((j, at));
            self.next = j + 1;
        } else if (self.next.saturating_sub(64)..self.next)
            .any(|j| self.matches(j, reasoning, text))
        {
            r.duplicated += 1;
        } else {
            r.corrupted += 1;
        }
    }
}

/// Incremental HTTP/1.1 response reader: head, then chunked or length-delimited body.
struct Response {
    buf: Vec<u8>,
    head_done: bool,
    chunked: bool,
    remaining: Option<usize>,
    chunk_left: usize,
    body_done: bool,
}

impl Response {
    fn new() -> Self {
        Response {
            buf: Vec::new(),
            head_done: false,
            chunked: false,
            remaining: None,
            chunk_left: 0,
            body_done: false,
        }
    }

    /// Consumes what `buf` holds; body bytes go to `body`. Returns the status once the head ends.
    fn feed(&mut self, body: &mut Vec<u8>) -> Option<u16> {
        let mut status = None;
        if !self.head_done {
            let end = find(&self.buf, b"\r\n\r\n")?;
            let head = String::from_utf8_lossy(&self.buf[..end]).into_owned();
            status = head.split(' ').nth(1).and_then(|s| s.parse().ok());
            self.chunked = header(&head, "transfer-encoding")
                .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
            self.remaining = header(&head, "content-length").and_then(|v| v.parse().ok());
            self.buf.drain(..end + 4);
            self.head_done = true;
        }
        let mut pos = 0;
        if !self.chunked {
            body.extend_from_slice(&self.buf);
            if let Some(rem) = &mut self.remaining {
                *rem = rem.saturating_sub(self.buf.len());
                self.body_done = *rem == 0;
            }
            pos = self.buf.len();
        } else {
            while !self.body_done {
                if self.chunk_left > 0 {
                    let take = self.chunk_left.min(self.buf.len() - pos);
                    if take == 0 {
                        break;
                    }
                    body.extend_from_slice(&self.buf[pos..pos + take]);
                    pos += take;
                    self.chunk_left -= take;
                    continue;
                }
                let Some(eol) = find(&self.buf[pos..], b"\r\n") else {
                    break;
                };
                let line = String::from_utf8_lossy(&self.buf[pos..pos + eol]).into_owned();
                if line.is_empty() {
                    pos += 2;
                    continue;
                }
                let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
                    .unwrap_or(0);
                pos += eol + 2;
                if size == 0 {
                    self.body_done = true;
                } else {
                    self.chunk_left = size;
                }
            }
        }
        self.buf.drain(..pos);
        status
    }
}

#[derive(Clone)]
struct ClientCfg {
    target: Target,
    addr: SocketAddr,
    script: Script,
    behaviour: Behaviour,
    give_up_at: u64,
    key: Arc<str>,
    /// A running turn of Ponder's to join as a viewer (`GET /api/turn/events`) instead of
    /// starting one.
    join: Option<Arc<str>>,
}

async fn client(cfg: ClientCfg) -> ClientResult {
    let mut r = ClientResult {
        sid: cfg.script.sid,
        ..Default::default()
    };
    if let Err(e) = client_inner(&cfg, &mut r).await {
        r.error.get_or_insert(e);
    }
    r
}

async fn client_inner(cfg: &ClientCfg, r: &mut ClientResult) -> Res<()> {
    let mut sock = TcpStream::connect(cfg.addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let _ = sock.set_nodelay(true);
    let content = serde_json::json!([{"role": "user", "content": cfg.script.prompt()}]);
    let (path, body) = match cfg.target {
        Target::Ponder(Keep::Sqlite | Keep::Postgres) => (
            "/api/chat",
            serde_json::json!({"content": cfg.script.prompt()}),
        ),
        Target::Ponder(Keep::Stateless) => ("/api/chat", serde_json::json!({"messages": content})),
        Target::LiteLlm | Target::Direct | Target::Nginx => (
            "/v1/chat/completions",
            serde_json::json!({"model": "stub", "messages": content, "stream": true}),
        ),
    };
    let body = body.to_string();
    // Ponder (no accounts on loopback) takes no key: a bearer it does not know is refused.
    let auth = match cfg.target {
        Target::Ponder(_) => String::new(),
        Target::LiteLlm | Target::Direct | Target::Nginx => {
            format!("authorization: Bearer {}\r\n", cfg.key)
        }
    };
    let request = match &cfg.join {
        Some(turn) => format!(
            "GET /api/turn/events?turn={turn} HTTP/1.1\r\nhost: {}\r\naccept: text/event-stream\r\n\r\n",
            cfg.addr
        ),
        None => format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\naccept: text/event-stream\r\n{auth}content-length: {}\r\n\r\n{body}",
            cfg.addr,
            body.len()
        ),
    };
    r.start = now_ns();
    sock.write_all(request.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    if let Behaviour::NeverRead(hold) = cfg.behaviour {
        tokio::time::sleep(hold).await;
        r.aborted_at = Some(now_ns());
        return Ok(());
    }
    let abort_at = match cfg.behaviour {
        Behaviour::AbortAfterMs(ms) => Some(at_ns(r.start + ms * 1_000_000)),
        _ => None,
    };
    let give_up = at_ns(cfg.give_up_at);
    let mut check = Check {
        script: cfg.script,
        next: 0,
        hasher: DefaultHasher::new(),
    };
    let mut response = Response::new();
    let mut sse = SseDecoder::new();
    let mut frames: Vec<SseFrame> = Vec::new();
    let mut body = Vec::new();
    let mut tmp = vec![0u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            n = sock.read(&mut tmp) => n.map_err(|e| format!("read: {e}"))?,
            _ = sleep_until(abort_at.unwrap_or(give_up)), if abort_at.is_some() => {
                r.aborted_at = Some(now_ns());
                return Ok(());
            }
            _ = sleep_until(give_up) => return Err("gave up waiting".into()),
        };
        let at = now_ns();
        if n == 0 {
            sse.finish(&mut frames);
        } else {
            response.buf.extend_from_slice(&tmp[..n]);
            body.clear();
            if let Some(status) = response.feed(&mut body) {
                r.status = status;
            }
            sse.push(&body, &mut frames)
                .map_err(|e| format!("an SSE line over {} bytes", e.limit))?;
        }
        for frame in frames.drain(..) {
            on_frame(cfg.target, &frame, &mut check, r, at);
        }
        if let Behaviour::AbortAfterEvents(k) = cfg.behaviour {
            if r.recv.len() as u32 >= k {
                r.aborted_at = Some(now_ns());
                return Ok(());
            }
        }
        if n == 0 || response.body_done {
            break;
        }
    }
    if r.status != 200 {
        return Err(format!("HTTP {}", r.status));
    }
    r.lost += cfg.script.n - check.next;
    r.hash_ok = check.hasher.finish() == cfg.script.hash();
    Ok(())
}

fn on_frame(target: Target, frame: &SseFrame, check: &mut Check, r: &mut ClientResult, at: u64) {
    match target {
        Target::Ponder(_) => match serde_json::from_str::<TurnEvent>(&frame.data) {
            Ok(TurnEvent::Thinking { text, .. }) => check.piece(r, true, &text, at),
            Ok(TurnEvent::Delta { text }) => check.piece(r, false, &text, at),
            Ok(TurnEvent::Done { .. }) => {
                r.terminals += 1;
                r.done = true;
            }
            Ok(TurnEvent::Error(Failure { message, .. })) => {
                r.terminals += 1;
                r.error.get_or_insert(message);
            }
            Ok(_) => {}
            Err(_) => r.corrupted += 1,
        },
        Target::LiteLlm | Target::Direct | Target::Nginx => {
            if frame.data.trim() == "[DONE]" {
                r.terminals += 1;
                r.done = true;
                return;
            }
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&frame.data) else {
                r.corrupted += 1;
                return;
            };
            if let Some(e) = v.get("error") {
                r.terminals += 1;
                r.error.get_or_insert(e.to_string());
                return;
            }
            let delta = &v["choices"][0]["delta"];
            for (field, reasoning) in [("reasoning_content", true), ("content", false)] {
                if let Some(text) = delta[field].as_str().filter(|t| !t.is_empty()) {
                    check.piece(r, reasoning, text, at);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Processes and /proc.

struct Server {
    target: Target,
    child: Option<Child>,
    addr: SocketAddr,
    /// What clients send as their bearer token (LiteLLM refuses to run without a master key).
    key: String,
}

impl Server {
    /// The server's process; without one (no proxy), the harness's own.
    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(std::process::id(), Child::id)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            // nginx's master stops its workers on TERM; a KILL would leave them running.
            if self.target == Target::Nginx {
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status();
                let _ = child.wait();
                return;
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

async fn start_ponder(stub: SocketAddr, keep: Keep) -> Res<Server> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = std::env::var("PONDER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/ponder"));
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port())
        .parse()
        .map_err(|e| format!("{e}"))?;
    let log = std::fs::File::create(out_dir().join("ponder.log")).map_err(|e| e.to_string())?;
    let child = Command::new(&bin)
        .env("LEPTOS_SITE_ADDR", addr.to_string())
        .env("LEPTOS_SITE_ROOT", root.join("target/site"))
        .env("LEPTOS_OUTPUT_NAME", "ponder")
        .env("PONDER_UPSTREAM_URL", format!("http://{stub}/v1"))
        .env("PONDER_MODEL", "stub")
        // Every stored turn here starts a conversation: with titles by the model each would
        // send a second request to the stub, which this harness does not count as a turn.
        .env("PONDER_TITLES", "off")
        .env("PONDER_DATABASE_URL", database_url(keep).await?)
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("{}: {e} (build it with `make server`)", bin.display()))?;
    let server = Server {
        target: Target::Ponder(keep),
        child: Some(child),
        addr,
        key: "none".into(),
    };
    wait_ready(&server, "/healthz", Duration::from_secs(20)).await?;
    Ok(server)
}

/// Options that change how every Ponder run of this invocation is set up.
struct Opts {
    /// `--stored`: Ponder's stored turns on SQLite run beside its stateless ones.
    stored: bool,
    /// `--postgres URL` (a server, no database): stored turns on PostgreSQL too, each run on a
    /// database of its own made there.
    postgres: Option<String>,
    /// `--database URL`; else a fresh SQLite file under target/bench for each run.
    database: Option<String>,
    /// `--count N`: streams of the `many` scenario (default 2,000).
    count: Option<usize>,
    /// `--rounds N`: bursts of the `burst` scenario (default 5), the targets taking turns.
    rounds: Option<usize>,
    /// `--rate R`: events a second of each stream in `side` and `many` (default 5; issue #44's
    /// table was measured at 20).
    rate: Option<f64>,
    /// `--events N`: events of each stream in `side` and `many` (default 100; #44's: 200).
    events: Option<u32>,
}

static OPTS: std::sync::OnceLock<Opts> = std::sync::OnceLock::new();

fn opts() -> &'static Opts {
    OPTS.get_or_init(|| Opts {
        stored: false,
        postgres: None,
        database: None,
        count: None,
        rounds: None,
        rate: None,
        events: None,
    })
}

/// The database of one Ponder run: `--database` when given for PostgreSQL (the replicas share
/// it), else a fresh one: a new SQLite file, or a new database on the `--postgres` server.
async fn database_url(keep: Keep) -> Res<String> {
    if keep == Keep::Postgres {
        if let Some(url) = opts()
            .database
            .clone()
            .filter(|u| u.starts_with("postgres"))
        {
            return Ok(url);
        }
        let server = opts()
            .postgres
            .clone()
            .ok_or("stored on PostgreSQL needs --postgres postgres://user@host:port")?;
        let name = format!("bench{}", now_ns());
        sqlx::any::install_default_drivers();
        let mut admin =
            <sqlx::AnyConnection as sqlx::Connection>::connect(&format!("{server}/postgres"))
                .await
                .map_err(|e| format!("--postgres {server}: {e}"))?;
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .await
            .map_err(|e| format!("create database: {e}"))?;
        return Ok(format!("{server}/{name}"));
    }
    let dir = out_dir().join(format!("db-{}", now_ns()));
    Ok(format!("sqlite://{}/ponder.db", dir.display()))
}

/// nginx in the foreground with its own prefix under target/bench, proxying to the stub the way
/// the snippet in `docs/src/operator/reverse-proxy.md` proxies to Ponder (HTTP/1.1, no
/// buffering), keep-alive to the upstream.
async fn start_nginx(stub: SocketAddr) -> Res<Server> {
    let dir = out_dir().join(format!("nginx-{}", now_ns()));
    std::fs::create_dir_all(dir.join("logs")).map_err(|e| e.to_string())?;
    let port = free_port();
    let conf = dir.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "user root;\ndaemon off;\nworker_processes 2;\npid {d}/nginx.pid;\nerror_log {d}/logs/error.log warn;\n\
             worker_rlimit_nofile 20000;\nevents {{ worker_connections 8192; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               upstream stub {{ server {stub}; keepalive 1024; }}\n\
               server {{\n    listen 127.0.0.1:{port} backlog=4096;\n\
                 location / {{\n      proxy_pass http://stub;\n      proxy_http_version 1.1;\n\
                   proxy_set_header Connection \"\";\n      proxy_buffering off;\n    }}\n  }}\n}}\n",
            d = dir.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    let child = Command::new("nginx")
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(&conf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("nginx: {e} (make tools-proxy installs it)"))?;
    let server = Server {
        target: Target::Nginx,
        child: Some(child),
        addr: format!("127.0.0.1:{port}")
            .parse()
            .map_err(|e| format!("{e}"))?,
        key: "none".into(),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(server.addr).await.is_err() {
        if Instant::now() > deadline {
            return Err("nginx did not start listening in 10 s".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(server)
}

fn litellm_bin() -> PathBuf {
    std::env::var("LITELLM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/litellm/bin/litellm")
        })
}

async fn start_litellm(stub: SocketAddr) -> Res<Server> {
    let bin = litellm_bin();
    let port = free_port();
    let config = out_dir().join("litellm.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - model_name: stub\n    litellm_params:\n      model: openai/stub\n      api_base: http://{stub}/v1\n      api_key: sk-stub\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    let log = std::fs::File::create(out_dir().join("litellm.log")).map_err(|e| e.to_string())?;
    let mut h = DefaultHasher::new();
    h.write_u64(now_ns() ^ u64::from(std::process::id()) << 32);
    let key = format!(
        "sk-bench-{:016x}{:016x}",
        h.finish(),
        h.finish().rotate_left(17) ^ 0x5DEECE66D
    );
    let child = Command::new(&bin)
        .args(["--config"])
        .arg(&config)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--num_workers",
            "1",
        ])
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("LITELLM_TELEMETRY_DISABLED", "true")
        .env("LITELLM_MASTER_KEY", &key)
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("{}: {e} (make bench installs it)", bin.display()))?;
    let server = Server {
        target: Target::LiteLlm,
        child: Some(child),
        addr: format!("127.0.0.1:{port}")
            .parse()
            .map_err(|e| format!("{e}"))?,
        key,
    };
    wait_ready(&server, "/health/liveliness", Duration::from_secs(180)).await?;
    Ok(server)
}

async fn wait_ready(server: &Server, path: &str, limit: Duration) -> Res<()> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Ok((200, _)) = http_get(server.addr, path).await {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(format!(
        "{} did not become ready on {} (see target/bench/*.log)",
        server.target.name(),
        server.addr
    ))
}

async fn http_get(addr: SocketAddr, path: &str) -> Res<(u16, String)> {
    let mut sock = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let req = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    sock.write_all(req.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut response = Response::new();
    let mut body = Vec::new();
    let mut status = 0;
    let mut tmp = [0u8; 8192];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), sock.read(&mut tmp))
            .await
            .map_err(|_| "timeout".to_string())?
            .map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        response.buf.extend_from_slice(&tmp[..n]);
        if let Some(s) = response.feed(&mut body) {
            status = s;
        }
        if response.body_done {
            break;
        }
    }
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

async fn active_streams(server: &Server) -> Option<f64> {
    let (_, text) = http_get(server.addr, "/metrics").await.ok()?;
    text.lines().find_map(|l| {
        l.strip_prefix("ponder_active_streams ")?
            .trim()
            .parse()
            .ok()
    })
}

/// The process and its descendants (LiteLLM may fork workers).
fn tree(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                if let Some(ppid) = stat_fields(&stat).get(1).and_then(|v| v.parse().ok()) {
                    parents.push((pid, ppid));
                }
            }
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// Fields of /proc/PID/stat after the command name: [state, ppid, …]; utime is index 11.
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default()
}

/// CPU seconds (user + system) of the process tree.
fn cpu_secs(root: u32) -> f64 {
    tree(root)
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .map(|s| {
            let f = stat_fields(&s);
            let t = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            (t(11) + t(12)) as f64 / 100.0
        })
        .sum()
}

/// Resident memory of the process tree, in KiB.
fn rss_kib(root: u32) -> u64 {
    tree(root)
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .sum()
}

/// Bytes queued in the kernel on the process's TCP sockets (send + receive queues), from
/// /proc/net/tcp: memory a stream holds outside the process's RSS.
fn socket_queues(root: u32) -> u64 {
    let mut inodes = std::collections::HashSet::new();
    for pid in tree(root) {
        if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
            for fd in dir.flatten() {
                if let Ok(link) = std::fs::read_link(fd.path()) {
                    let link = link.to_string_lossy().into_owned();
                    if let Some(inode) = link
                        .strip_prefix("socket:[")
                        .and_then(|l| l.strip_suffix(']'))
                    {
                        inodes.insert(inode.to_string());
                    }
                }
            }
        }
    }
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if !inodes.contains(*f.get(9)?) {
                return None;
            }
            let (tx, rx) = f.get(4)?.split_once(':')?;
            Some(u64::from_str_radix(tx, 16).ok()? + u64::from_str_radix(rx, 16).ok()?)
        })
        .sum()
}

/// False once the process has exited (or is a zombie): figures taken after that mean nothing.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| stat_fields(&s).first().is_some_and(|state| *state != "Z"))
}

fn open_fds(root: u32) -> usize {
    tree(root)
        .iter()
        .filter_map(|pid| std::fs::read_dir(format!("/proc/{pid}/fd")).ok())
        .map(|d| d.count())
        .sum()
}

/// Samples the RSS of a process tree in the background and keeps the peak.
struct RssWatch {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssWatch {
    fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(rss_kib(pid)));
        let (s, p) = (stop.clone(), peak.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss_kib(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        RssWatch {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

/// CPU time of the thread this runs on (the runtimes have one worker each).
fn thread_cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|ns| ns as f64 / 1e9)
        .unwrap_or(0.0)
}

async fn cpu_of(rt: &Handle) -> f64 {
    rt.spawn(async { thread_cpu_secs() }).await.unwrap_or(0.0)
}

// ---------------------------------------------------------------------------------------------
// Scenarios and figures.

struct Bench {
    stub: Arc<Stub>,
    stub_addr: SocketAddr,
    stub_rt: Handle,
    clients: Handle,
    next_sid: AtomicU64,
    quick: bool,
    finished: Mutex<std::sync::mpsc::Receiver<(u64, StubStream)>>,
    streams: Mutex<HashMap<u64, StubStream>>,
}

/// What a run of streams measured, for one server.
#[derive(Default, Debug, Clone)]
struct Figures {
    streams: usize,
    events_expected: u64,
    events: u64,
    lost: u64,
    duplicated: u64,
    corrupted: u64,
    bad_terminal: u64,
    errors: u64,
    first_error: Option<String>,
    lat_ms: Vec<f64>,
    ttfe_ms: Vec<f64>,
    /// From a client's request to the stub receiving it (through the proxy, when there is one).
    to_stub_ms: Vec<f64>,
    cpu_s: f64,
    peak_rss_mib: f64,
    stub_cpu_s: f64,
    client_cpu_s: f64,
    wall_s: f64,
    /// Added latency by 2-second window of send time: (p50, p99, max) in ms.
    windows: Vec<(f64, f64, f64)>,
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

impl Figures {
    fn lat(&self, p: f64) -> f64 {
        pct(&self.lat_ms, p)
    }
    fn ttfe(&self, p: f64) -> f64 {
        pct(&self.ttfe_ms, p)
    }
    fn cpu_per_event_us(&self) -> f64 {
        self.cpu_s * 1e6 / self.events.max(1) as f64
    }
}

impl Bench {
    /// What the stub saw of every finished stream so far.
    fn streams(&self) -> std::sync::MutexGuard<'_, HashMap<u64, StubStream>> {
        let mut map = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(rx) = self.finished.lock() {
            map.extend(rx.try_iter());
        }
        map
    }

    fn sid(&self) -> u64 {
        self.next_sid.fetch_add(1, Ordering::Relaxed)
    }

    fn script(&self, n: u32, rate: f64, first_ms: u64, size: usize) -> Script {
        Script {
            sid: self.sid(),
            n,
            rate,
            first_ms,
            size,
        }
    }

    /// Runs clients (each after its start offset), at most `parallel` at a time, and measures.
    async fn run(
        &self,
        server: &Server,
        clients: Vec<(Script, Behaviour, Duration)>,
        parallel: usize,
        give_up: Duration,
    ) -> (Figures, Vec<ClientResult>) {
        let clients = clients
            .into_iter()
            .map(|(script, behaviour, offset)| (script, behaviour, offset, None))
            .collect();
        self.run_with(server, clients, parallel, give_up).await
    }

    /// The same, each client either starting its own turn or joining the running turn named
    /// (its script is the one that turn plays). Only events the stub sent after a client's
    /// request count toward latency: a viewer that joins late gets what it missed at once.
    async fn run_with(
        &self,
        server: &Server,
        clients: Vec<(Script, Behaviour, Duration, Option<Arc<str>>)>,
        parallel: usize,
        give_up: Duration,
    ) -> (Figures, Vec<ClientResult>) {
        let pid = server.pid();
        let cpu0 = cpu_secs(pid);
        let (stub0, client0) = (cpu_of(&self.stub_rt).await, cpu_of(&self.clients).await);
        let watch = RssWatch::start(pid);
        let t0 = now_ns();
        let give_up_at = t0 + give_up.as_nanos() as u64;
        let gate = Arc::new(Semaphore::new(parallel));
        let mut handles = Vec::with_capacity(clients.len());
        let mut scripts = HashMap::new();
        let key: Arc<str> = server.key.as_str().into();
        for (script, behaviour, offset, join) in clients {
            scripts.insert(script.sid, script);
            let cfg = ClientCfg {
                target: server.target,
                addr: server.addr,
                script,
                behaviour,
                give_up_at,
                key: key.clone(),
                join,
            };
            let gate = gate.clone();
            let start = at_ns(t0 + offset.as_nanos() as u64);
            handles.push(self.clients.spawn(async move {
                sleep_until(start).await;
                let _permit = gate.acquire_owned().await;
                client(cfg).await
            }));
        }
        let mut results = Vec::with_capacity(handles.len());
        for h in handles {
            if let Ok(r) = h.await {
                results.push(r);
            }
        }
        let wall_s = (now_ns() - t0) as f64 / 1e9;
        if !alive(pid) {
            println!(
                "  !! {} (pid {pid}) exited during this run (see target/bench/*.log): its figures are void",
                server.target.name()
            );
        }
        let mut f = Figures {
            streams: results.len(),
            cpu_s: cpu_secs(pid) - cpu0,
            stub_cpu_s: cpu_of(&self.stub_rt).await - stub0,
            client_cpu_s: cpu_of(&self.clients).await - client0,
            peak_rss_mib: watch.finish() as f64 / 1024.0,
            wall_s,
            ..Default::default()
        };
        // A whole stream's stub record may land a moment after its client read the end.
        let whole: Vec<u64> = results
            .iter()
            .filter(|r| r.aborted_at.is_none())
            .map(|r| r.sid)
            .collect();
        for _ in 0..100 {
            if whole.iter().all(|sid| self.streams().contains_key(sid)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let stub = self.streams();
        let mut by_window: Vec<Vec<f64>> = Vec::new();
        for r in &results {
            let script = scripts[&r.sid];
            let aborted = r.aborted_at.is_some();
            if !aborted {
                f.events_expected += script.n as u64;
                f.lost += r.lost as u64;
                if r.terminals != 1 || r.after_terminal > 0 {
                    f.bad_terminal += 1;
                }
                if !r.done || r.error.is_some() || !r.hash_ok {
                    f.errors += 1;
                    if f.first_error.is_none() {
                        f.first_error = Some(
                            r.error
                                .clone()
                                .unwrap_or_else(|| "content hash differs from the script".into()),
                        );
                    }
                }
            }
            f.events += r.recv.len() as u64;
            f.duplicated += r.duplicated as u64;
            f.corrupted += r.corrupted as u64;
            if let Some(first) = r.first_event {
                f.ttfe_ms.push((first - r.start) as f64 / 1e6);
            }
            if let Some(sent) = stub.get(&r.sid) {
                if sent.req_at >= r.start {
                    f.to_stub_ms
                        .push(sent.req_at.saturating_sub(r.start) as f64 / 1e6);
                }
                for &(i, at) in &r.recv {
                    if let Some(&s) = sent.sends.get(i as usize).filter(|&&s| s >= r.start) {
                        let ms = at.saturating_sub(s) as f64 / 1e6;
                        f.lat_ms.push(ms);
                        let w = (s.saturating_sub(t0) / 2_000_000_000) as usize;
                        if by_window.len() <= w {
                            by_window.resize(w + 1, Vec::new());
                        }
                        by_window[w].push(ms);
                    }
                }
            }
        }
        f.lat_ms.sort_by(f64::total_cmp);
        for mut w in by_window {
            w.sort_by(f64::total_cmp);
            f.windows.push((
                pct(&w, 50.0),
                pct(&w, 99.0),
                w.last().copied().unwrap_or(f64::NAN),
            ));
        }
        f.ttfe_ms.sort_by(f64::total_cmp);
        f.to_stub_ms.sort_by(f64::total_cmp);
        drop(stub);
        (f, results)
    }
}

/// Spreads `count` streams over `ramp`, so their events do not all fall on the same tick.
fn spread(
    bench: &Bench,
    count: usize,
    ramp: Duration,
    n: u32,
    rate: f64,
) -> Vec<(Script, Behaviour, Duration)> {
    (0..count)
        .map(|i| {
            (
                bench.script(n, rate, 0, 0),
                Behaviour::Read,
                ramp.mul_f64(i as f64 / count.max(1) as f64),
            )
        })
        .collect()
}

struct Row {
    scenario: String,
    metric: String,
    target: String,
    ponder: f64,
    litellm: Option<f64>,
    unit: &'static str,
    /// Whether Ponder's figure meets the target, when there is one.
    met: Option<bool>,
}

fn fmt_num(v: f64, unit: &str) -> String {
    if v.is_nan() {
        return "—".into();
    }
    let n = if v == 0.0 || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if unit.is_empty() {
        n
    } else {
        format!("{n} {unit}")
    }
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| scenario | figure | target | Ponder | LiteLLM | Ponder / LiteLLM | met |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let lite = r
            .litellm
            .map(|v| fmt_num(v, r.unit))
            .unwrap_or_else(|| "—".into());
        let ratio = match r.litellm {
            Some(l) if l != 0.0 && !l.is_nan() && !r.ponder.is_nan() => {
                let x = r.ponder / l;
                if x < 0.01 {
                    format!("{x:.4} (1/{:.0})", 1.0 / x)
                } else if x < 1.0 {
                    format!("{x:.3} (1/{:.1})", 1.0 / x)
                } else {
                    format!("{x:.2}")
                }
            }
            _ => "—".into(),
        };
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.metric,
            r.target,
            fmt_num(r.ponder, r.unit),
            lite,
            ratio,
            met
        );
    }
    out
}

fn row(
    scenario: &str,
    metric: &str,
    target: &str,
    ponder: f64,
    litellm: Option<f64>,
    unit: &'static str,
    met: Option<bool>,
) -> Row {
    Row {
        scenario: scenario.into(),
        metric: metric.into(),
        target: target.into(),
        ponder,
        litellm,
        unit,
        met,
    }
}

/// A row comparing one figure of Ponder's run with LiteLLM's.
fn compare(
    scenario: &str,
    metric: &str,
    target: &str,
    runs: (&Figures, Option<&Figures>),
    get: impl Fn(&Figures) -> f64,
    unit: &'static str,
    met: Option<bool>,
) -> Row {
    row(
        scenario,
        metric,
        target,
        get(runs.0),
        runs.1.map(&get),
        unit,
        met,
    )
}

fn describe(name: &str, f: &Figures) {
    if f.streams >= 100 && f.windows.len() > 1 {
        let w: Vec<String> = f
            .windows
            .iter()
            .map(|(p50, p99, max)| format!("{p50:.1}/{p99:.1}/{max:.0}"))
            .collect();
        println!(
            "  {name}: added latency p50/p99/max (ms) by 2-s window of send time: {}",
            w.join(" ")
        );
    }
    println!(
        "  {name}: {} streams, {}/{} events, lost {}, dup {}, corrupt {}, bad terminal {}, errors {}{}; \
added latency p50 {:.3} ms p99 {:.3} ms p99.9 {:.3} ms max {:.3} ms; first event p50 {:.2} ms p99 {:.2} ms; request at the stub p50 {:.2} ms p99 {:.2} ms; \
CPU {:.2} s ({:.1} µs/event), peak RSS {:.1} MiB; stub CPU {:.2} s, clients CPU {:.2} s, wall {:.1} s",
        f.streams,
        f.events,
        f.events_expected,
        f.lost,
        f.duplicated,
        f.corrupted,
        f.bad_terminal,
        f.errors,
        f.first_error.as_deref().map(|e| format!(" (first: {e})")).unwrap_or_default(),
        f.lat(50.0),
        f.lat(99.0),
        f.lat(99.9),
        f.lat_ms.last().copied().unwrap_or(f64::NAN),
        f.ttfe(50.0),
        f.ttfe(99.0),
        pct(&f.to_stub_ms, 50.0),
        pct(&f.to_stub_ms, 99.0),
        f.cpu_s,
        f.cpu_per_event_us(),
        f.peak_rss_mib,
        f.stub_cpu_s,
        f.client_cpu_s,
        f.wall_s
    );
}

/// Starts a fresh server and warms it with a few whole turns (LiteLLM's first request alone
/// takes seconds), so each scenario measures a running server from the same state.
async fn start(target: Target, bench: &Bench) -> Res<Server> {
    let server = match target {
        Target::Ponder(keep) => start_ponder(bench.stub_addr, keep).await?,
        Target::LiteLlm => start_litellm(bench.stub_addr).await?,
        Target::Nginx => start_nginx(bench.stub_addr).await?,
        Target::Direct => Server {
            target,
            child: None,
            addr: bench.stub_addr,
            key: "none".into(),
        },
    };
    let warm = (0..10)
        .map(|_| (bench.script(4, 0.0, 0, 0), Behaviour::Read, Duration::ZERO))
        .collect();
    let (f, _) = bench.run(&server, warm, 1, Duration::from_secs(120)).await;
    if f.errors > 0 || f.events != f.events_expected {
        return Err(format!(
            "{} failed its warm-up turns: {}",
            target.name(),
            f.first_error.unwrap_or_else(|| "events missing".into())
        ));
    }
    Ok(server)
}

/// Waits (bounded) until nothing streams any more at the stub, and in Ponder by its gauge.
async fn drained(bench: &Bench, server: &Server, limit: Duration) -> (bool, f64) {
    let t = Instant::now();
    while t.elapsed() < limit {
        let gauge = if matches!(server.target, Target::Ponder(_)) {
            active_streams(server).await.unwrap_or(-1.0)
        } else {
            0.0
        };
        if gauge == 0.0 && bench.stub.active.load(Ordering::SeqCst) == 0 {
            return (true, t.elapsed().as_secs_f64());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (false, t.elapsed().as_secs_f64())
}

/// Prints the three aborted streams whose upstream took longest to close, to tell a slow
/// server from a stalled machine.
fn print_slowest(bench: &Bench, results: &[ClientResult]) {
    let stub = bench.streams();
    let mut cases: Vec<(u64, String)> = results
        .iter()
        .filter_map(|r| {
            let aborted = r.aborted_at?;
            let s = stub.get(&r.sid)?;
            let ms = |a: u64, b: u64| (a as f64 - b as f64) / 1e6;
            let delay = s.closed_at.map_or(u64::MAX, |c| c.saturating_sub(aborted));
            let line = format!(
                "request sent at 0, aborted at {:.1} ms, upstream request at {:.1} ms, {} events sent, closed {}",
                ms(aborted, r.start),
                ms(s.req_at, r.start),
                s.sends.len(),
                s.closed_at
                    .map(|c| format!("{:.1} ms after the abort", ms(c, aborted)))
                    .unwrap_or_else(|| "never: the script ran to its end".into())
            );
            Some((delay, line))
        })
        .collect();
    cases.sort_by_key(|c| std::cmp::Reverse(c.0));
    for (_, line) in cases.iter().take(3) {
        println!("      slowest: {line}");
    }
}

/// Upstream close delays (ms) of aborted clients, measured at the stub from the client's abort.
fn close_delays(bench: &Bench, results: &[ClientResult]) -> (Vec<f64>, usize, usize) {
    let stub = bench.streams();
    let mut delays = Vec::new();
    let (mut never_reached, mut still_open) = (0, 0);
    for r in results {
        let Some(aborted) = r.aborted_at else {
            continue;
        };
        match stub.get(&r.sid) {
            None => never_reached += 1,
            Some(s) => match s.closed_at {
                Some(closed) => delays.push(closed.saturating_sub(aborted) as f64 / 1e6),
                None => still_open += 1,
            },
        }
    }
    delays.sort_by(f64::total_cmp);
    (delays, never_reached, still_open)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

// --- the scenarios; each returns its rows and starts its own server process ---

async fn one_stream(bench: &Bench, targets: &[Target]) -> Vec<Row> {
    let n = if bench.quick { 200 } else { 1000 };
    println!("\n## 1 stream: {n} events at 50/s");
    let mut figs = HashMap::new();
    for &t in targets {
        match start(t, bench).await {
            Ok(server) => {
                let clients = spread(bench, 1, Duration::ZERO, n, 50.0);
                let (f, _) = bench
                    .run(&server, clients, 1, Duration::from_secs(120))
                    .await;
                describe(t.name(), &f);
                figs.insert(t, f);
            }
            Err(e) => println!("  {}: {e}", t.name()),
        }
    }
    let p = figs
        .get(&Target::Ponder(Keep::Stateless))
        .cloned()
        .unwrap_or_default();
    let l = figs.get(&Target::LiteLlm);
    let s = "1 stream, 50 events/s";
    let runs = (&p, l);
    let faults =
        |f: &Figures| (f.lost + f.corrupted + f.duplicated + f.bad_terminal + f.errors) as f64;
    vec![
        compare(
            s,
            "added latency p50",
            "< 0.5 ms",
            runs,
            |f| f.lat(50.0),
            "ms",
            Some(p.lat(50.0) < 0.5),
        ),
        compare(
            s,
            "added latency p99",
            "< 2 ms",
            runs,
            |f| f.lat(99.0),
            "ms",
            Some(p.lat(99.0) < 2.0),
        ),
        compare(
            s,
            "time to first event p50",
            "",
            runs,
            |f| f.ttfe(50.0),
            "ms",
            None,
        ),
        compare(
            s,
            "lost / corrupted / bad terminal",
            "0",
            runs,
            faults,
            "",
            Some(faults(&p) == 0.0 && p.events > 0),
        ),
    ]
}

async fn many_streams(bench: &Bench, targets: &[Target], count: usize, n: u32) -> Vec<Row> {
    let ramp = Duration::from_secs(if count >= 1000 { 4 } else { 1 });
    let rate = opts().rate.unwrap_or(5.0);
    println!(
        "\n## {count} concurrent streams at {rate} events/s, {n} events each (started over {} s)",
        ramp.as_secs()
    );
    let mut figs = HashMap::new();
    for &t in targets {
        match start(t, bench).await {
            Ok(server) => {
                let clients = spread(bench, count, ramp, n, rate);
                let limit = Duration::from_secs_f64(n as f64 / rate + 240.0);
                let (f, _) = bench.run(&server, clients, count, limit).await;
                describe(t.name(), &f);
                tokio::time::sleep(Duration::from_secs(2)).await;
                let pid = server.pid();
                println!(
                    "  2 s after the run: RSS {:.1} MiB, {} open fds",
                    rss_kib(pid) as f64 / 1024.0,
                    open_fds(pid)
                );
                figs.insert(t, f);
            }
            Err(e) => println!("  {}: {e}", t.name()),
        }
    }
    let p = figs
        .get(&Target::Ponder(Keep::Stateless))
        .cloned()
        .unwrap_or_default();
    let l = figs.get(&Target::LiteLlm);
    let s = format!("{count} streams × {rate} events/s × {n}");
    let big = count >= 2000;
    let runs = (&p, l);
    let bad = |f: &Figures| (f.lost + f.corrupted + f.duplicated) as f64;
    let errs = |f: &Figures| (f.errors + f.bad_terminal) as f64;
    let cpu_ok = l.is_some_and(|l| l.cpu_per_event_us() >= 20.0 * p.cpu_per_event_us());
    vec![
        compare(
            &s,
            "events delivered",
            "all",
            runs,
            |f| f.events as f64,
            "",
            Some(p.events == p.events_expected && p.events > 0),
        ),
        compare(
            &s,
            "lost + duplicated + corrupted",
            "0",
            runs,
            bad,
            "",
            Some(bad(&p) == 0.0),
        ),
        compare(
            &s,
            "streams with an error or ≠ 1 terminal",
            "0",
            runs,
            errs,
            "",
            Some(errs(&p) == 0.0),
        ),
        compare(
            &s,
            "added latency p50",
            "",
            runs,
            |f| f.lat(50.0),
            "ms",
            None,
        ),
        compare(
            &s,
            "added latency p99",
            if big { "< 25 ms" } else { "" },
            runs,
            |f| f.lat(99.0),
            "ms",
            big.then_some(p.lat(99.0) < 25.0),
        ),
        compare(
            &s,
            "time to first event p99",
            "",
            runs,
            |f| f.ttfe(99.0),
            "ms",
            None,
        ),
        compare(
            &s,
            "server CPU per event (incl. request)",
            if big { "" } else { "≥ 20× less" },
            runs,
            Figures::cpu_per_event_us,
            "µs",
            (!big).then_some(cpu_ok),
        ),
        compare(&s, "server CPU", "", runs, |f| f.cpu_s, "s", None),
        compare(
            &s,
            "server peak RSS",
            if big { "< 200 MB" } else { "" },
            runs,
            |f| f.peak_rss_mib,
            "MiB",
            big.then_some(p.peak_rss_mib * 1.048576 < 200.0),
        ),
        compare(
            &s,
            "stub + clients CPU",
            "",
            runs,
            |f| f.stub_cpu_s + f.client_cpu_s,
            "s",
            None,
        ),
        compare(&s, "wall time", "", runs, |f| f.wall_s, "s", None),
    ]
    .into_iter()
    .chain(stored_rows(&s, &figs, count))
    .collect()
}

/// Stored turns against stateless ones in the same run (issue #44's targets): CPU per event
/// within 1.3×, first-event p99 within 2×, every event delivered in about the streams' own
/// time, peak RSS under 100 MiB at 1,000 streams. LiteLLM's figure stands beside each.
fn stored_rows(scenario: &str, figs: &HashMap<Target, Figures>, count: usize) -> Vec<Row> {
    let Some(base) = figs.get(&Target::Ponder(Keep::Stateless)) else {
        return Vec::new();
    };
    let l = figs.get(&Target::LiteLlm);
    let mut rows = Vec::new();
    for keep in [Keep::Sqlite, Keep::Postgres] {
        let Some(f) = figs.get(&Target::Ponder(keep)) else {
            continue;
        };
        let on = Target::Ponder(keep).name();
        let x = |get: fn(&Figures) -> f64| get(f) / get(base);
        let cpu = x(Figures::cpu_per_event_us);
        let p99 = x(|f| f.ttfe(99.0));
        rows.push(compare(
            scenario,
            &format!("{on}: server CPU per event ({cpu:.2}× stateless)"),
            "≤ 1.3× stateless",
            (f, l),
            Figures::cpu_per_event_us,
            "µs",
            Some(cpu <= 1.3),
        ));
        rows.push(compare(
            scenario,
            &format!("{on}: time to first event p99 ({p99:.2}× stateless)"),
            "≤ 2× stateless",
            (f, l),
            |f| f.ttfe(99.0),
            "ms",
            Some(p99 <= 2.0),
        ));
        let stretch = x(|f| f.wall_s);
        rows.push(compare(
            scenario,
            &format!("{on}: events delivered, wall time {stretch:.2}× stateless"),
            "all, ≤ 1.05× the time",
            (f, l),
            |f| f.events as f64,
            "",
            Some(f.events == f.events_expected && f.events > 0 && stretch <= 1.05),
        ));
        rows.push(compare(
            scenario,
            &format!("{on}: server peak RSS"),
            if count >= 1000 { "< 100 MiB" } else { "" },
            (f, l),
            |f| f.peak_rss_mib,
            "MiB",
            (count >= 1000).then_some(f.peak_rss_mib < 100.0),
        ));
    }
    rows
}

/// 1,000 clients connecting at the same instant, each for a short turn: the time to the first
/// event shows whether the listen backlog held them all (those that do not fit wait for SYN
/// retransmits, a second or more). The clients straight on the stub always run beside, as the
/// reference under the same conditions, and nginx as a plain reverse proxy (when installed),
/// the cost of forwarding alone. One burst's p99 swings tenfold between runs on two cores, so
/// the burst is repeated (`--rounds N`, 5 by default), the targets taking turns, and the
/// figures are the medians over the rounds.
async fn burst(bench: &Bench, targets: &[Target]) -> Vec<Row> {
    let count = if bench.quick { 300 } else { 1000 };
    let rounds = opts()
        .rounds
        .unwrap_or(if bench.quick { 1 } else { 5 })
        .max(1);
    println!(
        "\n## a burst of {count} clients connecting at once, 10 events each at 5/s, {rounds} rounds"
    );
    let mut order: Vec<Target> = targets.to_vec();
    for extra in [Target::Nginx, Target::Direct] {
        if !order.contains(&extra) {
            order.push(extra);
        }
    }
    let mut figs: HashMap<Target, Vec<Figures>> = HashMap::new();
    for round in 1..=rounds {
        for &t in &order {
            match start(t, bench).await {
                Ok(server) => {
                    let clients = spread(bench, count, Duration::ZERO, 10, 5.0);
                    let (f, _) = bench
                        .run(&server, clients, count, Duration::from_secs(120))
                        .await;
                    print!("  round {round}: ");
                    describe(t.name(), &f);
                    figs.entry(t).or_default().push(f);
                }
                Err(e) => println!("  {}: {e}", t.name()),
            }
        }
    }
    let median = |t: Target, f: fn(&Figures) -> f64| {
        let mut v: Vec<f64> = figs.get(&t).into_iter().flatten().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let p99 = |f: &Figures| f.ttfe(99.0);
    let (p, d, n) = (
        median(Target::Ponder(Keep::Stateless), p99),
        median(Target::Direct, p99),
        median(Target::Nginx, p99),
    );
    let each = |t: Target| {
        figs.get(&t)
            .into_iter()
            .flatten()
            .map(|f| format!("{:.1}", f.ttfe(99.0)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "  first event p99, median of {rounds}: Ponder {p:.1} ms [{}], nginx {n:.1} ms [{}], clients on the stub {d:.1} ms [{}]; Ponder {:.2}× the stub, {:.2}× nginx",
        each(Target::Ponder(Keep::Stateless)),
        each(Target::Nginx),
        each(Target::Direct),
        p / d,
        p / n
    );
    let s = format!("burst of {count} connections, median of {rounds}");
    // The table's second column is LiteLLM's: the reference figures go in the label.
    let refs = |f: fn(&Figures) -> f64| {
        format!(
            "{:.1} ms with no proxy, {:.1} ms via nginx",
            median(Target::Direct, f),
            median(Target::Nginx, f)
        )
    };
    let faults =
        |f: &Figures| (f.lost + f.corrupted + f.duplicated + f.bad_terminal + f.errors) as f64;
    let all_faults: f64 = figs
        .get(&Target::Ponder(Keep::Stateless))
        .into_iter()
        .flatten()
        .map(faults)
        .sum();
    vec![
        row(
            &s,
            &format!("time to first event p50 ({})", refs(|f| f.ttfe(50.0))),
            "",
            median(Target::Ponder(Keep::Stateless), |f| f.ttfe(50.0)),
            None,
            "ms",
            None,
        ),
        row(
            &s,
            &format!("time to first event p95 ({})", refs(|f| f.ttfe(95.0))),
            "",
            median(Target::Ponder(Keep::Stateless), |f| f.ttfe(95.0)),
            None,
            "ms",
            None,
        ),
        row(
            &s,
            &format!("time to first event p99 ({})", refs(p99)),
            "≤ 2× no proxy",
            p,
            None,
            "ms",
            Some(p <= 2.0 * d),
        ),
        row(
            &s,
            "lost / corrupted / errors, all rounds",
            "0",
            all_faults,
            None,
            "",
            Some(all_faults == 0.0 && figs.contains_key(&Target::Ponder(Keep::Stateless))),
        ),
    ]
    .into_iter()
    .chain(
        [Keep::Sqlite, Keep::Postgres]
            .into_iter()
            .filter_map(|keep| {
                let t = Target::Ponder(keep);
                figs.contains_key(&t).then(|| {
                    let stored = median(t, p99);
                    println!(
                "  {}: first event p99, median of {rounds}: {stored:.1} ms [{}]; {:.2}× nginx",
                t.name(),
                each(t),
                stored / n
            );
                    row(
                        &s,
                        &format!("{}: time to first event p99 ({})", t.name(), refs(p99)),
                        "≤ 2× nginx",
                        stored,
                        None,
                        "ms",
                        Some(stored <= 2.0 * n),
                    )
                })
            }),
    )
    .collect()
}

async fn disconnects(bench: &Bench, targets: &[Target]) -> Vec<Row> {
    let s = "random client disconnects";
    let mut rows = Vec::new();
    let mut lite: HashMap<&str, f64> = HashMap::new();
    let mut pon: HashMap<&str, f64> = HashMap::new();
    for &t in targets.iter().filter(|t| **t != Target::Direct) {
        let count = match (t, bench.quick) {
            (_, true) => 1000,
            (Target::Ponder(_), false) => 10_000,
            (_, false) => 1_000,
        };
        println!(
            "\n## {}: {count} aborted turns, before and after the first token",
            t.name()
        );
        let server = match start(t, bench).await {
            Ok(s) => s,
            Err(e) => {
                println!("  {}: {e}", t.name());
                continue;
            }
        };
        let pid = server.pid();
        // The baseline is taken after whole turns at the same concurrency as the aborts, so it
        // already holds what that concurrency needs (buffers, pooled connections, allocator).
        let parallel = if matches!(t, Target::Ponder(_)) {
            200
        } else {
            50
        };
        let warm: Vec<_> = (0..count / 10)
            .map(|_| {
                (
                    bench.script(40, 50.0, 0, 0),
                    Behaviour::Read,
                    Duration::ZERO,
                )
            })
            .collect();
        let (wf, _) = bench
            .run(&server, warm, parallel, Duration::from_secs(600))
            .await;
        describe(&format!("warm-up ({} whole turns)", count / 10), &wf);
        tokio::time::sleep(Duration::from_secs(3)).await;
        let (base_rss, base_fds) = (rss_kib(pid), open_fds(pid));
        let mut rng = Rng(0x5EED_1234_ABCD_0001 ^ count as u64);
        let mut results = Vec::new();
        let mut cpu_s = 0.0;
        let mut rounds = Vec::new();
        for _ in 0..10 {
            let clients: Vec<_> = (0..count / 10)
                .map(|_| {
                    if rng.below(10) < 4 {
                        // before the first token: the model is silent for 1.5 s, the user leaves
                        // at a random moment before that (from right after sending the request)
                        let at = rng.below(1200);
                        (
                            bench.script(40, 50.0, 1500, 0),
                            Behaviour::AbortAfterMs(at),
                            Duration::ZERO,
                        )
                    } else {
                        let k = 1 + rng.below(40) as u32;
                        (
                            bench.script(200, 50.0, 0, 0),
                            Behaviour::AbortAfterEvents(k),
                            Duration::ZERO,
                        )
                    }
                })
                .collect();
            let (f, r) = bench
                .run(&server, clients, parallel, Duration::from_secs(900))
                .await;
            cpu_s += f.cpu_s;
            results.extend(r);
            rounds.push(format!("{:.1}", rss_kib(pid) as f64 / 1024.0));
        }
        println!(
            "  RSS (MiB) after each tenth of the aborted turns: {}",
            rounds.join(" ")
        );
        let f = Figures {
            cpu_s,
            ..Default::default()
        };
        let (ok, drain_s) = drained(bench, &server, Duration::from_secs(30)).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let (end_rss, end_fds) = (rss_kib(pid), open_fds(pid));
        let (delays, never, open) = close_delays(bench, &results);
        let over_1s = delays.iter().filter(|d| **d > 1000.0).count();
        for (label, before) in [
            ("before the first token", true),
            ("after the first token", false),
        ] {
            let part: Vec<ClientResult> = results
                .iter()
                .filter(|r| r.first_event.is_none() == before)
                .map(|r| ClientResult {
                    sid: r.sid,
                    start: r.start,
                    aborted_at: r.aborted_at,
                    first_event: r.first_event,
                    ..Default::default()
                })
                .collect();
            let (d, nr, op) = close_delays(bench, &part);
            print_slowest(bench, &part);
            println!(
                "  {label}: {} aborts, upstream closed p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, {} over 1 s, {op} never closed, {nr} never reached the upstream",
                part.len(),
                pct(&d, 50.0),
                pct(&d, 99.0),
                d.last().copied().unwrap_or(f64::NAN),
                d.iter().filter(|v| **v > 1000.0).count()
            );
        }
        println!(
            "  upstream closed after the abort: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms, {over_1s} over 1 s, {open} never closed, {never} never reached the upstream; \
drained: {ok} in {drain_s:.1} s; RSS {:.1} → {:.1} MiB ({:+.1} %), fds {base_fds} → {end_fds}, CPU {:.1} ms per aborted turn",
            pct(&delays, 50.0),
            pct(&delays, 99.0),
            delays.last().copied().unwrap_or(f64::NAN),
            base_rss as f64 / 1024.0,
            end_rss as f64 / 1024.0,
            (end_rss as f64 / base_rss.max(1) as f64 - 1.0) * 100.0,
            f.cpu_s * 1000.0 / count as f64,
        );
        let m = if t == Target::Ponder(Keep::Stateless) {
            &mut pon
        } else {
            &mut lite
        };
        m.insert("count", count as f64);
        m.insert("p50", pct(&delays, 50.0));
        m.insert("p99", pct(&delays, 99.0));
        m.insert("max", delays.last().copied().unwrap_or(f64::NAN));
        m.insert("over", (over_1s + open) as f64);
        m.insert(
            "rss",
            (end_rss as f64 / base_rss.max(1) as f64 - 1.0) * 100.0,
        );
        m.insert("base", base_rss as f64 / 1024.0);
        m.insert("end", end_rss as f64 / 1024.0);
        m.insert("fds", end_fds as f64 - base_fds as f64);
        m.insert("left", if ok { 0.0 } else { 1.0 });
        m.insert("cpu", f.cpu_s * 1000.0 / count as f64);
    }
    let g = |m: &HashMap<&str, f64>, k: &str| m.get(k).copied().unwrap_or(f64::NAN);
    let l = |k: &str| (!lite.is_empty()).then(|| g(&lite, k));
    let p = |k: &str| g(&pon, k);
    rows.push(row(
        s,
        "aborted turns",
        "10,000",
        p("count"),
        l("count"),
        "",
        None,
    ));
    rows.push(row(
        s,
        "upstream closed after abort, p50",
        "",
        p("p50"),
        l("p50"),
        "ms",
        None,
    ));
    rows.push(row(
        s,
        "upstream closed after abort, max",
        "< 1 s every time",
        p("max"),
        l("max"),
        "ms",
        Some(p("over") == 0.0 && p("max") < 1000.0),
    ));
    rows.push(row(
        s,
        "aborts not closed within 1 s",
        "0",
        p("over"),
        l("over"),
        "",
        Some(p("over") == 0.0),
    ));
    rows.push(row(
        s,
        "RSS before the aborts (after 1/10 as many whole turns)",
        "",
        p("base"),
        l("base"),
        "MiB",
        None,
    ));
    rows.push(row(
        s,
        "RSS after, change",
        "within 10 %",
        p("rss"),
        l("rss"),
        "%",
        Some(p("rss").abs() <= 10.0),
    ));
    rows.push(row(
        s,
        "streams still open after (gauge, stub)",
        "0",
        p("left"),
        l("left"),
        "",
        Some(p("left") == 0.0),
    ));
    rows.push(row(
        s,
        "open fds after − before",
        "",
        p("fds"),
        l("fds"),
        "",
        None,
    ));
    rows.push(row(
        s,
        "server CPU per aborted turn",
        "",
        p("cpu"),
        l("cpu"),
        "ms",
        None,
    ));
    rows
}

/// One never-read run's figures, per stream in KiB, sampled each second while the clients hold.
#[derive(Clone, Copy)]
struct Held {
    rss: f64,
    kernel: f64,
    sent_mid: f64,
    sent_end: f64,
    /// What the stub wrote in the last quarter of the hold: near 0 once the upstream is paused.
    sent_last_quarter: f64,
    close_max_ms: f64,
}

async fn never_reads(bench: &Bench, targets: &[Target]) -> Vec<Row> {
    let count = 100;
    let hold = Duration::from_secs(if bench.quick { 6 } else { 30 });
    let s = "client that never reads";
    let mut res: HashMap<Target, Held> = HashMap::new();
    for &t in targets.iter().filter(|t| **t != Target::Direct) {
        println!(
            "\n## {}: {count} clients that never read, upstream sending 1 KiB events as fast as it can, held {} s",
            t.name(),
            hold.as_secs()
        );
        let server = match start(t, bench).await {
            Ok(s) => s,
            Err(e) => {
                println!("  {}: {e}", t.name());
                continue;
            }
        };
        let pid = server.pid();
        let warm: Vec<_> = (0..100)
            .map(|_| {
                (
                    bench.script(20, 200.0, 0, 0),
                    Behaviour::Read,
                    Duration::ZERO,
                )
            })
            .collect();
        let _ = bench.run(&server, warm, 50, Duration::from_secs(300)).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let base = rss_kib(pid) as f64 * 1024.0;
        let base_queued = socket_queues(pid) as f64;
        let bytes0 = bench.stub.bytes.load(Ordering::Relaxed);
        let clients: Vec<_> = (0..count)
            .map(|_| {
                let script = bench.script(10_000_000, 0.0, 0, 1024);
                (
                    script,
                    Behaviour::NeverRead(hold + Duration::from_secs(1)),
                    Duration::ZERO,
                )
            })
            .collect();
        let per = |v: f64| v / count as f64 / 1024.0;
        let sampler = async {
            let (mut sent, mut rss, mut kernel) = (Vec::new(), Vec::new(), Vec::new());
            let t0 = tokio::time::Instant::now();
            for i in 1..hold.as_secs() {
                sleep_until(t0 + Duration::from_secs(i)).await;
                sent.push(per(
                    (bench.stub.bytes.load(Ordering::Relaxed) - bytes0) as f64
                ));
                rss.push(per(rss_kib(pid) as f64 * 1024.0 - base));
                kernel.push(per(socket_queues(pid) as f64 - base_queued));
            }
            (sent, rss, kernel)
        };
        let (run, (sent, rss, kernel)) =
            tokio::join!(bench.run(&server, clients, count, hold * 3), sampler);
        let show = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.0}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!(
            "  each second, KiB per stream: the stub wrote {}",
            show(&sent)
        );
        println!("    server RSS above its baseline {}", show(&rss));
        println!(
            "    queued in the kernel on the server's sockets {}",
            show(&kernel)
        );
        let (delays, _, open) = close_delays(bench, &run.1);
        let last = |v: &[f64]| v.last().copied().unwrap_or(f64::NAN);
        let quarter = sent.len() * 3 / 4;
        let held = Held {
            rss: rss.iter().copied().fold(f64::NAN, f64::max),
            kernel: last(&kernel),
            sent_mid: sent.get(sent.len() / 2).copied().unwrap_or(f64::NAN),
            sent_end: last(&sent),
            sent_last_quarter: last(&sent) - sent.get(quarter).copied().unwrap_or(f64::NAN),
            close_max_ms: last(&delays),
        };
        println!(
            "  after the clients left, the upstream closed within p99 {:.1} ms, max {:.1} ms ({open} never closed)",
            pct(&delays, 99.0),
            held.close_max_ms,
        );
        let _ = drained(bench, &server, Duration::from_secs(10)).await;
        res.insert(t, held);
    }
    let nan = Held {
        rss: f64::NAN,
        kernel: f64::NAN,
        sent_mid: f64::NAN,
        sent_end: f64::NAN,
        sent_last_quarter: f64::NAN,
        close_max_ms: f64::NAN,
    };
    let p = res
        .get(&Target::Ponder(Keep::Stateless))
        .copied()
        .unwrap_or(nan);
    let l = res.get(&Target::LiteLlm).copied();
    vec![
        row(
            s,
            "server RSS held per stream (peak)",
            "< 1 MB",
            p.rss,
            l.map(|l| l.rss),
            "KiB",
            Some(p.rss < 1000.0),
        ),
        row(
            s,
            "kernel socket queues per stream, at the end",
            "",
            p.kernel,
            l.map(|l| l.kernel),
            "KiB",
            None,
        ),
        row(
            s,
            "upstream bytes sent per stream, half-way",
            "",
            p.sent_mid,
            l.map(|l| l.sent_mid),
            "KiB",
            None,
        ),
        row(
            s,
            "upstream bytes sent per stream, at the end",
            "",
            p.sent_end,
            l.map(|l| l.sent_end),
            "KiB",
            None,
        ),
        row(
            s,
            "… of which in the last quarter of the hold",
            "≈ 0 (paused)",
            p.sent_last_quarter,
            l.map(|l| l.sent_last_quarter),
            "KiB",
            Some(p.sent_last_quarter < 0.05 * p.sent_end),
        ),
        row(
            s,
            "upstream closed after the client left, max",
            "< 1 s",
            p.close_max_ms,
            l.map(|l| l.close_max_ms),
            "ms",
            Some(p.close_max_ms < 1000.0),
        ),
    ]
}

/// Starts one stored turn per script on the Ponder at `addr` (`{"content": …}`, at most
/// `parallel` at once), reads each response up to its `started` event and leaves: the turns run
/// on without a viewer. Returns their ids, in order.
async fn start_turns(addr: SocketAddr, scripts: &[Script], parallel: usize) -> Res<Vec<Arc<str>>> {
    let http = reqwest::Client::new();
    let gate = Arc::new(Semaphore::new(parallel.max(1)));
    let mut tasks = Vec::with_capacity(scripts.len());
    for script in scripts {
        let (http, gate, script) = (http.clone(), gate.clone(), *script);
        tasks.push(tokio::spawn(async move {
            let _permit = gate.acquire_owned().await;
            let response = http
                .post(format!("http://{addr}/api/chat"))
                .json(&serde_json::json!({"content": script.prompt()}))
                .send()
                .await
                .map_err(|e| format!("start a turn: {e}"))?;
            if !response.status().is_success() {
                return Err(format!("start a turn: HTTP {}", response.status()));
            }
            let mut body = response.bytes_stream();
            let mut decoder = ponder::wire::sse::TurnDecoder::new();
            let mut events = Vec::new();
            use futures::StreamExt;
            while let Some(chunk) = body.next().await {
                decoder.push(&chunk.map_err(|e| e.to_string())?, &mut events);
                if let Some(TurnEvent::Started { turn }) = events.first() {
                    return Ok(Arc::<str>::from(turn.as_str()));
                }
            }
            Err("a turn ended before its started event".to_string())
        }));
    }
    let mut ids = Vec::with_capacity(tasks.len());
    for task in tasks {
        ids.push(task.await.map_err(|e| e.to_string())??);
    }
    Ok(ids)
}

/// Fan-out: one stored turn watched by 1, then by 100 viewers that joined it before its first
/// event (`GET /api/turn/events`); the added latency of every event at every viewer.
async fn fanout(bench: &Bench) -> Vec<Row> {
    let n = if bench.quick { 60 } else { 200 };
    println!("\n## one stored turn of {n} events at 20/s, watched by 1 and by 100 viewers");
    let server = match start(Target::Ponder(stored_keep()), bench).await {
        Ok(server) => server,
        Err(e) => {
            println!("  Ponder: {e}");
            return Vec::new();
        }
    };
    let mut rows = Vec::new();
    for viewers in [1usize, 100] {
        let script = bench.script(n, 20.0, 2_000, 16);
        let ids = match start_turns(server.addr, &[script], 1).await {
            Ok(ids) => ids,
            Err(e) => {
                println!("  {e}");
                return rows;
            }
        };
        let clients = (0..viewers)
            .map(|_| {
                (
                    script,
                    Behaviour::Read,
                    Duration::ZERO,
                    Some(ids[0].clone()),
                )
            })
            .collect();
        let (f, _) = bench
            .run_with(&server, clients, viewers, Duration::from_secs(120))
            .await;
        describe(&format!("{viewers} viewer(s)"), &f);
        let s = format!(
            "1 turn × {viewers} viewer{}",
            if viewers == 1 { "" } else { "s" }
        );
        let big = viewers > 1;
        let faults = (f.lost + f.corrupted + f.duplicated + f.bad_terminal + f.errors) as f64;
        rows.push(row(
            &s,
            "events delivered",
            "all",
            f.events as f64,
            None,
            "",
            Some(f.events == f.events_expected && f.events > 0),
        ));
        rows.push(row(
            &s,
            "lost / duplicated / bad terminal",
            "0",
            faults,
            None,
            "",
            Some(faults == 0.0),
        ));
        rows.push(row(
            &s,
            "added latency p50",
            "",
            f.lat(50.0),
            None,
            "ms",
            None,
        ));
        rows.push(row(
            &s,
            "added latency p99",
            if big { "< 10 ms" } else { "" },
            f.lat(99.0),
            None,
            "ms",
            big.then_some(f.lat(99.0) < 10.0),
        ));
        rows.push(row(
            &s,
            "added latency max",
            "",
            f.lat_ms.last().copied().unwrap_or(f64::NAN),
            None,
            "ms",
            None,
        ));
        rows.push(row(&s, "server CPU", "", f.cpu_s, None, "s", None));
    }
    rows
}

/// Two replicas on one PostgreSQL (`--database postgres://…`): every turn starts on replica A
/// and is watched from replica B, so each event reaches its viewer through the database (the
/// event table and NOTIFY). The latency is the viewer's on B.
async fn replicas(bench: &Bench) -> Vec<Row> {
    let Some(url) = opts()
        .database
        .clone()
        .filter(|u| u.starts_with("postgres"))
    else {
        println!("\n## replicas: needs --database postgres://… (make bench-resume starts one)");
        return Vec::new();
    };
    let count = opts().count.unwrap_or(if bench.quick { 200 } else { 2000 });
    let n = if bench.quick { 40 } else { 100 };
    println!("\n## {count} stored turns at 5 events/s, {n} events each, started on replica A and watched on replica B");
    let (a, b) = match (
        start(Target::Ponder(Keep::Postgres), bench).await,
        start(Target::Ponder(Keep::Postgres), bench).await,
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            println!("  Ponder: {e}");
            return Vec::new();
        }
    };
    let _ = url;
    let ramp = Duration::from_secs(if count >= 1000 { 4 } else { 1 });
    // Every turn is silent for its first seconds, so its viewer on B joins before its first
    // event; only events sent after a viewer joined count toward latency in any case.
    let first_ms = 4_000 + ramp.as_millis() as u64;
    let scripts: Vec<Script> = (0..count)
        .map(|_| bench.script(n, 5.0, first_ms, 16))
        .collect();
    let started = Instant::now();
    let ids = match start_turns(a.addr, &scripts, 64).await {
        Ok(ids) => ids,
        Err(e) => {
            println!("  {e}");
            return Vec::new();
        }
    };
    println!(
        "  {count} turns started on A in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let step = ramp / count.max(1) as u32;
    let clients = scripts
        .iter()
        .zip(ids)
        .enumerate()
        .map(|(i, (script, id))| (*script, Behaviour::Read, step * i as u32, Some(id)))
        .collect();
    let limit = Duration::from_secs_f64(n as f64 / 5.0 + 240.0);
    let (f, _) = bench.run_with(&b, clients, count, limit).await;
    describe("viewers on replica B", &f);
    let a_cpu = cpu_secs(a.pid());
    let s = format!("{count} turns × 5 events/s, A → PostgreSQL → B");
    let faults = (f.lost + f.corrupted + f.duplicated) as f64;
    let errs = (f.errors + f.bad_terminal) as f64;
    vec![
        row(
            &s,
            "events delivered on B",
            "all",
            f.events as f64,
            None,
            "",
            Some(f.events == f.events_expected && f.events > 0),
        ),
        row(
            &s,
            "lost + duplicated + corrupted",
            "0",
            faults,
            None,
            "",
            Some(faults == 0.0),
        ),
        row(
            &s,
            "streams with an error or ≠ 1 terminal",
            "0",
            errs,
            None,
            "",
            Some(errs == 0.0),
        ),
        row(
            &s,
            "event latency at the viewer p50",
            "",
            f.lat(50.0),
            None,
            "ms",
            None,
        ),
        row(
            &s,
            "event latency at the viewer p99",
            "< 50 ms",
            f.lat(99.0),
            None,
            "ms",
            Some(f.lat(99.0) < 50.0),
        ),
        row(&s, "replica B CPU (viewers)", "", f.cpu_s, None, "s", None),
        row(
            &s,
            "replica A CPU since start (turns, writes)",
            "",
            a_cpu,
            None,
            "s",
            None,
        ),
        row(
            &s,
            "replica B peak RSS",
            "",
            f.peak_rss_mib,
            None,
            "MiB",
            None,
        ),
    ]
}

fn runtime(name: &str) -> Res<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

/// Load average and CPU pressure: other work on the machine shows in the latency tails.
fn machine_conditions() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let psi = std::fs::read_to_string("/proc/pressure/cpu").unwrap_or_default();
    let some = psi
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().find(|f| f.starts_with("avg60=")))
        .unwrap_or("avg60=?");
    format!(
        "load average {}, CPU pressure (some, %) {some}, {} cores",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    )
}

const HELP: &str = "load harness: cargo bench --no-default-features --features ssr --bench load -- [options]
  --quick           smaller runs (for trying the harness)
  --no-litellm      Ponder only
  --only NAME       one scenario: one, side, many, burst, abort, noread, fanout, replicas
                    (fanout: one stored turn watched by 1 and 100 viewers; replicas: stored turns
                    started on one replica and watched on another, needs --database postgres://…)
  --stored          Ponder also with stored turns on SQLite (written to the history as they
                    stream), beside its stateless ones
  --postgres URL    and with stored turns on PostgreSQL: a server (postgres://user@host:port),
                    where each run gets a database of its own
  --database URL    the PostgreSQL database of the replicas scenario (both replicas share it)
  --count N         streams in the `many` scenario (default 2000)
  --rounds N        bursts in the `burst` scenario (default 5; with nginx and no proxy beside)
  --rate R          events a second of each stream in `side` and `many` (default 5)
  --events N        events of each stream in `side` and `many` (default 100, 40 with --quick)
  --direct          also run the clients straight on the stub (the harness's floor)
environment: PONDER_BIN (default target/release/ponder), LITELLM_BIN (default .tools/litellm/bin/litellm)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return;
    }
    if let Err(e) = real_main(&args) {
        eprintln!("load: {e}");
        std::process::exit(1);
    }
}

fn real_main(args: &[String]) -> Res<()> {
    now_ns();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let _ = OPTS.set(Opts {
        stored: args.iter().any(|a| a == "--stored"),
        postgres: value("--postgres"),
        database: value("--database"),
        count: value("--count").and_then(|c| c.parse().ok()),
        rounds: value("--rounds").and_then(|c| c.parse().ok()),
        rate: value("--rate")
            .and_then(|c| c.parse().ok())
            .filter(|r: &f64| *r > 0.0),
        events: value("--events")
            .and_then(|c| c.parse().ok())
            .filter(|n: &u32| *n > 0),
    });
    let mut targets = vec![Target::Ponder(Keep::Stateless)];
    if opts().stored {
        targets.push(Target::Ponder(Keep::Sqlite));
    }
    if opts().postgres.is_some() {
        targets.push(Target::Ponder(Keep::Postgres));
    }
    if args.iter().any(|a| a == "--direct") {
        targets.push(Target::Direct);
    }
    if !args.iter().any(|a| a == "--no-litellm") {
        if litellm_bin().exists() {
            targets.push(Target::LiteLlm);
        } else {
            println!(
                "LiteLLM not installed at {} (make bench installs it): Ponder only",
                litellm_bin().display()
            );
        }
    }
    let stub_rt = runtime("stub")?;
    let client_rt = runtime("clients")?;
    let main_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (finished, finished_rx) = std::sync::mpsc::channel();
    let stub = Arc::new(Stub {
        finished,
        active: AtomicI64::new(0),
        connections: AtomicI64::new(0),
        bytes: AtomicU64::new(0),
    });
    // The stub's backlog is as deep as Ponder's: with the 1,024 `bind` asks for, a proxy that
    // opens its 1,000 upstream connections at once lost SYNs to it (a second's retransmit).
    let listener = stub_rt
        .block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind("127.0.0.1:0".parse().map_err(std::io::Error::other)?)?;
            socket.listen(ponder::server::http::socket::LISTEN_BACKLOG)
        })
        .map_err(|e| e.to_string())?;
    let stub_addr = listener.local_addr().map_err(|e| e.to_string())?;
    stub_rt.spawn(run_stub(listener, stub.clone()));
    let bench = Bench {
        stub,
        stub_addr,
        stub_rt: stub_rt.handle().clone(),
        clients: client_rt.handle().clone(),
        next_sid: AtomicU64::new(1),
        quick,
        finished: Mutex::new(finished_rx),
        streams: Mutex::new(HashMap::new()),
    };
    println!(
        "# Ponder vs LiteLLM under load ({}: {}); at start: {}",
        if quick { "quick" } else { "full" },
        targets
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join("; "),
        machine_conditions()
    );
    let want = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let rows = main_rt.block_on(async {
        let mut rows = Vec::new();
        if want("one") {
            rows.extend(one_stream(&bench, &targets).await);
        }
        let events = opts().events.unwrap_or(if quick { 40 } else { 100 });
        if want("side") {
            rows.extend(many_streams(&bench, &targets, 100, events).await);
        }
        if want("many") {
            let count = opts().count.unwrap_or(2000);
            rows.extend(many_streams(&bench, &targets, count, events).await);
        }
        if want("burst") {
            rows.extend(burst(&bench, &targets).await);
        }
        if want("abort") {
            rows.extend(disconnects(&bench, &targets).await);
        }
        if want("noread") {
            rows.extend(never_reads(&bench, &targets).await);
        }
        if only.as_deref() == Some("fanout") {
            rows.extend(fanout(&bench).await);
        }
        if only.as_deref() == Some("replicas") {
            rows.extend(replicas(&bench).await);
        }
        rows
    });
    let md = format!("{}\nat the end: {}\n", table(&rows), machine_conditions());
    println!("\n{md}");
    let path = out_dir().join(match only.as_deref() {
        Some("fanout") => "load-fanout.md",
        Some("replicas") => "load-replicas.md",
        _ => "load.md",
    });
    std::fs::write(&path, &md).map_err(|e| e.to_string())?;
    println!("written to {}", path.display());
    stub_rt.shutdown_background();
    client_rt.shutdown_background();
    Ok(())
}
