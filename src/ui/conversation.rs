//! The conversation's place on the page. Its scrolling view
//! ([`super::scrolling_conversation::ScrollingConversation`]) comes with the bubbles' code, in
//! their chunk (see [`message_code`]): an empty chat, which is what every first load shows, needs
//! none of it. Until the chunk is here [`Conversation`] shows the plain view, which is also what
//! the reader gets if the chunk cannot be fetched: the messages as plain text, following new text
//! at the bottom.

use leptos::html::Main;
use leptos::prelude::*;

use super::message_code::{self, Fetch, PlainBubble};
use super::scrolling_conversation::BOTTOM_SLACK;
use crate::client::controller::{ChatController, NoticeKind};

/// The messages of the open chat: the scrolling view once the bubbles' code is here, the plain
/// view until then (and if it cannot be had).
#[component]
pub fn Conversation() -> impl IntoView {
    super::first_paint::FirstPaint::provide();
    let ready = Memo::new(move |_| matches!(message_code::state(), Fetch::Ready(_)));
    move || match (ready.get(), untrack(message_code::state)) {
        (true, Fetch::Ready(code)) => untrack(code.conversation),
        _ => view! { <PlainConversation/> }.into_any(),
    }
}

/// The conversation before the bubbles' code is here: an empty chat's prompt, and the wish for
/// that code as soon as there is a message to show. If it cannot be fetched the reader is told,
/// and the messages show as plain text (nothing is lost), following new text while the reader is
/// at the bottom; the next wish (a keystroke in the composer) fetches it again. Rows are rebuilt
/// whole on each change: this view is a fallback, kept small for the first load.
#[component]
fn PlainConversation() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let scroller = NodeRef::<Main>::new();
    let at_bottom = StoredValue::new(true);
    let failed = move || matches!(message_code::state(), Fetch::Failed);
    Effect::new(move |_| {
        if failed() {
            chat.notify(
                NoticeKind::Server,
                chat.locale.catalogue().part_not_loaded.into(),
            );
        } else if !chat.entries.with(Vec::is_empty) {
            message_code::want();
        }
    });
    Effect::new(move |_| {
        if !failed() {
            return;
        }
        chat.entries.with(|e| {
            if let Some(turn) = e
                .last()
                .and_then(|m| m.versions.with(|v| v.last().copied()))
            {
                turn.track();
            }
        });
        if at_bottom.get_value() {
            request_animation_frame(move || {
                if let Some(el) = scroller.get_untracked() {
                    el.set_scroll_top(el.scroll_height());
                }
            });
        }
    });
    let t = crate::ui::locale::tr();
    view! {
        <main
            class="conversation"
            aria-label=t.conversation
            node_ref=scroller
            on:scroll=move |_| {
                if let Some(el) = scroller.get_untracked() {
                    at_bottom.set_value(el.scroll_height() - el.scroll_top() - el.client_height() <= BOTTOM_SLACK);
                }
            }
        >
            <ol class="messages">
                {move || chat.entries.with(Vec::is_empty).then(|| view! { <super::empty_chat::EmptyChat/> })}
                {move || failed().then(|| plain_rows(chat))}
            </ol>
            <div class="scroll-spacer" aria-hidden="true"></div>
        </main>
    }
}

/// Every loaded message as plain text, after a way to load those still on the server.
fn plain_rows(chat: ChatController) -> Vec<AnyView> {
    let l = crate::ui::locale::locale();
    let on_server = chat.earlier.get();
    let earlier = (on_server > 0).then(|| {
        view! {
            <li class="earlier-messages">
                <button type="button" class="action" on:click=move |_| chat.load_earlier(on_server)>
                    {l.count(&l.catalogue().show_earlier_messages, on_server as u64)}
                </button>
            </li>
        }
        .into_any()
    });
    earlier
        .into_iter()
        .chain(
            chat.entries.get().into_iter().map(|entry| {
                view! { <li class="message-row"><PlainBubble entry/></li> }.into_any()
            }),
        )
        .collect()
}
