// An assistant bubble cannot be built without its disclaimer: the prop is required.
use leptos::prelude::*;
use ponder::client::controller::Entry;
use ponder::ui::message_bubble::AssistantBubble;

fn bubble(entry: Entry) -> impl IntoView {
    view! { <AssistantBubble entry/> }
}

fn main() {
    let _ = bubble;
}
