//! Presets: a named bundle of a model, its reasoning settings, sampling parameters and
//! instructions, picked in one go from the model picker. Each reader has their own; an
//! administrator may offer some to everyone.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::reasoning::ReasoningSettings;

/// The longest name a preset may have, in characters.
pub const MAX_PRESET_NAME: usize = 80;

/// How many presets of their own a reader may keep (and how many shared ones the server keeps).
pub const MAX_PRESETS: usize = 100;

/// One preset, as listed, saved and picked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Preset {
    /// Empty for a preset not saved yet.
    #[serde(default)]
    pub id: String,
    pub name: String,
    /// The model it picks (none: the one in use stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Thinking, effort and the sampling parameters it sets; an unset one goes back to the
    /// model's default when the preset is picked.
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    pub settings: ReasoningSettings,
    /// The instructions a chat picked with it gets as its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Offered to everyone on the server (made by an administrator).
    #[serde(default)]
    pub shared: bool,
    /// The reader may change and delete it: their own, or a shared one for an administrator.
    #[serde(default)]
    pub editable: bool,
}

impl Preset {
    /// The preset cleaned (name and instructions trimmed, blank instructions none), or why it
    /// cannot be kept.
    pub fn checked(mut self) -> Result<Preset, String> {
        self.name = self.name.trim().to_string();
        let chars = self.name.chars().count();
        if chars == 0 || chars > MAX_PRESET_NAME {
            return Err(format!(
                "`name` must have 1 to {MAX_PRESET_NAME} characters"
            ));
        }
        if self.name.chars().any(char::is_control) {
            return Err("`name` must not hold control characters".into());
        }
        if let Some(model) = &self.model {
            if model.is_empty() || model.len() > 300 || model.chars().any(char::is_control) {
                return Err("`model` must be a model id of at most 300 characters".into());
            }
        }
        self.settings.checked()?;
        self.instructions = match self.instructions.take() {
            Some(text) => super::instructions::checked(&text)?,
            None => None,
        };
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::sampling::Tunable;

    fn preset(name: &str) -> Preset {
        Preset {
            name: name.into(),
            ..Preset::default()
        }
    }

    #[test]
    fn a_preset_is_cleaned_or_refused_with_the_reason() {
        let p = Preset {
            instructions: Some("  \n ".into()),
            ..preset("  Careful coder ")
        }
        .checked()
        .unwrap();
        assert_eq!(p.name, "Careful coder");
        assert_eq!(p.instructions, None, "blank instructions are none");
        assert!(preset("").checked().is_err());
        assert!(preset(&"x".repeat(81)).checked().is_err());
        assert!(preset("tab\tname").checked().is_err());
        let hot = Preset {
            settings: ReasoningSettings {
                temperature: crate::domain::sampling::Fraction::new(2.5),
                ..Default::default()
            },
            ..preset("hot")
        };
        assert!(hot.checked().unwrap_err().contains("temperature"));
        let ok = Preset {
            settings: ReasoningSettings::default()
                .with_sampling(Tunable::TopP, Some(0.5))
                .unwrap(),
            ..preset("ok")
        };
        let json = serde_json::to_string(&ok).unwrap();
        assert_eq!(
            json,
            r#"{"id":"","name":"ok","settings":{"top_p":0.5},"shared":false,"editable":false}"#
        );
    }
}
