//! Where the page's saved conversations live, as one interface: the browser's
//! (`browser_history`) or the server's (`server_history`), chosen once (`history::History`).

use super::chunks::LocalChats;
use super::ChatController;
use crate::client::decisions::SavePlan;
use crate::client::saved_chat::{SavedChat, Settings};
use crate::client::thinking_view::ThinkingPref;
use crate::domain::ChatRequest;
use crate::i18n::Locale;

/// What the page does with its saved conversations that depends on where they live. Each
/// operation is called after the part both backends share (see the methods of
/// [`ChatController`] of the same name).
pub(super) trait Backend: Sync {
    /// The conversations are on the server (messages get server ids; the page's copy is a cache).
    fn on_server(&self) -> bool;
    /// Starts what the first load needs before this browser's copies can be read.
    fn begin_load(&self, c: ChatController, settings: &Settings);
    /// The first load, with this browser's copies readable: the list and the last chat shown.
    fn load(&self, c: ChatController, local: LocalChats, settings: &Settings);
    /// Re-reads the list.
    fn refresh_list(&self, c: ChatController);
    /// Shows conversation `id` (the page has left the one shown).
    fn open(&self, c: ChatController, id: String);
    /// Shows conversation `id` again as stored (a search result in the chat shown, or a turn
    /// whose log is gone).
    fn reload(&self, c: ChatController, id: String, join: bool);
    fn rename(&self, c: ChatController, id: String, title: String);
    /// Deletes `id` (this browser's copy is already gone, and a new chat shown if it was open).
    fn delete(&self, c: ChatController, id: String);
    fn undo_delete(&self, c: ChatController, id: String);
    /// Brings in at least `count` earlier messages of the chat shown.
    fn load_earlier(&self, c: ChatController, count: usize);
    /// `done` gets the open chat as it should be exported.
    fn export(&self, c: ChatController, done: Box<dyn FnOnce(SavedChat)>);
    /// Keeps a chat read from an export.
    fn import(&self, c: ChatController, local: LocalChats, record: SavedChat);
    /// Sends this browser's older chats to the server.
    fn import_local(&self, c: ChatController, records: Vec<SavedChat>);
    fn refresh_workspaces(&self, c: ChatController);
    fn load_preferences(&self, c: ChatController);
    fn create_workspace(&self, c: ChatController, name: String);
    fn rename_workspace(&self, c: ChatController, id: String, name: String);
    /// Starts fetching the list's rarer actions (one is about to be used).
    fn want_list_actions(&self);
    /// Keeps the thinking preference beyond this browser.
    fn keep_pref(&self, c: ChatController, pref: ThinkingPref);
    /// Keeps the language beyond this browser, then reloads the page.
    fn keep_locale(&self, c: ChatController, locale: Locale);
    /// How this browser's copy of a chat is written, given the write count stored now.
    fn save_plan(&self, stored_rev: Option<u64>, rev: u64) -> SavePlan;
    /// The request that sends `text` after `history` (the messages before it), replacing the
    /// message `edited` (its server id) when one is edited.
    fn send_request(
        &self,
        c: ChatController,
        text: String,
        history: Vec<crate::domain::ChatMessage>,
        edited: Option<String>,
    ) -> ChatRequest;
    /// The request that answers the message `server_id` again, after `history`.
    fn again_request(
        &self,
        c: ChatController,
        server_id: Option<String>,
        history: Vec<crate::domain::ChatMessage>,
    ) -> ChatRequest;
    /// A retried answer stays as a version of its own (the server keeps the failed one).
    fn retry_keeps_versions(&self, server_id: Option<&str>) -> bool;
    /// Keeps which version of the message `server_id` is shown.
    fn keep_active_version(&self, c: ChatController, server_id: Option<String>, index: usize);
    /// A new conversation holding the history up to and including `entry`.
    fn branch(&self, c: ChatController, entry_id: &str, server_id: Option<String>);
    /// Keeps the reader's choice to open or close blocks `(message, version, block)`.
    fn keep_block_choices(&self, blocks: Vec<(String, usize, usize)>, open: bool);
    /// A turn ended and was saved.
    fn turn_ended(&self, c: ChatController);
}
