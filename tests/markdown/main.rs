//! The markdown renderer from the outside: XSS corpus, snapshots of ordinary markdown, and the
//! incremental renderer. One test binary, so one link on a small machine.

mod checker;
mod incremental;
mod math;
mod samples;
mod snapshots;
mod timing;
mod xss;
