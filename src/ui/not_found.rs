//! The page for an address that leads nowhere: a path the app does not have, or a conversation
//! that is not the reader's (another user's, deleted, never made).

use leptos::prelude::*;

use crate::client::browser::{base_path, set_not_found};

/// Says the page is not here, with the way back to a new chat; the response is a 404.
#[component]
pub fn NotFound() -> impl IntoView {
    set_not_found();
    let t = crate::ui::locale::tr();
    view! {
        <main class="not-found">
            <h1>{t.page_not_found}</h1>
            <p><a href=format!("{}/", base_path())>{t.back_to_chat}</a></p>
        </main>
    }
}
