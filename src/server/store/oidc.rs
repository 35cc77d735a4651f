//! Single sign-on's rows: the sign-ins on their way through the identity provider, and the
//! link from an `(issuer, subject)` to the user it became. Like [`super::identity`], these are
//! how a user is found, so they are not scoped to one.

use super::identity::{Identity, Rank, User};
use super::ids::digest;
use super::{now_ms, Store, StoreError};

/// How long a sign-in may spend at the identity provider.
pub const LOGIN_TTL_MS: i64 = 10 * 60 * 1000;

/// The most sign-ins kept on their way at once: past it, a new one waits (anyone may start
/// one, so their rows must not grow without bound).
pub const MAX_PENDING_LOGINS: i64 = 10_000;

/// A sign-in sent to the provider, kept until it comes back (once).
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct PendingLogin {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    pub return_to: String,
}

/// Who the provider signed in, as the rules decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Person {
    pub issuer: String,
    pub subject: String,
    /// The name a new user gets (made unique here).
    pub name: String,
    /// A verified e-mail address that may take over the password user of that name.
    pub link_email: Option<String>,
    /// `Some`: admin exactly then; `None`: the first user is.
    pub admin: Option<bool>,
}

/// What a sign-in came to.
#[derive(Debug, PartialEq, Eq)]
pub enum SignedIn {
    /// The user, new or known.
    User(Identity),
    /// Refused by the groups: the user it would have been (if any) lost every session.
    Refused,
}

impl Store {
    /// Keeps a sign-in on its way, under the browser's one-time cookie; forgets old ones.
    /// `Ok(false)` when [`MAX_PENDING_LOGINS`] are on their way already.
    pub async fn save_oidc_login(
        &self,
        browser: &str,
        login: &PendingLogin,
    ) -> Result<bool, StoreError> {
        let now = now_ms();
        sqlx::query("DELETE FROM oidc_logins WHERE created_at < $1")
            .bind(now - LOGIN_TTL_MS)
            .execute(self.pool())
            .await?;
        let pending: i64 = sqlx::query_scalar("SELECT COUNT(*) AS n FROM oidc_logins")
            .fetch_one(self.pool())
            .await?;
        if pending >= MAX_PENDING_LOGINS {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO oidc_logins (browser_hash, state, nonce, verifier, return_to, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(digest(browser))
        .bind(&login.state)
        .bind(&login.nonce)
        .bind(&login.verifier)
        .bind(&login.return_to)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(true)
    }

    /// Takes the sign-in kept under the browser's cookie: once, and only while it is fresh.
    pub async fn take_oidc_login(&self, browser: &str) -> Result<Option<PendingLogin>, StoreError> {
        let hash = digest(browser);
        let mut tx = self.begin_write().await?;
        let row: Option<(PendingLogin, i64)> = sqlx::query_as::<_, PendingRow>(
            "SELECT state, nonce, verifier, return_to, created_at FROM oidc_logins WHERE browser_hash = $1",
        )
        .bind(&hash)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| (r.login, r.created_at));
        sqlx::query("DELETE FROM oidc_logins WHERE browser_hash = $1")
            .bind(&hash)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(row
            .filter(|(_, at)| *at >= now_ms() - LOGIN_TTL_MS)
            .map(|(login, _)| login))
    }

    /// The user the provider's person is: found by `(issuer, subject)` only, their admin flag
    /// brought up to date; else linked to the password user named by a verified e-mail (when
    /// allowed); else made, under a name no one has. `allowed: false` refuses them and ends
    /// every session and token of the user they are.
    pub async fn oidc_sign_in(
        &self,
        person: &Person,
        allowed: bool,
    ) -> Result<SignedIn, StoreError> {
        let known = self.oidc_user(&person.issuer, &person.subject).await?;
        if !allowed {
            if let Some(user) = known {
                self.end_everything_of(&user.id).await?;
            }
            return Ok(SignedIn::Refused);
        }
        let now = now_ms();
        if let Some(mut user) = known {
            let mut tx = self.begin_write().await?;
            if let Some(admin) = person.admin {
                sqlx::query("UPDATE users SET is_admin = $1 WHERE id = $2")
                    .bind(admin as i64)
                    .bind(&user.id)
                    .execute(&mut *tx)
                    .await?;
                user.is_admin = admin;
            }
            sqlx::query(
                "UPDATE oidc_identities SET signed_in_at = $1 WHERE issuer = $2 AND subject = $3",
            )
            .bind(now)
            .bind(&person.issuer)
            .bind(&person.subject)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            return Ok(SignedIn::User(Store::identity_of(user)));
        }
        let linked = match &person.link_email {
            Some(email) => self.unlinked_password_user(email).await?,
            None => None,
        };
        let user = match linked {
            Some(user) => user,
            None => {
                self.user_under_free_name(&person.name, person.admin)
                    .await?
            }
        };
        let inserted = sqlx::query(
            "INSERT INTO oidc_identities (issuer, subject, user_id, created_at, signed_in_at) \
             VALUES ($1, $2, $3, $4, $4) ON CONFLICT (issuer, subject) DO NOTHING",
        )
        .bind(&person.issuer)
        .bind(&person.subject)
        .bind(&user.id)
        .bind(now)
        .execute(self.pool())
        .await?
        .rows_affected();
        if inserted == 0 {
            // The same person signed in at the same moment from elsewhere: theirs stands.
            return match self.oidc_user(&person.issuer, &person.subject).await? {
                Some(user) => Ok(SignedIn::User(Store::identity_of(user))),
                None => Err(StoreError::NotFound),
            };
        }
        let mut user = user;
        if let Some(admin) = person.admin {
            if admin != user.is_admin {
                sqlx::query("UPDATE users SET is_admin = $1 WHERE id = $2")
                    .bind(admin as i64)
                    .bind(&user.id)
                    .execute(self.pool())
                    .await?;
                user.is_admin = admin;
            }
        }
        Ok(SignedIn::User(Store::identity_of(user)))
    }

    async fn oidc_user(&self, issuer: &str, subject: &str) -> Result<Option<User>, StoreError> {
        let row: Option<(String, String, i64)> = sqlx::query_as(
            "SELECT u.id, u.name, u.is_admin FROM oidc_identities o JOIN users u ON u.id = o.user_id \
             WHERE o.issuer = $1 AND o.subject = $2",
        )
        .bind(issuer)
        .bind(subject)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(user_of))
    }

    /// The password user called exactly `email` (in any case) no provider has claimed yet.
    async fn unlinked_password_user(&self, email: &str) -> Result<Option<User>, StoreError> {
        let row: Option<(String, String, i64)> = sqlx::query_as(
            "SELECT id, name, is_admin FROM users WHERE LOWER(name) = LOWER($1) \
             AND password_hash IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM oidc_identities o WHERE o.user_id = users.id)",
        )
        .bind(email.trim())
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(user_of))
    }

    /// A new user called `wanted`, or `wanted-2`, `wanted-3`… when the name is taken: a name
    /// never joins a person to someone else's account.
    async fn user_under_free_name(
        &self,
        wanted: &str,
        admin: Option<bool>,
    ) -> Result<User, StoreError> {
        let rank = match admin {
            Some(true) => Rank::Admin,
            Some(false) => Rank::Member,
            None => Rank::AdminIfFirst,
        };
        let base: String = wanted
            .chars()
            .take(super::identity::MAX_NAME_CHARS - 4)
            .collect();
        for n in 1..=50u32 {
            let name = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            match self.create_user(&name, None, rank).await {
                Ok(user) => return Ok(user),
                Err(StoreError::Conflict(_)) => continue,
                Err(e) => return Err(e),
            }
        }
        Err(StoreError::Conflict(format!(
            "no free user name like {base:?}"
        )))
    }

    /// Ends every session and revokes every token of a user (removed from the provider's
    /// allowed groups).
    async fn end_everything_of(&self, user_id: &str) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        for table in ["sessions", "api_tokens"] {
            sqlx::query(&format!(
                "UPDATE {table} SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL"
            ))
            .bind(now_ms())
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Keeps the ID token a session was opened with, for the provider's sign-out.
    pub async fn keep_id_token(&self, session: &str, id_token: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE sessions SET id_token = $1 WHERE token_hash = $2")
            .bind(id_token)
            .bind(digest(session))
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The ID token of an open session, if it was opened by the provider.
    pub async fn session_id_token(&self, session: &str) -> Result<Option<String>, StoreError> {
        let token: Option<Option<String>> = sqlx::query_scalar(
            "SELECT id_token FROM sessions WHERE token_hash = $1 AND revoked_at IS NULL",
        )
        .bind(digest(session))
        .fetch_optional(self.pool())
        .await?;
        Ok(token.flatten())
    }
}

fn user_of((id, name, admin): (String, String, i64)) -> User {
    User {
        id,
        name,
        is_admin: admin != 0,
    }
}

#[derive(sqlx::FromRow)]
struct PendingRow {
    #[sqlx(flatten)]
    login: PendingLogin,
    created_at: i64,
}
