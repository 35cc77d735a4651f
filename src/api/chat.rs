//! `POST /api/chat`: a Leptos server function that answers with the turn as server-sent events.
//! Its body hands over to the server's turn pipeline; the codecs are in [`super::codec`].

use bytes::Bytes;
use leptos::server;
use leptos::server_fn::{
    codec::{FromReq, IntoReq},
    error::{FromServerFnError, IntoAppError, ServerFnErrorErr},
    request::{ClientReq, Req},
    ContentType,
};

use super::codec::{ChatJson, EventStream, TurnStream};
use super::error::ApiError;
use crate::domain::ChatRequest;

impl<E, R> IntoReq<ChatJson, R, E> for Chat
where
    R: ClientReq<E>,
    E: FromServerFnError,
{
    fn into_req(self, path: &str, accepts: &str) -> Result<R, E> {
        let body = serde_json::to_vec(&self.request)
            .map_err(|e| ServerFnErrorErr::Serialization(e.to_string()).into_app_error())?;
        R::try_new_post_bytes(path, ChatJson::CONTENT_TYPE, accepts, Bytes::from(body))
    }
}

impl<R> FromReq<ChatJson, R, ApiError> for Chat
where
    R: Req<ApiError> + Send + 'static,
{
    async fn from_req(req: R) -> Result<Self, ApiError> {
        use crate::domain::message::{too_many_messages, MessageCount, MAX_MESSAGES};
        use crate::domain::{ErrorCode, Failure};
        let body = req.try_into_bytes().await?;
        // Read as the documented body, whose message list is bounded while it is parsed.
        let parsed: Result<crate::domain::ChatRequest, _> = serde_json::from_slice(&body);
        parsed.map(|request| Chat { request }).map_err(|e| {
            let detail = format!(
                "the body must be JSON like {{\"messages\":[{{\"role\":\"user\",\"content\":\"…\"}}]}}: {e}"
            );
            // A list over the limit stopped the parse: its length is counted, keeping nothing.
            let counted = serde_json::from_slice::<MessageCount>(&body).map(|c| c.messages);
            ApiError::from(match counted {
                Ok(count) if count > MAX_MESSAGES => too_many_messages(count),
                _ => Failure::of(ErrorCode::BadRequest, false).with("detail", detail),
            })
        })
    }
}

/// Streams one assistant turn: for the history in `messages` (stored nowhere, and ended when
/// its reader leaves), or, for a stored turn (`content` or `regenerate`), for the conversation
/// the server keeps, which it writes as the turn streams. A stored turn runs on the server
/// whether or not anyone watches: this response is its first viewer, and `turn/events` lets
/// any other (a reload, another tab or device) join it.
///
/// The response starts at once; everything that happens upstream, failures included, arrives
/// as events. Only a request that is malformed (400), unauthenticated (401) or about a
/// conversation the caller does not have (404) gets an HTTP error, with an [`ApiError`].
#[server(
    prefix = "/api",
    endpoint = "chat",
    input = ChatJson,
    output = EventStream,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn chat(request: ChatRequest) -> Result<TurnStream, ApiError> {
    use crate::server::{http::request as req, turn};
    let state = req::app_state()
        .ok_or_else(|| ApiError::new("the server is not set up to stream turns", false))?;
    if let Err(failure) = request.validate() {
        state.metrics.request_refused("invalid");
        return Err(failure.into());
    }
    // A replica cut off from the database refuses at once, before asking it who is calling.
    if state.relay.as_ref().is_some_and(|r| r.fenced()) {
        state.metrics.request_refused("fenced");
        return Err(req::database_unavailable().into());
    }
    // Every turn spends the operator's key: only someone signed in may start one.
    let (state, who) = req::caller()?;
    // A reader over their limit is refused before anything is written or sent upstream.
    let quotas = turn::ledger::check_quota(&state, &who).await?;
    if !request.is_stored() {
        let settings = request.settings();
        state.models.first_fetch().await;
        let mut options =
            state
                .models
                .resolve(&state.config, request.model.as_deref(), None, settings)?;
        // A temporary chat in a workspace takes the workspace's instructions as its chats do.
        let (personal, workspace) = match request.workspace.as_deref() {
            Some(id) if state.config.history == crate::server::config::HistoryMode::Server => {
                let levels = state
                    .store
                    .scoped(&who)
                    .instruction_levels(None, Some(id))
                    .await
                    .map_err(req::store_error)?;
                (levels.personal, levels.workspace)
            }
            _ => (state.personal.of(&state.store, &who).await, None),
        };
        options.instructions = crate::server::instructions::combined(
            &state.config,
            &options.model,
            personal,
            workspace,
            request
                .instructions
                .as_deref()
                .and_then(|t| crate::domain::instructions::checked(t).ok().flatten()),
        );
        let mut messages = request.messages;
        if messages.iter().any(|m| !m.inline.is_empty()) {
            turn::files::take_inline(&state.config, &mut messages).await?;
            turn::files::prepare(&state, &options.model, &mut messages).await?;
        }
        let control = state.turns.register(&who.user().id, None);
        let ticket = turn::ledger::Ticket {
            workspace: request.workspace.clone(),
            quotas,
            ..turn::ledger::Ticket::new(
                &control.0.id,
                &who,
                &messages,
                options.instructions.as_deref(),
            )
        };
        if let Some(relay) = &state.relay {
            // Recorded so that Answer now sent to another replica finds it.
            let noted = state
                .store
                .scoped(&who)
                .note_running_turn(&control.0.id, relay.replica(), None)
                .await;
            if let Err(e) = noted {
                tracing::warn!(error = %e, "a running turn could not be recorded; Answer now reaches it only on this replica");
            }
        }
        req::set_event_stream_headers();
        req::set_turn_header(&control.0.id);
        return Ok(TurnStream::new(turn::turn_stream(
            state,
            messages,
            options,
            Some(control),
            Some(ticket),
        )));
    }
    let began = crate::server::store::now_ms();
    let control = state
        .turns
        .register(&who.user().id, Some(turn::log::TurnLog::new(began)));
    let replica = state.relay.as_ref().map(|r| r.replica().to_string());
    let (history, options, first, persist) = turn::persist::begin(
        &state,
        who.clone(),
        &request,
        &control.0.id,
        replica.as_deref(),
    )
    .await?;
    req::set_event_stream_headers();
    req::set_turn_header(&control.0.id);
    let keep_alive = state.config.keep_alive;
    let ticket = turn::ledger::Ticket {
        quotas,
        ..turn::ledger::Ticket::new(
            &control.0.id,
            &who,
            &history,
            options.instructions.as_deref(),
        )
    };
    let log = turn::start_stored_turn(
        state,
        history,
        options,
        control,
        first,
        persist,
        Some(ticket),
    )
    .ok_or_else(|| ApiError::new("the turn could not be started", true))?;
    Ok(TurnStream::new(turn::log::follow(
        log,
        turn::log::Follow {
            after: 0,
            keep_alive,
            clock: false,
            grace_over: Box::pin(std::future::pending()),
        },
    )))
}
