//! Conversations kept on the server (signed in, `PONDER_HISTORY=server`), through the server
//! functions of [`crate::api::history`]; this browser keeps a copy of what was shown, as a
//! cache. Reading a stored chat is in the bubbles' chunk (`messages`: a chat is only read to be
//! shown), the list's rarer actions in the `list_actions` chunk ([`super::server_list`]).

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::backend::Backend;
use super::browser_history::BrowserHistory;
use super::chunks::{lazy_actions, LocalChats};
use super::{now_ms, ChatController, Meta, NoticeKind};
use crate::client::decisions::{self, SavePlan};
use crate::client::local_store;
use crate::client::saved_chat::{self, ConversationSummary, SavedChat, Settings};
use crate::client::thinking_view::ThinkingPref;
use crate::domain::history::Page;
use crate::domain::{ChatMessage, ChatRequest, Role};
use crate::i18n::{fill, Locale};

/// Messages asked for when a conversation opens: its last ones, as many as the page renders.
const OPEN_PAGE: usize = 40;

/// The fewest messages asked for when the reader scrolls up past what is loaded.
const EARLIER_PAGE: usize = 100;

/// History on the server.
pub(super) struct ServerHistory;

impl ChatController {
    /// Shows conversation `id` empty until the server's copy arrives.
    fn await_server_copy(&self, id: &str) {
        self.new_scope();
        self.meta.set_value(Meta {
            id: id.to_string(),
            stored: true,
            on_server: true,
            ..Meta::default()
        });
        self.conversation_id.set(id.to_string());
        self.earlier.set(0);
        self.entries.set(Vec::new());
    }

    /// Joins every turn writing the conversation's last answer (one, or a comparison's
    /// answers), if it still streams: the stored copy shows as running at once, then the turn's
    /// replay and live tail take over.
    fn join_live_answer(&self, conv: &crate::domain::history::Conversation) {
        if self.is_running() {
            return;
        }
        let Some(last) = conv.messages.last().filter(|m| m.role == Role::Assistant) else {
            return;
        };
        let signals = self.entries.with_untracked(|entries| {
            entries
                .iter()
                .rev()
                .find(|e| e.id == last.id)
                .map(|e| e.versions.get_untracked())
        });
        let now = now_ms();
        for (v, turn) in last.versions.iter().zip(signals.unwrap_or_default()) {
            let Some(turn_id) = v.turn.clone() else {
                continue;
            };
            let running: Vec<Option<u64>> = v.blocks.iter().map(|b| b.running_ms).collect();
            turn.update(|t| *t = t.resuming(now, &running));
            self.join(turn_id, turn);
        }
    }
}

lazy_actions! {
    /// Reading a conversation the server keeps: opening it (and joining its running answer),
    /// its earlier messages, its copy for an export. In the bubbles' chunk, fetched once with
    /// them.
    mod stored_chat in messages;

    /// Takes a conversation from the server, shows it unless the reader moved on or a turn
    /// runs, and keeps a copy in this browser. With `join`, an answer still streaming is
    /// joined live.
    fn open(this, id: String, join: bool) {
        spawn_local(async move {
            let page = Page {
                last: Some(OPEN_PAGE),
                before: None,
            };
            match crate::api::history::get_conversation(id.clone(), page).await {
                Ok(conv) => {
                    if this.conversation_id.get_untracked() == id && !this.is_running() {
                        this.take_settings(conv.model.clone(), conv.settings);
                    }
                    let record = SavedChat::server_copy(conv.clone());
                    if this.conversation_id.get_untracked() == id && !this.is_running() {
                        this.show(record.clone());
                        if join {
                            this.join_live_answer(&conv);
                        }
                    }
                    // This browser's copy is written after the chat is painted, not before.
                    request_animation_frame(move || {
                        set_timeout(
                            move || {
                                let _ = local_store::save(this.shelf, &record);
                            },
                            std::time::Duration::ZERO,
                        )
                    });
                }
                Err(e) if e.0.code == crate::domain::ErrorCode::NotFound => {
                    local_store::remove(this.shelf, &id);
                    if this.conversation_id.get_untracked() == id && !this.missing(&id) {
                        this.notify(
                            NoticeKind::Missing,
                            this.locale.catalogue().chat_gone_from_server.into(),
                        );
                        this.new_chat();
                    }
                }
                Err(e) => {
                    this.opening.set(false);
                    this.notify(
                        NoticeKind::Server,
                        this.say_failed(|c| c.chat_not_loaded, &e.0),
                    )
                }
            }
        });
    }

    /// Shows the title the model writes for conversation `id` after its first answer, in the
    /// list and (while it is shown) the top bar, once the server has it.
    fn wait_for_title(this, id: String) {
        spawn_local(async move {
            let Ok(Some(title)) = crate::api::history::wait_for_title(id.clone()).await else {
                return;
            };
            if this.conversation_id.get_untracked() == id {
                this.title.set(title.clone());
                this.meta.update_value(|m| m.title = title.clone());
            }
            this.conversations.update(|list| {
                if let Some(c) = list.iter_mut().find(|c| c.id == id) {
                    c.title = title;
                }
            });
            // A list read before the title was written may still be on its way.
            this.refresh_list();
        });
    }

    /// Brings in the page of messages before the `before` last of conversation `id`, unless an
    /// earlier page is already on its way.
    fn earlier(this, id: String, page: Page, before: usize) {
        if this.loading_earlier.get_value() {
            return;
        }
        this.loading_earlier.set_value(true);
        spawn_local(async move {
            let result = crate::api::history::get_conversation(id.clone(), page).await;
            if this.conversation_id.get_untracked() != id || this.earlier.get_untracked() != before
            {
                return;
            }
            this.loading_earlier.set_value(false);
            match result {
                Ok(conv) => {
                    let mut older = this.entries_of(&conv.messages, Vec::new());
                    let known: std::collections::HashSet<String> = this
                        .entries
                        .with_untracked(|e| e.iter().map(|e| e.id.clone()).collect());
                    older.retain(|e| !known.contains(&e.id));
                    this.earlier.set(conv.first);
                    this.entries.update(|entries| {
                        older.append(entries);
                        *entries = older;
                    });
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.earlier_not_loaded, &e.0),
                ),
            }
        });
    }

    /// `done` gets the server's copy of `id`, or `local` (and a notice) when it cannot.
    fn export(
        this,
        id: String,
        local: SavedChat,
        done: Box<dyn FnOnce(SavedChat)>,
    ) {
        spawn_local(async move {
            match crate::api::history::export_conversation(id).await {
                Ok(conv) => done(SavedChat::server_copy(conv)),
                Err(e) => {
                    this.notify(
                        NoticeKind::Server,
                        this.say_failed(|c| c.server_copy_not_exported, &e.0),
                    );
                    done(local);
                }
            }
        });
    }
}

impl Backend for ServerHistory {
    fn on_server(&self) -> bool {
        true
    }

    fn begin_load(&self, c: ChatController, settings: &Settings) {
        // The server's list does not wait for this browser's copies.
        self.refresh_list(c);
        self.refresh_workspaces(c);
        if settings.last_conversation.is_some() {
            c.want_stored_chat();
        }
    }

    fn load(&self, c: ChatController, local: LocalChats, settings: &Settings) {
        let last = settings.last_conversation.clone();
        let cached = last.as_ref().and_then(|id| local.load(c.shelf, id));
        if let Some(record) = cached.filter(|r| !saved_chat::ends_unfinished(r)) {
            c.show(record);
        }
        c.meta.update_value(|m| m.on_server = m.stored);
        if let Some(id) = last {
            // No copy in this browser yet (a reload right after the first answer began): the
            // server's copy is the one shown.
            if c.conversation_id.get_untracked() != id {
                c.await_server_copy(&id);
            }
            stored_chat::open(c, id, true);
        }
        if !settings.import_declined {
            c.importable.set(c.importable_records(local).len());
        }
    }

    fn refresh_list(&self, c: ChatController) {
        spawn_local(async move {
            let workspace = c.workspace.get_untracked();
            match crate::api::history::list_conversations(workspace, false).await {
                Ok(list) => c
                    .conversations
                    .set(list.into_iter().map(ConversationSummary::from).collect()),
                Err(e) => c.notify(
                    NoticeKind::Server,
                    c.say_failed(|w| w.chats_not_listed, &e.0),
                ),
            }
        });
    }

    fn open(&self, c: ChatController, id: String) {
        // This browser's copy at once (when its reader is here: it is fetched with the page
        // when a copy is kept, and unless its answer was still running), then the server's.
        match c
            .local_chats
            .get_value()
            .and_then(|local| local.load(c.shelf, &id))
            .filter(|r| !saved_chat::ends_unfinished(r))
        {
            Some(record) => c.show(record),
            None => c.await_server_copy(&id),
        }
        c.remember_current();
        stored_chat::open(c, id, true);
    }

    fn reload(&self, c: ChatController, id: String, join: bool) {
        stored_chat::open(c, id, join);
    }

    fn rename(&self, c: ChatController, id: String, title: String) {
        super::server_list::list_actions::rename(c, id, title);
    }

    fn delete(&self, c: ChatController, id: String) {
        let title = c
            .conversations
            .with_untracked(|l| l.iter().find(|s| s.id == id).map(|s| s.title.clone()))
            .unwrap_or_default();
        super::server_list::list_actions::delete(c, id, title);
    }

    fn undo_delete(&self, c: ChatController, id: String) {
        super::server_list::list_actions::undo_delete(c, id);
    }

    fn load_earlier(&self, c: ChatController, count: usize) {
        let before = c.earlier.get_untracked();
        let page = Page {
            last: Some(count.max(EARLIER_PAGE)),
            before: Some(before),
        };
        stored_chat::earlier(c, c.conversation_id.get_untracked(), page, before);
    }

    fn export(&self, c: ChatController, done: Box<dyn FnOnce(SavedChat)>) {
        let local = c.record(now_ms());
        let (on_server, id) = c.meta.with_value(|m| (m.on_server, m.id.clone()));
        if on_server {
            stored_chat::export(c, id, local, done);
        } else {
            done(local);
        }
    }

    fn import(&self, c: ChatController, _: LocalChats, record: SavedChat) {
        let title = record.chat.title.clone();
        spawn_local(async move {
            let workspace = c.workspace.get_untracked();
            let words = c.locale.catalogue();
            match crate::api::history::import_conversation(
                workspace,
                saved_chat::to_import(&record),
            )
            .await
            {
                Ok(true) => c.notify(
                    NoticeKind::Imported,
                    fill(words.imported, &[("title", &title)]),
                ),
                Ok(false) => c.notify(
                    NoticeKind::Imported,
                    fill(words.imported_before, &[("title", &title)]),
                ),
                Err(e) => c.notify(NoticeKind::Server, c.say_failed(|w| w.import_failed, &e.0)),
            }
            c.refresh_list();
        });
    }

    fn import_local(&self, c: ChatController, records: Vec<SavedChat>) {
        super::server_list::list_actions::import_local(c, records);
    }

    fn refresh_workspaces(&self, c: ChatController) {
        spawn_local(async move {
            match crate::api::history::list_workspaces().await {
                Ok(list) => {
                    if c.workspace.get_untracked().is_none() {
                        c.workspace.set(list.first().map(|w| w.id.clone()));
                    }
                    c.workspaces.set(list);
                    ServerHistory.load_preferences(c);
                }
                Err(e) => c.notify(
                    NoticeKind::Server,
                    c.say_failed(|w| w.workspaces_not_loaded, &e.0),
                ),
            }
        });
    }

    /// Takes the workspace's preferences from the server; its thinking behaviour replaces this
    /// browser's when it was chosen.
    fn load_preferences(&self, c: ChatController) {
        spawn_local(async move {
            let workspace = c.workspace.get_untracked();
            match crate::api::history::get_preferences(workspace).await {
                Ok(prefs) => {
                    if let Some(pref) = prefs.thinking.as_deref().and_then(ThinkingPref::from_key) {
                        c.pref.set(pref);
                    }
                    c.prefs.set_value(prefs);
                }
                Err(e) => c.notify(
                    NoticeKind::Server,
                    c.say_failed(|w| w.workspace_settings_not_loaded, &e.0),
                ),
            }
        });
    }

    fn create_workspace(&self, c: ChatController, name: String) {
        super::server_list::list_actions::create_workspace(c, name);
    }

    fn rename_workspace(&self, c: ChatController, id: String, name: String) {
        super::server_list::list_actions::rename_workspace(c, id, name);
    }

    fn want_list_actions(&self) {
        spawn_local(async {
            let _ = super::server_list::list_actions::prefetch_list_actions().await;
        });
    }

    fn keep_pref(&self, c: ChatController, pref: ThinkingPref) {
        c.prefs
            .update_value(|p| p.thinking = Some(pref.key().to_string()));
        let prefs = c.prefs.get_value();
        spawn_local(async move {
            let workspace = c.workspace.get_untracked();
            if let Err(e) = crate::api::history::set_preferences(workspace, prefs).await {
                c.notify(
                    NoticeKind::Server,
                    c.say_failed(|w| w.setting_kept_locally, &e.0),
                );
            }
        });
    }

    fn keep_locale(&self, c: ChatController, locale: Locale) {
        let signed_in =
            c.me.with_untracked(|m| m.as_ref().is_some_and(|m| m.account.is_some()));
        spawn_local(async move {
            if signed_in {
                if let Ok(mut prefs) = crate::api::history::get_preferences(None).await {
                    prefs.locale = Some(locale.tag().to_string());
                    let _ = crate::api::history::set_preferences(None, prefs).await;
                }
            }
            crate::client::browser::reload();
        });
    }

    fn save_plan(&self, stored_rev: Option<u64>, rev: u64) -> SavePlan {
        decisions::cache_plan(stored_rev, rev)
    }

    fn send_request(
        &self,
        c: ChatController,
        text: String,
        _: Vec<ChatMessage>,
        edited: Option<String>,
    ) -> ChatRequest {
        let conversation = c.meta.with_value(|m| m.on_server.then(|| m.id.clone()));
        ChatRequest {
            instructions: conversation
                .is_none()
                .then(|| c.instructions.get_untracked())
                .flatten(),
            conversation,
            workspace: c.workspace.get_untracked(),
            content: Some(text),
            edit: edited,
            ..ChatRequest::stateless(Vec::new())
        }
    }

    fn again_request(
        &self,
        c: ChatController,
        server_id: Option<String>,
        history: Vec<ChatMessage>,
    ) -> ChatRequest {
        match server_id {
            Some(message) => ChatRequest {
                conversation: Some(c.meta.with_value(|m| m.id.clone())),
                regenerate: Some(message),
                ..ChatRequest::stateless(Vec::new())
            },
            None => ChatRequest::stateless(history),
        }
    }

    fn retry_keeps_versions(&self, server_id: Option<&str>) -> bool {
        server_id.is_some()
    }

    fn keep_active_version(&self, c: ChatController, server_id: Option<String>, index: usize) {
        let Some(message) = server_id else {
            return;
        };
        spawn_local(async move {
            if let Err(e) = crate::api::history::set_active_version(message, index).await {
                c.notify(
                    NoticeKind::Server,
                    c.say_failed(|w| w.version_not_kept, &e.0),
                );
            }
        });
    }

    fn branch(&self, c: ChatController, entry_id: &str, server_id: Option<String>) {
        let Some(upto) = server_id else {
            return BrowserHistory::branch_here(c, entry_id);
        };
        let id = c.meta.with_value(|m| m.id.clone());
        spawn_local(async move {
            match crate::api::history::branch_conversation(id, upto).await {
                Ok(branch) => {
                    c.refresh_list();
                    c.open(&branch.id);
                }
                Err(e) => c.notify(
                    NoticeKind::Server,
                    c.say_failed(|w| w.chat_not_branched, &e.0),
                ),
            }
        });
    }

    fn keep_block_choices(&self, blocks: Vec<(String, usize, usize)>, open: bool) {
        if blocks.is_empty() {
            return;
        }
        spawn_local(async move {
            for (message, version, index) in blocks {
                // A block the server has not stored yet (the turn still streams) is skipped.
                let _ = crate::api::history::set_block_open_at(message, version, index, Some(open))
                    .await;
            }
        });
    }

    fn turn_ended(&self, c: ChatController) {
        self.refresh_list(c);
        // The first answer of a new chat: the model writes its title next.
        if c.entries.with_untracked(|e| e.len() == 2) && c.chat_on_server() {
            stored_chat::wait_for_title(c, c.conversation_id.get_untracked());
        }
    }
}
