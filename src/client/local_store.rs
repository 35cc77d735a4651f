//! localStorage (and this tab's sessionStorage): the browser side of [`super::saved_chat`].
//!
//! Called only from effects and event handlers, so only after hydration. Every failure is a
//! value: a full or disabled storage must never stop the chat. The functions read and write a
//! [`Shelf`]: this browser's localStorage on the page ([`BROWSER`]), a map in the controller's
//! native tests.

use web_sys::wasm_bindgen::JsValue;

use crate::domain::reasoning::NewChatModel;

use super::saved_chat::{self, SavedChat, Settings, BACKUP_PREFIX, CHAT_PREFIX, SETTINGS_KEY};

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

/// Where saved chats and settings are kept, key by key. A trait so that the controller's rules
/// can be tested natively, where no browser storage exists ([`MemoryShelf`]).
pub trait Shelf {
    /// Whether the storage can be used at all.
    fn available(&self) -> bool;
    fn get(&self, key: &str) -> Option<String>;
    fn set(&self, key: &str, value: &str) -> Result<(), SaveError>;
    fn remove(&self, key: &str);
    /// Every key, in the storage's order.
    fn keys(&self) -> Vec<String>;
}

/// One of the browser's Web Storage areas: localStorage, shared by the browser's tabs and kept
/// until cleared, or this tab's sessionStorage, gone when the tab closes.
pub enum WebShelf {
    Local,
    Session,
}

/// The page's shelf: this browser's localStorage.
pub static BROWSER: WebShelf = WebShelf::Local;

/// This tab's shelf (sessionStorage): a temporary chat is kept there and nowhere else.
pub static TAB: WebShelf = WebShelf::Session;

impl WebShelf {
    /// Touching the storage can throw (disabled storage), so every use goes through here.
    fn storage(&self) -> Option<web_sys::Storage> {
        let window = web_sys::window()?;
        match self {
            WebShelf::Local => window.local_storage(),
            WebShelf::Session => window.session_storage(),
        }
        .ok()
        .flatten()
    }
}

impl Shelf for WebShelf {
    fn available(&self) -> bool {
        self.storage().is_some()
    }

    fn get(&self, key: &str) -> Option<String> {
        self.storage()?.get_item(key).ok().flatten()
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SaveError> {
        self.storage()
            .ok_or(SaveError::Unavailable)?
            .set_item(key, value)
            .map_err(classify)
    }

    fn remove(&self, key: &str) {
        if let Some(storage) = self.storage() {
            let _ = storage.remove_item(key);
        }
    }

    fn keys(&self) -> Vec<String> {
        let Some(storage) = self.storage() else {
            return Vec::new();
        };
        let len = storage.length().unwrap_or(0);
        (0..len)
            .filter_map(|i| storage.key(i).ok().flatten())
            .collect()
    }
}

/// A shelf in memory, one per thread (each native test has its own), for native tests of the
/// code that uses one.
#[cfg(test)]
pub struct MemoryShelf;

#[cfg(test)]
thread_local! {
    static MEMORY: std::cell::RefCell<std::collections::BTreeMap<String, String>> =
        Default::default();
    static FULL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
impl MemoryShelf {
    /// Writes fail from now on as when the storage is full (or succeed again).
    pub fn set_full(full: bool) {
        FULL.set(full);
    }
}

#[cfg(test)]
impl Shelf for MemoryShelf {
    fn available(&self) -> bool {
        true
    }

    fn get(&self, key: &str) -> Option<String> {
        MEMORY.with_borrow(|m| m.get(key).cloned())
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SaveError> {
        if FULL.get() {
            return Err(SaveError::Full);
        }
        MEMORY.with_borrow_mut(|m| m.insert(key.into(), value.into()));
        Ok(())
    }

    fn remove(&self, key: &str) {
        MEMORY.with_borrow_mut(|m| m.remove(key));
    }

    fn keys(&self) -> Vec<String> {
        MEMORY.with_borrow(|m| m.keys().cloned().collect())
    }
}

/// The tab's shelf in native tests: [`MemoryShelf`]'s map under keys of its own.
#[cfg(test)]
pub struct MemoryTab;

#[cfg(test)]
impl MemoryTab {
    const PREFIX: &str = "tab:";
}

#[cfg(test)]
impl Shelf for MemoryTab {
    fn available(&self) -> bool {
        true
    }

    fn get(&self, key: &str) -> Option<String> {
        MemoryShelf.get(&format!("{}{key}", Self::PREFIX))
    }

    fn set(&self, key: &str, value: &str) -> Result<(), SaveError> {
        MemoryShelf.set(&format!("{}{key}", Self::PREFIX), value)
    }

    fn remove(&self, key: &str) {
        MemoryShelf.remove(&format!("{}{key}", Self::PREFIX));
    }

    fn keys(&self) -> Vec<String> {
        MemoryShelf
            .keys()
            .into_iter()
            .filter_map(|k| k.strip_prefix(Self::PREFIX).map(str::to_string))
            .collect()
    }
}

fn classify(js: JsValue) -> SaveError {
    let field = |name: &str| {
        js_sys::Reflect::get(&js, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    let name = field("name");
    if name.contains("Quota") {
        SaveError::Full
    } else if name.contains("Security") {
        SaveError::Unavailable
    } else {
        SaveError::Other(format!("{name}: {}", field("message")))
    }
}

/// True when localStorage can be used at all.
pub fn available() -> bool {
    BROWSER.available()
}

/// Whether `shelf` holds a saved chat: without one there is nothing for the saved chats'
/// reader (the `local_chats` chunk) to read, so the page does not fetch it.
pub fn has_chats(shelf: &dyn Shelf) -> bool {
    shelf.keys().iter().any(|k| k.starts_with(CHAT_PREFIX))
}

/// The write count of a conversation as stored now, read without the rest of the record (a
/// save compares it with its own before writing, and must not wait for the reader's chunk).
pub fn stored_rev(shelf: &dyn Shelf, id: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Rev {
        id: String,
        #[serde(default)]
        rev: u64,
    }
    let value = shelf.get(&saved_chat::key_for(id))?;
    serde_json::from_slice::<Rev>(value.as_bytes())
        .ok()
        .filter(|r| !r.id.is_empty())
        .map(|r| r.rev)
}

/// Every stored conversation; unreadable values are moved aside under `ponder.backup.*` and
/// reported by key.
pub fn load_all(shelf: &dyn Shelf, now: f64) -> (Vec<SavedChat>, Vec<String>) {
    let mut records = Vec::new();
    let mut set_aside = Vec::new();
    let keys: Vec<String> = shelf
        .keys()
        .into_iter()
        .filter(|k| k.starts_with(CHAT_PREFIX))
        .collect();
    for key in keys {
        let Some(value) = shelf.get(&key) else {
            continue;
        };
        match saved_chat::parse_conversation(&value) {
            Ok(record) if saved_chat::key_for(&record.chat.id) == key => records.push(record),
            _ => {
                let backup = format!("{BACKUP_PREFIX}{key}.{}", now as u64);
                let _ = shelf.set(&backup, &value);
                shelf.remove(&key);
                set_aside.push(backup);
            }
        }
    }
    (records, set_aside)
}

/// One conversation as stored now, if readable.
pub fn load(shelf: &dyn Shelf, id: &str) -> Option<SavedChat> {
    let value = shelf.get(&saved_chat::key_for(id))?;
    saved_chat::parse_conversation(&value).ok()
}

fn write(shelf: &dyn Shelf, key: &str, value: &impl serde::Serialize) -> Result<(), SaveError> {
    if !shelf.available() {
        return Err(SaveError::Unavailable);
    }
    let text = serde_json::to_string(value).map_err(|e| SaveError::Other(e.to_string()))?;
    shelf.set(key, &text)
}

/// Writes a conversation whole.
pub fn save(shelf: &dyn Shelf, record: &SavedChat) -> Result<(), SaveError> {
    write(shelf, &record.key(), record)
}

pub fn remove(shelf: &dyn Shelf, id: &str) {
    shelf.remove(&saved_chat::key_for(id));
}

/// The settings, or the defaults when absent or unreadable.
pub fn load_settings(shelf: &dyn Shelf) -> Settings {
    shelf
        .get(SETTINGS_KEY)
        .and_then(|v| serde_json::from_slice(v.as_bytes()).ok())
        .unwrap_or_default()
}

pub fn save_settings(shelf: &dyn Shelf, settings: &Settings) -> Result<(), SaveError> {
    write(shelf, SETTINGS_KEY, settings)
}

/// The model the reader picked last, for a new chat.
pub fn last_model(shelf: &dyn Shelf) -> Option<String> {
    load_settings(shelf).last_model
}

pub fn set_last_model(shelf: &dyn Shelf, id: &str) {
    let mut settings = load_settings(shelf);
    if settings.last_model.as_deref() != Some(id) {
        settings.last_model = Some(id.to_string());
        let _ = save_settings(shelf, &settings);
    }
}

/// Which model a new chat starts with.
pub fn new_chat_rule(shelf: &dyn Shelf) -> NewChatModel {
    load_settings(shelf).new_chat_model
}

pub fn set_new_chat_rule(shelf: &dyn Shelf, rule: NewChatModel) {
    let mut settings = load_settings(shelf);
    settings.new_chat_model = rule;
    let _ = save_settings(shelf, &settings);
}
