//! The conversation: one keyed bubble per message, so a token re-renders only its own bubble.

use leptos::prelude::*;

use super::message_bubble::MessageBubble;
use crate::client::controller::ChatController;

#[component]
pub fn MessageList() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    view! {
        <ol class="messages">
            <Show when=move || chat.entries.with(|e| e.is_empty())>
                <li class="empty-state">
                    <p>"Ask anything. Reasoning models show their thinking here, live, above the answer."</p>
                </li>
            </Show>
            <For each=move || chat.entries.get() key=|entry| entry.id let:entry>
                <li class="message-row">
                    <MessageBubble entry/>
                </li>
            </For>
        </ol>
    }
}
