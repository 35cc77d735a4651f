//! Non-blocking notices (storage problems, conflicts), each shown once and dismissable.

use leptos::prelude::*;

use super::icons::{icon, Icon};
use crate::client::controller::{Notice, NoticeKind};

/// The notices at the top of the page: what went wrong with saving or reading chats, shown
/// without blocking the chat, each until the reader dismisses it. A notice has a place of its own
/// per kind (one at a time of each), so showing or dismissing one leaves the others' elements
/// alone, without a keyed list's code in the first load.
#[component]
pub fn Notices(
    /// The notices shown, one per kind.
    #[prop(into)]
    notices: Signal<Vec<Notice>>,
    /// The reader dismissed the notice of this kind.
    on_dismiss: Callback<NoticeKind>,
    /// The reader asked to bring back the deleted conversation of this id.
    on_undo: Callback<String>,
) -> impl IntoView {
    let t = crate::ui::locale::tr();
    let places = NoticeKind::ALL
        .into_iter()
        .map(|kind| {
            let shown =
                Memo::new(move |_| notices.with(|n| n.iter().find(|x| x.kind == kind).cloned()));
            move || {
                shown.get().map(|notice| {
                    view! {
                        <div class="notice" role="status" data-kind=kind.name()>
                            <p>{notice.text}</p>
                            {notice.undo.map(|id| view! {
                                <button type="button" class="action" on:click=move |_| on_undo.run(id.clone())>{t.undo}</button>
                            })}
                            <button type="button" class="icon-button" aria-label=t.dismiss_notice on:click=move |_| on_dismiss.run(kind)>
                                {icon(Icon::Close)}
                            </button>
                        </div>
                    }
                })
            }
        })
        .collect::<Vec<_>>();
    view! {
        <div class="notices" role="region" aria-label=t.notices>
            {places}
        </div>
    }
}
