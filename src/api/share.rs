//! Shared links over the API: make one for a conversation, list, update and revoke them, and the
//! admin's list of every link. The shared page itself is not a server function: it is served
//! at `/s/<token>` by the server's HTTP edge.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::share::{ShareChoice, ShareLink};

/// A new link to the conversation as it is shown now; `url` (base path and `/s/<token>`) is in
/// this answer only.
#[server(
    prefix = "/api",
    endpoint = "shares/create",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn create_share(
    conversation: String,
    #[server(default)] choice: ShareChoice,
) -> Result<ShareLink, ApiError> {
    let (state, who) = sharing_caller()?;
    let (mut link, token) = state
        .store
        .scoped(&who)
        .share(&conversation, choice)
        .await
        .map_err(crate::server::http::request::store_error)?;
    dress(&state, &who, &link.id).await;
    link.url = Some(format!(
        "{}{}{token}",
        state.config.base_path,
        crate::domain::share::SHARE_PREFIX
    ));
    Ok(link)
}

/// The caller's links to a conversation (every link of theirs without one), newest first.
#[server(
    prefix = "/api",
    endpoint = "shares/list",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn list_shares(conversation: Option<String>) -> Result<Vec<ShareLink>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .shares(conversation.as_deref())
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Takes a link's snapshot again, with `choice`: its address stays and shows the conversation
/// as it is shown now.
#[server(
    prefix = "/api",
    endpoint = "shares/update",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn update_share(
    id: String,
    #[server(default)] choice: ShareChoice,
) -> Result<ShareLink, ApiError> {
    let (state, who) = sharing_caller()?;
    let link = state
        .store
        .scoped(&who)
        .update_share(&id, choice)
        .await
        .map_err(crate::server::http::request::store_error)?;
    dress(&state, &who, &link.id).await;
    Ok(link)
}

/// Revokes one of the caller's links for good.
#[server(
    prefix = "/api",
    endpoint = "shares/revoke",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn revoke_share(id: String) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .revoke_share(&id)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Every link on the server with its owner (admins only).
#[server(
    prefix = "/api",
    endpoint = "shares/all",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn all_shares() -> Result<Vec<ShareLink>, ApiError> {
    let (state, who) = admin()?;
    Ok(state
        .store
        .all_shares(&who)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Revokes anyone's link (admins only).
#[server(
    prefix = "/api",
    endpoint = "shares/revoke-any",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn revoke_any_share(id: String) -> Result<(), ApiError> {
    let (state, who) = admin()?;
    Ok(state
        .store
        .revoke_any_share(&who, &id)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Typesets the link's formulas and highlights its code, once, for every view of it. A link
/// whose dressing could not be made (the server busy) shows them as their source.
#[cfg(feature = "ssr")]
async fn dress(
    state: &crate::server::state::AppState,
    who: &crate::server::store::identity::Identity,
    id: &str,
) {
    let scope = state.store.scoped(who);
    let made = match scope.share_snapshot(id).await {
        Ok(shot) => crate::server::http::shared::dressing_of(shot, &who.user().id)
            .await
            .map_err(|f| f.message),
        Err(e) => Err(e.to_string()),
    };
    let kept = match made {
        Ok(dressing) => scope
            .set_share_dressing(id, &dressing)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    if let Err(e) = kept {
        tracing::warn!(error = %e, "a shared link's formulas and code stay as their source");
    }
}

/// The caller, where links can be made (403 `sharing_off` where they cannot).
#[cfg(feature = "ssr")]
fn sharing_caller() -> Result<
    (
        std::sync::Arc<crate::server::state::AppState>,
        std::sync::Arc<crate::server::store::identity::Identity>,
    ),
    ApiError,
> {
    let (state, who) = crate::server::http::request::caller()?;
    if state.config.sharing == crate::domain::share::Sharing::Off {
        use crate::i18n::errors::Said;
        return Err(
            crate::domain::Failure::of(crate::domain::ErrorCode::SharingOff, false)
                .said()
                .into(),
        );
    }
    Ok((state, who))
}

#[cfg(feature = "ssr")]
fn admin() -> Result<
    (
        std::sync::Arc<crate::server::state::AppState>,
        std::sync::Arc<crate::server::store::identity::Identity>,
    ),
    ApiError,
> {
    let (state, who) = crate::server::http::request::caller()?;
    if !who.user().is_admin {
        return Err(crate::server::accounts::refused(crate::domain::ErrorCode::AdminOnly).into());
    }
    Ok((state, who))
}
