//! Rich content the page shows lazily, made on the server so the first load carries no
//! converter: `render/math` turns formulas into MathML, `render/code` highlights code blocks.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::{CodeItem, MathItem};

/// MathML for each formula, in order; `null` for one that does not parse (the page keeps its
/// source). At most 500 formulas a request; signed-in callers only.
#[server(prefix = "/api", endpoint = "render/math", input = Json, output = Json)]
pub async fn render_math(items: Vec<MathItem>) -> Result<Vec<Option<String>>, ApiError> {
    use crate::server::rich;
    let (_state, _who) = crate::server::request::caller()?;
    if items.len() > rich::MAX_FORMULAS {
        crate::server::request::set_status(http::StatusCode::BAD_REQUEST);
        return Err(ApiError::coded(
            crate::domain::ErrorCode::BadRequest,
            format!("at most {} formulas a request", rich::MAX_FORMULAS),
            false,
        ));
    }
    Ok(items.iter().map(rich::mathml).collect())
}

/// Highlighted HTML for each code block, in order; `null` for a language not known (or a block
/// over 100 KB), which stays plain. At most 100 blocks a request; signed-in callers only. The
/// work runs off the serving threads.
#[server(prefix = "/api", endpoint = "render/code", input = Json, output = Json)]
pub async fn render_code(items: Vec<CodeItem>) -> Result<Vec<Option<String>>, ApiError> {
    use crate::server::rich;
    let (_state, _who) = crate::server::request::caller()?;
    if items.len() > rich::MAX_BLOCKS {
        crate::server::request::set_status(http::StatusCode::BAD_REQUEST);
        return Err(ApiError::coded(
            crate::domain::ErrorCode::BadRequest,
            format!("at most {} code blocks a request", rich::MAX_BLOCKS),
            false,
        ));
    }
    tokio::task::spawn_blocking(move || items.iter().map(rich::highlighted).collect())
        .await
        .map_err(|_| ApiError::new("the code could not be highlighted", true))
}
