//! Rendered markdown for a growing text. The only place the app writes raw HTML, and the HTML
//! always comes from [`crate::markdown`].

use leptos::prelude::*;

use crate::markdown;

/// Renders `text` as sanitized markdown, once per change (changes arrive at most once per
/// animation frame).
#[component]
pub fn MarkdownView(
    /// The markdown source.
    #[prop(into)]
    text: Signal<String>,
    /// Extra classes for the container.
    #[prop(optional)]
    class: &'static str,
) -> impl IntoView {
    let html = Memo::new(move |_| text.with(|t| markdown::render(t)));
    view! {
        <div
            class=format!("markdown {class}")
            dir="auto"
            inner_html=move || html.get()
            on:click=move |ev| super::dom::copy_code_from_click(&ev)
        ></div>
    }
}
