//! Rich content the page shows lazily: `render/math` turns formulas into MathML (on the server,
//! so the first load carries no converter).

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::MathItem;

/// MathML for each formula, in order; `null` for one that does not parse (the page keeps its
/// source). At most 500 formulas a request; signed-in callers only.
#[server(prefix = "/api", endpoint = "render/math", input = Json, output = Json)]
pub async fn render_math(items: Vec<MathItem>) -> Result<Vec<Option<String>>, ApiError> {
    use crate::server::rich;
    let (_state, _who) = crate::server::request::caller()?;
    if items.len() > rich::MAX_FORMULAS {
        crate::server::request::set_status(http::StatusCode::BAD_REQUEST);
        return Err(ApiError::new(
            format!("at most {} formulas a request", rich::MAX_FORMULAS),
            false,
        ));
    }
    Ok(items.iter().map(rich::mathml).collect())
}
