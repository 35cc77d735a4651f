//! How the demo model honours the sampling parameters: it reads them from each wire format's
//! own fields, refuses temperature and top-p for the model that lists only an output limit (as
//! OpenAI's reasoning models and Claude Opus 4.7 do, with their words), and answers a
//! `[params]` question with what it received, so a test sees what reached the upstream.

use serde_json::Value;

use crate::server::config::ProviderKind;

/// The demo model that takes only an output limit, like a reasoning model that refuses
/// sampling.
pub const LIMIT_ONLY: &str = "ponder-demo-deep";

/// The sampling parameters a request carried, as numbers, under the wire's names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Received {
    pub temperature: Option<(String, f64)>,
    pub top_p: Option<(String, f64)>,
    pub max_tokens: Option<(String, f64)>,
}

/// Reads the sampling parameters of `body` where `provider` keeps them.
pub fn received(provider: ProviderKind, body: &Value) -> Received {
    let (holder, names): (&Value, [&str; 3]) = match provider {
        ProviderKind::OpenAi => (body, ["temperature", "top_p", "max_tokens"]),
        ProviderKind::Anthropic => (body, ["temperature", "top_p", "max_tokens"]),
        ProviderKind::Responses => (body, ["temperature", "top_p", "max_output_tokens"]),
        ProviderKind::Gemini => (
            &body["generationConfig"],
            ["temperature", "topP", "maxOutputTokens"],
        ),
        ProviderKind::Interactions => (
            &body["generation_config"],
            ["temperature", "top_p", "max_output_tokens"],
        ),
        ProviderKind::Ollama => (&body["options"], ["temperature", "top_p", "num_predict"]),
    };
    let read = |name: &str| {
        holder
            .get(name)
            .and_then(Value::as_f64)
            .map(|v| (name.to_string(), v))
    };
    Received {
        temperature: read(names[0]),
        top_p: read(names[1]),
        max_tokens: read(names[2]),
    }
}

/// The 400 message of a parameter `model` does not take, in the provider's own words. Only
/// the wires whose model list names the parameters (OpenAI's shape, which Anthropic's and the
/// Responses API's share) refuse: Gemini and Ollama take sampling on every model.
pub fn refusal(provider: ProviderKind, model: &str, got: &Received) -> Option<String> {
    let listed = matches!(
        provider,
        ProviderKind::OpenAi | ProviderKind::Anthropic | ProviderKind::Responses
    );
    if model != LIMIT_ONLY || !listed {
        return None;
    }
    let (name, _) = got.temperature.as_ref().or(got.top_p.as_ref())?;
    Some(match provider {
        ProviderKind::Anthropic => format!("`{name}` is deprecated for this model."),
        _ => format!("Unsupported parameter: '{name}' is not supported with this model."),
    })
}

/// What a `[params]` question is answered with.
pub fn report(got: &Received) -> String {
    let line = |what: &str, v: &Option<(String, f64)>| match v {
        Some((name, value)) => format!("- {what}: {value} (`{name}`)\n"),
        None => format!("- {what}: not sent\n"),
    };
    format!(
        "My sampling parameters:\n\n{}{}{}",
        line("temperature", &got.temperature),
        line("top-p", &got.top_p),
        line("output limit", &got.max_tokens)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_wire_is_read_where_it_keeps_them() {
        let gemini = json!({"generationConfig": {"temperature": 0.7, "maxOutputTokens": 512}});
        let got = received(ProviderKind::Gemini, &gemini);
        assert_eq!(got.temperature, Some(("temperature".into(), 0.7)));
        assert_eq!(got.top_p, None);
        assert_eq!(got.max_tokens, Some(("maxOutputTokens".into(), 512.0)));
        let ollama = json!({"options": {"top_p": 0.9, "num_predict": 100}});
        let got = received(ProviderKind::Ollama, &ollama);
        assert_eq!(got.top_p, Some(("top_p".into(), 0.9)));
        assert!(report(&got).contains("- temperature: not sent"));
        assert!(report(&got).contains("- top-p: 0.9 (`top_p`)"));
    }

    #[test]
    fn the_limit_only_model_refuses_sampling_in_the_providers_words() {
        let body = json!({"temperature": 0.5, "max_tokens": 100});
        let got = received(ProviderKind::OpenAi, &body);
        assert_eq!(
            refusal(ProviderKind::OpenAi, LIMIT_ONLY, &got).as_deref(),
            Some("Unsupported parameter: 'temperature' is not supported with this model.")
        );
        assert!(refusal(ProviderKind::OpenAi, "ponder-demo", &got).is_none());
        let limit_only = received(ProviderKind::OpenAi, &json!({"max_tokens": 100}));
        assert!(refusal(ProviderKind::OpenAi, LIMIT_ONLY, &limit_only).is_none());
    }
}
