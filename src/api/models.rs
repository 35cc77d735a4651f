//! The models on offer: `models/list` for the picker.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::ModelList;

/// The models the picker offers, with each one's reasoning controls. Never waits on the
/// upstream: the list was fetched in the background (a note says when it is incomplete).
#[server(
    prefix = "/api",
    endpoint = "models/list",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn list_models() -> Result<ModelList, ApiError> {
    let (state, _who) = crate::server::http::request::caller()?;
    Ok(state.models.list(&state.config))
}
