//! A temporary chat: kept only in this tab (its sessionStorage) until the tab closes or
//! [`KEEP_MS`] pass untouched, never in the list, the page's address or the server's history.
//! Its turns go as a browser's history sends them (the whole history in each request, its files
//! inside it), whatever the page's history is; the server only answers them.

use leptos::prelude::*;

use super::backend::Backend;
use super::browser_history::BrowserHistory;
use super::history::History;
use super::{new_id, now_ms, ChatController, NoticeKind};
use crate::client::decisions;
use crate::client::local_store::{self, Shelf};
use crate::client::saved_chat::SavedChat;
use crate::domain::{ChatMessage, ChatRequest};

/// How long a temporary chat left untouched stays in its tab: a reload within it shows the chat
/// again; after it, or once the tab is closed, the chat is gone.
pub const KEEP_MS: f64 = 60.0 * 60.0 * 1000.0;

/// The tab's note of its temporary chat: its id and when it was last written.
const MARK_KEY: &str = "ponder.temporary.v1";

/// The mark's value is `<milliseconds since the epoch> <id>`: plain text, so that reading it
/// adds no parser to the page's first load.
struct Mark {
    id: String,
    at: u64,
}

fn mark_in(tab: &dyn Shelf) -> Option<Mark> {
    let text = tab.get(MARK_KEY)?;
    let (at, id) = text.split_once(' ')?;
    Some(Mark {
        id: id.to_string(),
        at: at.parse().ok()?,
    })
}

/// The id of the temporary chat `tab` holds, unless it was left untouched [`KEEP_MS`] by `now`.
pub fn kept_in(tab: &dyn Shelf, now: f64) -> Option<String> {
    mark_in(tab)
        .filter(|mark| (now - mark.at as f64).abs() < KEEP_MS)
        .map(|mark| mark.id)
}

/// Writes `record` as `tab`'s temporary chat, replacing any other.
fn keep_in(tab: &dyn Shelf, record: &SavedChat, now: f64) -> Result<(), local_store::SaveError> {
    if let Some(old) = mark_in(tab).filter(|old| old.id != record.chat.id) {
        local_store::remove(tab, &old.id);
    }
    local_store::save(tab, record)?;
    tab.set(MARK_KEY, &format!("{} {}", now as u64, record.chat.id))
}

/// Forgets `tab`'s temporary chat.
fn forget_in(tab: &dyn Shelf) {
    if let Some(mark) = mark_in(tab) {
        local_store::remove(tab, &mark.id);
    }
    tab.remove(MARK_KEY);
}

/// How the chat shown is kept, for what its turns do: by the page's history, or (a temporary
/// chat) by this tab alone, its turns asked as a browser's history asks them, with the
/// workspace whose instructions it follows. An enum rather than a third [`Backend`]: a temporary
/// chat has no list, workspaces or preferences of its own.
///
/// It holds the [`History`], not its `dyn Backend`: each call then names its backend's method
/// directly once inlined, and a method called only from a chunk's code stays in that chunk.
#[derive(Clone, Copy)]
pub(super) enum Keeper {
    History(History),
    Tab,
}

impl Keeper {
    pub(super) fn send_request(
        self,
        c: ChatController,
        text: String,
        history: Vec<ChatMessage>,
        edited: Option<String>,
    ) -> ChatRequest {
        match self {
            Keeper::History(h) => h.backend().send_request(c, text, history, edited),
            Keeper::Tab => ChatRequest {
                workspace: c.workspace.get_untracked(),
                ..BrowserHistory.send_request(c, text, history, edited)
            },
        }
    }

    pub(super) fn again_request(
        self,
        c: ChatController,
        server_id: Option<String>,
        history: Vec<ChatMessage>,
    ) -> ChatRequest {
        match self {
            Keeper::History(h) => h.backend().again_request(c, server_id, history),
            Keeper::Tab => ChatRequest {
                workspace: c.workspace.get_untracked(),
                ..BrowserHistory.again_request(c, server_id, history)
            },
        }
    }

    pub(super) fn retry_keeps_versions(self, server_id: Option<&str>) -> bool {
        match self {
            Keeper::History(h) => h.backend().retry_keeps_versions(server_id),
            Keeper::Tab => false,
        }
    }

    pub(super) fn keep_active_version(
        self,
        c: ChatController,
        server_id: Option<String>,
        index: usize,
    ) {
        if let Keeper::History(h) = self {
            h.backend().keep_active_version(c, server_id, index);
        }
    }

    /// A branch of a temporary chat is temporary too, and takes its place in the tab.
    pub(super) fn branch(self, c: ChatController, entry_id: &str, server_id: Option<String>) {
        match self {
            Keeper::History(h) => h.backend().branch(c, entry_id, server_id),
            Keeper::Tab => {
                let now = now_ms();
                let branched = decisions::branch(&c.record(now), entry_id, new_id(), now);
                c.show_as(branched, true);
                c.save();
            }
        }
    }

    pub(super) fn keep_block_choices(self, blocks: Vec<(String, usize, usize)>, open: bool) {
        if let Keeper::History(h) = self {
            h.backend().keep_block_choices(blocks, open);
        }
    }

    pub(super) fn turn_ended(self, c: ChatController) {
        if let Keeper::History(h) = self {
            h.backend().turn_ended(c);
        }
    }
}

impl ChatController {
    /// How the chat shown is kept: by the page's history, or (a temporary chat) by this tab.
    pub(super) fn keeper(&self) -> Keeper {
        if self.temporary.get_untracked() {
            Keeper::Tab
        } else {
            Keeper::History(self.history)
        }
    }

    /// The chat shown is kept in the server's history (this page's copy is a cache).
    pub(super) fn kept_on_server(&self) -> bool {
        self.history.on_server() && !self.temporary.get_untracked()
    }

    /// Makes the empty chat shown temporary, or not. Once it has a message it stays as it is:
    /// "New chat" leaves it (and forgets it).
    pub fn set_temporary(&self, on: bool) {
        if self.entries.with_untracked(Vec::is_empty) && !self.is_running() {
            self.temporary.set(on);
            // A temporary chat is not kept on the server, where a comparison's answers are.
            if on {
                self.compare.set(None);
            }
        }
    }

    /// Writes the temporary chat shown to this tab (never to the list or the server).
    pub(super) fn save_temporary(&self, now: f64) {
        let record = self.record(now);
        match keep_in(self.tab, &record, now) {
            Ok(()) => self.dismiss(NoticeKind::Save),
            Err(e) => self.notify(NoticeKind::Save, e.notice(self.locale.catalogue())),
        }
    }

    /// The chat shown is left: a temporary one is forgotten with it.
    pub(super) fn end_temporary(&self) {
        if self.temporary.get_untracked() {
            forget_in(self.tab);
            self.temporary.set(false);
        }
    }

    /// The temporary chat this tab still holds, if any (the page was reloaded).
    pub(super) fn temporary_in_tab(&self) -> Option<String> {
        let kept = kept_in(self.tab, now_ms());
        if kept.is_none() {
            forget_in(self.tab);
        }
        kept
    }

    /// Shows the temporary chat `id` this tab holds, read with `local`.
    pub(super) fn restore_temporary(&self, local: super::LocalChats, id: &str) {
        match local.load(self.tab, id) {
            Some(record) => self.show_as(record, true),
            None => forget_in(self.tab),
        }
    }
}
