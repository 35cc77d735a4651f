//! Bringing a conversation in from elsewhere (a browser's saved chats, a JSON export) in
//! batches: each batch of messages is written and indexed by one transaction, so an import of
//! thousands of messages holds SQLite's write lock for a batch at a time, and the other users'
//! writes get in between.

use std::time::Duration;

use super::ids::new_id;
use super::index::Entry;
use super::messages::insert_version;
use super::records::Extras;
use super::scope::{kind_name, role_name, words, Scoped};
use super::{now_ms, Backend, StoreError};
use crate::domain::history::{HitKind, Import, ImportMessage, TitleMark};
use crate::domain::Role;

/// Messages one transaction of an import writes.
pub const IMPORT_BATCH: usize = 250;

/// The pause between two batches on SQLite, in which writers waiting for its lock take it.
const SQLITE_PAUSE: Duration = Duration::from_millis(10);

impl Scoped<'_> {
    /// Brings a conversation in from elsewhere, once: returns false (and changes nothing) when
    /// one with the same key was imported before. The conversation is written deleted and
    /// without its key, a batch at a time, and shown (with its key) by the last transaction: a
    /// failed import leaves nothing visible, and what it wrote is removed (or purged with the
    /// deleted conversations).
    pub async fn import_conversation(
        &self,
        workspace: Option<&str>,
        import: &Import,
    ) -> Result<bool, StoreError> {
        let known =
            sqlx::query("SELECT id FROM conversations WHERE user_id = $1 AND import_key = $2")
                .bind(self.user_id())
                .bind(&import.key)
                .fetch_optional(self.pool())
                .await?;
        if known.is_some() {
            return Ok(false);
        }
        let workspace = self.own_workspace(workspace).await?;
        let id = new_id();
        let now = now_ms();
        let title = if import.title.trim().is_empty() {
            TitleMark::imported()
        } else {
            import.title.chars().take(200).collect()
        };
        let created = if import.created_at > 0 {
            import.created_at
        } else {
            now
        };
        sqlx::query(
            "INSERT INTO conversations (id, user_id, workspace_id, title, created_at, updated_at, rev, deleted_at, instructions) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, $6, $7)",
        )
        .bind(&id)
        .bind(self.user_id())
        .bind(&workspace.id)
        .bind(&title)
        .bind(created)
        .bind(now)
        .bind(
            import
                .instructions
                .as_deref()
                .and_then(|t| crate::domain::instructions::checked(t).ok().flatten()),
        )
        .execute(self.pool())
        .await?;
        let written = self.import_messages(&id, &import.messages).await;
        let shown = match written {
            Ok(()) => sqlx::query(
                "UPDATE conversations SET import_key = $1, deleted_at = NULL, updated_at = $2 \
                 WHERE id = $3 AND user_id = $4",
            )
            .bind(&import.key)
            .bind(now_ms())
            .bind(&id)
            .bind(self.user_id())
            .execute(self.pool())
            .await
            .map_err(StoreError::from),
            Err(e) => Err(e),
        };
        match shown {
            Ok(_) => Ok(true),
            Err(e) => {
                if let Err(left) = self.discard_conversation(&id).await {
                    tracing::warn!(error = %left, "a failed import's messages are left for the purge");
                }
                match e {
                    // The same conversation was imported at the same moment by another request.
                    StoreError::Conflict(_) => Ok(false),
                    other => Err(other),
                }
            }
        }
    }

    /// The conversation (not deleted) an import with this key made, if any.
    pub async fn imported(&self, key: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(String,)> = sqlx::query_as(
            "SELECT id FROM conversations WHERE user_id = $1 AND import_key = $2 AND deleted_at IS NULL",
        )
        .bind(self.user_id())
        .bind(key)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|(id,)| id))
    }

    async fn import_messages(
        &self,
        conversation: &str,
        messages: &[ImportMessage],
    ) -> Result<(), StoreError> {
        for (n, batch) in messages.chunks(IMPORT_BATCH).enumerate() {
            if n > 0 && self.backend() == Backend::Sqlite {
                tokio::time::sleep(SQLITE_PAUSE).await;
            }
            let mut tx = self.begin_write().await?;
            let mut entries = Vec::new();
            for (i, m) in batch.iter().enumerate() {
                let position = n * IMPORT_BATCH + i;
                self.import_message(&mut tx, conversation, position, m, &mut entries)
                    .await?;
            }
            self.index_new(&mut tx, conversation, &entries).await?;
            tx.commit().await?;
        }
        Ok(())
    }

    async fn import_message(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
        position: usize,
        m: &ImportMessage,
        entries: &mut Vec<Entry>,
    ) -> Result<(), StoreError> {
        let user = self.user_id();
        let message = new_id();
        sqlx::query(
            "INSERT INTO messages (id, conversation_id, user_id, position, role, active_version, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&message)
        .bind(conversation)
        .bind(user)
        .bind(position as i64)
        .bind(role_name(m.role))
        .bind(m.active.min(m.versions.len().saturating_sub(1)) as i64)
        .bind(m.created_at)
        .execute(&mut **tx)
        .await?;
        for (idx, v) in m.versions.iter().enumerate() {
            let version = insert_version(
                tx,
                &message,
                user,
                idx as i64,
                &v.content,
                v.status,
                v.created_at,
            )
            .await?;
            self.attach_kept(tx, &version, &v.files).await?;
            let usage = v.usage.clone().unwrap_or_default();
            let extras = Extras {
                tools: v.tools.clone(),
                sources: v.sources.clone(),
                file_tokens: usage.file_tokens,
                cached_input_tokens: usage.cached_input_tokens,
                estimated: usage.estimated,
                cost: usage.cost.clone(),
                ..Extras::default()
            };
            if !usage.is_empty() {
                let count = |n: Option<u64>| n.and_then(|n| i64::try_from(n).ok());
                sqlx::query(
                    "UPDATE message_versions SET input_tokens = $1, output_tokens = $2, \
                     reasoning_tokens = $3 WHERE id = $4",
                )
                .bind(count(usage.input_tokens))
                .bind(count(usage.output_tokens))
                .bind(count(usage.reasoning_tokens))
                .bind(&version)
                .execute(&mut **tx)
                .await?;
            }
            let extras = extras.write();
            if v.error.is_some() || extras.is_some() {
                sqlx::query("UPDATE message_versions SET error = $1, extras = $2 WHERE id = $3")
                    .bind(v.error.as_deref())
                    .bind(extras)
                    .bind(&version)
                    .execute(&mut **tx)
                    .await?;
            }
            entries.push(Entry {
                ref_id: version.clone(),
                message_id: message.clone(),
                kind: if m.role == Role::User {
                    HitKind::Question
                } else {
                    HitKind::Answer
                },
                text: v.content.clone(),
            });
            for (bidx, b) in v.blocks.iter().enumerate() {
                let block = new_id();
                sqlx::query(
                    "INSERT INTO thinking_blocks (id, version_id, user_id, idx, kind, text, chars, words, duration_ms, interrupted) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                )
                .bind(&block)
                .bind(&version)
                .bind(user)
                .bind(bidx as i64)
                .bind(kind_name(b.kind))
                .bind(&b.text)
                .bind(b.text.chars().count() as i64)
                .bind(words(&b.text))
                .bind(b.duration_ms.map(|d| d as i64))
                .bind(i64::from(b.interrupted))
                .execute(&mut **tx)
                .await?;
                entries.push(Entry {
                    ref_id: block,
                    message_id: message.clone(),
                    kind: HitKind::Thinking,
                    text: b.text.clone(),
                });
            }
        }
        Ok(())
    }
}
