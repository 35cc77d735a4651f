//! A user's conversations: the list, one conversation read whole or by page, and the changes
//! to a conversation as a whole (title, deletion, restoring, discarding).

use std::collections::HashMap;

use super::ids::new_id;
use super::index::{unindex, Arg};
use super::rows::{BlockRow, ConversationRow, MessageRow, SettingsRow, SummaryRow, VersionRow};
use super::scope::{found, title_from, Scoped};
use super::{now_ms, StoreError};
use crate::domain::history::{
    BlockHeader, Conversation, ConversationSummary, Page, TitleMark, Version,
};
use crate::domain::ReasoningSettings;

impl Scoped<'_> {
    /// The conversations of a workspace (the default one when none is named), newest first.
    /// Deleted ones are listed only with `deleted`, for Undo.
    pub async fn conversations(
        &self,
        workspace: Option<&str>,
        deleted: bool,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        let workspace = self.own_workspace(workspace).await?;
        let sql = if deleted {
            "SELECT id, title, workspace_id, updated_at, deleted_at, pinned_at, tags FROM conversations \
             WHERE user_id = $1 AND workspace_id = $2 AND deleted_at IS NOT NULL ORDER BY deleted_at DESC"
        } else {
            "SELECT id, title, workspace_id, updated_at, deleted_at, pinned_at, tags FROM conversations \
             WHERE user_id = $1 AND workspace_id = $2 AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC"
        };
        let rows: Vec<SummaryRow> = sqlx::query_as(sql)
            .bind(self.user_id())
            .bind(&workspace.id)
            .fetch_all(self.pool())
            .await?;
        Ok(rows.into_iter().map(ConversationSummary::from).collect())
    }

    pub async fn create_conversation(
        &self,
        workspace: Option<&str>,
        title: &str,
    ) -> Result<ConversationSummary, StoreError> {
        let workspace = self.own_workspace(workspace).await?;
        let mut tx = self.begin_write().await?;
        let made = self
            .new_conversation_in(&mut tx, &workspace.id, title, None)
            .await?;
        tx.commit().await?;
        Ok(made)
    }

    /// A new conversation in `workspace`, titled from `title`, with its own `instructions`,
    /// inside the caller's transaction: one statement that also checks the workspace is the
    /// caller's (not found otherwise), where a look-up first would be a read of its own.
    pub(super) async fn new_conversation_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        workspace: &str,
        title: &str,
        instructions: Option<&str>,
    ) -> Result<ConversationSummary, StoreError> {
        let id = new_id();
        let now = now_ms();
        let title = title_from(title);
        let made = sqlx::query(
            "INSERT INTO conversations (id, user_id, workspace_id, title, created_at, updated_at, rev, instructions) \
             SELECT $1, $2, w.id, $4, $5, $5, 0, $6 FROM workspaces w WHERE w.id = $3 AND w.user_id = $2",
        )
        .bind(&id)
        .bind(self.user_id())
        .bind(workspace)
        .bind(&title)
        .bind(now)
        .bind(instructions)
        .execute(&mut **tx)
        .await?;
        found(made.rows_affected())?;
        Ok(ConversationSummary {
            id,
            title,
            workspace_id: workspace.to_string(),
            updated_at: now,
            deleted_at: None,
            pinned: false,
            tags: Vec::new(),
        })
    }

    pub async fn rename_conversation(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let title = TitleMark::strip(title);
        let title = title.trim();
        if title.is_empty() {
            return Err(StoreError::Refused(
                crate::domain::Failure::of(crate::domain::ErrorCode::BadRequest, false)
                    .with("detail", "a title cannot be empty"),
            ));
        }
        let title: String = title.chars().take(200).collect();
        let done = sqlx::query(
            "UPDATE conversations SET title = $1, updated_at = $2, rev = rev + 1, title_source = 'reader' WHERE id = $3 AND user_id = $4 AND deleted_at IS NULL",
        )
        .bind(&title)
        .bind(now_ms())
        .bind(id)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// Deletes a conversation, restorable until the purge; returns when it was deleted. Its
    /// shared links are revoked at once, for good: restoring it does not open them again.
    pub async fn delete_conversation(&self, id: &str) -> Result<i64, StoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let done = sqlx::query(
            "UPDATE conversations SET deleted_at = $1 WHERE id = $2 AND user_id = $3 AND deleted_at IS NULL",
        )
        .bind(now)
        .bind(id)
        .bind(self.user_id())
        .execute(&mut *tx)
        .await?;
        found(done.rows_affected())?;
        sqlx::query("DELETE FROM shares WHERE conversation_id = $1 AND user_id = $2")
            .bind(id)
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(now)
    }

    pub async fn restore_conversation(&self, id: &str) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE conversations SET deleted_at = NULL, updated_at = $1 WHERE id = $2 AND user_id = $3 AND deleted_at IS NOT NULL",
        )
        .bind(now_ms())
        .bind(id)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// A conversation with its messages, every version and the block headers, but no
    /// reasoning text (`with_text` for exports).
    pub async fn conversation(
        &self,
        id: &str,
        with_text: bool,
    ) -> Result<Conversation, StoreError> {
        self.conversation_page(id, with_text, Page::default()).await
    }

    /// The messages of `page` of a conversation (all of them by default), so a long one
    /// opens on its last messages and loads earlier ones as the reader scrolls up to them.
    pub async fn conversation_page(
        &self,
        id: &str,
        with_text: bool,
        page: Page,
    ) -> Result<Conversation, StoreError> {
        let head: ConversationRow = sqlx::query_as(
            "SELECT id, title, workspace_id, created_at, updated_at, rev, model, thinking, effort, temperature, top_p, max_tokens, instructions FROM conversations \
             WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(self.user_id())
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        let mut all: Vec<MessageRow> = sqlx::query_as(
            "SELECT id, role, created_at, active_version, position FROM messages WHERE conversation_id = $1 AND user_id = $2 ORDER BY position",
        )
        .bind(id)
        .bind(self.user_id())
        .fetch_all(self.pool())
        .await?;
        let (first, end) = page.range(all.len());
        all.truncate(end);
        let messages = all.split_off(first);
        let (low, high) = match (messages.first(), messages.last()) {
            (Some(a), Some(b)) => (a.position, b.position),
            _ => (0, -1),
        };
        let versions: Vec<VersionRow> = sqlx::query_as(
            "SELECT v.id, v.message_id, v.content, v.status, v.error, v.retryable, v.model, v.thinking, v.effort, v.temperature, v.top_p, v.max_tokens, v.created_at, v.turn_id, v.extras, \
             v.input_tokens, v.output_tokens, v.reasoning_tokens, v.compared, v.picked, v.rating \
             FROM message_versions v JOIN messages m ON m.id = v.message_id \
             WHERE m.conversation_id = $1 AND v.user_id = $2 AND m.position BETWEEN $3 AND $4 \
             ORDER BY v.message_id, v.idx",
        )
        .bind(id)
        .bind(self.user_id())
        .bind(low)
        .bind(high)
        .fetch_all(self.pool())
        .await?;
        let text_column = if with_text { "b.text" } else { "NULL" };
        let blocks: Vec<BlockRow> = sqlx::query_as(&format!(
            "SELECT b.id, b.version_id, b.kind, b.chars, b.words, b.duration_ms, b.reader_open, b.interrupted, b.cut_short, b.started_at, {text_column} AS text \
             FROM thinking_blocks b JOIN message_versions v ON v.id = b.version_id JOIN messages m ON m.id = v.message_id \
             WHERE m.conversation_id = $1 AND b.user_id = $2 AND m.position BETWEEN $3 AND $4 \
             ORDER BY b.version_id, b.idx"
        ))
        .bind(id)
        .bind(self.user_id())
        .bind(low)
        .bind(high)
        .fetch_all(self.pool())
        .await?;

        let now = now_ms();
        let mut by_version: HashMap<String, Vec<BlockHeader>> = HashMap::new();
        for block in blocks {
            by_version
                .entry(block.version_id.clone())
                .or_default()
                .push(block.header(now));
        }
        let mut files = self.files_shown(id, (low, high)).await?;
        let mut by_message: HashMap<String, Vec<Version>> = HashMap::new();
        for version in versions {
            let blocks = by_version.remove(version.id()).unwrap_or_default();
            let files = files.remove(version.id()).unwrap_or_default();
            by_message
                .entry(version.message_id.clone())
                .or_default()
                .push(Version {
                    files,
                    ..version.with(blocks)
                });
        }
        let messages = messages
            .into_iter()
            .map(|m| {
                let versions = by_message.remove(&m.id).unwrap_or_default();
                m.with(versions)
            })
            .collect();
        Ok(head.with(messages, first))
    }

    /// The model and reasoning settings a conversation's last turn used.
    pub async fn conversation_model(
        &self,
        id: &str,
    ) -> Result<(Option<String>, ReasoningSettings), StoreError> {
        let row: SettingsRow = sqlx::query_as(
            "SELECT model, thinking, effort, temperature, top_p, max_tokens FROM conversations WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(self.user_id())
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        let settings = row.settings();
        Ok((row.model, settings))
    }
    /// Removes at once a conversation this request has just made, when the turn it was made for
    /// could not be stored whole: a failed turn leaves no empty conversation behind.
    pub async fn discard_conversation(&self, conversation: &str) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        unindex(
            &mut tx,
            self.backend(),
            "conversation_id = $1 AND user_id = $2",
            &[Arg::Text(conversation), Arg::Text(self.user_id())],
        )
        .await?;
        sqlx::query("DELETE FROM conversations WHERE id = $1 AND user_id = $2")
            .bind(conversation)
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}

impl Scoped<'_> {
    /// Writes a title the model made, unless the conversation has one the reader or a model
    /// gave it since (or it is gone); whether it was written. `None`: the model gave none, and
    /// the first words stay for good.
    pub async fn set_model_title(&self, id: &str, title: Option<&str>) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE conversations SET title = COALESCE($1, title), rev = rev + 1, \
             title_source = 'model' \
             WHERE id = $2 AND user_id = $3 AND deleted_at IS NULL AND title_source = 'auto'",
        )
        .bind(title)
        .bind(id)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// A conversation's title, and whether it is still the one Ponder made from its first words
    /// (no model nor reader gave it another).
    pub async fn title_of(&self, id: &str) -> Result<(String, bool), StoreError> {
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT title, title_source FROM conversations \
             WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(self.user_id())
        .fetch_optional(self.pool())
        .await?;
        let (title, source) = row.ok_or(StoreError::NotFound)?;
        Ok((title, source == "auto"))
    }
}
