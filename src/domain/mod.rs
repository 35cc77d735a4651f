//! Types shared by the server and the browser: the turn event model and chat messages.
//!
//! Nothing here depends on Leptos, the network or the browser, so both builds and the native
//! tests use the very same definitions of what travels on the wire.

pub mod account;
pub mod answer;
pub mod attachment;
pub mod compare;
pub mod event;
pub mod file_ref;
pub mod history;
pub mod instructions;
pub mod message;
pub mod page;
pub mod preset;
pub mod reasoning;
pub mod rich;
pub mod sampling;
pub mod share;
pub mod usage;
pub mod wire;

pub use event::{ErrorCode, Failure, FinishReason, ThinkingKind, TurnEvent, Usage};
pub use message::{ChatMessage, ChatRequest, Role};
pub use reasoning::{Controls, Effort, EffortLevels, ModelInfo, ModelList, ReasoningSettings};
pub use rich::{CodeItem, MathItem, SourceRef, ToolStatus, ToolStep};

#[cfg(test)]
mod tests {
    use super::history::{HitKind, VersionStatus};
    use super::reasoning::{ControlsSource, NewChatModel};
    use super::wire::tests::check;
    use super::{Effort, Role, ThinkingKind, ToolStatus};

    #[test]
    fn every_wire_enum_keeps_its_snake_case_names() {
        check::<Role>();
        check::<VersionStatus>();
        check::<HitKind>();
        check::<ThinkingKind>();
        check::<Effort>();
        check::<NewChatModel>();
        check::<ControlsSource>();
        check::<ToolStatus>();
        check::<super::instructions::Level>();
        check::<super::sampling::Tunable>();
    }
}
