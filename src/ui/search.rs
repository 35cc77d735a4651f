//! Searching the server-side history from the sidebar. The form is part of the sidebar's
//! `server_sidebar` chunk (see [`super::sidebar`]); asking the server and showing the results are
//! the `search` chunk, fetched when the box is focused.

use leptos::prelude::*;

use leptos::wasm_split::SplitLoaderError;

use super::chunks::prefetch;
use crate::client::controller::ChatController;
use crate::domain::history::{HitKind, SearchHit};

/// Search across the user's conversations, answers by default, thinking when asked; each
/// result shows the match in context and opens its message. The form is on the page; asking
/// the server and showing the results are the `search` chunk, fetched when the box is focused.
#[component]
pub fn Search(close: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
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
                                        <span class="search-title" dir="auto">{crate::i18n::title(crate::ui::locale::tr(), &hit.conversation_title)}</span>
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

/// A search snippet with its matched parts marked; text only, no HTML.
fn snippet(parts: &[crate::domain::history::SnippetPart]) -> impl IntoView {
    parts
        .iter()
        .map(|p| {
            if p.hit {
                view! { <mark>{p.text.clone()}</mark> }.into_any()
            } else {
                view! { <span>{p.text.clone()}</span> }.into_any()
            }
        })
        .collect::<Vec<_>>()
}
