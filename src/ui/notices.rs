//! Non-blocking notices (storage problems, conflicts), each shown once and dismissable.

use leptos::prelude::*;

use crate::client::controller::ChatController;

#[component]
pub fn Notices() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    view! {
        <div class="notices" role="region" aria-label="Notices">
            <For each=move || chat.notices.get() key=|n| n.kind let:notice>
                <div class="notice" role="status" data-kind=notice.kind.name()>
                    <p>{notice.text.clone()}</p>
                    <button type="button" class="action" aria-label="Dismiss notice" on:click=move |_| chat.dismiss(notice.kind)>
                        "Dismiss"
                    </button>
                </div>
            </For>
        </div>
    }
}
