//! Upstreams that speak just enough HTTP/1.1 by hand to misbehave in ways a real server
//! library would not allow: endless lines, redirects, resets, bytes in any order.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the upstream received it.
#[derive(Clone, Debug, Default)]
pub struct Received {
    pub head: String,
    pub body: String,
}

/// Reads one request (head and `Content-Length` body); `None` once the peer has closed.
pub async fn read_request(socket: &mut TcpStream) -> Option<String> {
    read_whole_request(socket).await.map(|r| r.body)
}

/// Reads one request, head included.
pub async fn read_whole_request(socket: &mut TcpStream) -> Option<Received> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(Received {
                    head: text[..end].to_string(),
                    body: text[end + 4..].to_string(),
                });
            }
        }
    }
}

/// One HTTP/1.1 chunk of a chunked body.
pub fn http_chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// A hand-made upstream on 127.0.0.1:0: for each request, `respond` writes whatever it likes
/// to the socket. Every request received is kept, for the tests to see what reached it.
pub struct RawUpstream {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
}

impl RawUpstream {
    pub async fn start<F, Fut>(respond: F) -> RawUpstream
    where
        F: Fn(Received, TcpStream) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = received.clone();
        let respond = Arc::new(respond);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let seen = seen.clone();
                let respond = respond.clone();
                tokio::spawn(async move {
                    if let Some(request) = read_whole_request(&mut socket).await {
                        seen.lock().expect("lock").push(request.clone());
                        respond(request, socket).await;
                    }
                });
            }
        });
        RawUpstream { addr, received }
    }

    /// The base URL to give Ponder as `PONDER_UPSTREAM_URL` (OpenAI-compatible).
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }
}

/// The head of a streamed 200 response, chunked; these upstreams answer one request per
/// connection.
pub const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";

/// Writes `head` and then each piece as its own chunk; false once the peer has gone.
pub async fn write_chunks(socket: &mut TcpStream, head: &str, pieces: &[Vec<u8>]) -> bool {
    if socket.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    for piece in pieces {
        if socket.write_all(&http_chunk(piece)).await.is_err() {
            return false;
        }
        let _ = socket.flush().await;
    }
    true
}
