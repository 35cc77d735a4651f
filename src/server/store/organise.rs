//! Organising a reader's conversations: pinning one on top of the list, tagging it, moving it
//! to another of the reader's workspaces. None of them is activity: the conversation keeps its
//! place in time.

use super::scope::{found, Scoped};
use super::{now_ms, StoreError};
use crate::domain::history::checked_tags;

impl Scoped<'_> {
    /// Pins or unpins a conversation.
    pub async fn set_pinned(&self, id: &str, pinned: bool) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE conversations SET pinned_at = $1 WHERE id = $2 AND user_id = $3 AND deleted_at IS NULL",
        )
        .bind(pinned.then(now_ms))
        .bind(id)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// Replaces a conversation's tags; answers them as kept ([`checked_tags`]).
    pub async fn set_tags(&self, id: &str, tags: &[String]) -> Result<Vec<String>, StoreError> {
        let tags = checked_tags(tags).map_err(|why| {
            StoreError::Refused(
                crate::domain::Failure::of(crate::domain::ErrorCode::BadRequest, false)
                    .with("detail", why),
            )
        })?;
        let stored = (!tags.is_empty())
            .then(|| serde_json::to_string(&tags))
            .transpose()
            .map_err(|e| StoreError::Unavailable(e.to_string()))?;
        let done = sqlx::query(
            "UPDATE conversations SET tags = $1 WHERE id = $2 AND user_id = $3 AND deleted_at IS NULL",
        )
        .bind(stored)
        .bind(id)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        found(done.rows_affected())?;
        Ok(tags)
    }

    /// Moves a conversation to another of the reader's workspaces (its instructions then
    /// apply to the next turns).
    pub async fn move_conversation(&self, id: &str, workspace: &str) -> Result<(), StoreError> {
        let workspace = self.own_workspace(Some(workspace)).await?;
        let done = sqlx::query(
            "UPDATE conversations SET workspace_id = $1, rev = rev + 1 \
             WHERE id = $2 AND user_id = $3 AND deleted_at IS NULL",
        )
        .bind(&workspace.id)
        .bind(id)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }
}
