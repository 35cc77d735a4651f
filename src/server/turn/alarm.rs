//! One timer for a wait that is pushed back often (a turn's deadline and keep-alive, a
//! viewer's keep-alive): it is moved only when it has rung or is set later than asked, so a
//! frame does not cost a timer-wheel insert and removal. A ring before the asked time is for
//! the caller to check against the clock.

use std::pin::Pin;
use std::time::Instant;

use tokio::time::{sleep_until, Sleep};

/// Resolves at `at` or earlier (when the timer was set earlier and has not rung yet).
pub async fn ring(alarm: &mut Option<Pin<Box<Sleep>>>, at: Instant) {
    let at = tokio::time::Instant::from_std(at);
    let sleep = match alarm {
        Some(sleep) => {
            if sleep.is_elapsed() || sleep.deadline() > at {
                sleep.as_mut().reset(at);
            }
            sleep
        }
        None => alarm.insert(Box::pin(sleep_until(at))),
    };
    sleep.as_mut().await
}
