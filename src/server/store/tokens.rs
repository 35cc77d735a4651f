//! A user's personal API tokens and sessions, as the user manages them.

use super::scope::{found, Scoped};
use super::{now_ms, StoreError};

/// A personal API token as listed (its secret is shown only once, when made).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, sqlx::FromRow)]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

impl Scoped<'_> {
    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        let rows: Vec<TokenInfo> = sqlx::query_as(
            "SELECT id, name, created_at, last_used_at FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at",
        )
        .bind(self.user_id())
        .fetch_all(self.pool())
        .await?;
        Ok(rows)
    }

    pub async fn revoke_token(&self, id: &str) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL")
            .bind(now_ms())
            .bind(id)
            .bind(self.user_id())
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }

    /// Ends every session of the user, on every device, and revokes every API token they made:
    /// signing out everywhere is what one does after losing a device or a secret, and a token
    /// is as good as a session to whoever holds it.
    pub async fn sign_out_everywhere(&self) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        for table in ["sessions", "api_tokens"] {
            sqlx::query(&format!(
                "UPDATE {table} SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL"
            ))
            .bind(now_ms())
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
