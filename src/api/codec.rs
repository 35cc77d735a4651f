//! The two codecs of `POST /api/chat` that server_fn does not ship: [`ChatJson`], the
//! documented JSON body, and [`EventStream`], whose response is the raw `text/event-stream`
//! bytes of a turn. server_fn's own text stream decodes each network chunk on its own, which
//! would mangle a character split across chunks; here the browser decodes the bytes with
//! [`crate::wire::sse::TurnDecoder`].

use bytes::Bytes;
use futures::{Stream, StreamExt};
use leptos::server_fn::{
    codec::{Encoding, FromRes, IntoRes},
    error::FromServerFnError,
    response::{ClientRes, TryRes},
    ContentType,
};
use std::pin::Pin;

/// JSON request bodies whose parse errors are the caller's fault (HTTP 400), not the server's.
pub struct ChatJson;

impl ContentType for ChatJson {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl Encoding for ChatJson {
    const METHOD: http::Method = http::Method::POST;
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

impl utoipa::PartialSchema for TurnStream {
    /// Each `data:` line of the stream is one [`crate::domain::TurnEvent`].
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::Ref::from_schema_name("TurnEvent").into()
    }
}

impl utoipa::ToSchema for TurnStream {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.push(("TurnEvent".into(), crate::domain::TurnEvent::schema()));
        <crate::domain::TurnEvent as utoipa::ToSchema>::schemas(schemas);
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
