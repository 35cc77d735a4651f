//! The conversation on the page and everything the reader can do to it: send, stop, retry,
//! regenerate, edit, branch, switch, rename, delete. It binds the chat server function, the turn
//! decoder and the reducer to signals, batches events per animation frame, announces
//! transitions politely and saves what the reader saw.

use std::sync::atomic::{AtomicU64, Ordering};

use futures::channel::oneshot;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{Map, Value};

use super::browser::sleep;
use super::decisions;
use super::labels;
use super::local_store::{self, SaveError};
use super::saved_chat::{
    self, ConversationRecord, ConversationSummary, MessageRecord, VersionRecord,
};
use super::thinking_view::ThinkingPref;
use super::turn_state::TurnState;
use super::turn_stream::{Ended, Leave, Source, TurnCode, TurnHost};
use crate::domain::account::Me;
use crate::domain::history::{Page, Preferences, Workspace};
use crate::domain::reasoning::NewChatModel;
use crate::domain::{
    ChatMessage, ChatRequest, Controls, Effort, Failure, ModelList, ReasoningSettings, Role,
    TurnEvent,
};
use crate::i18n::{fill, Catalogue, Locale};

pub use super::browser::now_ms;

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
    pub edits: Vec<VersionRecord>,
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

/// What a notice is about. Notices of one kind are shown once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// Browser storage cannot be used at all.
    Storage,
    /// A write failed (storage full, or another error).
    Save,
    /// Saved data could not be read and was set aside.
    Corrupt,
    /// Another tab changed the same chat at the same time.
    Conflict,
    /// The chat asked for is no longer saved.
    Missing,
    /// The open chat was deleted in another tab.
    DeletedElsewhere,
    /// A conversation was deleted; Undo brings it back.
    Deleted,
    /// Chats of this browser were imported to the server.
    Imported,
    /// The server did not do what was asked.
    Server,
}

impl NoticeKind {
    /// Every kind, in the order the page shows their notices.
    pub const ALL: [NoticeKind; 9] = [
        NoticeKind::Storage,
        NoticeKind::Save,
        NoticeKind::Corrupt,
        NoticeKind::Conflict,
        NoticeKind::Missing,
        NoticeKind::DeletedElsewhere,
        NoticeKind::Deleted,
        NoticeKind::Imported,
        NoticeKind::Server,
    ];

    /// The name the page carries in `data-kind`.
    pub fn name(self) -> &'static str {
        match self {
            NoticeKind::Storage => "storage",
            NoticeKind::Save => "save",
            NoticeKind::Corrupt => "corrupt",
            NoticeKind::Conflict => "conflict",
            NoticeKind::Missing => "missing",
            NoticeKind::DeletedElsewhere => "deleted-elsewhere",
            NoticeKind::Deleted => "deleted",
            NoticeKind::Imported => "imported",
            NoticeKind::Server => "server",
        }
    }
}

/// A non-blocking message at the top of the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    pub text: String,
    /// A deleted conversation the notice can bring back.
    pub undo: Option<String>,
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
    /// The turn streaming now, if any.
    pub running: RwSignal<Option<RwSignal<TurnState>>>,
    /// Ends the page's part in the running turn: Stop, or leave it running (another chat shown).
    stop: StoredValue<Option<oneshot::Sender<Leave>>, LocalStorage>,
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
    /// Who is signed in and how the server keeps chats, once asked.
    pub me: RwSignal<Option<Me>>,
    /// Chats live on the server (signed in, `PONDER_HISTORY=server`); else in this browser.
    pub server: RwSignal<bool>,
    /// The user's workspaces and the one shown (server-side history).
    pub workspaces: RwSignal<Vec<Workspace>>,
    pub workspace: RwSignal<Option<String>>,
    /// A message to bring into view once its conversation is shown (a search result).
    pub reveal: RwSignal<Option<String>>,
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
    /// The running turn's id on the server, for "Answer now".
    running_turn: StoredValue<Option<String>>,
    /// The page's language: the notices and announcements are worded in it.
    pub locale: Locale,
}

impl Default for ChatController {
    fn default() -> Self {
        Self::new()
    }
}

/// Messages asked for when a conversation opens: its last ones, as many as the page renders.
const OPEN_PAGE: usize = 40;

/// The fewest messages asked for when the reader scrolls up past what is loaded.
const EARLIER_PAGE: usize = 100;

/// Writes during a stream are throttled to one per this many milliseconds.
const SAVE_THROTTLE_MS: f64 = 1000.0;

impl ChatController {
    pub fn new() -> Self {
        let page_me = super::browser::page_me();
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
            local_chats: StoredValue::new(None),
            conversation_id: RwSignal::new(id),
            title: RwSignal::new(String::new()),
            entries: RwSignal::new(Vec::new()),
            earlier: RwSignal::new(0),
            loading_earlier: StoredValue::new(false),
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
            server: RwSignal::new(
                page_me
                    .as_ref()
                    .is_some_and(|me| me.account.is_some() && me.history == "server"),
            ),
            me: RwSignal::new(page_me),
            workspaces: RwSignal::new(Vec::new()),
            workspace: RwSignal::new(None),
            reveal: RwSignal::new(None),
            importable: RwSignal::new(0),
            prefs: StoredValue::new(Preferences::default()),
            models: RwSignal::new(ModelList::default()),
            model: RwSignal::new(None),
            thinking: RwSignal::new(None),
            effort: RwSignal::new(None),
            running_turn: StoredValue::new(None),
            locale: super::browser::page_locale(),
        }
    }

    // ---------- models and reasoning controls ----------

    /// Asks the server for the models on offer.
    pub fn load_models(&self) {
        let this = *self;
        spawn_local(async move {
            if let Ok(list) = crate::api::models::list_models().await {
                this.models.set(list);
            }
        });
    }

    /// The model the next turn uses: the one picked or remembered while it is on offer, else
    /// the default.
    pub fn current_model(&self) -> String {
        let picked = self.model.get();
        self.models.with(|list| match picked {
            Some(id) if list.models.is_empty() || list.find(&id).is_some() => id,
            _ => list.default.clone(),
        })
    }

    /// What the current model accepts.
    pub fn controls(&self) -> Controls {
        let model = self.current_model();
        self.models.with(|m| m.controls(&model))
    }

    /// Picks the model for the next turns of this conversation.
    pub fn pick_model(&self, id: String) {
        self.model.set(Some(id.clone()));
        local_store::set_last_model(&id);
    }

    /// The request with the model and the reasoning settings (the composer's, or `settings`),
    /// recorded on the turn too.
    fn with_settings(
        &self,
        mut request: ChatRequest,
        turn: RwSignal<TurnState>,
        settings: Option<ReasoningSettings>,
    ) -> ChatRequest {
        let model = untrack(|| self.current_model());
        let settings = settings
            .unwrap_or(ReasoningSettings {
                thinking: self.thinking.get_untracked(),
                effort: self.effort.get_untracked(),
            })
            .applicable(self.models.with_untracked(|m| m.controls(&model)));
        request.model = (!model.is_empty()).then(|| model.clone());
        request.thinking = settings.thinking;
        request.effort = settings.effort;
        turn.update_untracked(|t| {
            t.model = request.model.clone();
            t.settings = settings;
        });
        request
    }

    /// "Answer now": the running turn stops thinking and answers with what it has thought.
    pub fn answer_now(&self) {
        let Some(turn) = self.running_turn.get_value() else {
            return;
        };
        let this = *self;
        spawn_local(async move {
            if let Err(e) = crate::api::turn::answer_now(turn).await {
                this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.answer_now_failed, &e.0),
                );
            }
        });
    }

    /// "Think more": a new version of `entry` one effort level up from what it was asked with
    /// (or with thinking on). The composer's own settings stay as they are.
    pub fn think_more(&self, entry: &Entry) {
        let asked = entry
            .turn_untracked()
            .map(|t| t.with_untracked(|t| t.settings))
            .unwrap_or_default();
        let controls = untrack(|| self.controls());
        let more = ReasoningSettings {
            thinking: controls.toggle.then_some(true),
            effort: controls
                .effort
                .then(|| decisions::more_effort(asked.effort, controls.levels))
                .flatten()
                .or(asked.effort),
        };
        self.regenerate_with(entry, Some(more));
    }

    /// Sends the failed turn of `entry` again without reasoning settings (the model's own
    /// default), after the upstream refused one; the composer's settings go back to default.
    pub fn retry_without_settings(&self, entry: &Entry) {
        self.thinking.set(None);
        self.effort.set(None);
        self.retry(entry);
    }

    /// The model and settings a conversation opened from the server last used.
    fn take_settings(&self, model: Option<String>, settings: ReasoningSettings) {
        self.model.set(model);
        self.thinking.set(settings.thinking);
        self.effort.set(settings.effort);
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
    /// A notice's words in the page's language, with what failed (`detail`) in them.
    pub fn say(&self, pick: impl Fn(&Catalogue) -> &'static str, detail: &str) -> String {
        fill(pick(self.locale.catalogue()), &[("detail", detail)])
    }

    /// A notice's words for a failure the server reported, said in the page's language.
    pub fn say_failed(
        &self,
        pick: impl Fn(&Catalogue) -> &'static str,
        failure: &Failure,
    ) -> String {
        self.say(pick, &super::labels::failure_text(failure, self.locale))
    }

    pub fn notify(&self, kind: NoticeKind, text: String) {
        self.notices.update(|n| {
            if !n.iter().any(|x| x.kind == kind) {
                n.push(Notice {
                    kind,
                    text,
                    undo: None,
                });
            }
        });
    }

    /// Runs `then` with a chunk's code once it is here. If it cannot be fetched, a notice says
    /// so and nothing else happens; a failure is not remembered, so the next try fetches again.
    pub fn when_loaded<T: 'static>(
        &self,
        code: impl std::future::Future<Output = Result<T, leptos::wasm_split::SplitLoaderError>>
            + 'static,
        then: impl FnOnce(T) + 'static,
    ) {
        let this = *self;
        spawn_local(async move {
            match code.await {
                Ok(code) => then(code),
                Err(e) => this.part_not_loaded(&e),
            }
        });
    }

    /// Says that a chunk could not be fetched (the reader can try again).
    fn part_not_loaded(&self, e: &leptos::wasm_split::SplitLoaderError) {
        leptos::logging::warn!("a part of the page could not be fetched: {e}");
        self.notify(
            NoticeKind::Server,
            self.locale.catalogue().part_not_loaded.into(),
        );
    }

    fn with_list_actions(&self, run: impl FnOnce(ListActions) + 'static) {
        self.when_loaded(list_actions_code(), run);
    }

    /// Starts fetching the list's actions when one is about to be used (a row's menu item, a
    /// workspace form), so that it does not wait for the network. Only server-side history
    /// needs them.
    pub fn want_list_actions(&self) {
        if self.server.get_untracked() {
            spawn_local(async {
                let _ = prefetch_list_actions().await;
            });
        }
    }

    /// Runs `then` with the reader of this browser's saved chats: at once when it is here or
    /// when no chat is saved here (there is nothing to read), else once its chunk is fetched. If
    /// the chunk cannot be fetched, a notice says so and `then` does not run.
    fn with_local_chats(&self, then: impl FnOnce(LocalChats) + 'static) {
        self.reading_local_chats(false, then);
    }

    /// As [`Self::with_local_chats`]; with `anyway`, a failed fetch still runs `then`, with a
    /// reader that finds nothing (the page then goes on without this browser's copies, and
    /// nothing stored is touched).
    fn reading_local_chats(&self, anyway: bool, then: impl FnOnce(LocalChats) + 'static) {
        if let Some(code) = self.local_chats.get_value() {
            return then(code);
        }
        if !local_store::has_chats() {
            return then(LocalChats::NOTHING_SAVED);
        }
        let this = *self;
        spawn_local(async move {
            match local_chats_code().await {
                Ok(code) => {
                    this.local_chats.set_value(Some(code));
                    then(code);
                }
                Err(e) => {
                    this.part_not_loaded(&e);
                    if anyway {
                        then(LocalChats::NOTHING_SAVED);
                    }
                }
            }
        });
    }

    pub fn dismiss(&self, kind: NoticeKind) {
        self.notices.update(|n| n.retain(|x| x.kind != kind));
    }

    fn announce(&self, lines: Vec<String>) {
        if !lines.is_empty() {
            self.status.set(lines.join(". "));
        }
    }

    // ---------- loading, switching, the list ----------

    /// Reads settings and saved chats (this browser's copies first, once they can be read), then
    /// asks the server who is signed in and, with server-side history, takes the list and the
    /// open chat from there. Called once, after hydration.
    pub fn load_saved(&self) {
        if !local_store::available() {
            self.notify(
                NoticeKind::Storage,
                SaveError::Unavailable.notice(self.locale.catalogue()),
            );
        }
        let settings = local_store::load_settings();
        self.pref.set(settings.thinking);
        self.load_models();
        if settings.new_chat_model == NewChatModel::LastUsed {
            self.model.set(settings.last_model.clone());
        }
        let server = self.server.get_untracked();
        if server {
            // The server's list does not wait for this browser's copies.
            self.refresh_list();
            self.refresh_workspaces();
        }
        if settings.last_conversation.is_some() && (server || local_store::has_chats()) {
            // A chat is about to be shown: its code comes beside the saved chats' reader.
            spawn_local(async {
                let _ = stored_chat_code().await;
            });
        }
        let this = *self;
        self.reading_local_chats(true, move |local| this.load_saved_with(local, settings));
    }

    /// The rest of [`Self::load_saved`], once this browser's saved chats can be read.
    fn load_saved_with(&self, local: LocalChats, settings: saved_chat::Settings) {
        let last = settings.last_conversation.clone();
        if !self.server.get_untracked() {
            self.refresh_list_with(local);
        }
        if let Some(id) = &last {
            if let Some(record) = (local.load)(id) {
                self.show(record);
            }
        }
        if self.server.get_untracked() {
            self.meta.update_value(|m| m.on_server = m.stored);
            if let Some(id) = last {
                // No copy in this browser yet (a reload right after the first answer began):
                // the server's copy is the one shown.
                if self.conversation_id.get_untracked() != id {
                    self.await_server_copy(&id);
                }
                self.fetch_conversation(id);
            }
            if !settings.import_declined {
                self.importable.set(
                    (local.load_all)(now_ms())
                        .0
                        .iter()
                        .filter(|r| !saved_chat::is_server_copy(r))
                        .count(),
                );
            }
        }
        let needs_sign_in = self.me.with_untracked(|me| {
            me.as_ref()
                .is_some_and(|me| me.auth == "password" && me.account.is_none())
        });
        if needs_sign_in {
            // Whether this is the first visit (the form then creates the admin).
            let this = *self;
            spawn_local(async move {
                if let Ok(me) = crate::api::account::who_am_i().await {
                    this.me.set(Some(me));
                }
            });
        }
        self.loaded.set(true);
    }

    /// Re-reads the workspaces; the first is shown unless one is chosen.
    pub fn refresh_workspaces(&self) {
        let this = *self;
        spawn_local(async move {
            match crate::api::history::list_workspaces().await {
                Ok(list) => {
                    if this.workspace.get_untracked().is_none() {
                        this.workspace.set(list.first().map(|w| w.id.clone()));
                    }
                    this.workspaces.set(list);
                    this.load_preferences();
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.workspaces_not_loaded, &e.0),
                ),
            }
        });
    }

    /// Shows another workspace: its conversations, and a new chat in it.
    pub fn switch_workspace(&self, id: String) {
        if self.workspace.get_untracked().as_deref() == Some(id.as_str()) {
            return;
        }
        self.workspace.set(Some(id));
        self.new_chat();
        self.refresh_list();
        self.load_preferences();
    }

    /// Takes the workspace's preferences from the server; its thinking behaviour replaces this
    /// browser's when it was chosen.
    fn load_preferences(&self) {
        let this = *self;
        spawn_local(async move {
            let workspace = this.workspace.get_untracked();
            match crate::api::history::get_preferences(workspace).await {
                Ok(prefs) => {
                    if let Some(pref) = prefs.thinking.as_deref().and_then(ThinkingPref::from_key) {
                        this.pref.set(pref);
                    }
                    this.prefs.set_value(prefs);
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.workspace_settings_not_loaded, &e.0),
                ),
            }
        });
    }

    /// Makes a workspace and shows it.
    pub fn create_workspace(&self, name: String) {
        let this = *self;
        self.with_list_actions(move |a| (a.create_workspace)(this, name));
    }

    fn create_workspace_now(this: ChatController, name: String) {
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

    /// Renames the workspace shown.
    pub fn rename_workspace(&self, name: String) {
        let Some(id) = self.workspace.get_untracked() else {
            return;
        };
        let this = *self;
        self.with_list_actions(move |a| (a.rename_workspace)(this, id, name));
    }

    fn rename_workspace_now(this: ChatController, id: String, name: String) {
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

    /// Opens the conversation of a search result and brings the message into view.
    pub fn open_hit(&self, conversation: String, message: String) {
        self.reveal.set(Some(message));
        if self.conversation_id.get_untracked() == conversation {
            self.fetch_conversation(conversation);
        } else {
            self.open(&conversation);
        }
    }

    /// The reader does not want this browser's older chats imported: they stay in localStorage,
    /// untouched, and the offer is not made again in this browser.
    pub fn decline_import(&self) {
        self.importable.set(0);
        let mut settings = local_store::load_settings();
        settings.import_declined = true;
        if let Err(e) = local_store::save_settings(&settings) {
            self.notify(NoticeKind::Save, e.notice(self.locale.catalogue()));
        }
    }

    /// Sends the chats saved in this browser before server-side history to the server (each
    /// once: importing twice makes nothing new), then lists them from there.
    pub fn import_local(&self) {
        let this = *self;
        self.with_local_chats(move |local| {
            let records: Vec<ConversationRecord> = (local.load_all)(now_ms())
                .0
                .into_iter()
                .filter(|r| !saved_chat::is_server_copy(r))
                .collect();
            if !records.is_empty() {
                this.with_list_actions(move |a| (a.import_local)(this, records));
            }
        });
    }

    fn import_local_now(this: ChatController, records: Vec<ConversationRecord>) {
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
                        local_store::remove(&r.id);
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

    /// The open chat as it should be exported: the server's copy (every version, all reasoning)
    /// when it is stored there, else this page's. `done` gets the record and a notice when the
    /// server could not be asked and this page's copy was used instead.
    pub fn exportable(&self, done: impl FnOnce(ConversationRecord) + 'static) {
        let local = self.record(now_ms());
        let (on_server, id) = self.meta.with_value(|m| (m.on_server, m.id.clone()));
        if !(self.server.get_untracked() && on_server) {
            done(local);
            return;
        }
        let this = *self;
        self.when_loaded(stored_chat_code(), move |c| {
            (c.export)(this, id, local, Box::new(done))
        });
    }

    fn export_now(
        this: ChatController,
        id: String,
        local: ConversationRecord,
        done: Box<dyn FnOnce(ConversationRecord)>,
    ) {
        spawn_local(async move {
            match crate::api::history::export_conversation(id).await {
                Ok(conv) => done(saved_chat::record_from_server(&conv)),
                Err(e) => {
                    this.notify(
                        NoticeKind::Server,
                        this.say_failed(|c| c.server_copy_not_exported, &e.0),
                    );
                    done(local);
                }
            }
        });
    }

    /// Reads a JSON export back: onto the server (importing the same file twice makes nothing
    /// new) or, with history in this browser, as a saved chat here, under a new id when one with
    /// its id is already saved.
    pub fn import_export(&self, raw: String) {
        let this = *self;
        if let Some(local) = self.local_chats.get_value() {
            return this.import_export_with(local, raw);
        }
        self.when_loaded(local_chats_code(), move |local| {
            this.local_chats.set_value(Some(local));
            this.import_export_with(local, raw);
        });
    }

    fn import_export_with(&self, local: LocalChats, raw: String) {
        let mut record = match (local.parse_export)(&raw) {
            Ok(r) => r,
            Err(e) => {
                self.notify(
                    NoticeKind::Server,
                    self.say(|c| c.not_an_export, &e.0.to_string()),
                );
                return;
            }
        };
        let title = record.title.clone();
        if self.server.get_untracked() {
            let this = *self;
            spawn_local(async move {
                let workspace = this.workspace.get_untracked();
                match crate::api::history::import_conversation(
                    workspace,
                    saved_chat::to_import(&record),
                )
                .await
                {
                    Ok(true) => this.notify(
                        NoticeKind::Imported,
                        fill(this.locale.catalogue().imported, &[("title", &title)]),
                    ),
                    Ok(false) => this.notify(
                        NoticeKind::Imported,
                        fill(
                            this.locale.catalogue().imported_before,
                            &[("title", &title)],
                        ),
                    ),
                    Err(e) => this.notify(
                        NoticeKind::Server,
                        this.say_failed(|c| c.import_failed, &e.0),
                    ),
                }
                this.refresh_list();
            });
            return;
        }
        if (local.load)(&record.id).is_some() {
            record.id = new_id();
        }
        match local_store::save(&record) {
            Ok(()) => {
                self.refresh_list();
                self.notify(
                    NoticeKind::Imported,
                    fill(self.locale.catalogue().imported, &[("title", &title)]),
                );
                let id = record.id.clone();
                self.open(&id);
            }
            Err(e) => self.notify(NoticeKind::Save, e.notice(self.locale.catalogue())),
        }
    }

    /// Takes a conversation from the server, shows it unless the reader moved on or a turn
    /// runs, and keeps a copy in this browser. An answer still streaming is joined live.
    fn fetch_conversation(&self, id: String) {
        self.fetch_conversation_with(id, true);
    }

    /// The same, showing a streaming answer as stored (its turn is known to be over).
    fn fetch_conversation_without_joining(&self, id: String) {
        self.fetch_conversation_with(id, false);
    }

    fn fetch_conversation_with(&self, id: String, join: bool) {
        let this = *self;
        self.when_loaded(stored_chat_code(), move |c| (c.open)(this, id, join));
    }

    fn open_now(this: ChatController, id: String, join: bool) {
        spawn_local(async move {
            let page = Page {
                last: Some(OPEN_PAGE),
                before: None,
            };
            match crate::api::history::get_conversation(id.clone(), page).await {
                Ok(conv) => {
                    if this.conversation_id.get_untracked() == id && !this.is_running() {
                        this.take_settings(conv.model.clone(), conv.settings);
                    }
                    let record = saved_chat::record_from_server(&conv);
                    if this.conversation_id.get_untracked() == id && !this.is_running() {
                        this.show(record.clone());
                        if join {
                            this.join_live_answer(&conv);
                        }
                    }
                    // This browser's copy is written after the chat is painted, not before.
                    request_animation_frame(move || {
                        set_timeout(
                            move || {
                                let _ = local_store::save(&record);
                            },
                            std::time::Duration::ZERO,
                        )
                    });
                }
                Err(e) if e.0.code == crate::domain::ErrorCode::NotFound => {
                    local_store::remove(&id);
                    if this.conversation_id.get_untracked() == id {
                        this.notify(
                            NoticeKind::Missing,
                            this.locale.catalogue().chat_gone_from_server.into(),
                        );
                        this.new_chat();
                    }
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.chat_not_loaded, &e.0),
                ),
            }
        });
    }

    /// Joins the turn writing the conversation's last answer, if it still streams: the stored
    /// copy shows as running at once, then the turn's replay and live tail take over.
    fn join_live_answer(&self, conv: &crate::domain::history::Conversation) {
        let Some(last) = conv.messages.last().filter(|m| m.role == Role::Assistant) else {
            return;
        };
        let Some(turn_id) = last.shown().and_then(|v| v.turn.clone()) else {
            return;
        };
        let signal = self.entries.with_untracked(|entries| {
            let entry = entries.iter().rev().find(|e| e.id == last.id)?;
            entry
                .versions
                .with_untracked(|v| v.get(last.active).copied())
        });
        let running: Vec<Option<u64>> = last
            .shown()
            .map(|v| v.blocks.iter().map(|b| b.running_ms).collect())
            .unwrap_or_default();
        if let Some(turn) = signal {
            let now = now_ms();
            turn.update(|t| *t = t.resuming(now, &running));
            self.join(turn_id, turn);
        }
    }

    /// Re-reads the list of saved conversations: the server's with server-side history, else
    /// this browser's.
    pub fn refresh_list(&self) {
        if self.server.get_untracked() {
            let this = *self;
            spawn_local(async move {
                let workspace = this.workspace.get_untracked();
                match crate::api::history::list_conversations(workspace, false).await {
                    Ok(list) => this.conversations.set(
                        list.into_iter()
                            .map(|c| ConversationSummary {
                                id: c.id,
                                title: c.title,
                                updated_at: c.updated_at as f64,
                            })
                            .collect(),
                    ),
                    Err(e) => this.notify(
                        NoticeKind::Server,
                        this.say_failed(|c| c.chats_not_listed, &e.0),
                    ),
                }
            });
            return;
        }
        let this = *self;
        self.with_local_chats(move |local| this.refresh_list_with(local));
    }

    /// This browser's list, read with `local`.
    fn refresh_list_with(&self, local: LocalChats) {
        if self.server.get_untracked() {
            return self.refresh_list();
        }
        let (records, set_aside) = (local.load_all)(now_ms());
        if !set_aside.is_empty() {
            self.notify(
                NoticeKind::Corrupt,
                self.say(|c| c.storage_unreadable, &set_aside.join(", ")),
            );
        }
        let mut list: Vec<ConversationSummary> =
            records.iter().map(ConversationRecord::summary).collect();
        saved_chat::sort_newest_first(&mut list);
        self.conversations.set(list);
    }

    fn remember_current(&self) {
        let mut settings = local_store::load_settings();
        settings.thinking = self.pref.get_untracked();
        settings.last_conversation = self.meta.with_value(|m| m.stored.then(|| m.id.clone()));
        if let Err(e) = local_store::save_settings(&settings) {
            self.notify(NoticeKind::Save, e.notice(self.locale.catalogue()));
        }
    }

    /// Changes the thinking preference and keeps it.
    pub fn set_pref(&self, pref: ThinkingPref) {
        self.pref.set(pref);
        self.remember_current();
        if self.server.get_untracked() {
            self.prefs
                .update_value(|p| p.thinking = Some(pref.key().to_string()));
            let (this, prefs) = (*self, self.prefs.get_value());
            spawn_local(async move {
                let workspace = this.workspace.get_untracked();
                if let Err(e) = crate::api::history::set_preferences(workspace, prefs).await {
                    this.notify(
                        NoticeKind::Server,
                        this.say_failed(|c| c.setting_kept_locally, &e.0),
                    );
                }
            });
        }
    }

    /// Changes the interface's language: kept in a cookie for this browser and, with history on
    /// the server, in the user's preferences for every device; then the page reloads, rendered
    /// in the new language by the server (nothing is lost: drafts and chats are saved).
    pub fn set_locale(&self, locale: Locale) {
        super::browser::remember_locale(locale);
        self.remember_current();
        let on_server = self.server.get_untracked()
            && self
                .me
                .with_untracked(|m| m.as_ref().is_some_and(|m| m.account.is_some()));
        spawn_local(async move {
            if on_server {
                if let Ok(mut prefs) = crate::api::history::get_preferences(None).await {
                    prefs.locale = Some(locale.tag().to_string());
                    let _ = crate::api::history::set_preferences(None, prefs).await;
                }
            }
            super::browser::reload();
        });
    }

    fn show(&self, record: ConversationRecord) {
        self.new_scope();
        let on_server = self.server.get_untracked();
        let entries = self.entries_of(&record.messages);
        self.meta.set_value(Meta {
            id: record.id.clone(),
            title: record.title.clone(),
            created_at: record.created_at,
            rev: record.rev,
            extra: record.extra.clone(),
            stored: true,
            on_server,
        });
        // The conversation goes on with the model of its last answer (a server copy also says
        // its settings once it arrives).
        let last = record
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .and_then(saved_chat::shown_version);
        self.take_settings(
            last.as_ref().and_then(|v| v.model.clone()),
            last.map(|v| v.settings).unwrap_or_default(),
        );
        self.conversation_id.set(record.id);
        self.title.set(record.title);
        self.earlier.set(record.earlier);
        self.loading_earlier.set_value(false);
        self.entries.set(entries);
        self.editing.set(None);
    }

    /// The page's entries for saved messages, made in the current conversation's scope.
    fn entries_of(&self, messages: &[MessageRecord]) -> Vec<Entry> {
        let on_server = self.server.get_untracked();
        self.in_scope(|| {
            messages
                .iter()
                .map(|m| {
                    let (versions, active) = saved_chat::versions_of(m);
                    let turns: Vec<RwSignal<TurnState>> = match m.role {
                        Role::User => Vec::new(),
                        Role::Assistant => versions
                            .iter()
                            .map(|v| RwSignal::new(saved_chat::turn_from_version(v)))
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
                        server_id: StoredValue::new(
                            (on_server && !m.id.is_empty()).then(|| m.id.clone()),
                        ),
                        edits: if m.role == Role::User && versions.len() > 1 {
                            versions
                        } else {
                            Vec::new()
                        },
                    }
                })
                .collect::<Vec<_>>()
        })
    }

    /// Brings in at least `count` of the messages kept on the server before the first entry
    /// (one request at a time); what the reader sees does not move.
    pub fn load_earlier(&self, count: usize) {
        let before = self.earlier.get_untracked();
        if before == 0 || self.loading_earlier.get_value() {
            return;
        }
        self.loading_earlier.set_value(true);
        let this = *self;
        let id = self.conversation_id.get_untracked();
        let page = Page {
            last: Some(count.max(EARLIER_PAGE)),
            before: Some(before),
        };
        spawn_local(async move {
            match stored_chat_code().await {
                Ok(c) => (c.earlier)(this, id, page, before),
                Err(e) => {
                    this.loading_earlier.set_value(false);
                    this.part_not_loaded(&e);
                }
            }
        });
    }

    fn earlier_now(this: ChatController, id: String, page: Page, before: usize) {
        spawn_local(async move {
            let result = crate::api::history::get_conversation(id.clone(), page).await;
            if this.conversation_id.get_untracked() != id || this.earlier.get_untracked() != before
            {
                return;
            }
            this.loading_earlier.set_value(false);
            match result {
                Ok(conv) => {
                    let record = saved_chat::record_from_server(&conv);
                    let mut older = this.entries_of(&record.messages);
                    let known: std::collections::HashSet<String> = this
                        .entries
                        .with_untracked(|e| e.iter().map(|e| e.id.clone()).collect());
                    older.retain(|e| !known.contains(&e.id));
                    this.earlier.set(conv.first);
                    this.entries.update(|entries| {
                        older.append(entries);
                        *entries = older;
                    });
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.earlier_not_loaded, &e.0),
                ),
            }
        });
    }

    /// Shows conversation `id` empty until the server's copy arrives.
    fn await_server_copy(&self, id: &str) {
        self.new_scope();
        self.meta.set_value(Meta {
            id: id.to_string(),
            stored: true,
            on_server: true,
            ..Meta::default()
        });
        self.conversation_id.set(id.to_string());
        self.earlier.set(0);
        self.entries.set(Vec::new());
    }

    /// Opens a saved conversation. A turn running on the server goes on there; one that lives
    /// only in this page stops.
    pub fn open(&self, id: &str) {
        if self.conversation_id.get_untracked() == id {
            return;
        }
        self.leave();
        if self.server.get_untracked() {
            // This browser's copy at once (when its reader is here: it is fetched with the page
            // when a copy is kept), then the server's.
            match self
                .local_chats
                .get_value()
                .and_then(|local| (local.load)(id))
            {
                Some(record) => self.show(record),
                None => self.await_server_copy(id),
            }
            self.remember_current();
            self.fetch_conversation(id.to_string());
            return;
        }
        let this = *self;
        let id = id.to_string();
        self.with_local_chats(move |local| match (local.load)(&id) {
            Some(record) => {
                this.show(record);
                this.remember_current();
            }
            None => {
                this.notify(
                    NoticeKind::Missing,
                    this.locale.catalogue().chat_no_longer_saved.into(),
                );
                this.refresh_list();
            }
        });
    }

    /// Starts an empty conversation; it is saved with its first message.
    pub fn new_chat(&self) {
        self.leave();
        self.new_scope();
        let id = new_id();
        self.meta.set_value(Meta {
            id: id.clone(),
            created_at: now_ms(),
            ..Meta::default()
        });
        self.conversation_id.set(id);
        self.title.set(String::new());
        self.earlier.set(0);
        self.entries.set(Vec::new());
        self.editing.set(None);
        self.draft.set(String::new());
        let model = match local_store::new_chat_rule() {
            NewChatModel::LastUsed => local_store::last_model(),
            NewChatModel::Default => None,
        };
        self.take_settings(model, ReasoningSettings::default());
        self.remember_current();
    }

    pub fn rename(&self, id: &str, title: String) {
        let title = title.trim().to_string();
        if title.is_empty() {
            return;
        }
        if self.server.get_untracked() {
            let this = *self;
            let id = id.to_string();
            self.with_list_actions(move |a| (a.rename)(this, id, title));
            return;
        }
        if id == self.conversation_id.get_untracked() {
            self.title.set(title.clone());
            self.meta.update_value(|m| m.title = title);
            self.save();
            self.refresh_list();
        } else {
            let this = *self;
            let id = id.to_string();
            self.with_local_chats(move |local| {
                if let Some(mut record) = (local.load)(&id) {
                    record.title = title;
                    record.rev += 1;
                    if let Err(e) = local_store::save(&record) {
                        this.notify(NoticeKind::Save, e.notice(this.locale.catalogue()));
                    }
                }
                this.refresh_list_with(local);
            });
        }
    }

    fn rename_now(this: ChatController, id: String, title: String) {
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

    /// Deletes a conversation. On the server it can be restored until the purge: a notice
    /// offers Undo.
    pub fn delete(&self, id: &str) {
        local_store::remove(id);
        if id == self.conversation_id.get_untracked() {
            self.new_chat();
        }
        if self.server.get_untracked() {
            let this = *self;
            let id = id.to_string();
            let title = self
                .conversations
                .with_untracked(|l| l.iter().find(|c| c.id == id).map(|c| c.title.clone()))
                .unwrap_or_default();
            self.with_list_actions(move |a| (a.delete)(this, id, title));
            return;
        }
        self.refresh_list();
    }

    fn delete_now(this: ChatController, id: String, title: String) {
        spawn_local(async move {
            match crate::api::history::delete_conversation(id.clone()).await {
                Ok(_) => {
                    this.dismiss(NoticeKind::Deleted);
                    this.notices.update(|n| {
                        n.push(Notice {
                            kind: NoticeKind::Deleted,
                            text: fill(this.locale.catalogue().deleted_chat, &[("title", &title)]),
                            undo: Some(id),
                        })
                    });
                }
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.chat_not_deleted, &e.0),
                ),
            }
            this.refresh_list();
        });
    }

    /// Undoes a delete (server-side history), and opens the conversation again.
    pub fn undo_delete(&self, id: String) {
        let this = *self;
        self.with_list_actions(move |a| (a.undo_delete)(this, id));
    }

    fn undo_delete_now(this: ChatController, id: String) {
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

    /// Another tab wrote `key`: refresh the list, and adopt the other tab's version of the open
    /// conversation when nothing runs here.
    pub fn on_storage_changed(&self, key: Option<String>) {
        self.refresh_list();
        let current = saved_chat::key_for(&self.conversation_id.get_untracked());
        if key.as_deref() != Some(current.as_str()) || self.is_running() {
            return;
        }
        let id = self.conversation_id.get_untracked();
        let this = *self;
        self.with_local_chats(move |local| {
            if this.conversation_id.get_untracked() != id || this.is_running() {
                return;
            }
            match (local.load)(&id) {
                Some(record) if record.rev > this.meta.with_value(|m| m.rev) => this.show(record),
                None if this.meta.with_value(|m| m.stored) => {
                    this.notify(
                        NoticeKind::DeletedElsewhere,
                        this.locale.catalogue().deleted_in_other_tab.into(),
                    );
                    this.meta.update_value(|m| m.stored = false);
                }
                _ => {}
            }
        });
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
                        error_code: Default::default(),
                        error_params: Default::default(),
                        active_version: (!e.edits.is_empty()).then(|| e.edits.len() - 1),
                        versions: e.edits.clone(),
                        model: None,
                        settings: Default::default(),
                        tools: Vec::new(),
                        sources: Vec::new(),
                        extra: e.extra.clone(),
                    },
                    Role::Assistant => {
                        let versions = e.versions.with_untracked(|v| {
                            v.iter()
                                .map(|t| {
                                    t.with_untracked(|t| saved_chat::version_from_turn(t, now))
                                })
                                .collect()
                        });
                        let mut m = saved_chat::assistant_record(
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
            earlier: self.earlier.get_untracked(),
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
        let stored_rev = local_store::stored_rev(&record.id);
        // With server-side history this browser's copy is a cache: the server settles
        // conflicts, so the copy is simply replaced.
        let plan = if self.server.get_untracked() {
            decisions::SavePlan::Write {
                rev: stored_rev.unwrap_or(0).max(record.rev) + 1,
            }
        } else {
            decisions::save_plan(stored_rev, record.rev)
        };
        match plan {
            decisions::SavePlan::Write { rev } => record.rev = rev,
            decisions::SavePlan::KeepAsCopy => {
                record = decisions::as_copy(record, new_id());
                self.meta.update_value(|m| {
                    m.id = record.id.clone();
                    m.title = record.title.clone();
                });
                self.conversation_id.set(record.id.clone());
                self.title.set(record.title.clone());
                self.notify(
                    NoticeKind::Conflict,
                    self.locale.catalogue().changed_in_other_tab.into(),
                );
            }
        }
        match local_store::save(&record) {
            Ok(()) => {
                let first = !self.meta.with_value(|m| m.stored);
                self.meta.update_value(|m| {
                    m.rev = record.rev;
                    m.stored = true;
                });
                self.dismiss(NoticeKind::Save);
                if first {
                    self.remember_current();
                }
                self.conversations.update(|list| {
                    list.retain(|c| c.id != record.id);
                    list.push(record.summary());
                    saved_chat::sort_newest_first(list);
                });
            }
            Err(e) => self.notify(NoticeKind::Save, e.notice(self.locale.catalogue())),
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

    /// The history sent upstream for `entries` (see [`decisions::history`]).
    fn history(entries: &[Entry]) -> Vec<ChatMessage> {
        let turns: Vec<Option<TurnState>> = entries
            .iter()
            .map(|e| match e.role {
                Role::User => None,
                Role::Assistant => e.turn_untracked().map(|t| t.get_untracked()),
            })
            .collect();
        decisions::history(
            entries
                .iter()
                .zip(&turns)
                .map(|(e, turn)| match (e.role, turn) {
                    (Role::User, _) => decisions::Said::User(&e.text),
                    (Role::Assistant, Some(t)) => decisions::Said::Assistant {
                        phase: t.phase,
                        answer: &t.answer,
                    },
                    (Role::Assistant, None) => decisions::Said::Nothing,
                }),
        )
    }

    /// Sends the draft (or `text`) as a user message and streams the assistant's turn. While
    /// editing, the edited message and everything after it are replaced.
    pub fn send(&self, text: String) {
        if self.is_running() || text.trim().is_empty() {
            return;
        }
        let now = now_ms();
        let turn = self.turn_signal(TurnState::started(now));
        let (mut user, assistant) =
            self.in_scope(|| (Entry::user(text.clone(), now), Entry::assistant(turn, now)));
        let mut messages = Vec::new();
        let editing = self.editing.get_untracked();
        let mut edited_on_server = None;
        self.entries.update(|entries| {
            let ids = entries.iter().map(|e| e.id.as_str());
            if let Some(pos) = decisions::cut_for_edit(ids, editing.as_deref()) {
                let old = &entries[pos];
                edited_on_server = old.server_id();
                user.edits =
                    decisions::edit_versions(&old.edits, &old.text, old.created_at, &text, now);
                entries.truncate(pos);
            }
            entries.push(user);
            messages = Self::history(entries);
            entries.push(assistant);
        });
        let request = if self.server.get_untracked() {
            ChatRequest {
                conversation: self.meta.with_value(|m| m.on_server.then(|| m.id.clone())),
                workspace: self.workspace.get_untracked(),
                content: Some(text.clone()),
                edit: edited_on_server,
                ..ChatRequest::stateless(Vec::new())
            }
        } else {
            ChatRequest::stateless(messages)
        };
        self.editing.set(None);
        if self.title.get_untracked().is_empty() {
            let title = saved_chat::title_from(&text);
            self.title.set(title.clone());
            self.meta.update_value(|m| {
                m.title = title;
                if m.created_at == 0.0 {
                    m.created_at = now;
                }
            });
        }
        let request = self.with_settings(request, turn, None);
        self.start(request, turn);
    }

    /// The request that answers `entry` again: on the server, a new version of its stored
    /// message; in the browser, the history before it.
    fn request_again(&self, entry: &Entry) -> ChatRequest {
        match (self.server.get_untracked(), entry.server_id()) {
            (true, Some(message)) => ChatRequest {
                conversation: Some(self.meta.with_value(|m| m.id.clone())),
                regenerate: Some(message),
                ..ChatRequest::stateless(Vec::new())
            },
            _ => ChatRequest::stateless(self.history_before(&entry.id)),
        }
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
        if self.server.get_untracked() && entry.server_id().is_some() {
            // The server keeps the failed answer as a version: so does the page.
            return self.regenerate(entry);
        }
        let turn = self.turn_signal(TurnState::started(now_ms()));
        let request = self.with_settings(self.request_again(entry), turn, None);
        let active = entry.active.get_untracked();
        entry
            .versions
            .update(|v| match decisions::retry_slot(v.len(), active) {
                decisions::Slot::Replace(i) => v[i] = turn,
                decisions::Slot::Push(i) => {
                    v.push(turn);
                    entry.active.set(i);
                }
            });
        self.start(request, turn);
    }

    /// A new answer for `entry`; earlier versions stay reachable.
    pub fn regenerate(&self, entry: &Entry) {
        self.regenerate_with(entry, None);
    }

    /// The same, asked with `settings` instead of the composer's ("Think more").
    fn regenerate_with(&self, entry: &Entry, settings: Option<ReasoningSettings>) {
        self.regenerate_as(entry, settings, None);
    }

    /// A new answer for `entry` after the model server refused the reasoning state sent back
    /// with earlier answers: the earlier answers go without it this once.
    pub fn retry_without_replay(&self, entry: &Entry) {
        self.regenerate_as(entry, None, Some(false));
    }

    fn regenerate_as(
        &self,
        entry: &Entry,
        settings: Option<ReasoningSettings>,
        replay: Option<bool>,
    ) {
        if self.is_running() {
            return;
        }
        let turn = self.turn_signal(TurnState::started(now_ms()));
        let mut request = self.with_settings(self.request_again(entry), turn, settings);
        request.replay = replay;
        let slot = decisions::regenerate_slot(entry.versions.with_untracked(Vec::len));
        entry.versions.update(|v| v.push(turn));
        let (decisions::Slot::Push(shown) | decisions::Slot::Replace(shown)) = slot;
        entry.active.set(shown);
        self.start(request, turn);
    }

    /// Shows another version of an assistant answer.
    pub fn show_version(&self, entry: &Entry, index: usize) {
        let count = entry.versions.with_untracked(Vec::len);
        if let Some(index) = decisions::switch_version(count, index, self.is_running()) {
            entry.active.set(index);
            self.save();
            if let (true, Some(message)) = (self.server.get_untracked(), entry.server_id()) {
                let this = *self;
                spawn_local(async move {
                    if let Err(e) = crate::api::history::set_active_version(message, index).await {
                        this.notify(
                            NoticeKind::Server,
                            this.say_failed(|c| c.version_not_kept, &e.0),
                        );
                    }
                });
            }
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
        if let (true, Some(upto)) = (self.server.get_untracked(), entry.server_id()) {
            let this = *self;
            let id = self.meta.with_value(|m| m.id.clone());
            spawn_local(async move {
                match crate::api::history::branch_conversation(id, upto).await {
                    Ok(branch) => {
                        this.refresh_list();
                        this.open(&branch.id);
                    }
                    Err(e) => this.notify(
                        NoticeKind::Server,
                        this.say_failed(|c| c.chat_not_branched, &e.0),
                    ),
                }
            });
            return;
        }
        let now = now_ms();
        let branched = decisions::branch(&self.record(now), &entry.id, new_id(), now);
        match local_store::save(&branched) {
            Ok(()) => {
                self.refresh_list();
                self.show(branched);
                self.remember_current();
            }
            Err(e) => self.notify(NoticeKind::Save, e.notice(self.locale.catalogue())),
        }
    }

    /// Ends the running turn at once; what arrived stays, marked stopped. A turn the server keeps
    /// is stopped there, for every tab and device that shows it.
    pub fn stop(&self) {
        self.end_part(Leave::Stop);
    }

    /// The page stops following the running turn (another chat is shown). A turn the server
    /// keeps goes on there and can be joined again; one that lives only in this page stops.
    fn leave(&self) {
        self.end_part(Leave::Detach);
    }

    fn end_part(&self, how: Leave) {
        let Some(tx) = self.stop.try_update_value(Option::take).flatten() else {
            return;
        };
        let _ = tx.send(how);
        self.running_turn.set_value(None);
        self.running.set(None);
    }

    /// Sets every block of the conversation open or closed, as the reader's own choice.
    pub fn set_all_blocks(&self, open: bool) {
        let mut stored = Vec::new();
        self.entries.with_untracked(|entries| {
            for e in entries {
                e.versions.with_untracked(|versions| {
                    for (v, t) in versions.iter().enumerate() {
                        t.update(|t| {
                            for (i, b) in t.blocks.iter_mut().enumerate() {
                                b.reader_open = Some(open);
                                if let Some(message) = e.server_id() {
                                    stored.push((message, v, i));
                                }
                            }
                        });
                    }
                });
            }
        });
        self.save();
        self.keep_block_choices(stored, open);
    }

    /// The reader opened or closed block `index` of the turn shown in `entry`: the choice is
    /// theirs from now on, and is kept (on the server too).
    pub fn block_choice(&self, entry: &Entry, index: usize, open: bool) {
        self.save();
        if let Some(message) = entry.server_id() {
            let version = entry.active.get_untracked();
            self.keep_block_choices(vec![(message, version, index)], open);
        }
    }

    fn keep_block_choices(&self, blocks: Vec<(String, usize, usize)>, open: bool) {
        if !self.server.get_untracked() || blocks.is_empty() {
            return;
        }
        spawn_local(async move {
            for (message, version, index) in blocks {
                // A block the server has not stored yet (the turn still streams) is skipped.
                let _ = crate::api::history::set_block_open_at(message, version, index, Some(open))
                    .await;
            }
        });
    }

    /// Loads the reasoning of a block stored on the server, when the reader opens it.
    pub fn load_block_text(&self, turn: RwSignal<TurnState>, index: usize) {
        let Some(id) = turn.with_untracked(|t| {
            t.blocks
                .get(index)
                .filter(|b| b.text.is_empty())
                .and_then(|b| b.remote.as_ref().map(|r| r.id.clone()))
        }) else {
            return;
        };
        let this = *self;
        spawn_local(async move {
            match crate::api::history::block_text(id).await {
                Ok(text) => turn.update(|t| {
                    if let Some(b) = t.blocks.get_mut(index) {
                        b.text = text;
                        b.remote = None;
                    }
                }),
                Err(e) => this.notify(
                    NoticeKind::Server,
                    this.say_failed(|c| c.reasoning_not_loaded, &e.0),
                ),
            }
        });
    }

    /// Marks the turn running at once (a second Enter cannot send twice), then saves and sends
    /// in the next task: the event that sent the message only renders it. On a fresh page the
    /// first send did all three in one task of about 50 ms, the longest of a whole turn.
    fn start(&self, request: ChatRequest, turn: RwSignal<TurnState>) {
        self.follow(Source::Send(request), turn, self.locale.catalogue().sending);
    }

    /// Joins the turn `id` that writes the answer shown in `turn` (a conversation opened while
    /// its answer streams: a reload, another tab or device). The server replays it from the
    /// start, then sends the live tail.
    fn join(&self, id: String, turn: RwSignal<TurnState>) {
        if self.is_running() {
            return;
        }
        self.running_turn.set_value(Some(id.clone()));
        self.follow(Source::Join(id), turn, "");
    }

    fn follow(&self, source: Source, turn: RwSignal<TurnState>, status: &str) {
        let (tx, rx) = oneshot::channel();
        self.stop.set_value(Some(tx));
        self.running.set(Some(turn));
        self.status.set(status.into());
        let this = *self;
        let guard_secs = self.guard_secs.get_untracked();
        spawn_local(async move {
            sleep(std::time::Duration::ZERO).await;
            this.save();
            let left =
                super::turn_stream::follow(this, stream_code(), source, turn, rx, guard_secs).await;
            if this.running.get_untracked() == Some(turn) {
                this.running_turn.set_value(None);
                this.stop.set_value(None);
                this.running.set(None);
            }
            if left == Ended::Gone {
                // The turn ended and its log is gone: the stored answer is the whole of it.
                let id = this.conversation_id.get_untracked();
                this.fetch_conversation_without_joining(id);
                return;
            }
            this.save();
            if this.server.get_untracked() {
                this.refresh_list();
            }
        });
    }

    /// Sends Stop for the server's turn `id`; a turn that already ended is no matter.
    fn stop_on_server(&self, id: String) {
        let this = *self;
        spawn_local(async move {
            if let Err(e) = crate::api::turn::stop_turn(id).await {
                if e.0.retryable {
                    this.notify(NoticeKind::Server, this.say_failed(|c| c.stop_failed, &e.0));
                }
            }
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
            heard = labels::announcements(&before, t, now, self.locale);
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
            heard = labels::announcements(&before, t, now, self.locale);
        });
        self.announce(heard);
        self.revision.update(|r| *r += 1);
    }
}

impl TurnHost for ChatController {
    fn apply(&self, turn: RwSignal<TurnState>, events: Vec<TurnEvent>) {
        ChatController::apply(self, turn, events);
    }

    fn transition(&self, turn: RwSignal<TurnState>, change: impl FnOnce(&mut TurnState)) {
        ChatController::transition(self, turn, change);
    }

    fn on_stored(
        &self,
        turn: RwSignal<TurnState>,
        conversation: String,
        user_message: Option<String>,
        message: String,
    ) {
        let old = self.meta.with_value(|m| m.id.clone());
        self.meta.update_value(|m| {
            m.on_server = true;
            m.id = conversation.clone();
        });
        if old != conversation {
            local_store::remove(&old);
            self.conversation_id.set(conversation);
            self.remember_current();
        }
        self.entries.with_untracked(|entries| {
            let Some(pos) = entries
                .iter()
                .position(|e| e.versions.with_untracked(|v| v.contains(&turn)))
            else {
                return;
            };
            entries[pos].server_id.set_value(Some(message));
            if let (Some(user), Some(prev)) = (user_message, pos.checked_sub(1)) {
                entries[prev].server_id.set_value(Some(user));
            }
        });
    }

    fn started(&self, turn: RwSignal<TurnState>, id: String) {
        // Unless the page has moved on to another turn meanwhile.
        if self.running.get_untracked() == Some(turn) {
            self.running_turn.set_value(Some(id));
        }
    }

    fn stop_on_server(&self, id: String) {
        ChatController::stop_on_server(self, id);
    }

    fn connection_lost(&self, lost: bool) {
        let words = self.locale.catalogue();
        self.status
            .set(if lost { words.connection_lost } else { "" }.into());
    }
}

/// The split point of the code that follows a turn's stream (see [`super::turn_stream`]): in
/// the browser, calling it fetches and instantiates the chunk (once; a failure is not
/// remembered, so a later call tries again).
#[leptos::wasm_split::wasm_split(turn, wasm_split_path = leptos::wasm_split, fallible)]
fn stream_code() -> Result<TurnCode<ChatController>, leptos::wasm_split::SplitLoaderError> {
    Ok(TurnCode::new())
}

/// Starts fetching the stream's code before the first turn needs it (someone is typing).
pub fn want_stream_code() {
    super::turn_stream::want(stream_code());
}

/// Reading a conversation the server keeps: opening it (and joining its running answer), its
/// earlier messages, its copy for an export. A conversation is only read to be shown, so this
/// code is in the bubbles' chunk (`messages`, the same split module as
/// [`crate::ui::message_code`]), fetched once with them.
#[derive(Clone, Copy)]
pub struct StoredChatCode {
    open: fn(ChatController, String, bool),
    earlier: fn(ChatController, String, Page, usize),
    #[allow(clippy::type_complexity)]
    export: fn(ChatController, String, ConversationRecord, Box<dyn FnOnce(ConversationRecord)>),
}

/// The split point of [`StoredChatCode`].
#[leptos::wasm_split::wasm_split(messages, wasm_split_path = leptos::wasm_split, fallible)]
fn stored_chat_code() -> Result<StoredChatCode, leptos::wasm_split::SplitLoaderError> {
    Ok(StoredChatCode {
        open: ChatController::open_now,
        earlier: ChatController::earlier_now,
        export: ChatController::export_now,
    })
}

/// Reading this browser's saved chats back (the parser of the stored format, with every type a
/// record holds): a page fetches it only when a chat is saved in this browser, or to read an
/// export, so a first visit never does. Writing a record stays in the page.
#[derive(Clone, Copy)]
pub struct LocalChats {
    load_all: fn(f64) -> (Vec<ConversationRecord>, Vec<String>),
    load: fn(&str) -> Option<ConversationRecord>,
    parse_export: fn(&str) -> Result<ConversationRecord, saved_chat::Unreadable>,
}

impl LocalChats {
    /// The reader of a browser that holds no saved chat.
    const NOTHING_SAVED: LocalChats = LocalChats {
        load_all: |_| (Vec::new(), Vec::new()),
        load: |_| None,
        parse_export: |_| Err(saved_chat::Unreadable(String::new())),
    };
}

/// The split point of [`LocalChats`]: calling it fetches the chunk (once; a failure is not
/// remembered).
#[leptos::wasm_split::wasm_split(local_chats, wasm_split_path = leptos::wasm_split, fallible)]
fn local_chats_code() -> Result<LocalChats, leptos::wasm_split::SplitLoaderError> {
    Ok(LocalChats {
        load_all: local_store::load_all,
        load: local_store::load,
        parse_export: saved_chat::parse_export,
    })
}

/// The list's rarer actions on the server (rename, delete and undo, the workspaces, importing
/// this browser's older chats). Few visits use them, so they are the `list_actions` chunk; the
/// page keeps only what decides whether one is needed.
#[derive(Clone, Copy)]
pub struct ListActions {
    rename: fn(ChatController, String, String),
    delete: fn(ChatController, String, String),
    undo_delete: fn(ChatController, String),
    create_workspace: fn(ChatController, String),
    rename_workspace: fn(ChatController, String, String),
    import_local: fn(ChatController, Vec<ConversationRecord>),
}

/// The split point of [`ListActions`]: calling it fetches the chunk (once; a failure is not
/// remembered).
#[leptos::wasm_split::wasm_split(list_actions, wasm_split_path = leptos::wasm_split, fallible, preload(prefetch_list_actions))]
fn list_actions_code() -> Result<ListActions, leptos::wasm_split::SplitLoaderError> {
    Ok(ListActions {
        rename: ChatController::rename_now,
        delete: ChatController::delete_now,
        undo_delete: ChatController::undo_delete_now,
        create_workspace: ChatController::create_workspace_now,
        rename_workspace: ChatController::rename_workspace_now,
        import_local: ChatController::import_local_now,
    })
}
