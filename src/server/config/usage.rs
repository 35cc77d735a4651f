//! What turns cost and how much a reader may spend: the operator's price table
//! (`PONDER_PRICES`, a JSON file) and the default limits (`PONDER_QUOTA`), with whether
//! administrators are held to theirs (`PONDER_QUOTA_ADMINS`).

use std::collections::BTreeMap;

use super::ConfigError;
use crate::domain::usage::{parse_quotas, Cost, Price, Quota, Spend};

/// Prices per model in one currency; a model without one (and no `"*"`) costs tokens only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices {
    currency: String,
    by_model: BTreeMap<String, Price>,
    every: Option<Price>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PricesFile {
    #[serde(default)]
    currency: Option<String>,
    models: BTreeMap<String, Price>,
}

impl Prices {
    /// The table's currency (`USD` unless the file says).
    pub fn currency(&self) -> &str {
        if self.currency.is_empty() {
            "USD"
        } else {
            &self.currency
        }
    }

    /// True when some model has a price.
    pub fn any(&self) -> bool {
        self.every.is_some() || !self.by_model.is_empty()
    }

    /// `model`'s price, if the table has one.
    pub fn of(&self, model: &str) -> Option<&Price> {
        self.by_model.get(model).or(self.every.as_ref())
    }

    /// What `spend` on `model` cost; `None` without a price.
    pub fn cost(&self, model: &str, spend: &Spend) -> Option<Cost> {
        self.of(model).map(|p| Cost {
            micros: p.cost_micros(spend),
            currency: self.currency().to_string(),
        })
    }

    /// Reads the file's text: `{"currency": "EUR", "models": {"gpt-5": {"input": 1.25,
    /// "cached_input": 0.125, "output": 10}, "*": {...}}}`, per million tokens.
    pub fn parse(text: &str) -> Result<Prices, ConfigError> {
        let bad = |why: String| ConfigError(format!("PONDER_PRICES: {why}"));
        let file: PricesFile = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "must be JSON like {{\"currency\": \"USD\", \"models\": {{\"*\": {{\"input\": 1.0, \"output\": 4.0}}}}}} ({e})"
            ))
        })?;
        let currency = file.currency.unwrap_or_else(|| "USD".into());
        if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(bad(format!(
                "currency {currency:?} must be a three-letter ISO 4217 code such as USD or EUR"
            )));
        }
        let mut out = Prices {
            currency,
            ..Prices::default()
        };
        for (model, price) in file.models {
            let all = [
                Some(price.input),
                price.cached_input,
                Some(price.output),
                price.reasoning,
            ];
            if all
                .iter()
                .flatten()
                .any(|p| !p.is_finite() || *p < 0.0 || *p > 1_000_000.0)
            {
                return Err(bad(format!(
                    "the prices of {model:?} must be numbers from 0 to 1000000 (per million tokens)"
                )));
            }
            if model == "*" {
                out.every = Some(price);
            } else if model.trim().is_empty() {
                return Err(bad("a model id is empty".into()));
            } else {
                out.by_model.insert(model, price);
            }
        }
        Ok(out)
    }
}

/// The limits readers are held to unless an administrator set their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuotaConfig {
    pub default: Vec<Quota>,
    /// Administrators start turns whatever they spent (`PONDER_QUOTA_ADMINS=exempt`, the
    /// default; `counted` holds them to their limits too).
    pub admins_exempt: bool,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        QuotaConfig {
            default: Vec::new(),
            admins_exempt: true,
        }
    }
}

/// The price table the variable's file names; none when it is unset.
pub(super) fn prices(path: Option<&str>) -> Result<Prices, ConfigError> {
    let Some(path) = path.map(str::trim).filter(|p| !p.is_empty()) else {
        return Ok(Prices::default());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("PONDER_PRICES={path:?} cannot be read: {e}")))?;
    Prices::parse(&text)
}

/// The default limits and the administrators' exemption.
pub(super) fn quota(
    limits: Option<&str>,
    admins: Option<&str>,
) -> Result<QuotaConfig, ConfigError> {
    let default = parse_quotas(limits.unwrap_or(""))
        .map_err(|why| ConfigError(format!("PONDER_QUOTA: {why}")))?;
    let admins_exempt = match admins.map(str::trim) {
        None | Some("") | Some("exempt") => true,
        Some("counted") => false,
        Some(other) => {
            return Err(ConfigError(format!(
                "PONDER_QUOTA_ADMINS={other:?} must be exempt or counted"
            )))
        }
    };
    Ok(QuotaConfig {
        default,
        admins_exempt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_has_its_price_or_the_one_for_every_model() {
        let p = Prices::parse(
            r#"{"currency": "EUR", "models": {"demo-deep": {"input": 1, "output": 4, "reasoning": 8}, "*": {"input": 0.5, "output": 1}}}"#,
        )
        .expect("valid");
        assert_eq!(p.currency(), "EUR");
        let spend = Spend {
            input_tokens: 1_000,
            output_tokens: 500,
            reasoning_tokens: 400,
            ..Spend::default()
        };
        assert_eq!(
            p.cost("demo-deep", &spend).map(|c| c.micros),
            Some(1_000 + 400 + 3_200)
        );
        assert_eq!(p.cost("other", &spend).map(|c| c.micros), Some(500 + 500));
        let none = Prices::parse(r#"{"models": {"a": {"input": 1, "output": 1}}}"#).expect("valid");
        assert_eq!(none.currency(), "USD");
        assert_eq!(none.cost("b", &spend), None);
    }

    #[test]
    fn a_bad_table_says_what_is_wrong() {
        for (text, says) in [
            ("[]", "must be JSON"),
            (r#"{"models": {"a": {"input": -1, "output": 1}}}"#, "from 0"),
            (r#"{"currency": "dollars", "models": {}}"#, "ISO 4217"),
            (r#"{"models": {"a": {"input": 1}}}"#, "must be JSON"),
            (r#"{"models": {" ": {"input": 1, "output": 1}}}"#, "empty"),
            (r#"{"models": {}, "tax": 1}"#, "must be JSON"),
        ] {
            let err = Prices::parse(text).expect_err(text).0;
            assert!(
                err.contains(says) && err.starts_with("PONDER_PRICES"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn quota_settings_are_read_or_refused() {
        assert_eq!(quota(None, None), Ok(QuotaConfig::default()));
        let q = quota(Some("tokens/day=10"), Some("counted")).expect("valid");
        assert_eq!((q.default.len(), q.admins_exempt), (1, false));
        assert!(quota(Some("tokens/year=1"), None).is_err());
        assert!(quota(None, Some("yes")).is_err());
    }
}
