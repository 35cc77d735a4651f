//! First-use costs moved off the first send. The browser compiles WebAssembly lazily, each
//! function on its first call, so the keystroke that sent a fresh page's first message paid for
//! compiling the bubble, the thinking block and the markdown renderer (22–69 ms of script, the
//! longest task of a whole turn). Once the page is idle after hydration, [`warm_up`] renders a
//! sample exchange into an element that is never attached, then throws it away.

use leptos::prelude::*;
use leptos::tachys::view::{Mountable, Render};

use super::markdown_view;
use super::message_bubble::MessageBubble;
use crate::client::controller::{now_ms, Entry};
use crate::client::turn_state::TurnState;
use crate::domain::{ThinkingKind, TurnEvent};

/// Renders a sample user message and a streaming assistant turn off the document. Call it
/// inside the chat page's owner (the bubbles read its context) when the page is idle.
pub fn warm_up() {
    markdown_view::warm_up();
    let Ok(host) = document().create_element("div") else {
        return;
    };
    let owner = Owner::new();
    owner.with(|| {
        let now = now_ms();
        let mut turn = TurnState::started(now);
        for event in [
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
            },
            TurnEvent::Thinking {
                block: 0,
                text: "Checking *both* cases first.".into(),
            },
            TurnEvent::Delta {
                text: "Here is **the answer**.".into(),
            },
        ] {
            turn.apply(&event, now);
        }
        let user = Entry::user("Warm up".into(), now);
        let assistant = Entry::assistant(RwSignal::new(turn), now);
        let mut state = view! {
            <MessageBubble entry=user/>
            <MessageBubble entry=assistant/>
        }
        .build();
        state.mount(&host, None);
        state.unmount();
    });
    owner.cleanup();
}
