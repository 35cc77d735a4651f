//! What turns spend, as the ledger keeps it: each turn's tokens (reasoning apart, estimated from
//! the streamed characters when a provider counts none), its time, its cost at the operator's
//! prices, and the quotas that bound a reader's spending per day or month. Pure: the server
//! reads and writes the ledger, the page and the terminal show these shapes.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use super::event::Cost;
use super::event::Usage;

/// Tokens a text of `chars` characters is taken to be when nobody counted: four characters a
/// token, the usual rule for English with the common tokenizers, rounded up.
pub fn estimate_tokens(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// What one turn consumed, as its ledger line keeps it. `output_tokens` includes
/// `reasoning_tokens`, and `input_tokens` includes `cached_input_tokens`, whatever each
/// provider's own fields meant.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Spend {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
    /// Some count was estimated from characters: the provider reported none for it.
    pub estimated: bool,
    pub thinking_ms: u64,
    pub total_ms: u64,
}

/// What the turn streamed and sent, for the counts the provider left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Streamed {
    /// Characters of the request's messages and instructions.
    pub input_chars: u64,
    pub thinking_chars: u64,
    pub answer_chars: u64,
    pub thinking_ms: u64,
    pub total_ms: u64,
}

impl Spend {
    /// The spend of a turn from what its provider reported (`usage`) and what it streamed. A
    /// count the provider left out is estimated and the line marked so. Reasoning the provider
    /// did not count apart is its output less the answer's estimate: a summarized or hidden
    /// reasoning is billed in full, not as the summary shown.
    pub fn of(usage: &Usage, streamed: Streamed) -> Spend {
        let mut estimated = false;
        let mut guess = |chars: u64| {
            estimated = true;
            estimate_tokens(chars)
        };
        let input = match usage.input_tokens {
            Some(n) => n,
            None => guess(streamed.input_chars),
        };
        let output = match usage.output_tokens {
            Some(n) => n,
            None => guess(streamed.thinking_chars + streamed.answer_chars),
        };
        let reasoning = match usage.reasoning_tokens {
            Some(n) => n.min(output),
            None if streamed.thinking_chars == 0 => 0,
            None if usage.output_tokens.is_some() => {
                let answer = guess(streamed.answer_chars);
                output.saturating_sub(answer).max(u64::from(output > 0))
            }
            None => guess(streamed.thinking_chars).min(output),
        };
        Spend {
            cached_input_tokens: usage.cached_input_tokens.unwrap_or(0).min(input),
            input_tokens: input,
            output_tokens: output,
            reasoning_tokens: reasoning,
            estimated,
            thinking_ms: streamed.thinking_ms,
            total_ms: streamed.total_ms,
        }
    }

    /// All the tokens the turn moved, as a token quota counts them.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// One model's prices, per million tokens in the table's currency. Cached input costs as input
/// and reasoning as output unless set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Price {
    pub input: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    pub output: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<f64>,
}

impl Price {
    /// What `spend` costs at these prices, in millionths of the currency.
    pub fn cost_micros(&self, spend: &Spend) -> u64 {
        let at = |tokens: u64, per_million: f64| (tokens as f64 * per_million.max(0.0)).round();
        let cached = spend.cached_input_tokens.min(spend.input_tokens);
        let reasoning = spend.reasoning_tokens.min(spend.output_tokens);
        let total = at(spend.input_tokens - cached, self.input)
            + at(cached, self.cached_input.unwrap_or(self.input))
            + at(spend.output_tokens - reasoning, self.output)
            + at(reasoning, self.reasoning.unwrap_or(self.output));
        if total.is_finite() && total < u64::MAX as f64 {
            total as u64
        } else {
            u64::MAX
        }
    }
}

/// The span a quota counts over, in UTC.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum QuotaPeriod {
    Day,
    Month,
}

/// What a quota counts.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum QuotaMeasure {
    /// Input and output tokens, reasoning included.
    Tokens,
    /// Cost in millionths of the price table's currency.
    Cost,
}

/// One limit: at most `limit` of `measure` per `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Quota {
    pub measure: QuotaMeasure,
    pub period: QuotaPeriod,
    pub limit: u64,
}

/// How many limits one reader may have: one per measure and period.
pub const MAX_QUOTAS: usize = 4;

/// Reads a list of limits such as `tokens/day=200000, cost/month=5.50` (cost in the currency's
/// unit, to the millionth). An empty text is no limit. Each measure and period at most once.
pub fn parse_quotas(text: &str) -> Result<Vec<Quota>, String> {
    let mut out: Vec<Quota> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let form = "each limit is written like tokens/day=200000 or cost/month=5.50";
        let (what, amount) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?}: {form}"))?;
        let (measure, period) = what
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("{part:?}: {form}"))?;
        let measure = match measure.trim() {
            "tokens" => QuotaMeasure::Tokens,
            "cost" => QuotaMeasure::Cost,
            other => return Err(format!("{other:?}: a limit counts tokens or cost")),
        };
        let period = match period.trim() {
            "day" => QuotaPeriod::Day,
            "month" => QuotaPeriod::Month,
            other => return Err(format!("{other:?}: a limit is per day or per month")),
        };
        let amount = amount.trim();
        let limit = match measure {
            QuotaMeasure::Tokens => amount.parse::<u64>().ok(),
            QuotaMeasure::Cost => parse_micros(amount),
        }
        .ok_or_else(|| format!("{amount:?}: a limit is a whole number of tokens or an amount"))?;
        if out
            .iter()
            .any(|q| q.measure == measure && q.period == period)
        {
            return Err(format!("{what:?} is given twice"));
        }
        out.push(Quota {
            measure,
            period,
            limit,
        });
    }
    Ok(out)
}

/// Writes limits back in the form [`parse_quotas`] reads.
pub fn quotas_text(quotas: &[Quota]) -> String {
    quotas
        .iter()
        .map(|q| {
            let measure = match q.measure {
                QuotaMeasure::Tokens => "tokens",
                QuotaMeasure::Cost => "cost",
            };
            let period = match q.period {
                QuotaPeriod::Day => "day",
                QuotaPeriod::Month => "month",
            };
            let amount = match q.measure {
                QuotaMeasure::Tokens => q.limit.to_string(),
                QuotaMeasure::Cost => micros_text(q.limit),
            };
            format!("{measure}/{period}={amount}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `5.5` → 5,500,000 millionths; at most six decimals, no sign, no exponent.
pub fn parse_micros(text: &str) -> Option<u64> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && frac.is_empty()
        || frac.len() > 6
        || !whole
            .bytes()
            .chain(frac.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<6}").parse().ok()?
    };
    whole.checked_mul(1_000_000)?.checked_add(frac)
}

/// Millionths written as an amount, with the decimals that are not zero (at least two).
pub fn micros_text(micros: u64) -> String {
    let whole = micros / 1_000_000;
    let mut frac = format!("{:06}", micros % 1_000_000);
    while frac.len() > 2 && frac.ends_with('0') {
        frac.pop();
    }
    format!("{whole}.{frac}")
}

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The UTC day number (days since 1970-01-01) of `ms`.
pub fn day_of(ms: i64) -> i64 {
    ms.div_euclid(DAY_MS)
}

/// The civil date (year, month 1–12, day 1–31) of day number `days` (proleptic Gregorian).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The day number of a civil date (the inverse of [`civil`]).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-12-06`, the day number's date as ISO 8601 writes it.
pub fn day_text(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The first moment (ms, UTC) of a month written `2026-12`; `None` for anything else.
pub fn parse_month(text: &str) -> Option<i64> {
    let (y, m) = text.split_once('-')?;
    if y.len() != 4 || m.len() != 2 || !y.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (y, m): (i64, u32) = (y.parse().ok()?, m.parse().ok()?);
    (1..=12)
        .contains(&m)
        .then(|| days_from_civil(y, m, 1) * DAY_MS)
}

/// The month before `month` (`2026-12` → `2026-11`), as [`parse_month`] reads it.
pub fn previous_month(month: &str) -> Option<String> {
    let start = parse_month(month)?;
    let (y, m, _) = civil(day_of(start) - 1);
    Some(format!("{y:04}-{m:02}"))
}

/// The period holding `now_ms`: its first moment and the first moment of the next (ms, UTC).
pub fn period_bounds(period: QuotaPeriod, now_ms: i64) -> (i64, i64) {
    let today = day_of(now_ms);
    match period {
        QuotaPeriod::Day => (today * DAY_MS, (today + 1) * DAY_MS),
        QuotaPeriod::Month => {
            let (y, m, _) = civil(today);
            let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
            (
                days_from_civil(y, m, 1) * DAY_MS,
                days_from_civil(ny, nm, 1) * DAY_MS,
            )
        }
    }
}

/// The month before the one holding `now_ms`: its bounds (ms, UTC).
pub fn last_month_bounds(now_ms: i64) -> (i64, i64) {
    let (start, _) = period_bounds(QuotaPeriod::Month, now_ms);
    period_bounds(QuotaPeriod::Month, start - 1)
}

/// A limit reached: which one, and when it lifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverQuota {
    pub quota: Quota,
    pub used: u64,
    /// The start of the next period (ms since the epoch, UTC).
    pub resets_at: i64,
}

/// What a reader has used in each period, for the quota check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Used {
    pub day_tokens: u64,
    pub day_cost: u64,
    pub month_tokens: u64,
    pub month_cost: u64,
}

impl Used {
    /// What `q` counts of this.
    pub fn of(&self, q: &Quota) -> u64 {
        match (q.measure, q.period) {
            (QuotaMeasure::Tokens, QuotaPeriod::Day) => self.day_tokens,
            (QuotaMeasure::Cost, QuotaPeriod::Day) => self.day_cost,
            (QuotaMeasure::Tokens, QuotaPeriod::Month) => self.month_tokens,
            (QuotaMeasure::Cost, QuotaPeriod::Month) => self.month_cost,
        }
    }
}

/// The first of `quotas` that `used` has reached at `now_ms`, with the latest reset among
/// those reached (a turn may start only when every limit has room). A turn is refused when a
/// limit is reached, not when it might be: one that crosses it while running finishes.
pub fn over_quota(quotas: &[Quota], used: &Used, now_ms: i64) -> Option<OverQuota> {
    let reached: Vec<OverQuota> = quotas
        .iter()
        .filter(|q| used.of(q) >= q.limit)
        .map(|q| OverQuota {
            quota: *q,
            used: used.of(q),
            resets_at: period_bounds(q.period, now_ms).1,
        })
        .collect();
    reached.iter().max_by_key(|o| o.resets_at).copied()
}

/// One line of a usage report: a day's or a model's (or a reader's) totals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UsageLine {
    /// The day (`2026-12-06`), the model id or the reader's name, as the report groups.
    pub key: String,
    pub turns: u64,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
    /// Turns with a count estimated from characters.
    pub estimated_turns: u64,
    pub thinking_ms: u64,
    pub total_ms: u64,
    /// Cost in millionths, for the turns whose model had a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micros: Option<u64>,
}

impl UsageLine {
    /// The answer's own tokens: output less reasoning.
    pub fn answer_tokens(&self) -> u64 {
        self.output_tokens.saturating_sub(self.reasoning_tokens)
    }

    /// Adds one turn's spend (and cost, if priced).
    pub fn add(&mut self, spend: &Spend, cost_micros: Option<u64>) {
        self.turns += 1;
        self.input_tokens += spend.input_tokens;
        self.cached_input_tokens += spend.cached_input_tokens;
        self.output_tokens += spend.output_tokens;
        self.reasoning_tokens += spend.reasoning_tokens;
        self.estimated_turns += u64::from(spend.estimated);
        self.thinking_ms += spend.thinking_ms;
        self.total_ms += spend.total_ms;
        if let Some(c) = cost_micros {
            self.cost_micros = Some(self.cost_micros.unwrap_or(0).saturating_add(c));
        }
    }
}

/// A reader's (or, for an administrator, everyone's) usage over one month, for the usage page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UsageReport {
    /// The month shown, `2026-12`.
    pub month: String,
    /// The currency of the costs, when any model has a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    pub total: UsageLine,
    /// Every day of the month up to today (or its end), in order, empty days included.
    pub days: Vec<UsageLine>,
    /// Each model used, most tokens first.
    pub models: Vec<UsageLine>,
    /// Each reader, most tokens first (an administrator's view of everyone; else empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<UsageLine>,
    /// The reader's limits and what they used of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quotas: Vec<QuotaState>,
}

/// One limit and where the reader stands against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QuotaState {
    pub quota: Quota,
    pub used: u64,
    pub resets_at: i64,
}

/// One group of ledger lines as the store sums them: a day, a model and a reader.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LedgerGroup {
    pub day: i64,
    pub model: String,
    pub user: String,
    pub line: UsageLine,
}

/// Sums `line` into `into`.
fn merge(into: &mut UsageLine, line: &UsageLine) {
    into.turns += line.turns;
    into.input_tokens += line.input_tokens;
    into.cached_input_tokens += line.cached_input_tokens;
    into.output_tokens += line.output_tokens;
    into.reasoning_tokens += line.reasoning_tokens;
    into.estimated_turns += line.estimated_turns;
    into.thinking_ms += line.thinking_ms;
    into.total_ms += line.total_ms;
    if let Some(c) = line.cost_micros {
        into.cost_micros = Some(into.cost_micros.unwrap_or(0).saturating_add(c));
    }
}

/// The report of the month holding `month_ms` as of `now_ms`: every day from the first to
/// today (or the month's last, for a past month), each model and (`with_users`) each reader,
/// most tokens first.
pub fn report(
    month_ms: i64,
    now_ms: i64,
    groups: &[LedgerGroup],
    currency: Option<String>,
    with_users: bool,
) -> UsageReport {
    let (start, end) = period_bounds(QuotaPeriod::Month, month_ms);
    let first = day_of(start);
    let last = day_of(end - 1).min(day_of(now_ms)).max(first);
    let mut days: Vec<UsageLine> = (first..=last)
        .map(|d| UsageLine {
            key: day_text(d),
            ..UsageLine::default()
        })
        .collect();
    let mut total = UsageLine::default();
    let mut models: Vec<UsageLine> = Vec::new();
    let mut users: Vec<UsageLine> = Vec::new();
    let add_to = |list: &mut Vec<UsageLine>, key: &str, line: &UsageLine| match list
        .iter_mut()
        .find(|l| l.key == key)
    {
        Some(l) => merge(l, line),
        None => {
            let mut l = UsageLine {
                key: key.to_string(),
                ..UsageLine::default()
            };
            merge(&mut l, line);
            list.push(l);
        }
    };
    for g in groups
        .iter()
        .filter(|g| g.day >= first && g.day <= day_of(end - 1))
    {
        merge(&mut total, &g.line);
        if let Some(day) = usize::try_from(g.day - first)
            .ok()
            .and_then(|i| days.get_mut(i))
        {
            merge(day, &g.line);
        }
        add_to(&mut models, &g.model, &g.line);
        if with_users {
            add_to(&mut users, &g.user, &g.line);
        }
    }
    let by_tokens = |a: &UsageLine, b: &UsageLine| {
        (b.input_tokens + b.output_tokens)
            .cmp(&(a.input_tokens + a.output_tokens))
            .then_with(|| a.key.cmp(&b.key))
    };
    models.sort_by(by_tokens);
    users.sort_by(by_tokens);
    let (y, m, _) = civil(first);
    UsageReport {
        month: format!("{y:04}-{m:02}"),
        currency,
        total,
        days,
        models,
        users,
        quotas: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(input: u64, thinking: u64, answer: u64) -> Streamed {
        Streamed {
            input_chars: input,
            thinking_chars: thinking,
            answer_chars: answer,
            thinking_ms: 1_500,
            total_ms: 2_000,
        }
    }

    #[test]
    fn reported_counts_are_kept_and_the_line_is_not_an_estimate() {
        let usage = Usage {
            input_tokens: Some(120),
            cached_input_tokens: Some(100),
            output_tokens: Some(400),
            reasoning_tokens: Some(300),
            ..Usage::default()
        };
        let s = Spend::of(&usage, streamed(4_000, 900, 400));
        assert_eq!(
            (
                s.input_tokens,
                s.cached_input_tokens,
                s.output_tokens,
                s.reasoning_tokens
            ),
            (120, 100, 400, 300)
        );
        assert!(!s.estimated);
        assert_eq!(s.tokens(), 520);
    }

    #[test]
    fn nothing_reported_is_estimated_from_the_characters_and_marked() {
        let s = Spend::of(&Usage::default(), streamed(41, 400, 101));
        assert_eq!(
            (s.input_tokens, s.output_tokens, s.reasoning_tokens),
            (11, 126, 100)
        );
        assert!(s.estimated);
        let no_thinking = Spend::of(&Usage::default(), streamed(8, 0, 8));
        assert_eq!(no_thinking.reasoning_tokens, 0);
    }

    #[test]
    fn reasoning_not_counted_apart_is_the_output_less_the_answer() {
        // A summarized block shows 40 characters; the provider billed 500 output tokens.
        let usage = Usage {
            input_tokens: Some(10),
            output_tokens: Some(500),
            ..Usage::default()
        };
        let s = Spend::of(&usage, streamed(40, 40, 400));
        assert_eq!(s.reasoning_tokens, 400);
        assert!(s.estimated);
        // Without any reasoning streamed there is none to estimate.
        let plain = Spend::of(&usage, streamed(40, 0, 400));
        assert_eq!((plain.reasoning_tokens, plain.estimated), (0, false));
    }

    #[test]
    fn cost_prices_cached_input_and_reasoning_apart_when_set() {
        let spend = Spend {
            input_tokens: 1_000_000,
            cached_input_tokens: 500_000,
            output_tokens: 300_000,
            reasoning_tokens: 200_000,
            ..Spend::default()
        };
        let plain = Price {
            input: 3.0,
            output: 15.0,
            ..Price::default()
        };
        assert_eq!(plain.cost_micros(&spend), 3_000_000 + 4_500_000);
        let full = Price {
            cached_input: Some(0.3),
            reasoning: Some(10.0),
            ..plain
        };
        assert_eq!(
            full.cost_micros(&spend),
            1_500_000 + 150_000 + 1_500_000 + 2_000_000
        );
    }

    #[test]
    fn quotas_read_and_write_back_and_bad_ones_say_why() {
        let q = parse_quotas("tokens/day=200000, cost/month=5.5").expect("valid");
        assert_eq!(
            q,
            vec![
                Quota {
                    measure: QuotaMeasure::Tokens,
                    period: QuotaPeriod::Day,
                    limit: 200_000
                },
                Quota {
                    measure: QuotaMeasure::Cost,
                    period: QuotaPeriod::Month,
                    limit: 5_500_000
                },
            ]
        );
        assert_eq!(quotas_text(&q), "tokens/day=200000, cost/month=5.50");
        assert_eq!(parse_quotas(" "), Ok(vec![]));
        for bad in [
            "tokens/day",
            "tokens/week=5",
            "coins/day=5",
            "tokens/day=-1",
            "tokens/day=1.5",
            "cost/day=1.1234567",
            "cost/day=1e3",
            "tokens/day=1, tokens/day=2",
        ] {
            assert!(parse_quotas(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn periods_are_utc_days_and_calendar_months() {
        // 2026-12-06T22:55:39Z
        let now = 1_796_597_739_000;
        assert_eq!(day_text(day_of(now)), "2026-12-06");
        let (start, end) = period_bounds(QuotaPeriod::Day, now);
        assert_eq!(
            (day_text(day_of(start)), day_text(day_of(end))),
            ("2026-12-06".into(), "2026-12-07".into())
        );
        let (start, end) = period_bounds(QuotaPeriod::Month, now);
        assert_eq!(
            (day_text(day_of(start)), day_text(day_of(end))),
            ("2026-12-01".into(), "2027-01-01".into())
        );
        let (start, end) = last_month_bounds(now);
        assert_eq!(
            (day_text(day_of(start)), day_text(day_of(end))),
            ("2026-11-01".into(), "2026-12-01".into())
        );
        for days in [-800_000, -1, 0, 59, 365 * 30 + 58, 20_000_000] {
            let (y, m, d) = civil(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil(days_from_civil(2028, 2, 29)), (2028, 2, 29));
    }

    #[test]
    fn a_reached_limit_refuses_with_the_latest_reset_and_room_lets_the_turn_start() {
        let now = 1_796_597_739_000;
        let quotas = parse_quotas("tokens/day=1000, tokens/month=5000").expect("valid");
        let used = Used {
            day_tokens: 999,
            month_tokens: 4_000,
            ..Used::default()
        };
        assert_eq!(over_quota(&quotas, &used, now), None);
        let day_over = Used {
            day_tokens: 1_000,
            ..used
        };
        let over = over_quota(&quotas, &day_over, now).expect("over");
        assert_eq!(over.quota.period, QuotaPeriod::Day);
        assert_eq!(over.resets_at, period_bounds(QuotaPeriod::Day, now).1);
        let both = Used {
            day_tokens: 1_000,
            month_tokens: 5_000,
            ..used
        };
        assert_eq!(
            over_quota(&quotas, &both, now).expect("over").quota.period,
            QuotaPeriod::Month
        );
    }

    #[test]
    fn amounts_read_to_the_millionth_and_write_back() {
        assert_eq!(parse_micros("5"), Some(5_000_000));
        assert_eq!(parse_micros("0.000001"), Some(1));
        assert_eq!(parse_micros(".5"), Some(500_000));
        assert_eq!(parse_micros(""), None);
        assert_eq!(parse_micros("."), None);
        assert_eq!(parse_micros("99999999999999999999"), None);
        assert_eq!(micros_text(5_500_000), "5.50");
        assert_eq!(micros_text(1), "0.000001");
        assert_eq!(micros_text(12_345), "0.012345");
    }

    #[test]
    fn a_report_has_every_day_so_far_each_model_most_first_and_the_total() {
        let now = 1_796_597_739_000; // 2026-12-06
        let today = day_of(now);
        let line = |turns: u64, output: u64, cost: Option<u64>| UsageLine {
            turns,
            input_tokens: 10,
            output_tokens: output,
            reasoning_tokens: output / 2,
            cost_micros: cost,
            ..UsageLine::default()
        };
        let groups = vec![
            LedgerGroup {
                day: today,
                model: "a".into(),
                user: "ann".into(),
                line: line(1, 100, Some(5)),
            },
            LedgerGroup {
                day: today - 5,
                model: "b".into(),
                user: "bob".into(),
                line: line(2, 400, None),
            },
            LedgerGroup {
                day: today - 5,
                model: "a".into(),
                user: "bob".into(),
                line: line(1, 50, Some(1)),
            },
            // Last month's line is not this month's.
            LedgerGroup {
                day: today - 10,
                model: "c".into(),
                user: "ann".into(),
                line: line(9, 9, None),
            },
        ];
        let r = report(now, now, &groups, Some("USD".into()), true);
        assert_eq!(r.month, "2026-12");
        assert_eq!(r.days.len(), 6);
        assert_eq!(r.days[0].key, "2026-12-01");
        assert_eq!((r.days[0].turns, r.days[0].output_tokens), (3, 450));
        assert_eq!(r.days[5].output_tokens, 100);
        assert_eq!(r.total.turns, 4);
        assert_eq!(r.total.cost_micros, Some(6));
        assert_eq!(r.total.answer_tokens(), 550 - 275);
        let models: Vec<&str> = r.models.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(models, ["b", "a"]);
        let users: Vec<&str> = r.users.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(users, ["bob", "ann"]);
        let own = report(now, now, &groups, None, false);
        assert!(own.users.is_empty());
        // A past month shows all its days.
        let november = report(last_month_bounds(now).0, now, &groups, None, false);
        assert_eq!(
            (november.month.as_str(), november.days.len()),
            ("2026-11", 30)
        );
        assert_eq!(november.total.turns, 9);
    }

    #[test]
    fn a_month_is_read_from_its_iso_form_only() {
        let start = parse_month("2026-12").expect("valid");
        assert_eq!(day_text(day_of(start)), "2026-12-01");
        for bad in [
            "2026-13", "2026-00", "26-12", "2026-1", "2026/12", "", "abcd-ef", "+026-12",
        ] {
            assert_eq!(parse_month(bad), None, "{bad}");
        }
    }
}
