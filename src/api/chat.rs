//! `POST /api/chat`: a Leptos server function that answers with the turn as server-sent events.
//!
//! server_fn ships no SSE encoding and its text stream decodes each network chunk on its own,
//! so this module brings two small codecs: [`ChatJson`] (the documented JSON body, with a 400
//! for a body that does not parse) and [`EventStream`] (`text/event-stream` bytes that the
//! browser decodes with [`super::sse::TurnDecoder`]).

use bytes::Bytes;
use futures::{Stream, StreamExt};
use leptos::server;
use leptos::server_fn::{
    codec::{Encoding, FromReq, FromRes, IntoReq, IntoRes, JsonEncoding},
    error::{FromServerFnError, IntoAppError, ServerFnErrorErr},
    request::{ClientReq, Req},
    response::{ClientRes, TryRes},
    ContentType,
};
use serde::{Deserialize, Serialize};
use std::pin::Pin;

use crate::domain::ChatMessage;

/// The error a request to `/api/chat` gets before any event was streamed. Its JSON has the same
/// shape as the stream's `error` event, so clients read one format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "error")]
pub struct ApiError {
    pub message: String,
    pub retryable: bool,
}

impl ApiError {
    pub fn new(message: impl Into<String>, retryable: bool) -> Self {
        ApiError {
            message: message.into(),
            retryable,
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl FromServerFnError for ApiError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        let retryable = matches!(
            value,
            ServerFnErrorErr::Request(_) | ServerFnErrorErr::Response(_)
        );
        ApiError {
            message: value.to_string(),
            retryable,
        }
    }
}

/// JSON request bodies whose parse errors are the caller's fault (HTTP 400), not the server's.
pub struct ChatJson;

impl ContentType for ChatJson {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl Encoding for ChatJson {
    const METHOD: http::Method = http::Method::POST;
}

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

/// Responses of type `text/event-stream`.
pub struct EventStream;

impl ContentType for EventStream {
    const CONTENT_TYPE: &'static str = "text/event-stream";
}

impl Encoding for EventStream {
    const METHOD: http::Method = http::Method::POST;
}

/// The raw SSE bytes of one turn. On the server each item is already a whole frame; in the
/// browser items are network chunks, to be decoded with [`super::sse::TurnDecoder`].
pub struct TurnStream(Pin<Box<dyn Stream<Item = Result<Bytes, Bytes>> + Send>>);

impl TurnStream {
    /// Wraps a stream of already-framed SSE bytes.
    pub fn new(frames: impl Stream<Item = Bytes> + Send + 'static) -> Self {
        TurnStream(Box::pin(frames.map(Ok)))
    }

    /// The bytes as they arrive; an `Err` is a transport failure.
    pub fn into_inner(self) -> Pin<Box<dyn Stream<Item = Result<Bytes, Bytes>> + Send>> {
        self.0
    }
}

impl std::fmt::Debug for TurnStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TurnStream")
    }
}

impl<E, R> IntoRes<EventStream, R, E> for TurnStream
where
    R: TryRes<E>,
    E: FromServerFnError + Send,
{
    async fn into_res(self) -> Result<R, E> {
        R::try_from_stream(EventStream::CONTENT_TYPE, self.0)
    }
}

impl<E, R> FromRes<EventStream, R, E> for TurnStream
where
    R: ClientRes<E> + Send,
    E: FromServerFnError,
{
    async fn from_res(res: R) -> Result<Self, E> {
        Ok(TurnStream(Box::pin(res.try_into_stream()?)))
    }
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
