//! The composer: Enter sends, Shift+Enter adds a newline; Stop while a turn runs.

use leptos::prelude::*;

use crate::client::controller::ChatController;

#[component]
pub fn Composer() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let draft = RwSignal::new(String::new());
    let send = move || {
        let text = draft.get_untracked();
        if text.trim().is_empty() || chat.running.get_untracked() {
            return;
        }
        draft.set(String::new());
        chat.send(text);
    };

    view! {
        <form
            class="composer"
            on:submit=move |ev| {
                ev.prevent_default();
                send();
            }
        >
            <label class="visually-hidden" for="composer-input">"Message"</label>
            <textarea
                id="composer-input"
                name="message"
                rows="2"
                placeholder="Message Ponder… (Enter to send, Shift+Enter for a new line)"
                prop:value=move || draft.get()
                on:input=move |ev| draft.set(event_target_value(&ev))
                on:keydown=move |ev| {
                    if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                        ev.prevent_default();
                        send();
                    }
                }
            ></textarea>
            <Show
                when=move || chat.running.get()
                fallback=move || view! {
                    <button class="send" type="submit" disabled=move || draft.with(|d| d.trim().is_empty())>"Send"</button>
                }
            >
                <button class="stop" type="button" aria-label="Stop generating" on:click=move |_| chat.stop()>"Stop"</button>
            </Show>
        </form>
    }
}
