//! What a turn shows of itself, in an answer's bubble and in a comparison's pane alike: its
//! thinking blocks and tool steps, its answer and sources, why it has none; and the Copy
//! button's face.

use leptos::prelude::*;

use super::icons::{icon, Icon};
use super::markdown_view::MarkdownView;
use super::sources::SourcesList;
use super::thinking_block::ThinkingBlock;
use super::tool_step::{ToolRun, ToolStepCard};
use crate::client::controller::{ChatController, Entry};
use crate::client::turn_state::{Part, TurnPhase, TurnState};
use crate::ui::locale::{locale, tr};

/// A Copy button's face: the copy icon, then for two seconds a check and the word "Copied".
#[component]
pub fn CopyFace(copied: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || copied.get() fallback=|| icon(Icon::Copy)>
            {icon(Icon::Check)}
            <span class="copied-note">{tr().copied}</span>
        </Show>
    }
}

/// Copies an answer as markdown, its sources as footnotes, and says so for two seconds.
#[component]
pub fn CopyAnswer(turn: RwSignal<TurnState>) -> impl IntoView {
    let copied = RwSignal::new(false);
    view! {
        <button
            type="button"
            class="icon-button"
            aria-label=tr().copy_answer
            on:click=move |_| {
                let text = turn.with_untracked(|t| {
                    crate::domain::rich::with_footnotes(&t.answer, &t.sources)
                });
                leptos::task::spawn_local(async move {
                    if super::dom::copy_text(text).await {
                        super::dom::flash(copied);
                    }
                });
            }
        >
            <CopyFace copied/>
        </button>
    }
}

/// What a turn shows of itself: its thinking blocks and tool steps in stream order, the dots
/// while nothing has come, its answer and sources, and why it has no answer, failed or stopped.
/// An answer's bubble and a comparison's pane both show it.
#[component]
pub fn TurnParts(turn: RwSignal<TurnState>, entry: StoredValue<Entry>) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let steps = Memo::new(move |_| turn.with(TurnState::parts));
    let phase = Memo::new(move |_| turn.with(|t| t.phase));
    let answer = move |read: &mut dyn FnMut(&str)| turn.with(|t| read(&t.answer));
    let fallback = Memo::new(move |_| turn.with(|t| t.fallback_code()));
    let error = Memo::new(move |_| turn.with(|t| t.error.clone()));
    let waiting = Memo::new(move |_| {
        turn.with(|t| {
            t.phase == TurnPhase::Thinking
                && t.blocks.is_empty()
                && t.tools.is_empty()
                && t.answer.is_empty()
        })
    });
    let l = locale();
    let t = l.catalogue();
    view! {
        // Thinking blocks and tool steps in stream order; each keeps its nodes as more arrive.
        // A run of tool steps is keyed by where it begins: it grows in place as steps arrive.
        <For
            each=move || steps.get()
            key=|part| match part {
                Part::Tools(first, _) => Part::Tools(*first, usize::MAX),
                other => *other,
            }
            let:step
        >
            {match step {
                Part::Block(index) => view! {
                    <ThinkingBlock
                        turn
                        index
                        pref=chat.pref
                        on_choice=Callback::new(move |open| entry.with_value(|e| chat.block_choice(e, index, open)))
                        on_need_text=Callback::new(move |_| chat.load_block_text(turn, index))
                    />
                }
                .into_any(),
                Part::Tool(index) => view! { <ToolStepCard turn index/> }.into_any(),
                Part::Tools(first, _) => view! { <ToolRun turn first/> }.into_any(),
            }}
        </For>
        <Show when=move || waiting.get()>
            <div class="typing" aria-hidden="true"><span></span><span></span><span></span></div>
        </Show>
        <MarkdownView text=answer streaming=Signal::derive(move || phase.get().is_running()) class="answer"/>
        <SourcesList turn/>
        {move || fallback.get().map(|code| view! { <p class="fallback">{crate::client::labels::fallback_words(code, l)}</p> })}
        {move || error.get().map(|e| view! { <p class="error-message">{crate::client::labels::failure_text(&e, l)}</p> })}
        <Show when=move || phase.get() == TurnPhase::Stopped>
            <p class="stopped-note">{t.stopped}</p>
        </Show>
    }
}
