//! The sampling parameters a reader may set for a turn (temperature, top-p, the most output
//! tokens) and which of them a model takes, so the page offers a control only where the
//! upstream would accept it and nothing is sent that the reader did not set.

use serde::{Deserialize, Serialize};

/// A number with two decimals (a temperature of `0.7`, a top-p of `0.95`), kept as hundredths
/// so settings stay comparable and hashable. Written on the wire as a plain JSON number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fraction(u16);

impl Fraction {
    /// `value` rounded to hundredths; `None` when it is not a finite number from 0 to 655.
    pub fn new(value: f64) -> Option<Fraction> {
        let hundredths = (value * 100.0).round();
        (value.is_finite() && (0.0..=f64::from(u16::MAX)).contains(&hundredths))
            .then_some(Fraction(hundredths as u16))
    }

    pub const fn hundredths(n: u16) -> Fraction {
        Fraction(n)
    }

    pub fn get(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

impl std::fmt::Display for Fraction {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let (whole, part) = (self.0 / 100, self.0 % 100);
        match part {
            0 => write!(f, "{whole}"),
            p if p % 10 == 0 => write!(f, "{whole}.{}", p / 10),
            p => write!(f, "{whole}.{p:02}"),
        }
    }
}

impl Serialize for Fraction {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.get())
    }
}

impl utoipa::PartialSchema for Fraction {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::Number)
            .minimum(Some(0.0))
            .maximum(Some(655.0))
            .into()
    }
}

impl utoipa::ToSchema for Fraction {}

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(deserializer)?;
        Fraction::new(value).ok_or_else(|| {
            serde::de::Error::custom("a sampling parameter must be a number from 0 to 655")
        })
    }
}

/// One sampling parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tunable {
    Temperature,
    TopP,
    MaxTokens,
}

crate::domain::wire::wire_names!(Tunable {
    Temperature = "temperature",
    TopP = "top_p",
    MaxTokens = "max_tokens",
});

impl Tunable {
    pub const ALL: [Tunable; 3] = [Tunable::Temperature, Tunable::TopP, Tunable::MaxTokens];

    pub fn as_str(self) -> &'static str {
        super::wire::WireName::wire_name(self)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The largest value the page and the server accept: a temperature up to 2 (every
    /// provider's ceiling), a top-p up to 1, at most a million output tokens.
    pub fn ceiling(self) -> f64 {
        match self {
            Tunable::Temperature => 2.0,
            Tunable::TopP => 1.0,
            Tunable::MaxTokens => 1_000_000.0,
        }
    }
}

/// The sampling parameters one model takes. Written as a list of their names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tunables(u8);

impl Tunables {
    pub const NONE: Tunables = Tunables(0);
    /// What a model takes when nothing says otherwise: all three.
    pub const ALL: Tunables = Tunables(0b111);
    /// Reasoning models that refuse sampling (OpenAI's o-series and GPT-5, Claude Opus 4.7
    /// and later, DeepSeek's reasoner): only the output limit.
    pub const MAX_TOKENS_ONLY: Tunables = Tunables(0b100);

    pub fn of(list: &[Tunable]) -> Tunables {
        Tunables(list.iter().fold(0, |bits, t| bits | t.bit()))
    }

    pub fn takes(self, tunable: Tunable) -> bool {
        self.0 & tunable.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Tunable> {
        Tunable::ALL.into_iter().filter(move |t| self.takes(*t))
    }
}

impl Serialize for Tunables {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl utoipa::PartialSchema for Tunables {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::domain::wire::list_schema(<Tunable as utoipa::PartialSchema>::schema())
    }
}

impl utoipa::ToSchema for Tunables {}

impl<'de> Deserialize<'de> for Tunables {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let list = Vec::<Tunable>::deserialize(deserializer)?;
        Ok(Tunables::of(&list))
    }
}

/// Why a value is refused: above the parameter's ceiling, or a token limit of zero.
pub fn check(tunable: Tunable, value: f64) -> Result<(), String> {
    let ceiling = tunable.ceiling();
    if !(0.0..=ceiling).contains(&value) || (tunable == Tunable::MaxTokens && value < 1.0) {
        let low = if tunable == Tunable::MaxTokens { 1 } else { 0 };
        return Err(format!(
            "`{}` must be from {low} to {ceiling}",
            tunable.as_str()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fraction_keeps_two_decimals_and_reads_back_as_a_number() {
        let t = Fraction::new(0.7).unwrap();
        assert_eq!(t, Fraction::hundredths(70));
        assert_eq!(t.to_string(), "0.7");
        assert_eq!(Fraction::new(0.955).unwrap().to_string(), "0.96");
        assert_eq!(Fraction::new(1.0).unwrap().to_string(), "1");
        assert_eq!(Fraction::new(0.05).unwrap().to_string(), "0.05");
        assert_eq!(serde_json::to_string(&t).unwrap(), "0.7");
        assert_eq!(serde_json::from_str::<Fraction>("0.7").unwrap(), t);
        assert_eq!(serde_json::from_str::<Fraction>("2").unwrap().get(), 2.0);
        assert!(serde_json::from_str::<Fraction>("-0.5").is_err());
        assert!(serde_json::from_str::<Fraction>("1e9").is_err());
        assert!(Fraction::new(f64::NAN).is_none());
    }

    #[test]
    fn a_models_parameters_are_a_list_of_names() {
        let t = Tunables::of(&[Tunable::MaxTokens, Tunable::Temperature]);
        assert!(t.takes(Tunable::Temperature) && !t.takes(Tunable::TopP));
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"["temperature","max_tokens"]"#);
        assert_eq!(serde_json::from_str::<Tunables>(&json).unwrap(), t);
        assert_eq!(Tunables::ALL.iter().count(), 3);
        assert_eq!(
            Tunables::MAX_TOKENS_ONLY.iter().collect::<Vec<_>>(),
            [Tunable::MaxTokens]
        );
    }

    #[test]
    fn values_beyond_a_parameters_range_are_refused_by_name() {
        assert!(check(Tunable::Temperature, 2.0).is_ok());
        assert!(check(Tunable::Temperature, 2.01)
            .unwrap_err()
            .contains("`temperature` must be from 0 to 2"));
        assert!(check(Tunable::TopP, 1.5).is_err());
        assert!(check(Tunable::MaxTokens, 0.0).is_err());
        assert!(check(Tunable::MaxTokens, 4096.0).is_ok());
    }
}
