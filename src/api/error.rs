//! The one error a request to the API gets before any event was streamed.

#[cfg(feature = "ssr")]
use leptos::prelude::use_context;
use leptos::server_fn::{
    codec::JsonEncoding,
    error::{FromServerFnError, ServerFnErrorErr},
};
use serde::{Deserialize, Serialize};

use crate::domain::{ErrorCode, Failure, TurnEvent};

/// A refused request. Its JSON is the stream's `error` event (`{"type":"error","message":…,
/// "retryable":…,"code":…,"params":{…}}`), so clients read one format whether a turn failed
/// before or after it began.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "ErrorFrame", from = "ErrorFrame")]
pub struct ApiError(pub Failure);

/// The stream's `error` event alone: the same JSON as [`TurnEvent::Error`], read without the
/// decoding of every other event (which the page's first download then need not hold).
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ErrorFrame {
    Error(Failure),
}

impl From<ApiError> for ErrorFrame {
    fn from(error: ApiError) -> Self {
        ErrorFrame::Error(error.0)
    }
}

impl From<ErrorFrame> for ApiError {
    fn from(ErrorFrame::Error(failure): ErrorFrame) -> Self {
        ApiError(failure)
    }
}

impl utoipa::PartialSchema for ApiError {
    /// The `error` event: `type` is `"error"`, then the failure's fields.
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder};
        AllOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .property("type", crate::domain::wire::names_schema(&["error"]))
                    .required("type"),
            )
            .item(utoipa::openapi::Ref::from_schema_name("Failure"))
            .into()
    }
}

impl utoipa::ToSchema for ApiError {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Error")
    }

    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        use utoipa::PartialSchema;
        schemas.push(("Failure".into(), Failure::schema()));
        <Failure as utoipa::ToSchema>::schemas(schemas);
    }
}

impl ApiError {
    /// A refusal with no more specific code than [`ErrorCode::Other`].
    pub fn new(message: impl Into<String>, retryable: bool) -> Self {
        ApiError(Failure::new(message, retryable))
    }

    /// A refusal the page can say in the reader's language.
    pub fn coded(code: ErrorCode, message: impl Into<String>, retryable: bool) -> Self {
        ApiError(Failure::coded(code, message, retryable))
    }
}

impl From<Failure> for ApiError {
    /// A failure still to be worded (`Failure::of`) is said in the catalogue's English here,
    /// where every refusal leaves the server.
    fn from(failure: Failure) -> Self {
        if failure.message.is_empty() {
            ApiError(crate::i18n::errors::Said::said(failure))
        } else {
            ApiError(failure)
        }
    }
}

impl std::ops::Deref for ApiError {
    type Target = Failure;

    fn deref(&self) -> &Failure {
        &self.0
    }
}

impl From<ApiError> for TurnEvent {
    fn from(error: ApiError) -> Self {
        TurnEvent::Error(error.0)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl FromServerFnError for ApiError {
    type Encoder = JsonEncoding;

    /// The refusal's body; on the server, its status too, from its code
    /// ([`ErrorCode::http_status`]): the one place a refused request gets its status.
    fn ser(&self) -> bytes::Bytes {
        #[cfg(feature = "ssr")]
        if let Some(status) = self.code.http_status() {
            if let (Some(options), Ok(status)) = (
                use_context::<leptos_axum::ResponseOptions>(),
                http::StatusCode::from_u16(status),
            ) {
                options.set_status(status);
            }
        }
        <Self::Encoder as leptos::server_fn::Encodes<Self>>::encode(self).unwrap_or_default()
    }

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        if let Some(refused) = unreadable_request(&value) {
            return refused;
        }
        let retryable = matches!(
            value,
            ServerFnErrorErr::Request(_) | ServerFnErrorErr::Response(_)
        );
        let code = match value {
            // The page could not reach the server at all, or what answered was not Ponder (a
            // proxy's error page).
            ServerFnErrorErr::Request(_)
            | ServerFnErrorErr::Response(_)
            | ServerFnErrorErr::Deserialization(_) => ErrorCode::PonderUnreachable,
            // The server could not read what it was sent.
            ServerFnErrorErr::Args(_) | ServerFnErrorErr::MissingArg(_) => ErrorCode::BadRequest,
            _ => ErrorCode::Other,
        };
        if code != ErrorCode::PonderUnreachable {
            return ApiError::coded(code, value.to_string(), retryable);
        }
        // Said by the catalogue, in the reader's language (English included), not by the
        // transport library's own lower-case text.
        ApiError(Failure::of(code, retryable))
    }
}

/// A request body or query the server could not read (malformed JSON, a missing or
/// wrong-typed field, invalid UTF-8, nesting past serde_json's depth limit): the caller's
/// fault, so `400 bad_request` with what was wrong, never a `500`. Only inside a server
/// function's request, where the response is being built; a client decoding a response gets
/// the ordinary mapping.
fn unreadable_request(value: &ServerFnErrorErr) -> Option<ApiError> {
    #[cfg(feature = "ssr")]
    {
        let detail = match value {
            ServerFnErrorErr::Deserialization(d) | ServerFnErrorErr::Args(d) => d.as_str(),
            ServerFnErrorErr::MissingArg(d) => d.as_str(),
            _ => return None,
        };
        Some(ApiError::from(
            Failure::of(ErrorCode::BadRequest, false).with("detail", request_detail(detail)),
        ))
    }
    #[cfg(not(feature = "ssr"))]
    {
        let _ = value;
        None
    }
}

/// What the parser said, at most 200 characters of it (serde's words name the field and the
/// position, never echo a long body).
#[cfg(feature = "ssr")]
fn request_detail(detail: &str) -> String {
    let detail = detail.trim();
    if detail.is_empty() {
        return "the body is not the JSON this endpoint takes".into();
    }
    match detail.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &detail[..at]),
        None => detail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_has_the_error_events_shape() {
        let json = serde_json::to_value(ApiError::new("no", false)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"type": "error", "message": "no", "retryable": false, "code": "other"})
        );
        let back: ApiError = serde_json::from_value(json).unwrap();
        assert_eq!(back.message, "no");
        let limited = ApiError::from(
            Failure::coded(ErrorCode::RateLimited, "too many", true).with("retry_after", 3),
        );
        let json = serde_json::to_value(&limited).unwrap();
        assert_eq!(json["code"], "rate_limited");
        assert_eq!(json["params"]["retry_after"], "3");
        let event = serde_json::to_value(TurnEvent::Error(limited.0.clone())).unwrap();
        assert_eq!(json, event);
        assert_eq!(serde_json::from_value::<ApiError>(json).unwrap(), limited);
        assert!(serde_json::from_value::<ApiError>(
            serde_json::json!({"type": "delta", "text": "x"})
        )
        .is_err());
    }

    #[test]
    fn transport_failures_have_codes() {
        let unreachable =
            ApiError::from_server_fn_error(ServerFnErrorErr::Request("offline".into()));
        assert_eq!(unreachable.code, ErrorCode::PonderUnreachable);
        assert!(unreachable.retryable);
        let args = ApiError::from_server_fn_error(ServerFnErrorErr::Args("bad".into()));
        assert_eq!(args.code, ErrorCode::BadRequest);
        assert!(!args.retryable);
    }
}
