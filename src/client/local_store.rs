//! localStorage, through gloo-storage: the browser side of [`super::saved_chat`].
//!
//! Called only from effects and event handlers, so only after hydration. Every failure is a
//! value: a full or disabled storage must never stop the chat.

use gloo_storage::errors::StorageError;
use gloo_storage::{LocalStorage, Storage};

use crate::domain::reasoning::NewChatModel;

use super::saved_chat::{
    self, ConversationRecord, Settings, BACKUP_PREFIX, CHAT_PREFIX, SETTINGS_KEY,
};

/// Why a write did not happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveError {
    /// `QuotaExceededError`: the storage is full.
    Full,
    /// Storage is disabled or not reachable (private mode, policy).
    Unavailable,
    Other(String),
}

impl SaveError {
    /// The notice the reader sees.
    pub fn notice(&self, c: &crate::i18n::Catalogue) -> String {
        match self {
            SaveError::Full => c.storage_full.into(),
            SaveError::Unavailable => c.storage_unavailable.into(),
            SaveError::Other(e) => crate::i18n::fill(c.storage_failed, &[("detail", e)]),
        }
    }
}

/// True when localStorage can be used at all. Touching it can throw (disabled storage), so
/// this goes through `web_sys` first; gloo-storage is used only when this says yes.
pub fn available() -> bool {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .is_some()
}

fn classify(e: StorageError) -> SaveError {
    match e {
        StorageError::JsError(js) => {
            if js.name.contains("Quota") {
                SaveError::Full
            } else if js.name.contains("Security") {
                SaveError::Unavailable
            } else {
                SaveError::Other(format!("{}: {}", js.name, js.message))
            }
        }
        other => SaveError::Other(other.to_string()),
    }
}

/// Whether this browser holds a saved chat: without one there is nothing for the saved chats'
/// reader (the `local_chats` chunk) to read, so the page does not fetch it.
pub fn has_chats() -> bool {
    if !available() {
        return false;
    }
    let raw = LocalStorage::raw();
    let len = raw.length().unwrap_or(0);
    (0..len).any(|i| {
        raw.key(i)
            .ok()
            .flatten()
            .is_some_and(|k| k.starts_with(CHAT_PREFIX))
    })
}

/// The write count of a conversation as stored now, read without the rest of the record (a
/// save compares it with its own before writing, and must not wait for the reader's chunk).
pub fn stored_rev(id: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Rev {
        id: String,
        #[serde(default)]
        rev: u64,
    }
    let value = stored(id)?;
    serde_json::from_slice::<Rev>(value.as_bytes())
        .ok()
        .filter(|r| !r.id.is_empty())
        .map(|r| r.rev)
}

/// Every stored conversation; unreadable values are moved aside under `ponder.backup.*` and
/// reported by key.
pub fn load_all(now: f64) -> (Vec<ConversationRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut set_aside = Vec::new();
    if !available() {
        return (records, set_aside);
    }
    let raw = LocalStorage::raw();
    let len = raw.length().unwrap_or(0);
    let keys: Vec<String> = (0..len)
        .filter_map(|i| raw.key(i).ok().flatten())
        .filter(|k| k.starts_with(CHAT_PREFIX))
        .collect();
    for key in keys {
        let Ok(Some(value)) = raw.get_item(&key) else {
            continue;
        };
        match saved_chat::parse_conversation(&value) {
            Ok(record) if saved_chat::key_for(&record.id) == key => records.push(record),
            _ => {
                let backup = format!("{BACKUP_PREFIX}{key}.{}", now as u64);
                let _ = raw.set_item(&backup, &value);
                let _ = raw.remove_item(&key);
                set_aside.push(backup);
            }
        }
    }
    (records, set_aside)
}

/// The stored value of one conversation, as written.
fn stored(id: &str) -> Option<String> {
    if !available() {
        return None;
    }
    LocalStorage::raw()
        .get_item(&saved_chat::key_for(id))
        .ok()
        .flatten()
}

/// One conversation as stored now, if readable.
pub fn load(id: &str) -> Option<ConversationRecord> {
    let value = stored(id)?;
    saved_chat::parse_conversation(&value).ok()
}

/// Writes a conversation whole.
pub fn save(record: &ConversationRecord) -> Result<(), SaveError> {
    if !available() {
        return Err(SaveError::Unavailable);
    }
    LocalStorage::set(record.key(), record).map_err(classify)
}

pub fn remove(id: &str) {
    if available() {
        LocalStorage::delete(saved_chat::key_for(id));
    }
}

/// The settings, or the defaults when absent or unreadable.
pub fn load_settings() -> Settings {
    if !available() {
        return Settings::default();
    }
    LocalStorage::raw()
        .get_item(SETTINGS_KEY)
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_slice(v.as_bytes()).ok())
        .unwrap_or_default()
}

pub fn save_settings(settings: &Settings) -> Result<(), SaveError> {
    if !available() {
        return Err(SaveError::Unavailable);
    }
    LocalStorage::set(SETTINGS_KEY, settings).map_err(classify)
}

/// The model the reader picked last, for a new chat.
pub fn last_model() -> Option<String> {
    load_settings().last_model
}

pub fn set_last_model(id: &str) {
    let mut settings = load_settings();
    if settings.last_model.as_deref() != Some(id) {
        settings.last_model = Some(id.to_string());
        let _ = save_settings(&settings);
    }
}

/// Which model a new chat starts with.
pub fn new_chat_rule() -> NewChatModel {
    load_settings().new_chat_model
}

pub fn set_new_chat_rule(rule: NewChatModel) {
    let mut settings = load_settings();
    settings.new_chat_model = rule;
    let _ = save_settings(&settings);
}
