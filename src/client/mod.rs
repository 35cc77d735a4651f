//! Client state, compiled on both sides:
//! - [`turn_state`]: the pure turn reducer; [`labels`] what a block says and announces;
//!   [`thinking_view`] when a block opens or closes by itself.
//! - [`decisions`]: the controller's pure rules (the history sent, the save-conflict rule,
//!   versions, edit, branch, regenerate), tested natively.
//! - [`date_groups`]: the conversation list's Today / Yesterday / Previous 7 days / Older.
//! - [`saved_chat`]: the saved-chat format; [`local_store`] its localStorage shell.
//! - [`controller`]: binds the server function, the reducer and storage to signals;
//!   [`turn_stream`] follows a turn's stream (a chunk of its own in the browser).
//! - [`tray`]: the files attached to the message being written.
//! - [`browser`]: the one place the browser and server builds differ (DOM, clock, request).

pub mod browser;
pub mod compare;
pub mod controller;
pub mod date_groups;
pub mod decisions;
pub mod find;
pub mod labels;
pub mod local_store;
pub mod saved_chat;
pub mod shortcuts;
pub mod thinking_view;
pub mod tray;
pub mod turn_state;
pub mod turn_stream;
pub mod usage_view;
