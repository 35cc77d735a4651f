//! What an empty conversation shows: "Opening the chat…" on a chat's address until the chat is
//! here (over the server's drawing of it, [`super::first_paint`]), else the new chat's offer (the model that will answer, example prompts). Shared by the
//! plain view and the scrolling one.

use leptos::prelude::*;

use crate::client::controller::ChatController;

/// An empty chat: what it is for, the model that will answer, and a few prompts to start from
/// (a press puts one in the box, to send or change).
#[component]
pub fn EmptyChat() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    move || {
        if chat.opening.get() {
            view! {
                <li class="empty-state opening" aria-busy="true">
                    <p>{t.opening_chat}</p>
                    <super::first_paint::FirstPaintView/>
                </li>
            }
            .into_any()
        } else {
            view! { <NewChatOffer/> }.into_any()
        }
    }
}

/// What an empty new chat shows.
#[component]
fn NewChatOffer() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let model = move || {
        let id = chat.current_model();
        chat.models
            .with(|m| m.find(&id).map(|m| m.label().to_string()))
            .unwrap_or(id)
    };
    let start_from = move |prompt: &'static str| {
        chat.draft.set(prompt.to_string());
        super::dom::focus_by_id("composer-input");
    };
    view! {
        <li class="empty-state">
            <p>{t.empty_chat}</p>
            <p class="empty-model">
                {move || {
                    let m = model();
                    (!m.is_empty()).then(|| crate::i18n::fill(t.empty_chat_model, &[("model", &m)]))
                }}
            </p>
            <label class="temporary-toggle">
                <input
                    type="checkbox"
                    name="temporary"
                    prop:checked=move || chat.temporary.get()
                    on:change=move |ev| chat.set_temporary(event_target_checked(&ev))
                />
                {t.temporary_chat}
            </label>
            <ul class="example-prompts" aria-label=t.try_asking>
                {[t.example_prompt_1, t.example_prompt_2, t.example_prompt_3]
                    .into_iter()
                    .map(|prompt| view! {
                        <li>
                            <button type="button" class="example-prompt" dir="auto" on:click=move |_| start_from(prompt)>
                                {prompt}
                            </button>
                        </li>
                    })
                    .collect_view()}
            </ul>
        </li>
    }
}
