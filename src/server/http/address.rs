//! A conversation's address (`/c/<id>`, `domain::page::Address`) as the server answers it: the
//! chat page when the conversation is the caller's, the not-found page with a 404 when it is
//! not (another user's, deleted, never made: the same answer for each). A conversation found
//! goes with the request ([`ChatFound`]), so the render draws its last messages.

use axum::body::Body;
use axum::http::Request;

use crate::domain::history::Page;
use crate::domain::page::{Address, ChatFound, ChatMissing};
use crate::server::auth::Caller;
use crate::server::config::HistoryMode;
use crate::server::state::AppState;
use crate::server::store::StoreError;

/// The page request, marked [`ChatMissing`] when its address names a conversation the signed-in
/// caller does not have on the server, and carrying it ([`ChatFound`]) when it does. History kept in the browser is the browser's to judge;
/// a database that cannot be asked renders the chat, which says so when it asks.
pub async fn attach(state: &AppState, mut req: Request<Body>) -> Request<Body> {
    if state.config.history != HistoryMode::Server {
        return req;
    }
    let Some(Caller::Known(who)) = req.extensions().get::<Caller>().cloned() else {
        return req;
    };
    let address = Address::of(req.uri().path(), &state.config.base_path);
    let Some(id) = address.chat() else {
        return req;
    };
    let page = Page {
        last: Some(ChatFound::MESSAGES),
        before: None,
    };
    match state
        .store
        .scoped(&who)
        .conversation_page(id, false, page)
        .await
    {
        Ok(conversation) => {
            req.extensions_mut()
                .insert(ChatFound(std::sync::Arc::new(conversation)));
        }
        Err(StoreError::NotFound) => {
            req.extensions_mut().insert(ChatMissing);
        }
        Err(_) => {}
    }
    req
}
