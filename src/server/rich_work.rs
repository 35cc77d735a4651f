//! Where the rich-content converters run ([`super::rich`]): on a few dedicated threads with big
//! stacks, off the serving threads, stopped when the request that asked is gone, and with a cap
//! on how much highlighting one user may have under way.
//!
//! A serving thread's stack (and `spawn_blocking`'s) is 2 MiB; the formula converter recurses
//! once per nesting level. The nesting limit keeps formulas shallow, and the big stack is the
//! second wall should a construct escape the measure. Each job gets its own thread, and at most
//! [`workers`] run at once, so the threads stay few whatever arrives.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;

/// The stack of a converter thread: the formula converter at the nesting limit uses a few MiB
/// in a debug build, so this leaves a margin of some thousands of levels. Only the pages it
/// touches are memory.
pub const WORKER_STACK: usize = 64 * 1024 * 1024;

/// How many code highlightings one user may have running at once.
pub const RUNNING_PER_USER: usize = 2;

/// How many more may wait for one of those places; past that the request is refused with 429.
/// A browser opens at most six connections to one server, so a page asking for every block of
/// a long chat at once waits rather than being refused.
pub const WAITING_PER_USER: usize = 8;

/// How many users may have highlighting under way at once (the map of users stays bounded);
/// past that a new user's request is refused with 429.
pub const MAX_USERS: usize = 4096;

/// How many converter threads may run at once: the machine's cores, at least two.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

fn pool() -> Arc<Semaphore> {
    static POOL: OnceLock<Arc<Semaphore>> = OnceLock::new();
    POOL.get_or_init(|| Arc::new(Semaphore::new(workers())))
        .clone()
}

/// Sets the flag when dropped: the handler's future is dropped when its client goes away.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `job` on a converter thread once one of the [`workers`] places is free, and returns
/// what it returns. `job` gets a flag set when this future is dropped (the client went away)
/// and should stop soon after; the place stays taken until the thread has ended. 503 when no
/// thread could be started.
pub async fn run<T, F>(job: F) -> Result<T, Failure>
where
    T: Send + 'static,
    F: FnOnce(&AtomicBool) -> T + Send + 'static,
{
    let cancelled = Arc::new(AtomicBool::new(false));
    let _cancel = CancelOnDrop(cancelled.clone());
    let place = pool().acquire_owned().await.map_err(|_| busy_server())?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    worker()
        .spawn(move || {
            let _place = place;
            let _ = tx.send(job(&cancelled));
        })
        .map_err(|_| busy_server())?;
    rx.await
        .map_err(|_| Failure::new("the content could not be converted", true))
}

fn worker() -> std::thread::Builder {
    std::thread::Builder::new()
        .name("ponder-rich".into())
        .stack_size(WORKER_STACK)
}

/// Runs `job` on a converter thread, as [`run`] does, and waits for it here: for callers with
/// no runtime (the fuzz targets). `None` when no thread could be started or `job` panicked.
pub fn run_here<T, F>(job: F) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    worker().spawn(job).ok()?.join().ok()
}

fn busy_server() -> Failure {
    Failure::of(ErrorCode::ServerBusy, true).said()
}

/// One user's highlighting places, and how many of that user's requests hold or wait for one.
struct UserPlaces {
    running: Arc<Semaphore>,
    in_house: usize,
}

fn users() -> &'static Mutex<HashMap<String, UserPlaces>> {
    static USERS: OnceLock<Mutex<HashMap<String, UserPlaces>>> = OnceLock::new();
    USERS.get_or_init(Mutex::default)
}

/// One of a user's [`RUNNING_PER_USER`] places; the user's count drops when it is dropped.
pub struct UserPlace {
    _running: OwnedSemaphorePermit,
    _counted: InHouse,
}

/// Counts one request out again, also when it is dropped while still waiting.
struct InHouse(String);

impl Drop for InHouse {
    fn drop(&mut self) {
        let mut map = users().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(places) = map.get_mut(&self.0) {
            places.in_house = places.in_house.saturating_sub(1);
            if places.in_house == 0 {
                map.remove(&self.0);
            }
        }
    }
}

/// Waits for one of `user`'s highlighting places. 429 (`rate_limited`, retryable) at once when
/// the user already has [`RUNNING_PER_USER`] running and [`WAITING_PER_USER`] waiting, or when
/// [`MAX_USERS`] other users have highlighting under way.
pub async fn user_place(user: &str) -> Result<UserPlace, Failure> {
    let running = {
        let mut map = users().lock().unwrap_or_else(PoisonError::into_inner);
        if !map.contains_key(user) && map.len() >= MAX_USERS {
            return Err(too_many("the server is highlighting for too many people"));
        }
        let places = map.entry(user.to_string()).or_insert_with(|| UserPlaces {
            running: Arc::new(Semaphore::new(RUNNING_PER_USER)),
            in_house: 0,
        });
        if places.in_house >= RUNNING_PER_USER + WAITING_PER_USER {
            return Err(too_many("too much code is being highlighted for you"));
        }
        places.in_house += 1;
        places.running.clone()
    };
    let counted = InHouse(user.to_string());
    let permit = running.acquire_owned().await.map_err(|_| busy_server())?;
    Ok(UserPlace {
        _running: permit,
        _counted: counted,
    })
}

fn too_many(why: &str) -> Failure {
    Failure::of(ErrorCode::RateLimited, true)
        .with("detail", why)
        .with("retry_after", 1)
        .said()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_users_places_are_capped_and_given_back() {
        let user = "rich-work-test-user";
        let mut held = Vec::new();
        for _ in 0..RUNNING_PER_USER {
            held.push(user_place(user).await.unwrap());
        }
        let mut waiting = Vec::new();
        for _ in 0..WAITING_PER_USER {
            let user = user.to_string();
            waiting.push(tokio::spawn(async move { user_place(&user).await.is_ok() }));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let refused = user_place(user).await.err().unwrap();
        assert_eq!(refused.code, ErrorCode::RateLimited);
        assert!(user_place("someone-else").await.is_ok());
        held.clear();
        for w in waiting {
            assert!(w.await.unwrap());
        }
        assert!(!users().lock().unwrap().contains_key(user));
    }

    #[tokio::test]
    async fn a_dropped_caller_sets_the_flag_and_the_thread_ends() {
        let (seen_tx, seen_rx) = std::sync::mpsc::channel();
        let job = run(move |cancelled| {
            while !cancelled.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            let _ = seen_tx.send(());
        });
        let _ = tokio::time::timeout(std::time::Duration::from_millis(100), job).await;
        assert!(seen_rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .is_ok());
    }
}
