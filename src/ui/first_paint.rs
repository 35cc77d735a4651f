//! A chat's last messages as the server draws them on its address's first load, so the page
//! shows the chat at once instead of "Opening the chat…" until it has asked for it. The drawing
//! is a still picture (`inert`: nothing in it is pressed or read aloud) that stands where the
//! chat will be, from its end, until the chat itself is shown: the server's HTML is kept
//! through hydration (a string `inner_html` is not rewritten there), and the page keeps a copy
//! for the moment its scrolling view replaces the plain one.

use leptos::html::Div;
use leptos::prelude::*;

use crate::client::controller::ChatController;

/// What the first load drew, and for which conversation, while that chat is still opening.
#[derive(Clone, Copy)]
pub struct FirstPaint(StoredValue<Option<(String, String)>>);

impl FirstPaint {
    /// Given to the conversation's place on the page: the server's drawing on the server, the
    /// copy the page took of it in the browser, forgotten once the chat has opened.
    pub fn provide() {
        let chat = expect_context::<ChatController>();
        let drawn = StoredValue::new(served());
        Effect::new(move |_| {
            if !chat.opening.get() {
                drawn.set_value(None);
            }
        });
        provide_context(FirstPaint(drawn));
    }
}

/// The drawing of the chat being opened, or nothing (a new chat, history kept in the browser,
/// another chat than the one the page was served for).
#[component]
pub fn FirstPaintView() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let drawn = use_context::<FirstPaint>().map(|f| f.0);
    let html = drawn
        .and_then(|d| d.get_value())
        .filter(|(id, _)| page_chat().as_deref() == Some(id.as_str()))
        .map(|(_, html)| html)
        .unwrap_or_default();
    let el = NodeRef::<Div>::new();
    Effect::new(move |_| {
        let (Some(drawn), Some(el)) = (drawn, el.get()) else {
            return;
        };
        if drawn.with_value(Option::is_none) && chat.opening.get_untracked() {
            let html = el.inner_html();
            if let (false, Some(id)) = (html.is_empty(), page_chat()) {
                drawn.set_value(Some((id, html)));
            }
        }
    });
    view! { <div class="first-paint" inert=true node_ref=el inner_html=html></div> }
}

fn page_chat() -> Option<String> {
    crate::client::browser::page_address()
        .chat()
        .map(str::to_owned)
}

#[cfg(feature = "ssr")]
fn served() -> Option<(String, String)> {
    let found = crate::client::browser::served_chat()?;
    let html = crate::ui::transcript::draw(
        &found.0,
        crate::ui::locale::locale(),
        &crate::ui::transcript::Drawing::default(),
    );
    Some((found.0.id.clone(), html))
}

#[cfg(not(feature = "ssr"))]
fn served() -> Option<(String, String)> {
    None
}
