//! What one user may make of each thing they own, so that nobody can slow the server down for
//! everybody by making thousands: workspaces and personal API tokens. The count is read and the
//! row written in one transaction that holds the user's row locked, so requests at once cannot
//! both take the last place. Over the limit the answer is 409 (`conflict`), saying the limit.

use super::ids::{digest, new_id, new_secret};
use super::scope::{clean_name, Scoped};
use super::tokens::TokenInfo;
use super::{now_ms, StoreError};
use crate::domain::history::Workspace;

/// The most workspaces one user may have.
pub const MAX_WORKSPACES: i64 = 100;

/// The most personal API tokens one user may have at once (revoked ones do not count).
pub const MAX_TOKENS: i64 = 50;

impl Scoped<'_> {
    pub async fn create_workspace(&self, name: &str) -> Result<Workspace, StoreError> {
        let name = clean_name(name)?;
        let id = new_id();
        let mut tx = self.lock_user().await?;
        let made = sqlx::query(
            "INSERT INTO workspaces (id, user_id, name, created_at) SELECT $1, $2, $3, $4 \
             WHERE (SELECT COUNT(*) FROM workspaces WHERE user_id = $2) < $5",
        )
        .bind(&id)
        .bind(self.user_id())
        .bind(&name)
        .bind(now_ms())
        .bind(MAX_WORKSPACES)
        .execute(&mut *tx)
        .await?;
        if made.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!(
                "you have {MAX_WORKSPACES} workspaces, the most one user may have"
            )));
        }
        tx.commit().await?;
        Ok(Workspace { id, name })
    }

    /// A new personal API token; its secret is returned once and stored only as a digest.
    pub async fn create_token(&self, name: &str) -> Result<(TokenInfo, String), StoreError> {
        let name = clean_name(name)?;
        let secret = new_secret("pt_");
        let id = new_id();
        let now = now_ms();
        let mut tx = self.lock_user().await?;
        let made = sqlx::query(
            "INSERT INTO api_tokens (id, user_id, name, token_hash, created_at) SELECT $1, $2, $3, $4, $5 \
             WHERE (SELECT COUNT(*) FROM api_tokens WHERE user_id = $2 AND revoked_at IS NULL) < $6",
        )
        .bind(&id)
        .bind(self.user_id())
        .bind(&name)
        .bind(digest(&secret))
        .bind(now)
        .bind(MAX_TOKENS)
        .execute(&mut *tx)
        .await?;
        if made.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!(
                "you have {MAX_TOKENS} API tokens, the most one user may have: revoke one first"
            )));
        }
        tx.commit().await?;
        Ok((
            TokenInfo {
                id,
                name,
                created_at: now,
                last_used_at: None,
            },
            secret,
        ))
    }

    /// A transaction holding the user's row locked (a row lock on PostgreSQL, the database's
    /// write lock on SQLite) until it ends.
    async fn lock_user(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("UPDATE users SET is_admin = is_admin WHERE id = $1")
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
        Ok(tx)
    }
}
