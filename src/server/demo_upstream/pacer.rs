//! The pacer: writes a rendered reply chunk by chunk on the token delay's schedule, pauses,
//! cuts or stalls where the script says, and counts how each stream ended.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

/// What the pacer writes: chunks paced by the token delay, or control steps.
#[derive(Clone, Debug, PartialEq)]
pub enum Emit {
    Chunk(Bytes),
    Pause(Duration),
    Cut,
    Stall,
}

/// Counters the tests read at `GET /demo/stats` to see what the model saw.
#[derive(Default, Debug)]
pub struct DemoStats {
    pub started: AtomicU64,
    pub completed: AtomicU64,
    pub disconnected: AtomicU64,
    pub active: AtomicU64,
}

struct StreamGuard {
    stats: Arc<DemoStats>,
    finished: bool,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.stats.active.fetch_sub(1, Ordering::SeqCst);
        if self.finished {
            self.stats.completed.fetch_add(1, Ordering::SeqCst);
        } else {
            self.stats.disconnected.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// How far behind its schedule the pacer may fall and still catch up.
const MAX_CATCH_UP: Duration = Duration::from_millis(100);

/// How long a cut waits before the connection drops: the HTTP server writes out what it has
/// buffered only once the body stops yielding, so without the wait the last chunks before a
/// cut (the start of the answer) were sometimes dropped with the connection instead of sent.
const CUT_AFTER: Duration = Duration::from_millis(50);

struct Pacer {
    emits: std::vec::IntoIter<Emit>,
    guard: StreamGuard,
    /// When the next chunk is due (`None` before the first one). Chunks keep to a schedule
    /// rather than sleeping `delay` after each write: timers overshoot by up to a millisecond,
    /// which would turn a 5 ms pace (200 deltas/s) into about 170 a second.
    due: Option<tokio::time::Instant>,
    delay: Duration,
}

impl Pacer {
    async fn next(&mut self) -> Option<std::io::Result<Bytes>> {
        loop {
            match self.emits.next() {
                None => {
                    self.guard.finished = true;
                    return None;
                }
                Some(Emit::Chunk(bytes)) => {
                    if !self.delay.is_zero() {
                        if let Some(due) = self.due {
                            tokio::time::sleep_until(due).await;
                        }
                        let now = tokio::time::Instant::now();
                        // Late chunks catch up, but a reader that fell far behind gets no burst.
                        let on_time = match self.due {
                            Some(due) if now <= due + MAX_CATCH_UP => due,
                            _ => now,
                        };
                        self.due = Some(on_time + self.delay);
                    }
                    return Some(Ok(bytes));
                }
                Some(Emit::Pause(d)) => {
                    tokio::time::sleep(d).await;
                    self.due = self.due.map(|_| tokio::time::Instant::now() + self.delay);
                }
                Some(Emit::Cut) => {
                    tokio::time::sleep(CUT_AFTER).await;
                    self.guard.finished = true;
                    return Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "demo: connection dropped",
                    )));
                }
                Some(Emit::Stall) => std::future::pending::<()>().await,
            }
        }
    }
}

/// Streams `emits` with `delay` before each chunk, counting how the stream ends.
pub fn stream_response(
    emits: Vec<Emit>,
    delay: Duration,
    stats: Arc<DemoStats>,
    content_type: &'static str,
) -> Response {
    stats.started.fetch_add(1, Ordering::SeqCst);
    stats.active.fetch_add(1, Ordering::SeqCst);
    let pacer = Pacer {
        emits: emits.into_iter(),
        guard: StreamGuard {
            stats,
            finished: false,
        },
        due: None,
        delay,
    };
    let body = futures::stream::unfold(pacer, |mut pacer| async move {
        let item = pacer.next().await?;
        Some((item, pacer))
    })
    .boxed();
    Response::builder()
        .header("content-type", content_type)
        .header("cache-control", "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
