//! Serving: the listening socket, the serving threads, and the limits every client connection
//! lives under.
//!
//! One single-threaded runtime per core serves the connections it is handed, with its own HTTP
//! client to the upstream. A streaming turn is two sockets and two tasks (the upstream
//! connection's and the browser connection's) that wake each other for every event; on tokio's
//! work-stealing runtime a lone event also woke a second worker that found nothing to do, about a
//! quarter of Ponder's CPU per event at 100 streams. Here a browser connection, its turns and
//! their upstream connections live on one thread, so an event costs one wake-up, while the
//! accepting thread hands new connections to the threads in turn.
//!
//! Every connection gets `TCP_NODELAY`, a deadline for each request's headers (counted from when
//! the connection opened or its last response ended, so an idle keep-alive socket is closed
//! too), and a place among at most `max_connections`; past that a new connection is closed at
//! once. Slow or missing request bodies are the request guard's business.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tower::ServiceExt;

/// Connections waiting to be accepted that the kernel keeps (capped by `net.core.somaxconn`).
/// A burst of 1,000 clients overflowed the 128 that `TcpListener::bind` asks for, and the
/// clients that did not fit waited for SYN retransmits, a second or more.
pub const LISTEN_BACKLOG: u32 = 4096;

/// Unsent bytes the kernel queues on a client connection before a write has to wait. Without a
/// limit, send-buffer autotuning let a client that stopped reading hold up to 4 MB of its turn in
/// the kernel (tcp_wmem's maximum) before the upstream was paused. Bytes in flight, and so the
/// speed of a page load over a long path, stay the kernel's to tune.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub const UNSENT_LIMIT: u32 = 16 * 1024;

/// The listening socket: address reuse, a backlog of [`LISTEN_BACKLOG`], and the unsent-bytes
/// limit, which every accepted connection inherits from it.
pub fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = socket2::SockRef::from(&socket).set_tcp_notsent_lowat(UNSENT_LIMIT) {
        tracing::warn!(error = %e, "TCP_NOTSENT_LOWAT not set: a client that stops reading may hold more memory");
    }
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Raises the soft limit on open files to the hard one and returns the limit in force. With
/// the usual soft limit of 1,024, about 500 streaming turns (two sockets each) exhausted it and
/// every new client was locked out.
pub fn raise_open_files_limit() -> u64 {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return 1024;
            }
            if limit.rlim_cur < limit.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    limit.rlim_cur = limit.rlim_max;
                }
            }
        }
        #[allow(clippy::unnecessary_cast)]
        let open = limit.rlim_cur as u64;
        open
    }
    #[cfg(not(unix))]
    {
        1024
    }
}

/// The client connections that fit in `open_files`: each may carry a turn with an upstream
/// socket of its own, and some descriptors stay free for the process itself.
pub fn connections_for(open_files: u64) -> usize {
    (open_files.saturating_sub(64) / 2).clamp(16, 1_000_000) as usize
}

/// How the serving threads treat their connections.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    pub header_timeout: Duration,
    pub max_connections: usize,
}

type Handed = (std::net::TcpStream, SocketAddr, Slot);

/// The places for client connections, shared by every thread.
#[derive(Debug)]
struct Slots {
    used: AtomicUsize,
    max: usize,
    refused: AtomicUsize,
}

/// One connection's place; given back when the connection ends.
struct Slot(Arc<Slots>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.used.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Slots {
    fn take(self: &Arc<Self>) -> Option<Slot> {
        let mut used = self.used.load(Ordering::Acquire);
        loop {
            if used >= self.max {
                self.refused.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            match self.used.compare_exchange_weak(
                used,
                used + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(Slot(self.clone())),
                Err(now) => used = now,
            }
        }
    }
}

/// The serving threads, as the accepting thread sees them.
pub struct Shards {
    queues: Vec<mpsc::UnboundedSender<Handed>>,
    next: usize,
    stop: watch::Sender<bool>,
    finished: mpsc::Receiver<()>,
    slots: Arc<Slots>,
    last_refusal_log: Option<Instant>,
}

impl Shards {
    /// Starts `count` threads named `ponder-N`, each serving the router `make_app(N)` builds
    /// for it. `running` counts work that outlives its connection (turns nobody watches): a
    /// thread that is told to finish waits for it to reach zero as well.
    pub fn start(
        count: usize,
        limits: ConnectionLimits,
        running: watch::Receiver<usize>,
        make_app: impl Fn(usize) -> Result<Router, Box<dyn std::error::Error>>,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let (stop, _) = watch::channel(false);
        let (finished_tx, finished) = mpsc::channel(1);
        let slots = Arc::new(Slots {
            used: AtomicUsize::new(0),
            max: limits.max_connections.max(1),
            refused: AtomicUsize::new(0),
        });
        let mut queues = Vec::with_capacity(count);
        let (ready_tx, ready) = std::sync::mpsc::channel::<()>();
        for index in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let app = make_app(index)?;
            let (queue, handed) = mpsc::unbounded_channel();
            let stopped = stop.subscribe();
            let running = running.clone();
            let finished_tx = finished_tx.clone();
            let ready_tx = ready_tx.clone();
            std::thread::Builder::new()
                .name(format!("ponder-{index}"))
                .spawn(move || {
                    let _ = ready_tx.send(());
                    drop(ready_tx);
                    runtime.block_on(serve_handed(handed, app, limits, stopped, running));
                    drop(finished_tx);
                })?;
            queues.push(queue);
        }
        drop(ready_tx);
        // Every thread is running (and named) before the server says it listens.
        while ready.recv().is_ok() {}
        Ok(Shards {
            queues,
            next: 0,
            stop,
            finished,
            slots,
            last_refusal_log: None,
        })
    }

    /// Client connections refused because every place was taken.
    pub fn refused(&self) -> usize {
        self.slots.refused.load(Ordering::Relaxed)
    }

    /// Accepts connections until `until` resolves, handing each to the next thread; then
    /// closes the listening socket, so that new connections are refused at once.
    pub async fn accept(
        &mut self,
        listener: TcpListener,
        until: impl std::future::Future<Output = ()>,
    ) {
        tokio::pin!(until);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => self.hand(stream, peer),
                    Err(e) if is_connection_error(&e) => {}
                    Err(e) => {
                        // Out of file descriptors, typically: wait for some to close.
                        tracing::error!(error = %e, "cannot accept connections");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
                _ = &mut until => break,
            }
        }
    }

    fn hand(&mut self, stream: TcpStream, peer: SocketAddr) {
        let Some(slot) = self.slots.take() else {
            // Closing at once tells the client to come back later, and costs nothing to hold.
            if self
                .last_refusal_log
                .is_none_or(|at| at.elapsed() > Duration::from_secs(10))
            {
                self.last_refusal_log = Some(Instant::now());
                tracing::warn!(
                    max = self.slots.max,
                    refused = self.refused(),
                    "connection limit reached (PONDER_MAX_CONNECTIONS): new connections are closed"
                );
            }
            return;
        };
        let _ = stream.set_nodelay(true);
        let mut handed = match stream.into_std() {
            Ok(stream) => (stream, peer, slot),
            Err(e) => {
                tracing::warn!(error = %e, "a new connection could not be handed over; closed");
                return;
            }
        };
        for _ in 0..self.queues.len() {
            let queue = &self.queues[self.next];
            self.next = (self.next + 1) % self.queues.len();
            match queue.send(handed) {
                Ok(()) => return,
                Err(mpsc::error::SendError(back)) => handed = back,
            }
        }
        tracing::error!("no serving thread is running; connection closed");
    }

    /// Tells every thread to finish its connections (running turns go on, idle connections
    /// close) and waits until they have.
    pub async fn finish(mut self) {
        self.stop.send_replace(true);
        self.queues.clear();
        while self.finished.recv().await.is_some() {}
    }
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// One serving thread: serves each connection it is handed until told to stop, then waits for
/// its connections to finish, and for `running` to reach zero (turns run on the thread that
/// started them, whether or not a connection watches them).
async fn serve_handed(
    mut handed: mpsc::UnboundedReceiver<Handed>,
    app: Router,
    limits: ConnectionLimits,
    stopped: watch::Receiver<bool>,
    mut running: watch::Receiver<usize>,
) {
    let (open_tx, mut open) = mpsc::channel::<()>(1);
    let mut stopping = stopped.clone();
    loop {
        tokio::select! {
            next = handed.recv() => {
                let Some((stream, peer, slot)) = next else { break };
                let stream = match TcpStream::from_std(stream) {
                    Ok(stream) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "a handed-over connection could not be served; closed");
                        continue;
                    }
                };
                let app = app.clone();
                let stop = stopped.clone();
                let open = open_tx.clone();
                tokio::spawn(async move {
                    serve_connection(stream, peer, app, limits.header_timeout, stop).await;
                    drop((slot, open));
                });
            }
            _ = stopping.wait_for(|stop| *stop) => break,
        }
    }
    drop(open_tx);
    while open.recv().await.is_some() {}
    let _ = running.wait_for(|n| *n == 0).await;
}

/// Serves one client connection over HTTP/1.1 until it closes, or until `stop`, after which the
/// response in progress (a running turn) may finish and an idle connection closes at once.
pub async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    header_timeout: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        app.clone().oneshot(req.map(Body::new))
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = stop.wait_for(|stop| *stop) => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// Serves `app` on `listener` on the current runtime, as the serving threads do (same
/// timeouts), until `until` resolves; for tests and tools that need one server in-process.
pub async fn serve_in_place(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    until: impl std::future::Future<Output = ()>,
) {
    let (stop_tx, stop) = watch::channel(false);
    tokio::pin!(until);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_connection(stream, peer, app.clone(), header_timeout, stop.clone()));
            }
            _ = &mut until => break,
        }
    }
    stop_tx.send_replace(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limit is set on the listener; the design relies on accepted sockets inheriting it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[tokio::test]
    async fn accepted_connections_inherit_the_unsent_bytes_limit() {
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let lowat = socket2::SockRef::from(&accepted)
            .tcp_notsent_lowat()
            .unwrap();
        assert_eq!(lowat, UNSENT_LIMIT);
    }

    #[test]
    fn slots_refuse_past_the_maximum_and_come_back_when_dropped() {
        let slots = Arc::new(Slots {
            used: AtomicUsize::new(0),
            max: 2,
            refused: AtomicUsize::new(0),
        });
        let a = slots.take().unwrap();
        let _b = slots.take().unwrap();
        assert!(slots.take().is_none());
        assert_eq!(slots.refused.load(Ordering::Relaxed), 1);
        drop(a);
        assert!(slots.take().is_some());
    }

    #[test]
    fn connections_leave_room_for_upstream_sockets() {
        assert_eq!(connections_for(1024), 480);
        assert_eq!(connections_for(20_000), 9_968);
        assert_eq!(connections_for(10), 16);
    }
}
