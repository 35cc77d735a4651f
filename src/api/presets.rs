//! Presets over the API: the reader's own and the shared ones, saving and deleting them. A
//! shared preset is made, changed and deleted by an administrator only.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::preset::Preset;

/// The shared presets, then the reader's own; `editable` says which the reader may change.
#[server(
    prefix = "/api",
    endpoint = "presets/list",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn list_presets() -> Result<Vec<Preset>, ApiError> {
    use crate::server::http::request::{caller, store_error};
    let (state, who) = caller()?;
    let admin = who.user().is_admin;
    Ok(state
        .store
        .scoped(&who)
        .presets(admin)
        .await
        .map_err(store_error)?)
}

/// Keeps `preset`: a new one without an `id`, else the one it names. `shared` (set when it is
/// made) is for an administrator: 403 `admin_only` for anyone else.
#[server(
    prefix = "/api",
    endpoint = "presets/save",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn save_preset(preset: Preset) -> Result<Preset, ApiError> {
    use crate::domain::{ErrorCode, Failure};
    use crate::server::http::request::{caller, store_error};
    let preset = preset.checked().map_err(|why| {
        ApiError::from(Failure::of(ErrorCode::BadRequest, false).with("detail", why))
    })?;
    let (state, who) = caller()?;
    let admin = who.user().is_admin;
    if preset.shared && preset.id.is_empty() && !admin {
        return Err(Failure::of(ErrorCode::AdminOnly, false)
            .with("detail", "shared presets are made by an administrator")
            .into());
    }
    Ok(state
        .store
        .scoped(&who)
        .save_preset(preset, admin)
        .await
        .map_err(store_error)?)
}

/// Deletes the reader's own preset, or (an administrator) a shared one; anything else is 404.
#[server(
    prefix = "/api",
    endpoint = "presets/delete",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn delete_preset(id: String) -> Result<(), ApiError> {
    use crate::server::http::request::{caller, store_error};
    let (state, who) = caller()?;
    let admin = who.user().is_admin;
    Ok(state
        .store
        .scoped(&who)
        .delete_preset(&id, admin)
        .await
        .map_err(store_error)?)
}
