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
use crate::domain::ChatMessage;

impl<E, R> IntoReq<ChatJson, R, E> for Chat
where
    R: ClientReq<E>,
    E: FromServerFnError,
{
    fn into_req(self, path: &str, accepts: &str) -> Result<R, E> {
        let body = serde_json::to_vec(&self)
            .map_err(|e| ServerFnErrorErr::Serialization(e.to_string()).into_app_error())?;
        R::try_new_post_bytes(path, ChatJson::CONTENT_TYPE, accepts, Bytes::from(body))
    }
}

impl<E, R> FromReq<ChatJson, R, E> for Chat
where
    R: Req<E> + Send + 'static,
    E: FromServerFnError,
{
    async fn from_req(req: R) -> Result<Self, E> {
        let body = req.try_into_bytes().await?;
        // Read as the documented body, whose message list is bounded while it is parsed.
        let parsed: Result<crate::domain::ChatRequest, _> = serde_json::from_slice(&body);
        parsed.map(|r| Chat { messages: r.messages }).map_err(|e| {
            bad_request();
            ServerFnErrorErr::Args(format!(
                "the body must be JSON like {{\"messages\":[{{\"role\":\"user\",\"content\":\"…\"}}]}}: {e}"
            ))
            .into_app_error()
        })
    }
}

fn bad_request() {
    #[cfg(feature = "ssr")]
    crate::server::request::set_status(http::StatusCode::BAD_REQUEST);
}

/// Streams one assistant turn for the conversation in `messages`.
///
/// The response starts at once; everything that happens upstream, failures included, arrives
/// as events. Only a request that is malformed gets an HTTP error (400, with an [`ApiError`]).
#[server(prefix = "/api", endpoint = "chat", input = ChatJson, output = EventStream)]
pub async fn chat(messages: Vec<ChatMessage>) -> Result<TurnStream, ApiError> {
    use crate::domain::ChatRequest;
    use crate::server::{request, turn};
    let Some(state) = request::app_state() else {
        return Err(ApiError::new(
            "the server is not set up to stream turns",
            false,
        ));
    };
    let chat = ChatRequest { messages };
    if let Err(message) = chat.validate() {
        state.metrics.request_refused("invalid");
        request::set_status(http::StatusCode::BAD_REQUEST);
        return Err(ApiError::new(message, false));
    }
    request::set_event_stream_headers();
    Ok(TurnStream::new(turn::turn_stream(state, chat.messages)))
}
