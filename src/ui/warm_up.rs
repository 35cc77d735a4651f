//! First-use costs moved off the first send. The browser compiles WebAssembly lazily, each
//! function on its first call, so the keystroke that sent a fresh page's first message paid for
//! compiling the bubble, the thinking block and the markdown renderer (22–69 ms of script, the
//! longest task of a whole turn). Once the page is idle after hydration, [`warm_up`] runs the
//! send's own first steps (the saved record and the request body as JSON) on
//! a sample: the task after the first keystroke saves and sends (58 ms once, compiling them).
//! The bubbles and the renderer arrive in a chunk of their own (see [`super::message_code`]);
//! [`warm_up_messages`] runs once it has, rendering a sample exchange into an element that is
//! never attached.

use leptos::prelude::*;
use leptos::tachys::view::{Mountable, Render};

use super::message_bubble::MessageBubble;
use crate::client::controller::{now_ms, Entry};
use crate::client::saved_chat::{self, SavedChat};
use crate::client::turn_state::TurnState;
use crate::domain::history::{Conversation, Message};
use crate::domain::{ChatMessage, ChatRequest, ThinkingKind, TurnEvent};

/// The send path on a sample, when the page is idle after hydration.
pub fn warm_up() {
    let now = now_ms();
    warm_up_sending(&sample_turn(now), now);
}

/// A streaming assistant turn with a thinking block and some answer.
fn sample_turn(now: f64) -> TurnState {
    let mut turn = TurnState::started(now);
    for event in [
        TurnEvent::ThinkingStart {
            block: 0,
            kind: ThinkingKind::Raw,
            at_ms: None,
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
    turn
}

/// Renders the markdown renderer on a sample, then, at the next idle moment, a sample user
/// message and a streaming assistant turn off the document. Call it inside the chat page's owner
/// (the bubbles read its context) once the bubbles' chunk has arrived.
pub fn warm_up_messages() {
    super::markdown_view::warm_up_renderer();
    // The bubbles at the next idle moment: two shorter tasks, not one long one.
    let owner = Owner::current();
    request_idle_callback(move || {
        if let Some(owner) = &owner {
            owner.with(warm_up_bubbles);
        }
    });
}

fn warm_up_bubbles() {
    let Ok(host) = document().create_element("div") else {
        return;
    };
    let owner = Owner::new();
    owner.with(|| {
        let now = now_ms();
        let turn = sample_turn(now);
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

/// The send path on a sample: what is written to storage and the request body (the stream's
/// decoder warms up with its own chunk, see [`crate::client::turn_stream::want`]). Nothing is
/// stored or sent.
fn warm_up_sending(turn: &TurnState, now: f64) {
    let version = saved_chat::version_from_turn(turn, now);
    let record = SavedChat::of(Conversation {
        id: "warm-up".into(),
        title: "Warm up".into(),
        workspace_id: String::new(),
        created_at: now as i64,
        updated_at: now as i64,
        rev: 1,
        model: None,
        settings: Default::default(),
        messages: vec![Message {
            id: "w".into(),
            role: crate::domain::Role::Assistant,
            created_at: now as i64,
            active: 0,
            versions: vec![version],
        }],
        first: 0,
        instructions: None,
    });
    let _ = serde_json::to_string(&record);
    let request = ChatRequest::stateless(vec![ChatMessage::user("Warm up")]);
    let _ = serde_json::to_vec(&request);
}
