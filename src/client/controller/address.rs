//! Every conversation has an address (`/c/<id>` under the base path): the address bar follows
//! the conversation shown, Back and Forward show what the address names, and an address that
//! names no conversation of the reader's shows the not-found page.

use leptos::prelude::*;

use super::ChatController;
use crate::client::browser::{self, Address};
use crate::client::decisions;

impl ChatController {
    /// Keeps the address bar on the conversation shown, from when the saved chats are read: a
    /// conversation shown in place of another is a new history entry; a new chat getting its
    /// first message, or the page's first address, replaces the entry.
    pub fn follow_address(&self) {
        let this = *self;
        Effect::new(move |before: Option<Option<String>>| {
            if !this.loaded.get() || this.lost.get() {
                return None;
            }
            let id = this.conversation_id.get();
            let (address, push) =
                decisions::address_for(&id, this.has_address(), before.flatten().as_deref());
            browser::go_to(&address, push);
            Some(id)
        });
    }

    /// The conversation shown can be reached by an address: it is kept on the server (history
    /// there), or has a message in this browser's history.
    fn has_address(&self) -> bool {
        let has_messages = self.entries.with(|e| !e.is_empty());
        if self.temporary.get() {
            return false;
        }
        self.meta.with_value(|m| {
            if self.history.on_server() {
                m.on_server
            } else {
                has_messages || m.stored
            }
        })
    }

    /// The server stored the new chat shown under its own id: that is the chat's address, in
    /// place of the base path (Back does not return to the empty chat it began as).
    pub(super) fn stored_as(&self, id: &str) {
        browser::go_to(&Address::Chat(id.to_string()), false);
    }

    /// The reader went Back or Forward: the page shows what the address names.
    pub fn went_to_address(&self) {
        if self.lost.get_untracked() {
            browser::reload();
            return;
        }
        match browser::page_address() {
            Address::Chat(id) => {
                if self.conversation_id.get_untracked() != id {
                    self.arrived.set_value(Some(id.clone()));
                    self.open_saved(&id);
                }
            }
            Address::NewChat => {
                if untrack(|| self.has_address()) {
                    self.new_chat();
                }
            }
            Address::Elsewhere => browser::reload(),
        }
    }

    /// The conversation the page's address names (on arrival, or Back and Forward).
    pub(super) fn addressed(&self) -> Option<String> {
        browser::page_address().chat().map(str::to_string)
    }

    /// Conversation `id` could not be found. When the reader came to it by its address, the
    /// page says the address leads nowhere and says true; otherwise the caller tells the reader
    /// in its own way.
    pub(super) fn missing(&self, id: &str) -> bool {
        self.opening.set(false);
        let by_address = self.arrived.with_value(|a| a.as_deref() == Some(id));
        if by_address {
            self.lost.set(true);
        }
        by_address
    }
}
