//! Organising the conversations on the server: pinning, tags and the list's tag filter,
//! moving one to another workspace. The list changes at once; a refusal puts it back and says
//! why.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ChatController, NoticeKind};
use crate::client::saved_chat::ConversationSummary;

impl ChatController {
    fn change_summary(&self, id: &str, change: impl FnOnce(&mut ConversationSummary)) {
        self.conversations.update(|list| {
            if let Some(c) = list.iter_mut().find(|c| c.id == id) {
                change(c);
            }
        });
    }

    fn refused(&self, failure: &crate::domain::Failure) {
        self.notify(
            NoticeKind::Server,
            crate::client::labels::failure_text(failure, self.locale),
        );
        self.refresh_list();
    }

    /// Pins a conversation on top of the list, or unpins it.
    pub fn pin(&self, id: String, pinned: bool) {
        self.change_summary(&id, |c| c.pinned = pinned);
        let this = *self;
        spawn_local(async move {
            if let Err(e) = crate::api::history::pin_conversation(id, pinned).await {
                this.refused(&e.0);
            }
        });
    }

    /// Replaces a conversation's tags with those in `text`, separated by commas.
    pub fn set_tags(&self, id: String, text: &str) {
        let asked: Vec<String> = text.split(',').map(str::to_string).collect();
        let tags = match crate::domain::history::checked_tags(&asked) {
            Ok(tags) => tags,
            Err(why) => {
                let failure =
                    crate::domain::Failure::of(crate::domain::ErrorCode::BadRequest, false)
                        .with("detail", why);
                self.notify(
                    NoticeKind::Server,
                    crate::client::labels::failure_text(&failure, self.locale),
                );
                return;
            }
        };
        self.change_summary(&id, |c| c.tags = tags.clone());
        let filter = self.tag_filter.get_untracked();
        if filter.is_some_and(|f| {
            !self
                .conversations
                .with_untracked(|l| l.iter().any(|c| c.tags.contains(&f)))
        }) {
            self.tag_filter.set(None);
        }
        let this = *self;
        spawn_local(async move {
            if let Err(e) = crate::api::history::tag_conversation(id, tags).await {
                this.refused(&e.0);
            }
        });
    }

    /// Moves a conversation to another workspace: it leaves this workspace's list (and stays
    /// open if it is).
    pub fn move_to(&self, id: String, workspace: String) {
        self.conversations
            .update(|list| list.retain(|c| c.id != id));
        let this = *self;
        spawn_local(async move {
            if let Err(e) = crate::api::history::move_conversation(id, workspace).await {
                this.refused(&e.0);
            }
        });
    }
}
