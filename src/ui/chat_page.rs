//! The one chat page: message list, composer, and the status region.

use leptos::prelude::*;

use super::composer::Composer;
use super::message_list::MessageList;
use crate::client::controller::{now_ms, ChatController};

/// A clock that ticks every second while the page is open, for live elapsed times.
#[derive(Clone, Copy)]
pub struct Clock(pub RwSignal<f64>);

#[component]
pub fn ChatPage() -> impl IntoView {
    let chat = ChatController::new();
    provide_context(chat);
    let clock = Clock(RwSignal::new(0.0));
    provide_context(clock);
    let hydrated = RwSignal::new(false);

    Effect::new(move |_| {
        chat.guard_secs.set(crate::app::guard_secs());
        clock.0.set(now_ms());
        let handle = set_interval_with_handle(
            move || clock.0.set(now_ms()),
            std::time::Duration::from_secs(1),
        );
        on_cleanup(move || {
            if let Ok(h) = handle {
                h.clear();
            }
        });
        hydrated.set(true);
    });

    view! {
        <div class="chat-page" data-hydrated=move || hydrated.get().then_some("true")>
            <header class="top-bar">
                <h1 class="brand">"Ponder"</h1>
            </header>
            <main class="conversation" aria-label="Conversation">
                <MessageList/>
            </main>
            <Composer/>
        </div>
    }
}
