//! The HTML shell and the root component: the chat, or the not-found page.

use leptos::prelude::*;

pub use crate::client::browser::PageSettings;
use crate::client::browser::{chat_missing, meta_content, page_address};
use crate::ui::chat_page::ChatPage;
use crate::ui::not_found::NotFound;

/// The document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions, page: PageSettings) -> impl IntoView {
    let base = page.base_path.clone();
    let css = format!("{base}/pkg/{}.css", options.output_name);
    // After the script's own preload, which stays the first one.
    let split_loader = page
        .split_loader
        .as_ref()
        .map(|file| format!("{base}/{}/{file}", options.site_pkg_dir));
    let locale = crate::client::browser::page_locale();
    // The page hydrates once its language's words are here: fetched beside the script.
    let words = page
        .words_chunks
        .iter()
        .find(|(tag, _)| *tag == locale.tag())
        .map(|(_, file)| format!("{base}/{}/{file}", options.site_pkg_dir));
    view! {
        <!DOCTYPE html>
        <html lang=locale.tag() dir=locale.dir_attr()>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                <title>"Ponder"</title>
                <meta name="ponder-base" content=base.clone()/>
                <meta name="ponder-guard-secs" content=page.guard_secs.to_string()/>
                <meta name="ponder-me" content=crate::client::browser::page_me_json()/>
                {chat_missing().then(|| view! { <meta name="ponder-missing" content="1"/> })}
                <link rel="stylesheet" href=css/>
                <link rel="icon" href=format!("{base}/favicon.svg") type="image/svg+xml"/>
                <HydrationScripts options root=base.clone()/>
                {split_loader.map(|href| view! { <link rel="modulepreload" href=href/> })}
                {words
                    .map(|href| {
                        view! { <link rel="preload" r#as="fetch" crossorigin="anonymous" href=href/> }
                    })}
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// Reads the server's page settings before hydration: server functions are called under the
/// base path.
pub fn configure_client() {
    if let Some(base) = meta_content("ponder-base").filter(|b| !b.is_empty()) {
        leptos::server_fn::client::set_server_url(Box::leak(base.into_boxed_str()));
    }
}

/// The root: the chat at the base path and at each conversation's address (`/c/<id>`), the
/// not-found page anywhere else. The page needs no router: the address bar follows the
/// conversation shown (`client::controller::address`), a link elsewhere is a plain page load,
/// and the router's code (about 17 KB of the first load) stays out of the wasm.
#[component]
pub fn App() -> impl IntoView {
    provide_context(crate::client::browser::page_locale());
    if page_address().is_app() {
        view! { <ChatPage/> }.into_any()
    } else {
        view! { <NotFound/> }.into_any()
    }
}
