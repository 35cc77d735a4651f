//! The controller's decisions as plain functions over plain data: what history a turn sends,
//! what a save does when another tab wrote the same chat, which version is shown, where an edit
//! cuts the conversation, what retry and regenerate do to the versions, and what a branch
//! holds. The controller only reads its signals into these and writes the results back.

use super::saved_chat::SavedChat;
use super::turn_state::TurnPhase;
use crate::domain::history::Version;
use crate::domain::page::Address;
use crate::domain::{ChatMessage, Role};

/// One message of the conversation as the history sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Said<'a> {
    /// What the reader wrote, and the files the request carries with it (a chat kept in this
    /// browser).
    User(&'a str, &'a [crate::domain::message::InlineFile]),
    /// The shown version of an assistant message: how it ended and its answer.
    Assistant { phase: TurnPhase, answer: &'a str },
    /// An assistant message without any version.
    Nothing,
}

/// The history sent upstream (the rule is [`crate::domain::message::history`]): an answer
/// counts as finished when it is done, or stopped with text kept.
pub fn history<'a>(said: impl IntoIterator<Item = Said<'a>>) -> Vec<ChatMessage> {
    crate::domain::message::history(said.into_iter().filter_map(|s| match s {
        Said::User(text, inline) => Some(crate::domain::message::Said::User(text, &[], inline)),
        Said::Assistant { phase, answer } => Some(crate::domain::message::Said::Answer {
            finished: matches!(phase, TurnPhase::Done | TurnPhase::Stopped),
            text: answer,
            replay: &[],
        }),
        Said::Nothing => None,
    }))
}

/// What a save does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SavePlan {
    /// Write over the stored record, as revision `rev`.
    Write { rev: u64 },
    /// Another tab wrote a newer revision since this tab last did: keep theirs and save this
    /// tab's version as a copy.
    KeepAsCopy,
}

/// The revision rule: `stored` is the revision in storage now (none if the chat is not
/// stored), `ours` the one this tab last read or wrote.
pub fn save_plan(stored: Option<u64>, ours: u64) -> SavePlan {
    match stored {
        Some(theirs) if theirs > ours => SavePlan::KeepAsCopy,
        _ => SavePlan::Write { rev: ours + 1 },
    }
}

/// The rule for this browser's copy of a chat the server keeps: a cache, replaced whole (the
/// server settles conflicts), written with a count above both the stored and this tab's.
pub fn cache_plan(stored: Option<u64>, ours: u64) -> SavePlan {
    SavePlan::Write {
        rev: stored.unwrap_or(0).max(ours) + 1,
    }
}

/// This tab's version of a chat, saved beside another tab's newer one: a new id, the title
/// marked as a copy, counting revisions afresh.
pub fn as_copy(mut record: SavedChat, new_id: String) -> SavedChat {
    record.chat.id = new_id;
    record.chat.title = crate::domain::history::TitleMark::Copy.after(&record.chat.title);
    record.set_rev(1);
    record
}

/// The version shown of an answer with `count` versions when `active` was chosen: the chosen
/// one, or the latest when the choice is out of range; none without versions.
pub fn shown_version(count: usize, active: usize) -> Option<usize> {
    if active < count {
        Some(active)
    } else {
        count.checked_sub(1)
    }
}

/// The version to switch to when the reader asks for `requested`: only an existing one, and
/// not while a turn runs (its version must stay in view).
pub fn switch_version(count: usize, requested: usize, running: bool) -> Option<usize> {
    (requested < count && !running).then_some(requested)
}

/// Where sending cuts the conversation: at the message being edited (it and everything after
/// it are replaced), or nowhere.
pub fn cut_for_edit<'a>(
    ids: impl IntoIterator<Item = &'a str>,
    editing: Option<&str>,
) -> Option<usize> {
    let editing = editing?;
    ids.into_iter().position(|id| id == editing)
}

/// The versions an edited user message keeps: every earlier one (or the one it had, when it
/// was never edited before), then the new one. An edit that changes nothing (the same text,
/// the same files) adds nothing.
pub fn edit_versions(earlier: &[Version], old: Version, new: Version) -> Vec<Version> {
    let mut versions = if earlier.is_empty() {
        vec![old]
    } else {
        earlier.to_vec()
    };
    if versions
        .last()
        .is_some_and(|v| v.content == new.content && v.files == new.files)
    {
        return if versions.len() > 1 {
            versions
        } else {
            Vec::new()
        };
    }
    versions.push(new);
    versions
}

/// The first message the page renders of a conversation of `len`: the last `window` when it is
/// opened (or replaced by a shorter copy), the same one while messages are appended, and never
/// later than the one the reader asked to see (`asked`).
pub fn first_shown(previous: Option<usize>, len: usize, window: usize, asked: usize) -> usize {
    let base = match previous {
        Some(first) if first <= len => first,
        _ => len.saturating_sub(window),
    };
    base.min(asked)
}

/// Where a new version goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// In place of the version at this index.
    Replace(usize),
    /// After the last one, as the version at this index.
    Push(usize),
}

/// Retry runs the failed turn again in place of the version shown.
pub fn retry_slot(count: usize, active: usize) -> Slot {
    match shown_version(count, active) {
        Some(i) if i == active => Slot::Replace(i),
        _ => Slot::Push(count),
    }
}

/// Regenerate keeps every version and shows the new one.
pub fn regenerate_slot(count: usize) -> Slot {
    Slot::Push(count)
}

/// The address the page shows for conversation `shown` (a new chat's is the base path until it
/// has something in it), and whether getting there is a step Back returns from: it is when
/// another conversation (`before`) was shown, not when a new chat got its first message or the
/// page its first address.
pub fn address_for(shown: &str, has_content: bool, before: Option<&str>) -> (Address, bool) {
    let address = if has_content {
        Address::Chat(shown.to_string())
    } else {
        Address::NewChat
    };
    (address, before.is_some_and(|b| b != shown))
}

/// A new conversation with the history up to and including `message_id` (all of it if the
/// message is not there), titled as a branch of `record`.
pub fn branch(record: &SavedChat, message_id: &str, new_id: String, now: f64) -> SavedChat {
    let mut branch = record.clone();
    let c = &mut branch.chat;
    if let Some(pos) = c.messages.iter().position(|m| m.id == message_id) {
        c.messages.truncate(pos + 1);
        branch.message_extra.truncate(pos + 1);
    }
    c.id = new_id;
    c.title = crate::domain::history::TitleMark::Branch.after(&c.title);
    c.created_at = now as i64;
    c.updated_at = now as i64;
    c.first = 0;
    branch.extra = serde_json::Map::new();
    branch.set_rev(1);
    branch
}

/// True when the message list could be sent at all: it must end with the reader's message.
pub fn ends_with_user(history: &[ChatMessage]) -> bool {
    history.last().is_some_and(|m| m.role == Role::User)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_address_follows_the_conversation_and_back_returns_to_the_one_before() {
        use crate::domain::page::Address;
        assert_eq!(
            super::address_for("a", false, None),
            (Address::NewChat, false),
            "an empty new chat is the base path"
        );
        assert_eq!(
            super::address_for("a", true, Some("a")),
            (Address::Chat("a".into()), false),
            "a new chat's first message names it in place"
        );
        assert_eq!(
            super::address_for("b", true, Some("a")),
            (Address::Chat("b".into()), true),
            "another chat is a step back from"
        );
        assert_eq!(
            super::address_for("c", false, Some("b")),
            (Address::NewChat, true),
            "so is a new chat"
        );
        assert_eq!(
            super::address_for("b", true, None),
            (Address::Chat("b".into()), false),
            "the page's first address replaces the one it loaded at"
        );
    }

    use super::*;
    use crate::client::saved_chat::sample;

    fn answer(phase: TurnPhase, text: &str) -> Said<'_> {
        Said::Assistant {
            phase,
            answer: text,
        }
    }

    #[test]
    fn a_long_conversation_opens_on_its_last_messages_and_grows_only_when_asked() {
        assert_eq!(first_shown(None, 1000, 40, usize::MAX), 960);
        assert_eq!(first_shown(None, 12, 40, usize::MAX), 0);
        // A turn appends: what is shown stays, the new messages are added below.
        assert_eq!(first_shown(Some(960), 1002, 40, usize::MAX), 960);
        // The reader scrolls up: earlier ones come in.
        assert_eq!(first_shown(Some(960), 1002, 40, 920), 920);
        // A shorter copy replaces it (an edit cut it): its last ones again.
        assert_eq!(first_shown(Some(960), 30, 40, usize::MAX), 0);
    }

    #[test]
    fn an_edit_keeps_every_earlier_text_and_an_unchanged_one_adds_nothing() {
        let v = |text: &str, at: i64| Version::text(text, at);
        let first = edit_versions(&[], v("one", 1), v("two", 2));
        let texts = |v: &[Version]| v.iter().map(|v| v.content.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&first), ["one", "two"]);
        assert_eq!(first[0].created_at, 1);
        let second = edit_versions(&first, v("two", 2), v("three", 3));
        assert_eq!(texts(&second), ["one", "two", "three"]);
        assert!(edit_versions(&[], v("same", 1), v("same", 2)).is_empty());
        assert_eq!(
            texts(&edit_versions(&second, v("three", 3), v("three", 4))).len(),
            3
        );
    }

    #[test]
    fn an_edit_that_changes_only_the_files_is_an_edit() {
        let file = crate::domain::attachment::FileRef {
            id: "f".into(),
            name: "a.txt".into(),
            kind: crate::domain::attachment::Kind::Text,
            size: 3,
            pixels: None,
            pages: None,
            sent_as: None,
        };
        let with_file = Version {
            files: vec![file],
            ..Version::text("same", 2)
        };
        let edited = edit_versions(&[], Version::text("same", 1), with_file.clone());
        assert_eq!(edited.len(), 2);
        assert_eq!(edited[1], with_file);
        assert!(edited[0].files.is_empty());
    }

    #[test]
    fn history_holds_finished_answers_only_and_alternates() {
        let h = history([
            Said::User("hi", &[]),
            answer(TurnPhase::Done, "hello"),
            Said::User("and?", &[]),
            answer(TurnPhase::Error, "partial"),
            Said::User("again", &[]),
            answer(TurnPhase::Stopped, "half"),
            Said::User("ok", &[]),
            answer(TurnPhase::Done, "   "),
            Said::Nothing,
            Said::User("last", &[]),
        ]);
        assert_eq!(
            h,
            [
                ChatMessage::user("hi"),
                ChatMessage::assistant("hello"),
                ChatMessage::user("and?\n\nagain"),
                ChatMessage::assistant("half"),
                ChatMessage::user("ok\n\nlast"),
            ]
        );
        assert!(ends_with_user(&h));
        assert!(!ends_with_user(&[]));
    }

    #[test]
    fn history_never_carries_a_streaming_answer() {
        let h = history([
            Said::User("q", &[]),
            answer(TurnPhase::Streaming, "so far"),
            Said::User("next", &[]),
        ]);
        assert_eq!(h, [ChatMessage::user("q\n\nnext")]);
    }

    #[test]
    fn a_newer_revision_elsewhere_is_never_overwritten() {
        assert_eq!(save_plan(None, 0), SavePlan::Write { rev: 1 });
        assert_eq!(save_plan(Some(3), 3), SavePlan::Write { rev: 4 });
        assert_eq!(save_plan(Some(2), 5), SavePlan::Write { rev: 6 });
        assert_eq!(save_plan(Some(4), 3), SavePlan::KeepAsCopy);
    }

    fn record(ids: &[&str]) -> SavedChat {
        let messages = ids
            .iter()
            .map(|id| sample::user(id, &format!("text {id}")))
            .collect();
        let mut r = sample::chat("c1", "Sky", messages);
        r.set_rev(7);
        r
    }

    #[test]
    fn a_copy_keeps_every_message_under_a_new_id() {
        let original = record(&["a", "b"]);
        let copy = as_copy(original.clone(), "c2".into());
        assert_eq!(copy.chat.id, "c2");
        let en = crate::i18n::Locale::En.catalogue();
        assert_eq!(crate::i18n::title(en, &copy.chat.title), "Sky (copy)");
        assert_eq!(copy.rev(), 1);
        assert_eq!(copy.chat.messages, original.chat.messages);
    }

    #[test]
    fn exactly_one_version_is_shown_and_switching_needs_one_that_exists() {
        assert_eq!(shown_version(0, 0), None);
        assert_eq!(shown_version(3, 1), Some(1));
        assert_eq!(shown_version(3, 9), Some(2));
        assert_eq!(switch_version(3, 2, false), Some(2));
        assert_eq!(switch_version(3, 3, false), None);
        assert_eq!(switch_version(3, 0, true), None, "not while a turn runs");
    }

    #[test]
    fn retry_replaces_the_shown_version_and_regenerate_adds_one() {
        assert_eq!(retry_slot(2, 1), Slot::Replace(1));
        assert_eq!(retry_slot(2, 0), Slot::Replace(0));
        assert_eq!(retry_slot(0, 0), Slot::Push(0));
        assert_eq!(retry_slot(2, 5), Slot::Push(2));
        assert_eq!(regenerate_slot(2), Slot::Push(2));
    }

    #[test]
    fn an_edit_cuts_at_the_edited_message() {
        let ids = ["u1", "a1", "u2", "a2"];
        assert_eq!(cut_for_edit(ids, Some("u2")), Some(2));
        assert_eq!(cut_for_edit(ids, Some("gone")), None);
        assert_eq!(cut_for_edit(ids, None), None);
    }

    #[test]
    fn a_branch_holds_the_history_up_to_its_message() {
        let r = record(&["u1", "a1", "u2", "a2"]);
        let b = branch(&r, "a1", "b1".into(), 9.0);
        assert_eq!(b.chat.id, "b1");
        let en = crate::i18n::Locale::En.catalogue();
        assert_eq!(crate::i18n::title(en, &b.chat.title), "Sky (branch)");
        let ids: Vec<&str> = b.chat.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["u1", "a1"]);
        assert_eq!((b.chat.created_at, b.rev()), (9, 1));
        let mut untitled = r.clone();
        untitled.chat.title = String::new();
        assert_eq!(
            crate::i18n::title(en, &branch(&untitled, "x", "b2".into(), 0.0).chat.title),
            "New chat (branch)"
        );
        assert_eq!(
            branch(&r, "missing", "b3".into(), 0.0).chat.messages.len(),
            4
        );
    }
}

/// The effort "Think more" asks for: the model's next level above what the answer was asked
/// with (the model's default counts as medium); none when it was asked with its highest.
pub fn more_effort(
    asked: Option<crate::domain::Effort>,
    levels: crate::domain::EffortLevels,
) -> Option<crate::domain::Effort> {
    levels.above(asked.unwrap_or(crate::domain::Effort::Medium))
}

#[cfg(test)]
mod more_effort_tests {
    use super::more_effort;
    use crate::domain::{Effort, EffortLevels};

    #[test]
    fn think_more_goes_one_of_the_models_levels_up_and_stops_at_its_highest() {
        let standard = EffortLevels::STANDARD;
        assert_eq!(
            more_effort(Some(Effort::Low), standard),
            Some(Effort::Medium)
        );
        assert_eq!(more_effort(None, standard), Some(Effort::High));
        assert_eq!(more_effort(Some(Effort::High), standard), None);
        let opus = EffortLevels::of(&[
            Effort::Low,
            Effort::Medium,
            Effort::High,
            Effort::Xhigh,
            Effort::Max,
        ]);
        assert_eq!(more_effort(Some(Effort::High), opus), Some(Effort::Xhigh));
        assert_eq!(more_effort(Some(Effort::Max), opus), None);
        let pro = EffortLevels::of(&[Effort::Low, Effort::High]);
        assert_eq!(more_effort(Some(Effort::Low), pro), Some(Effort::High));
    }
}

/// The least time between two updates of a streaming answer on the page. Each update costs a
/// style, layout and paint of the growing answer whatever it adds, so the page shows what
/// arrived twenty times a second instead of every frame: the text still moves smoothly, and a
/// long turn costs the reader's browser a third of the work.
pub const UPDATE_INTERVAL_MS: f64 = 50.0;

/// How long the page waits before showing events that just arrived, when it last showed some
/// at `last_ms` (`None`: not yet in this turn, so at once).
pub fn update_wait(now_ms: f64, last_ms: Option<f64>) -> std::time::Duration {
    let due = last_ms.map_or(now_ms, |last| last + UPDATE_INTERVAL_MS);
    std::time::Duration::from_micros(
        ((due - now_ms).clamp(0.0, UPDATE_INTERVAL_MS) * 1000.0) as u64,
    )
}

/// How long the page waits before reconnecting to a turn the server keeps, after `attempt`
/// failed tries: at once, then doubling from half a second to eight; `None` after about a
/// minute of trying (the answer is then shown as dropped, with Retry).
pub fn reconnect_delay(attempt: u32) -> Option<std::time::Duration> {
    const TRIES: u32 = 12;
    if attempt >= TRIES {
        return None;
    }
    let ms = match attempt {
        0 => 0,
        n => (250u64 << n.min(5)).min(8_000),
    };
    Some(std::time::Duration::from_millis(ms))
}

/// The wait before reconnecting to a turn after its stream broke, or `None` when the client
/// should give up: a turn the server does not keep (`stored` false) ends with its connection,
/// one whose id never arrived cannot be asked for again, and the budget of
/// [`reconnect_delay`] runs out. Counts the try in `attempt` (reset it when an event arrives).
/// The page and the terminal both follow this rule.
pub fn reconnect(
    stored: bool,
    turn: Option<&str>,
    attempt: &mut u32,
) -> Option<std::time::Duration> {
    if !stored || turn.is_none() {
        return None;
    }
    let delay = reconnect_delay(*attempt)?;
    *attempt += 1;
    Some(delay)
}

#[cfg(test)]
mod reconnect_tests {
    use super::{reconnect, reconnect_delay, update_wait};
    use std::time::Duration;

    #[test]
    fn a_streaming_answer_is_shown_at_once_and_then_at_most_twenty_times_a_second() {
        assert_eq!(update_wait(1_000.0, None), Duration::ZERO);
        assert_eq!(
            update_wait(1_010.0, Some(1_000.0)),
            Duration::from_millis(40)
        );
        assert_eq!(update_wait(1_050.0, Some(1_000.0)), Duration::ZERO);
        assert_eq!(update_wait(1_300.0, Some(1_000.0)), Duration::ZERO);
        // A clock set back never makes the page wait longer than one interval.
        assert_eq!(update_wait(900.0, Some(1_000.0)), Duration::from_millis(50));
    }

    #[test]
    fn only_a_kept_turn_whose_id_is_known_is_reconnected_and_each_try_counts() {
        let mut attempt = 0;
        assert_eq!(reconnect(false, Some("t"), &mut attempt), None);
        assert_eq!(reconnect(true, None, &mut attempt), None);
        assert_eq!(attempt, 0);
        assert_eq!(
            reconnect(true, Some("t"), &mut attempt),
            Some(Duration::ZERO)
        );
        assert_eq!(attempt, 1);
        assert_eq!(
            reconnect(true, Some("t"), &mut attempt),
            Some(Duration::from_millis(500))
        );
        while reconnect(true, Some("t"), &mut attempt).is_some() {}
        assert_eq!(
            reconnect_delay(attempt),
            None,
            "gives up when the budget is spent"
        );
    }

    #[test]
    fn reconnecting_starts_at_once_backs_off_and_gives_up_after_about_a_minute() {
        let delays: Vec<Duration> = (0..).map_while(reconnect_delay).collect();
        assert_eq!(delays[0], Duration::ZERO);
        assert_eq!(delays[1], Duration::from_millis(500));
        assert!(delays.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*delays.last().unwrap(), Duration::from_secs(8));
        let total: Duration = delays.iter().sum();
        assert!(
            total >= Duration::from_secs(45) && total <= Duration::from_secs(90),
            "{total:?}"
        );
    }
}
