//! The readers' levels of system instructions (their own, a workspace's, a conversation's) and
//! the combined text each answer version was asked with. The administrator's level is
//! configuration, not stored.

use super::scope::{found, Scoped};
use super::StoreError;
use crate::domain::instructions::Level;

/// The levels a reader sets, for one chat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReaderLevels {
    pub personal: Option<String>,
    pub workspace: Option<String>,
    pub conversation: Option<String>,
    /// The workspace these levels are of (for a new chat with none named, the default one):
    /// where the chat opens, so that its opening need not look it up again.
    pub workspace_id: Option<String>,
}

#[derive(sqlx::FromRow)]
struct LevelsRow {
    workspace_id: Option<String>,
    personal: Option<String>,
    workspace: Option<String>,
    conversation: Option<String>,
}

impl Scoped<'_> {
    /// The levels for `conversation`, or for a new chat in `workspace` (the default one when
    /// none is named).
    pub async fn instruction_levels(
        &self,
        conversation: Option<&str>,
        workspace: Option<&str>,
    ) -> Result<ReaderLevels, StoreError> {
        let row: Option<LevelsRow> = match conversation {
            Some(id) => {
                sqlx::query_as(
                    "SELECT c.workspace_id AS workspace_id, u.instructions AS personal, \
                     w.instructions AS workspace, c.instructions AS conversation FROM conversations c \
                     JOIN workspaces w ON w.id = c.workspace_id JOIN users u ON u.id = c.user_id \
                     WHERE c.id = $1 AND c.user_id = $2 AND c.deleted_at IS NULL",
                )
                .bind(id)
                .bind(self.user_id())
                .fetch_optional(self.pool())
                .await?
            }
            None => match self.new_chat_levels(workspace).await? {
                None if workspace.is_none() => {
                    let made = self.default_workspace().await?;
                    self.new_chat_levels(Some(&made.id)).await?
                }
                found => found,
            },
        };
        let row = row.ok_or(StoreError::NotFound)?;
        Ok(ReaderLevels {
            workspace_id: row.workspace_id,
            personal: row.personal,
            workspace: row.workspace,
            conversation: row.conversation,
        })
    }

    /// The levels of a new chat in `workspace` (the first one when none is named), in one read;
    /// `None` when the reader has no such workspace (or none at all).
    async fn new_chat_levels(
        &self,
        workspace: Option<&str>,
    ) -> Result<Option<LevelsRow>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT w.id AS workspace_id, u.instructions AS personal, w.instructions AS workspace, \
             CAST(NULL AS TEXT) AS conversation FROM workspaces w JOIN users u ON u.id = w.user_id \
             WHERE w.user_id = $1 AND ($2 IS NULL OR w.id = $2) ORDER BY w.created_at, w.id LIMIT 1",
        )
        .bind(self.user_id())
        .bind(workspace)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Sets one of the reader's levels (`None` clears it): their own, or workspace or
    /// conversation `id`. The administrator's level is not the reader's: a conflict.
    pub async fn set_instructions(
        &self,
        level: Level,
        id: Option<&str>,
        text: Option<&str>,
    ) -> Result<(), StoreError> {
        let (sql, target) = match (level, id) {
            (Level::Personal, _) => (
                "UPDATE users SET instructions = $1 WHERE id = $2 AND id = $3",
                self.user_id(),
            ),
            (Level::Workspace, Some(id)) => (
                "UPDATE workspaces SET instructions = $1 WHERE id = $2 AND user_id = $3",
                id,
            ),
            (Level::Conversation, Some(id)) => (
                "UPDATE conversations SET instructions = $1, rev = rev + 1 \
                 WHERE id = $2 AND user_id = $3 AND deleted_at IS NULL",
                id,
            ),
            (Level::Workspace | Level::Conversation, None) => return Err(StoreError::NotFound),
            (Level::Model, _) => {
                return Err(StoreError::Conflict(
                    "the model's instructions are the administrator's".into(),
                ))
            }
        };
        let done = sqlx::query(sql)
            .bind(text)
            .bind(target)
            .bind(self.user_id())
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }

    /// The reader's own level alone (a turn the server does not store).
    pub async fn personal_instructions(&self) -> Result<Option<String>, StoreError> {
        let row: Option<(Option<String>,)> =
            sqlx::query_as("SELECT instructions FROM users WHERE id = $1")
                .bind(self.user_id())
                .fetch_optional(self.pool())
                .await?;
        Ok(row.ok_or(StoreError::NotFound)?.0)
    }

    /// The combined instructions the shown version of answer `message` was asked with:
    /// `Some("")` when it had none, `None` when it was made before instructions were kept.
    pub async fn version_instructions(&self, message: &str) -> Result<Option<String>, StoreError> {
        let row: Option<(Option<String>,)> = sqlx::query_as(
            "SELECT v.instructions FROM messages m JOIN message_versions v \
             ON v.message_id = m.id AND v.idx = m.active_version \
             WHERE m.id = $1 AND m.user_id = $2",
        )
        .bind(message)
        .bind(self.user_id())
        .fetch_optional(self.pool())
        .await?;
        Ok(row.ok_or(StoreError::NotFound)?.0)
    }
}
