//! The "Sources" list under an answer: each source the answer may cite, numbered as its
//! `[n]` markers count, with its title and domain. Nothing is fetched: a source is a link.

use leptos::prelude::*;

use crate::client::turn_state::TurnState;
use crate::domain::SourceRef;
use crate::markdown::LINK_ATTRIBUTES;

/// The address a source links to, by the renderer's URL rules (an absolute `http`/`https`
/// address in canonical form); `None` shows the source as text only.
fn link_for(url: &str) -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    let parse = super::sanitize::browser_url;
    #[cfg(not(target_arch = "wasm32"))]
    let parse = crate::markdown::whatwg_url;
    crate::markdown::safe_url(url, parse)
        .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
}

/// The sources of one answer, when it has any.
#[component]
pub fn SourcesList(turn: RwSignal<TurnState>) -> impl IntoView {
    // Sources only ever arrive: their count says when the list changed, so a frame of answer
    // text neither copies nor re-renders it.
    let t = crate::ui::locale::tr();
    let count = Memo::new(move |_| turn.with(|t| t.sources.len()));
    move || {
        (count.get() > 0).then(|| {
            let list = turn.with_untracked(|t| t.sources.clone());
            view! {
                <section class="sources" aria-label=t.sources>
                    <h3 class="sources-title">{t.sources}</h3>
                    <ol class="sources-list">
                        {list.into_iter().map(|s| view! { <SourceItem source=s/> }).collect_view()}
                    </ol>
                </section>
            }
        })
    }
}

#[component]
fn SourceItem(source: SourceRef) -> impl IntoView {
    let title = source.label().to_string();
    let domain = source.domain().to_string();
    let name = view! { <span class="source-title" dir="auto">{title}</span> };
    let (target, rel) = (LINK_ATTRIBUTES[0].1, LINK_ATTRIBUTES[1].1);
    let body = match link_for(&source.url) {
        Some(href) => {
            view! { <a class="source-link" href=href target=target rel=rel>{name}</a> }.into_any()
        }
        None => name.into_any(),
    };
    view! {
        <li value=source.n.to_string()>
            {body}
            <span class="source-domain">{domain}</span>
        </li>
    }
}
