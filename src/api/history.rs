//! Server-side history over the API: workspaces, conversations, the text of a thinking block,
//! versions, search. Every body reaches the store through the caller's scope, so another
//! user's row answers 404 with the same body as a missing one.

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::history::{
    Conversation, ConversationSummary, Import, Page, Preferences, SearchHit, Workspace,
};

/// The signed-in user's workspaces, the default one first.
#[server(
    prefix = "/api",
    endpoint = "workspaces/list",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn list_workspaces() -> Result<Vec<Workspace>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .workspaces()
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// A new workspace.
#[server(
    prefix = "/api",
    endpoint = "workspaces/create",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn create_workspace(name: String) -> Result<Workspace, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .create_workspace(&name)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Renames a workspace.
#[server(
    prefix = "/api",
    endpoint = "workspaces/rename",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn rename_workspace(id: String, name: String) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .rename_workspace(&id, &name)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// The conversations of a workspace (the default one when none is named), newest first; with
/// `deleted`, the deleted ones that can still be restored.
#[server(
    prefix = "/api",
    endpoint = "conversations/list",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn list_conversations(
    workspace: Option<String>,
    #[server(default)] deleted: bool,
) -> Result<Vec<ConversationSummary>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .conversations(workspace.as_deref(), deleted)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// A conversation: messages, versions and block headers; reasoning text loads separately.
/// With `page`, only those messages (a long conversation opens on its last ones); `first` in
/// the answer says how many come before them.
#[server(
    prefix = "/api",
    endpoint = "conversations/get",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn get_conversation(
    id: String,
    #[server(default)] page: Page,
) -> Result<Conversation, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .conversation_page(&id, false, page)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Renames a conversation.
#[server(
    prefix = "/api",
    endpoint = "conversations/rename",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn rename_conversation(id: String, title: String) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .rename_conversation(&id, &title)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Pins a conversation on top of the list, or unpins it.
#[server(
    prefix = "/api",
    endpoint = "conversations/pin",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn pin_conversation(id: String, pinned: bool) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .set_pinned(&id, pinned)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Replaces a conversation's tags; answers them as kept (trimmed, repeats left out). More
/// than ten, or one too long, is a 400.
#[server(
    prefix = "/api",
    endpoint = "conversations/tags",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn tag_conversation(id: String, tags: Vec<String>) -> Result<Vec<String>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .set_tags(&id, &tags)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Moves a conversation to another of the reader's workspaces.
#[server(
    prefix = "/api",
    endpoint = "conversations/move",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn move_conversation(id: String, workspace: String) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .move_conversation(&id, &workspace)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Deletes a conversation; it can be restored until `PONDER_DELETE_GRACE` has passed. Returns
/// when it was deleted (ms).
#[server(
    prefix = "/api",
    endpoint = "conversations/delete",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn delete_conversation(id: String) -> Result<i64, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .delete_conversation(&id)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Undoes a delete.
#[server(
    prefix = "/api",
    endpoint = "conversations/restore",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn restore_conversation(id: String) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .restore_conversation(&id)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// The reasoning text of one block, loaded when the reader opens it.
#[server(
    prefix = "/api",
    endpoint = "blocks/text",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn block_text(id: String) -> Result<String, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .block_text(&id)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Keeps the reader's open/closed choice for a block.
#[server(
    prefix = "/api",
    endpoint = "blocks/open",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn set_block_open(id: String, open: Option<bool>) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .set_block_open(&id, open)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Keeps the reader's choice for a block by its place: block `index` of version `version` of
/// `message` (a block streamed on the page has no id yet).
#[server(
    prefix = "/api",
    endpoint = "blocks/open-at",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn set_block_open_at(
    message: String,
    version: usize,
    index: usize,
    open: Option<bool>,
) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .set_block_open_at(&message, version, index, open)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// A new conversation with the history of `id` up to and including message `upto`.
#[server(
    prefix = "/api",
    endpoint = "conversations/branch",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn branch_conversation(
    id: String,
    upto: String,
) -> Result<ConversationSummary, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .branch_conversation(&id, &upto)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// A conversation with every reasoning text, for an export.
#[server(
    prefix = "/api",
    endpoint = "conversations/export",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn export_conversation(id: String) -> Result<Conversation, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .conversation(&id, true)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Shows another version of a message.
#[server(
    prefix = "/api",
    endpoint = "messages/version",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn set_active_version(id: String, version: usize) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .set_active_version(&id, version)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// The signed-in user's messages holding every word of `query`; with `thinking`, the
/// reasoning is searched too.
#[server(
    prefix = "/api",
    endpoint = "search",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn search(
    query: String,
    #[server(default)] thinking: bool,
) -> Result<Vec<SearchHit>, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .search(&query, thinking, 50)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Brings a conversation in (a browser's saved chat, a JSON export) into a workspace; a
/// conversation imported before (the same key) is not made again. Returns whether it was new.
#[server(
    prefix = "/api",
    endpoint = "conversations/import",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn import_conversation(
    workspace: Option<String>,
    conversation: Import,
) -> Result<bool, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .import_conversation(workspace.as_deref(), &conversation)
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// The signed-in user's preferences for a workspace (none: the default one).
#[server(
    prefix = "/api",
    endpoint = "preferences/get",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn get_preferences(workspace: Option<String>) -> Result<Preferences, ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    Ok(state
        .store
        .scoped(&who)
        .preferences(workspace.as_deref())
        .await
        .map_err(crate::server::http::request::store_error)?)
}

/// Keeps the signed-in user's preferences for a workspace (none: the default one), whole.
#[server(
    prefix = "/api",
    endpoint = "preferences/set",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn set_preferences(
    workspace: Option<String>,
    preferences: Preferences,
) -> Result<(), ApiError> {
    let (state, who) = crate::server::http::request::caller()?;
    state
        .store
        .scoped(&who)
        .set_preferences(workspace.as_deref(), &preferences)
        .await
        .map_err(|e| crate::server::http::request::store_error(e).into())
}

/// Waits (at most 15 s) for the title the model writes for conversation `id` after its first
/// answer: that title once written (or the reader's, if they renamed it), `null` when titles by
/// the model are off or none came in time.
#[server(
    prefix = "/api",
    endpoint = "titles/wait",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn wait_for_title(id: String) -> Result<Option<String>, ApiError> {
    use crate::server::http::request::{caller, store_error};
    use std::time::Duration;
    let (state, who) = caller()?;
    let me = state.store.scoped(&who);
    let until = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (title, made_of_first_words) = me.title_of(&id).await.map_err(store_error)?;
        if !made_of_first_words {
            return Ok(Some(title));
        }
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        if !state.config.titles || left.is_zero() {
            return Ok(None);
        }
        state.titles.wait(left.min(Duration::from_secs(1))).await;
    }
}
