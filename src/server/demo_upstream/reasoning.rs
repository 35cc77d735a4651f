//! How the demo model honours the reasoning controls, so each one is tested end to end: it
//! lists several models with different capabilities in every provider's list shape, thinks
//! longer at higher effort, answers without thinking when thinking is off or when a prefill
//! already closed `</think>`, and refuses a setting its model does not take, as real servers do.

use serde_json::{json, Value};

use super::scenarios::{Script, Step};
use crate::domain::Effort;
use crate::server::config::ProviderKind;

/// The demo's models: (id, display name, reasons, can switch thinking, takes an effort).
pub const MODELS: [(&str, &str, bool, bool, bool); 3] = [
    ("ponder-demo", "Ponder demo", true, true, true),
    (
        "ponder-demo-deep",
        "Ponder demo (deep, always thinks)",
        true,
        false,
        true,
    ),
    (
        "ponder-demo-mini",
        "Ponder demo mini (no reasoning)",
        false,
        false,
        false,
    ),
];

/// `GET /v1/models` in the shape OpenAI-compatible servers and Anthropic share.
pub fn openai_list() -> Value {
    let data: Vec<Value> = MODELS
        .iter()
        .map(|(id, name, reasons, toggle, effort)| {
            let mut params = vec!["max_tokens"];
            if *id != super::sampling::LIMIT_ONLY {
                params.extend(["temperature", "top_p"]);
            }
            if *reasons {
                params.extend(["reasoning", "include_reasoning"]);
            }
            if *toggle {
                params.push("enable_thinking");
            }
            if *effort {
                params.push("reasoning_effort");
            }
            json!({"id": id, "object": "model", "type": "model", "display_name": name, "owned_by": "ponder", "supported_parameters": params})
        })
        .collect();
    json!({"object": "list", "data": data, "has_more": false})
}

/// `GET /v1beta/models`, Gemini's shape.
pub fn gemini_list() -> Value {
    let models: Vec<Value> = MODELS
        .iter()
        .map(|(id, name, reasons, _, _)| {
            json!({"name": format!("models/{id}"), "displayName": name, "thinking": reasons, "supportedGenerationMethods": ["generateContent", "streamGenerateContent"]})
        })
        .collect();
    json!({"models": models})
}

/// `GET /api/tags`, Ollama's list.
pub fn ollama_tags() -> Value {
    let models: Vec<Value> = MODELS
        .iter()
        .map(
            |(id, ..)| json!({"name": id, "model": id, "size": 0, "details": {"family": "ponder"}}),
        )
        .collect();
    json!({"models": models})
}

/// `POST /api/show`: the capabilities of one model, or `None` for an unknown one.
pub fn ollama_show(model: &str) -> Option<Value> {
    let (_, _, reasons, ..) = MODELS.iter().find(|(id, ..)| *id == model)?;
    let mut caps = vec!["completion"];
    if *reasons {
        caps.push("thinking");
    }
    Some(json!({"capabilities": caps, "details": {"family": "ponder"}}))
}

/// What one request asked of the reasoning, read from the provider's own fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Asked {
    pub model: String,
    pub thinking: Option<bool>,
    pub effort: Option<Effort>,
    /// The setting's name on the wire, for the error of a model that does not take it.
    pub setting: Option<&'static str>,
    /// The request continues an assistant message whose reasoning is already closed.
    pub prefilled: bool,
    /// What the real API answers `400` to, whatever the model (Anthropic's manual budget on an
    /// adaptive-only model).
    pub refusal: Option<String>,
    /// Adaptive thinking whose display is omitted (asked, or the model's default): only a
    /// signature streams.
    pub omitted: bool,
}

fn effort_of_budget(budget: u64) -> Effort {
    match budget {
        0..=2_048 => Effort::Low,
        2_049..=12_000 => Effort::Medium,
        _ => Effort::High,
    }
}

/// Reads the model and reasoning settings of `body` (`model` comes from the path for Gemini).
pub fn asked(provider: ProviderKind, body: &Value, path_model: Option<&str>) -> Asked {
    let mut a = Asked {
        model: path_model
            .map(str::to_string)
            .or_else(|| {
                body.get("model")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default(),
        ..Asked::default()
    };
    match provider {
        ProviderKind::OpenAi => {
            if let Some(e) = body.get("reasoning_effort").and_then(Value::as_str) {
                a.effort = Effort::parse(e);
                a.setting = Some("reasoning_effort");
            }
            if let Some(on) = body["chat_template_kwargs"]["enable_thinking"].as_bool() {
                a.thinking = Some(on);
                a.setting = Some("chat_template_kwargs.enable_thinking");
            }
        }
        ProviderKind::Responses => {
            if let Some(e) = body["reasoning"]["effort"].as_str() {
                a.effort = Effort::parse(e);
                a.setting = Some("reasoning.effort");
            }
        }
        ProviderKind::Anthropic => anthropic_asked(body, &mut a),
        ProviderKind::Gemini => {
            let config = &body["generationConfig"]["thinkingConfig"];
            if let Some(level) = config.get("thinkingLevel").and_then(Value::as_str) {
                a.setting = Some("thinkingConfig.thinkingLevel");
                a.effort = Effort::parse(level).or(Some(Effort::Low));
                if config.get("thinkingBudget").is_some() {
                    a.refusal =
                        Some("You can only set one of thinking budget and thinking level.".into());
                }
            }
            if let Some(budget) = config.get("thinkingBudget").and_then(Value::as_u64) {
                a.setting = Some("thinkingConfig.thinkingBudget");
                if budget == 0 {
                    a.thinking = Some(false);
                } else {
                    a.effort = Some(effort_of_budget(budget));
                }
            }
        }
        ProviderKind::Interactions => {
            if let Some(level) = body["generation_config"]["thinking_level"].as_str() {
                a.setting = Some("generation_config.thinking_level");
                a.effort = Effort::parse(level).or(Some(Effort::Low));
            }
        }
        ProviderKind::Ollama => match body.get("think") {
            Some(Value::Bool(on)) => {
                a.thinking = Some(*on);
                a.setting = Some("think");
            }
            Some(Value::String(level)) => {
                a.effort = Effort::parse(level);
                a.setting = Some("think");
            }
            _ => {}
        },
    }
    let list = match provider {
        ProviderKind::Responses => "input",
        ProviderKind::Gemini => "contents",
        ProviderKind::Interactions => "input",
        _ => "messages",
    };
    if let Some(last) = body
        .get(list)
        .and_then(Value::as_array)
        .and_then(|l| l.last())
    {
        let role = last.get("role").and_then(Value::as_str);
        let text = last.get("content").and_then(Value::as_str).unwrap_or("");
        a.prefilled = role == Some("assistant") && text.contains("</think>");
    }
    a
}

/// Anthropic's thinking as the real API reads it per model: adaptive-only models (named like
/// Opus 4.7) refuse `enabled` and `disabled` with the API's own words, and default to an
/// omitted display.
fn anthropic_asked(body: &Value, a: &mut Asked) {
    use crate::server::providers::anthropic::{thinking_mode, ThinkingMode};
    let mode = thinking_mode(&a.model);
    let kind = body["thinking"]["type"].as_str();
    if mode == ThinkingMode::AdaptiveOnly {
        if let Some(kind @ ("enabled" | "disabled")) = kind {
            a.refusal = Some(format!(
                "\"thinking.type.{kind}\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking behavior."
            ));
        }
    }
    match kind {
        Some("disabled") => {
            a.thinking = Some(false);
            a.setting = Some("thinking");
        }
        Some("enabled") => {
            a.effort = body["thinking"]["budget_tokens"]
                .as_u64()
                .map(effort_of_budget);
        }
        Some("adaptive") => {
            let word = body["output_config"]["effort"].as_str();
            a.effort = word.and_then(Effort::parse);
            let levels = crate::server::providers::anthropic::effort_levels(&a.model);
            if word.is_some() && !a.effort.is_some_and(|e| levels.contains(&e)) {
                let names: Vec<String> =
                    levels.iter().map(|e| format!("'{}'", e.as_str())).collect();
                a.refusal = Some(format!(
                    "output_config.effort: Input should be {}",
                    names.join(", ")
                ));
            }
            let display = body["thinking"]["display"].as_str();
            a.omitted = display == Some("omitted")
                || (display.is_none() && mode == ThinkingMode::AdaptiveOnly);
        }
        _ => {}
    }
}

/// The script as `asked` changes it, or the 400 message of a setting the model refuses.
pub fn apply(mut script: Script, asked: &Asked) -> Result<Script, String> {
    if let Some(refusal) = &asked.refusal {
        return Err(refusal.clone());
    }
    let (reasons, toggle, effort) = MODELS
        .iter()
        .find(|(id, ..)| *id == asked.model)
        .map(|(_, _, r, t, e)| (*r, *t, *e))
        .unwrap_or((true, true, true));
    // As real servers do: a model that cannot reason refuses being asked to (an explicit
    // "off" is harmless); an effort is refused by a model without levels; only Gemini refuses
    // a zero budget for a model that cannot stop thinking; elsewhere "off" is ignored.
    let refuses = (!reasons && asked.thinking != Some(false))
        || (asked.effort.is_some() && !effort)
        || (asked.thinking == Some(false)
            && !toggle
            && asked.setting == Some("thinkingConfig.thinkingBudget"));
    let refused = asked.setting.filter(|_| refuses);
    if let Some(setting) = refused {
        return Err(format!(
            "{setting} is not supported by the model {}",
            asked.model
        ));
    }
    let think = reasons && (asked.thinking != Some(false) || !toggle) && !asked.prefilled;
    if !think {
        script
            .steps
            .retain(|s| !matches!(s, Step::Think(_) | Step::Hidden(_) | Step::Omitted(_)));
        return Ok(script);
    }
    if asked.omitted {
        let mut steps = Vec::with_capacity(script.steps.len());
        for step in script.steps.drain(..) {
            match (step, steps.last_mut()) {
                (Step::Think(_), Some(Step::Omitted(pause))) => {
                    *pause += std::time::Duration::from_millis(300);
                }
                (Step::Think(_), _) => {
                    steps.push(Step::Omitted(std::time::Duration::from_millis(600)))
                }
                (step, _) => steps.push(step),
            }
        }
        script.steps = steps;
        return Ok(script);
    }
    match asked.effort {
        Some(Effort::Low) => {
            let mut kept = false;
            script.steps.retain_mut(|s| match s {
                Step::Think(text) if !kept => {
                    kept = true;
                    if let Some(end) = text.find(". ") {
                        text.truncate(end + 1);
                    }
                    true
                }
                Step::Think(_) => false,
                _ => true,
            });
        }
        Some(Effort::High) => {
            let mut steps = Vec::with_capacity(script.steps.len() * 2);
            for s in script.steps.drain(..) {
                let extra = matches!(s, Step::Think(_));
                steps.push(s);
                if extra {
                    steps.push(Step::Think(
                        "\n\nThinking harder: I check the result another way, and it holds. "
                            .into(),
                    ));
                }
            }
            script.steps = steps;
        }
        _ => {}
    }
    // The deep model thinks longer than the others at the same setting (a comparison of the
    // three shows three thinking lengths: deep, the usual, none).
    if asked.model == DEEP && asked.effort != Some(Effort::Low) {
        let mut steps = Vec::with_capacity(script.steps.len() * 2);
        for s in script.steps.drain(..) {
            let deeper = matches!(s, Step::Think(_));
            steps.push(s);
            if deeper {
                steps.push(Step::Think(DEEPER.into()));
            }
        }
        script.steps = steps;
    }
    Ok(script)
}

/// The model that always thinks, and longer.
const DEEP: &str = "ponder-demo-deep";

/// What the deep model thinks on top of the others' reasoning.
const DEEPER: &str = "\n\nA deeper look: I weigh the other readings of the question one by one, \
    check each step against them, and try a counterexample; none of them changes the answer, \
    so I keep it.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::demo_upstream::Scenario;

    fn thinking_chars(s: &Script) -> usize {
        s.steps
            .iter()
            .map(|s| match s {
                Step::Think(t) => t.len(),
                _ => 0,
            })
            .sum()
    }

    #[test]
    fn effort_lengthens_thinking_and_off_removes_it() {
        let base = Scenario::ThinkThenAnswer.script();
        let with = |body: Value| apply(base.clone(), &asked(ProviderKind::OpenAi, &body, None));
        let low = with(json!({"model": "ponder-demo", "reasoning_effort": "low"})).unwrap();
        let mid = with(json!({"model": "ponder-demo"})).unwrap();
        let high = with(json!({"model": "ponder-demo", "reasoning_effort": "high"})).unwrap();
        assert!(thinking_chars(&low) < thinking_chars(&mid));
        assert!(thinking_chars(&mid) < thinking_chars(&high));
        let off = with(
            json!({"model": "ponder-demo", "chat_template_kwargs": {"enable_thinking": false}}),
        )
        .unwrap();
        assert_eq!(thinking_chars(&off), 0);
        let prefilled = with(json!({"model": "ponder-demo", "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "<think>\nx\n</think>\n\n"}]})).unwrap();
        assert_eq!(thinking_chars(&prefilled), 0);
        assert!(prefilled.steps.iter().any(|s| matches!(s, Step::Answer(_))));
    }

    #[test]
    fn the_three_models_think_three_lengths() {
        let base = Scenario::ThinkThenAnswer.script();
        let with = |model: &str| {
            let body = json!({ "model": model });
            thinking_chars(&apply(base.clone(), &asked(ProviderKind::OpenAi, &body, None)).unwrap())
        };
        assert!(with("ponder-demo-deep") > with("ponder-demo"));
        assert!(with("ponder-demo") > 0);
        assert_eq!(with("ponder-demo-mini"), 0);
    }

    #[test]
    fn a_setting_the_model_does_not_take_is_refused_by_name() {
        let base = Scenario::ThinkThenAnswer.script();
        let body = json!({"model": "ponder-demo-mini", "reasoning_effort": "high"});
        let err = apply(base.clone(), &asked(ProviderKind::OpenAi, &body, None)).unwrap_err();
        assert!(err.contains("reasoning_effort"), "{err}");
        let body = json!({"model": "ponder-demo-deep", "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}});
        let err = apply(base.clone(), &asked(ProviderKind::Gemini, &body, None)).unwrap_err();
        assert!(err.contains("thinkingBudget"), "{err}");
        let body = json!({"model": "ponder-demo-deep", "think": true});
        assert!(apply(base.clone(), &asked(ProviderKind::Ollama, &body, None)).is_ok());
        let body = json!({"model": "ponder-demo-deep", "think": false});
        let deep = apply(base.clone(), &asked(ProviderKind::Ollama, &body, None)).unwrap();
        assert!(
            thinking_chars(&deep) > 0,
            "a model that cannot stop thinking ignores off"
        );
        let mini = apply(
            base,
            &asked(
                ProviderKind::OpenAi,
                &json!({"model": "ponder-demo-mini"}),
                None,
            ),
        )
        .unwrap();
        assert_eq!(thinking_chars(&mini), 0);
    }

    #[test]
    fn an_adaptive_only_model_refuses_a_budget_and_omits_its_display_by_default() {
        let base = Scenario::ThinkThenAnswer.script();
        let anthropic =
            |body: Value| apply(base.clone(), &asked(ProviderKind::Anthropic, &body, None));
        let err = anthropic(json!({"model": "claude-opus-4-7", "thinking": {"type": "enabled", "budget_tokens": 2048}})).unwrap_err();
        assert!(
            err.starts_with("\"thinking.type.enabled\" is not supported for this model"),
            "{err}"
        );
        assert!(
            anthropic(json!({"model": "claude-opus-4-7", "thinking": {"type": "disabled"}}))
                .is_err()
        );
        assert!(anthropic(json!({"model": "claude-sonnet-4-5", "thinking": {"type": "enabled", "budget_tokens": 2048}})).is_ok());
        let omitted = |s: &Script| {
            s.steps
                .iter()
                .filter(|s| matches!(s, Step::Omitted(_)))
                .count()
        };
        let default =
            anthropic(json!({"model": "claude-opus-4-7", "thinking": {"type": "adaptive"}}))
                .unwrap();
        assert_eq!((omitted(&default), thinking_chars(&default)), (1, 0));
        let summarized = anthropic(json!({"model": "claude-opus-4-7", "thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "high"}})).unwrap();
        assert_eq!(omitted(&summarized), 0);
        assert!(
            thinking_chars(&summarized) > thinking_chars(&base),
            "high effort thinks longer"
        );
        let asked_omitted = anthropic(json!({"model": "claude-sonnet-4-6", "thinking": {"type": "adaptive", "display": "omitted"}})).unwrap();
        assert_eq!(omitted(&asked_omitted), 1);
    }

    #[test]
    fn every_list_shape_names_every_model() {
        let parsed = crate::server::models::parse_list(ProviderKind::OpenAi, &openai_list());
        assert_eq!(parsed.len(), MODELS.len());
        assert!(parsed[0].metadata.unwrap().toggle);
        assert!(!parsed[2].metadata.unwrap().reasons);
        let gemini = crate::server::models::parse_list(ProviderKind::Gemini, &gemini_list());
        assert_eq!(gemini[1].id, "ponder-demo-deep");
        let tags = crate::server::models::parse_list(ProviderKind::Ollama, &ollama_tags());
        assert_eq!(tags.len(), 3);
        assert!(ollama_show("ponder-demo-mini").is_some());
        assert!(ollama_show("nope").is_none());
    }
}
