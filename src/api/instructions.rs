//! System instructions over the API: what applies to a chat, level by level with the text the
//! model is sent, and setting the reader's own, a workspace's or a conversation's.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::instructions::{Instructions, Level};

/// The instructions that apply to `conversation`, or to a new chat in `workspace` (the default
/// one), answered by `model` (none: the conversation's, else the default model). The
/// administrator's level for that model comes first.
#[server(
    prefix = "/api",
    endpoint = "instructions/get",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn get_instructions(
    #[server(default)] conversation: Option<String>,
    #[server(default)] workspace: Option<String>,
    #[server(default)] model: Option<String>,
) -> Result<Instructions, ApiError> {
    use crate::server::http::request::{caller, store_error};
    let (state, who) = caller()?;
    let me = state.store.scoped(&who);
    let model = match (model, &conversation) {
        (Some(model), _) => model,
        (None, Some(id)) => me
            .conversation_model(id)
            .await
            .map_err(store_error)?
            .0
            .unwrap_or_else(|| state.config.model.clone()),
        (None, None) => state.config.model.clone(),
    };
    let (personal, workspace, conversation) =
        if state.config.history == crate::server::config::HistoryMode::Browser {
            (
                me.personal_instructions().await.map_err(store_error)?,
                None,
                None,
            )
        } else {
            let levels = me
                .instruction_levels(conversation.as_deref(), workspace.as_deref())
                .await
                .map_err(store_error)?;
            (levels.personal, levels.workspace, levels.conversation)
        };
    Ok(crate::server::instructions::levels(
        &state.config,
        &model,
        personal,
        workspace,
        conversation,
    ))
}

/// Sets one of the reader's levels: `personal` (no `id`), a `workspace` or a `conversation` by
/// `id`. Blank text clears it. The `model` level is the administrator's: 403.
#[server(
    prefix = "/api",
    endpoint = "instructions/set",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn set_instructions(
    level: Level,
    #[server(default)] id: Option<String>,
    text: String,
) -> Result<(), ApiError> {
    use crate::domain::{ErrorCode, Failure};
    use crate::server::http::request::{caller, store_error};
    if !level.editable() {
        return Err(Failure::of(ErrorCode::AdminOnly, false)
            .with(
                "detail",
                "the model's instructions are set by the administrator",
            )
            .into());
    }
    let text = crate::domain::instructions::checked(&text).map_err(|why| {
        ApiError::from(Failure::of(ErrorCode::BadRequest, false).with("detail", why))
    })?;
    let (state, who) = caller()?;
    Ok(state
        .store
        .scoped(&who)
        .set_instructions(level, id.as_deref(), text.as_deref())
        .await
        .map_err(store_error)?)
}
