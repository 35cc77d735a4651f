//! The components. They bind the pure client state to the DOM and hold no logic of their own
//! beyond what the DOM needs (focus, scrolling, open/closed, clipboard, downloads).

pub mod account_panel;
pub mod attachments;
pub mod chat_page;
pub mod chunks;
pub mod clock;
pub mod composer;
pub mod conversation;
pub mod conversation_list;
pub mod dom;
pub mod empty_chat;
pub mod first_paint;
pub mod icons;
pub mod locale;
pub mod markdown_view;
pub mod menu_panels;
pub mod menus;
pub mod message_bubble;
pub mod message_code;
pub mod model_picker;
pub mod not_found;
pub mod notices;
pub mod rich;
pub mod sanitize;
pub mod scrolling_conversation;
pub mod search;
pub mod sidebar;
pub mod sign_in;
pub mod sources;
pub mod thinking_block;
pub mod tool_step;
pub mod warm_up;
pub mod workspaces;
