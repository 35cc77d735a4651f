//! The saved conversations: the list, opening one, rename, delete and undo, workspaces, import
//! and export. Where they live is one [`Backend`], chosen once when the page starts: this
//! browser's localStorage ([`super::browser_history`]) or the server
//! ([`super::server_history`]). What both do alike is here.

use leptos::prelude::*;
use leptos::task::spawn_local;

pub(super) use super::backend::Backend;
use super::browser_history::BrowserHistory;
use super::chunks::LocalChats;
use super::server_history::ServerHistory;
use super::{now_ms, ChatController, NoticeKind};
use crate::client::browser;
use crate::client::local_store::{self, SaveError};
use crate::client::saved_chat::{self, carried, SavedChat};
use crate::client::tray::{outcome, Upload};
use crate::domain::account::Me;
use crate::domain::attachment::{FileRef, UPLOAD_PATH};

/// The upload keys of an import's files, counting down (the tray's count up from 0).
const IMPORT_UPLOADS: u32 = u32::MAX;

/// Where the page's conversations live, chosen once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum History {
    Browser,
    Server,
}

static BROWSER: BrowserHistory = BrowserHistory;
static SERVER: ServerHistory = ServerHistory;

impl History {
    pub(super) fn chosen(server: bool) -> Self {
        if server {
            History::Server
        } else {
            History::Browser
        }
    }

    pub(super) fn backend(self) -> &'static dyn Backend {
        match self {
            History::Browser => &BROWSER,
            History::Server => &SERVER,
        }
    }

    pub(super) fn on_server(self) -> bool {
        self.backend().on_server()
    }
}

impl ChatController {
    /// Reads settings and saved chats (this browser's copies first, once they can be read), then
    /// asks the server who is signed in and, with server-side history, takes the list and the
    /// open chat from there. Called once, after hydration.
    pub fn load_saved(&self) {
        let this = *self;
        Effect::new(move |_| {
            if !this.opening.get() {
                if let Some(text) = this.held.try_update_value(Option::take).flatten() {
                    this.send(text);
                }
            }
        });
        if !self.shelf.available() {
            self.notify(
                NoticeKind::Storage,
                SaveError::Unavailable.notice(self.locale.catalogue()),
            );
        }
        let mut settings = local_store::load_settings(self.shelf);
        // The page's address names the chat to show; the base path shows this tab's temporary
        // chat when it holds one, else the last one.
        let mut temporary = None;
        if let Some(id) = self.addressed() {
            settings.last_conversation = Some(id.clone());
            self.arrived.set_value(Some(id));
        } else {
            temporary = self.temporary_in_tab();
            if temporary.is_some() {
                settings.last_conversation = None;
            }
        }
        self.pref.set(settings.thinking);
        let needs_sign_in = self
            .me
            .with_untracked(|me| me.as_ref().is_some_and(Me::must_sign_in));
        // The models are the signed-in reader's to ask for (the page reloads after sign-in).
        if !needs_sign_in {
            self.load_models();
        }
        if settings.new_chat_model == crate::domain::reasoning::NewChatModel::LastUsed {
            self.model.set(settings.last_model.clone());
        }
        self.backend().begin_load(*self, &settings);
        let this = *self;
        self.reading_local_chats(true, move |local| {
            if needs_sign_in {
                this.opening.set(false);
                this.forget_account(local);
                // Whether this is the first visit (the form then creates the admin).
                spawn_local(async move {
                    if let Ok(me) = crate::api::account::who_am_i().await {
                        this.me.set(Some(me));
                    }
                });
            } else {
                this.backend().load(this, local, &settings);
                if let Some(id) = &temporary {
                    this.restore_temporary(local, id);
                }
            }
            this.loaded.set(true);
        });
    }

    /// Starts fetching a chat's code beside the saved chats' reader (a chat is about to be
    /// shown).
    pub(super) fn want_stored_chat(&self) {
        spawn_local(async {
            let _ = super::server_history::stored_chat::stored_chat().await;
        });
    }

    /// Re-reads the list of saved conversations.
    pub fn refresh_list(&self) {
        self.backend().refresh_list(*self);
    }

    /// Opens a saved conversation. A turn running on the server goes on there; one that lives
    /// only in this page stops.
    pub fn open(&self, id: &str) {
        self.arrived.set_value(None);
        self.open_saved(id);
    }

    pub(super) fn open_saved(&self, id: &str) {
        if self.conversation_id.get_untracked() == id {
            return;
        }
        self.leave();
        self.backend().open(*self, id.to_string());
    }

    /// Opens the conversation of a search result and brings the message into view, its thinking
    /// open when the match is there, the match highlighted.
    pub fn open_hit(&self, conversation: String, reveal: super::Reveal) {
        self.arrived.set_value(None);
        self.reveal.set(Some(reveal));
        if self.conversation_id.get_untracked() == conversation {
            self.backend().reload(*self, conversation, true);
        } else {
            self.open_saved(&conversation);
        }
    }

    pub fn rename(&self, id: &str, title: String) {
        let title = title.trim().to_string();
        if !title.is_empty() {
            self.backend().rename(*self, id.to_string(), title);
        }
    }

    /// Deletes a conversation. On the server it can be restored until the purge: a notice
    /// offers Undo.
    pub fn delete(&self, id: &str) {
        local_store::remove(self.shelf, id);
        if id == self.conversation_id.get_untracked() {
            self.new_chat();
        }
        self.backend().delete(*self, id.to_string());
    }

    /// Undoes a delete (server-side history), and opens the conversation again.
    pub fn undo_delete(&self, id: String) {
        self.backend().undo_delete(*self, id);
    }

    /// Brings in at least `count` of the messages kept on the server before the first entry
    /// (one request at a time); what the reader sees does not move.
    pub fn load_earlier(&self, count: usize) {
        if self.earlier.get_untracked() == 0 || self.loading_earlier.get_value() {
            return;
        }
        self.backend().load_earlier(*self, count);
    }

    /// Starts fetching the list's actions when one is about to be used (a row's menu item, a
    /// workspace form), so that it does not wait for the network.
    pub fn want_list_actions(&self) {
        self.backend().want_list_actions();
    }

    /// Re-reads the workspaces; the first is shown unless one is chosen.
    pub fn refresh_workspaces(&self) {
        self.backend().refresh_workspaces(*self);
    }

    /// Shows another workspace: its conversations, and a new chat in it.
    pub fn switch_workspace(&self, id: String) {
        if self.workspace.get_untracked().as_deref() == Some(id.as_str()) {
            return;
        }
        self.workspace.set(Some(id));
        self.new_chat();
        self.refresh_list();
        self.backend().load_preferences(*self);
    }

    /// Makes a workspace and shows it.
    pub fn create_workspace(&self, name: String) {
        self.backend().create_workspace(*self, name);
    }

    /// Renames the workspace shown.
    pub fn rename_workspace(&self, name: String) {
        if let Some(id) = self.workspace.get_untracked() {
            self.backend().rename_workspace(*self, id, name);
        }
    }

    /// The reader does not want this browser's older chats imported: they stay in localStorage,
    /// untouched, and the offer is not made again in this browser.
    pub fn decline_import(&self) {
        self.importable.set(0);
        let mut settings = local_store::load_settings(self.shelf);
        settings.import_declined = true;
        if let Err(e) = local_store::save_settings(self.shelf, &settings) {
            self.notify(NoticeKind::Save, e.notice(self.locale.catalogue()));
        }
    }

    /// This browser's chats that are not copies of the server's: the ones to import.
    pub(super) fn importable_records(&self, local: LocalChats) -> Vec<SavedChat> {
        local
            .load_all(self.shelf, now_ms())
            .0
            .into_iter()
            .filter(|r| !saved_chat::is_server_copy(r))
            .collect()
    }

    /// Nobody is signed in: this browser forgets its copies of the last account's server chats
    /// and which chat was open (chats saved here before server-side history stay). The sign-in
    /// page shows no chat, and the tab is titled "Ponder".
    fn forget_account(&self, local: LocalChats) {
        for record in local.load_all(self.shelf, now_ms()).0 {
            if saved_chat::is_server_copy(&record) {
                local_store::remove(self.shelf, &record.chat.id);
            }
        }
        let mut settings = local_store::load_settings(self.shelf);
        let gone = settings
            .last_conversation
            .as_deref()
            .is_some_and(|id| local.load(self.shelf, id).is_none());
        if gone {
            settings.last_conversation = None;
            if let Err(e) = local_store::save_settings(self.shelf, &settings) {
                self.notify(NoticeKind::Save, e.notice(self.locale.catalogue()));
            }
        }
    }

    /// Sends the chats saved in this browser before server-side history to the server (each
    /// once: importing twice makes nothing new), then lists them from there.
    pub fn import_local(&self) {
        let this = *self;
        self.with_local_chats(move |local| {
            let records = this.importable_records(local);
            if !records.is_empty() {
                this.backend().import_local(this, records);
            }
        });
    }

    /// The open chat as it should be exported: the server's copy (every version, all reasoning)
    /// when it is stored there, else this page's. `done` gets the record and a notice when the
    /// server could not be asked and this page's copy was used instead.
    pub fn exportable(&self, done: impl FnOnce(SavedChat) + 'static) {
        self.backend().export(*self, Box::new(done));
    }

    /// Reads a JSON export back: onto the server (importing the same file twice makes nothing
    /// new) or, with history in this browser, as a saved chat here, under a new id when one with
    /// its id is already saved.
    pub fn import_export(&self, raw: String) {
        let this = *self;
        self.with_export_reader(move |local| match local.parse_export(&raw) {
            Ok(mut record) => {
                // In this browser the files stay carried in the saved chat.
                if !this.backend().on_server() {
                    return this.backend().import(this, local, record);
                }
                let carried = carried::take_carried(&mut record);
                if carried.is_empty() {
                    return this.backend().import(this, local, record);
                }
                spawn_local(async move {
                    this.keep_carried(&mut record, carried).await;
                    this.backend().import(this, local, record);
                });
            }
            Err(e) => this.notify(
                NoticeKind::Server,
                this.say(|c| c.not_an_export, &e.0.to_string()),
            ),
        });
    }

    /// The record with the bytes of its files, for a JSON export (a file that cannot be had
    /// goes without its bytes).
    pub fn carry_files(&self, mut record: SavedChat, done: Box<dyn FnOnce(SavedChat)>) {
        let files = carried::named_files(&record);
        if files.is_empty() {
            return done(record);
        }
        spawn_local(async move {
            let mut bytes = Vec::new();
            for f in files {
                let url = format!("{}{UPLOAD_PATH}/{}", browser::base_path(), f.id);
                if let Some(b) = browser::fetch_bytes(&url).await {
                    bytes.push((f.id, b));
                }
            }
            carried::carry(&mut record, bytes);
            done(record);
        });
    }

    /// Uploads the files an export carried, as the reader's own, and names them by their new
    /// ids in `record`; the reader is told of each the server refused (over a limit, say).
    async fn keep_carried(&self, record: &mut SavedChat, carried: Vec<(FileRef, Vec<u8>)>) {
        let mut kept = std::collections::HashMap::new();
        let mut refused = Vec::new();
        for (i, (f, bytes)) in carried.into_iter().enumerate() {
            let url = format!(
                "{}{UPLOAD_PATH}?name={}",
                browser::base_path(),
                url::form_urlencoded::byte_serialize(f.name.as_bytes()).collect::<String>()
            );
            let key = IMPORT_UPLOADS.saturating_sub(i as u32);
            let answer = browser::upload_bytes(key, &url, &bytes).await;
            match outcome(answer, &f.name, self.locale) {
                Upload::Ready(new) => {
                    kept.insert(f.id, new);
                }
                Upload::Failed(why) => refused.push(why),
                Upload::Sending { .. } => {}
            }
        }
        carried::rename_files(record, &kept);
        if !refused.is_empty() {
            self.notify(NoticeKind::Server, refused.join(" · "));
        }
    }

    /// Another tab wrote `key`: refresh the list, and adopt the other tab's version of the open
    /// conversation when nothing runs here.
    pub fn on_storage_changed(&self, key: Option<String>) {
        self.refresh_list();
        let current = saved_chat::key_for(&self.conversation_id.get_untracked());
        if key.as_deref() != Some(current.as_str()) || self.is_running() {
            return;
        }
        let id = self.conversation_id.get_untracked();
        let this = *self;
        self.with_local_chats(move |local| {
            if this.conversation_id.get_untracked() != id || this.is_running() {
                return;
            }
            match local.load(this.shelf, &id) {
                Some(record) if record.rev() > this.meta.with_value(|m| m.rev) => this.show(record),
                None if this.meta.with_value(|m| m.stored) => {
                    this.notify(
                        NoticeKind::DeletedElsewhere,
                        this.locale.catalogue().deleted_in_other_tab.into(),
                    );
                    this.meta.update_value(|m| m.stored = false);
                }
                _ => {}
            }
        });
    }
}
