//! Conversations kept in this browser's localStorage: the history of a page nobody signed in to
//! (or of a server that keeps none). Another tab of the same browser may write them too: a save
//! that would overwrite its changes keeps this tab's version as a copy.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::backend::Backend;
use super::chunks::LocalChats;
use super::{new_id, now_ms, ChatController, NoticeKind};
use crate::client::decisions::{self, SavePlan};
use crate::client::local_store;
use crate::client::saved_chat::{self, ConversationSummary, SavedChat, Settings};
use crate::client::thinking_view::ThinkingPref;
use crate::domain::{ChatMessage, ChatRequest};
use crate::i18n::{fill, Locale};

/// History in this browser.
pub(super) struct BrowserHistory;

impl BrowserHistory {
    /// This browser's list, read with `local`.
    pub(super) fn list_with(c: ChatController, local: LocalChats) {
        let (records, set_aside) = local.load_all(c.shelf, now_ms());
        if !set_aside.is_empty() {
            c.notify(
                NoticeKind::Corrupt,
                c.say(|w| w.storage_unreadable, &set_aside.join(", ")),
            );
        }
        let mut list: Vec<ConversationSummary> = records.iter().map(SavedChat::summary).collect();
        saved_chat::sort_newest_first(&mut list);
        c.conversations.set(list);
    }

    /// A new conversation in this browser holding the chat shown up to and including
    /// `entry_id`, shown at once.
    pub(super) fn branch_here(c: ChatController, entry_id: &str) {
        let now = now_ms();
        let branched = decisions::branch(&c.record(now), entry_id, new_id(), now);
        match local_store::save(c.shelf, &branched) {
            Ok(()) => {
                c.refresh_list();
                c.show(branched);
                c.remember_current();
            }
            Err(e) => c.notify(NoticeKind::Save, e.notice(c.locale.catalogue())),
        }
    }
}

impl Backend for BrowserHistory {
    fn on_server(&self) -> bool {
        false
    }

    fn begin_load(&self, c: ChatController, settings: &Settings) {
        if settings.last_conversation.is_some() && local_store::has_chats(c.shelf) {
            c.want_stored_chat();
        }
    }

    fn load(&self, c: ChatController, local: LocalChats, settings: &Settings) {
        Self::list_with(c, local);
        let Some(id) = settings.last_conversation.as_ref() else {
            return;
        };
        match local.load(c.shelf, id) {
            Some(record) => c.show(record),
            None => {
                c.missing(id);
            }
        }
    }

    fn refresh_list(&self, c: ChatController) {
        c.with_local_chats(move |local| Self::list_with(c, local));
    }

    fn open(&self, c: ChatController, id: String) {
        c.with_local_chats(move |local| match local.load(c.shelf, &id) {
            Some(record) => {
                c.show(record);
                c.remember_current();
            }
            None if c.missing(&id) => {}
            None => {
                c.notify(
                    NoticeKind::Missing,
                    c.locale.catalogue().chat_no_longer_saved.into(),
                );
                c.refresh_list();
            }
        });
    }

    fn reload(&self, _: ChatController, _: String, _: bool) {}

    fn rename(&self, c: ChatController, id: String, title: String) {
        if id == c.conversation_id.get_untracked() {
            c.title.set(title.clone());
            c.meta.update_value(|m| m.title = title);
            c.save();
            c.refresh_list();
            return;
        }
        c.with_local_chats(move |local| {
            if let Some(mut record) = local.load(c.shelf, &id) {
                record.chat.title = title;
                record.set_rev(record.rev() + 1);
                if let Err(e) = local_store::save(c.shelf, &record) {
                    c.notify(NoticeKind::Save, e.notice(c.locale.catalogue()));
                }
            }
            Self::list_with(c, local);
        });
    }

    fn delete(&self, c: ChatController, _: String) {
        c.refresh_list();
    }

    fn undo_delete(&self, _: ChatController, _: String) {}

    fn load_earlier(&self, _: ChatController, _: usize) {}

    fn export(&self, c: ChatController, done: Box<dyn FnOnce(SavedChat)>) {
        done(c.record(now_ms()));
    }

    fn import(&self, c: ChatController, local: LocalChats, mut record: SavedChat) {
        let title = record.chat.title.clone();
        if local.load(c.shelf, &record.chat.id).is_some() {
            record.chat.id = new_id();
        }
        match local_store::save(c.shelf, &record) {
            Ok(()) => {
                c.refresh_list();
                c.notify(
                    NoticeKind::Imported,
                    fill(c.locale.catalogue().imported, &[("title", &title)]),
                );
                c.open(&record.chat.id);
            }
            Err(e) => c.notify(NoticeKind::Save, e.notice(c.locale.catalogue())),
        }
    }

    fn import_local(&self, _: ChatController, _: Vec<SavedChat>) {}

    fn refresh_workspaces(&self, _: ChatController) {}

    fn load_preferences(&self, _: ChatController) {}

    fn create_workspace(&self, _: ChatController, _: String) {}

    fn rename_workspace(&self, _: ChatController, _: String, _: String) {}

    fn want_list_actions(&self) {}

    fn keep_pref(&self, _: ChatController, _: ThinkingPref) {}

    fn keep_locale(&self, _: ChatController, _: Locale) {
        spawn_local(async move { crate::client::browser::reload() });
    }

    fn save_plan(&self, stored_rev: Option<u64>, rev: u64) -> SavePlan {
        decisions::save_plan(stored_rev, rev)
    }

    fn send_request(
        &self,
        c: ChatController,
        _: String,
        history: Vec<ChatMessage>,
        _: Option<String>,
    ) -> ChatRequest {
        ChatRequest {
            instructions: c.instructions.get_untracked(),
            ..ChatRequest::stateless(history)
        }
    }

    fn again_request(
        &self,
        c: ChatController,
        _: Option<String>,
        history: Vec<ChatMessage>,
    ) -> ChatRequest {
        ChatRequest {
            instructions: c.instructions.get_untracked(),
            ..ChatRequest::stateless(history)
        }
    }

    fn retry_keeps_versions(&self, _: Option<&str>) -> bool {
        false
    }

    fn keep_active_version(&self, _: ChatController, _: Option<String>, _: usize) {}

    fn branch(&self, c: ChatController, entry_id: &str, _: Option<String>) {
        Self::branch_here(c, entry_id);
    }

    fn keep_block_choices(&self, _: Vec<(String, usize, usize)>, _: bool) {}

    fn turn_ended(&self, _: ChatController) {}
}
