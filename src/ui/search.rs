//! Searching the server-side history from the sidebar. The form is part of the sidebar's
//! `server_sidebar` chunk (see [`super::sidebar`]); asking the server and showing the results are
//! the `search` chunk, fetched when the box is focused.

use leptos::prelude::*;

use leptos::wasm_split::SplitLoaderError;

use super::chunks::prefetch;
use crate::client::controller::{ChatController, Reveal};
use crate::domain::history::{HitKind, SearchHit};

/// How long typing pauses before the search runs.
const TYPING_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// Search across the user's conversations as the reader types, answers by default, thinking
/// when asked; results are grouped by chat, each match in context, and open their message with
/// the match highlighted. The form is on the page; asking the server and showing the results
/// are the `search` chunk, fetched when the box is focused.
#[component]
pub fn Search(close: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let query = RwSignal::new(String::new());
    let thinking = RwSignal::new(false);
    let hits = RwSignal::new(None::<Vec<SearchHit>>);
    let code = RwSignal::new(None::<SearchCode>);
    // Each search asked has a number; only the latest one's answer is shown.
    let asked = StoredValue::new(0u64);
    let pause = StoredValue::new(None::<TimeoutHandle>);
    let t = crate::ui::locale::tr();
    let run = move || {
        if let Some(h) = pause.try_update_value(Option::take).flatten() {
            h.clear();
        }
        let number = asked.get_value() + 1;
        asked.set_value(number);
        let q = query.get_untracked();
        if q.trim().is_empty() {
            hits.set(None);
            return;
        }
        let with_thinking = thinking.get_untracked();
        let answered = Callback::new(move |found: Vec<SearchHit>| {
            if asked.get_value() == number {
                hits.set(Some(found));
            }
        });
        chat.when_loaded(search_code(), move |c| {
            code.set(Some(c));
            (c.run)(chat, q, with_thinking, answered);
        });
    };
    let typed = move || {
        if let Some(h) = pause.try_update_value(Option::take).flatten() {
            h.clear();
        }
        if query.get_untracked().trim().is_empty() {
            run();
        } else if let Ok(h) = set_timeout_with_handle(run, TYPING_PAUSE) {
            pause.set_value(Some(h));
        }
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
                    typed();
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
    run: fn(ChatController, String, bool, Callback<Vec<SearchHit>>),
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
    answered: Callback<Vec<SearchHit>>,
) {
    leptos::task::spawn_local(async move {
        match crate::api::history::search(query, thinking).await {
            Ok(found) => answered.run(found),
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
    let groups = by_chat(found);
    view! {
        <section class="search-results" aria-label=t.search_results>
            {if groups.is_empty() {
                view! { <p class="search-empty">{t.nothing_found}</p> }.into_any()
            } else {
                view! {
                    <ul class="search-groups">
                        {groups.into_iter().map(|hits| {
                            let title = crate::i18n::title(crate::ui::locale::tr(), &hits[0].conversation_title);
                            view! {
                                <li class="search-group">
                                    <span class="search-title" dir="auto">{title.clone()}</span>
                                    <ul>
                                        {hits.into_iter().map(|hit| hit_button(chat, hit, title.clone(), close)).collect_view()}
                                    </ul>
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

/// The hits of one chat after another, each chat where its best hit ranked, its hits in rank.
fn by_chat(found: Vec<SearchHit>) -> Vec<Vec<SearchHit>> {
    let mut groups: Vec<Vec<SearchHit>> = Vec::new();
    for hit in found {
        match groups
            .iter_mut()
            .find(|g| g[0].conversation_id == hit.conversation_id)
        {
            Some(group) => group.push(hit),
            None => groups.push(vec![hit]),
        }
    }
    groups
}

fn hit_button(
    chat: ChatController,
    hit: SearchHit,
    title: String,
    close: Callback<()>,
) -> impl IntoView {
    let t = chat.locale.catalogue();
    let kind = match hit.kind {
        HitKind::Thinking => t.hit_in_thinking,
        HitKind::Question => t.hit_in_message,
        HitKind::Answer => t.hit_in_answer,
    };
    let mut words: Vec<String> = hit
        .snippet
        .iter()
        .filter(|p| p.hit && !p.text.trim().is_empty())
        .map(|p| p.text.trim().to_string())
        .collect();
    words.dedup();
    let reveal = Reveal {
        message: hit.message_id.clone(),
        words,
        in_thinking: hit.kind == HitKind::Thinking,
    };
    let conversation = hit.conversation_id.clone();
    view! {
        <li>
            <button
                type="button"
                class="search-hit"
                aria-label=format!("{title}, {kind}: {}", hit.snippet.iter().map(|p| p.text.as_str()).collect::<String>())
                on:click=move |_| {
                    chat.open_hit(conversation.clone(), reveal.clone());
                    close.run(());
                }
            >
                <span class="search-kind">{kind}</span>
                <span class="search-snippet" dir="auto">{snippet(&hit.snippet)}</span>
            </button>
        </li>
    }
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
