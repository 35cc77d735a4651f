//! The demo's opaque reasoning state, as the real APIs treat it: every response seals its
//! signatures and encrypted reasoning with a value of its own (naming the model it came from),
//! and a request that sends back a seal made for another model is refused with the provider's
//! own `400`, as is any sent-back state when the last message asks `[reject-replay]`.

use bytes::Bytes;
use serde_json::Value;

use super::frame_kit::SEAL;
use super::pacer::Emit;
use crate::server::config::ProviderKind;

/// What every sealed value starts with.
const PREFIX: &str = "demo-sig-";

/// The seal of response number `n` of `model`: opaque to Ponder, readable to the demo.
pub fn seal(model: &str, n: u64) -> String {
    let plain = format!("{model}|{n}");
    let hex: String = plain.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}{hex}")
}

/// The model a seal was made for, if it is one.
fn sealed_model(value: &str) -> Option<String> {
    let hex = value.strip_prefix(PREFIX)?;
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    let plain = String::from_utf8(bytes?).ok()?;
    plain.rsplit_once('|').map(|(model, _)| model.to_string())
}

/// `emits` with the framings' placeholder replaced by this response's seal.
pub fn seal_emits(emits: Vec<Emit>, seal: &str) -> Vec<Emit> {
    emits
        .into_iter()
        .map(|emit| match emit {
            Emit::Chunk(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) if text.contains(SEAL) => {
                    Emit::Chunk(Bytes::from(text.replace(SEAL, seal)))
                }
                _ => Emit::Chunk(bytes),
            },
            other => other,
        })
        .collect()
}

/// Every seal a request sends back, in order.
pub fn seals_in(body: &Value) -> Vec<&str> {
    let mut found = Vec::new();
    let mut stack = vec![body];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) if s.starts_with(PREFIX) => found.push(s.as_str()),
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(map) => stack.extend(map.values().rev()),
            _ => {}
        }
    }
    found
}

/// Refuses a request sending back state the real API would refuse: a seal made for another
/// model than `model`, or any when `reject_all`.
pub fn check(
    provider: ProviderKind,
    body: &Value,
    model: &str,
    reject_all: bool,
) -> Result<(), String> {
    let foreign = seals_in(body)
        .into_iter()
        .any(|s| reject_all || sealed_model(s).as_deref() != Some(model));
    if !foreign {
        return Ok(());
    }
    Err(match provider {
        ProviderKind::Anthropic => {
            "messages.1.content.0: Invalid `signature` in `thinking` block".into()
        }
        ProviderKind::Responses => {
            "The encrypted content for item rs_demo_0 could not be verified.".into()
        }
        ProviderKind::Gemini | ProviderKind::Interactions => "Corrupted thought signature.".into(),
        ProviderKind::OpenAi | ProviderKind::Ollama => {
            "reasoning_details: the encrypted reasoning could not be verified".into()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_seal_names_its_model_and_is_found_anywhere_in_a_request() {
        let s = seal("claude-opus-4-7", 3);
        assert_eq!(sealed_model(&s).as_deref(), Some("claude-opus-4-7"));
        assert_ne!(seal("m", 1), seal("m", 2));
        let body = json!({"messages": [{"content": [{"type": "thinking", "signature": s}]}]});
        assert_eq!(seals_in(&body), [s.as_str()]);
        let p = ProviderKind::Anthropic;
        assert!(check(p, &body, "claude-opus-4-7", false).is_ok());
        assert!(check(p, &body, "claude-sonnet-4-6", false).is_err());
        assert!(check(p, &body, "claude-opus-4-7", true).is_err());
        assert!(check(p, &json!({"messages": []}), "m", true).is_ok());
    }
}
