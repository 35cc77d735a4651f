//! Reasoning state across turns: what one response returns for later (collected from the
//! parser's [`Piece::State`]s, never turned into events), who produced it, and whether an
//! answer's state is worth keeping. Pure.

use serde_json::Value;

use crate::server::config::Config;
use crate::server::providers::{Piece, MAX_STATE_BYTES};
use crate::server::store::replay::Provenance;

/// The reasoning state of one response, in stream order, up to [`MAX_STATE_BYTES`].
#[derive(Debug, Default)]
pub struct Collector {
    items: Vec<Value>,
    bytes: usize,
    lost: bool,
}

impl Collector {
    /// Takes `piece` if it is about reasoning state; false for any other piece.
    pub fn take(&mut self, piece: &Piece) -> bool {
        match piece {
            Piece::State(item) => {
                self.bytes += item.to_string().len();
                if self.bytes > MAX_STATE_BYTES {
                    self.lost = true;
                }
                if !self.lost {
                    self.items.push(item.clone());
                } else {
                    self.items.clear();
                }
                true
            }
            Piece::StateLost => {
                self.lost = true;
                self.items.clear();
                true
            }
            _ => false,
        }
    }

    /// The state to send back with this answer: none when there was none, or when some of it
    /// could not be kept (half of it would not be what the provider sent).
    pub fn into_items(self) -> Option<Vec<Value>> {
        (!self.lost && !self.items.is_empty()).then_some(self.items)
    }
}

/// Who produced a response of `model` from the configured provider at `upstream`. The
/// upstream is kept without its user and password (an operator may write a key into the URL):
/// the database holds no secret.
pub fn provenance(config: &Config, upstream: &str, model: &str) -> Provenance {
    Provenance {
        provider: config.provider.name().to_string(),
        model: model.to_string(),
        upstream: without_credentials(upstream),
    }
}

/// `url` without its user, password and query (where keys also go).
fn without_credentials(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// True when a request carries reasoning state from earlier answers.
pub fn carries_state(messages: &[crate::domain::ChatMessage]) -> bool {
    messages.iter().any(|m| !m.replay.is_empty())
}

/// True when an upstream's refusal of a request that carried reasoning state is about that
/// state: its words name a signature, encrypted content or a thought/reasoning item.
pub fn names_replayed_state(detail: &str) -> bool {
    let detail = detail.to_ascii_lowercase();
    ["signature", "encrypted", "thinking", "thought", "reasoning"]
        .iter()
        .any(|w| detail.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn state_pieces_are_collected_in_order_and_others_left() {
        let mut c = Collector::default();
        assert!(!c.take(&Piece::Answer("x".into())));
        assert!(c.take(&Piece::State(json!({"a": 1}))));
        assert!(c.take(&Piece::State(json!({"b": 2}))));
        assert_eq!(c.into_items(), Some(vec![json!({"a": 1}), json!({"b": 2})]));
        assert_eq!(Collector::default().into_items(), None);
    }

    #[test]
    fn a_lost_item_or_too_much_state_keeps_nothing() {
        let mut c = Collector::default();
        c.take(&Piece::State(json!({"a": 1})));
        c.take(&Piece::StateLost);
        c.take(&Piece::State(json!({"b": 2})));
        assert_eq!(c.into_items(), None);
        let mut big = Collector::default();
        let half = "x".repeat(MAX_STATE_BYTES / 2 + 1);
        big.take(&Piece::State(json!(half)));
        assert!(big.items.len() == 1);
        big.take(&Piece::State(json!(half)));
        assert_eq!(big.into_items(), None);
    }

    #[test]
    fn the_upstream_is_kept_without_its_credentials() {
        assert_eq!(
            without_credentials("https://me:s3cret@llm.example/v1?key=abc"),
            "https://llm.example/v1"
        );
        assert_eq!(
            without_credentials("http://127.0.0.1:11434/v1"),
            "http://127.0.0.1:11434/v1"
        );
    }

    #[test]
    fn refusals_about_replayed_state_are_told_apart() {
        assert!(names_replayed_state(
            "messages.1.content.0: Invalid `signature` in `thinking` block"
        ));
        assert!(names_replayed_state(
            "The encrypted content for item rs_1 could not be verified."
        ));
        assert!(!names_replayed_state(
            "prompt is too long: 210000 tokens > 200000 maximum"
        ));
    }
}
