//! The server-function boundary. It compiles on both sides: the browser calls these functions,
//! the server runs them.

pub mod account;
pub mod chat;
pub mod codec;
pub mod compare;
pub mod error;
pub mod history;
pub mod instructions;
pub mod models;
#[cfg(feature = "ssr")]
pub mod openapi;
pub mod presets;
pub mod rich;
pub mod share;
pub mod turn;
pub mod usage;
