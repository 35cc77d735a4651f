//! The turns of the conversation shown: send, stop, retry, regenerate, edit, branch, the
//! versions of an answer, "Answer now" and "Think more"; following a turn's stream is
//! [`crate::client::turn_stream`]'s, with the controller as its [`TurnHost`].

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use futures::FutureExt;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::chunks::stream_code;
use super::{now_ms, ChatController, Entry, NoticeKind};
use crate::client::browser::sleep;
use crate::client::decisions;
use crate::client::labels;
use crate::client::local_store;
use crate::client::saved_chat;
use crate::client::turn_state::TurnState;
use crate::client::turn_stream::{self, Call, Ended, Leave, Source, TurnHost};
use crate::domain::attachment::SendAs;
use crate::domain::history::Version;
use crate::domain::message::InlineFile;
use crate::domain::{ChatMessage, ChatRequest, ReasoningSettings, Role, TurnEvent};

impl ChatController {
    pub(super) fn turn_signal(&self, turn: TurnState) -> RwSignal<TurnState> {
        self.in_scope(|| RwSignal::new(turn))
    }

    /// "Answer now": every running turn stops thinking and answers with what it has thought.
    pub fn answer_now(&self) {
        self.answer_now_of(None);
    }

    /// "Answer now" for one running turn (`None`: all of them; a comparison's pane asks for its own).
    pub fn answer_now_of(&self, only: Option<RwSignal<TurnState>>) {
        let ids: Vec<String> = self.runs.with_value(|runs| {
            runs.iter()
                .filter(|r| only.is_none_or(|t| t == r.turn))
                .filter_map(|r| r.server.clone())
                .collect()
        });
        for turn in ids {
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
            ..asked
        };
        self.regenerate_with(entry, Some(more));
    }

    /// Sends the failed turn of `entry` again without reasoning settings (the model's own
    /// default), after the upstream refused one; the composer's settings go back to default.
    pub fn retry_without_settings(&self, entry: &Entry) {
        self.thinking.set(None);
        self.effort.set(None);
        self.sampling.set(ReasoningSettings::default());
        self.retry(entry);
    }

    /// The history sent upstream for `entries` (see [`decisions::history`]), with the files of
    /// a chat kept in this browser inside it.
    fn history(&self, entries: &[Entry]) -> Vec<ChatMessage> {
        let turns: Vec<Option<TurnState>> = entries
            .iter()
            .map(|e| match e.role {
                Role::User => None,
                Role::Assistant => e.turn_untracked().map(|t| t.get_untracked()),
            })
            .collect();
        let inline: Vec<Vec<InlineFile>> = entries.iter().map(|e| self.inline_of(e)).collect();
        decisions::history(entries.iter().zip(&turns).zip(&inline).map(
            |((e, turn), inline)| match (e.role, turn) {
                (Role::User, _) => decisions::Said::User(&e.text, inline),
                (Role::Assistant, Some(t)) => decisions::Said::Assistant {
                    phase: t.phase,
                    answer: &t.answer,
                },
                (Role::Assistant, None) => decisions::Said::Nothing,
            },
        ))
    }

    /// Sends the draft (or `text`) as a user message and streams the assistant's turn. While
    /// editing, the edited message and everything after it are replaced.
    pub fn send(&self, text: String) {
        if self.opening.get_untracked() {
            self.held.update_value(|held| {
                *held = Some(match held.take() {
                    Some(before) => format!("{before}\n\n{text}"),
                    None => text,
                })
            });
            return;
        }
        let files = self.tray.with_untracked(|t| (!t.busy()).then(|| t.ready()));
        let Some(files) = files else {
            return;
        };
        if self.is_running() || (text.trim().is_empty() && files.is_empty()) {
            return;
        }
        let now = now_ms();
        let panes = self.panes_to_ask();
        let turn = match panes.is_empty() {
            true => self.turn_signal(TurnState::started(now)),
            false => self.compared_turn(now),
        };
        let others: Vec<_> = panes
            .iter()
            .skip(1)
            .map(|_| self.compared_turn(now))
            .collect();
        let (user, assistant) =
            self.in_scope(|| (Entry::user(text.clone(), now), Entry::assistant(turn, now)));
        assistant
            .versions
            .update_untracked(|v| v.extend(others.iter().copied()));
        let mut user = user;
        user.files.set(files.clone());
        let mut messages = Vec::new();
        let editing = self.editing.get_untracked();
        let mut edited_on_server = None;
        self.entries.update(|entries| {
            let ids = entries.iter().map(|e| e.id.as_str());
            if let Some(pos) = decisions::cut_for_edit(ids, editing.as_deref()) {
                let old = &entries[pos];
                edited_on_server = old.server_id();
                user.edits = decisions::edit_versions(
                    &old.edits,
                    Version {
                        files: old.files.get_untracked(),
                        ..Version::text(old.text.clone(), old.created_at as i64)
                    },
                    Version {
                        files: files.clone(),
                        ..Version::text(text.clone(), now as i64)
                    },
                );
                entries.truncate(pos);
            }
            entries.push(user);
            messages = self.history(entries);
            entries.push(assistant);
        });
        let mut request =
            self.keeper()
                .send_request(*self, text.clone(), messages, edited_on_server);
        let asked = self.tray.with_untracked(|t| t.asked());
        if request.content.is_some() {
            request.attachments = files.iter().map(|f| f.id.clone()).collect();
            request.send_as = asked;
        } else if let Some(last) = request.messages.last_mut() {
            // The new message's files are the last its request carries.
            let carried = last.inline.len();
            let new = last
                .inline
                .iter_mut()
                .skip(carried.saturating_sub(files.len()));
            for (inline, f) in new.zip(&files) {
                inline.send_as = asked.get(&f.id).copied();
            }
        }
        self.clear_tray();
        self.editing.set(None);
        if self.title.get_untracked().is_empty() {
            let title = saved_chat::title_from(match files.first() {
                Some(f) if text.trim().is_empty() => &f.name,
                _ => &text,
            });
            self.title.set(title.clone());
            self.meta.update_value(|m| {
                m.title = title;
                if m.created_at == 0.0 {
                    m.created_at = now;
                }
            });
        }
        let request = match panes.split_first() {
            Some((first, rest)) => {
                self.wait_for_first(turn, others.into_iter().zip(rest.iter().cloned()).collect());
                self.asked_in(request, turn, first)
            }
            None => self.with_settings(request, turn, None),
        };
        self.start(request, turn);
    }

    /// The request that answers `entry` again: on the server, a new version of its stored
    /// message; in the browser, the history before it.
    fn request_again(&self, entry: &Entry) -> ChatRequest {
        self.keeper()
            .again_request(*self, entry.server_id(), self.history_before(&entry.id))
    }

    fn history_before(&self, entry_id: &str) -> Vec<ChatMessage> {
        self.entries.with_untracked(|entries| {
            let upto = entries
                .iter()
                .position(|e| e.id == entry_id)
                .unwrap_or(entries.len());
            self.history(&entries[..upto])
        })
    }

    /// Runs the turn of `entry` again in place of its failed active version.
    pub fn retry(&self, entry: &Entry) {
        if self.is_running() {
            return;
        }
        if self
            .keeper()
            .retry_keeps_versions(entry.server_id().as_deref())
        {
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
            self.keeper()
                .keep_active_version(*self, entry.server_id(), index);
        }
    }

    /// Puts a user message back in the composer; sending it drops the later messages.
    pub fn edit(&self, entry: &Entry) {
        if self.is_running() {
            return;
        }
        self.draft.set(entry.text.clone());
        self.clear_tray();
        let files = entry.files.get_untracked();
        self.tray.update(|t| t.keep(&files));
        self.editing.set(Some(entry.id.clone()));
    }

    pub fn cancel_edit(&self) {
        self.editing.set(None);
        self.draft.set(String::new());
        self.clear_tray();
    }

    /// A new conversation holding the history up to and including `entry`.
    pub fn branch(&self, entry: &Entry) {
        if self.is_running() {
            return;
        }
        self.keeper().branch(*self, &entry.id, entry.server_id());
    }

    /// Ends the running turn at once; what arrived stays, marked stopped. A turn the server keeps
    /// is stopped there, for every tab and device that shows it.
    pub fn stop(&self) {
        self.end_part(Leave::Stop);
    }

    /// The page stops following the running turn (another chat is shown). A turn the server
    /// keeps goes on there and can be joined again; one that lives only in this page stops.
    pub(super) fn leave(&self) {
        self.end_part(Leave::Detach);
    }

    fn end_part(&self, how: Leave) {
        self.forget_waiting();
        let runs = self
            .runs
            .try_update_value(std::mem::take)
            .unwrap_or_default();
        if runs.is_empty() {
            return;
        }
        for run in runs {
            let _ = run.leave.send(how);
        }
        self.running.set(Vec::new());
    }

    /// Stops one running turn (a comparison's pane); the others go on.
    pub fn stop_turn(&self, turn: RwSignal<TurnState>) {
        if let Some(run) = self.take_run(turn) {
            let _ = run.leave.send(Leave::Stop);
        }
    }

    /// Takes `turn` out of the running ones; its run, if it was running.
    fn take_run(&self, turn: RwSignal<TurnState>) -> Option<super::Run> {
        let run = self
            .runs
            .try_update_value(|runs| {
                let at = runs.iter().position(|r| r.turn == turn)?;
                Some(runs.remove(at))
            })
            .flatten()?;
        self.running.update(|r| r.retain(|t| *t != turn));
        Some(run)
    }

    /// Opens the thinking of message `id`'s answer shown, for this look only (a search matched
    /// there): the reader's kept choices are not changed.
    pub fn open_thinking_of(&self, id: &str) {
        self.entries.with_untracked(|entries| {
            let Some(entry) = entries.iter().find(|e| e.id == id) else {
                return;
            };
            let active = entry.active.get_untracked();
            if let Some(turn) = entry.versions.with_untracked(|v| v.get(active).copied()) {
                turn.update(|t| {
                    for b in &mut t.blocks {
                        b.reader_open = Some(true);
                    }
                });
            }
        });
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
        self.keeper().keep_block_choices(stored, open);
    }

    /// The reader opened or closed block `index` of the turn shown in `entry`: the choice is
    /// theirs from now on, and is kept (on the server too).
    pub fn block_choice(&self, entry: &Entry, index: usize, open: bool) {
        self.save();
        if let Some(message) = entry.server_id() {
            let version = entry.active.get_untracked();
            self.keeper()
                .keep_block_choices(vec![(message, version, index)], open);
        }
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
        self.follow(
            Source::Send(Box::new(request)),
            turn,
            self.locale.catalogue().sending,
            None,
        );
    }

    /// Joins the turn `id` that writes the answer shown in `turn` (a conversation opened while
    /// its answer streams: a reload, another tab or device). The server replays it from the
    /// start, then sends the live tail.
    pub(super) fn join(&self, id: String, turn: RwSignal<TurnState>) {
        if self.runs_turn(turn) {
            return;
        }
        self.follow(Source::Join(id.clone()), turn, "", Some(id));
    }

    pub(super) fn follow(
        &self,
        source: Source,
        turn: RwSignal<TurnState>,
        status: &str,
        server: Option<String>,
    ) {
        let (leave, rx) = oneshot::channel();
        self.runs.update_value(|runs| {
            runs.push(super::Run {
                turn,
                leave,
                server,
            })
        });
        self.running.update(|r| r.push(turn));
        self.status.set(status.into());
        let this = *self;
        let guard_secs = self.guard_secs.get_untracked();
        spawn_local(async move {
            sleep(std::time::Duration::ZERO).await;
            this.save();
            let left = turn_stream::follow(this, stream_code(), source, turn, rx, guard_secs).await;
            this.take_run(turn);
            this.abandon_waiting(turn);
            if left == Ended::Gone {
                // The turn ended and its log is gone: the stored answer is the whole of it.
                if !this.is_running() {
                    let id = this.conversation_id.get_untracked();
                    this.backend().reload(this, id, false);
                }
                return;
            }
            // Saved in a task of its own, not in the one that showed the turn's end: a
            // megabyte of conversation takes tens of milliseconds to write.
            sleep(std::time::Duration::ZERO).await;
            this.save();
            if !this.is_running() {
                this.keeper().turn_ended(this);
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

    pub(super) fn transition(
        &self,
        turn: RwSignal<TurnState>,
        change: impl FnOnce(&mut TurnState),
    ) {
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
        sent_as: Vec<SendAs>,
    ) {
        let (stored_in, answer) = (conversation.clone(), message.clone());
        let old = self.meta.with_value(|m| m.id.clone());
        self.meta.update_value(|m| {
            m.on_server = true;
            m.id = conversation.clone();
        });
        if old != conversation {
            local_store::remove(self.shelf, &old);
            // The list's entry under this page's id is now the server's chat.
            self.conversations.update(|list| {
                list.retain(|c| c.id != conversation);
                if let Some(s) = list.iter_mut().find(|c| c.id == old) {
                    s.id = conversation.clone();
                }
            });
            self.stored_as(&conversation);
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
                if !sent_as.is_empty() {
                    entries[prev].files.update(|files| {
                        for (f, how) in files.iter_mut().zip(sent_as) {
                            f.sent_as = Some(how);
                        }
                    });
                }
            }
        });
        self.start_waiting(turn, &stored_in, &answer);
    }

    fn started(&self, turn: RwSignal<TurnState>, id: String) {
        // Unless the page has moved on meanwhile.
        self.runs.update_value(|runs| {
            if let Some(run) = runs.iter_mut().find(|r| r.turn == turn) {
                run.server = Some(id);
            }
        });
    }

    fn stop_on_server(&self, id: String) {
        ChatController::stop_on_server(self, id);
    }

    fn send(&self, request: ChatRequest) -> Call {
        crate::api::chat::chat(request).boxed_local()
    }

    fn events(&self, id: String, after: Option<u64>) -> Call {
        crate::api::turn::turn_events(id, after).boxed_local()
    }

    fn sleep(&self, duration: std::time::Duration) -> LocalBoxFuture<'static, ()> {
        sleep(duration)
    }

    fn on_frame(&self, after: std::time::Duration, then: Box<dyn FnOnce()>) {
        if after.is_zero() {
            request_animation_frame(then);
        } else {
            set_timeout(move || request_animation_frame(then), after);
        }
    }

    fn connection_lost(&self, lost: bool) {
        let words = self.locale.catalogue();
        self.status
            .set(if lost { words.connection_lost } else { "" }.into());
    }
}
