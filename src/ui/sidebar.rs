//! The sidebar (a drawer on narrow screens): New chat, workspaces, search, the offer to import
//! this browser's chats, and the conversation list (`conversation_list`, a chunk fetched once
//! there is a chat to list).

use leptos::prelude::*;

use leptos::wasm_split::SplitLoaderError;

use super::chunks::prefetch;
use super::conversation_list::{conversation_list_code, ConversationListCode};
use super::icons::{icon, Icon};
use crate::client::controller::ChatController;
use crate::domain::history::{HitKind, SearchHit};

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
            <Show when=move || chat.server.get()>
                <Workspaces/>
                <Search close=move || open.set(false)/>
            </Show>
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

/// The workspace shown, a switcher between them, and making or renaming one.
#[component]
fn Workspaces() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let naming = RwSignal::new(None::<bool>);
    let draft = RwSignal::new(String::new());
    let t = crate::ui::locale::tr();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let name = draft.get_untracked();
        if !name.trim().is_empty() {
            match naming.get_untracked() {
                Some(true) => chat.create_workspace(name),
                Some(false) => chat.rename_workspace(name),
                None => {}
            }
        }
        naming.set(None);
    };
    view! {
        <div class="workspaces">
            <label class="workspace-picker">
                {t.workspace}
                <select
                    prop:value=move || chat.workspace.get().unwrap_or_default()
                    on:change=move |ev| chat.switch_workspace(event_target_value(&ev))
                >
                    <For each=move || chat.workspaces.get() key=|w| (w.id.clone(), w.name.clone()) let:w>
                        <option value=w.id.clone() selected=move || chat.workspace.get().as_deref() == Some(w.id.as_str())>{workspace_name(&w.name, t)}</option>
                    </For>
                </select>
            </label>
            {move || match naming.get() {
                None => view! {
                    <div class="workspace-actions">
                        <button type="button" class="action" on:click=move |_| { draft.set(String::new()); naming.set(Some(true)); chat.want_list_actions(); }>{t.new_workspace}</button>
                        <button type="button" class="action" on:click=move |_| {
                            let name = chat.workspaces.with_untracked(|l| {
                                let id = chat.workspace.get_untracked();
                                l.iter().find(|w| Some(&w.id) == id.as_ref()).map(|w| workspace_name(&w.name, t))
                            });
                            draft.set(name.unwrap_or_default());
                            naming.set(Some(false));
                            chat.want_list_actions();
                        }>{t.rename_workspace}</button>
                    </div>
                }.into_any(),
                Some(creating) => view! {
                    <form class="rename-form" on:submit=submit>
                        <input
                            type="text"
                            aria-label=if creating { t.new_workspace_name } else { t.workspace_name }
                            prop:value=move || draft.get()
                            on:input=move |ev| draft.set(event_target_value(&ev))
                        />
                        <button type="submit" class="action">{if creating { t.create } else { t.save }}</button>
                        <button type="button" class="action" on:click=move |_| naming.set(None)>{t.cancel}</button>
                    </form>
                }.into_any(),
            }}
        </div>
    }
}

/// A workspace's name as the reader reads it: the first workspace's stored name in their
/// language, any other as its owner wrote it.
fn workspace_name(name: &str, t: &crate::i18n::Catalogue) -> String {
    if name == crate::domain::history::FIRST_WORKSPACE {
        t.first_workspace.to_string()
    } else {
        name.to_string()
    }
}

/// Search across the user's conversations, answers by default, thinking when asked; each
/// result shows the match in context and opens its message. The form is on the page; asking
/// the server and showing the results are the `search` chunk, fetched when the box is focused.
#[component]
fn Search(close: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let query = RwSignal::new(String::new());
    let thinking = RwSignal::new(false);
    let hits = RwSignal::new(None::<Vec<SearchHit>>);
    let code = RwSignal::new(None::<SearchCode>);
    let t = crate::ui::locale::tr();
    let run = move || {
        let q = query.get_untracked();
        if q.trim().is_empty() {
            hits.set(None);
            return;
        }
        let with_thinking = thinking.get_untracked();
        chat.when_loaded(search_code(), move |c| {
            code.set(Some(c));
            (c.run)(chat, q, with_thinking, hits);
        });
    };
    let close = Callback::new(move |()| close());
    view! {
        <form class="search" role="search" on:submit=move |ev| { ev.prevent_default(); run(); }>
            <input
                type="search"
                aria-label=t.search_chats
                placeholder=t.search_chats
                prop:value=move || query.get()
                on:focus=move |_| prefetch(prefetch_search())
                on:input=move |ev| {
                    query.set(event_target_value(&ev));
                    if query.get_untracked().is_empty() {
                        hits.set(None);
                    }
                }
            />
            <label class="checkbox">
                <input type="checkbox" prop:checked=move || thinking.get() on:change=move |_| { thinking.update(|t| *t = !*t); run(); }/>
                {t.include_thinking}
            </label>
        </form>
        {move || hits.get().and_then(|found| code.get().map(|c| (c.results)(chat, found, close)))}
    }
}

/// Asking for search results and showing them.
#[derive(Clone, Copy)]
struct SearchCode {
    run: fn(ChatController, String, bool, RwSignal<Option<Vec<SearchHit>>>),
    results: fn(ChatController, Vec<SearchHit>, Callback<()>) -> AnyView,
}

/// The split point of [`SearchCode`].
#[leptos::wasm_split::wasm_split(search, wasm_split_path = leptos::wasm_split, fallible, preload(prefetch_search))]
fn search_code() -> Result<SearchCode, SplitLoaderError> {
    Ok(SearchCode {
        run: run_search,
        results: search_results,
    })
}

fn run_search(
    chat: ChatController,
    query: String,
    thinking: bool,
    hits: RwSignal<Option<Vec<SearchHit>>>,
) {
    leptos::task::spawn_local(async move {
        match crate::api::history::search(query, thinking).await {
            Ok(found) => hits.set(Some(found)),
            Err(e) => chat.notify(
                crate::client::controller::NoticeKind::Server,
                crate::i18n::fill(
                    chat.locale.catalogue().search_failed,
                    &[("detail", &e.0.message)],
                ),
            ),
        }
    });
}

fn search_results(chat: ChatController, found: Vec<SearchHit>, close: Callback<()>) -> AnyView {
    let t = chat.locale.catalogue();
    view! {
        <section class="search-results" aria-label=t.search_results>
            {if found.is_empty() {
                view! { <p class="search-empty">{t.nothing_found}</p> }.into_any()
            } else {
                view! {
                    <ul>
                        {found.into_iter().map(|hit| {
                            let (conversation, message) = (hit.conversation_id.clone(), hit.message_id.clone());
                            let kind = match hit.kind {
                                HitKind::Thinking => t.hit_in_thinking,
                                HitKind::Question => t.hit_in_message,
                                HitKind::Answer => t.hit_in_answer,
                            };
                            view! {
                                <li>
                                    <button type="button" class="search-hit" on:click=move |_| {
                                        chat.open_hit(conversation.clone(), message.clone());
                                        close.run(());
                                    }>
                                        <span class="search-title" dir="auto">{hit.conversation_title.clone()}</span>
                                        <span class="search-kind">{kind}</span>
                                        <span class="search-snippet" dir="auto">{snippet(&hit.snippet)}</span>
                                    </button>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
    }
    .into_any()
}

/// A search snippet with its matched words (between `[` and `]`) marked; text only, no HTML.
fn snippet(text: &str) -> impl IntoView {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let (before, after) = rest.split_at(open);
        if !before.is_empty() {
            parts.push(view! { <span>{before.to_string()}</span> }.into_any());
        }
        match after[1..].find(']') {
            Some(close) => {
                parts.push(view! { <mark>{after[1..1 + close].to_string()}</mark> }.into_any());
                rest = &after[close + 2..];
            }
            None => {
                parts.push(view! { <span>{after.to_string()}</span> }.into_any());
                rest = "";
            }
        }
    }
    if !rest.is_empty() {
        parts.push(view! { <span>{rest.to_string()}</span> }.into_any());
    }
    parts
}
