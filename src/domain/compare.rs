//! Comparisons over time: each answer a comparison kept (which model, whether the reader picked
//! it, their thumbs, how long it thought and the reasoning tokens it spent), and per model the
//! record a reader reads them by: comparisons, wins, thumbs, median thinking time and tokens.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The most answers one comparison (one assistant message) holds.
pub const MAX_COMPARED: usize = 4;

/// What a version that answers in a comparison carries besides its answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Compared {
    /// The reader kept this one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub picked: bool,
    /// The reader's thumbs: 1 up, -1 down, 0 none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rating: i8,
}

fn is_zero(n: &i8) -> bool {
    *n == 0
}

/// One answer of a comparison, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComparedAnswer {
    /// The assistant message the comparison answers: its answers are its versions.
    pub message: String,
    pub model: String,
    pub picked: bool,
    /// 1 up, -1 down, 0 none.
    pub rating: i8,
    /// From the usage ledger, once the turn ended.
    pub thinking_ms: Option<u64>,
    pub reasoning_tokens: Option<u64>,
}

/// One model's record over the reader's comparisons.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ModelRecord {
    pub model: String,
    /// Comparisons it answered in (of two answers or more).
    pub comparisons: u64,
    /// Of those, the ones whose picked answer was its.
    pub wins: u64,
    pub thumbs_up: u64,
    pub thumbs_down: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_thinking_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_reasoning_tokens: Option<u64>,
}

/// The middle value (the lower of the two middle ones for an even count); `None` for none.
pub fn median(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    let n = values.len();
    (n > 0).then(|| values[(n - 1) / 2])
}

/// Each model's record from the answers of the reader's comparisons, most wins first (then most
/// comparisons, then by name). A message with a single compared answer is no comparison.
pub fn records(answers: &[ComparedAnswer]) -> Vec<ModelRecord> {
    use std::collections::BTreeMap;
    let mut per_message: BTreeMap<&str, usize> = BTreeMap::new();
    for a in answers {
        *per_message.entry(&a.message).or_default() += 1;
    }
    let mut by_model: BTreeMap<&str, (ModelRecord, Vec<u64>, Vec<u64>)> = BTreeMap::new();
    let mut seen: std::collections::BTreeSet<(&str, &str)> = Default::default();
    for a in answers
        .iter()
        .filter(|a| per_message[a.message.as_str()] >= 2)
    {
        let (record, thinking, tokens) = by_model.entry(&a.model).or_default();
        record.model = a.model.clone();
        if seen.insert((&a.message, &a.model)) {
            record.comparisons += 1;
        }
        record.wins += u64::from(a.picked);
        record.thumbs_up += u64::from(a.rating > 0);
        record.thumbs_down += u64::from(a.rating < 0);
        thinking.extend(a.thinking_ms);
        tokens.extend(a.reasoning_tokens);
    }
    let mut out: Vec<ModelRecord> = by_model
        .into_values()
        .map(|(mut record, thinking, tokens)| {
            record.median_thinking_ms = median(thinking);
            record.median_reasoning_tokens = median(tokens);
            record
        })
        .collect();
    out.sort_by(|a, b| {
        (b.wins, b.comparisons)
            .cmp(&(a.wins, a.comparisons))
            .then_with(|| a.model.cmp(&b.model))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(message: &str, model: &str, picked: bool, rating: i8, ms: u64) -> ComparedAnswer {
        ComparedAnswer {
            message: message.into(),
            model: model.into(),
            picked,
            rating,
            thinking_ms: Some(ms),
            reasoning_tokens: Some(ms / 10),
        }
    }

    #[test]
    fn medians_take_the_lower_middle() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![5]), Some(5));
        assert_eq!(median(vec![9, 1, 5]), Some(5));
        assert_eq!(median(vec![4, 1, 9, 2]), Some(2));
    }

    #[test]
    fn wins_thumbs_and_medians_per_model() {
        let answers = vec![
            answer("m1", "deep", true, 1, 3000),
            answer("m1", "quick", false, -1, 200),
            answer("m2", "deep", false, 0, 5000),
            answer("m2", "quick", true, 1, 400),
            answer("m2", "mini", false, 0, 0),
            answer("m3", "deep", true, 0, 4000),
            answer("m3", "quick", false, 0, 300),
            // A lone answer is no comparison.
            answer("m4", "mini", true, 1, 0),
        ];
        let r = records(&answers);
        assert_eq!(
            r.iter().map(|m| m.model.as_str()).collect::<Vec<_>>(),
            ["deep", "quick", "mini"]
        );
        assert_eq!(
            r[0],
            ModelRecord {
                model: "deep".into(),
                comparisons: 3,
                wins: 2,
                thumbs_up: 1,
                thumbs_down: 0,
                median_thinking_ms: Some(4000),
                median_reasoning_tokens: Some(400),
            }
        );
        assert_eq!((r[1].wins, r[1].thumbs_up, r[1].thumbs_down), (1, 1, 1));
        assert_eq!(r[1].median_thinking_ms, Some(300));
        assert_eq!((r[2].comparisons, r[2].wins, r[2].thumbs_up), (1, 0, 0));
    }
}
