// The same bubble with its disclaimer builds: the failure next door is the missing prop, not
// anything else.
use leptos::prelude::*;
use ponder::client::controller::Entry;
use ponder::ui::message_bubble::{AssistantBubble, Disclaimer};

fn bubble(entry: Entry) -> impl IntoView {
    view! { <AssistantBubble entry disclaimer=Disclaimer::AI_GENERATED/> }
}

fn main() {
    let _ = bubble;
}
