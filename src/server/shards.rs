//! Serving threads: one single-threaded runtime per core, each serving the connections it is
//! handed, with its own HTTP client to the upstream.
//!
//! A streaming turn is two sockets and two tasks (the upstream connection's and the browser
//! connection's) that wake each other for every event. On tokio's work-stealing runtime a lone
//! event also woke a second worker that found nothing to do, about a quarter of Ponder's CPU per
//! event at 100 streams. Here a browser connection, its turns and their upstream connections
//! live on one thread, so an event costs one wake-up, while the accepting thread hands new
//! connections to the threads in turn so that every core takes a share of the streams.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::Listener;
use leptos::prelude::LeptosOptions;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

use super::state::AppState;

type Handed = (std::net::TcpStream, SocketAddr);

/// The serving threads, as the accepting thread sees them.
pub struct Shards {
    queues: Vec<mpsc::UnboundedSender<Handed>>,
    next: usize,
    stop: watch::Sender<bool>,
    finished: mpsc::Receiver<()>,
}

impl Shards {
    /// Starts `count` threads serving the app, each with its own copy of `state`'s HTTP client.
    pub fn start(
        count: usize,
        state: &AppState,
        options: &LeptosOptions,
        local_addr: SocketAddr,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let (stop, _) = watch::channel(false);
        let (finished_tx, finished) = mpsc::channel(1);
        let mut queues = Vec::with_capacity(count);
        for index in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let app = super::http::router(Arc::new(state.with_own_client()?), options.clone());
            let (queue, handed) = mpsc::unbounded_channel();
            let listener = Handoff { handed, local_addr };
            let mut stopped = stop.subscribe();
            let finished_tx = finished_tx.clone();
            std::thread::Builder::new()
                .name(format!("ponder-{index}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        let serving =
                            axum::serve(listener, app).with_graceful_shutdown(async move {
                                let _ = stopped.wait_for(|stop| *stop).await;
                            });
                        if let Err(e) = serving.await {
                            tracing::error!(error = %e, thread = index, "serving thread failed");
                        }
                    });
                    drop(finished_tx);
                })?;
            queues.push(queue);
        }
        Ok(Shards {
            queues,
            next: 0,
            stop,
            finished,
        })
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
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                },
                _ = &mut until => break,
            }
        }
    }

    fn hand(&mut self, stream: TcpStream, peer: SocketAddr) {
        let mut handed = match stream.into_std() {
            Ok(stream) => (stream, peer),
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

    /// Tells every thread to finish its connections (running turns go on) and waits until
    /// they have.
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

/// A serving thread's side of the hand-over: connections the accepting thread passed to it,
/// registered with this thread's runtime as they are taken.
struct Handoff {
    handed: mpsc::UnboundedReceiver<Handed>,
    local_addr: SocketAddr,
}

impl Listener for Handoff {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            let Some((stream, peer)) = self.handed.recv().await else {
                // The server is stopping: the graceful shutdown ends the serve loop.
                return std::future::pending().await;
            };
            match TcpStream::from_std(stream) {
                Ok(stream) => return (stream, peer),
                Err(e) => {
                    tracing::warn!(error = %e, "a handed-over connection could not be served; closed")
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local_addr)
    }
}
