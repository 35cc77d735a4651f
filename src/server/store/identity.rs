//! Who is asking: users, sessions and API tokens, looked up by name or by the secret a client
//! presents. These are the only queries not scoped to a user, because they are how the user is
//! found; what they return ([`Identity`]) is the only way to a [`super::scope::Scoped`].

use super::ids::{digest, new_id, new_secret};
use super::{now_ms, Store, StoreError};

/// The longest user name, in characters: the store refuses longer ones, sign-in refuses them
/// before any limiter keeps them, and a proxy's header is held to it after normalization.
pub const MAX_NAME_CHARS: usize = 64;

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
    via_token: bool,
}

impl Identity {
    pub fn user(&self) -> &User {
        &self.user
    }

    /// True when the request presented a personal API token: a token may use the history and
    /// chat, but not make more tokens or end the user's sessions (a leaked token must not be
    /// able to keep itself alive or lock its owner out).
    pub fn via_token(&self) -> bool {
        self.via_token
    }

    pub(super) fn user_id(&self) -> &str {
        &self.user.id
    }
}

/// Whether a new user is an admin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    Member,
    Admin,
    /// An admin when no user existed before: decided in the transaction that creates the user
    /// (it claims the one row of `first_admin`), so of several first users at once only one is.
    AdminIfFirst,
}

/// The name of the one user of `PONDER_AUTH=none`.
pub const LOCAL_USER: &str = "local";

/// A user as the `users` table keeps them (`is_admin` is 0 or 1 in both engines).
#[derive(sqlx::FromRow)]
struct UserRow {
    id: String,
    name: String,
    is_admin: i64,
}

impl From<UserRow> for User {
    fn from(r: UserRow) -> Self {
        User {
            id: r.id,
            name: r.name,
            is_admin: r.is_admin != 0,
        }
    }
}

/// A user with one more column of the row they were found by.
#[derive(sqlx::FromRow)]
struct UserWith<T> {
    #[sqlx(flatten)]
    user: UserRow,
    extra: T,
}

impl Store {
    /// How many users exist (none: the first visit creates the admin).
    pub async fn user_count(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) AS n FROM users")
            .fetch_one(self.pool())
            .await?)
    }

    /// Creates a user with their first workspace.
    pub async fn create_user(
        &self,
        name: &str,
        password_hash: Option<&str>,
        rank: Rank,
    ) -> Result<User, StoreError> {
        self.insert_user(name, password_hash, rank, false)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Creates the first user, an admin, only if no user has been created yet (the setup of a
    /// fresh server); `None` when someone was first, even at the same moment.
    pub async fn create_first_admin(
        &self,
        name: &str,
        password_hash: &str,
    ) -> Result<Option<User>, StoreError> {
        self.insert_user(name, Some(password_hash), Rank::AdminIfFirst, true)
            .await
    }

    async fn insert_user(
        &self,
        name: &str,
        password_hash: Option<&str>,
        rank: Rank,
        only_first: bool,
    ) -> Result<Option<User>, StoreError> {
        let name = name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(StoreError::Conflict(
                "a user name is 1 to 64 characters, with no control characters".into(),
            ));
        }
        let id = new_id();
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let first = sqlx::query(
            "INSERT INTO first_admin (id, user_id, claimed_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&id)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if only_first && !first {
            return Ok(None);
        }
        let is_admin = match rank {
            Rank::Member => false,
            Rank::Admin => true,
            Rank::AdminIfFirst => first,
        };
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
        Ok(Some(User {
            id,
            name: name.to_string(),
            is_admin,
        }))
    }

    /// The user called `name`, with their password hash.
    pub async fn user_by_name(
        &self,
        name: &str,
    ) -> Result<Option<(User, Option<String>)>, StoreError> {
        let row: Option<UserWith<Option<String>>> = sqlx::query_as(
            "SELECT id, name, is_admin, password_hash AS extra FROM users WHERE name = $1",
        )
        .bind(name.trim())
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|r| (r.user.into(), r.extra)))
    }

    /// The identity of the user called `name`, created on first sight (the local user, or a
    /// name a trusted proxy vouches for).
    pub async fn identity_for_name(
        &self,
        name: &str,
        admin_if_first: bool,
    ) -> Result<Identity, StoreError> {
        if let Some((user, _)) = self.user_by_name(name).await? {
            return Ok(Store::identity_of(user));
        }
        let rank = if admin_if_first {
            Rank::AdminIfFirst
        } else {
            Rank::Member
        };
        match self.create_user(name, None, rank).await {
            Ok(user) => Ok(Store::identity_of(user)),
            // Another request created it at the same moment.
            Err(StoreError::Conflict(_)) => self
                .user_by_name(name)
                .await?
                .map(|(user, _)| Store::identity_of(user))
                .ok_or(StoreError::NotFound),
            Err(e) => Err(e),
        }
    }

    /// Sets the password of the user called `name`, ends every session they have and revokes
    /// every API token they made (a reset from the shell, for a forgotten or stolen password:
    /// nothing made with the old one keeps working). False when no user has that name.
    pub async fn set_password(&self, name: &str, hash: &str) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
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
        sqlx::query(
            "UPDATE api_tokens SET revoked_at = $1 WHERE revoked_at IS NULL AND user_id = \
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
        Identity {
            user,
            via_token: false,
        }
    }

    /// Every user, for the admin.
    pub async fn list_users(&self) -> Result<Vec<User>, StoreError> {
        let rows: Vec<UserRow> =
            sqlx::query_as("SELECT id, name, is_admin FROM users ORDER BY name")
                .fetch_all(self.pool())
                .await?;
        Ok(rows.into_iter().map(User::from).collect())
    }

    /// Removes a user and everything they own: sessions, tokens, workspaces, conversations with
    /// their messages, versions and thinking, and their search entries.
    pub async fn delete_user(&self, admin: &Identity, user_id: &str) -> Result<(), StoreError> {
        if !admin.user.is_admin {
            return Err(StoreError::NotFound);
        }
        let mut tx = self.begin_write().await?;
        super::index::unindex(
            &mut tx,
            self.backend(),
            "user_id = $1",
            &[super::index::Arg::Text(user_id)],
        )
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
        let row: Option<UserWith<String>> = sqlx::query_as(
            "SELECT u.id, u.name, u.is_admin, s.identity AS extra FROM sessions s JOIN users u ON u.id = s.user_id \
             WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2",
        )
        .bind(digest(secret))
        .bind(now_ms())
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|r| (Store::identity_of(r.user.into()), r.extra)))
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
        let row: Option<UserRow> = sqlx::query_as(
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
            user: row.into(),
            via_token: true,
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
