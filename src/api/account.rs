//! Accounts over the API: who is signed in, setting up the first admin, signing in and out,
//! the admin's users, and personal API tokens. Each body is a few lines over the server's
//! accounts and store; every error is an [`ApiError`] with its status.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::account::{Account, ApiToken, Me, NewToken};

/// Who is signed in, and how this server signs people in.
#[server(
    prefix = "/api",
    endpoint = "me",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn who_am_i() -> Result<Me, ApiError> {
    use crate::server::auth::Caller;
    let state = crate::server::http::request::app_state()
        .ok_or_else(|| ApiError::new("the server is not set up", false))?;
    let account = match crate::server::http::request::page_caller() {
        Some(Caller::Known(who)) => Some(crate::server::accounts::account(who.user())),
        Some(Caller::Refused(failure)) => return Err(failure.into()),
        _ => None,
    };
    let needs_setup = state.config.auth.passwords()
        && state
            .store
            .user_count()
            .await
            .map_err(crate::server::http::request::store_error)?
            == 0;
    Ok(Me {
        account,
        auth: state.config.auth.name().into(),
        provider: state.config.auth.oidc().map(|o| o.name.clone()),
        passwords: state.config.auth.passwords(),
        needs_setup,
        history: match state.config.history {
            crate::server::config::HistoryMode::Server => "server".into(),
            crate::server::config::HistoryMode::Browser => "browser".into(),
        },
        sharing: state.config.sharing.name().into(),
    })
}

/// Creates the first admin (only while no user exists) and signs them in.
#[server(
    prefix = "/api",
    endpoint = "auth/setup",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn set_up(name: String, password: String) -> Result<Account, ApiError> {
    let state = crate::server::http::request::app_state()
        .ok_or_else(|| ApiError::new("the server is not set up", false))?;
    if !state.config.auth.passwords() {
        return Err(crate::server::accounts::refused(crate::domain::ErrorCode::NoAccounts).into());
    }
    let who = crate::server::accounts::set_up(&state.store, &name, &password)
        .await
        .map_err(|e| ApiError::from(crate::server::accounts::failure(e)))?;
    crate::server::accounts::start_session(&state, &who).await?;
    Ok(crate::server::accounts::account(who.user()))
}

/// Signs in with a name and password; sets the session cookie.
#[server(
    prefix = "/api",
    endpoint = "auth/sign-in",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn sign_in(name: String, password: String) -> Result<Account, ApiError> {
    let state = crate::server::http::request::app_state()
        .ok_or_else(|| ApiError::new("the server is not set up", false))?;
    if !state.config.auth.passwords() {
        return Err(crate::server::accounts::refused(crate::domain::ErrorCode::NoAccounts).into());
    }
    let client = crate::server::http::request::client_ip();
    let who =
        crate::server::accounts::sign_in(&state.store, &state.sign_in, client, &name, &password)
            .await
            .map_err(|e| ApiError::from(crate::server::accounts::failure(e)))?;
    crate::server::accounts::start_session(&state, &who).await?;
    Ok(crate::server::accounts::account(who.user()))
}

/// Ends this session. With single sign-on, the identity provider's sign-out page (returning to
/// Ponder) when it has one: the page goes there next, so the provider's session ends too.
#[server(
    prefix = "/api",
    endpoint = "auth/sign-out",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn sign_out() -> Result<Option<String>, ApiError> {
    let state = crate::server::http::request::app_state()
        .ok_or_else(|| ApiError::new("the server is not set up", false))?;
    let mut then = None;
    if let Some(secret) = crate::server::http::request::session_secret() {
        if let Some(sso) = &state.sso {
            let hint = state
                .store
                .session_id_token(&secret)
                .await
                .map_err(crate::server::http::request::store_error)?;
            if let Some(hint) = hint {
                then = sso.sign_out_url(&hint).await;
            }
        }
        state
            .store
            .close_session(&secret)
            .await
            .map_err(crate::server::http::request::store_error)?;
    }
    crate::server::accounts::clear_cookie(&state);
    Ok(then)
}

/// Ends every session of the signed-in user, on every device, and revokes every API token they
/// made. Refused (403) to a request signed with a token: a token cannot lock its owner out.
#[server(
    prefix = "/api",
    endpoint = "auth/sign-out-everywhere",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn sign_out_everywhere() -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    crate::server::accounts::not_by_token(&who)?;
    state
        .store
        .scoped(&who)
        .sign_out_everywhere()
        .await
        .map_err(crate::server::http::request::store_error)?;
    crate::server::accounts::clear_cookie(&state);
    Ok(())
}

/// Every user (admins only).
#[server(
    prefix = "/api",
    endpoint = "users/list",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn list_users() -> Result<Vec<Account>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    if !who.user().is_admin {
        return Err(crate::server::accounts::refused(crate::domain::ErrorCode::AdminOnly).into());
    }
    let users = state
        .store
        .list_users()
        .await
        .map_err(crate::server::http::request::store_error)?;
    Ok(users.iter().map(crate::server::accounts::account).collect())
}

/// Adds a user with a password (admins only).
#[server(
    prefix = "/api",
    endpoint = "users/add",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn add_user(name: String, password: String, is_admin: bool) -> Result<Account, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    let user = crate::server::accounts::add_user(&state.store, &who, &name, &password, is_admin)
        .await
        .map_err(|e| ApiError::from(crate::server::accounts::failure(e)))?;
    Ok(crate::server::accounts::account(&user))
}

/// Removes a user and everything they own (admins only; not oneself).
#[server(
    prefix = "/api",
    endpoint = "users/remove",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn remove_user(id: String) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    if who.user().id == id {
        return Err(
            crate::server::accounts::refused(crate::domain::ErrorCode::CannotRemoveSelf).into(),
        );
    }
    state
        .store
        .delete_user(&who, &id)
        .await
        .map_err(|e| crate::server::http::request::store_error(e).into())
}

/// The signed-in user's API tokens.
#[server(
    prefix = "/api",
    endpoint = "tokens/list",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn list_tokens() -> Result<Vec<ApiToken>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    let tokens = state
        .store
        .scoped(&who)
        .tokens()
        .await
        .map_err(crate::server::http::request::store_error)?;
    Ok(tokens
        .into_iter()
        .map(|t| ApiToken {
            id: t.id,
            name: t.name,
            created_at: t.created_at,
            last_used_at: t.last_used_at,
        })
        .collect())
}

/// A new API token; its secret is in the answer and never shown again. Refused (403) to a
/// request signed with a token, so a leaked token cannot mint more, and past the limit of
/// tokens one user may have (409).
#[server(
    prefix = "/api",
    endpoint = "tokens/create",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn create_token(name: String) -> Result<NewToken, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    crate::server::accounts::not_by_token(&who)?;
    let (t, secret) = state
        .store
        .scoped(&who)
        .create_token(&name)
        .await
        .map_err(crate::server::http::request::store_error)?;
    Ok(NewToken {
        token: ApiToken {
            id: t.id,
            name: t.name,
            created_at: t.created_at,
            last_used_at: t.last_used_at,
        },
        secret,
    })
}

/// Revokes one of the signed-in user's tokens.
#[server(
    prefix = "/api",
    endpoint = "tokens/revoke",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn revoke_token(id: String) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    state
        .store
        .scoped(&who)
        .revoke_token(&id)
        .await
        .map_err(|e| crate::server::http::request::store_error(e).into())
}
