//! Rich content the page shows lazily, made on the server so the first load carries no
//! converter: `render/math` turns formulas into MathML, `render/code` highlights code blocks.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::{CodeItem, MathItem};

/// MathML for each formula, in order; `null` for one that does not parse or nests more than
/// 100 levels deep (the page shows it as written). At most 500 formulas a request; signed-in
/// callers only. The work runs on a big-stack converter thread and stops when the client goes.
#[server(
    prefix = "/api",
    endpoint = "render/math",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn render_math(items: Vec<MathItem>) -> Result<Vec<Option<String>>, ApiError> {
    use crate::server::rich;
    let (_state, _who) = crate::server::http::request::caller()?;
    if items.len() > rich::MAX_FORMULAS {
        return Err(
            crate::domain::Failure::of(crate::domain::ErrorCode::BadRequest, false)
                .with(
                    "detail",
                    format!("at most {} formulas a request", rich::MAX_FORMULAS),
                )
                .into(),
        );
    }
    Ok(crate::server::rich_work::run(move |cancelled| rich::mathml_all(&items, cancelled)).await?)
}

/// Highlighted HTML for each code block, in order; `null` for a block that stays plain: a
/// language not known, a block over 100 KB or with a line over 1,000 bytes, one not done within
/// a second (two for the whole request). At most 100 blocks a request; signed-in callers only.
/// The work runs off the serving threads and stops when the client goes; a user has at most two
/// requests highlighting and eight waiting, a further one gets 429 (`rate_limited`).
#[server(
    prefix = "/api",
    endpoint = "render/code",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn render_code(items: Vec<CodeItem>) -> Result<Vec<Option<String>>, ApiError> {
    use crate::server::rich;
    let (_state, who) = crate::server::http::request::caller()?;
    if items.len() > rich::MAX_BLOCKS {
        return Err(
            crate::domain::Failure::of(crate::domain::ErrorCode::BadRequest, false)
                .with(
                    "detail",
                    format!("at most {} code blocks a request", rich::MAX_BLOCKS),
                )
                .into(),
        );
    }
    use crate::server::rich_work;
    let _place = rich_work::user_place(&who.user().id).await?;
    Ok(rich_work::run(move |cancelled| rich::highlight_all(&items, cancelled)).await?)
}
