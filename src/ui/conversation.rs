//! The scrolling conversation. It follows new text only while the reader is at the bottom;
//! otherwise a "Jump to latest" button appears.

use leptos::html::Main;
use leptos::prelude::*;

use super::message_bubble::MessageBubble;
use crate::client::controller::ChatController;

/// How close to the bottom (px) still counts as "at the bottom".
const BOTTOM_SLACK: i32 = 48;

#[component]
pub fn Conversation() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let scroller = NodeRef::<Main>::new();
    let at_bottom = RwSignal::new(true);

    let scroll_to_bottom = move || {
        if let Some(el) = scroller.get_untracked() {
            el.set_scroll_top(el.scroll_height());
        }
    };

    Effect::new(move |_| {
        chat.revision.get();
        chat.entries.with(Vec::len);
        if at_bottom.get_untracked() {
            request_animation_frame(scroll_to_bottom);
        }
    });

    Effect::new(move |previous: Option<usize>| {
        let count = chat.entries.with(Vec::len);
        if previous.is_some_and(|p| count > p) && chat.is_running() {
            at_bottom.set(true);
            request_animation_frame(scroll_to_bottom);
        }
        count
    });

    view! {
        <main
            class="conversation"
            aria-label="Conversation"
            node_ref=scroller
            on:scroll=move |_| {
                if let Some(el) = scroller.get_untracked() {
                    at_bottom.set(el.scroll_height() - el.scroll_top() - el.client_height() <= BOTTOM_SLACK);
                }
            }
        >
            <ol class="messages">
                <Show when=move || chat.entries.with(Vec::is_empty)>
                    <li class="empty-state">
                        <p>"Ask anything. Reasoning models show their thinking here, live, above the answer."</p>
                    </li>
                </Show>
                <For each=move || chat.entries.get() key=|entry| entry.id.clone() let:entry>
                    <li class="message-row">
                        <MessageBubble entry/>
                    </li>
                </For>
            </ol>
            <Show when=move || !at_bottom.get()>
                <button
                    type="button"
                    class="jump-latest"
                    on:click=move |_| {
                        at_bottom.set(true);
                        scroll_to_bottom();
                    }
                >
                    "↓ Jump to latest"
                </button>
            </Show>
        </main>
    }
}
