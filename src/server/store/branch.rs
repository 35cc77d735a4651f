//! Branching a conversation: a new one holding its messages up to a point, every field of every
//! version kept (settings, usage, tools and sources, thinking, the reasoning state), found by
//! search, written in one transaction so a failure leaves nothing behind.

use super::ids::new_id;
use super::index::Entry;
use super::scope::{role_name, Scoped};
use super::{now_ms, StoreError};
use crate::domain::history::{ConversationSummary, HitKind, TitleMark, VersionStatus};
use crate::domain::Role;

/// The columns of a version copied as they are (the id, message and running turn are the
/// branch's own).
const VERSION_COLUMNS: &str =
    "idx, status, error, retryable, model, finish_reason, input_tokens, output_tokens, \
     reasoning_tokens, created_at, content, thinking, effort, temperature, top_p, max_tokens, extras";

/// The columns of a thinking block copied as they are.
const BLOCK_COLUMNS: &str =
    "idx, kind, chars, words, started_at, duration_ms, token_count, reader_open, interrupted, text, cut_short";

impl Scoped<'_> {
    /// A new conversation holding `conversation`'s messages up to and including `upto`, with
    /// every version, its thinking and its reasoning state. A version still streaming is kept as
    /// interrupted: the branch runs no turn.
    pub async fn branch_conversation(
        &self,
        conversation: &str,
        upto: &str,
    ) -> Result<ConversationSummary, StoreError> {
        let source = self.conversation(conversation, true).await?;
        let cut = source
            .messages
            .iter()
            .position(|m| m.id == upto)
            .ok_or(StoreError::NotFound)?;
        let user = self.user_id();
        let id = new_id();
        let title = TitleMark::Branch.after(&source.title);
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let made = sqlx::query(
            "INSERT INTO conversations (id, user_id, workspace_id, title, model, thinking, effort, temperature, top_p, max_tokens, instructions, created_at, updated_at, rev) \
             SELECT $1, user_id, workspace_id, $2, model, thinking, effort, temperature, top_p, max_tokens, instructions, $3, $3, 0 FROM conversations \
             WHERE id = $4 AND user_id = $5 AND deleted_at IS NULL",
        )
        .bind(&id)
        .bind(&title)
        .bind(now)
        .bind(conversation)
        .bind(user)
        .execute(&mut *tx)
        .await?;
        if made.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        let mut entries = Vec::new();
        for (position, m) in source.messages[..=cut].iter().enumerate() {
            let message = new_id();
            sqlx::query(
                "INSERT INTO messages (id, conversation_id, user_id, position, role, active_version, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&message)
            .bind(&id)
            .bind(user)
            .bind(position as i64)
            .bind(role_name(m.role))
            .bind(m.active as i64)
            .bind(m.created_at)
            .execute(&mut *tx)
            .await?;
            for v in &m.versions {
                let version = new_id();
                sqlx::query(&format!(
                    "INSERT INTO message_versions (id, message_id, user_id, {VERSION_COLUMNS}) \
                     SELECT $1, $2, user_id, {VERSION_COLUMNS} FROM message_versions WHERE id = $3 AND user_id = $4"
                ))
                .bind(&version)
                .bind(&message)
                .bind(&v.id)
                .bind(user)
                .execute(&mut *tx)
                .await?;
                if v.status == VersionStatus::Streaming {
                    sqlx::query("UPDATE message_versions SET status = $1 WHERE id = $2")
                        .bind(VersionStatus::Interrupted.name())
                        .bind(&version)
                        .execute(&mut *tx)
                        .await?;
                }
                let blocks: Vec<(String, i64)> = sqlx::query_as(
                    "SELECT id, idx FROM thinking_blocks WHERE version_id = $1 AND user_id = $2 ORDER BY idx",
                )
                .bind(&v.id)
                .bind(user)
                .fetch_all(&mut *tx)
                .await?;
                for (old, idx) in blocks {
                    let block = new_id();
                    sqlx::query(&format!(
                        "INSERT INTO thinking_blocks (id, version_id, user_id, {BLOCK_COLUMNS}) \
                         SELECT $1, $2, user_id, {BLOCK_COLUMNS} FROM thinking_blocks WHERE id = $3 AND user_id = $4"
                    ))
                    .bind(&block)
                    .bind(&version)
                    .bind(&old)
                    .bind(user)
                    .execute(&mut *tx)
                    .await?;
                    let text = v
                        .blocks
                        .get(usize::try_from(idx).unwrap_or(usize::MAX))
                        .and_then(|b| b.text.clone())
                        .unwrap_or_default();
                    entries.push(Entry {
                        ref_id: block,
                        message_id: message.clone(),
                        kind: HitKind::Thinking,
                        text,
                    });
                }
                self.copy_files(&mut tx, &v.id, &version).await?;
                sqlx::query(
                    "INSERT INTO reasoning_states (version_id, conversation_id, user_id, provider, model, upstream, bytes, created_at, items) \
                     SELECT $1, $2, user_id, provider, model, upstream, bytes, created_at, items FROM reasoning_states \
                     WHERE version_id = $3 AND user_id = $4",
                )
                .bind(&version)
                .bind(&id)
                .bind(&v.id)
                .bind(user)
                .execute(&mut *tx)
                .await?;
                entries.push(Entry {
                    ref_id: version,
                    message_id: message.clone(),
                    kind: match m.role {
                        Role::User => HitKind::Question,
                        Role::Assistant => HitKind::Answer,
                    },
                    text: v.content.clone(),
                });
            }
        }
        self.index_new(&mut tx, &id, &entries).await?;
        let workspace_id: String = sqlx::query_scalar(
            "SELECT workspace_id FROM conversations WHERE id = $1 AND user_id = $2",
        )
        .bind(&id)
        .bind(user)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(ConversationSummary {
            id,
            title,
            workspace_id,
            updated_at: now,
            deleted_at: None,
            pinned: false,
            tags: Vec::new(),
        })
    }
}
