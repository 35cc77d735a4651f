//! The thinking block: `<details class="thinking">` above the answer. It opens while its
//! reasoning streams, collapses on the answer, and is the reader's to control once touched.

use leptos::html::{Details, Div};
use leptos::prelude::*;

use super::clock::Clock;
use super::markdown_view::MarkdownView;
use crate::client::labels;
use crate::client::thinking_view::{auto_open, may_apply, ThinkingPref};
use crate::client::turn_state::{BlockState, BlockStatus, TurnState};
use crate::domain::ThinkingKind;

/// One reasoning block of an assistant turn: the reader sees that the model is thinking, for
/// how long, and (when the provider shows it) what it thinks, without it crowding the answer.
#[component]
pub fn ThinkingBlock(
    /// The turn the block belongs to.
    turn: RwSignal<TurnState>,
    /// The block's position in the turn.
    index: usize,
    /// What blocks do by themselves: open while thinking, stay open, or stay closed.
    #[prop(into)]
    pref: Signal<ThinkingPref>,
    /// The reader opened (`true`) or closed the block: their choice is to be kept.
    on_choice: Callback<bool>,
    /// The block is open but its text is still on the server: load it.
    on_need_text: Callback<()>,
) -> impl IntoView {
    let clock = expect_context::<Clock>();
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    // Each part of the block is read where it lives (the turn holds up to megabytes of
    // reasoning), so a frame of answer text neither copies the block nor re-renders it.
    let status = Memo::new(move |_| read_block(turn, index, |b| b.status));
    let kind = Memo::new(move |_| read_block(turn, index, |b| b.kind));
    let text_len = Memo::new(move |_| read_block(turn, index, |b| b.text.len()));
    let has_text = Memo::new(move |_| read_block(turn, index, BlockState::has_text));
    let reader_open = Memo::new(move |_| read_block(turn, index, |b| b.reader_open));
    let answer_followed = Memo::new(move |_| read_block(turn, index, |b| b.answer_followed));
    let wanted = Memo::new(move |_| {
        let pref = pref.get();
        let (live, running) = turn.with(|t| (t.live, t.phase.is_running()));
        reader_open
            .get()
            .unwrap_or_else(|| auto_open(pref, live, answer_followed.get(), running))
    });
    let initially_open = wanted.get_untracked();
    let open = RwSignal::new(initially_open);
    let details = NodeRef::<Details>::new();
    let scratch = NodeRef::<Div>::new();
    let stick = RwSignal::new(true);

    let has_focus = move || {
        let Some(el) = details.get_untracked() else {
            return false;
        };
        web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.active_element())
            .is_some_and(|active| el.contains(Some(&active)))
    };

    Effect::new(move |_| {
        let want = wanted.get();
        let owned = reader_open.get_untracked().is_some();
        if reader_open.get_untracked() == Some(want)
            || may_apply(owned, open.get_untracked(), want, has_focus())
        {
            open.set(want);
        }
    });

    Effect::new(move |_| {
        text_len.track();
        if open.get_untracked()
            && stick.get_untracked()
            && status.get_untracked() == BlockStatus::Streaming
        {
            if let Some(el) = scratch.get_untracked() {
                request_animation_frame(move || el.set_scroll_top(el.scroll_height()));
            }
        }
    });

    let on_toggle = move |_| {
        let Some(el) = details.get_untracked() else {
            return;
        };
        let now_open = el.open();
        // A finished block opens at the start of its reasoning.
        if now_open && status.get_untracked() != BlockStatus::Streaming {
            if let Some(s) = scratch.get_untracked() {
                s.set_scroll_top(0);
            }
        }
        if now_open != open.get_untracked() {
            open.set(now_open);
            turn.update(|t| {
                if let Some(b) = t.blocks.get_mut(index) {
                    b.reader_open = Some(now_open);
                }
            });
            on_choice.run(now_open);
        }
    };

    // A stored block's reasoning is fetched the first time it is open.
    let waits_for_text =
        Memo::new(move |_| read_block(turn, index, |b| b.remote.is_some() && b.text.is_empty()));
    Effect::new(move |_| {
        if open.get() && waits_for_text.get() {
            on_need_text.run(());
        }
    });

    // The header changes with the clock (while the block runs) and with the block's status,
    // kind, timing and text; the block itself is read untracked.
    let timing = Memo::new(move |_| read_block(turn, index, |b| (b.duration_ms, b.ended_at)));
    let header = Memo::new(move |_| {
        // Only a block still running reads the clock: a finished one's label (its words
        // counted over up to megabytes of reasoning) changes with the block alone.
        let now = match timing.get() {
            (None, None) => clock.0.get(),
            _ => 0.0,
        };
        status.track();
        kind.track();
        text_len.track();
        untrack(|| read_block(turn, index, |b| labels::header(b, now, l)))
    });
    let label = move || header.get();
    let peek = move || {
        (status.get() == BlockStatus::Streaming && !open.get())
            .then(|| {
                text_len.track();
                untrack(|| read_block(turn, index, |b| labels::last_line(&b.text).to_string()))
            })
            .filter(|l| !l.is_empty())
            .map(|line| view! { <span class="thinking-peek">" — " {line}</span> })
    };
    let note = move || {
        labels::origin_note(kind.get(), l)
            .map(|n| view! { <span class="thinking-origin">{n}</span> })
    };
    let text = move |read: &mut dyn FnMut(&str)| read_block(turn, index, |b| read(&b.text));
    // Read through a memo: the turn changes with every token, the stop once.
    let stopped =
        Memo::new(move |_| turn.with(|t| t.phase == crate::client::turn_state::TurnPhase::Stopped));
    let classes = move || {
        let mut c = String::from("thinking");
        match status.get() {
            BlockStatus::Streaming => c.push_str(" streaming"),
            BlockStatus::Interrupted => c.push_str(" interrupted"),
            BlockStatus::Done => c.push_str(" done"),
        }
        // The reader's own Stop is a stop, not a failure.
        if stopped.get() {
            c.push_str(" stopped");
        }
        c
    };

    view! {
        <Show
            when=move || has_text.get()
            fallback=move || view! {
                <div class=move || format!("{} thinking-empty", classes()) role="group" aria-label=t.reasoning>
                    <div class="thinking-header">
                        <span class="thinking-indicator" aria-hidden="true"></span>
                        <span class="thinking-label">{label}</span>
                        {note}
                    </div>
                </div>
            }
        >
            <details class=classes node_ref=details prop:open=move || open.get() on:toggle=on_toggle>
                <summary>
                    <span class="thinking-indicator" aria-hidden="true"></span>
                    <span class="thinking-label">{label}</span>
                    {note}
                    {peek}
                </summary>
                <div
                    class="thinking-scroll"
                    tabindex="0"
                    role="region"
                    aria-label=t.reasoning_text
                    node_ref=scratch
                    on:scroll=move |_| {
                        if let Some(el) = scratch.get_untracked() {
                            stick.set(el.scroll_height() - el.scroll_top() - el.client_height() < 24);
                        }
                    }
                >
                    <Show when=move || waits_for_text.get()>
                        <p class="thinking-loading" role="status">{t.loading_reasoning}</p>
                    </Show>
                    <Show when=move || kind.get() == ThinkingKind::Summary>
                        <p class="thinking-summary-note">{t.summary_of_reasoning}</p>
                    </Show>
                    <MarkdownView
                        text
                        streaming=Signal::derive(move || status.get() == BlockStatus::Streaming && turn.with(|t| t.phase.is_running()))
                        class="thinking-text"
                        folded=Signal::derive(move || !open.get())
                    />
                </div>
            </details>
        </Show>
    }
}

/// Reads part of block `index` of `turn`, tracking the turn; a block not there yet reads as an
/// empty one.
fn read_block<T>(
    turn: RwSignal<TurnState>,
    index: usize,
    read: impl FnOnce(&BlockState) -> T,
) -> T {
    turn.with(|t| match t.blocks.get(index) {
        Some(b) => read(b),
        None => read(&BlockState::default()),
    })
}
