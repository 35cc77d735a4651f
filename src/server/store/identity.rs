//! Who is asking: users, sessions and API tokens, looked up by name or by the secret a client
//! presents. These are the only queries not scoped to a user, because they are how the user is
//! found; what they return ([`Identity`]) is the only way to a [`super::scope::Scoped`].

use sqlx::Row;

use super::ids::{digest, new_id, new_secret};
use super::{now_ms, Store, StoreError};

/// A user as the rest of the server sees it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct User {
    pub id: String,
    pub name: String,
    pub is_admin: bool,
}

/// A signed-in user: made only here, from a session, a token, a trusted header or the local
/// mode, and required to reach anything the user owns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    user: User,
}

impl Identity {
    pub fn user(&self) -> &User {
        &self.user
    }

    pub(super) fn user_id(&self) -> &str {
        &self.user.id
    }
}

/// The name of the one user of `PONDER_AUTH=none`.
pub const LOCAL_USER: &str = "local";

fn user_from(row: &sqlx::any::AnyRow) -> Result<User, sqlx::Error> {
    Ok(User {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        is_admin: row.try_get::<i64, _>("is_admin")? != 0,
    })
}

impl Store {
    /// How many users exist (none: the first visit creates the admin).
    pub async fn user_count(&self) -> Result<i64, StoreError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM users")
            .fetch_one(self.pool())
            .await?;
        Ok(row.try_get("n")?)
    }

    /// Creates a user with their first workspace.
    pub async fn create_user(
        &self,
        name: &str,
        password_hash: Option<&str>,
        is_admin: bool,
    ) -> Result<User, StoreError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
            return Err(StoreError::Conflict(
                "a user name is 1 to 64 characters, with no control characters".into(),
            ));
        }
        let id = new_id();
        let now = now_ms();
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "INSERT INTO users (id, name, password_hash, is_admin, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&id)
        .bind(name)
        .bind(password_hash)
        .bind(is_admin as i64)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(|e| match StoreError::from(e) {
            StoreError::Conflict(_) => StoreError::Conflict(format!("the name {name:?} is taken")),
            other => other,
        })?;
        sqlx::query(
            "INSERT INTO workspaces (id, user_id, name, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(new_id())
        .bind(&id)
        .bind(crate::domain::history::FIRST_WORKSPACE)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(User {
            id,
            name: name.to_string(),
            is_admin,
        })
    }

    /// The user called `name`, with their password hash.
    pub async fn user_by_name(
        &self,
        name: &str,
    ) -> Result<Option<(User, Option<String>)>, StoreError> {
        let row =
            sqlx::query("SELECT id, name, is_admin, password_hash FROM users WHERE name = $1")
                .bind(name.trim())
                .fetch_optional(self.pool())
                .await?;
        match row {
            None => Ok(None),
            Some(row) => Ok(Some((user_from(&row)?, row.try_get("password_hash")?))),
        }
    }

    /// The identity of the user called `name`, created on first sight (the local user, or a
    /// name a trusted proxy vouches for).
    pub async fn identity_for_name(
        &self,
        name: &str,
        admin_if_first: bool,
    ) -> Result<Identity, StoreError> {
        if let Some((user, _)) = self.user_by_name(name).await? {
            return Ok(Identity { user });
        }
        let first = admin_if_first && self.user_count().await? == 0;
        match self.create_user(name, None, first).await {
            Ok(user) => Ok(Identity { user }),
            // Another request created it at the same moment.
            Err(StoreError::Conflict(_)) => self
                .user_by_name(name)
                .await?
                .map(|(user, _)| Identity { user })
                .ok_or(StoreError::NotFound),
            Err(e) => Err(e),
        }
    }

    /// Sets the password of the user called `name` and ends every session they have (a reset
    /// from the shell, for a forgotten password). False when no user has that name.
    pub async fn set_password(&self, name: &str, hash: &str) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let changed = sqlx::query("UPDATE users SET password_hash = $1 WHERE name = $2")
            .bind(hash)
            .bind(name.trim())
            .execute(&mut *tx)
            .await?;
        if changed.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE sessions SET revoked_at = $1 WHERE revoked_at IS NULL AND user_id = \
             (SELECT id FROM users WHERE name = $2)",
        )
        .bind(now_ms())
        .bind(name.trim())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The identity for a user whose password was just checked.
    pub(crate) fn identity_of(user: User) -> Identity {
        Identity { user }
    }

    /// Every user, for the admin.
    pub async fn list_users(&self) -> Result<Vec<User>, StoreError> {
        let rows = sqlx::query("SELECT id, name, is_admin FROM users ORDER BY name")
            .fetch_all(self.pool())
            .await?;
        Ok(rows.iter().map(user_from).collect::<Result<_, _>>()?)
    }

    /// Removes a user and everything they own: sessions, tokens, workspaces, conversations with
    /// their messages, versions and thinking, and their search entries.
    pub async fn delete_user(&self, admin: &Identity, user_id: &str) -> Result<(), StoreError> {
        if !admin.user.is_admin {
            return Err(StoreError::NotFound);
        }
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM search_index WHERE user_id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        let deleted = sqlx::query("DELETE FROM users WHERE id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }

    // ---------- sessions ----------

    /// Opens a session for `identity` and returns its secret (the cookie's value).
    pub async fn open_session(
        &self,
        identity: &Identity,
        remembered_as: &str,
        lifetime_ms: i64,
    ) -> Result<String, StoreError> {
        let secret = new_secret("ps_");
        let now = now_ms();
        sqlx::query(
            "INSERT INTO sessions (token_hash, user_id, identity, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(digest(&secret))
        .bind(identity.user_id())
        .bind(remembered_as)
        .bind(now)
        .bind(now + lifetime_ms)
        .execute(self.pool())
        .await?;
        Ok(secret)
    }

    /// The identity behind a session secret, if the session is open and unexpired, with the
    /// name it was opened for.
    pub async fn session_identity(
        &self,
        secret: &str,
    ) -> Result<Option<(Identity, String)>, StoreError> {
        let row = sqlx::query(
            "SELECT u.id, u.name, u.is_admin, s.identity FROM sessions s JOIN users u ON u.id = s.user_id \
             WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2",
        )
        .bind(digest(secret))
        .bind(now_ms())
        .fetch_optional(self.pool())
        .await?;
        match row {
            None => Ok(None),
            Some(row) => Ok(Some((
                Identity {
                    user: user_from(&row)?,
                },
                row.try_get("identity")?,
            ))),
        }
    }

    /// Ends one session.
    pub async fn close_session(&self, secret: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE sessions SET revoked_at = $1 WHERE token_hash = $2")
            .bind(now_ms())
            .bind(digest(secret))
            .execute(self.pool())
            .await?;
        Ok(())
    }

    // ---------- API tokens ----------

    /// The identity behind a personal API token, if it is not revoked; notes its use.
    pub async fn token_identity(&self, secret: &str) -> Result<Option<Identity>, StoreError> {
        let hash = digest(secret);
        let row = sqlx::query(
            "SELECT u.id, u.name, u.is_admin FROM api_tokens t JOIN users u ON u.id = t.user_id \
             WHERE t.token_hash = $1 AND t.revoked_at IS NULL",
        )
        .bind(&hash)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        sqlx::query("UPDATE api_tokens SET last_used_at = $1 WHERE token_hash = $2")
            .bind(now_ms())
            .bind(&hash)
            .execute(self.pool())
            .await?;
        Ok(Some(Identity {
            user: user_from(&row)?,
        }))
    }

    /// Removes sessions that ended more than a day ago.
    pub async fn sweep_sessions(&self) -> Result<u64, StoreError> {
        let cutoff = now_ms() - 24 * 3600 * 1000;
        let done = sqlx::query("DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1")
            .bind(cutoff)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected())
    }
}
