//! The models on offer and the controls of a running turn: `models/list` for the picker, and
//! `turn/answer-now`, which ends a running turn's reasoning and has it answer at once.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::ModelList;

/// The models the picker offers, with each one's reasoning controls. Never waits on the
/// upstream: the list was fetched in the background (a note says when it is incomplete).
#[server(prefix = "/api", endpoint = "models/list", input = Json, output = Json)]
pub async fn list_models() -> Result<ModelList, ApiError> {
    let (state, _who) = crate::server::request::caller()?;
    Ok(state.models.list(&state.config))
}

/// "Answer now" for the running turn `turn` (the `X-Ponder-Turn` header of its response):
/// the reasoning ends where it is and the answer starts, in the same stream. 404 when no turn
/// of the caller's runs under that id.
#[server(prefix = "/api", endpoint = "turn/answer-now", input = Json, output = Json)]
pub async fn answer_now(turn: String) -> Result<(), ApiError> {
    use crate::server::turn::control::Command;
    let (state, who) = crate::server::request::caller()?;
    if state.turns.send(&who.user().id, &turn, Command::AnswerNow) {
        return Ok(());
    }
    // Another replica may run it: the database knows, and passes the command on.
    if state.turns.is_shared() {
        let forwarded = state
            .store
            .scoped(&who)
            .forward_answer_now(&turn)
            .await
            .map_err(crate::server::request::store_error)?;
        if forwarded {
            return Ok(());
        }
    }
    crate::server::request::set_status(http::StatusCode::NOT_FOUND);
    Err(ApiError::new(
        "no turn of yours is running under that id",
        false,
    ))
}
