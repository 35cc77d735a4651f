//! The HTML shell, the root component and its routes.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, Title};
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::StaticSegment;

use crate::ui::chat_page::ChatPage;

/// What the server tells the page at render time, through `<meta>` tags the client reads once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageSettings {
    /// The path prefix the app is served under ("" or "/ponder").
    pub base_path: String,
    /// Seconds the page waits for a first frame before giving up on a turn.
    pub guard_secs: u64,
}

/// The document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions, page: PageSettings) -> impl IntoView {
    let base = page.base_path.clone();
    let css = format!("{base}/pkg/{}.css", options.output_name);
    view! {
        <!DOCTYPE html>
        <html lang="en" dir="ltr">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                <meta name="ponder-base" content=base.clone()/>
                <meta name="ponder-guard-secs" content=page.guard_secs.to_string()/>
                <link rel="stylesheet" href=css/>
                <link rel="icon" href=format!("{base}/favicon.svg") type="image/svg+xml"/>
                <HydrationScripts options root=base.clone()/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

use leptos_meta::MetaTags;

fn meta_content(name: &str) -> Option<String> {
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

/// Reads the server's page settings before hydration: server functions are called under the
/// base path.
pub fn configure_client() {
    if let Some(base) = meta_content("ponder-base").filter(|b| !b.is_empty()) {
        leptos::server_fn::client::set_server_url(Box::leak(base.into_boxed_str()));
    }
}

/// The pre-token guard length the server asked for (120 s unless configured).
pub fn guard_secs() -> u64 {
    meta_content("ponder-guard-secs")
        .and_then(|v| v.parse().ok())
        .unwrap_or(120)
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

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Title text="Ponder"/>
        <Router base=base_path()>
            <Routes fallback=NotFound>
                <Route path=StaticSegment("") view=ChatPage/>
            </Routes>
        </Router>
    }
}

/// The page for any path that is not the chat.
#[component]
fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(opts) = use_context::<leptos_axum::ResponseOptions>() {
        opts.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <main class="not-found">
            <h1>"Page not found"</h1>
            <p><A href=format!("{}/", base_path())>"Back to the chat"</A></p>
        </main>
    }
}
