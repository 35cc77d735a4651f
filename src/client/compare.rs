//! Comparing models: one question to several of them, and the figures a reader of reasoning
//! models compares the answers by (how long each thought, the reasoning tokens it spent, when
//! its answer began, how long it took in all, what it cost). Pure, from the one fold of a turn's
//! events ([`TurnState`]), so every surface that compares reads the same figures.

use super::labels::word_count;
use super::turn_state::TurnState;
use crate::domain::compare::Compared;
use crate::domain::event::Cost;
use crate::domain::usage::micros_text;
use crate::domain::Effort;
use crate::i18n::{fill, Locale};

/// The fewest and the most models one comparison asks.
pub const MODELS: std::ops::RangeInclusive<usize> = 2..=4;

/// The models of a comparison from a comma-separated list: trimmed, each once, 2 to 4.
pub fn models_asked(list: &str) -> Result<Vec<String>, String> {
    let mut models: Vec<String> = Vec::new();
    for m in list.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        if models.iter().any(|seen| seen == m) {
            return Err(format!("{m} is named twice"));
        }
        models.push(m.to_string());
    }
    if !MODELS.contains(&models.len()) {
        return Err(format!(
            "a comparison asks {} to {} models, not {}",
            MODELS.start(),
            MODELS.end(),
            models.len()
        ));
    }
    Ok(models)
}

/// One model of a comparison on the page, with its own reasoning settings (unset: the
/// composer's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pane {
    pub model: String,
    pub thinking: Option<bool>,
    pub effort: Option<Effort>,
}

/// The models a comparison starts with: the one in use, then the next ones on offer, two in
/// all (one alone is no comparison: `None`).
pub fn first_panes(current: &str, offered: &[String]) -> Option<Vec<Pane>> {
    let mut models: Vec<&str> = vec![current];
    models.extend(offered.iter().map(String::as_str).filter(|m| *m != current));
    (models.len() >= *MODELS.start()).then(|| {
        models
            .into_iter()
            .take(*MODELS.start())
            .map(|m| Pane {
                model: m.to_string(),
                ..Pane::default()
            })
            .collect()
    })
}

/// A pane more: the first model on offer not compared yet, while there is room.
pub fn with_another(panes: &[Pane], offered: &[String]) -> Option<Pane> {
    if panes.len() >= *MODELS.end() {
        return None;
    }
    offered
        .iter()
        .find(|m| panes.iter().all(|p| &p.model != *m))
        .map(|m| Pane {
            model: m.clone(),
            ..Pane::default()
        })
}

/// The versions of an answer shown side by side: its comparison's answers, while the reader has
/// kept none of them (two at least; else the answer shows as any other).
pub fn compared_versions(versions: &[Option<Compared>]) -> Option<Vec<usize>> {
    let compared: Vec<usize> = (0..versions.len())
        .filter(|&i| versions[i].is_some())
        .collect();
    let kept = versions.iter().flatten().any(|c| c.picked);
    (compared.len() >= 2 && !kept).then_some(compared)
}

/// One answer's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// Thinking blocks, and the time they took together (the server's measure when it sent one).
    pub blocks: usize,
    pub thinking_ms: u64,
    pub thinking_words: usize,
    pub reasoning_tokens: Option<u64>,
    /// From the question to the answer's first text.
    pub first_answer_ms: Option<u64>,
    /// From the question to the end, once it ended.
    pub total_ms: Option<u64>,
    pub cost: Option<Cost>,
}

impl Figures {
    /// The figures of a turn as it stands at client time `now`.
    pub fn of(turn: &TurnState, now: f64) -> Figures {
        let usage = turn.usage.as_ref();
        Figures {
            blocks: turn.blocks.len(),
            thinking_ms: turn.blocks.iter().map(|b| b.elapsed_ms(now)).sum(),
            thinking_words: turn.blocks.iter().map(|b| word_count(&b.text)).sum(),
            reasoning_tokens: usage.and_then(|u| u.reasoning_tokens),
            first_answer_ms: turn
                .first_answer_at
                .map(|at| (at - turn.created_at).max(0.0) as u64),
            total_ms: turn.total_ms,
            cost: usage.and_then(|u| u.cost.clone()),
        }
    }
}

/// A time to a tenth of a second, however short: "0.4s", "12.0s".
fn tenths(ms: u64, l: Locale) -> String {
    fill(
        l.catalogue().seconds_short,
        &[("n", &l.one_decimal(ms as f64 / 1000.0))],
    )
}

/// The figures on one line: `thought 4.2s · 1,024 reasoning tokens · first answer token at
/// 4.6s · 6.1s in all · USD 0.0012`, each part only when known.
pub fn figures_line(f: &Figures, l: Locale) -> String {
    let c = l.catalogue();
    let thought = if f.blocks == 0 {
        c.compare_no_thinking.to_string()
    } else {
        fill(c.compare_thought, &[("time", &tenths(f.thinking_ms, l))])
    };
    [
        Some(thought),
        f.reasoning_tokens
            .map(|n| fill(c.compare_reasoning_tokens, &[("n", &l.integer(n))])),
        f.first_answer_ms
            .map(|ms| fill(c.compare_first_answer, &[("time", &tenths(ms, l))])),
        f.total_ms
            .map(|ms| fill(c.compare_total, &[("time", &tenths(ms, l))])),
        f.cost
            .as_ref()
            .map(|c| format!("{} {}", c.currency, micros_text(c.micros))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{FinishReason, ThinkingKind, TurnEvent, Usage};

    #[test]
    fn a_comparison_starts_with_the_model_in_use_and_grows_to_four() {
        let offered: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let panes = first_panes("c", &offered).unwrap();
        let models: Vec<&str> = panes.iter().map(|p| p.model.as_str()).collect();
        assert_eq!(models, ["c", "a"]);
        assert!(first_panes("a", &["a".to_string()]).is_none());
        let mut panes = panes;
        while let Some(p) = with_another(&panes, &offered) {
            panes.push(p);
        }
        let models: Vec<&str> = panes.iter().map(|p| p.model.as_str()).collect();
        assert_eq!(models, ["c", "a", "b", "d"]);
    }

    #[test]
    fn answers_show_side_by_side_until_one_is_kept() {
        let c = Some(Compared::default());
        assert_eq!(compared_versions(&[None, c, c]), Some(vec![1, 2]));
        assert_eq!(compared_versions(&[None, c]), None);
        let kept = Some(Compared {
            picked: true,
            rating: 0,
        });
        assert_eq!(compared_versions(&[c, kept, c]), None);
        assert_eq!(compared_versions(&[]), None);
    }

    #[test]
    fn a_comparison_names_two_to_four_models_each_once() {
        assert_eq!(
            models_asked(" a, b ,c").unwrap(),
            vec!["a".to_string(), "b".into(), "c".into()]
        );
        assert!(models_asked("a").unwrap_err().contains("not 1"));
        assert!(models_asked("a,b,c,d,e").unwrap_err().contains("not 5"));
        assert!(models_asked("a,b,a").unwrap_err().contains("twice"));
        assert!(models_asked(",,").is_err());
    }

    fn played(events: &[(f64, TurnEvent)]) -> TurnState {
        let mut turn = TurnState::started(1000.0);
        for (at, e) in events {
            turn.apply(e, *at);
        }
        turn
    }

    #[test]
    fn the_figures_come_from_the_turn_s_events() {
        let turn = played(&[
            (
                1100.0,
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Raw,
                    at_ms: None,
                },
            ),
            (
                1200.0,
                TurnEvent::Thinking {
                    block: 0,
                    text: "weigh the options".into(),
                },
            ),
            (
                3000.0,
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(1850),
                    cut_short: false,
                },
            ),
            (
                3400.0,
                TurnEvent::Delta {
                    text: "Blue.".into(),
                },
            ),
            (
                3500.0,
                TurnEvent::Delta {
                    text: " Rayleigh.".into(),
                },
            ),
            (
                3900.0,
                TurnEvent::Done {
                    finish_reason: FinishReason::Stop,
                    usage: Some(Usage {
                        reasoning_tokens: Some(1024),
                        output_tokens: Some(1100),
                        cost: Some(Cost {
                            currency: "USD".into(),
                            micros: 1200,
                        }),
                        ..Usage::default()
                    }),
                    thinking_chars: 17,
                    total_ms: 2950,
                },
            ),
        ]);
        let f = Figures::of(&turn, 9999.0);
        assert_eq!(f.blocks, 1);
        assert_eq!(f.thinking_ms, 1850, "the server's measure");
        assert_eq!(f.thinking_words, 3);
        assert_eq!(f.reasoning_tokens, Some(1024));
        assert_eq!(
            f.first_answer_ms,
            Some(2400),
            "the first delta, not the second"
        );
        assert_eq!(f.total_ms, Some(2950));
        assert_eq!(
            figures_line(&f, Locale::En),
            "thought 1.9s · 1,024 reasoning tokens · first answer token at 2.4s · 3.0s in all · USD 0.0012"
        );
    }

    #[test]
    fn a_model_that_does_not_think_and_a_turn_still_running_say_what_is_known() {
        let turn = played(&[(1250.0, TurnEvent::Delta { text: "Hi".into() })]);
        let f = Figures::of(&turn, 2000.0);
        assert_eq!(f.blocks, 0);
        assert_eq!(f.total_ms, None);
        assert_eq!(
            figures_line(&f, Locale::En),
            "no thinking · first answer token at 0.3s"
        );
    }
}
