//! The integration tests, one binary: one link and one PostgreSQL cluster for them all rather
//! than one of each per file. Each module is the file of the same name; run one with
//! `cargo test --no-default-features --features ssr --test integration <module>::`.
//! (`tests/attachments.rs` stays a binary of its own: it reads its own process's memory.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

mod common;

mod accounts;
mod chat_api;
mod compare;
mod faults;
mod hardening;
mod hostile;
mod instructions;
mod models;
mod openapi;
mod ops;
mod organise;
mod pages;
mod partition;
mod presets;
mod providers;
mod providers_http;
mod reasoning_shapes;
mod replay;
mod replicas;
mod resume;
mod rich_hostile;
mod sampling;
mod shares;
mod sso;
mod sso_store;
mod store;
mod store_faults;
mod store_hardening;
mod terminal;
mod titles;
mod usage;
