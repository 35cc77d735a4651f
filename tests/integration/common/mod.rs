//! A Ponder server and its demo model on 127.0.0.1:0, spoken to over real HTTP.

#![allow(dead_code)]

pub mod browser;
pub mod fixtures;
pub mod netns;
pub mod postgres;
pub mod process;
pub mod raw_http;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use futures::StreamExt;
use leptos::prelude::LeptosOptions;
use ponder::domain::TurnEvent;
use ponder::server::config::Config;
use ponder::server::state::AppState;
use ponder::wire::sse::TurnDecoder;

pub struct TestApp {
    pub addr: SocketAddr,
    pub state: Arc<AppState>,
    pub http: reqwest::Client,
}

impl TestApp {
    /// Starts Ponder with these variables (the demo model paced at 1 ms unless set).
    pub async fn spawn(vars: &[(&str, &str)]) -> TestApp {
        Self::spawn_in(vars, "target/site").await
    }

    /// Starts Ponder serving the site in `site_root`, over the same connection handling as the
    /// serving threads (header deadline, peer address for the guard).
    pub async fn spawn_in(vars: &[(&str, &str)], site_root: &str) -> TestApp {
        let mut map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        map.entry("PONDER_DEMO_DELAY_MS".into())
            .or_insert_with(|| "1".into());
        map.entry("PONDER_DATABASE_URL".into())
            .or_insert_with(temp_database);
        // The server reads PDFs and large images in a child process: this binary, not the test's.
        map.entry("PONDER_FILE_READER".into())
            .or_insert_with(|| env!("CARGO_BIN_EXE_ponder").into());
        // Where the machine's programs are (pdftoppm draws a PDF's pages), as a server finds them.
        if let Ok(path) = std::env::var("PATH") {
            map.entry("PATH".into()).or_insert(path);
        }
        let config = Config::from_lookup(|name| map.get(name).cloned()).expect("test config");
        let header_timeout = config.limits.header_timeout;
        let state = ponder::server::http::prepare(config).await.expect("state");
        let options = LeptosOptions::builder()
            .output_name("ponder")
            .site_root(site_root.to_string())
            .build();
        let app = ponder::site::router(state.clone(), options);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(ponder::server::http::socket::serve_in_place(
            listener,
            app,
            header_timeout,
            std::future::pending(),
        ));
        TestApp {
            addr,
            state,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
        }
    }

    /// Posts `body` to `path` as `user`, named by the trusted proxy's header
    /// (`PONDER_AUTH=header`).
    pub async fn post_as(
        &self,
        user: &str,
        path: &str,
        body: serde_json::Value,
    ) -> reqwest::Response {
        self.http
            .post(self.url(path))
            .header("Remote-User", user)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect(path)
    }

    /// [`Self::post_as`], expecting `200`; the body as JSON.
    pub async fn ok_as(
        &self,
        user: &str,
        path: &str,
        body: serde_json::Value,
    ) -> serde_json::Value {
        let response = self.post_as(user, path, body).await;
        assert_eq!(response.status(), 200, "{path}");
        response.json().await.expect("json")
    }

    pub fn url(&self, path: &str) -> String {
        format!(
            "http://{}{}{}",
            self.addr, self.state.config.base_path, path
        )
    }

    /// Posts a raw body to /api/chat.
    pub async fn post_chat(&self, body: String) -> reqwest::Response {
        self.http
            .post(self.url("/api/chat"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request")
    }

    /// Sends one user message and collects every event of the turn.
    pub async fn turn(&self, prompt: &str) -> Vec<TurnEvent> {
        let body =
            serde_json::json!({"messages": [{"role": "user", "content": prompt}]}).to_string();
        let response = self.post_chat(body).await;
        assert_eq!(response.status(), 200);
        after_start(read_events(response).await)
    }
}

/// The demo model's counts of requests (`started`, `completed`, `disconnected`, `active`).
pub async fn demo_stats(app: &TestApp) -> serde_json::Value {
    let base = app.state.upstream_base.trim_end_matches("/v1");
    app.http
        .get(format!("{base}/demo/stats"))
        .send()
        .await
        .expect("demo stats")
        .json()
        .await
        .expect("demo stats JSON")
}

/// Every wire format Ponder speaks, as `PONDER_PROVIDER` names them.
pub const PROVIDERS: [&str; 6] = [
    "openai",
    "anthropic",
    "responses",
    "gemini",
    "gemini-interactions",
    "ollama",
];

/// The events after the `started` event every turn begins with (checked here).
pub fn after_start(mut events: Vec<TurnEvent>) -> Vec<TurnEvent> {
    assert!(
        matches!(events.first(), Some(TurnEvent::Started { turn }) if !turn.is_empty()),
        "a turn starts with its id: {events:?}"
    );
    events.remove(0);
    events
}

/// A fresh SQLite file under `target/tmp/ponder-test-db`, as a database URL. The first call in a
/// process removes what test processes no longer running left there, so runs do not pile up.
pub fn temp_database() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    static SWEPT: std::sync::Once = std::sync::Once::new();
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ponder-test-db");
    SWEPT.call_once(|| sweep_left_databases(&root));
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = root.join(format!("{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    format!("sqlite://{}/ponder.db", dir.display())
}

/// Removes the databases of test processes that have ended (named `<pid>-<n>`).
fn sweep_left_databases(root: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let pid = name.split('-').next().unwrap_or_default();
        if !std::path::Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Reads an SSE response to its end, decoding turn events across any chunking.
pub async fn read_events(response: reqwest::Response) -> Vec<TurnEvent> {
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        decoder.push(&chunk.expect("chunk"), &mut events);
    }
    decoder.finish(&mut events);
    events
}

/// Reads a turn's stream to its end; once 40 characters of reasoning have arrived, calls `cut`
/// once with the turn's id (from its `started` event), as a reader pressing "Answer now" does.
/// Returns every event and whether `cut` was called.
pub async fn read_events_cutting<F, Fut>(
    response: reqwest::Response,
    cut: F,
) -> (Vec<TurnEvent>, bool)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    let mut stream = response.bytes_stream();
    let mut cut = Some(cut);
    while let Some(chunk) = stream.next().await {
        decoder.push(&chunk.expect("chunk"), &mut events);
        if thinking_text(&events).len() > 40 {
            if let (Some(cut), Some(TurnEvent::Started { turn })) = (cut.take(), events.first()) {
                cut(turn.clone()).await;
            }
        }
    }
    decoder.finish(&mut events);
    (events, cut.is_none())
}

pub fn thinking_text(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Thinking { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Where a stored turn is stored: its conversation and its answer's message, from its `turn`
/// event.
pub fn stored_at(events: &[TurnEvent]) -> (String, String) {
    events
        .iter()
        .find_map(|e| match e {
            TurnEvent::Turn {
                conversation,
                message,
                ..
            } => Some((conversation.clone(), message.clone())),
            _ => None,
        })
        .expect("a stored turn says where it is stored")
}

pub fn answer_text(events: &[TurnEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::Delta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Exactly one terminal event, and it is the last.
pub fn assert_one_terminal(events: &[TurnEvent]) {
    let terminals = events.iter().filter(|e| e.is_terminal()).count();
    assert_eq!(terminals, 1, "{events:#?}");
    assert!(
        events.last().is_some_and(TurnEvent::is_terminal),
        "{events:#?}"
    );
}

/// What the reader ends up with: all reasoning (in block order) and the answer. A `reclassify`
/// moves the answer so far into its block, as the page does.
pub fn reader_view(events: &[TurnEvent]) -> (String, String) {
    let mut blocks: Vec<(u32, String)> = Vec::new();
    let mut answer = String::new();
    for e in events {
        match e {
            TurnEvent::ThinkingStart { block, .. } => blocks.push((*block, String::new())),
            TurnEvent::Thinking { block, text } => {
                if let Some(b) = blocks.iter_mut().find(|b| b.0 == *block) {
                    b.1.push_str(text);
                }
            }
            TurnEvent::Delta { text } => answer.push_str(text),
            TurnEvent::Reclassify { block } => {
                if let Some(b) = blocks.iter_mut().find(|b| b.0 == *block) {
                    b.1.insert_str(0, &std::mem::take(&mut answer));
                }
            }
            _ => {}
        }
    }
    (blocks.into_iter().map(|b| b.1).collect(), answer)
}

/// A real PDF with one page per text (Helvetica, one line each), its cross-reference table
/// pointing at each object: what a reader's paper is, small.
#[allow(dead_code)]
pub fn pdf(pages: &[&str]) -> Vec<u8> {
    let n = pages.len();
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {n} >>",
            (0..n)
                .map(|i| format!("{} 0 R", 4 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".into(),
    ];
    for (i, text) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        let stream = format!("BT /F1 24 Tf 72 700 Td ({text}) Tj ET");
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    pdf_of(&objects)
}

/// A PDF of `objects` (numbered from 1; the first is the catalog) with its cross-reference table.
#[allow(dead_code)]
pub fn pdf_of(objects: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{body}\nendobj\n", i + 1).into_bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).into_bytes());
    for o in offsets {
        out.extend(format!("{o:010} 00000 n \n").into_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .into_bytes(),
    );
    out
}
