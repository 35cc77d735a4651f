//! The sidebar (a drawer on narrow screens): New chat, workspaces, search, the offer to import
//! this browser's chats, and the conversation list (`conversation_list`, a chunk fetched once
//! there is a chat to list). The workspaces and the search form, which only server-side history
//! has, are the `server_sidebar` chunk, fetched once the page knows it has that history: they
//! come in beside the list, which the page asks the server for at the same moment.

use leptos::prelude::*;

use leptos::wasm_split::SplitLoaderError;

use super::conversation_list::{conversation_list_code, ConversationListCode};
use super::icons::{icon, Icon};
use super::search::Search;
use super::workspaces::Workspaces;
use crate::client::controller::ChatController;

/// The saved conversations (a drawer on narrow screens): new chat, open, rename, delete.
#[component]
pub fn Sidebar(
    /// Whether the drawer is open on a narrow screen.
    open: RwSignal<bool>,
) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let list = RwSignal::new(None::<ConversationListCode>);
    let server_parts = RwSignal::new(None::<ServerPartsCode>);
    // Fetched once the page has server-side history; after a failed fetch, tried again when the
    // list changes (it is asked for again after every turn).
    Effect::new(move |_| {
        chat.conversations.track();
        if server_parts.get_untracked().is_none() && chat.server.get() {
            chat.when_loaded(server_parts_code(), move |code| {
                server_parts.set(Some(code))
            });
        }
    });
    Effect::new(move |_| {
        if list.get_untracked().is_none() && chat.conversations.with(|c| !c.is_empty()) {
            chat.when_loaded(conversation_list_code(), move |code| list.set(Some(code)));
        }
    });
    view! {
        <div class="drawer-backdrop" class:open=move || open.get() on:click=move |_| open.set(false)></div>
        <nav id="conversations" class="sidebar" class:open=move || open.get() aria-label=t.conversations>
            <button
                type="button"
                class="new-chat"
                on:click=move |_| {
                    chat.new_chat();
                    open.set(false);
                }
            >
                {icon(Icon::Plus)}
                {t.new_chat}
            </button>
            {move || {
                let code = server_parts.get().filter(|_| chat.server.get())?;
                Some(code(Callback::new(move |()| open.set(false))))
            }}
            <Show when=move || { chat.importable.get() > 0 }>
                <div class="import-offer" role="region" aria-label=t.chats_in_browser>
                    <p>{move || l.count(&t.browser_holds_chats, chat.importable.get() as u64)}</p>
                    <button type="button" class="action" on:click=move |_| chat.import_local()>{t.import_them}</button>
                    <button type="button" class="action" on:click=move |_| chat.decline_import()>{t.not_now}</button>
                </div>
            </Show>
            // The list's code is a chunk fetched once there is a chat to list.
            {move || list.get().map(|code| code(Callback::new(move |()| open.set(false))))}
        </nav>
    }
}

/// Builds the workspaces and the search form; `close` closes the drawer.
type ServerPartsCode = fn(Callback<()>) -> AnyView;

/// The split point of the sidebar's server-side parts.
#[leptos::wasm_split::wasm_split(server_sidebar, wasm_split_path = leptos::wasm_split, fallible)]
fn server_parts_code() -> Result<ServerPartsCode, SplitLoaderError> {
    Ok(|close| {
        view! {
            <Workspaces/>
            <Search close=move || close.run(())/>
        }
        .into_any()
    })
}
