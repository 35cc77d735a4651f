//! What the page asks of the world around it, and the one place where the two builds differ:
//! in the browser (`hydrate`) the DOM, the clock and randomness; when rendered on the server
//! (`ssr`), the request being answered. Everything else in `client/` and `ui/` is the same code
//! on both sides.

#[cfg(feature = "ssr")]
use leptos::prelude::use_context;

pub use crate::domain::page::{Address, ChatMissing, PageSettings};

/// The `content` of the page's `<meta name=…>` tag (none while rendering on the server).
pub fn meta_content(name: &str) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        let doc = web_sys::window()?.document()?;
        doc.query_selector(&format!("meta[name=\"{name}\"]"))
            .ok()??
            .get_attribute("content")
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = name;
        None
    }
}

/// True where the main pointer is precise (a mouse, a trackpad): there the page may take the
/// focus on load without popping up a phone's keyboard. False on the server.
pub fn fine_pointer() -> bool {
    #[cfg(feature = "hydrate")]
    {
        web_sys::window()
            .and_then(|w| w.match_media("(pointer: fine)").ok().flatten())
            .is_some_and(|m| m.matches())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        false
    }
}

/// Milliseconds on the client's clock (0 on the server, where turns never run).
pub fn now_ms() -> f64 {
    #[cfg(feature = "hydrate")]
    {
        js_sys::Date::now()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0.0
    }
}

/// The reader's calendar day of a time (ms since the epoch), in the browser's time zone at that
/// moment (UTC on the server, which never groups the list).
pub fn local_day(ms: f64) -> i64 {
    #[cfg(feature = "hydrate")]
    let offset = -js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms)).get_timezone_offset();
    #[cfg(not(feature = "hydrate"))]
    let offset = 0.0;
    super::date_groups::day_at_offset(ms, offset)
}

/// Random bits for fresh ids (0 on the server, which makes none that last).
pub fn random_u64() -> u64 {
    #[cfg(feature = "hydrate")]
    {
        (js_sys::Math::random() * 1e9) as u64
    }
    #[cfg(not(feature = "hydrate"))]
    {
        0
    }
}

/// The base path the page is served under, the Leptos router's base. The server renders with
/// the same base as the browser hydrates with, so links match on both sides.
pub fn base_path() -> String {
    #[cfg(feature = "ssr")]
    {
        use_context::<PageSettings>()
            .map(|page| page.base_path)
            .unwrap_or_default()
    }
    #[cfg(not(feature = "ssr"))]
    {
        meta_content("ponder-base").unwrap_or_default()
    }
}

/// Where the page is (a new chat, a conversation, nowhere the app has anything). Both sides
/// answer from the same address (the request's path, the browser's `location`), so the
/// server's render and the page's hydration pick the same view; a conversation the server
/// found missing is nowhere on both sides (`<meta name="ponder-missing">`).
pub fn page_address() -> Address {
    let address = Address::of(&page_path(), &base_path());
    if chat_missing() {
        Address::Elsewhere
    } else {
        address
    }
}

/// The server rendered this conversation's address as not found (another user's, deleted, never
/// made).
pub fn chat_missing() -> bool {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .is_some_and(|parts| parts.extensions.get::<ChatMissing>().is_some())
    }
    #[cfg(not(feature = "ssr"))]
    {
        meta_content("ponder-missing").is_some()
    }
}

/// The conversation the server found at this page's address, to draw on the first load; only
/// the server's render has it (the page asks for the chat once it runs).
pub fn served_chat() -> Option<crate::domain::page::ChatFound> {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>().and_then(|parts| {
            parts
                .extensions
                .get::<crate::domain::page::ChatFound>()
                .cloned()
        })
    }
    #[cfg(not(feature = "ssr"))]
    {
        None
    }
}

/// Shows `address` in the address bar: a new history entry (`push`), or in place of the current
/// one. Nothing happens when the bar already shows it, or on the server.
pub fn go_to(address: &Address, push: bool) {
    #[cfg(feature = "hydrate")]
    {
        let path = address.path(&base_path());
        let Some(window) = web_sys::window() else {
            return;
        };
        if window.location().pathname().ok().as_deref() == Some(path.as_str()) {
            return;
        }
        let Ok(history) = window.history() else {
            return;
        };
        let _ = if push {
            history.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path))
        } else {
            history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path))
        };
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (address, push);
}

fn page_path() -> String {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .map(|parts| parts.uri.path().to_string())
            .unwrap_or_default()
    }
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        web_sys::window()
            .and_then(|w| w.location().pathname().ok())
            .unwrap_or_default()
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        String::from("/")
    }
}

/// The pre-token guard length the server asked for (120 s unless configured).
pub fn guard_secs() -> u64 {
    meta_content("ponder-guard-secs")
        .and_then(|v| v.parse().ok())
        .unwrap_or(120)
}

/// Who the page is for and where chats live, as the server rendered it: from the request on
/// the server, from the page's `<meta name="ponder-me">` in the browser.
pub fn page_me() -> Option<crate::domain::account::Me> {
    #[cfg(feature = "ssr")]
    {
        use_context::<crate::domain::account::Me>()
    }
    #[cfg(not(feature = "ssr"))]
    {
        meta_content("ponder-me").and_then(|json| serde_json::from_slice(json.as_bytes()).ok())
    }
}

/// The language the page is in: on the server the one chosen for the request (the reader's
/// stored choice, else `Accept-Language`), in the browser the one the server wrote into
/// `<html lang>`, so both render the same words.
pub fn page_locale() -> crate::i18n::Locale {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::i18n::Locale>().copied())
            .unwrap_or_default()
    }
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
            .and_then(|html| html.get_attribute("lang"))
            .and_then(|tag| crate::i18n::Locale::from_tag(&tag))
            .unwrap_or_default()
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        crate::i18n::Locale::default()
    }
}

/// The page's origin (`https://host:port`), which makes an address the server gave (a shared
/// link's `/s/<token>`) one to paste anywhere; empty on the server.
pub fn page_origin() -> String {
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        web_sys::window()
            .and_then(|w| w.location().origin().ok())
            .unwrap_or_default()
    }
    #[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
    {
        String::new()
    }
}

/// Keeps the reader's language in a cookie for a year, so the server renders the next page in it.
pub fn remember_locale(locale: crate::i18n::Locale) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let cookie = format!(
            "{}={}; Path=/; Max-Age=31536000; SameSite=Lax",
            crate::i18n::COOKIE,
            locale.tag()
        );
        if let Some(doc) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.dyn_into::<web_sys::HtmlDocument>().ok())
        {
            let _ = doc.set_cookie(&cookie);
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = locale;
}

#[cfg(feature = "hydrate")]
thread_local! {
    static TYPED_EARLY: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Keeps what the reader typed into the composer before the page hydrated (the server's page
/// takes keys at once; hydration would set the box to the empty draft): called just before.
pub fn keep_typed_before_hydration() {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let typed = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id("composer-input"))
            .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
            .map(|t| t.value())
            .unwrap_or_default();
        TYPED_EARLY.with(|t| *t.borrow_mut() = typed);
    }
}

/// What [`keep_typed_before_hydration`] kept, once: the draft the page starts with.
pub fn typed_before_hydration() -> String {
    #[cfg(feature = "hydrate")]
    {
        TYPED_EARLY.with(|t| std::mem::take(&mut *t.borrow_mut()))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        String::new()
    }
}

/// Where single sign-on starts for this page, coming back to it once signed in.
pub fn sso_address() -> String {
    let mut back = String::new();
    for c in page_path().chars() {
        match c {
            '%' => back.push_str("%25"),
            '&' => back.push_str("%26"),
            '+' => back.push_str("%2B"),
            ' ' => back.push_str("%20"),
            c => back.push(c),
        }
    }
    format!("{}/auth/oidc/login?return_to={back}", base_path())
}

/// Leaves the page for `url` (the identity provider's sign-out; a no-op on the server).
pub fn leave_for(url: &str) {
    #[cfg(feature = "hydrate")]
    if let Some(w) = web_sys::window() {
        let _ = w.location().assign(url);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = url;
}

/// Loads the page at `address` afresh (a no-op on the server).
pub fn load_page(address: &Address) {
    #[cfg(feature = "hydrate")]
    if let Some(w) = web_sys::window() {
        let _ = w.location().assign(&address.path(&base_path()));
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = address;
}

/// Loads the page again (a no-op on the server).
pub fn reload() {
    #[cfg(feature = "hydrate")]
    if let Some(w) = web_sys::window() {
        let _ = w.location().reload();
    }
}

/// [`page_me`] as the JSON the page's meta tag carries.
pub fn page_me_json() -> String {
    page_me()
        .and_then(|me| serde_json::to_string(&me).ok())
        .unwrap_or_default()
}

/// Marks the response being rendered as 404 (a no-op in the browser).
pub fn set_not_found() {
    #[cfg(feature = "ssr")]
    if let Some(opts) = use_context::<leptos_axum::ResponseOptions>() {
        opts.set_status(http::StatusCode::NOT_FOUND);
    }
}

/// A future that resolves after `duration` (never on the server, where turns do not run).
pub fn sleep(
    duration: std::time::Duration,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    leptos::prelude::set_timeout(
        move || {
            let _ = tx.send(());
        },
        duration,
    );
    Box::pin(async move {
        if rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}

/// What an upload came to: the server's status and body, or `None` when no answer came (the
/// connection was lost, or the upload was cancelled).
pub type Uploaded = Option<(u16, String)>;

#[cfg(feature = "hydrate")]
thread_local! {
    static UPLOADS: std::cell::RefCell<std::collections::HashMap<u32, web_sys::XmlHttpRequest>> =
        Default::default();
}

/// Sends `file` as the body of a `POST` to `url` (an upload known as `key`), telling
/// `progress` how many of its bytes have left, then `done` what came of it. A request, not a
/// `fetch`: only it tells how far the body has gone. On the server, `done` hears nothing came.
pub fn upload(
    key: u32,
    url: &str,
    file: &web_sys::Blob,
    progress: impl Fn(u64) + 'static,
    done: impl FnOnce(Uploaded) + 'static,
) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::closure::Closure;
        use wasm_bindgen::JsCast;
        let Ok(xhr) = web_sys::XmlHttpRequest::new() else {
            return done(None);
        };
        if xhr.open("POST", url).is_err()
            || xhr
                .set_request_header("Content-Type", "application/octet-stream")
                .is_err()
        {
            return done(None);
        }
        let on_progress =
            Closure::<dyn Fn(web_sys::ProgressEvent)>::new(move |e: web_sys::ProgressEvent| {
                progress(e.loaded() as u64)
            });
        let upload = xhr.upload().ok();
        if let Some(u) = &upload {
            u.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
        }
        let ended = xhr.clone();
        let on_end = Closure::once_into_js(move || {
            if let Some(u) = upload {
                u.set_onprogress(None);
            }
            drop(on_progress);
            UPLOADS.with(|u| u.borrow_mut().remove(&key));
            let status = ended.status().unwrap_or(0);
            let body = ended.response_text().ok().flatten().unwrap_or_default();
            done((status != 0).then_some((status, body)));
        });
        xhr.set_onloadend(Some(on_end.unchecked_ref()));
        if xhr.send_with_opt_blob(Some(file)).is_ok() {
            UPLOADS.with(|u| u.borrow_mut().insert(key, xhr));
        }
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (key, url, file, progress);
        done(None)
    }
}

/// [`upload`] as a future: what came of sending `bytes` (nothing when the server was not
/// reached).
pub async fn upload_bytes(key: u32, url: &str, bytes: &[u8]) -> Uploaded {
    #[cfg(feature = "hydrate")]
    {
        let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
        let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).ok()?;
        let (tx, rx) = futures::channel::oneshot::channel();
        upload(
            key,
            url,
            &blob,
            |_| {},
            move |answer| {
                let _ = tx.send(answer);
            },
        );
        rx.await.ok().flatten()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (key, url, bytes);
        None
    }
}

/// The bytes of the reader's `file`, in base64 (nothing when they could not be read). The
/// browser's own `btoa` encodes them, so the page's first load carries no encoder.
pub async fn base64_of(file: &web_sys::File) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
            .await
            .ok()?;
        let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
        let latin1: String = bytes.into_iter().map(char::from).collect();
        web_sys::window()?.btoa(&latin1).ok()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = file;
        None
    }
}

/// The bytes at `url` (this server's, with the reader's cookie), or nothing when they could
/// not be had.
pub async fn fetch_bytes(url: &str) -> Option<Vec<u8>> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        use wasm_bindgen_futures::JsFuture;
        let response: web_sys::Response = JsFuture::from(web_sys::window()?.fetch_with_str(url))
            .await
            .ok()?
            .dyn_into()
            .ok()?;
        if !response.ok() {
            return None;
        }
        let body = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
        Some(js_sys::Uint8Array::new(&body).to_vec())
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = url;
        None
    }
}

/// Stops the upload `key` if it still runs (its `done` hears nothing came).
pub fn cancel_upload(key: u32) {
    #[cfg(feature = "hydrate")]
    if let Some(xhr) = UPLOADS.with(|u| u.borrow_mut().remove(&key)) {
        let _ = xhr.abort();
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = key;
}

/// A URL the page can draw the reader's own copy of `file` from, for an image (the server
/// judges what it really is); [`let_go`] frees it.
pub fn picture_of(file: &web_sys::File) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        file.type_()
            .starts_with("image/")
            .then(|| web_sys::Url::create_object_url_with_blob(file).ok())
            .flatten()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = file;
        None
    }
}

/// Frees a URL made by [`picture_of`].
pub fn let_go(url: &str) {
    #[cfg(feature = "hydrate")]
    let _ = web_sys::Url::revoke_object_url(url);
    #[cfg(not(feature = "hydrate"))]
    let _ = url;
}
