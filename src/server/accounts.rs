//! Built-in accounts (`PONDER_AUTH=password`): argon2id password hashes, sign-in limited per
//! client and per name, the first admin made by the first visit (or `ponder user add`).

use std::net::IpAddr;
use std::time::Instant;

use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::Argon2;

use std::sync::Arc;

use super::http::request;
use super::rate_limit::{client_key, NameKey, SignInLimits};
use super::state::AppState;
use super::store::identity::{Identity, Rank, User, MAX_NAME_CHARS};
use super::store::{Store, StoreError};
use crate::domain::account::Account;
use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;

/// Shortest password accepted.
pub const MIN_PASSWORD: usize = 8;

/// Why a sign-in or an account change was refused, as the reader is told.
#[derive(Debug, PartialEq, Eq)]
pub enum AccountError {
    /// Wrong name or password (which one is not said).
    WrongCredentials,
    /// Too many attempts: try again after this many seconds.
    TooManyAttempts(u64),
    /// The request is not allowed (not an admin, setup already done): what, and why.
    NotAllowed(ErrorCode),
    /// A password or name that cannot be used.
    Invalid(Failure),
    Store(StoreErrorKind),
}

/// A store failure inside an account operation.
#[derive(Debug, PartialEq, Eq)]
pub enum StoreErrorKind {
    NotFound,
    Conflict(String),
    Unavailable,
}

impl From<StoreError> for AccountError {
    fn from(e: StoreError) -> Self {
        AccountError::Store(match e {
            StoreError::NotFound => StoreErrorKind::NotFound,
            StoreError::Conflict(why) => StoreErrorKind::Conflict(why),
            StoreError::Refused(failure) => StoreErrorKind::Conflict(failure.message),
            StoreError::Unavailable(detail) => {
                tracing::error!(error = %detail, "the history database failed");
                StoreErrorKind::Unavailable
            }
        })
    }
}

/// An argon2id hash of `password`, in the PHC string format.
pub fn hash_password(password: &str) -> Result<String, AccountError> {
    if password.chars().count() < MIN_PASSWORD {
        return Err(AccountError::Invalid(
            Failure::of(ErrorCode::PasswordTooShort, false)
                .with("min", MIN_PASSWORD)
                .said(),
        ));
    }
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| {
            AccountError::Invalid(Failure::new(
                format!("the password could not be hashed: {e}"),
                false,
            ))
        })
}

fn verify(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// A hash to check against when the name is unknown, so an unknown name costs as long as a
/// wrong password and does not tell which names exist.
fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash_password("decoy password, never valid").unwrap_or_default())
}

/// Checks a name and password, within the attempt limits.
pub async fn sign_in(
    store: &Store,
    limits: &SignInLimits,
    client: Option<IpAddr>,
    name: &str,
    password: &str,
) -> Result<Identity, AccountError> {
    if name.trim().chars().count() > MAX_NAME_CHARS {
        return Err(AccountError::Invalid(
            Failure::of(ErrorCode::BadRequest, false)
                .with(
                    "detail",
                    format!("a user name has at most {MAX_NAME_CHARS} characters"),
                )
                .said(),
        ));
    }
    let now = Instant::now();
    if let Some(ip) = client {
        if let Err(wait) = limits.by_client.take(client_key(ip), now) {
            return Err(AccountError::TooManyAttempts(wait.as_secs().max(1)));
        }
    }
    let from_client = NameKey::from_client(name, client);
    let in_good_standing = limits.failed_lately.is_untouched(&from_client, now);
    if let Err(wait) = limits.by_name_from_client.take(from_client, now) {
        return Err(AccountError::TooManyAttempts(wait.as_secs().max(1)));
    }
    let whole_name = NameKey::of(name);
    let under_ceiling = limits.by_name.take(whole_name, now);
    if let Err(wait) = under_ceiling {
        if !in_good_standing {
            return Err(AccountError::TooManyAttempts(wait.as_secs().max(1)));
        }
    }
    let found = store.user_by_name(name).await?;
    let (user, hash) = match found {
        Some((user, Some(hash))) => (Some(user), hash),
        _ => (None, decoy_hash().to_string()),
    };
    let password = password.to_string();
    let ok = tokio::task::spawn_blocking(move || verify(&password, &hash))
        .await
        .unwrap_or(false);
    match (user, ok) {
        (Some(user), true) => {
            // Only failed attempts count against the limits.
            if let Some(ip) = client {
                limits.by_client.refund(&client_key(ip));
            }
            limits.by_name_from_client.refund(&from_client);
            if under_ceiling.is_ok() {
                limits.by_name.refund(&whole_name);
            }
            Ok(Store::identity_of(user))
        }
        _ => {
            let _ = limits.failed_lately.take(from_client, Instant::now());
            Err(AccountError::WrongCredentials)
        }
    }
}

/// Creates the first admin, only while no user exists. The password is hashed first (it is
/// slow); whether this request is the first is then decided by the database, in the
/// transaction that creates the user, so setups at once make one admin.
pub async fn set_up(store: &Store, name: &str, password: &str) -> Result<Identity, AccountError> {
    let already = || AccountError::NotAllowed(ErrorCode::AlreadySetUp);
    if store.user_count().await? > 0 {
        return Err(already());
    }
    let hash = hash_password(password)?;
    match store.create_first_admin(name, &hash).await? {
        Some(user) => Ok(Store::identity_of(user)),
        None => Err(already()),
    }
}

/// An admin adds a user with a password.
pub async fn add_user(
    store: &Store,
    admin: &Identity,
    name: &str,
    password: &str,
    is_admin: bool,
) -> Result<User, AccountError> {
    if !admin.user().is_admin {
        return Err(AccountError::NotAllowed(ErrorCode::AdminOnly));
    }
    let hash = hash_password(password)?;
    let rank = if is_admin { Rank::Admin } else { Rank::Member };
    Ok(store.create_user(name, Some(&hash), rank).await?)
}

// ---------- over HTTP: what the account endpoints answer ----------

/// A user as clients see them.
pub fn account(user: &User) -> Account {
    Account {
        id: user.id.clone(),
        name: user.name.clone(),
        is_admin: user.is_admin,
    }
}

/// An account failure as the client is told it (its code decides the response's status).
pub fn failure(e: AccountError) -> Failure {
    match e {
        AccountError::WrongCredentials => Failure::of(ErrorCode::WrongCredentials, false).said(),
        AccountError::TooManyAttempts(secs) => Failure::of(ErrorCode::TooManyAttempts, true)
            .with("retry_after", secs)
            .said(),
        AccountError::NotAllowed(code) => Failure::of(code, false).said(),
        AccountError::Invalid(failure) => failure,
        AccountError::Store(StoreErrorKind::NotFound) => request::not_found(),
        AccountError::Store(StoreErrorKind::Conflict(why)) => request::conflict(&why),
        AccountError::Store(StoreErrorKind::Unavailable) => request::database_unavailable(),
    }
}

/// A refusal (403) for something the caller may not do: what (`code`), and why.
pub fn refused(code: ErrorCode) -> Failure {
    failure(AccountError::NotAllowed(code))
}

/// Refuses (403) what a request signed with a personal API token may not do: create tokens,
/// end the user's sessions, change their password. Those need the password (a session).
pub fn not_by_token(who: &Identity) -> Result<(), Failure> {
    if who.via_token() {
        return Err(refused(ErrorCode::PasswordRequired));
    }
    Ok(())
}

/// Opens a session for `who` and sets its cookie on the response.
pub async fn start_session(state: &Arc<AppState>, who: &Identity) -> Result<(), Failure> {
    let lifetime = state.config.session_lifetime;
    let secret = state
        .store
        .open_session(who, &who.user().name, lifetime.as_millis() as i64)
        .await
        .map_err(request::store_error)?;
    if let Some(cookie) = super::auth::session_cookie(
        &secret,
        &state.config.base_path,
        lifetime.as_secs(),
        request::is_https(),
    ) {
        request::set_cookie(cookie);
    }
    Ok(())
}

/// Clears the session cookie in the browser.
pub fn clear_cookie(state: &AppState) {
    if let Some(cookie) =
        super::auth::session_cookie("", &state.config.base_path, 0, request::is_https())
    {
        request::set_cookie(cookie);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_argon2id_and_verify_only_themselves() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(verify("correct horse", &hash));
        assert!(!verify("Correct horse", &hash));
        assert!(!verify("correct horse", "not a hash"));
        assert!(matches!(
            hash_password("short"),
            Err(AccountError::Invalid(Failure {
                code: ErrorCode::PasswordTooShort,
                ..
            }))
        ));
    }
}
