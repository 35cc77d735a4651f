//! The list's rarer actions on conversations kept on the server: rename, delete and undo, the
//! workspaces, importing this browser's older chats. Their own chunk (`list_actions`), called by
//! [`super::server_history`].

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::chunks::lazy_actions;
use super::NoticeKind;
use crate::client::local_store;
use crate::client::saved_chat::{self, SavedChat};
use crate::i18n::fill;

lazy_actions! {
    /// The list's rarer actions on the server (rename, delete and undo, the workspaces,
    /// importing this browser's older chats). Few visits use them, so they are a chunk of their
    /// own; the page keeps only what decides whether one is needed.
    mod list_actions in list_actions, preload prefetch_list_actions;

    fn rename(this, id: String, title: String) {
        spawn_local(async move {
            match crate::api::history::rename_conversation(id.clone(), title.clone()).await {
                Ok(()) => {
                    if this.conversation_id.get_untracked() == id {
                        this.title.set(title.clone());
                        this.meta.update_value(|m| m.title = title);
                        this.save();
                    }
                    this.refresh_list();
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.chat_not_renamed, &e.0),
                ),
            }
        });
    }

    /// Deletes `id` (titled `title`), with a notice that offers Undo.
    fn delete(this, id: String, title: String) {
        spawn_local(async move {
            match crate::api::history::delete_conversation(id.clone()).await {
                Ok(_) => this.notify_undoable(
                    NoticeKind::Deleted,
                    fill(this.locale.catalogue().deleted_chat, &[("title", &title)]),
                    id,
                ),
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.chat_not_deleted, &e.0),
                ),
            }
            this.refresh_list();
        });
    }

    fn undo_delete(this, id: String) {
        spawn_local(async move {
            this.dismiss(NoticeKind::Deleted);
            match crate::api::history::restore_conversation(id.clone()).await {
                Ok(()) => {
                    this.refresh_list();
                    this.open(&id);
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.chat_not_restored, &e.0),
                ),
            }
        });
    }

    fn create_workspace(this, name: String) {
        spawn_local(async move {
            match crate::api::history::create_workspace(name).await {
                Ok(w) => {
                    this.workspaces.update(|l| l.push(w.clone()));
                    this.switch_workspace(w.id);
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.workspace_not_made, &e.0),
                ),
            }
        });
    }

    fn rename_workspace(this, id: String, name: String) {
        spawn_local(async move {
            match crate::api::history::rename_workspace(id.clone(), name.clone()).await {
                Ok(()) => this.workspaces.update(|l| {
                    if let Some(w) = l.iter_mut().find(|w| w.id == id) {
                        w.name = name;
                    }
                }),
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.workspace_not_renamed, &e.0),
                ),
            }
        });
    }

    /// Imports `records` one by one, stopping at the first failure; each imported one leaves
    /// this browser.
    fn import_local(this, records: Vec<SavedChat>) {
        spawn_local(async move {
            let workspace = this.workspace.get_untracked();
            let mut done = 0;
            for r in &records {
                match crate::api::history::import_conversation(
                    workspace.clone(),
                    saved_chat::to_import(r),
                )
                .await
                {
                    Ok(_) => {
                        local_store::remove(this.shelf, &r.chat.id);
                        done += 1;
                    }
                    Err(e) => {
                        this.notify(
                            NoticeKind::Server,
                            this.say_failed(|c| c.some_chats_not_imported, &e.0),
                        );
                        break;
                    }
                }
            }
            this.importable.set(records.len() - done);
            if done > 0 {
                this.notify(
                    NoticeKind::Imported,
                    this.locale
                        .count(&this.locale.catalogue().chats_moved_to_server, done as u64),
                );
            }
            this.refresh_list();
        });
    }
}
