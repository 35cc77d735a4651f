//! The open chat's own system instructions: where they are kept depends on where the chat is.

use leptos::prelude::*;

use super::ChatController;

impl ChatController {
    /// The open chat exists on the server, which keeps its instructions; a new chat (or one
    /// kept in this browser) carries them itself.
    pub fn chat_on_server(&self) -> bool {
        self.meta.with_value(|m| m.on_server)
    }

    /// Takes the open chat's own instructions (`None`: none) where the chat carries them: sent
    /// with its next turn, and saved with this browser's copy of a chat kept here. A chat on
    /// the server keeps them there (`POST /api/instructions/set`) and gets them back here.
    pub fn keep_own_instructions(&self, text: Option<String>) {
        self.instructions.set(text);
        if !self.kept_on_server() && self.entries.with_untracked(|e| !e.is_empty()) {
            self.save();
        }
    }
}
