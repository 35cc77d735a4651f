//! Everything that runs only on the server: configuration, the upstream adapters, the turn
//! pipeline, the built-in demo model and the HTTP application around them.

pub mod accounts;
pub mod auth;
pub mod cli;
pub mod config;
pub mod demo_upstream;
pub mod dress;
pub mod extract;
pub mod http;
pub mod instructions;
pub mod models;
pub mod oidc;
pub mod outcome;
pub mod providers;
pub mod rate_limit;
pub mod redact;
pub mod rich;
pub mod rich_work;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod titles;
pub mod turn;
