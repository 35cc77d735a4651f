//! Comparisons over the API: keep one answer of a comparison, rate an answer, and the reader's
//! record per model over their comparisons. A comparison itself is `POST /api/chat` with
//! `compare: true`: the first asks, the others answer the same message again with their model.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::compare::ModelRecord;
use crate::domain::history::ConversationSummary;

/// Keeps answer `version` of the comparison answering message `id`: it becomes the message's
/// answer and the comparison's pick; the other answers stay as versions. `409` for an answer
/// no comparison started.
#[server(
    prefix = "/api",
    endpoint = "compare/pick",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn pick_answer(id: String, version: usize) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .pick_version(&id, version)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// The reader's thumbs on answer `version` of message `id`: `1` up, `-1` down, `0` none.
#[server(
    prefix = "/api",
    endpoint = "versions/rate",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn rate_answer(id: String, version: usize, rating: i8) -> Result<(), ApiError> {
    use crate::i18n::errors::Said;
    if !(-1..=1).contains(&rating) {
        return Err(
            crate::domain::Failure::of(crate::domain::ErrorCode::BadRequest, false)
                .with("detail", "rating is 1, -1 or 0")
                .said()
                .into(),
        );
    }
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .rate_version(&id, version, rating)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Each model's record over the reader's comparisons: comparisons, wins, thumbs, median
/// thinking time and reasoning tokens; most wins first.
#[server(
    prefix = "/api",
    endpoint = "compare/record",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn compare_record() -> Result<Vec<ModelRecord>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    let answers = state
        .store
        .scoped(&who)
        .compared_answers()
        .await
        .map_err(crate::server::http::request::store_error)?;
    Ok(crate::domain::compare::records(&answers))
}

/// Continues with every answer of the comparison answering message `message` of `conversation`:
/// each becomes a conversation of its own (a branch up to that message, showing that answer,
/// set to its model), listed in the answers' order. `409` for a message no comparison answered.
#[server(
    prefix = "/api",
    endpoint = "compare/continue",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn continue_all(
    conversation: String,
    message: String,
) -> Result<Vec<ConversationSummary>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .continue_comparison(&conversation, &message)
        .await
        .map_err(crate::server::http::request::store_error)?)
}
