//! A comparison's answers side by side: one pane per model, each with its figures (how long it
//! thought, its reasoning tokens, when its answer began, the time in all, the cost), its live
//! thinking blocks and answer, its own Stop and "Answer now", "Keep this answer" and thumbs; on
//! a phone the panes stack behind a row of buttons, one shown at a time. Below them, "Continue
//! with each" makes every answer a chat of its own. In the bubbles' chunk, with the bubbles.

use leptos::prelude::*;

use super::clock::Clock;
use super::disclaimer::{Disclaimer, DisclaimerChip};
use super::icons::{icon, Icon};
use super::turn_parts::{CopyAnswer, TurnParts};
use crate::client::compare::{figures_line, Figures};
use crate::client::controller::{ChatController, Entry};
use crate::client::turn_state::{BlockStatus, TurnPhase};
use crate::ui::locale::locale;

/// The panes of `entry`'s comparison: `sides` are its compared versions.
#[component]
pub fn ComparePanes(
    entry: Entry,
    sides: Memo<Option<Vec<usize>>>,
    disclaimer: Disclaimer,
) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let w = crate::i18n::compare_words(locale());
    let shown = RwSignal::new(0usize);
    let versions = entry.versions;
    let panes = move || {
        sides
            .get()
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .collect::<Vec<_>>()
    };
    let model_of = move |index: usize| {
        versions
            .with(|v| v.get(index).and_then(|t| t.with(|t| t.model.clone())))
            .unwrap_or_default()
    };
    let for_all = entry.clone();
    let entry = StoredValue::new(entry);
    view! {
        <section class="compare" aria-label=w.answers>
            <div class="compare-switch" role="group" aria-label=w.answers>
                <For each=panes key=|p| *p let:pane>
                    <button
                        type="button"
                        class="chip"
                        aria-pressed=move || (shown.get() == pane.0).to_string()
                        on:click=move |_| shown.set(pane.0)
                    >{move || model_of(pane.1)}</button>
                </For>
            </div>
            <div class="compare-panes">
                <For each=panes key=|p| *p let:pane>
                    <ComparePane entry index=pane.1 shown=Signal::derive(move || shown.get() == pane.0) disclaimer/>
                </For>
            </div>
            <div class="compare-actions">
                <button
                    type="button"
                    class="action continue-all"
                    aria-describedby="continue-all-note"
                    disabled=move || chat.is_running()
                    on:click=move |_| chat.continue_with_all(&for_all)
                >{w.continue_all}</button>
                <span class="compare-note" id="continue-all-note">{w.continue_all_explain}</span>
            </div>
        </section>
    }
}

/// One model's answer in a comparison: version `index` of `entry`.
#[component]
fn ComparePane(
    entry: StoredValue<Entry>,
    index: usize,
    shown: Signal<bool>,
    disclaimer: Disclaimer,
) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let clock = expect_context::<Clock>();
    let l = locale();
    let t = l.catalogue();
    let w = crate::i18n::compare_words(l);
    let Some(turn) = entry.with_value(|e| e.versions.with_untracked(|v| v.get(index).copied()))
    else {
        return ().into_any();
    };
    let model = move || turn.with(|t| t.model.clone()).unwrap_or_default();
    let running = Memo::new(move |_| turn.with(|t| t.phase.is_running()));
    // The figures change with the clock while the turn runs, and with what ends a part of it;
    // never with each piece of text.
    let moments = Memo::new(move |_| {
        turn.with(|t| {
            (
                t.phase,
                t.blocks
                    .iter()
                    .map(|b| (b.status, b.duration_ms))
                    .collect::<Vec<_>>(),
                t.first_answer_at.is_some(),
                t.total_ms,
                t.usage.clone(),
            )
        })
    });
    let figures = move || {
        moments.track();
        let now = if running.get() {
            clock.0.get()
        } else {
            crate::client::browser::now_ms()
        };
        untrack(|| turn.with(|t| figures_line(&Figures::of(t, now), l)))
    };
    let thinking_now = move || {
        turn.with(|t| {
            t.phase == TurnPhase::Thinking
                && t.blocks.iter().any(|b| b.status == BlockStatus::Streaming)
        })
    };
    let rating = Memo::new(move |_| turn.with(|t| t.compared.map_or(0, |c| c.rating)));
    let rate = move |wanted: i8| {
        let next = if rating.get_untracked() == wanted {
            0
        } else {
            wanted
        };
        entry.with_value(|e| chat.rate_compared(e, index, next));
    };
    let id = entry.with_value(|e| format!("pane-{}-{index}", e.id));
    let head = format!("{id}-model");
    let head_id = head.clone();
    view! {
        <div
            class="compare-pane"
            class:shown=move || shown.get()
            class:error=move || turn.with(|t| t.phase == TurnPhase::Error)
            id=id
            role="group"
            aria-labelledby=head
            aria-busy=move || running.get().to_string()
        >
            <header class="pane-head">
                <span class="pane-model" id=head_id>{model}</span>
                <span class="pane-figures">{figures}</span>
            </header>
            <div class="bubble-main">
                <TurnParts turn entry/>
            </div>
            <div class="bubble-meta pane-actions">
                <DisclaimerChip disclaimer/>
                <Show when=move || running.get() && chat.runs_turn(turn)>
                    <button type="button" class="icon-button stop-answer" aria-label=t.stop_answer on:click=move |_| chat.stop_turn(turn)>{icon(Icon::Stop)}</button>
                </Show>
                <Show when=thinking_now>
                    <button type="button" class="chip answer-now" on:click=move |_| chat.answer_now_of(Some(turn))>{t.answer_now}</button>
                </Show>
                <div class="actions">
                    <CopyAnswer turn/>
                    <button type="button" class="icon-button thumb-up" aria-label=w.good
                        aria-pressed=move || (rating.get() == 1).to_string()
                        disabled=move || running.get()
                        on:click=move |_| rate(1)
                    >{icon(Icon::ThumbUp)}</button>
                    <button type="button" class="icon-button thumb-down" aria-label=w.bad
                        aria-pressed=move || (rating.get() == -1).to_string()
                        disabled=move || running.get()
                        on:click=move |_| rate(-1)
                    >{icon(Icon::ThumbDown)}</button>
                    <button type="button" class="action keep-answer"
                        disabled=move || chat.is_running()
                        on:click=move |_| entry.with_value(|e| chat.keep_compared(e, index))
                    >{w.keep}</button>
                </div>
            </div>
        </div>
    }
    .into_any()
}
