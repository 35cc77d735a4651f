//! The messages of a conversation: the reader's questions and edits, the answers a turn opens
//! and writes, their versions and the reader's choices on their thinking blocks.

use super::ids::new_id;
use super::index::{unindex, Arg, Entry};
use super::records::{AnswerRecord, AnswerSlot};
use super::scope::{found, lock_conversation, role_name, role_of, Scoped};
use super::streaming::{upsert_blocks, BlockRow};
use super::{now_ms, Backend, StoreError};
use crate::domain::history::{HitKind, VersionStatus};
use crate::domain::{ReasoningSettings, Role};

impl Scoped<'_> {
    /// A block's reasoning text, loaded when the reader opens it.
    pub async fn block_text(&self, block: &str) -> Result<String, StoreError> {
        sqlx::query_scalar("SELECT text FROM thinking_blocks WHERE id = $1 AND user_id = $2")
            .bind(block)
            .bind(self.user_id())
            .fetch_optional(self.pool())
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Keeps the reader's open/closed choice for a block.
    pub async fn set_block_open(&self, block: &str, open: Option<bool>) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE thinking_blocks SET reader_open = $1 WHERE id = $2 AND user_id = $3",
        )
        .bind(open.map(i64::from))
        .bind(block)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// Keeps the reader's choice for the block at `index` of version `version` of `message`
    /// (a block streamed on the page does not know its id).
    pub async fn set_block_open_at(
        &self,
        message: &str,
        version: usize,
        index: usize,
        open: Option<bool>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE thinking_blocks SET reader_open = $1 WHERE user_id = $2 AND idx = $3 AND version_id = \
             (SELECT id FROM message_versions WHERE message_id = $4 AND idx = $5 AND user_id = $2)",
        )
        .bind(open.map(i64::from))
        .bind(self.user_id())
        .bind(index as i64)
        .bind(message)
        .bind(version as i64)
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// Shows another version of a message.
    pub async fn set_active_version(
        &self,
        message: &str,
        version: usize,
    ) -> Result<(), StoreError> {
        let count: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) AS n FROM message_versions WHERE message_id = $1 AND user_id = $2",
        )
        .bind(message)
        .bind(self.user_id())
        .fetch_one(self.pool())
        .await?;
        if count == 0 {
            return Err(StoreError::NotFound);
        }
        if version as i64 >= count {
            return Err(StoreError::Conflict(format!(
                "that message has {count} versions"
            )));
        }
        sqlx::query("UPDATE messages SET active_version = $1 WHERE id = $2 AND user_id = $3")
            .bind(version as i64)
            .bind(message)
            .bind(self.user_id())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    pub(super) async fn message_position(
        &self,
        conversation: &str,
        message: &str,
    ) -> Result<(i64, Role), StoreError> {
        self.message_position_on(self.pool(), conversation, message)
            .await
    }

    /// [`Self::message_position`], read on `on` (a connection already held for other reads).
    pub(super) async fn message_position_on<'e>(
        &self,
        on: impl sqlx::Executor<'e, Database = sqlx::Any>,
        conversation: &str,
        message: &str,
    ) -> Result<(i64, Role), StoreError> {
        let (position, role): (i64, String) = sqlx::query_as(
            "SELECT position, role FROM messages WHERE id = $1 AND conversation_id = $2 AND user_id = $3",
        )
        .bind(message)
        .bind(conversation)
        .bind(self.user_id())
        .fetch_optional(on)
        .await?
        .ok_or(StoreError::NotFound)?;
        Ok((position, role_of(&role)))
    }

    /// Removes at once messages this request has just added, for the same reason.
    pub async fn discard_messages(
        &self,
        conversation: &str,
        messages: &[&str],
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        for message in messages {
            unindex(
                &mut tx,
                self.backend(),
                "message_id = $1 AND user_id = $2",
                &[Arg::Text(message), Arg::Text(self.user_id())],
            )
            .await?;
            sqlx::query(
                "DELETE FROM messages WHERE id = $1 AND conversation_id = $2 AND user_id = $3",
            )
            .bind(*message)
            .bind(conversation)
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Stores the reader's message at the end of the conversation, or as a new version of the
    /// message `edit_of` (what followed it is dropped: history stays linear). Returns its id.
    pub async fn add_user_message(
        &self,
        conversation: &str,
        content: &str,
        edit_of: Option<&str>,
    ) -> Result<String, StoreError> {
        self.add_user_message_with(conversation, content, edit_of, &[], u64::MAX)
            .await
    }

    /// [`Self::add_user_message`] with the files the reader attached (the user's own, by id; any
    /// other id is not found), at most `max_bytes` together.
    pub async fn add_user_message_with(
        &self,
        conversation: &str,
        content: &str,
        edit_of: Option<&str>,
        attachments: &[String],
        max_bytes: u64,
    ) -> Result<String, StoreError> {
        self.owns_conversation(conversation).await?;
        self.check_attachments(attachments, max_bytes).await?;
        let mut tx = self.begin_write().await?;
        lock_conversation(&mut tx, conversation).await?;
        let id = self
            .add_user_message_in(&mut tx, conversation, content, edit_of, attachments)
            .await?;
        self.touch_in(&mut tx, conversation).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// [`Self::add_user_message_with`] inside the caller's transaction, its checks done and
    /// the conversation locked; the caller marks the conversation changed.
    pub(super) async fn add_user_message_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
        content: &str,
        edit_of: Option<&str>,
        attachments: &[String],
    ) -> Result<String, StoreError> {
        let now = now_ms();
        let message_id = match edit_of {
            Some(message) => {
                let (position, role) = self.message_position(conversation, message).await?;
                if role != Role::User {
                    return Err(StoreError::Conflict(
                        "only your own messages can be edited".into(),
                    ));
                }
                let next = next_version(tx, message).await?;
                let version = insert_version(
                    tx,
                    message,
                    self.user_id(),
                    next,
                    content,
                    VersionStatus::Done,
                    now,
                )
                .await?;
                self.attach(tx, &version, attachments).await?;
                sqlx::query("UPDATE messages SET active_version = $1 WHERE id = $2")
                    .bind(next)
                    .bind(message)
                    .execute(&mut **tx)
                    .await?;
                unindex(
                    tx,
                    self.backend(),
                    "message_id IN \
                     (SELECT id FROM messages WHERE conversation_id = $1 AND position > $2)",
                    &[Arg::Text(conversation), Arg::Int(position)],
                )
                .await?;
                sqlx::query("DELETE FROM messages WHERE conversation_id = $1 AND position > $2")
                    .bind(conversation)
                    .bind(position)
                    .execute(&mut **tx)
                    .await?;
                message.to_string()
            }
            None => {
                let id = new_id();
                insert_message(tx, conversation, self.user_id(), &id, Role::User, now).await?;
                let version = insert_version(
                    tx,
                    &id,
                    self.user_id(),
                    0,
                    content,
                    VersionStatus::Done,
                    now,
                )
                .await?;
                self.attach(tx, &version, attachments).await?;
                id
            }
        };
        let entry = Entry {
            ref_id: message_id.clone(),
            message_id: message_id.clone(),
            kind: HitKind::Question,
            text: content.to_string(),
        };
        self.index_new(tx, conversation, std::slice::from_ref(&entry))
            .await?;
        Ok(message_id)
    }
}

/// What an answer is asked with: the model, the reasoning settings, and the combined
/// instructions (`Some("")`: none; `None`: not known, as for an import).
#[derive(Clone, Copy, Debug)]
pub(super) struct Asking<'a> {
    pub model: &'a str,
    pub settings: ReasoningSettings,
    pub instructions: Option<&'a str>,
}

impl Scoped<'_> {
    /// Opens the answer to the conversation's last message, or a new version of the assistant
    /// message `regenerate` (earlier versions are kept).
    pub async fn start_answer(
        &self,
        conversation: &str,
        regenerate: Option<&str>,
        model: &str,
        settings: ReasoningSettings,
        turn: Option<&str>,
    ) -> Result<AnswerSlot, StoreError> {
        self.owns_conversation(conversation).await?;
        let mut tx = self.begin_write().await?;
        lock_conversation(&mut tx, conversation).await?;
        let asking = Asking {
            model,
            settings,
            instructions: None,
        };
        let slot = self
            .start_answer_in(&mut tx, conversation, regenerate, asking, turn)
            .await?;
        tx.commit().await?;
        Ok(slot)
    }

    /// [`Self::start_answer`] inside the caller's transaction, the conversation checked and
    /// locked; marks the conversation changed.
    pub(super) async fn start_answer_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
        regenerate: Option<&str>,
        asking: Asking<'_>,
        turn: Option<&str>,
    ) -> Result<AnswerSlot, StoreError> {
        let Asking {
            model,
            settings,
            instructions,
        } = asking;
        let now = now_ms();
        let (message_id, version) = match regenerate {
            Some(message) => {
                let (_, role) = self.message_position(conversation, message).await?;
                if role != Role::Assistant {
                    return Err(StoreError::Conflict(
                        "only an answer can be regenerated".into(),
                    ));
                }
                let next = next_version(tx, message).await?;
                sqlx::query("UPDATE messages SET active_version = $1 WHERE id = $2")
                    .bind(next)
                    .bind(message)
                    .execute(&mut **tx)
                    .await?;
                (message.to_string(), next)
            }
            None => {
                let id = new_id();
                insert_message(tx, conversation, self.user_id(), &id, Role::Assistant, now).await?;
                (id, 0)
            }
        };
        let thinking = settings.thinking.map(i64::from);
        let effort = settings.effort.map(|e| e.as_str());
        let sampled = crate::domain::history::Sampled::of(&settings);
        let version_id = new_id();
        sqlx::query(
            "INSERT INTO message_versions (id, message_id, user_id, idx, content, status, created_at, \
             model, thinking, effort, turn_id, instructions, temperature, top_p, max_tokens) \
             VALUES ($1, $2, $3, $4, '', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(&version_id)
        .bind(&message_id)
        .bind(self.user_id())
        .bind(version)
        .bind(VersionStatus::Streaming.name())
        .bind(now)
        .bind(model)
        .bind(thinking)
        .bind(effort)
        .bind(turn)
        .bind(instructions)
        .bind(sampled.temperature)
        .bind(sampled.top_p)
        .bind(sampled.max_tokens)
        .execute(&mut **tx)
        .await?;
        sqlx::query(
            "UPDATE conversations SET model = $1, thinking = $2, effort = $3, updated_at = $6, \
             temperature = $7, top_p = $8, max_tokens = $9, rev = rev + 1 WHERE id = $4 AND user_id = $5",
        )
        .bind(model)
        .bind(thinking)
        .bind(effort)
        .bind(conversation)
        .bind(self.user_id())
        .bind(now)
        .bind(sampled.temperature)
        .bind(sampled.top_p)
        .bind(sampled.max_tokens)
        .execute(&mut **tx)
        .await?;
        Ok(AnswerSlot {
            conversation_id: conversation.to_string(),
            message_id,
            version_id,
            version: version as usize,
        })
    }

    /// Writes an answer's state as it streams and at its end; a final state also enters the
    /// search index.
    pub async fn save_answer(
        &self,
        slot: &AnswerSlot,
        answer: &AnswerRecord,
    ) -> Result<(), StoreError> {
        let mut turn = self.write_turn().await;
        let mut tx = turn.begin().await?;
        if answer.status == VersionStatus::Streaming && self.backend() == Backend::Postgres {
            // A state the next second overwrites need not wait for the disk; the final one does.
            sqlx::query("SET LOCAL synchronous_commit = off")
                .execute(&mut *tx)
                .await?;
        }
        self.save_answer_in(&mut tx, slot, answer).await?;
        tx.commit().await?;
        Ok(())
    }

    /// [`Scoped::save_answer`] inside the caller's transaction (a batch of final states).
    pub(super) async fn save_answer_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        slot: &AnswerSlot,
        answer: &AnswerRecord,
    ) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE message_versions SET content = $1, status = $2, error = $3, retryable = $4, finish_reason = $5, \
             input_tokens = $6, output_tokens = $7, reasoning_tokens = $8, extras = $11 \
             WHERE id = $9 AND user_id = $10 AND status = 'streaming'",
        )
        .bind(&answer.content)
        .bind(answer.status.name())
        .bind(answer.error.as_ref().map(|e| e.message.as_str()))
        .bind(answer.error.as_ref().map(|e| i64::from(e.retryable)))
        .bind(answer.finish_reason.as_ref().map(|r| r.as_str()))
        .bind(answer.input_tokens.map(|n| n as i64))
        .bind(answer.output_tokens.map(|n| n as i64))
        .bind(answer.reasoning_tokens.map(|n| n as i64))
        .bind(&slot.version_id)
        .bind(self.user_id())
        .bind(answer.extras.with_error(answer.error.as_ref()).write())
        .execute(&mut **tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(self.why_not_streaming(tx, &slot.version_id).await);
        }
        let blocks: Vec<BlockRow> = answer
            .blocks
            .iter()
            .enumerate()
            .map(|(at, b)| (slot.version_id.as_str(), self.user_id(), at, b))
            .collect();
        let ids = upsert_blocks(tx, self.backend(), &blocks).await?;
        if answer.status != VersionStatus::Streaming {
            let entry = |ref_id: &str, kind: HitKind, text: &str| Entry {
                ref_id: ref_id.to_string(),
                message_id: slot.message_id.clone(),
                kind,
                text: text.to_string(),
            };
            let mut entries = vec![entry(&slot.version_id, HitKind::Answer, &answer.content)];
            for (id, at) in &ids {
                if let Some(block) = usize::try_from(*at)
                    .ok()
                    .and_then(|at| answer.blocks.get(at))
                {
                    entries.push(entry(id, HitKind::Thinking, &block.text));
                }
            }
            self.index_new(tx, &slot.conversation_id, &entries).await?;
            self.touch_in(tx, &slot.conversation_id).await?;
        }
        Ok(())
    }
}

impl Scoped<'_> {
    /// Why an answer's state was not written: it is not this user's (404), or it already ended
    /// (409: another replica ended it, or its final state was written), so a late state never
    /// lands over a final one.
    async fn why_not_streaming(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        version: &str,
    ) -> StoreError {
        let status: Result<Option<String>, _> = sqlx::query_scalar(
            "SELECT status FROM message_versions WHERE id = $1 AND user_id = $2",
        )
        .bind(version)
        .bind(self.user_id())
        .fetch_optional(&mut **tx)
        .await;
        match status {
            Ok(Some(status)) => {
                StoreError::Conflict(format!("the answer has already ended ({status})"))
            }
            Ok(None) => StoreError::NotFound,
            Err(e) => e.into(),
        }
    }
}

async fn insert_message(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    conversation: &str,
    user: &str,
    id: &str,
    role: Role,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO messages (id, conversation_id, user_id, position, role, active_version, created_at) \
         SELECT $1, $2, $3, COALESCE(MAX(position), -1) + 1, $4, 0, $5 FROM messages WHERE conversation_id = $2",
    )
    .bind(id)
    .bind(conversation)
    .bind(user)
    .bind(role_name(role))
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(super) async fn insert_version(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    message: &str,
    user: &str,
    idx: i64,
    content: &str,
    status: VersionStatus,
    now: i64,
) -> Result<String, StoreError> {
    let id = new_id();
    sqlx::query(
        "INSERT INTO message_versions (id, message_id, user_id, idx, content, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(message)
    .bind(user)
    .bind(idx)
    .bind(content)
    .bind(status.name())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

/// The index the next version of `message` takes: how many it has.
async fn next_version(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    message: &str,
) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) AS n FROM message_versions WHERE message_id = $1")
            .bind(message)
            .fetch_one(&mut **tx)
            .await?,
    )
}
