//! The usage page's charts as plain geometry: stacked bars of tokens per day (reasoning, answer,
//! input), bars of thinking time and cost per day, and each model's share. Whole numbers in a
//! fixed view box, so the SVG the page draws is exact and the tests read it natively.

use crate::domain::usage::{micros_text, UsageLine, UsageReport};
use crate::i18n::Locale;

/// The height of a chart's bars at their tallest, in view-box units.
pub const CHART_HEIGHT: u32 = 120;
/// Each day's column: its bar and the gap after it.
pub const BAR_WIDTH: u32 = 8;
pub const BAR_PITCH: u32 = 12;
/// Columns a chart always has room for: a month's, so its shape does not stretch with the date.
pub const MONTH_DAYS: usize = 31;

/// A part of a bar: which series (its class), and where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub series: &'static str,
    pub y: u32,
    pub height: u32,
}

/// One day's bar: its column, its day of the month, what it says on hover, its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bar {
    pub x: u32,
    pub day: String,
    pub title: String,
    pub segments: Vec<Segment>,
}

/// A chart of a month's days, scaled so its tallest bar fits under `top`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayChart {
    pub width: u32,
    /// The value at the top of the scale (a round number over the tallest bar).
    pub top: u64,
    pub bars: Vec<Bar>,
}

/// The smallest 1, 2 or 5 times a power of ten at or above `v` (at least 1).
pub fn round_up(v: u64) -> u64 {
    let mut power: u64 = 1;
    loop {
        for step in [1, 2, 5] {
            let candidate = power.saturating_mul(step);
            if candidate >= v || candidate == u64::MAX {
                return candidate.max(1);
            }
        }
        power = power.saturating_mul(10);
    }
}

fn scaled(v: u64, top: u64) -> u32 {
    (u128::from(v) * u128::from(CHART_HEIGHT) / u128::from(top.max(1))) as u32
}

/// A series of a chart: its name (the class its parts are drawn with) and a day's value.
type Series = (&'static str, fn(&UsageLine) -> u64);

/// A chart of `series` (each a name and a day's value) stacked per day, bottom first;
/// `title` says what a day's bar holds.
fn day_chart(
    report: &UsageReport,
    series: &[Series],
    title: impl Fn(&UsageLine) -> String,
) -> DayChart {
    let total = |d: &UsageLine| series.iter().map(|(_, v)| v(d)).sum::<u64>();
    let top = round_up(report.days.iter().map(total).max().unwrap_or(0));
    let bars = report
        .days
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut base = CHART_HEIGHT;
            let mut below = 0u64;
            let segments = series
                .iter()
                .filter_map(|(name, value)| {
                    let v = value(d);
                    // Each part is cut from the running sum, so the parts add up to the bar.
                    let lower = scaled(below, top);
                    below += v;
                    let height = scaled(below, top) - lower;
                    base -= height;
                    (height > 0).then_some(Segment {
                        series: name,
                        y: base,
                        height,
                    })
                })
                .collect();
            Bar {
                x: i as u32 * BAR_PITCH,
                day: d
                    .key
                    .get(8..)
                    .unwrap_or("")
                    .trim_start_matches('0')
                    .to_string(),
                title: title(d),
                segments,
            }
        })
        .collect();
    DayChart {
        width: report.days.len().max(MONTH_DAYS) as u32 * BAR_PITCH,
        top,
        bars,
    }
}

/// Tokens per day: input at the bottom, then the answer, then the reasoning on top.
pub fn tokens_chart(report: &UsageReport, l: Locale) -> DayChart {
    let w = crate::i18n::usage_words(l);
    day_chart(
        report,
        &[
            ("input", |d| d.input_tokens),
            ("answer", UsageLine::answer_tokens),
            ("reasoning", |d| d.reasoning_tokens),
        ],
        |d| {
            format!(
                "{}: {} {} · {} {} · {} {}",
                d.key,
                l.integer(d.reasoning_tokens),
                w.reasoning,
                l.integer(d.answer_tokens()),
                w.answer,
                l.integer(d.input_tokens),
                w.input
            )
        },
    )
}

/// Time spent thinking per day.
pub fn thinking_chart(report: &UsageReport, l: Locale) -> DayChart {
    day_chart(report, &[("thinking", |d| d.thinking_ms)], |d| {
        format!("{}: {}", d.key, duration(d.thinking_ms, l))
    })
}

/// Cost per day, when the report has a currency.
pub fn cost_chart(report: &UsageReport) -> Option<DayChart> {
    let currency = report.currency.clone()?;
    Some(day_chart(
        report,
        &[("cost", |d| d.cost_micros.unwrap_or(0))],
        move |d| format!("{}: {}", d.key, money(d.cost_micros, &currency)),
    ))
}

/// A line's share of all tokens, in tenths of a percent, most first as the report lists them.
pub fn shares(lines: &[UsageLine]) -> Vec<(String, u64)> {
    let all: u64 = lines.iter().map(|m| m.input_tokens + m.output_tokens).sum();
    lines
        .iter()
        .map(|m| {
            let part = m.input_tokens + m.output_tokens;
            let permille = if all == 0 {
                0
            } else {
                (u128::from(part) * 1000 / u128::from(all)) as u64
            };
            (m.key.clone(), permille)
        })
        .collect()
}

/// `42.5%` from tenths of a percent, in the locale's numbers.
pub fn percent(permille: u64, l: Locale) -> String {
    format!("{}%", l.tenths(permille))
}

/// A time as the page writes durations (`4.2s`, `1m 12s`), `0s` under a second.
pub fn duration(ms: u64, l: Locale) -> String {
    super::labels::format_duration(ms, l).unwrap_or_else(|| super::labels::live_seconds(ms, l))
}

/// An amount in its currency (`USD 0.0123`), or a dash when nothing was priced.
pub fn money(micros: Option<u64>, currency: &str) -> String {
    match micros {
        Some(m) => format!("{currency} {}", micros_text(m)),
        None => "–".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(key: &str, input: u64, output: u64, reasoning: u64, cost: Option<u64>) -> UsageLine {
        UsageLine {
            key: key.into(),
            turns: 1,
            input_tokens: input,
            output_tokens: output,
            reasoning_tokens: reasoning,
            thinking_ms: reasoning * 10,
            cost_micros: cost,
            ..UsageLine::default()
        }
    }

    fn report() -> UsageReport {
        UsageReport {
            month: "2026-12".into(),
            currency: Some("EUR".into()),
            days: vec![
                day("2026-12-01", 100, 300, 200, Some(1_500)),
                day("2026-12-02", 0, 0, 0, None),
                day("2026-12-03", 50, 700, 650, Some(20)),
            ],
            ..UsageReport::default()
        }
    }

    #[test]
    fn scales_are_round_numbers_over_the_tallest_bar() {
        assert_eq!(
            [0, 1, 2, 3, 7, 10, 11, 750, 1_001, 40_000].map(round_up),
            [1, 1, 2, 5, 10, 10, 20, 1_000, 2_000, 50_000]
        );
        assert_eq!(round_up(u64::MAX), u64::MAX);
    }

    #[test]
    fn a_days_bar_stacks_input_answer_and_reasoning_bottom_first_and_adds_up() {
        let chart = tokens_chart(&report(), Locale::En);
        assert_eq!(chart.top, 1_000);
        assert_eq!(chart.width, 31 * BAR_PITCH);
        let first = &chart.bars[0];
        assert_eq!(first.day, "1");
        let names: Vec<&str> = first.segments.iter().map(|s| s.series).collect();
        assert_eq!(names, ["input", "answer", "reasoning"]);
        let heights: u32 = first.segments.iter().map(|s| s.height).sum();
        assert_eq!(heights, 400 * CHART_HEIGHT / 1_000);
        // Input sits on the baseline, and each part on the one below it.
        assert_eq!(first.segments[0].y + first.segments[0].height, CHART_HEIGHT);
        assert_eq!(
            first.segments[1].y + first.segments[1].height,
            first.segments[0].y
        );
        assert!(first.title.contains("200 reasoning") && first.title.contains("100 input"));
        assert!(
            chart.bars[1].segments.is_empty(),
            "an empty day draws nothing"
        );
        assert_eq!(chart.bars[2].x, 2 * BAR_PITCH);
        assert_eq!(chart.bars[2].day, "3");
    }

    #[test]
    fn thinking_and_cost_have_charts_of_their_own_and_cost_only_when_priced() {
        let r = report();
        let thinking = thinking_chart(&r, Locale::En);
        assert_eq!(thinking.top, 10_000);
        assert!(
            thinking.bars[2].title.ends_with("6.5s"),
            "{}",
            thinking.bars[2].title
        );
        let cost = cost_chart(&r).expect("priced");
        assert_eq!(cost.top, 2_000);
        assert!(cost.bars[0].title.ends_with("EUR 0.0015"));
        let unpriced = UsageReport {
            currency: None,
            ..r
        };
        assert_eq!(cost_chart(&unpriced), None);
    }

    #[test]
    fn shares_are_tenths_of_a_percent_of_all_tokens() {
        let lines = vec![day("a", 100, 200, 0, None), day("b", 50, 50, 0, None)];
        assert_eq!(
            shares(&lines),
            vec![("a".to_string(), 750), ("b".to_string(), 250)]
        );
        assert_eq!(percent(750, Locale::En), "75.0%");
        assert_eq!(percent(125, Locale::PtBr), "12,5%");
        assert_eq!(
            shares(&[day("z", 0, 0, 0, None)]),
            vec![("z".to_string(), 0)]
        );
        assert_eq!(money(None, "USD"), "–");
    }
}
