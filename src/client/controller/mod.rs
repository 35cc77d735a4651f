//! The conversation on the page and everything the reader can do to it, by job:
//! - this module: the [`ChatController`] (the page's signals), the conversation shown and its
//!   saved record;
//! - [`history`]: the saved conversations (list, open, rename, delete, workspaces, import,
//!   export) through one [`history::Backend`], kept in this browser ([`browser_history`]) or on
//!   the server ([`server_history`]), chosen once when the page starts;
//! - [`turns`]: send, stop, retry, regenerate, edit, branch, "Answer now", "Think more";
//! - [`models`]: the model list and the reasoning controls;
//! - [`instructions`]: the open chat's own system instructions;
//! - [`notices`]: notices and the polite announcements;
//! - [`chunks`]: the code the page fetches when first used, and the macro that declares it.

use std::sync::atomic::{AtomicU64, Ordering};

use futures::channel::oneshot;
use leptos::prelude::*;
use serde_json::{Map, Value};

use super::decisions;
use super::local_store::{self, Shelf};
use super::saved_chat::{self, ConversationSummary, SavedChat};
use super::thinking_view::ThinkingPref;
use super::turn_state::TurnState;
use super::turn_stream::Leave;
use crate::domain::account::Me;
use crate::domain::attachment::FileRef;
use crate::domain::history::{Conversation, Message, Version};
use crate::domain::history::{Preferences, Workspace};
use crate::domain::reasoning::NewChatModel;
use crate::domain::{Effort, ModelList, ReasoningSettings, Role};
use crate::i18n::Locale;

mod address;
mod attachments;
mod backend;
mod browser_history;
mod chunks;
mod compare;
mod history;
mod instructions;
mod models;
mod notices;
mod organise;
mod server_history;
mod server_list;
mod temporary;
#[cfg(test)]
mod tests;
mod turns;

pub use super::browser::now_ms;
pub use chunks::{want_stream_code, LocalChats};
pub use notices::{Notice, NoticeKind};

use history::History;

static COUNTER: AtomicU64 = AtomicU64::new(1);

/// A fresh id for a conversation or message: time, a counter and (in the browser) randomness.
pub fn new_id() -> String {
    let noise = super::browser::random_u64();
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
    /// The message's id on the server, once it is stored there (server-side history).
    pub server_id: StoredValue<Option<String>>,
    /// Every version of an edited user message, oldest first (empty when never edited): kept so
    /// an edit loses nothing and the bubble can say it was edited.
    pub edits: Vec<Version>,
    /// The files sent with the user's message (its shown version).
    pub files: RwSignal<Vec<FileRef>>,
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
            server_id: StoredValue::new(None),
            edits: Vec::new(),
            files: RwSignal::new(Vec::new()),
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
            server_id: StoredValue::new(None),
            edits: Vec::new(),
            files: RwSignal::new(Vec::new()),
        }
    }

    /// The turn shown now (assistant entries only).
    pub fn turn(&self) -> Option<RwSignal<TurnState>> {
        let active = self.active.get();
        self.versions
            .with(|v| decisions::shown_version(v.len(), active).map(|i| v[i]))
    }

    /// The id the server knows this message by, if it is stored there.
    pub fn server_id(&self) -> Option<String> {
        self.server_id.get_value()
    }

    fn turn_untracked(&self) -> Option<RwSignal<TurnState>> {
        let active = self.active.get_untracked();
        self.versions
            .with_untracked(|v| decisions::shown_version(v.len(), active).map(|i| v[i]))
    }
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
    /// The conversation exists on the server (server-side history).
    on_server: bool,
}

/// One turn the page follows.
struct Run {
    turn: RwSignal<TurnState>,
    leave: oneshot::Sender<Leave>,
    /// The turn's id on the server, once it said it.
    server: Option<String>,
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

/// A search result to bring into view: its message, the words that matched (highlighted in
/// place), and whether they are in the message's thinking (its blocks are opened).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reveal {
    pub message: String,
    pub words: Vec<String>,
    pub in_thinking: bool,
}

/// The page's chat state, provided as context.
#[derive(Clone, Copy)]
pub struct ChatController {
    meta: StoredValue<Meta, LocalStorage>,
    /// Where the saved conversations live, chosen once when the page starts.
    history: History,
    /// This browser's storage (on the server side of history, a cache of what was shown).
    shelf: &'static (dyn Shelf + Sync),
    /// This tab's storage: where a temporary chat is kept.
    tab: &'static (dyn Shelf + Sync),
    /// The chat shown is temporary ([`temporary`]): kept only in this tab, for a while.
    pub temporary: RwSignal<bool>,
    /// The saved chats' reader, once its chunk is here.
    local_chats: StoredValue<Option<LocalChats>>,
    pub conversation_id: RwSignal<String>,
    pub title: RwSignal<String>,
    pub entries: RwSignal<Vec<Entry>>,
    /// Messages of the open conversation kept on the server before the first entry: a long
    /// conversation opens on its last page; earlier pages load as the reader scrolls up.
    pub earlier: RwSignal<usize>,
    /// An earlier page is on its way.
    loading_earlier: StoredValue<bool>,
    /// The composer compares: the next question goes to each of these models (2 to 4).
    pub compare: RwSignal<Option<Vec<crate::client::compare::Pane>>>,
    /// Comparisons whose first answer is not stored yet: the others start once it is.
    waiting: StoredValue<Vec<compare::Waiting>, LocalStorage>,
    /// The turns streaming now: one, or a comparison's answers side by side.
    pub running: RwSignal<Vec<RwSignal<TurnState>>>,
    /// How the page ends its part in each running turn (Stop, or leave it running: another chat
    /// shown), and the turn's id on the server once it is known (for "Answer now").
    runs: StoredValue<Vec<Run>, LocalStorage>,
    save_state: StoredValue<SaveState, LocalStorage>,
    /// Seconds without any frame before the pre-token guard gives up.
    pub guard_secs: RwSignal<u64>,
    pub pref: RwSignal<ThinkingPref>,
    pub draft: RwSignal<String>,
    /// The files attached to the draft.
    pub tray: RwSignal<super::tray::Tray>,
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
    /// Who is signed in and how the server keeps chats, once asked.
    pub me: RwSignal<Option<Me>>,
    /// Chats live on the server (signed in, `PONDER_HISTORY=server`); else in this browser.
    pub server: RwSignal<bool>,
    /// The user's workspaces and the one shown (server-side history).
    pub workspaces: RwSignal<Vec<Workspace>>,
    pub workspace: RwSignal<Option<String>>,
    /// A message to bring into view once its conversation is shown (a search result).
    pub reveal: RwSignal<Option<Reveal>>,
    /// Chats saved in this browser before it used server-side history, offered for import.
    pub importable: RwSignal<usize>,
    /// The workspace's preferences as the server keeps them, so changing one keeps the others.
    prefs: StoredValue<Preferences>,
    /// The models on offer (the configured one alone until the list arrives).
    pub models: RwSignal<ModelList>,
    /// The model the next turn asks for (none: the conversation's, else the default).
    pub model: RwSignal<Option<String>>,
    /// The reasoning settings the next turn asks for.
    pub thinking: RwSignal<Option<bool>>,
    pub effort: RwSignal<Option<Effort>>,
    /// The sampling parameters the next turn asks for (temperature, top-p, the output limit);
    /// its thinking and effort are the two signals above and stay unset here.
    pub sampling: RwSignal<ReasoningSettings>,
    /// The presets offered in the model picker (loaded when it first opens).
    pub presets: RwSignal<Vec<crate::domain::preset::Preset>>,
    /// The tag the conversation list is narrowed to (none: every chat).
    pub tag_filter: RwSignal<Option<String>>,
    /// The open chat's own system instructions: sent with a chat this browser keeps, with the
    /// first message of a new chat the server keeps, and kept on the server after that.
    pub instructions: RwSignal<Option<String>>,
    /// The chat's instructions field is to take the focus once the settings show it (a row
    /// menu's "Instructions").
    pub to_instructions: StoredValue<bool>,
    /// With the chats in this browser: the bytes of the files attached in it, in base64, by
    /// id, sent inside each turn's request (the saved chat keeps the small ones).
    inline_files: StoredValue<std::collections::BTreeMap<String, String>>,
    /// The page's language: the notices and announcements are worded in it.
    pub locale: Locale,
    /// The conversation the reader reached by its address (arriving, Back, Forward), until
    /// another is opened from the page.
    arrived: StoredValue<Option<String>>,
    /// The address names no conversation of the reader's: the page shows the not-found page.
    pub lost: RwSignal<bool>,
    /// The page was loaded at a conversation's address and has not shown it yet: the server
    /// and the page render "opening" there, not an empty chat that then changes.
    pub opening: RwSignal<bool>,
    /// A message sent while that chat was still opening (the first paint takes Enter before
    /// the page knows which chat it shows): sent once it is shown, to that chat, not to a new
    /// one.
    held: StoredValue<Option<String>>,
}

impl Default for ChatController {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes during a stream are throttled to one per this many milliseconds.
const SAVE_THROTTLE_MS: f64 = 1000.0;

impl ChatController {
    /// The page's controller: history on the server when the page says so (signed in,
    /// `PONDER_HISTORY=server`), else in this browser's localStorage.
    pub fn new() -> Self {
        let me = super::browser::page_me();
        let server = me
            .as_ref()
            .is_some_and(|me| me.account.is_some() && me.history == "server");
        Self::with(
            History::chosen(server),
            &local_store::BROWSER,
            &local_store::TAB,
            me,
            super::browser::page_locale(),
        )
    }

    fn with(
        history: History,
        shelf: &'static (dyn Shelf + Sync),
        tab: &'static (dyn Shelf + Sync),
        me: Option<Me>,
        locale: Locale,
    ) -> Self {
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
            history,
            shelf,
            tab,
            temporary: RwSignal::new(false),
            local_chats: StoredValue::new(None),
            conversation_id: RwSignal::new(id),
            title: RwSignal::new(String::new()),
            entries: RwSignal::new(Vec::new()),
            earlier: RwSignal::new(0),
            loading_earlier: StoredValue::new(false),
            compare: RwSignal::new(None),
            waiting: StoredValue::new_local(Vec::new()),
            running: RwSignal::new(Vec::new()),
            runs: StoredValue::new_local(Vec::new()),
            save_state: StoredValue::new_local(SaveState::default()),
            guard_secs: RwSignal::new(120),
            pref: RwSignal::new(ThinkingPref::default()),
            draft: RwSignal::new(crate::client::browser::typed_before_hydration()),
            tray: RwSignal::new(Default::default()),
            editing: RwSignal::new(None),
            conversations: RwSignal::new(Vec::new()),
            notices: RwSignal::new(Vec::new()),
            status: RwSignal::new(String::new()),
            loaded: RwSignal::new(false),
            revision: RwSignal::new(0),
            server: RwSignal::new(history.on_server()),
            me: RwSignal::new(me),
            workspaces: RwSignal::new(Vec::new()),
            workspace: RwSignal::new(None),
            reveal: RwSignal::new(None),
            importable: RwSignal::new(0),
            prefs: StoredValue::new(Preferences::default()),
            models: RwSignal::new(ModelList::default()),
            model: RwSignal::new(None),
            thinking: RwSignal::new(None),
            effort: RwSignal::new(None),
            sampling: RwSignal::new(ReasoningSettings::default()),
            presets: RwSignal::new(Vec::new()),
            tag_filter: RwSignal::new(None),
            instructions: RwSignal::new(None),
            to_instructions: StoredValue::new(false),
            inline_files: StoredValue::new(Default::default()),
            locale,
            arrived: StoredValue::new(None),
            lost: RwSignal::new(false),
            opening: RwSignal::new(super::browser::page_address().chat().is_some()),
            held: StoredValue::new(None),
        }
    }

    fn backend(&self) -> &'static dyn history::Backend {
        self.history.backend()
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

    pub fn is_running(&self) -> bool {
        self.running.with(|r| !r.is_empty())
    }

    /// Whether `turn` is one the page is streaming now.
    pub fn runs_turn(&self, turn: RwSignal<TurnState>) -> bool {
        self.running.with(|r| r.contains(&turn))
    }

    fn remember_current(&self) {
        let mut settings = local_store::load_settings(self.shelf);
        settings.thinking = self.pref.get_untracked();
        settings.last_conversation = self.meta.with_value(|m| m.stored.then(|| m.id.clone()));
        if let Err(e) = local_store::save_settings(self.shelf, &settings) {
            self.notify(notices::NoticeKind::Save, e.notice(self.locale.catalogue()));
        }
    }

    fn show(&self, record: SavedChat) {
        self.show_as(record, false);
    }

    /// Shows `record`, as a temporary chat or as one of the page's history (a temporary chat
    /// shown before is then forgotten).
    fn show_as(&self, record: SavedChat, temporary: bool) {
        if temporary {
            self.temporary.set(true);
        } else {
            self.end_temporary();
        }
        self.new_scope();
        let SavedChat {
            chat,
            extra,
            message_extra,
        } = record;
        let entries = self.entries_of(&chat.messages, message_extra);
        self.take_inline(&extra);
        self.meta.set_value(Meta {
            id: chat.id.clone(),
            title: chat.title.clone(),
            created_at: chat.created_at as f64,
            rev: chat.rev.max(0) as u64,
            extra,
            stored: true,
            on_server: self.kept_on_server(),
        });
        // The conversation goes on with the model of its last answer (a server copy also says
        // its settings once it arrives).
        let last = chat
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .and_then(Message::shown);
        self.take_settings(
            last.and_then(|v| v.model.clone()),
            last.map(|v| v.settings).unwrap_or_default(),
        );
        self.conversation_id.set(chat.id);
        self.instructions.set(chat.instructions);
        self.opening.set(false);
        self.title.set(chat.title);
        self.earlier.set(chat.first);
        self.loading_earlier.set_value(false);
        self.entries.set(entries);
        self.editing.set(None);
    }

    /// The page's entries for saved messages (and what each one's record says beyond them),
    /// made in the current conversation's scope.
    fn entries_of(&self, messages: &[Message], extras: Vec<Map<String, Value>>) -> Vec<Entry> {
        let on_server = self.kept_on_server();
        let mut extras = extras.into_iter();
        self.in_scope(|| {
            messages
                .iter()
                .map(|m| {
                    let turns: Vec<RwSignal<TurnState>> = match m.role {
                        Role::User => Vec::new(),
                        Role::Assistant => m
                            .versions
                            .iter()
                            .map(|v| RwSignal::new(saved_chat::turn_from_stored(v)))
                            .collect(),
                    };
                    let active = m.active.min(m.versions.len().saturating_sub(1));
                    Entry {
                        id: if m.id.is_empty() {
                            new_id()
                        } else {
                            m.id.clone()
                        },
                        role: m.role,
                        created_at: m.created_at as f64,
                        text: match (m.role, m.shown()) {
                            (Role::User, Some(v)) => v.content.clone(),
                            _ => String::new(),
                        },
                        versions: RwSignal::new(turns),
                        active: RwSignal::new(active),
                        extra: extras.next().unwrap_or_default(),
                        server_id: StoredValue::new(
                            (on_server && !m.id.is_empty()).then(|| m.id.clone()),
                        ),
                        edits: if m.role == Role::User && m.versions.len() > 1 {
                            m.versions.clone()
                        } else {
                            Vec::new()
                        },
                        files: RwSignal::new(match (m.role, m.shown()) {
                            (Role::User, Some(v)) => v.files.clone(),
                            _ => Vec::new(),
                        }),
                    }
                })
                .collect::<Vec<_>>()
        })
    }

    /// Starts an empty conversation; it is saved with its first message.
    pub fn new_chat(&self) {
        self.leave();
        self.end_temporary();
        self.new_scope();
        let id = new_id();
        self.meta.set_value(Meta {
            id: id.clone(),
            created_at: now_ms(),
            ..Meta::default()
        });
        self.conversation_id.set(id);
        self.instructions.set(None);
        self.opening.set(false);
        self.title.set(String::new());
        self.earlier.set(0);
        self.entries.set(Vec::new());
        self.editing.set(None);
        self.draft.set(String::new());
        self.clear_tray();
        let model = match local_store::new_chat_rule(self.shelf) {
            NewChatModel::LastUsed => local_store::last_model(self.shelf),
            NewChatModel::Default => None,
        };
        self.take_settings(model, ReasoningSettings::default());
        self.remember_current();
    }

    /// The conversation as saved, at `now`.
    pub fn record(&self, now: f64) -> SavedChat {
        let meta = self.meta.get_value();
        let (messages, message_extra) = self.entries.with_untracked(|entries| {
            entries
                .iter()
                .map(|e| {
                    let (versions, active) = match e.role {
                        Role::User if e.edits.is_empty() => (
                            vec![Version {
                                files: e.files.get_untracked(),
                                ..Version::text(e.text.clone(), e.created_at as i64)
                            }],
                            0,
                        ),
                        Role::User => (e.edits.clone(), e.edits.len() - 1),
                        Role::Assistant => (
                            e.versions.with_untracked(|v| {
                                v.iter()
                                    .map(|t| {
                                        t.with_untracked(|t| saved_chat::version_from_turn(t, now))
                                    })
                                    .collect()
                            }),
                            e.active.get_untracked(),
                        ),
                    };
                    let message = Message {
                        id: e.id.clone(),
                        role: e.role,
                        created_at: e.created_at as i64,
                        active,
                        versions,
                    };
                    (message, e.extra.clone())
                })
                .unzip()
        });
        let mut record = SavedChat::of(Conversation {
            id: meta.id,
            title: meta.title,
            workspace_id: String::new(),
            created_at: meta.created_at as i64,
            updated_at: now as i64,
            rev: 0,
            model: None,
            settings: Default::default(),
            messages,
            first: self.earlier.get_untracked(),
            instructions: self.instructions.get_untracked(),
        })
        .with_message_extra(message_extra);
        record.extra = meta.extra;
        record.set_rev(meta.rev);
        self.keep_inline(&mut record);
        record
    }

    /// Writes the conversation whole. If another tab wrote it since this tab last did, this
    /// tab's version is kept as a copy instead of overwriting theirs (in this browser's
    /// history; on the server's, this browser's copy is a cache and is simply replaced).
    pub fn save(&self) {
        if self.entries.with_untracked(Vec::is_empty) {
            return;
        }
        let now = now_ms();
        self.save_state.update_value(|s| s.last_at = now);
        if self.temporary.get_untracked() {
            return self.save_temporary(now);
        }
        let mut record = self.record(now);
        if self.history.on_server() {
            saved_chat::mark_server_copy(&mut record);
        }
        let stored_rev = local_store::stored_rev(self.shelf, &record.chat.id);
        match self.backend().save_plan(stored_rev, record.rev()) {
            decisions::SavePlan::Write { rev } => record.set_rev(rev),
            decisions::SavePlan::KeepAsCopy => {
                record = decisions::as_copy(record, new_id());
                self.meta.update_value(|m| {
                    m.id = record.chat.id.clone();
                    m.title = record.chat.title.clone();
                });
                self.conversation_id.set(record.chat.id.clone());
                self.title.set(record.chat.title.clone());
                self.notify(
                    NoticeKind::Conflict,
                    self.locale.catalogue().changed_in_other_tab.into(),
                );
            }
        }
        match local_store::save(self.shelf, &record) {
            Ok(()) => {
                let first = !self.meta.with_value(|m| m.stored);
                self.meta.update_value(|m| {
                    m.rev = record.rev();
                    m.stored = true;
                });
                self.dismiss(NoticeKind::Save);
                if first {
                    self.remember_current();
                }
                self.conversations.update(|list| {
                    let mut summary = record.summary();
                    if let Some(at) = list.iter().position(|c| c.id == record.chat.id) {
                        let old = list.remove(at);
                        summary.pinned = old.pinned;
                        summary.tags = old.tags;
                    }
                    list.push(summary);
                    saved_chat::sort_newest_first(list);
                });
            }
            Err(e) => self.notify(NoticeKind::Save, e.notice(self.locale.catalogue())),
        }
    }

    /// Saves the conversation while its answer streams, at most once a second, when this
    /// browser holds the history. On the server's, the server writes the answer as it streams
    /// and a reload joins the turn, so this browser's cache waits for the turn's end: writing
    /// it whole every second cost the page 25–40 ms a second at a megabyte of reasoning.
    fn save_throttled(&self) {
        if self.kept_on_server() {
            return;
        }
        let due = self
            .save_state
            .with_value(|s| now_ms() - s.last_at >= SAVE_THROTTLE_MS);
        if due {
            self.save();
        }
    }
}
