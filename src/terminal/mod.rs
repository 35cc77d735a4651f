//! The terminal client: `ponder chat` (a full-screen chat that shows each thinking block live)
//! and `ponder ask` (one question for scripts). It speaks the same turn contract as the browser,
//! through `POST /api/chat`, so every provider works through it, and folds the events with the
//! browser's own reducer ([`crate::client::turn_state`]).
//!
//! - [`text`]: display-safe, width-correct text (hostile output never drives the terminal).
//! - [`markdown`]: answers as styled terminal lines.
//! - [`view`]: the transcript and the lines it draws (headers, live lines, modes, replay).
//! - [`settings`]: the small config file that keeps the mode.
//! - [`client`]: the API over HTTP; [`follow`]: one turn's stream, rejoined when it breaks;
//!   [`local`]: which server, or one started in-process.
//! - [`transcript`]: the items shown, and their lines laid out once.
//! - [`app`]: the `ponder chat` shell (ratatui), its keys (`keys`) and painting (`draw`);
//!   [`ask`]: `ponder ask` for scripts; [`attach`]: files sent with a message.

pub mod app;
pub mod ask;
pub mod attach;
pub mod client;
mod compare;
mod draw;
pub mod error;
pub mod follow;
mod keys;
pub mod live;
pub mod local;
pub mod markdown;
pub mod settings;
pub mod share;
pub mod text;
mod trace;
pub mod transcript;
pub mod view;

/// The terminal's language (`LC_ALL`, `LC_MESSAGES`, `LANG`), read once.
pub fn locale() -> crate::i18n::Locale {
    static LOCALE: std::sync::OnceLock<crate::i18n::Locale> = std::sync::OnceLock::new();
    *LOCALE.get_or_init(|| crate::i18n::Locale::from_posix(|name| std::env::var(name).ok()))
}
