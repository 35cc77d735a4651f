//! The instructions a turn is sent: the administrator's for its model, then the reader's
//! levels ([`combined`]); and the reader's own level for turns the server does not store,
//! which must still run while the database is out of reach ([`PersonalLevels`]).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::domain::instructions::{Instructions, Level};
use crate::server::config::Config;
use crate::server::store::identity::Identity;
use crate::server::store::Store;

/// The text `model` is sent: the administrator's for it, then the reader's levels.
pub fn combined(
    config: &Config,
    model: &str,
    personal: Option<String>,
    workspace: Option<String>,
    conversation: Option<String>,
) -> Option<String> {
    levels(config, model, personal, workspace, conversation).combined()
}

/// Every level that applies to a chat with `model`, the administrator's first.
pub fn levels(
    config: &Config,
    model: &str,
    personal: Option<String>,
    workspace: Option<String>,
    conversation: Option<String>,
) -> Instructions {
    Instructions::of([
        (
            Level::Model,
            config
                .model_instructions
                .for_model(model)
                .map(str::to_string),
        ),
        (Level::Personal, personal),
        (Level::Workspace, workspace),
        (Level::Conversation, conversation),
    ])
}

/// Users whose own level this process remembers at most.
const MAX_REMEMBERED: usize = 10_000;

/// Each reader's own level as last read here: a turn the server does not store needs no
/// database, so when the store cannot be read it goes with the level read last (and without
/// one never read, saying so in the log).
#[derive(Default)]
pub struct PersonalLevels {
    last: Mutex<HashMap<String, Option<String>>>,
}

impl PersonalLevels {
    /// The reader's own level: read from the store, else as last read.
    pub async fn of(&self, store: &Store, who: &Identity) -> Option<String> {
        let id = who.user().id.clone();
        match store.scoped(who).personal_instructions().await {
            Ok(level) => {
                if let Ok(mut last) = self.last.lock() {
                    if last.len() >= MAX_REMEMBERED && !last.contains_key(&id) {
                        last.clear();
                    }
                    last.insert(id, level.clone());
                }
                level
            }
            Err(e) => {
                let kept = self
                    .last
                    .lock()
                    .ok()
                    .and_then(|last| last.get(&id).cloned());
                if kept.is_none() {
                    tracing::warn!(error = %e, "the reader's instructions could not be read; the turn goes without them");
                }
                kept.flatten()
            }
        }
    }
}
