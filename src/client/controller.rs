//! The conversation on the page and everything the reader can do to it: send, stop, retry,
//! regenerate, edit, branch, switch, rename, delete. It binds the chat server function, the turn
//! decoder and the reducer to signals, batches events per animation frame, announces
//! transitions politely and saves what the reader saw.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::channel::oneshot;
use futures::{FutureExt, StreamExt};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{Map, Value};

use super::labels;
use super::persistence::{self, SaveError};
use super::storage::{self, ConversationRecord, ConversationSummary, MessageRecord};
use super::thinking_view::ThinkingPref;
use super::turn_state::{TurnPhase, TurnState};
use crate::domain::{ChatMessage, Role, TurnEvent};
use crate::wire::sse::TurnDecoder;

/// Milliseconds on the client's clock (0 on the server, where turns never run).
pub fn now_ms() -> f64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0.0
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(1);

/// A fresh id for a conversation or message: time, a counter and (in the browser) randomness.
pub fn new_id() -> String {
    #[cfg(feature = "hydrate")]
    let noise = (js_sys::Math::random() * 1e9) as u64;
    #[cfg(not(feature = "hydrate"))]
    let noise = 0u64;
    format!(
        "{:x}{:x}{:x}",
        now_ms() as u64,
        COUNTER.fetch_add(1, Ordering::Relaxed),
        noise
    )
}

/// One message in the conversation as the page shows it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Stable key for the list: appending a token re-renders only its own bubble.
    pub id: String,
    pub role: Role,
    pub created_at: f64,
    /// The user's text (user entries only).
    pub text: String,
    /// The assistant's answers, one per regeneration (assistant entries only).
    pub versions: RwSignal<Vec<RwSignal<TurnState>>>,
    pub active: RwSignal<usize>,
    /// Saved fields this version does not know, written back untouched.
    pub extra: Map<String, Value>,
}

impl Entry {
    pub(crate) fn user(text: String, now: f64) -> Self {
        Entry {
            id: new_id(),
            role: Role::User,
            created_at: now,
            text,
            versions: RwSignal::new(Vec::new()),
            active: RwSignal::new(0),
            extra: Map::new(),
        }
    }

    pub(crate) fn assistant(turn: RwSignal<TurnState>, now: f64) -> Self {
        Entry {
            id: new_id(),
            role: Role::Assistant,
            created_at: now,
            text: String::new(),
            versions: RwSignal::new(vec![turn]),
            active: RwSignal::new(0),
            extra: Map::new(),
        }
    }

    /// The turn shown now (assistant entries only).
    pub fn turn(&self) -> Option<RwSignal<TurnState>> {
        let active = self.active.get();
        self.versions.with(|v| v.get(active).or(v.last()).copied())
    }

    fn turn_untracked(&self) -> Option<RwSignal<TurnState>> {
        let active = self.active.get_untracked();
        self.versions
            .with_untracked(|v| v.get(active).or(v.last()).copied())
    }
}

/// A non-blocking message at the top of the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// Notices of one kind are shown once.
    pub kind: &'static str,
    pub text: String,
}

#[derive(Clone, Debug, Default)]
struct Meta {
    id: String,
    title: String,
    created_at: f64,
    rev: u64,
    extra: Map<String, Value>,
    /// Saved at least once (a new chat is saved with its first message).
    stored: bool,
}

#[derive(Default)]
struct SaveState {
    last_at: f64,
}

/// Where the conversation's signals live. Signals made in an event handler would belong to the
/// handler's component and die with it (a retried bubble re-renders); these owners outlive any
/// bubble. Each shown conversation gets its own child owner, freed one switch later.
struct Scopes {
    page: Owner,
    current: Owner,
    previous: Option<Owner>,
}

/// The page's chat state, provided as context.
#[derive(Clone, Copy)]
pub struct ChatController {
    meta: StoredValue<Meta, LocalStorage>,
    pub conversation_id: RwSignal<String>,
    pub title: RwSignal<String>,
    pub entries: RwSignal<Vec<Entry>>,
    /// The turn streaming now, if any.
    pub running: RwSignal<Option<RwSignal<TurnState>>>,
    stop: StoredValue<Option<oneshot::Sender<()>>, LocalStorage>,
    save_state: StoredValue<SaveState, LocalStorage>,
    /// Seconds without any frame before the pre-token guard gives up.
    pub guard_secs: RwSignal<u64>,
    pub pref: RwSignal<ThinkingPref>,
    pub draft: RwSignal<String>,
    /// The user message being edited: sending replaces it and drops what follows.
    pub editing: RwSignal<Option<String>>,
    pub conversations: RwSignal<Vec<ConversationSummary>>,
    pub notices: RwSignal<Vec<Notice>>,
    /// The polite status region's text.
    pub status: RwSignal<String>,
    /// Set once the saved state has been read (after hydration).
    pub loaded: RwSignal<bool>,
    /// Bumped whenever visible content changes, so the conversation can follow new text.
    pub revision: RwSignal<u64>,
    scopes: StoredValue<Scopes, LocalStorage>,
}

impl Default for ChatController {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes during a stream are throttled to one per this many milliseconds.
const SAVE_THROTTLE_MS: f64 = 1000.0;

impl ChatController {
    pub fn new() -> Self {
        let id = new_id();
        let page = Owner::current().unwrap_or_default();
        let current = page.child();
        ChatController {
            scopes: StoredValue::new_local(Scopes {
                page,
                current,
                previous: None,
            }),
            meta: StoredValue::new_local(Meta {
                id: id.clone(),
                ..Meta::default()
            }),
            conversation_id: RwSignal::new(id),
            title: RwSignal::new(String::new()),
            entries: RwSignal::new(Vec::new()),
            running: RwSignal::new(None),
            stop: StoredValue::new_local(None),
            save_state: StoredValue::new_local(SaveState::default()),
            guard_secs: RwSignal::new(120),
            pref: RwSignal::new(ThinkingPref::default()),
            draft: RwSignal::new(String::new()),
            editing: RwSignal::new(None),
            conversations: RwSignal::new(Vec::new()),
            notices: RwSignal::new(Vec::new()),
            status: RwSignal::new(String::new()),
            loaded: RwSignal::new(false),
            revision: RwSignal::new(0),
        }
    }

    /// Runs `f` in the current conversation's scope, so the signals it makes outlive the
    /// component that triggered it.
    fn in_scope<T>(&self, f: impl FnOnce() -> T) -> T {
        let owner = self.scopes.with_value(|s| s.current.clone());
        owner.with(f)
    }

    /// Starts a new scope for a newly shown conversation and frees the one before the last.
    fn new_scope(&self) {
        self.scopes.update_value(|s| {
            if let Some(old) = s.previous.take() {
                old.cleanup();
            }
            let fresh = s.page.child();
            s.previous = Some(std::mem::replace(&mut s.current, fresh));
        });
    }

    fn turn_signal(&self, turn: TurnState) -> RwSignal<TurnState> {
        self.in_scope(|| RwSignal::new(turn))
    }

    pub fn is_running(&self) -> bool {
        self.running.with(Option::is_some)
    }

    // ---------- notices and announcements ----------

    /// Shows a notice unless one of its kind is already shown.
    pub fn notify(&self, kind: &'static str, text: String) {
        self.notices.update(|n| {
            if !n.iter().any(|x| x.kind == kind) {
                n.push(Notice { kind, text });
            }
        });
    }

    pub fn dismiss(&self, kind: &'static str) {
        self.notices.update(|n| n.retain(|x| x.kind != kind));
    }

    fn announce(&self, lines: Vec<String>) {
        if !lines.is_empty() {
            self.status.set(lines.join(". "));
        }
    }

    // ---------- loading, switching, the list ----------

    /// Reads settings and saved chats. Called once, after hydration.
    pub fn load_saved(&self) {
        if !persistence::available() {
            self.notify("storage", SaveError::Unavailable.notice());
        }
        let settings = persistence::load_settings();
        self.pref.set(settings.thinking);
        self.refresh_list();
        if let Some(id) = settings.last_conversation {
            if let Some(record) = persistence::load(&id) {
                self.show(record);
            }
        }
        self.loaded.set(true);
    }

    /// Re-reads the list of saved conversations.
    pub fn refresh_list(&self) {
        let (records, set_aside) = persistence::load_all(now_ms());
        if !set_aside.is_empty() {
            self.notify(
                "corrupt",
                format!(
                    "Some saved chat data could not be read, so Ponder started clean. The unreadable data was kept aside under {}.",
                    set_aside.join(", ")
                ),
            );
        }
        let mut list: Vec<ConversationSummary> =
            records.iter().map(ConversationRecord::summary).collect();
        storage::sort_newest_first(&mut list);
        self.conversations.set(list);
    }

    fn remember_current(&self) {
        let mut settings = persistence::load_settings();
        settings.thinking = self.pref.get_untracked();
        settings.last_conversation = self.meta.with_value(|m| m.stored.then(|| m.id.clone()));
        if let Err(e) = persistence::save_settings(&settings) {
            self.notify("save", e.notice());
        }
    }

    /// Changes the thinking preference and keeps it.
    pub fn set_pref(&self, pref: ThinkingPref) {
        self.pref.set(pref);
        self.remember_current();
    }

    fn show(&self, record: ConversationRecord) {
        self.new_scope();
        let entries = self.in_scope(|| {
            record
                .messages
                .iter()
                .map(|m| {
                    let (versions, active) = storage::versions_of(m);
                    let turns: Vec<RwSignal<TurnState>> = match m.role {
                        Role::User => Vec::new(),
                        Role::Assistant => versions
                            .iter()
                            .map(|v| RwSignal::new(storage::turn_from_version(v)))
                            .collect(),
                    };
                    Entry {
                        id: if m.id.is_empty() {
                            new_id()
                        } else {
                            m.id.clone()
                        },
                        role: m.role,
                        created_at: m.created_at,
                        text: if m.role == Role::User {
                            m.content.clone()
                        } else {
                            String::new()
                        },
                        versions: RwSignal::new(turns),
                        active: RwSignal::new(active),
                        extra: m.extra.clone(),
                    }
                })
                .collect::<Vec<_>>()
        });
        self.meta.set_value(Meta {
            id: record.id.clone(),
            title: record.title.clone(),
            created_at: record.created_at,
            rev: record.rev,
            extra: record.extra.clone(),
            stored: true,
        });
        self.conversation_id.set(record.id);
        self.title.set(record.title);
        self.entries.set(entries);
        self.editing.set(None);
    }

    /// Opens a saved conversation.
    pub fn open(&self, id: &str) {
        if self.conversation_id.get_untracked() == id {
            return;
        }
        self.stop();
        match persistence::load(id) {
            Some(record) => {
                self.show(record);
                self.remember_current();
            }
            None => {
                self.notify(
                    "missing",
                    "That chat is no longer saved (deleted in another tab?).".into(),
                );
                self.refresh_list();
            }
        }
    }

    /// Starts an empty conversation; it is saved with its first message.
    pub fn new_chat(&self) {
        self.stop();
        self.new_scope();
        let id = new_id();
        self.meta.set_value(Meta {
            id: id.clone(),
            created_at: now_ms(),
            ..Meta::default()
        });
        self.conversation_id.set(id);
        self.title.set(String::new());
        self.entries.set(Vec::new());
        self.editing.set(None);
        self.draft.set(String::new());
        self.remember_current();
    }

    pub fn rename(&self, id: &str, title: String) {
        let title = title.trim().to_string();
        if title.is_empty() {
            return;
        }
        if id == self.conversation_id.get_untracked() {
            self.title.set(title.clone());
            self.meta.update_value(|m| m.title = title);
            self.save();
        } else if let Some(mut record) = persistence::load(id) {
            record.title = title;
            record.rev += 1;
            if let Err(e) = persistence::save(&record) {
                self.notify("save", e.notice());
            }
        }
        self.refresh_list();
    }

    pub fn delete(&self, id: &str) {
        persistence::remove(id);
        if id == self.conversation_id.get_untracked() {
            self.new_chat();
        }
        self.refresh_list();
    }

    /// Another tab wrote `key`: refresh the list, and adopt the other tab's version of the open
    /// conversation when nothing runs here.
    pub fn on_storage_changed(&self, key: Option<String>) {
        self.refresh_list();
        let current = storage::key_for(&self.conversation_id.get_untracked());
        if key.as_deref() != Some(current.as_str()) || self.is_running() {
            return;
        }
        let id = self.conversation_id.get_untracked();
        match persistence::load(&id) {
            Some(record) if record.rev > self.meta.with_value(|m| m.rev) => self.show(record),
            None if self.meta.with_value(|m| m.stored) => {
                self.notify(
                    "deleted-elsewhere",
                    "This chat was deleted in another tab; it is still here until you leave it."
                        .into(),
                );
                self.meta.update_value(|m| m.stored = false);
            }
            _ => {}
        }
    }

    // ---------- the record ----------

    /// The conversation as saved, at `now`.
    pub fn record(&self, now: f64) -> ConversationRecord {
        let meta = self.meta.get_value();
        let messages = self.entries.with_untracked(|entries| {
            entries
                .iter()
                .map(|e| match e.role {
                    Role::User => MessageRecord {
                        id: e.id.clone(),
                        role: Role::User,
                        content: e.text.clone(),
                        created_at: e.created_at,
                        thinking: None,
                        status: None,
                        error: None,
                        versions: Vec::new(),
                        active_version: None,
                        extra: e.extra.clone(),
                    },
                    Role::Assistant => {
                        let versions = e.versions.with_untracked(|v| {
                            v.iter()
                                .map(|t| t.with_untracked(|t| storage::version_from_turn(t, now)))
                                .collect()
                        });
                        let mut m = storage::assistant_record(
                            e.id.clone(),
                            e.created_at,
                            versions,
                            e.active.get_untracked(),
                        );
                        m.extra = e.extra.clone();
                        m
                    }
                })
                .collect()
        });
        ConversationRecord {
            id: meta.id,
            title: meta.title,
            created_at: meta.created_at,
            updated_at: now,
            rev: meta.rev,
            messages,
            extra: meta.extra,
        }
    }

    /// Writes the conversation whole. If another tab wrote it since this tab last did, this
    /// tab's version is kept as a copy instead of overwriting theirs.
    pub fn save(&self) {
        if self.entries.with_untracked(Vec::is_empty) {
            return;
        }
        let now = now_ms();
        self.save_state.update_value(|s| s.last_at = now);
        let mut record = self.record(now);
        let stored_rev = persistence::load(&record.id).map(|r| r.rev);
        if let Some(theirs) = stored_rev.filter(|&r| r > record.rev) {
            let _ = theirs;
            record.id = new_id();
            record.title = format!("{} (copy)", record.title);
            record.rev = 0;
            self.meta.update_value(|m| {
                m.id = record.id.clone();
                m.title = record.title.clone();
                m.rev = 0;
            });
            self.conversation_id.set(record.id.clone());
            self.title.set(record.title.clone());
            self.notify(
                "conflict",
                "This chat was changed in another tab at the same time; your version was saved as a copy.".into(),
            );
        }
        record.rev += 1;
        match persistence::save(&record) {
            Ok(()) => {
                let first = !self.meta.with_value(|m| m.stored);
                self.meta.update_value(|m| {
                    m.rev = record.rev;
                    m.stored = true;
                });
                self.dismiss("save");
                if first {
                    self.remember_current();
                }
                self.conversations.update(|list| {
                    list.retain(|c| c.id != record.id);
                    list.push(record.summary());
                    storage::sort_newest_first(list);
                });
            }
            Err(e) => self.notify("save", e.notice()),
        }
    }

    fn save_throttled(&self) {
        let due = self
            .save_state
            .with_value(|s| now_ms() - s.last_at >= SAVE_THROTTLE_MS);
        if due {
            self.save();
        }
    }

    // ---------- turns ----------

    /// The history sent upstream for the entries before `upto`: user texts and finished
    /// answers, thinking excluded; consecutive user messages are joined.
    fn history(entries: &[Entry]) -> Vec<ChatMessage> {
        let mut out: Vec<ChatMessage> = Vec::new();
        for e in entries {
            let message = match e.role {
                Role::User => ChatMessage::user(e.text.clone()),
                Role::Assistant => {
                    let Some(turn) = e.turn_untracked() else {
                        continue;
                    };
                    let answer = turn.with_untracked(|t| {
                        matches!(t.phase, TurnPhase::Done | TurnPhase::Stopped)
                            .then(|| t.answer.clone())
                    });
                    match answer.filter(|a| !a.trim().is_empty()) {
                        Some(a) => ChatMessage::assistant(a),
                        None => continue,
                    }
                }
            };
            match out.last_mut() {
                Some(last) if last.role == message.role => {
                    last.content.push_str("\n\n");
                    last.content.push_str(&message.content);
                }
                _ => out.push(message),
            }
        }
        out
    }

    /// Sends the draft (or `text`) as a user message and streams the assistant's turn. While
    /// editing, the edited message and everything after it are replaced.
    pub fn send(&self, text: String) {
        if self.is_running() || text.trim().is_empty() {
            return;
        }
        let now = now_ms();
        let turn = self.turn_signal(TurnState::started(now));
        let (user, assistant) =
            self.in_scope(|| (Entry::user(text.clone(), now), Entry::assistant(turn, now)));
        let mut messages = Vec::new();
        let editing = self.editing.get_untracked();
        self.entries.update(|entries| {
            if let Some(pos) = editing.and_then(|id| entries.iter().position(|e| e.id == id)) {
                entries.truncate(pos);
            }
            entries.push(user);
            messages = Self::history(entries);
            entries.push(assistant);
        });
        self.editing.set(None);
        if self.title.get_untracked().is_empty() {
            let title = storage::title_from(&text);
            self.title.set(title.clone());
            self.meta.update_value(|m| {
                m.title = title;
                if m.created_at == 0.0 {
                    m.created_at = now;
                }
            });
        }
        self.start(messages, turn);
    }

    fn history_before(&self, entry_id: &str) -> Vec<ChatMessage> {
        self.entries.with_untracked(|entries| {
            let upto = entries
                .iter()
                .position(|e| e.id == entry_id)
                .unwrap_or(entries.len());
            Self::history(&entries[..upto])
        })
    }

    /// Runs the turn of `entry` again in place of its failed active version.
    pub fn retry(&self, entry: &Entry) {
        if self.is_running() {
            return;
        }
        let messages = self.history_before(&entry.id);
        let turn = self.turn_signal(TurnState::started(now_ms()));
        let active = entry.active.get_untracked();
        entry.versions.update(|v| match v.get_mut(active) {
            Some(slot) => *slot = turn,
            None => v.push(turn),
        });
        self.start(messages, turn);
    }

    /// A new answer for `entry`; earlier versions stay reachable.
    pub fn regenerate(&self, entry: &Entry) {
        if self.is_running() {
            return;
        }
        let messages = self.history_before(&entry.id);
        let turn = self.turn_signal(TurnState::started(now_ms()));
        entry.versions.update(|v| v.push(turn));
        entry
            .active
            .set(entry.versions.with_untracked(Vec::len) - 1);
        self.start(messages, turn);
    }

    /// Shows another version of an assistant answer.
    pub fn show_version(&self, entry: &Entry, index: usize) {
        if index < entry.versions.with_untracked(Vec::len) && !self.is_running() {
            entry.active.set(index);
            self.save();
        }
    }

    /// Puts a user message back in the composer; sending it drops the later messages.
    pub fn edit(&self, entry: &Entry) {
        if self.is_running() {
            return;
        }
        self.draft.set(entry.text.clone());
        self.editing.set(Some(entry.id.clone()));
    }

    pub fn cancel_edit(&self) {
        self.editing.set(None);
        self.draft.set(String::new());
    }

    /// A new conversation holding the history up to and including `entry`.
    pub fn branch(&self, entry: &Entry) {
        if self.is_running() {
            return;
        }
        let now = now_ms();
        let mut record = self.record(now);
        if let Some(pos) = record.messages.iter().position(|m| m.id == entry.id) {
            record.messages.truncate(pos + 1);
        }
        let title = format!(
            "{} (branch)",
            if record.title.is_empty() {
                "Chat"
            } else {
                record.title.as_str()
            }
        );
        let branched = ConversationRecord {
            id: new_id(),
            title,
            created_at: now,
            updated_at: now,
            rev: 1,
            messages: record.messages,
            extra: Map::new(),
        };
        match persistence::save(&branched) {
            Ok(()) => {
                self.refresh_list();
                self.show(branched);
                self.remember_current();
            }
            Err(e) => self.notify("save", e.notice()),
        }
    }

    /// Ends the running turn at once; what arrived stays, marked stopped.
    pub fn stop(&self) {
        self.stop.update_value(|s| {
            if let Some(tx) = s.take() {
                let _ = tx.send(());
            }
        });
    }

    /// Sets every block of the conversation open or closed, as the reader's own choice.
    pub fn set_all_blocks(&self, open: bool) {
        self.entries.with_untracked(|entries| {
            for e in entries {
                e.versions.with_untracked(|versions| {
                    for t in versions {
                        t.update(|t| {
                            for b in &mut t.blocks {
                                b.reader_open = Some(open);
                            }
                        });
                    }
                });
            }
        });
        self.save();
    }

    /// Marks the turn running at once (a second Enter cannot send twice), then saves and sends
    /// in the next task: the event that sent the message only renders it. On a fresh page the
    /// first send did all three in one task of about 50 ms, the longest of a whole turn.
    fn start(&self, messages: Vec<ChatMessage>, turn: RwSignal<TurnState>) {
        let (tx, rx) = oneshot::channel();
        self.stop.set_value(Some(tx));
        self.running.set(Some(turn));
        self.status.set("Sending…".into());
        let this = *self;
        let guard_secs = self.guard_secs.get_untracked();
        spawn_local(async move {
            sleep(std::time::Duration::ZERO).await;
            this.save();
            run_turn(this, messages, turn, rx, guard_secs).await;
            this.stop.set_value(None);
            this.running.set(None);
            this.save();
        });
    }

    /// Applies events to `turn` in one update, then announces and saves (throttled).
    fn apply(&self, turn: RwSignal<TurnState>, events: Vec<TurnEvent>) {
        if events.is_empty() {
            return;
        }
        let now = now_ms();
        let mut heard = Vec::new();
        turn.update(|t| {
            let before = labels::Milestones::of(t);
            for e in &events {
                t.apply(e, now);
            }
            heard = labels::announcements(&before, t, now);
        });
        self.announce(heard);
        self.revision.update(|r| *r += 1);
        self.save_throttled();
    }

    fn transition(&self, turn: RwSignal<TurnState>, change: impl FnOnce(&mut TurnState)) {
        let now = now_ms();
        let mut heard = Vec::new();
        turn.update(|t| {
            let before = labels::Milestones::of(t);
            change(t);
            heard = labels::announcements(&before, t, now);
        });
        self.announce(heard);
        self.revision.update(|r| *r += 1);
    }
}

/// Collects decoded events and applies them at most once per animation frame.
#[derive(Clone)]
struct FrameBatch {
    pending: Rc<RefCell<Vec<TurnEvent>>>,
    scheduled: Rc<Cell<bool>>,
}

impl FrameBatch {
    fn new() -> Self {
        FrameBatch {
            pending: Rc::default(),
            scheduled: Rc::default(),
        }
    }

    fn push(&self, chat: ChatController, turn: RwSignal<TurnState>, events: &mut Vec<TurnEvent>) {
        if events.is_empty() {
            return;
        }
        self.pending.borrow_mut().append(events);
        if !self.scheduled.replace(true) {
            let this = self.clone();
            request_animation_frame(move || {
                this.scheduled.set(false);
                this.flush(chat, turn);
            });
        }
    }

    fn flush(&self, chat: ChatController, turn: RwSignal<TurnState>) {
        let events = std::mem::take(&mut *self.pending.borrow_mut());
        chat.apply(turn, events);
    }
}

async fn run_turn(
    chat: ChatController,
    messages: Vec<ChatMessage>,
    turn: RwSignal<TurnState>,
    stop: oneshot::Receiver<()>,
    guard_secs: u64,
) {
    let mut stop = stop.fuse();
    let mut guard = sleep(std::time::Duration::from_secs(guard_secs)).fuse();
    let mut call = Box::pin(crate::api::chat::chat(messages).fuse());
    let stream = futures::select! {
        result = call => result,
        _ = stop => { chat.transition(turn, |t| t.stop(now_ms())); return; }
        _ = guard => { chat.transition(turn, |t| t.no_frame_within(guard_secs, now_ms())); return; }
    };
    let mut bytes = match stream {
        Ok(stream) => stream.into_inner(),
        Err(e) => {
            chat.transition(turn, |t| t.fail(e.0.message, e.0.retryable, now_ms()));
            return;
        }
    };
    let batch = FrameBatch::new();
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    let mut saw_frame = false;
    loop {
        futures::select! {
            chunk = bytes.next().fuse() => match chunk {
                Some(Ok(chunk)) => {
                    decoder.push(&chunk, &mut events);
                    saw_frame |= !events.is_empty();
                    let terminal = events.iter().any(TurnEvent::is_terminal);
                    batch.push(chat, turn, &mut events);
                    if terminal {
                        batch.flush(chat, turn);
                        return;
                    }
                }
                Some(Err(_)) | None => break,
            },
            _ = stop => {
                batch.flush(chat, turn);
                chat.transition(turn, |t| t.stop(now_ms()));
                return;
            }
            _ = guard => {
                if !saw_frame {
                    batch.flush(chat, turn);
                    chat.transition(turn, |t| t.no_frame_within(guard_secs, now_ms()));
                    return;
                }
            }
        }
    }
    decoder.finish(&mut events);
    batch.push(chat, turn, &mut events);
    batch.flush(chat, turn);
    chat.transition(turn, |t| t.end_of_stream(now_ms()));
}

/// A future that resolves after `duration` (never on the server, where turns do not run).
fn sleep(
    duration: std::time::Duration,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
    let (tx, rx) = oneshot::channel::<()>();
    set_timeout(
        move || {
            let _ = tx.send(());
        },
        duration,
    );
    Box::pin(async move {
        if rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}
