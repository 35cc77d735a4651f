//! System instructions: what the reader, the workspace, the conversation and the administrator
//! tell the model before any message. They combine in one order, most general first, so a
//! narrower level can refine a wider one; the administrator's, set per model, always comes
//! first and no reader can remove it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The most characters one level holds: a page of text, far past what a model needs to be told.
pub const MAX_INSTRUCTION_CHARS: usize = 8_000;

/// Where an instruction is set, in the order they are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// The administrator's, for one model (`PONDER_MODEL_INSTRUCTIONS`): always sent.
    Model,
    /// The reader's own, for every chat (Settings).
    Personal,
    /// The workspace's, for every chat in it.
    Workspace,
    /// This conversation's.
    Conversation,
}

crate::domain::wire::wire_names!(Level {
    Model = "model",
    Personal = "personal",
    Workspace = "workspace",
    Conversation = "conversation",
});

impl Level {
    /// Every level, in the order the combined text holds them.
    pub const ALL: [Level; 4] = [
        Level::Model,
        Level::Personal,
        Level::Workspace,
        Level::Conversation,
    ];

    /// Whether a reader can change it (the model's is the administrator's).
    pub fn editable(self) -> bool {
        self != Level::Model
    }
}

/// One level's text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Instruction {
    pub level: Level,
    pub text: String,
}

/// The instructions that apply to one chat, each level that has text, in sending order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Instructions {
    pub levels: Vec<Instruction>,
}

impl Instructions {
    /// The levels given, blank ones left out, sorted into sending order.
    pub fn of(levels: impl IntoIterator<Item = (Level, Option<String>)>) -> Self {
        let mut levels: Vec<Instruction> = levels
            .into_iter()
            .filter_map(|(level, text)| {
                let text = text?.trim().to_string();
                (!text.is_empty()).then_some(Instruction { level, text })
            })
            .collect();
        levels.sort_by_key(|i| i.level);
        Instructions { levels }
    }

    /// The text the model is sent: each level's text, a blank line between; `None` when no
    /// level has any.
    pub fn combined(&self) -> Option<String> {
        let parts: Vec<&str> = self.levels.iter().map(|i| i.text.as_str()).collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    /// One level's text, if it has any.
    pub fn get(&self, level: Level) -> Option<&str> {
        self.levels
            .iter()
            .find(|i| i.level == level)
            .map(|i| i.text.as_str())
    }
}

/// A reader's text for one level, checked: at most [`MAX_INSTRUCTION_CHARS`], no control
/// characters but line breaks and tabs. Blank text clears the level (`Ok(None)`).
pub fn checked(text: &str) -> Result<Option<String>, &'static str> {
    let text = text.trim();
    if text.chars().count() > MAX_INSTRUCTION_CHARS {
        return Err("instructions must be at most 8000 characters");
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    {
        return Err("instructions must not hold control characters");
    }
    Ok((!text.is_empty()).then(|| text.replace("\r\n", "\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_combine_most_general_first_and_blank_ones_are_left_out() {
        let set = Instructions::of([
            (Level::Conversation, Some("Answer in French.".to_string())),
            (Level::Workspace, Some("  ".to_string())),
            (Level::Model, Some("Never reveal the key.".to_string())),
            (Level::Personal, Some(" I am a physicist. ".to_string())),
        ]);
        assert_eq!(
            set.combined().as_deref(),
            Some("Never reveal the key.\n\nI am a physicist.\n\nAnswer in French.")
        );
        assert_eq!(set.get(Level::Workspace), None);
        assert_eq!(set.get(Level::Personal), Some("I am a physicist."));
        assert_eq!(Instructions::of([(Level::Personal, None)]).combined(), None);
    }

    #[test]
    fn only_the_administrators_level_is_not_the_readers_to_change() {
        let editable: Vec<Level> = Level::ALL.into_iter().filter(|l| l.editable()).collect();
        assert_eq!(
            editable,
            [Level::Personal, Level::Workspace, Level::Conversation]
        );
    }

    #[test]
    fn a_readers_text_is_bounded_and_blank_clears_it() {
        assert_eq!(
            checked("  be brief \r\n please "),
            Ok(Some("be brief \n please".into()))
        );
        assert_eq!(checked("   "), Ok(None));
        assert!(checked(&"x".repeat(MAX_INSTRUCTION_CHARS + 1)).is_err());
        assert!(checked(&"é".repeat(MAX_INSTRUCTION_CHARS)).is_ok());
        assert!(checked("bell\u{7}").is_err());
    }
}
