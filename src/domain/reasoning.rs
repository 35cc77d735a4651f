//! Which model answers and how hard it thinks: the models Ponder offers, the reasoning
//! controls each one accepts, and the settings a reader chose for one turn.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::sampling::{self, Fraction, Tunable, Tunables};

/// How much reasoning a reader asks for. Each provider maps it onto its own wire (an effort
/// word, a token budget, a level).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effort {
    /// Below low: OpenAI's GPT-5 and Gemini 3 Flash take it.
    Minimal,
    Low,
    Medium,
    High,
    /// Above high: Claude Opus 4.7 and later, GPT-5.2 and later.
    Xhigh,
    /// The most a model gives: Claude 4.6 and later, DeepSeek.
    Max,
}

crate::domain::wire::wire_names!(Effort {
    Minimal = "minimal",
    Low = "low",
    Medium = "medium",
    High = "high",
    Xhigh = "xhigh",
    Max = "max",
});

impl Effort {
    /// Every level, lowest first.
    pub const ALL: [Effort; 6] = [
        Effort::Minimal,
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::Xhigh,
        Effort::Max,
    ];

    /// The word providers use for it (`reasoning_effort`, Ollama's `think`).
    pub fn as_str(self) -> &'static str {
        super::wire::WireName::wire_name(self)
    }

    pub fn parse(text: &str) -> Option<Effort> {
        super::wire::WireName::from_wire_name(text)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The effort levels one model takes, so the composer offers only those and a level chosen for
/// another model becomes the nearest one this model has. Written as a list of level names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EffortLevels(u8);

impl EffortLevels {
    /// What most models with an effort take, and what a model is assumed to take when nothing
    /// says more: low, medium and high.
    pub const STANDARD: EffortLevels = EffortLevels(0b0_1110);

    pub fn of(levels: &[Effort]) -> EffortLevels {
        EffortLevels(levels.iter().fold(0, |bits, e| bits | e.bit()))
    }

    pub fn contains(self, effort: Effort) -> bool {
        self.0 & effort.bit() != 0
    }

    /// The levels, lowest first.
    pub fn iter(self) -> impl Iterator<Item = Effort> {
        Effort::ALL.into_iter().filter(move |e| self.contains(*e))
    }

    /// `effort`, or the nearest level this model takes: the lowest above it (at least what was
    /// asked), else its highest.
    pub fn nearest(self, effort: Effort) -> Option<Effort> {
        self.iter()
            .find(|e| *e >= effort)
            .or_else(|| self.iter().last())
    }

    /// The next level this model takes above `effort` ("Think more").
    pub fn above(self, effort: Effort) -> Option<Effort> {
        self.iter().find(|e| *e > effort)
    }
}

impl Default for EffortLevels {
    fn default() -> Self {
        EffortLevels::STANDARD
    }
}

impl Serialize for EffortLevels {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl utoipa::PartialSchema for EffortLevels {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::domain::wire::list_schema(<Effort as utoipa::PartialSchema>::schema())
    }
}

impl utoipa::ToSchema for EffortLevels {}

impl<'de> Deserialize<'de> for EffortLevels {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let levels = Vec::<Effort>::deserialize(deserializer)?;
        Ok(EffortLevels::of(&levels))
    }
}

/// The settings of one turn: its reasoning (thinking on or off, the effort) and the sampling
/// parameters the reader set. `None` leaves the model's own default, and nothing is sent for
/// it (the output limit then is the operator's `PONDER_MAX_OUTPUT_TOKENS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReasoningSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl ReasoningSettings {
    /// Thinking and effort alone.
    pub const fn reasoning(thinking: Option<bool>, effort: Option<Effort>) -> ReasoningSettings {
        ReasoningSettings {
            thinking,
            effort,
            temperature: None,
            top_p: None,
            max_tokens: None,
        }
    }

    pub fn is_default(&self) -> bool {
        *self == ReasoningSettings::default()
    }

    /// The value set for `tunable`, as a number.
    pub fn sampling(&self, tunable: Tunable) -> Option<f64> {
        match tunable {
            Tunable::Temperature => self.temperature.map(Fraction::get),
            Tunable::TopP => self.top_p.map(Fraction::get),
            Tunable::MaxTokens => self.max_tokens.map(f64::from),
        }
    }

    /// The value set for `tunable` as the reader reads it (`0.7`, `512`).
    pub fn sampling_text(&self, tunable: Tunable) -> Option<String> {
        match tunable {
            Tunable::Temperature => self.temperature.map(|f| f.to_string()),
            Tunable::TopP => self.top_p.map(|f| f.to_string()),
            Tunable::MaxTokens => self.max_tokens.map(|n| n.to_string()),
        }
    }

    /// The same settings with `tunable` set to `value` (`None` clears it); a value outside
    /// the parameter's range is refused with the reason.
    pub fn with_sampling(
        mut self,
        tunable: Tunable,
        value: Option<f64>,
    ) -> Result<ReasoningSettings, String> {
        if let Some(v) = value {
            sampling::check(tunable, v)?;
        }
        match tunable {
            Tunable::Temperature => self.temperature = value.and_then(Fraction::new),
            Tunable::TopP => self.top_p = value.and_then(Fraction::new),
            Tunable::MaxTokens => self.max_tokens = value.map(|v| v.round() as u32),
        }
        Ok(self)
    }

    /// The sampling parameters set, each checked against its range: a request with a value
    /// out of range is refused whole.
    pub fn checked(&self) -> Result<(), String> {
        Tunable::ALL
            .into_iter()
            .try_for_each(|t| match self.sampling(t) {
                Some(v) => sampling::check(t, v),
                None => Ok(()),
            })
    }

    /// These settings with the sampling parameters of `other`.
    pub fn with_sampling_of(self, other: ReasoningSettings) -> ReasoningSettings {
        ReasoningSettings {
            thinking: self.thinking,
            effort: self.effort,
            ..other
        }
    }

    /// These settings with no sampling parameter, as "Send again without the setting" asks.
    pub fn reasoning_only(self) -> ReasoningSettings {
        ReasoningSettings::reasoning(self.thinking, self.effort)
    }

    /// Only what `controls` accepts: a control the model does not have sends nothing, and an
    /// effort level it does not take becomes its nearest one.
    pub fn applicable(self, controls: Controls) -> ReasoningSettings {
        let thinking = self.thinking.filter(|_| controls.toggle);
        let takes = |t: Tunable| controls.params.takes(t);
        ReasoningSettings {
            thinking,
            effort: self
                .effort
                .filter(|_| controls.effort && thinking != Some(false))
                .and_then(|e| controls.levels.nearest(e)),
            temperature: self.temperature.filter(|_| takes(Tunable::Temperature)),
            top_p: self.top_p.filter(|_| takes(Tunable::TopP)),
            max_tokens: self.max_tokens.filter(|_| takes(Tunable::MaxTokens)),
        }
    }
}

/// How the error of an upstream that refused a reasoning setting or a sampling parameter begins: the page offers the
/// turn again without the setting when it sees it.
pub const SETTING_REFUSED: &str = "The model server refused the setting";

/// Which model a new chat starts with: a setting of the reader's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NewChatModel {
    /// The model the reader used last.
    #[default]
    LastUsed,
    /// The server's default (`PONDER_MODEL`).
    Default,
}

crate::domain::wire::wire_names!(NewChatModel { LastUsed = "last_used", Default = "default" });

/// What a model can do with reasoning, and so which controls the page shows for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Controls {
    /// The model reasons (or is believed to).
    pub reasons: bool,
    /// Its thinking can be switched on and off.
    pub toggle: bool,
    /// It takes an effort level.
    pub effort: bool,
    /// Which effort levels it takes (with `effort`).
    #[serde(default)]
    pub levels: EffortLevels,
    /// Which sampling parameters it takes.
    #[serde(default)]
    pub params: Tunables,
}

impl Controls {
    pub const NONE: Controls = Controls {
        reasons: false,
        toggle: false,
        effort: false,
        levels: EffortLevels::STANDARD,
        params: Tunables::NONE,
    };

    /// Controls with the standard effort levels.
    pub const fn new(reasons: bool, toggle: bool, effort: bool) -> Controls {
        Controls {
            reasons,
            toggle,
            effort,
            levels: EffortLevels::STANDARD,
            params: Tunables::NONE,
        }
    }

    /// The same controls with these sampling parameters.
    pub fn with_params(self, params: Tunables) -> Controls {
        Controls { params, ..self }
    }

    /// The same controls with these effort levels.
    pub fn with_levels(self, levels: &[Effort]) -> Controls {
        Controls {
            levels: EffortLevels::of(levels),
            ..self
        }
    }
}

/// Where a model's [`Controls`] were decided, strongest first; shown in the picker so an
/// operator knows what to configure when a guess is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ControlsSource {
    Config,
    Metadata,
    Observed,
    Family,
    Unknown,
}

crate::domain::wire::wire_names!(ControlsSource {
    Config = "config",
    Metadata = "metadata",
    Observed = "observed",
    Family = "family",
    Unknown = "unknown",
});

/// One model Ponder offers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ModelInfo {
    pub id: String,
    /// A display name, when the upstream or the operator gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub controls: Controls,
    pub source: ControlsSource,
}

impl ModelInfo {
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }
}

/// `GET /api/models`: what the picker offers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ModelList {
    /// The configured default (`PONDER_MODEL`), always in `models`.
    pub default: String,
    pub models: Vec<ModelInfo>,
    /// Why the list is shorter than the upstream's (it is still loading, or failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ModelList {
    pub fn find(&self, id: &str) -> Option<&ModelInfo> {
        self.models.iter().find(|m| m.id == id)
    }

    /// The controls of `id`; an unknown model shows none.
    pub fn controls(&self, id: &str) -> Controls {
        self.find(id).map(|m| m.controls).unwrap_or(Controls::NONE)
    }
}

/// What a model is found by: its id and its name on the next line, folded by `lower`. The
/// page folds with the browser's own `toLowerCase` (the Unicode tables then stay out of its
/// download) and keeps these until the list changes; native callers pass `str::to_lowercase`.
pub fn search_text(m: &ModelInfo, lower: impl Fn(&str) -> String) -> String {
    lower(&format!("{}\n{}", m.id, m.name.as_deref().unwrap_or("")))
}

/// The models whose id or name contains every word of `query` (case-insensitive), at most
/// `limit`, and how many matched in all. The picker shows a page of a list of any size.
/// `texts` are the models' [`search_text`]s, in the same order; `lower` folds the query as they
/// were folded. A word never holds the line break, so it matches within the id or the name.
pub fn filter_models<'a>(
    models: &'a [ModelInfo],
    texts: &[String],
    query: &str,
    lower: impl Fn(&str) -> String,
    limit: usize,
) -> (Vec<&'a ModelInfo>, usize) {
    let words: Vec<String> = query.split_whitespace().map(lower).collect();
    let mut shown = Vec::new();
    let mut total = 0;
    for (m, text) in models.iter().zip(texts) {
        if words.iter().all(|w| text.contains(w.as_str())) {
            total += 1;
            if shown.len() < limit {
                shown.push(m);
            }
        }
    }
    (shown, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_levels_are_offered_and_another_level_becomes_the_nearest() {
        use Effort::*;
        let pro = EffortLevels::of(&[Low, High]);
        assert_eq!(pro.iter().collect::<Vec<_>>(), [Low, High]);
        assert_eq!(pro.nearest(Medium), Some(High));
        assert_eq!(pro.nearest(Max), Some(High));
        assert_eq!(pro.nearest(Minimal), Some(Low));
        assert_eq!(pro.above(Low), Some(High));
        assert_eq!(pro.above(High), None);
        assert_eq!(
            EffortLevels::STANDARD.iter().collect::<Vec<_>>(),
            [Low, Medium, High]
        );
        let json = serde_json::to_string(&pro).unwrap();
        assert_eq!(json, r#"["low","high"]"#);
        assert_eq!(serde_json::from_str::<EffortLevels>(&json).unwrap(), pro);
        let controls: Controls =
            serde_json::from_str(r#"{"reasons":true,"toggle":false,"effort":true}"#).unwrap();
        assert_eq!(
            controls.levels,
            EffortLevels::STANDARD,
            "a list without levels"
        );
        let opus = Controls::new(true, false, true).with_levels(&[Low, Medium, High, Xhigh, Max]);
        let asked = ReasoningSettings::reasoning(None, Some(Minimal));
        assert_eq!(asked.applicable(opus).effort, Some(Low));
    }

    fn model(id: &str, name: Option<&str>) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            name: name.map(Into::into),
            controls: Controls::NONE,
            source: ControlsSource::Unknown,
        }
    }

    #[test]
    fn settings_keep_only_what_the_model_takes() {
        let chosen = ReasoningSettings::reasoning(Some(true), Some(Effort::High));
        let toggle_only = Controls::new(true, true, false);
        assert_eq!(
            chosen.applicable(toggle_only),
            ReasoningSettings::reasoning(Some(true), None)
        );
        assert!(chosen.applicable(Controls::NONE).is_default());
        let tuned = chosen
            .with_sampling(Tunable::Temperature, Some(0.7))
            .and_then(|s| s.with_sampling(Tunable::MaxTokens, Some(300.0)))
            .unwrap();
        let limit_only = toggle_only.with_params(Tunables::MAX_TOKENS_ONLY);
        let kept = tuned.applicable(limit_only);
        assert_eq!(
            kept.temperature, None,
            "a parameter the model refuses is not sent"
        );
        assert_eq!(kept.max_tokens, Some(300));
        assert_eq!(tuned.applicable(toggle_only).max_tokens, None, "none taken");
        assert!(tuned.with_sampling(Tunable::TopP, Some(1.5)).is_err());
        assert_eq!(tuned.reasoning_only(), chosen);
        let off = ReasoningSettings::reasoning(Some(false), Some(Effort::Low));
        let both = Controls::new(true, true, true);
        assert_eq!(
            off.applicable(both).effort,
            None,
            "no effort for thinking off"
        );
        let effort_only = Controls::new(true, false, true);
        assert_eq!(
            off.applicable(effort_only).effort,
            Some(Effort::Low),
            "an off the model cannot take does not hide its effort"
        );
    }

    #[test]
    fn effort_has_a_wire_word_and_levels_are_in_order() {
        for e in Effort::ALL {
            assert_eq!(Effort::parse(e.as_str()), Some(e));
        }
        assert!(Effort::ALL.windows(2).all(|w| w[0] < w[1]), "lowest first");
        assert_eq!(
            serde_json::to_string(&Effort::Medium).unwrap(),
            "\"medium\""
        );
    }

    #[test]
    fn the_filter_matches_every_word_in_id_or_name_and_counts_all() {
        let models: Vec<ModelInfo> = (0..5000)
            .map(|i| model(&format!("vendor{}/model-{i}", i % 7), None))
            .chain([model("qwen3:8b", Some("Qwen 3 8B"))])
            .chain([model("lab/école-7b", Some("École 7B"))])
            .collect();
        let texts: Vec<String> = models
            .iter()
            .map(|m| search_text(m, str::to_lowercase))
            .collect();
        let find = |q, limit| filter_models(&models, &texts, q, str::to_lowercase, limit);
        let (shown, total) = find("QWEN 8b", 50);
        assert_eq!(total, 1);
        assert_eq!(shown[0].id, "qwen3:8b");
        let (shown, total) = find("vendor3", 50);
        assert_eq!(shown.len(), 50);
        assert_eq!(total, (0..5000).filter(|i| i % 7 == 3).count());
        let (_, total) = find("8bqwen", 50);
        assert_eq!(total, 0, "a word never spans the id and the name");
        let (shown, total) = find("ÉCOLE", 50);
        assert_eq!(total, 1, "folded beyond ASCII");
        assert_eq!(shown[0].id, "lab/école-7b");
        let (_, total) = find("", 10);
        assert_eq!(total, 5002);
    }
}
