//! A running turn, from any request of its owner: `turn/events` joins it as a viewer (from the
//! start, or after the last event a viewer has), `turn/stop` ends it, `turn/answer-now` ends its
//! reasoning and has it answer at once. Another user's turn is not found, like a missing one.

use leptos::server;
use leptos::server_fn::codec::{GetUrl, Json};

use super::codec::{EventStream, TurnStream};
use super::error::ApiError;

/// The events of the caller's stored turn `turn` after sequence number `after` (or the
/// `Last-Event-ID` header, whichever is later; from the start when neither is given), then the
/// live tail until its last event. The response begins with a `clock` event (how long the turn
/// has been running); every other event carries its sequence number as the SSE `id:`. A turn
/// that ended is kept a minute for viewers that reconnect late; after that, or for another
/// user's turn, 404: the stored conversation holds the answer.
#[server(
    prefix = "/api",
    endpoint = "turn/events",
    input = GetUrl,
    output = EventStream,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn turn_events(turn: String, after: Option<u64>) -> Result<TurnStream, ApiError> {
    use crate::server::http::request as req;
    use crate::server::turn::log::{follow, Follow};
    let (state, who) = req::caller()?;
    let after = after.max(req::last_event_id()).unwrap_or(0);
    let log = match state.turns.log_for(&who.user().id, &turn) {
        Some(log) => Some(log),
        None => match &state.relay {
            Some(relay) => {
                let shared = state
                    .store
                    .scoped(&who)
                    .shared_turn(&turn)
                    .await
                    .map_err(req::store_error)?;
                match shared {
                    Some(shared) if !state.turns.runs_here(&turn) => Some(
                        relay
                            .mirror(&turn, shared.started_at)
                            .await
                            .map_err(req::store_error)?,
                    ),
                    _ => None,
                }
            }
            None => None,
        },
    };
    let Some(log) = log else {
        return Err(not_found());
    };
    req::set_event_stream_headers();
    req::set_turn_header(&turn);
    let shutdown = state.shutdown.clone();
    Ok(TurnStream::new(follow(
        log,
        Follow {
            after,
            keep_alive: state.config.keep_alive,
            clock: true,
            grace_over: Box::pin(async move { shutdown.grace_over().await }),
        },
    )))
}

/// Stops the caller's running turn `turn`: it ends at once with `done`, `finish_reason`
/// `"stopped"`, keeping what arrived, for every viewer; the upstream is closed. 404 when no turn
/// of the caller's runs under that id (it may have just ended).
#[server(
    prefix = "/api",
    endpoint = "turn/stop",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn stop_turn(turn: String) -> Result<(), ApiError> {
    command(turn, Command::Stop).await
}

/// "Answer now" for the running turn `turn` (the `started` event names it): the reasoning
/// ends where it is and the answer starts, in the same stream. 404 when no turn of the caller's
/// runs under that id.
#[server(
    prefix = "/api",
    endpoint = "turn/answer-now",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn answer_now(turn: String) -> Result<(), ApiError> {
    command(turn, Command::AnswerNow).await
}

#[cfg(feature = "ssr")]
use crate::server::turn::control::Command;

/// Delivers `command` to the caller's turn, here or, through the database, on the replica
/// that runs it.
#[cfg(feature = "ssr")]
async fn command(turn: String, command: Command) -> Result<(), ApiError> {
    use crate::server::http::request as req;
    let (state, who) = req::caller()?;
    if state.turns.send(&who.user().id, &turn, command) {
        return Ok(());
    }
    if state.turns.is_shared() {
        let forwarded = state
            .store
            .scoped(&who)
            .forward_command(&turn, command.name())
            .await
            .map_err(req::store_error)?;
        if forwarded {
            return Ok(());
        }
    }
    Err(not_found())
}

#[cfg(feature = "ssr")]
fn not_found() -> ApiError {
    crate::domain::Failure::of(crate::domain::ErrorCode::TurnNotFound, false).into()
}
