//! A message bubble: the user's text, or the assistant's thinking blocks above its answer.

use leptos::prelude::*;

use super::thinking_block::ThinkingBlock;
use crate::client::controller::{ChatController, Entry};
use crate::client::turn_state::{TurnPhase, TurnState};
use crate::domain::Role;
use crate::markdown;

#[component]
pub fn MessageBubble(entry: Entry) -> impl IntoView {
    match (entry.role, entry.turn) {
        (Role::Assistant, Some(turn)) => view! { <AssistantBubble turn/> }.into_any(),
        _ => view! {
            <article class="bubble user" aria-label="Message from you">
                <div class="bubble-body" dir="auto">{entry.text}</div>
            </article>
        }
        .into_any(),
    }
}

#[component]
fn AssistantBubble(turn: RwSignal<TurnState>) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let block_count = Memo::new(move |_| turn.with(|t| t.blocks.len()));
    let phase = Memo::new(move |_| turn.with(|t| t.phase));
    let answer_html = Memo::new(move |_| turn.with(|t| markdown::render(&t.answer)));
    let fallback = Memo::new(move |_| turn.with(|t| t.fallback_text()));
    let error = Memo::new(move |_| turn.with(|t| t.error.clone()));
    let wants_retry = Memo::new(move |_| turn.with(|t| t.wants_retry()));
    let waiting = Memo::new(move |_| {
        turn.with(|t| t.phase == TurnPhase::Thinking && t.blocks.is_empty() && t.answer.is_empty())
    });

    view! {
        <article
            class="bubble assistant"
            class:error=move || phase.get() == TurnPhase::Error
            aria-label="Message from the assistant"
            aria-busy=move || phase.get().is_running().to_string()
        >
            <div class="avatar" aria-hidden="true">"P"</div>
            <div class="bubble-main">
                <For each=move || 0..block_count.get() key=|i| *i let:index>
                    <ThinkingBlock turn index/>
                </For>
                <Show when=move || waiting.get()>
                    <div class="typing" aria-hidden="true"><span></span><span></span><span></span></div>
                </Show>
                <div class="answer markdown" dir="auto" inner_html=move || answer_html.get()></div>
                {move || fallback.get().map(|text| view! { <p class="fallback">{text}</p> })}
                {move || error.get().map(|e| view! { <p class="error-message" role="alert">{e.message}</p> })}
                <Show when=move || phase.get() == TurnPhase::Stopped>
                    <p class="stopped-note">"Stopped."</p>
                </Show>
                <Show when=move || wants_retry.get()>
                    <button class="retry" type="button" on:click=move |_| chat.retry(turn)>"Retry"</button>
                </Show>
            </div>
        </article>
    }
}
