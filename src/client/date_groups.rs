//! The conversation list's date groups: Today, Yesterday, Previous 7 days, Older, by the reader's
//! calendar days (the caller says which local day a time falls on, so daylight-saving changes
//! and time zones are the browser's business, and this stays a plain function).

use super::saved_chat::ConversationSummary;

/// When a conversation was last active, as the list groups it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DateGroup {
    /// The pinned conversations, whenever they were active, above the rest.
    Pinned,
    Today,
    Yesterday,
    Previous7Days,
    Older,
}

impl DateGroup {
    /// The group's heading.
    pub fn label(self, c: &crate::i18n::Catalogue) -> &'static str {
        match self {
            DateGroup::Pinned => c.pinned,
            DateGroup::Today => c.today,
            DateGroup::Yesterday => c.yesterday,
            DateGroup::Previous7Days => c.previous_7_days,
            DateGroup::Older => c.older,
        }
    }

    /// The group of a conversation last active on local day `day`, seen on local day `today`.
    /// A time in the future (another device's clock ahead) counts as today.
    pub fn of(day: i64, today: i64) -> DateGroup {
        match today - day {
            i64::MIN..=0 => DateGroup::Today,
            1 => DateGroup::Yesterday,
            2..=7 => DateGroup::Previous7Days,
            _ => DateGroup::Older,
        }
    }
}

/// The list cut into its date groups (the pinned ones first, whenever they were active), in the
/// list's own order (most recent first), with empty groups left out. `local_day` maps a time (ms since the epoch) to the reader's day number.
pub fn group_by_date(
    list: &[ConversationSummary],
    now_ms: f64,
    local_day: impl Fn(f64) -> i64,
) -> Vec<(DateGroup, Vec<ConversationSummary>)> {
    let today = local_day(now_ms);
    let mut groups: Vec<(DateGroup, Vec<ConversationSummary>)> = Vec::new();
    for item in list {
        let group = if item.pinned {
            DateGroup::Pinned
        } else {
            DateGroup::of(local_day(item.updated_at), today)
        };
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, items)) => items.push(item.clone()),
            None => groups.push((group, vec![item.clone()])),
        }
    }
    groups.sort_by_key(|(g, _)| *g);
    groups
}

/// The day number of a time for a fixed offset east of UTC, in minutes: what `local_day` is
/// for a reader whose offset does not change.
pub fn day_at_offset(ms: f64, offset_minutes: f64) -> i64 {
    ((ms + offset_minutes * 60_000.0) / 86_400_000.0).floor() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: f64 = 86_400_000.0;
    const HOUR: f64 = 3_600_000.0;

    fn chat(id: &str, updated_at: f64) -> ConversationSummary {
        ConversationSummary {
            id: id.into(),
            title: id.into(),
            updated_at,
            ..Default::default()
        }
    }

    #[test]
    fn pinned_chats_come_first_whenever_they_were_active() {
        let now = 20_000.0 * DAY + 12.0 * HOUR;
        let old_pinned = ConversationSummary {
            pinned: true,
            ..chat("old but pinned", now - 40.0 * DAY)
        };
        let list = vec![chat("new", now - HOUR), old_pinned];
        let groups = group_by_date(&list, now, |ms| day_at_offset(ms, 0.0));
        assert_eq!(groups[0].0, DateGroup::Pinned);
        assert_eq!(groups[0].1[0].id, "old but pinned");
        assert_eq!(groups[1].0, DateGroup::Today);
    }

    #[test]
    fn groups_follow_calendar_days_not_24_hour_spans() {
        // 00:30 local on day 20,000 at UTC+2.
        let offset = 120.0;
        let now = 20_000.0 * DAY - 2.0 * HOUR + 0.5 * HOUR;
        let list = vec![
            chat("half an hour ago", now - 0.5 * HOUR),
            chat("an hour ago", now - HOUR),
            chat("two days ago", now - 2.0 * DAY),
            chat("a week ago", now - 7.0 * DAY),
            chat("eight days ago", now - 8.0 * DAY),
        ];
        let groups = group_by_date(&list, now, |ms| day_at_offset(ms, offset));
        let names: Vec<(DateGroup, Vec<&str>)> = groups
            .iter()
            .map(|(g, items)| (*g, items.iter().map(|c| c.id.as_str()).collect()))
            .collect();
        assert_eq!(
            names,
            vec![
                (DateGroup::Today, vec!["half an hour ago"]),
                (DateGroup::Yesterday, vec!["an hour ago"]),
                (DateGroup::Previous7Days, vec!["two days ago", "a week ago"]),
                (DateGroup::Older, vec!["eight days ago"]),
            ]
        );
    }

    #[test]
    fn empty_groups_are_left_out_and_the_future_is_today() {
        let now = 20_000.0 * DAY + 12.0 * HOUR;
        let list = vec![chat("ahead", now + DAY), chat("old", now - 40.0 * DAY)];
        let groups = group_by_date(&list, now, |ms| day_at_offset(ms, 0.0));
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].0, DateGroup::Today);
        assert_eq!(groups[1].0, DateGroup::Older);
        assert!(group_by_date(&[], now, |ms| day_at_offset(ms, 0.0)).is_empty());
    }

    #[test]
    fn the_offset_moves_the_day_boundary() {
        let midnight_utc = 20_000.0 * DAY;
        assert_eq!(day_at_offset(midnight_utc - 1.0, 0.0), 19_999);
        assert_eq!(day_at_offset(midnight_utc - 1.0, 60.0), 20_000);
        assert_eq!(day_at_offset(midnight_utc, -60.0), 19_999);
    }
}
