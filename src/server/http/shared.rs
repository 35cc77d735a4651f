//! Shared links at the HTTP edge: the page at `/s/<token>`, the files it shows at
//! `/s/<token>/f/<n>`, and `POST /s/<token>/continue` ("Continue in Ponder", which copies the
//! snapshot into the reader's own history). Who may open a link is `PONDER_SHARING`'s; a
//! link that opens nothing (never made, revoked, its conversation deleted, sharing off) is one
//! 404 page, the same bytes for each.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use crate::domain::history::Conversation;
use crate::domain::share::{continued, SharedPage, SharedReader, Sharing};
use crate::domain::{ErrorCode, Failure};
use crate::i18n::errors::Said;
use crate::server::auth::Caller;
use crate::server::dress::{items, Dressing};
use crate::server::state::AppState;
use crate::server::store::identity::Identity;
use crate::server::store::StoreError;

/// How the UI draws the shared page (handed to the server by the composition root).
#[derive(Clone, Copy)]
pub struct SharedDrawing {
    /// The page of an opened link, and what puts its dressing (typeset formulas, highlighted
    /// code) in place of their source in its rendered markdown.
    pub page: fn(&SharedPage, &crate::markdown::Dress<'_>) -> String,
    /// The page of a link that opens nothing (`false`), or that needs the reader to sign in
    /// first (`true`).
    pub refusal: fn(&SharedPage, bool) -> String,
}

/// The Content-Security-Policy of a shared page: no script at all, styles, images and fonts
/// from this origin only, its one form posting back here, never framed.
pub const SHARED_CSP: &str = "default-src 'none'; script-src 'none'; style-src 'self'; \
     img-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Why a link shows nothing.
enum Closed {
    /// Never made, revoked, deleted, or sharing is off: 404.
    Gone,
    /// Only signed-in readers open links here: 401, whatever the token.
    SignIn,
    /// The history database could not be asked: 503.
    Down,
}

fn reader(
    state: &AppState,
    req: &Request<Body>,
) -> Result<(SharedReader, Option<Arc<Identity>>), Closed> {
    if state.config.sharing == Sharing::Off {
        return Err(Closed::Gone);
    }
    match req.extensions().get::<Caller>() {
        Some(Caller::Known(who)) => Ok((SharedReader::SignedIn, Some(who.clone()))),
        _ if state.config.sharing == Sharing::SignedIn => Err(Closed::SignIn),
        _ => Ok((SharedReader::Visitor, None)),
    }
}

/// What the page is drawn with before its snapshot is known.
fn frame(
    state: &AppState,
    locale: crate::i18n::Locale,
    token: &str,
    stylesheet: &str,
) -> SharedPage {
    SharedPage {
        snapshot: Conversation {
            id: String::new(),
            title: String::new(),
            workspace_id: String::new(),
            created_at: 0,
            updated_at: 0,
            rev: 0,
            model: None,
            settings: Default::default(),
            messages: Vec::new(),
            first: 0,
            instructions: None,
        },
        locale: locale.tag().into(),
        base_path: state.config.base_path.clone(),
        stylesheet: stylesheet.into(),
        token: token.into(),
        reader: SharedReader::Visitor,
    }
}

/// `GET /s/<token>`.
pub async fn page(
    state: &AppState,
    drawing: SharedDrawing,
    stylesheet: &str,
    token: &str,
    req: Request<Body>,
) -> Response {
    let (parts, _) = req.into_parts();
    let locale = crate::server::http::locale::of_request(state, &parts).await;
    let req = Request::from_parts(parts, Body::empty());
    let mut page = frame(state, locale, token, stylesheet);
    let opened = match reader(state, &req) {
        Ok((reader, _)) => {
            page.reader = reader;
            state.store.open_share(token).await.map_err(|e| match e {
                StoreError::NotFound => Closed::Gone,
                _ => Closed::Down,
            })
        }
        Err(closed) => Err(closed),
    };
    let (status, html) = match opened {
        Ok(opened) => {
            let key = (
                crate::server::store::ids::digest(token),
                opened.snapshot.updated_at,
                page.locale.clone(),
                page.reader == SharedReader::SignedIn,
            );
            let html = match recently_drawn(&key) {
                Some(html) => html,
                None => {
                    page.snapshot = opened.snapshot;
                    let dressing = opened.dressing;
                    let drawn = tokio::task::spawn_blocking(move || {
                        let dressing: Dressing =
                            serde_json::from_str(&dressing).unwrap_or_default();
                        Arc::<str>::from((drawing.page)(&page, &|html| dressing.apply(html)))
                    })
                    .await;
                    let Ok(html) = drawn else {
                        return plain(
                            StatusCode::SERVICE_UNAVAILABLE,
                            Failure::of(ErrorCode::ServerBusy, true).said().message,
                        );
                    };
                    keep_drawn(key, html.clone());
                    html
                }
            };
            (StatusCode::OK, html.to_string())
        }
        Err(Closed::Gone) => (StatusCode::NOT_FOUND, (drawing.refusal)(&page, false)),
        Err(Closed::SignIn) => (StatusCode::UNAUTHORIZED, (drawing.refusal)(&page, true)),
        Err(Closed::Down) => {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                Failure::of(ErrorCode::DatabaseUnavailable, true)
                    .said()
                    .message,
            )
        }
    };
    let mut response = (status, html).into_response();
    set_headers(&mut response, "text/html; charset=utf-8");
    response
}

/// What a drawn page is known by: the link's digest, when its snapshot was taken, the language
/// of its chrome, whether the reader is signed in.
type DrawnKey = (String, i64, String, bool);

/// Pages drawn lately, newest last: a link read by many is drawn once, not once a visitor.
/// Whether the link still opens is asked of the store on every visit all the same.
fn drawn_pages() -> &'static std::sync::Mutex<DrawnPages> {
    static DRAWN: std::sync::OnceLock<std::sync::Mutex<DrawnPages>> = std::sync::OnceLock::new();
    DRAWN.get_or_init(Default::default)
}

type DrawnPages = std::collections::VecDeque<(DrawnKey, Arc<str>)>;

/// How many drawn pages are kept, and the largest one kept (16 MiB at most in all).
const DRAWN_PAGES: usize = 16;
const DRAWN_PAGE_BYTES: usize = 1024 * 1024;

fn recently_drawn(key: &DrawnKey) -> Option<Arc<str>> {
    let pages = drawn_pages()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    pages
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, html)| html.clone())
}

fn keep_drawn(key: DrawnKey, html: Arc<str>) {
    if html.len() > DRAWN_PAGE_BYTES {
        return;
    }
    let mut pages = drawn_pages()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    pages.retain(|(k, _)| k != &key);
    if pages.len() >= DRAWN_PAGES {
        pages.pop_front();
    }
    pages.push_back((key, html));
}

/// `GET /s/<token>/f/<n>`: the `n`th file the link shows, when it shows files.
pub async fn file(state: &AppState, token: &str, n: &str, req: Request<Body>) -> Response {
    let gone = || plain(StatusCode::NOT_FOUND, "not found".into());
    if reader(state, &req).is_err() {
        return gone();
    }
    let Ok(n) = n.parse::<usize>() else {
        return gone();
    };
    let opened = match state.store.open_share(token).await {
        Ok(opened) if opened.choice.files => opened,
        _ => return gone(),
    };
    match state.store.shared_file(&opened, n).await {
        Ok((info, bytes)) => {
            let mut response = crate::server::http::attachments::file_response(&info, bytes);
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response.headers_mut().insert(
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            );
            response
        }
        Err(_) => gone(),
    }
}

/// `POST /s/<token>/continue`: the snapshot (with its files, when the link shows them, copied
/// as the reader's own) as a new conversation of the reader's, then its address. Continuing
/// the same snapshot again opens the copy already made.
pub async fn continue_in_ponder(state: &AppState, token: &str, req: Request<Body>) -> Response {
    let who = match reader(state, &req) {
        Ok((_, Some(who))) => who,
        Ok((_, None)) | Err(Closed::SignIn) => {
            return Redirect::to(&format!("{}/", state.config.base_path)).into_response()
        }
        Err(_) => return plain(StatusCode::NOT_FOUND, "not found".into()),
    };
    if state.config.history != crate::server::config::HistoryMode::Server {
        return plain(StatusCode::NOT_FOUND, "not found".into());
    }
    let opened = match state.store.open_share(token).await {
        Ok(opened) => opened,
        Err(StoreError::NotFound) => return plain(StatusCode::NOT_FOUND, "not found".into()),
        Err(_) => {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                Failure::of(ErrorCode::DatabaseUnavailable, true)
                    .said()
                    .message,
            )
        }
    };
    let scope = state.store.scoped(&who);
    let key = format!(
        "share:{}:{}",
        &crate::server::store::ids::digest(token)[..32],
        opened.snapshot.updated_at
    );
    let id = match scope.imported(&key).await {
        Ok(Some(id)) => Some(id),
        Ok(None) => {
            let files = own_copies(state, &who, &opened).await;
            let import = continued(&opened.snapshot, key.clone(), &files);
            match scope.import_conversation(None, &import).await {
                Ok(_) => scope.imported(&key).await.ok().flatten(),
                Err(e) => {
                    tracing::warn!(error = %e, "a shared conversation could not be continued");
                    None
                }
            }
        }
        Err(_) => None,
    };
    match id {
        Some(id) => Redirect::to(&format!("{}/c/{id}", state.config.base_path)).into_response(),
        None => plain(
            StatusCode::SERVICE_UNAVAILABLE,
            Failure::of(ErrorCode::DatabaseUnavailable, true)
                .said()
                .message,
        ),
    }
}

/// The link's files kept again as the reader's own, in the snapshot's order (`None` for one
/// their quota or the limits refuse: the copy goes without it).
async fn own_copies(
    state: &AppState,
    who: &Identity,
    opened: &crate::server::store::shares::Opened,
) -> Vec<Option<crate::domain::attachment::FileRef>> {
    let mut copies = Vec::new();
    for n in 0..opened.file_count() {
        let copy = match state.store.shared_file(opened, n).await {
            Ok((info, bytes)) => keep(state, who, &info.name, bytes).await,
            Err(_) => None,
        };
        copies.push(copy);
    }
    copies
}

async fn keep(
    state: &AppState,
    who: &Identity,
    name: &str,
    bytes: Vec<u8>,
) -> Option<crate::domain::attachment::FileRef> {
    let (sniffed, bytes, contents) = crate::server::http::attachments::judge(state, name, bytes)
        .await
        .ok()?;
    let info = state
        .store
        .scoped(who)
        .put_attachment_with(
            name,
            &sniffed,
            &bytes,
            state.config.attachments.user_bytes,
            &contents,
        )
        .await
        .ok()?;
    Some(crate::domain::attachment::FileRef {
        id: info.id,
        name: info.name,
        kind: info.kind,
        size: info.size,
        pixels: info.pixels,
        pages: info.pages,
        sent_as: None,
    })
}

/// The snapshot's formulas typeset and code highlighted, as the link keeps them: the work (the
/// snapshot's markdown read too) runs on the converter threads, within the user's highlighting
/// places, once per snapshot taken.
pub async fn dressing_of(shot: Conversation, user: &str) -> Result<String, Failure> {
    use crate::server::{rich, rich_work};
    let _place = rich_work::user_place(user).await?;
    let dressing = rich_work::run(move |cancelled| {
        let (math, code) = wanted(&shot);
        if math.is_empty() && code.is_empty() {
            return Dressing::default();
        }
        let typeset = rich::mathml_all(&math, cancelled);
        let highlighted = rich::highlight_all(&code, cancelled);
        Dressing::new(&math, typeset, &code, highlighted)
    })
    .await?;
    serde_json::to_string(&dressing).map_err(|e| Failure::new(e.to_string(), true))
}

/// The snapshot's formulas and code blocks, each once, within the converters' limits of one
/// request.
fn wanted(shot: &Conversation) -> (Vec<crate::domain::MathItem>, Vec<crate::domain::CodeItem>) {
    let mut html = String::new();
    for m in &shot.messages {
        for v in &m.versions {
            html.push_str(&crate::markdown::render(&v.content));
            for b in &v.blocks {
                html.push_str(&crate::markdown::render(b.text.as_deref().unwrap_or("")));
            }
        }
    }
    let (mut math, mut code) = items(&html);
    math.sort_by(|a, b| (&a.tex, a.display).cmp(&(&b.tex, b.display)));
    math.dedup();
    math.truncate(crate::server::rich::MAX_FORMULAS);
    code.sort_by(|a, b| (&a.lang, &a.code).cmp(&(&b.lang, &b.code)));
    code.dedup();
    code.truncate(crate::server::rich::MAX_BLOCKS);
    (math, code)
}

fn plain(status: StatusCode, text: String) -> Response {
    let mut response = (status, text).into_response();
    set_headers(&mut response, "text/plain; charset=utf-8");
    response
}

fn set_headers(response: &mut Response, content_type: &'static str) {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(SHARED_CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::HeaderName::from_static("x-robots-tag"),
        HeaderValue::from_static("noindex, nofollow"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::HeaderName::from_static("permissions-policy"),
        HeaderValue::from_static(crate::server::http::request::PERMISSIONS_POLICY),
    );
}
