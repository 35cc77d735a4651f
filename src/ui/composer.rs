//! The composer: Enter sends, Shift+Enter adds a newline; Stop while a turn runs.

use leptos::prelude::*;

use super::attachments::{files_of, provide_attach, AttachButton};
use super::compare_bar::{CompareToggle, BAR_SLOT};
use super::icons::{icon, Icon};
use super::model_picker::ReasoningControls;
use crate::client::controller::ChatController;
use crate::client::turn_state::{BlockStatus, TurnPhase};

/// Where the reader writes: Enter sends, Shift+Enter breaks the line, and while a turn runs
/// the button stops it; while editing a message it says so and can be cancelled.
#[component]
pub fn Composer() -> impl IntoView {
    let t = crate::ui::locale::tr();
    let chat = expect_context::<ChatController>();
    let draft = chat.draft;
    let input = NodeRef::<leptos::html::Textarea>::new();
    let focus_input = move || {
        if let Some(el) = input.get_untracked() {
            let _ = el.focus();
        }
    };
    // Ready to type on load where there is a keyboard (a phone would pop its keyboard up).
    Effect::new(move |_| {
        if input.get().is_some() && crate::client::browser::fine_pointer() {
            focus_input();
        }
    });
    // Stop gives the place back to the composer, by mouse or keyboard alike.
    // Stop goes when the answer ends: a focus left on nothing (it was on Stop) goes to the box,
    // where a mouse or keyboard reader types next (a phone's keyboard is not popped up).
    Effect::new(move |was_running: Option<bool>| {
        let running = chat.is_running();
        if was_running == Some(true) && !running && crate::client::browser::fine_pointer() {
            request_animation_frame(|| {
                let on_nothing = document()
                    .active_element()
                    .is_none_or(|el| el.tag_name().eq_ignore_ascii_case("body"));
                if on_nothing {
                    super::dom::focus_by_id("composer-input");
                }
            });
        }
        running
    });
    let stop = move |_| {
        chat.stop();
        request_animation_frame(focus_input);
    };
    // While the running turn is thinking and has not begun its answer.
    let thinking_now = move || {
        chat.running.with(|running| {
            running.iter().any(|turn| {
                turn.with(|t| {
                    t.phase == TurnPhase::Thinking
                        && t.blocks.iter().any(|b| b.status == BlockStatus::Streaming)
                })
            })
        })
    };
    let has_files = move || chat.tray.with(|t| !t.ready().is_empty());
    let waiting = move || chat.tray.with(|t| t.busy());
    let send = move || {
        let text = draft.get_untracked();
        let nothing = text.trim().is_empty() && chat.tray.with_untracked(|t| t.ready().is_empty());
        if nothing || chat.is_running() || chat.tray.with_untracked(|t| t.busy()) {
            return;
        }
        draft.set(String::new());
        chat.send(text);
    };
    let dragging = RwSignal::new(false);
    let attach = provide_attach();

    view! {
        <form
            class="composer"
            class:dragging=move || dragging.get()
            on:submit=move |ev| {
                ev.prevent_default();
                send();
            }
            on:dragover=move |ev| {
                if chat.can_attach() {
                    ev.prevent_default();
                    dragging.set(true);
                    attach.prefetch();
                }
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=move |ev| {
                dragging.set(false);
                if chat.can_attach() {
                    ev.prevent_default();
                    attach.files(files_of(ev.data_transfer().and_then(|d| d.files())));
                }
            }
        >
            <Show when=move || dragging.get()>
                <p class="drop-hint" aria-hidden="true">{t.drop_to_attach}</p>
            </Show>
            <Show when=move || chat.editing.with(Option::is_some)>
                <div class="editing-banner" role="status">
                    <span>{t.editing_notice}</span>
                    <button type="button" class="action" on:click=move |_| chat.cancel_edit()>{t.cancel_edit}</button>
                </div>
            </Show>
            <Show when=move || chat.temporary.get()>
                <p class="temporary-note" role="status">{t.temporary_chat_note}</p>
            </Show>
            {attach.tray()}
            <div class="compare-bar-slot" id=BAR_SLOT></div>
            <div class="composer-row">
                <AttachButton/>
                <label class="visually-hidden" for="composer-input">{t.message}</label>
                <textarea
                    node_ref=input
                    id="composer-input"
                    name="message"
                    dir="auto"
                    rows="2"
                    placeholder=t.message_placeholder
                    aria-describedby="composer-keys"
                    prop:value=move || draft.get()
                    on:input=move |ev| {
                        // Someone is writing: the answer will want the bubbles' and the
                        // stream's code.
                        super::message_code::want();
                        crate::client::controller::want_stream_code();
                        draft.set(event_target_value(&ev))
                    }
                    on:paste=move |ev| {
                        let files = files_of(ev.clipboard_data().and_then(|d| d.files()));
                        if !files.is_empty() && chat.can_attach() {
                            ev.prevent_default();
                            attach.files(files);
                        }
                    }
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                            ev.prevent_default();
                            send();
                        } else if ev.key() == "Escape" && chat.editing.with_untracked(Option::is_some) {
                            chat.cancel_edit();
                        }
                    }
                ></textarea>
                <Show
                    when=move || chat.is_running()
                    fallback=move || view! {
                        <button class="send" type="submit" aria-label=t.send disabled=move || waiting() || (draft.with(|d| d.trim().is_empty()) && !has_files())>{icon(Icon::Send)}</button>
                    }
                >
                    <button
                        class="stop"
                        id="stop-button"
                        type="button"
                        aria-label=t.stop_generating
                        on:click=stop
                    >
                        {icon(Icon::Stop)}
                    </button>
                </Show>
            </div>
            <div class="composer-tools">
                <ReasoningControls/>
                <CompareToggle/>
                <Show when=thinking_now>
                    <button type="button" class="chip answer-now" on:click=move |_| chat.answer_now()>{t.answer_now}</button>
                </Show>
            </div>
            <p class="composer-keys" id="composer-keys">{t.composer_hint}</p>
        </form>
    }
}
