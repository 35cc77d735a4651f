//! The markdown renderer from the outside: XSS corpus, snapshots of ordinary markdown, and the
//! incremental renderer. One test binary, so one link on a small machine.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

mod ammonia;
mod checker;
mod incremental;
mod math;
mod samples;
mod snapshots;
mod timing;
mod xss;
