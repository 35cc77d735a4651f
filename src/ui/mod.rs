//! The components. They bind the pure client state to the DOM and hold no logic of their own
//! beyond what the DOM needs (focus, scrolling, open/closed).

pub mod chat_page;
pub mod composer;
pub mod message_bubble;
pub mod message_list;
pub mod thinking_block;
