//! The attachment routes: `POST /api/attachments?name=…` keeps the file in the request body
//! (`Content-Type: application/octet-stream`, at most `PONDER_MAX_ATTACHMENT_BYTES`, judged by
//! its bytes) and answers what it is; `GET /api/attachments/<id>` gives it back to its owner
//! only (anyone else: 404), as a download that no browser renders or runs in Ponder's origin.

use axum::body::Body;
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::domain::attachment::{file_name, sniff, to_keep};
use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;
use crate::server::auth::Caller;
use crate::server::config::HistoryMode;
use crate::server::extract;
use crate::server::http::guard::refusal;
use crate::server::http::request::store_error;
use crate::server::state::AppState;
use crate::server::store::attachments::AttachmentInfo;
use crate::server::store::identity::Identity;

/// A refusal with the status its code carries.
pub(super) fn refused(failure: Failure) -> Response {
    let status = failure
        .code
        .http_status()
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::BAD_REQUEST);
    refusal(status, failure)
}

/// The signed-in caller who keeps files here, or why a request without one is refused.
fn owner(state: &AppState, req: &Request<Body>) -> Result<std::sync::Arc<Identity>, Failure> {
    if state.config.history != HistoryMode::Server {
        return Err(Failure::of(ErrorCode::NoServerHistory, false).said());
    }
    caller(req)
}

/// The signed-in caller, or why a request without one is refused.
pub(super) fn caller(req: &Request<Body>) -> Result<std::sync::Arc<Identity>, Failure> {
    match req.extensions().get::<Caller>() {
        Some(Caller::Known(who)) => Ok(who.clone()),
        Some(Caller::Refused(failure)) => Err(failure.clone()),
        Some(Caller::StoreDown) => Err(Failure::of(ErrorCode::DatabaseUnavailable, true).said()),
        Some(Caller::Unknown(code)) => Err(Failure::of(*code, false).said()),
        None => Err(Failure::of(ErrorCode::SignInRequired, false).said()),
    }
}

/// `POST /api/attachments?name=…`: the body judged, kept, and described (`201`). Where the
/// browser keeps the history (`PONDER_HISTORY=browser`) the file is judged and described alone
/// (`200`, its id its SHA-256): the page keeps it and sends it inside the turn's request; so is
/// a temporary chat's (`&keep=0`), which the server never keeps.
pub async fn upload(state: &AppState, req: Request<Body>) -> Response {
    let keeps = state.config.history == HistoryMode::Server && to_keep(req.uri().query());
    let who = match if keeps {
        owner(state, &req)
    } else {
        caller(&req)
    } {
        Ok(who) => who,
        Err(failure) => return refused(failure),
    };
    let name = file_name(req.uri().query());
    let limits = state.config.attachments;
    let bytes = match axum::body::to_bytes(req.into_body(), limits.file_bytes as usize).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return refused(
                Failure::of(ErrorCode::AttachmentTooLarge, false)
                    .with("name", &name)
                    .with(
                        "limit",
                        crate::domain::attachment::readable_bytes(limits.file_bytes),
                    )
                    .said(),
            )
        }
    };
    let (sniffed, bytes, contents) = match judge(state, &name, bytes.to_vec()).await {
        Ok(judged) => judged,
        Err(failure) => return refused(failure),
    };
    if !keeps {
        let judged = crate::domain::attachment::FileRef {
            id: crate::server::store::ids::content_digest(&bytes),
            name,
            kind: sniffed.kind,
            size: bytes.len() as u64,
            pixels: sniffed.pixels,
            pages: contents.pdf.map(|(pages, _)| pages),
            sent_as: None,
        };
        return (StatusCode::OK, axum::Json(judged)).into_response();
    }
    match state
        .store
        .scoped(&who)
        .put_attachment_with(&name, &sniffed, &bytes, limits.user_bytes, &contents)
        .await
    {
        Ok(info) => (StatusCode::CREATED, axum::Json(info)).into_response(),
        Err(e) => refused(store_error(e)),
    }
}

/// A file's bytes judged as an upload's are: its kind told from its bytes, what is inside a
/// PDF read, a large image written again smaller. The failure is worded.
pub async fn judge(
    state: &AppState,
    name: &str,
    bytes: Vec<u8>,
) -> Result<
    (
        crate::domain::attachment::Sniffed,
        Vec<u8>,
        extract::Contents,
    ),
    Failure,
> {
    let mut sniffed = sniff(name, &bytes, &state.config.attachments).map_err(Failure::said)?;
    let (bytes, contents) = extract::read_inside(&state.config, name, &mut sniffed, bytes)
        .await
        .map_err(Failure::said)?;
    Ok((sniffed, bytes, contents))
}

/// `GET /api/attachments/<id>`: the file to its owner, as a download; 404 to anyone else.
pub async fn download(state: &AppState, id: &str, req: Request<Body>) -> Response {
    let who = match owner(state, &req) {
        Ok(who) => who,
        Err(failure) => return refused(failure),
    };
    match state.store.scoped(&who).attachment(id).await {
        Ok((info, bytes)) => file_response(&info, bytes),
        Err(e) => refused(store_error(e)),
    }
}

/// A stored file as a response: its type, a download (an image Ponder wrote again is shown
/// inline), sandboxed, never sniffed, never embedded by another site.
pub fn file_response(info: &AttachmentInfo, bytes: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(header::CONTENT_TYPE, &info.mime);
    let disposition = disposition(&info.name);
    if info.reencoded {
        set(
            header::CONTENT_DISPOSITION,
            &disposition.replacen("attachment", "inline", 1),
        );
    } else {
        set(header::CONTENT_DISPOSITION, &disposition);
    }
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; sandbox",
    );
    set(
        header::CACHE_CONTROL,
        "private, max-age=31536000, immutable",
    );
    set(
        header::HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
    response
}

/// `Content-Disposition: attachment` with the name as sent (RFC 6266 `filename*`) and a plain
/// ASCII one for old clients.
pub fn disposition(name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '_',
        })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_download_name_is_quoted_safely_both_ways() {
        assert_eq!(
            disposition("naïve \"plan\".md"),
            "attachment; filename=\"na_ve _plan_.md\"; filename*=UTF-8''na%C3%AFve%20%22plan%22.md"
        );
    }
}
