//! A message bubble: the user's text, or the assistant's thinking blocks above its answer,
//! with its disclaimer, actions, versions and error state.

use leptos::prelude::*;

use super::disclaimer::DisclaimerChip;
pub use super::disclaimer::{Disclaimer, DisclaimerDialog, DisclaimerExplanation};
use super::dom;
use super::icons::{icon, Icon};
use super::turn_parts::{CopyAnswer, CopyFace, TurnParts};
use crate::client::controller::{ChatController, Entry};
use crate::client::turn_state::{TurnPhase, TurnState};
use crate::domain::Role;
use crate::i18n::fill;
use crate::ui::locale::{locale, tr};

/// One message: the reader's, end-aligned, or the assistant's, with its thinking blocks, its
/// answer, its state (streaming, stopped, failed) and its actions.
#[component]
pub fn MessageBubble(entry: Entry) -> impl IntoView {
    match entry.role {
        Role::Assistant => {
            view! { <AssistantBubble entry disclaimer=Disclaimer::AI_GENERATED/> }.into_any()
        }
        Role::User => view! { <UserBubble entry/> }.into_any(),
    }
}

#[component]
fn Timestamp(at: f64) -> impl IntoView {
    let (iso, short) = dom::local_time(at);
    (!short.is_empty()).then(|| view! { <time class="timestamp" datetime=iso>{short}</time> })
}

#[component]
fn UserBubble(entry: Entry) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let copied = RwSignal::new(false);
    let text = entry.text.clone();
    let for_edit = entry.clone();
    let for_branch = entry.clone();
    let editing = {
        let id = entry.id.clone();
        move || chat.editing.with(|e| e.as_deref() == Some(id.as_str()))
    };
    let edited = entry.edits.len() > 1;
    let earlier: Vec<String> = entry
        .edits
        .iter()
        .take(entry.edits.len().saturating_sub(1))
        .map(|v| v.content.clone())
        .collect();
    let t = tr();
    let label = if edited {
        t.message_from_you_edited
    } else {
        t.message_from_you
    };
    view! {
        <article
            class="bubble user"
            class:editing=editing
            id=format!("message-{}", entry.id)
            aria-label=label
        >
            <div class="bubble-col">
                <super::attachments::SentFiles files=entry.files/>
                {(!entry.text.is_empty()).then(|| view! { <div class="bubble-body" dir="auto">{entry.text.clone()}</div> })}
                {(!earlier.is_empty()).then(|| {
                    let count = earlier.len();
                    view! {
                        <details class="earlier-versions">
                            <summary>
                                {locale().count(&t.earlier_versions, count as u64)}
                            </summary>
                            <ol>
                                {earlier.into_iter().map(|t| view! { <li dir="auto">{t}</li> }).collect_view()}
                            </ol>
                        </details>
                    }
                })}
                <div class="bubble-meta">
                    <Timestamp at=entry.created_at/>
                    {edited.then(|| view! { <span class="edited">{t.edited}</span> })}
                    <div class="actions">
                        <button
                            type="button"
                            class="icon-button"
                            aria-label=t.copy_message
                            on:click=move |_| {
                                let text = text.clone();
                                leptos::task::spawn_local(async move {
                                    if dom::copy_text(text).await {
                                        dom::flash(copied);
                                    }
                                });
                            }
                        >
                            <CopyFace copied/>
                        </button>
                        <button
                            type="button"
                            class="icon-button"
                            aria-label=t.edit_message
                            disabled=move || chat.is_running()
                            on:click=move |_| {
                                chat.edit(&for_edit);
                                focus_composer();
                            }
                        >
                            {icon(Icon::Edit)}
                        </button>
                        <button
                            type="button"
                            class="icon-button"
                            aria-label=t.branch_from_here
                            disabled=move || chat.is_running()
                            on:click=move |_| chat.branch(&for_branch)
                        >
                            {icon(Icon::Branch)}
                        </button>
                    </div>
                </div>
            </div>
        </article>
    }
}

fn focus_composer() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("composer-input"))
    {
        if let Some(el) = leptos::wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlElement>(&el) {
            let _ = el.focus();
        }
    }
}

/// The assistant's message: its thinking blocks above its answer, its state and actions, and
/// the disclaimer it cannot be built without (seed 004's T11). Leaving the disclaimer out does
/// not compile (`cargo test --doc` checks it):
///
/// ```compile_fail,E0061
/// use leptos::prelude::*;
/// use ponder::client::controller::Entry;
/// use ponder::ui::message_bubble::AssistantBubble;
///
/// fn bubble(entry: Entry) -> impl IntoView {
///     view! { <AssistantBubble entry/> }
/// }
/// ```
///
/// while the same bubble with it does, so the failure above is the missing disclaimer:
///
/// ```no_run
/// use leptos::prelude::*;
/// use ponder::client::controller::Entry;
/// use ponder::ui::message_bubble::{AssistantBubble, Disclaimer};
///
/// fn bubble(entry: Entry) -> impl IntoView {
///     view! { <AssistantBubble entry disclaimer=Disclaimer::AI_GENERATED/> }
/// }
/// ```
#[component]
pub fn AssistantBubble(entry: Entry, disclaimer: Disclaimer) -> impl IntoView {
    let dom_id = format!("message-{}", entry.id);
    let versions = entry.versions;
    let active = entry.active;
    let turn = Memo::new(move |_| {
        let i = active.get();
        versions.with(|v| v.get(i).or(v.last()).copied())
    });
    // A comparison nobody has settled shows its answers side by side.
    let sides = Memo::new(move |_| {
        versions.with(|v| {
            let compared: Vec<_> = v.iter().map(|t| t.with(|t| t.compared)).collect();
            crate::client::compare::compared_versions(&compared)
        })
    });
    let side_by_side = entry.clone();
    let entry = StoredValue::new(entry);
    let t = tr();
    view! {
        <article
            class="bubble assistant"
            class:comparison=move || sides.with(Option::is_some)
            id=dom_id
            class:error=move || turn.get().is_some_and(|t| t.with(|t| t.phase == TurnPhase::Error))
            aria-label=t.message_from_assistant
            aria-busy=move || turn.get().is_some_and(|t| t.with(|t| t.phase.is_running())).to_string()
        >
            <div class="avatar" aria-hidden="true">"P"</div>
            <div class="bubble-col">
                // Keyed by the version shown: another version gets fresh nodes, never the old
                // answer's nodes patched (their rendered markdown would be appended to).
                <Show
                    when=move || sides.with(Option::is_none)
                    fallback=move || {
                        let entry = side_by_side.clone();
                        view! { <super::compare_panes::ComparePanes entry sides disclaimer/> }
                    }
                >
                    <For each=move || turn.get() key=|t| *t let:t>
                        <TurnBody turn=t entry=entry.get_value() disclaimer/>
                    </For>
                </Show>
            </div>
        </article>
    }
}

#[component]
fn TurnBody(turn: RwSignal<TurnState>, entry: Entry, disclaimer: Disclaimer) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let wants_retry = Memo::new(move |_| turn.with(|t| t.wants_retry()));
    let versions = entry.versions;
    let version_count = Memo::new(move |_| versions.with(Vec::len));
    let created_at = turn.with_untracked(|t| t.created_at);
    let active = entry.active;
    let running_here = move || chat.runs_turn(turn);
    let entry = StoredValue::new(entry);
    let retry = move |_: leptos::ev::MouseEvent| entry.with_value(|e| chat.retry(e));
    // The button goes while the new answer runs: the focus goes to Stop, not to the page.
    let regenerate = move |_: leptos::ev::MouseEvent| {
        entry.with_value(|e| chat.regenerate(e));
        request_animation_frame(|| super::dom::focus_by_id("stop-button"));
    };
    let branch = move |_: leptos::ev::MouseEvent| entry.with_value(|e| chat.branch(e));
    let previous_version = move |_: leptos::ev::MouseEvent| {
        entry.with_value(|e| chat.show_version(e, active.get_untracked().saturating_sub(1)))
    };
    // A finished answer can be asked again with more thought, where the model has more to give.
    let can_think_more = move || {
        let controls = chat.controls();
        turn.with(|t| {
            t.phase == TurnPhase::Done
                && (controls.effort
                    && crate::client::decisions::more_effort(t.settings.effort, controls.levels)
                        .is_some()
                    || controls.toggle && t.settings.thinking == Some(false))
        })
    };
    let think_more = move |_: leptos::ev::MouseEvent| entry.with_value(|e| chat.think_more(e));
    // The upstream refused a reasoning setting this turn carried.
    let refused_setting = move || {
        turn.with(|t| {
            t.phase == TurnPhase::Error
                && t.error.as_ref().is_some_and(|e| {
                    e.code == crate::domain::ErrorCode::SettingRefused
                        || e.message
                            .starts_with(crate::domain::reasoning::SETTING_REFUSED)
                })
        })
    };
    // The upstream refused the reasoning state sent back with earlier answers.
    let refused_replay = move || {
        turn.with(|t| {
            t.phase == TurnPhase::Error
                && t.error
                    .as_ref()
                    .is_some_and(|e| e.code == crate::domain::ErrorCode::ReplayRefused)
        })
    };
    let next_version = move |_: leptos::ev::MouseEvent| {
        entry.with_value(|e| chat.show_version(e, active.get_untracked() + 1))
    };
    let l = locale();
    let t = l.catalogue();

    view! {
        <div class="bubble-main">
            <TurnParts turn entry/>
            <Show when=move || wants_retry.get()>
                <button class="retry" type="button" disabled=move || chat.is_running() on:click=retry>{t.retry}</button>
            </Show>
            <Show when=refused_setting>
                <button class="retry" type="button" disabled=move || chat.is_running()
                    on:click=move |_| entry.with_value(|e| chat.retry_without_settings(e))
                >{t.send_without_setting}</button>
            </Show>
            <Show when=refused_replay>
                <button class="retry" type="button" disabled=move || chat.is_running()
                    on:click=move |_| entry.with_value(|e| chat.retry_without_replay(e))
                >{t.send_without_replay}</button>
            </Show>
        </div>
        <div class="bubble-meta">
            <DisclaimerChip disclaimer/>
            {move || turn.with(|t| t.model.clone()).map(|m| view! { <span class="answer-model" title=t.model_of_answer>{m}</span> })}
            {move || turn.with(|t| t.usage.as_ref().and_then(|u| crate::client::labels::usage_line(u, l))).map(|u| view! { <span class="answer-usage" title=t.usage_of_answer>{u}</span> })}
            <Timestamp at=created_at/>
            <Show when=move || { version_count.get() > 1 }>
                <div class="versions" role="group" aria-label=t.answer_versions>
                    <button type="button" class="icon-button" aria-label=t.previous_version
                        disabled=move || active.get() == 0 || chat.is_running()
                        on:click=previous_version
                    >{icon(Icon::Previous)}</button>
                    <span class="version-label">{move || fill(t.version_of, &[("n", &l.integer(active.get() as u64 + 1)), ("total", &l.integer(version_count.get() as u64))])}</span>
                    <button type="button" class="icon-button" aria-label=t.next_version
                        disabled=move || { active.get() + 1 >= version_count.get() || chat.is_running() }
                        on:click=next_version
                    >{icon(Icon::Next)}</button>
                </div>
            </Show>
            <div class="actions">
                <Show when=running_here>
                    <button type="button" class="icon-button stop-answer" aria-label=t.stop_answer on:click=move |_| chat.stop_turn(turn)>{icon(Icon::Stop)}</button>
                </Show>
                <CopyAnswer turn/>
                <Show when=move || !wants_retry.get()>
                    <button type="button" class="icon-button regenerate" aria-label=t.regenerate_answer
                        disabled=move || chat.is_running()
                        on:click=regenerate
                    >{icon(Icon::Regenerate)}</button>
                </Show>
                <Show when=can_think_more>
                    <button type="button" class="icon-button think-more" aria-label=t.think_more
                        disabled=move || chat.is_running()
                        on:click=think_more
                    >{icon(Icon::ThinkMore)}</button>
                </Show>
                <button type="button" class="icon-button" aria-label=t.branch_from_here
                    disabled=move || chat.is_running()
                    on:click=branch
                >{icon(Icon::Branch)}</button>
            </div>
        </div>
    }
}
