//! The thinking block: `<details class="thinking">` above the answer, open while it streams,
//! collapsed on the first answer delta, and the reader's to control once touched.

use leptos::prelude::*;

use super::chat_page::Clock;
use crate::client::labels;
use crate::client::turn_state::{BlockState, BlockStatus, TurnPhase, TurnState};
use crate::markdown;

#[component]
pub fn ThinkingBlock(turn: RwSignal<TurnState>, index: usize) -> impl IntoView {
    let clock = expect_context::<Clock>();
    let block = Memo::new(move |_| turn.with(|t| t.blocks.get(index).cloned().unwrap_or_default()));
    let status = Memo::new(move |_| block.with(|b| b.status));
    let answer_started =
        Memo::new(move |_| turn.with(|t| t.phase != TurnPhase::Thinking || !t.answer.is_empty()));
    let open = RwSignal::new(block.with_untracked(|b| b.status == BlockStatus::Streaming));
    let owned = RwSignal::new(false);

    Effect::new(move |_| {
        if answer_started.get() && !owned.get_untracked() {
            open.set(false);
        }
    });

    let label = move || {
        let now = clock.0.get();
        block.with(|b| labels::header(b, now))
    };
    let html = Memo::new(move |_| block.with(|b: &BlockState| markdown::render(&b.text)));

    view! {
        <details
            class="thinking"
            class:streaming=move || status.get() == BlockStatus::Streaming
            class:interrupted=move || status.get() == BlockStatus::Interrupted
            prop:open=move || open.get()
            on:toggle=move |ev| {
                let now_open = event_target::<web_sys::HtmlDetailsElement>(&ev).open();
                open.set(now_open);
            }
        >
            <summary on:click=move |_| owned.set(true)>
                <span class="thinking-indicator" aria-hidden="true"></span>
                <span class="thinking-label">{label}</span>
            </summary>
            <div class="thinking-text markdown" inner_html=move || html.get()></div>
        </details>
    }
}
