//! Comparing models on the page: one question to 2–4 models at once, their answers streaming
//! side by side as versions of one stored message (the first asks, the others answer the same
//! message again once the server has stored it), then the reader keeps one, rates them, or
//! continues with each in a branch of its own. The figures and the panes' order are
//! [`crate::client::compare`]'s.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{now_ms, ChatController, Entry, NoticeKind};
use crate::client::compare::Pane;
use crate::client::turn_state::TurnState;
use crate::client::turn_stream::Source;
use crate::domain::compare::Compared;
use crate::domain::{ChatRequest, Failure, ReasoningSettings};
use crate::i18n::fill;

/// A comparison's answers still to ask, each once the one before it is stored: the server
/// numbers an answer's versions in the order they open, and the page's versions must be in the
/// same order (keeping one and the thumbs name it by its place).
pub(super) struct Waiting {
    after: RwSignal<TurnState>,
    rest: Vec<(RwSignal<TurnState>, Pane)>,
    /// The conversation and the message they answer, once the first answer is stored.
    at: Option<(String, String)>,
}

impl ChatController {
    /// The panes of the next question, when the composer compares (only in a chat the server
    /// keeps: the answers are its stored turns).
    pub(super) fn panes_to_ask(&self) -> Vec<Pane> {
        self.compare
            .get_untracked()
            .filter(|_| self.kept_on_server())
            .unwrap_or_default()
    }

    /// A turn of a comparison, not sent yet.
    pub(super) fn compared_turn(&self, now: f64) -> RwSignal<TurnState> {
        self.turn_signal(TurnState {
            compared: Some(Compared::default()),
            ..TurnState::started(now)
        })
    }

    /// The request for `pane`, recorded on its turn: the pane's model, its thinking and effort
    /// over the composer's other settings.
    pub(super) fn asked_in(
        &self,
        request: ChatRequest,
        turn: RwSignal<TurnState>,
        pane: &Pane,
    ) -> ChatRequest {
        let settings = ReasoningSettings {
            thinking: pane.thinking,
            effort: pane.effort,
            ..self.composer_settings()
        };
        ChatRequest {
            compare: true,
            ..self.with_model(request, turn, Some(settings), pane.model.clone())
        }
    }

    /// The other answers start once the first is stored (see [`Self::start_waiting`]).
    pub(super) fn wait_for_first(
        &self,
        first: RwSignal<TurnState>,
        rest: Vec<(RwSignal<TurnState>, Pane)>,
    ) {
        if !rest.is_empty() {
            self.waiting.update_value(|w| {
                w.push(Waiting {
                    after: first,
                    rest,
                    at: None,
                })
            });
        }
    }

    fn take_waiting(&self, after: RwSignal<TurnState>) -> Option<Waiting> {
        self.waiting
            .try_update_value(|w| {
                let at = w.iter().position(|w| w.after == after)?;
                Some(w.remove(at))
            })
            .flatten()
    }

    /// An answer of a comparison is stored as a version of `message`: the next model answers
    /// it again.
    pub(super) fn start_waiting(
        &self,
        turn: RwSignal<TurnState>,
        conversation: &str,
        message: &str,
    ) {
        if let Some(waiting) = self.take_waiting(turn) {
            self.ask_next(waiting.rest, conversation.to_string(), message.to_string());
        }
    }

    fn ask_next(
        &self,
        mut rest: Vec<(RwSignal<TurnState>, Pane)>,
        conversation: String,
        message: String,
    ) {
        if rest.is_empty() {
            return;
        }
        let (turn, pane) = rest.remove(0);
        let request = ChatRequest {
            conversation: Some(conversation.clone()),
            regenerate: Some(message.clone()),
            ..ChatRequest::stateless(Vec::new())
        };
        let request = self.asked_in(request, turn, &pane);
        self.waiting.update_value(|w| {
            w.push(Waiting {
                after: turn,
                rest,
                at: Some((conversation, message)),
            })
        });
        self.follow(Source::Send(Box::new(request)), turn, "", None);
    }

    /// A turn ended: if it was a comparison's answer that never got stored, then for the first,
    /// the others never start and say so as it does; for another, it is no version on the
    /// server, so it leaves the page's versions too (a notice says why) and the next model is
    /// asked.
    pub(super) fn abandon_waiting(&self, turn: RwSignal<TurnState>) {
        let Some(waiting) = self.take_waiting(turn) else {
            return;
        };
        let failure = turn.with_untracked(|t| t.error.clone());
        match waiting.at {
            Some((conversation, message)) => {
                self.drop_unstored(turn, failure.as_ref());
                self.ask_next(waiting.rest, conversation, message);
            }
            None => {
                let now = now_ms();
                for (other, _) in waiting.rest {
                    self.transition(other, |t| match &failure {
                        Some(f) => t.fail(f.clone(), now),
                        None => t.stop(now),
                    });
                }
            }
        }
    }

    /// The reader stopped every answer, or left the chat: the models not asked yet are not.
    pub(super) fn forget_waiting(&self) {
        let now = now_ms();
        for waiting in self
            .waiting
            .try_update_value(std::mem::take)
            .unwrap_or_default()
        {
            for (turn, _) in waiting.rest {
                turn.update(|t| t.stop(now));
            }
        }
    }

    fn drop_unstored(&self, turn: RwSignal<TurnState>, failure: Option<&Failure>) {
        self.entries.with_untracked(|entries| {
            for e in entries {
                if e.versions.with_untracked(|v| v.contains(&turn)) {
                    e.versions.update(|v| v.retain(|t| *t != turn));
                    let last = e.versions.with_untracked(Vec::len).saturating_sub(1);
                    if e.active.get_untracked() > last {
                        e.active.set(last);
                    }
                }
            }
        });
        if let Some(f) = failure {
            let model = turn.with_untracked(|t| t.model.clone()).unwrap_or_default();
            let detail = crate::client::labels::failure_text(f, self.locale);
            let words = self.locale.catalogue().compare_model_failed;
            self.notify(
                NoticeKind::Server,
                fill(words, &[("model", &model), ("detail", &detail)]),
            );
        }
    }

    /// Keeps answer `index` of the comparison in `entry`: it becomes the answer, and the others
    /// stay as its versions.
    pub fn keep_compared(&self, entry: &Entry, index: usize) {
        let Some(message) = entry.server_id() else {
            return;
        };
        let (this, versions, active) = (*self, entry.versions, entry.active);
        spawn_local(async move {
            match crate::api::compare::pick_answer(message, index).await {
                Ok(()) => {
                    versions.with_untracked(|v| {
                        for (i, turn) in v.iter().enumerate() {
                            turn.update(|t| {
                                if let Some(c) = &mut t.compared {
                                    c.picked = i == index;
                                }
                            });
                        }
                    });
                    active.set(index);
                    this.save();
                }
                Err(e) => this.compare_failed(&e.0),
            }
        });
    }

    /// The reader's thumbs on answer `index` of `entry`: 1 up, -1 down, 0 none.
    pub fn rate_compared(&self, entry: &Entry, index: usize, rating: i8) {
        let Some(message) = entry.server_id() else {
            return;
        };
        let Some(turn) = entry.versions.with_untracked(|v| v.get(index).copied()) else {
            return;
        };
        let this = *self;
        let before = turn.with_untracked(|t| t.compared.map(|c| c.rating));
        turn.update(|t| {
            if let Some(c) = &mut t.compared {
                c.rating = rating;
            }
        });
        spawn_local(async move {
            if let Err(e) = crate::api::compare::rate_answer(message, index, rating).await {
                turn.update(|t| {
                    if let (Some(c), Some(was)) = (&mut t.compared, before) {
                        c.rating = was;
                    }
                });
                this.compare_failed(&e.0);
            } else {
                this.save();
            }
        });
    }

    /// Continues with every answer of the comparison in `entry`: each becomes a chat of its own
    /// (a branch up to it, with its model), and the first of them opens.
    pub fn continue_with_all(&self, entry: &Entry) {
        let Some(message) = entry.server_id() else {
            return;
        };
        if self.is_running() {
            return;
        }
        let this = *self;
        let conversation = self.conversation_id.get_untracked();
        spawn_local(async move {
            match crate::api::compare::continue_all(conversation, message).await {
                Ok(branches) => {
                    this.refresh_list();
                    if let Some(first) = branches.first() {
                        this.open(&first.id);
                    }
                }
                Err(e) => this.compare_failed(&e.0),
            }
        });
    }

    fn compare_failed(&self, failure: &Failure) {
        let words = crate::i18n::compare_words(self.locale);
        let detail = crate::client::labels::failure_text(failure, self.locale);
        self.notify(
            NoticeKind::Server,
            fill(words.not_done, &[("detail", &detail)]),
        );
    }
}
