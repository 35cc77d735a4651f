//! The composition root: the server serving the app's pages. The one place that knows both the
//! server and the UI, so neither imports the other.

use std::sync::Arc;

use leptos::prelude::*;

use crate::server::http::Site;
use crate::server::state::AppState;

/// Ponder's pages, as the server serves them.
pub fn site() -> Site {
    Site {
        shell: |options, page| crate::app::shell(options, page).into_any(),
        words_chunk: crate::ui::locale::words_chunk,
        shared: crate::server::http::shared::SharedDrawing {
            page: crate::ui::shared_page::document,
            refusal: crate::ui::shared_page::refusal,
        },
        description: crate::api::openapi::json,
    }
}

/// The whole application, as `main` serves it and the tests call it.
pub fn router(state: Arc<AppState>, options: LeptosOptions) -> axum::Router {
    crate::server::http::router(state, options, site())
}

/// `ponder serve`: the configuration from the environment, served until SIGTERM or Ctrl-C.
pub async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    crate::server::http::serve(site()).await
}
