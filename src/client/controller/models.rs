//! The models on offer, the one the next turn asks for and its reasoning settings, and the
//! reader's preferences that go with them (thinking behaviour, language).

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::ChatController;
use crate::client::local_store;
use crate::client::thinking_view::ThinkingPref;
use crate::client::turn_state::TurnState;
use crate::domain::{ChatRequest, Controls, ReasoningSettings};
use crate::i18n::Locale;

impl ChatController {
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
        local_store::set_last_model(self.shelf, &id);
    }

    /// The request with the model and the reasoning settings (the composer's, or `settings`),
    /// recorded on the turn too.
    pub(super) fn with_settings(
        &self,
        request: ChatRequest,
        turn: RwSignal<TurnState>,
        settings: Option<ReasoningSettings>,
    ) -> ChatRequest {
        let model = untrack(|| self.current_model());
        self.with_model(request, turn, settings, model)
    }

    /// The same, asking `model` (a comparison's pane).
    pub(super) fn with_model(
        &self,
        mut request: ChatRequest,
        turn: RwSignal<TurnState>,
        settings: Option<ReasoningSettings>,
        model: String,
    ) -> ChatRequest {
        let settings = settings
            .unwrap_or_else(|| self.composer_settings())
            .applicable(self.models.with_untracked(|m| m.controls(&model)));
        request.model = (!model.is_empty()).then(|| model.clone());
        request.thinking = settings.thinking;
        request.effort = settings.effort;
        request.temperature = settings.temperature;
        request.top_p = settings.top_p;
        request.max_tokens = settings.max_tokens;
        turn.update_untracked(|t| {
            t.model = request.model.clone();
            t.settings = settings;
        });
        request
    }

    /// What the composer and the picker are set to now: thinking, effort and the parameters.
    pub fn composer_settings(&self) -> ReasoningSettings {
        ReasoningSettings {
            thinking: self.thinking.get_untracked(),
            effort: self.effort.get_untracked(),
            ..self.sampling.get_untracked()
        }
    }

    /// Takes `preset` for the next turns: its model (while on offer), its thinking, effort and
    /// sampling parameters (an unset one back to the model's default), and its instructions
    /// as the open chat's own, when it has some (kept on the server for a chat there).
    pub fn apply_preset(&self, preset: &crate::domain::preset::Preset) {
        if let Some(model) = &preset.model {
            let offered = self.models.with_untracked(|m| m.find(model).is_some());
            if offered {
                self.pick_model(model.clone());
            }
        }
        self.thinking.set(preset.settings.thinking);
        self.effort.set(preset.settings.effort);
        self.sampling
            .set(ReasoningSettings::default().with_sampling_of(preset.settings));
        let Some(text) = preset.instructions.clone() else {
            return;
        };
        if !self.chat_on_server() {
            self.keep_own_instructions(Some(text));
            return;
        }
        let this = *self;
        let conversation = self.conversation_id.get_untracked();
        spawn_local(async move {
            use crate::domain::instructions::Level;
            let kept = crate::api::instructions::set_instructions(
                Level::Conversation,
                Some(conversation),
                text.clone(),
            )
            .await;
            match kept {
                Ok(()) => this.instructions.set(Some(text)),
                Err(e) => this.notify(
                    super::NoticeKind::Server,
                    crate::client::labels::failure_text(&e.0, this.locale),
                ),
            }
        });
    }

    /// The model and settings a conversation shown last used.
    pub(super) fn take_settings(&self, model: Option<String>, settings: ReasoningSettings) {
        self.model.set(model);
        self.thinking.set(settings.thinking);
        self.effort.set(settings.effort);
        self.sampling
            .set(ReasoningSettings::reasoning(None, None).with_sampling_of(settings));
    }

    /// Changes the thinking preference and keeps it (with history on the server, in the
    /// workspace's preferences too).
    pub fn set_pref(&self, pref: ThinkingPref) {
        self.pref.set(pref);
        self.remember_current();
        self.backend().keep_pref(*self, pref);
    }

    /// Changes the interface's language: kept in a cookie for this browser and, with history on
    /// the server, in the user's preferences for every device; then the page reloads, rendered
    /// in the new language by the server (nothing is lost: drafts and chats are saved).
    pub fn set_locale(&self, locale: Locale) {
        crate::client::browser::remember_locale(locale);
        self.remember_current();
        self.backend().keep_locale(*self, locale);
    }
}
