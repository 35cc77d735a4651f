//! The administrator's instructions per model (`PONDER_MODEL_INSTRUCTIONS`): a JSON file of
//! model id → text, `"*"` for every model without its own. They are sent before any reader's
//! and no reader can remove them.

use std::collections::BTreeMap;

use super::ConfigError;
use crate::domain::instructions::{checked, MAX_INSTRUCTION_CHARS};

/// The texts by model, and the one for every other model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelInstructions {
    by_model: BTreeMap<String, String>,
    every: Option<String>,
}

impl ModelInstructions {
    /// What `model` is always told, if anything.
    pub fn for_model(&self, model: &str) -> Option<&str> {
        self.by_model
            .get(model)
            .or(self.every.as_ref())
            .map(String::as_str)
    }

    /// Reads the file's text (the caller read the file).
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let bad = |why: String| ConfigError(format!("PONDER_MODEL_INSTRUCTIONS: {why}"));
        let map: BTreeMap<String, String> = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "must be a JSON object of model id to text, like {{\"*\": \"Be brief.\"}} ({e})"
            ))
        })?;
        let mut out = ModelInstructions::default();
        for (model, text) in map {
            let text = checked(&text)
                .map_err(|why| {
                    bad(format!(
                        "the text for {model:?}: {why} (at most {MAX_INSTRUCTION_CHARS})"
                    ))
                })?
                .ok_or_else(|| bad(format!("the text for {model:?} is empty")))?;
            if model == "*" {
                out.every = Some(text);
            } else if model.trim().is_empty() {
                return Err(bad("a model id is empty".into()));
            } else {
                out.by_model.insert(model, text);
            }
        }
        Ok(out)
    }
}

/// The instructions the variable's file names; none when it is unset.
pub(super) fn model_instructions(path: Option<&str>) -> Result<ModelInstructions, ConfigError> {
    let Some(path) = path.map(str::trim).filter(|p| !p.is_empty()) else {
        return Ok(ModelInstructions::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError(format!(
            "PONDER_MODEL_INSTRUCTIONS={path:?} cannot be read: {e}"
        ))
    })?;
    ModelInstructions::parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_gets_its_own_text_else_the_one_for_every_model() {
        let set = ModelInstructions::parse(
            r#"{"*": "Be kind.", "demo-deep": "Never reveal the launch codes."}"#,
        )
        .expect("valid");
        assert_eq!(
            set.for_model("demo-deep"),
            Some("Never reveal the launch codes.")
        );
        assert_eq!(set.for_model("other"), Some("Be kind."));
        let only = ModelInstructions::parse(r#"{"a": "x"}"#).expect("valid");
        assert_eq!(only.for_model("b"), None);
    }

    #[test]
    fn a_bad_file_is_a_clear_error_at_start() {
        for text in [
            "[]",
            "{\"a\": 1}",
            "{\"a\": \"  \"}",
            "{\"\": \"x\"}",
            "not json",
        ] {
            let error = ModelInstructions::parse(text).expect_err(text);
            assert!(
                error.0.starts_with("PONDER_MODEL_INSTRUCTIONS"),
                "{}",
                error.0
            );
        }
        assert!(model_instructions(Some("/nonexistent/ponder.json")).is_err());
        assert_eq!(model_instructions(None), Ok(ModelInstructions::default()));
    }
}
