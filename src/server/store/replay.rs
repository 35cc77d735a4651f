//! The history a turn sends upstream, and the opaque reasoning state that goes back with its
//! answers: kept beside the answer version it came with, with who produced it (provider, model,
//! upstream), and read back only for a turn to that same provider, model and upstream. No page,
//! export or log reads it. One conversation keeps at most a configured number of bytes of it;
//! past that the oldest answers' state goes first.

use std::collections::HashMap;

use serde_json::Value;

use super::records::AnswerSlot;
use super::scope::{role_of, Scoped};
use super::{now_ms, StoreError};
use crate::domain::history::VersionStatus;
use crate::domain::message::{history, Said};
use crate::domain::{ChatMessage, Role};

/// Who produced a reasoning state: it is sent back only to the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The wire format (`PONDER_PROVIDER`), as its name.
    pub provider: String,
    pub model: String,
    /// The upstream's base URL.
    pub upstream: String,
}

/// One answer's reasoning state, as a finished turn hands it to the store.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptState {
    pub provenance: Provenance,
    pub items: Vec<Value>,
}

impl KeptState {
    /// The items as they are stored, when there are any and they fit in `max_bytes`.
    fn stored(&self, max_bytes: usize) -> Option<String> {
        if self.items.is_empty() {
            return None;
        }
        let items = Value::Array(self.items.clone()).to_string();
        (items.len() <= max_bytes).then_some(items)
    }
}

impl Scoped<'_> {
    /// What the model is sent to answer `answer` (an assistant message of the conversation):
    /// the shown versions of every message before it, thinking excluded, unfinished answers
    /// left out, turns of one role joined. With `replay`, each answer produced by that
    /// provenance carries the reasoning state it came with.
    pub async fn history_before(
        &self,
        conversation: &str,
        answer: &str,
        replay: Option<&Provenance>,
    ) -> Result<Vec<ChatMessage>, StoreError> {
        let mut on = self.pool().acquire().await?;
        let (position, _) = self
            .message_position_on(&mut *on, conversation, answer)
            .await?;
        let rows: Vec<(String, String, String, String)> = sqlx::query_as(
            "SELECT m.role, v.id, v.content, v.status FROM messages m \
             JOIN message_versions v ON v.message_id = m.id AND v.idx = m.active_version \
             WHERE m.conversation_id = $1 AND m.user_id = $2 AND m.position < $3 ORDER BY m.position",
        )
        .bind(conversation)
        .bind(self.user_id())
        .bind(position)
        .fetch_all(&mut *on)
        .await?;
        let said: Vec<_> = rows
            .into_iter()
            .map(|(role, id, content, status)| {
                (role_of(&role), id, content, VersionStatus::parse(&status))
            })
            .collect();
        let files = self.files_of_on(&mut *on, conversation).await?;
        let states = match replay {
            Some(from) => self.reasoning_states(&mut *on, conversation, from).await?,
            None => HashMap::new(),
        };
        Ok(history(said.iter().map(
            |(role, id, content, status)| match role {
                Role::User => Said::User(
                    content,
                    files.get(id).map(Vec::as_slice).unwrap_or_default(),
                    &[],
                ),
                Role::Assistant => Said::Answer {
                    finished: matches!(status, VersionStatus::Done | VersionStatus::Stopped),
                    text: content,
                    replay: states.get(id).map(Vec::as_slice).unwrap_or_default(),
                },
            },
        )))
    }

    /// The reasoning states of `conversation` that `from` produced, by answer version. A row
    /// that does not read as a list of items (a damaged database) replays nothing.
    async fn reasoning_states<'e>(
        &self,
        on: impl sqlx::Executor<'e, Database = sqlx::Any>,
        conversation: &str,
        from: &Provenance,
    ) -> Result<HashMap<String, Vec<Value>>, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT version_id, items FROM reasoning_states WHERE conversation_id = $1 AND user_id = $2 \
             AND provider = $3 AND model = $4 AND upstream = $5",
        )
        .bind(conversation)
        .bind(self.user_id())
        .bind(&from.provider)
        .bind(&from.model)
        .bind(&from.upstream)
        .fetch_all(on)
        .await?;
        let mut states = HashMap::new();
        for (version, items) in rows {
            match serde_json::from_str::<Vec<Value>>(&items) {
                Ok(items) => {
                    states.insert(version, items);
                }
                Err(e) => {
                    tracing::warn!(error = %e, bytes = items.len(), "a stored reasoning state does not read; its answer is sent without it")
                }
            }
        }
        Ok(states)
    }

    /// Keeps the reasoning state `slot`'s answer came with, then drops the conversation's
    /// oldest states until it holds at most `max_bytes`. A state bigger than that alone is not
    /// kept.
    pub async fn keep_reasoning_state(
        &self,
        slot: &AnswerSlot,
        state: &KeptState,
        max_bytes: usize,
    ) -> Result<(), StoreError> {
        if state.stored(max_bytes).is_none() {
            return Ok(());
        }
        let mut turn = self.write_turn().await;
        let mut tx = turn.begin().await?;
        self.keep_reasoning_state_in(&mut tx, slot, state, max_bytes)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// [`Scoped::keep_reasoning_state`] inside the caller's transaction (a batch of final
    /// states).
    pub(super) async fn keep_reasoning_state_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        slot: &AnswerSlot,
        state: &KeptState,
        max_bytes: usize,
    ) -> Result<(), StoreError> {
        let Some(items) = state.stored(max_bytes) else {
            return Ok(());
        };
        sqlx::query("DELETE FROM reasoning_states WHERE version_id = $1 AND user_id = $2")
            .bind(&slot.version_id)
            .bind(self.user_id())
            .execute(&mut **tx)
            .await?;
        let from = &state.provenance;
        sqlx::query(
            "INSERT INTO reasoning_states (version_id, conversation_id, user_id, provider, model, upstream, bytes, created_at, items) \
             SELECT v.id, $2, $3, $4, $5, $6, $7, $8, $9 FROM message_versions v \
             WHERE v.id = $1 AND v.user_id = $3",
        )
        .bind(&slot.version_id)
        .bind(&slot.conversation_id)
        .bind(self.user_id())
        .bind(&from.provider)
        .bind(&from.model)
        .bind(&from.upstream)
        .bind(items.len() as i64)
        .bind(now_ms())
        .bind(&items)
        .execute(&mut **tx)
        .await?;
        let kept: Vec<(String, i64)> = sqlx::query_as(
            "SELECT version_id, bytes FROM reasoning_states WHERE conversation_id = $1 AND user_id = $2 \
             ORDER BY created_at DESC, version_id DESC",
        )
        .bind(&slot.conversation_id)
        .bind(self.user_id())
        .fetch_all(&mut **tx)
        .await?;
        let mut total = 0usize;
        for (version, bytes) in kept {
            total += usize::try_from(bytes).unwrap_or(usize::MAX);
            if total > max_bytes {
                sqlx::query("DELETE FROM reasoning_states WHERE version_id = $1 AND user_id = $2")
                    .bind(&version)
                    .bind(self.user_id())
                    .execute(&mut **tx)
                    .await?;
            }
        }
        Ok(())
    }

    /// Bytes of reasoning state `conversation` keeps (for the cap's tests and the figures).
    pub async fn reasoning_state_bytes(&self, conversation: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) AS total FROM reasoning_states \
             WHERE conversation_id = $1 AND user_id = $2",
        )
        .bind(conversation)
        .bind(self.user_id())
        .fetch_one(self.pool())
        .await?)
    }
}
