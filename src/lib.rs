#![recursion_limit = "512"]
//! Ponder: a self-hostable web chat for reasoning models that shows the model's thinking live.
//!
//! - [`domain`]: the turn event model and messages, shared by server and browser.
//! - [`i18n`]: the four languages of the interface, their plural rules and numbers.
//! - [`api`]: the `POST /api/chat` server function, its codecs and error.
//! - [`wire`]: SSE framing and line decoding, shared by both sides.
//! - [`server`]: config, provider adapters, the turn pipeline and the demo model (`ssr` only).
//! - [`client`]: the pure turn reducer and the controller that binds it to signals.
//! - [`markdown`]: the one sanitizing renderer.
//! - [`ui`]: the components.
//! - [`site`]: the composition root, the server serving the app's pages (`ssr` only).
//! - [`terminal`]: `ponder chat` and `ponder ask`, the terminal client over the same turn
//!   contract (`ssr` builds only: it is part of the one native binary).

pub mod api;
pub mod app;
pub mod client;
pub mod domain;
pub mod i18n;
pub mod markdown;
#[cfg(feature = "ssr")]
pub mod server;
#[cfg(feature = "ssr")]
pub mod site;
#[cfg(feature = "ssr")]
pub mod terminal;
pub mod ui;
pub mod wire;

/// Entry point of the browser build: hydrates the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    app::configure_client();
    let locale = client::browser::page_locale();
    let start = move || {
        let words = locale.catalogue();
        markdown::set_copy_labels(words.copy, words.copy_code);
        client::browser::keep_typed_before_hydration();
        leptos::mount::hydrate_body(app::App);
    };
    if ui::locale::words_chunk(locale).is_none() {
        return start();
    }
    // A page in another language hydrates once its catalogue's chunk is here.
    wasm_bindgen_futures::spawn_local(async move {
        ui::locale::fetch_words(locale).await;
        start();
    });
}

/// The browser's second markdown layer alone ([`ui::sanitize`]), exported so the end-to-end
/// suite can feed it markup the writer never emits and read what the page would show, with the
/// browser's Sanitizer API first (`with_sanitizer_api`, where there is one) or the allow-list
/// walk alone. It lives in the message bubbles' chunk, so this fetches that first (a promise).
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub async fn sanitize_markup(
    html: String,
    with_sanitizer_api: bool,
) -> Result<String, wasm_bindgen::JsValue> {
    let code = ui::message_code::loaded()
        .await
        .map_err(|e| wasm_bindgen::JsValue::from_str(&e.to_string()))?;
    Ok((code.sanitize)(&html, with_sanitizer_api))
}
