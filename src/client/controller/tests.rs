//! The controller's rules over its signals, natively: a page with history in this browser,
//! on a shelf in memory, under a reactive owner. The stored format has its own tests
//! (`saved_chat`); these test what the controller does with it.

use leptos::prelude::*;

use super::chunks::READER;
use super::history::History;
use super::{ChatController, NoticeKind};
use crate::client::local_store::{self, MemoryShelf, MemoryTab};
use crate::client::saved_chat::{self, sample, SavedChat};
use crate::client::turn_state::TurnState;
use crate::domain::history::Message;
use crate::domain::{Role, TurnEvent};
use crate::i18n::Locale;

fn page() -> (Owner, ChatController) {
    let owner = Owner::new();
    owner.set();
    let c = ChatController::with(History::Browser, &MemoryShelf, &MemoryTab, None, Locale::En);
    c.local_chats.set_value(Some(READER));
    (owner, c)
}

fn answer(id: &str, text: &str) -> Message {
    let mut turn = TurnState::started(1.0);
    turn.apply(&TurnEvent::Delta { text: text.into() }, 2.0);
    turn.apply(
        &TurnEvent::Done {
            finish_reason: "stop".into(),
            usage: None,
            thinking_chars: 0,
            total_ms: 1,
        },
        3.0,
    );
    Message {
        id: id.into(),
        role: Role::Assistant,
        created_at: 2,
        active: 0,
        versions: vec![saved_chat::version_from_turn(&turn, 3.0)],
    }
}

/// A chat saved in this browser (by this tab or another).
fn saved(id: &str, title: &str, rev: u64) -> SavedChat {
    let mut record = sample::chat(
        id,
        title,
        vec![
            sample::user(&format!("{id}-q1"), "one"),
            answer(&format!("{id}-a1"), "first"),
            sample::user(&format!("{id}-q2"), "two"),
            answer(&format!("{id}-a2"), "second"),
        ],
    );
    record.chat.updated_at = 3;
    record.set_rev(rev);
    assert_eq!(local_store::save(&MemoryShelf, &record), Ok(()));
    record
}

fn kinds(c: &ChatController) -> Vec<NoticeKind> {
    c.notices
        .with_untracked(|n| n.iter().map(|n| n.kind).collect())
}

#[test]
fn opening_a_saved_chat_shows_it_and_remembers_it_for_the_next_visit() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    c.open("a");
    assert_eq!(c.conversation_id.get_untracked(), "a");
    assert_eq!(c.title.get_untracked(), "Apples");
    assert_eq!(c.entries.with_untracked(Vec::len), 4);
    let settings = local_store::load_settings(&MemoryShelf);
    assert_eq!(settings.last_conversation.as_deref(), Some("a"));
}

#[test]
fn opening_a_chat_no_longer_saved_says_so_and_stays() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    let before = c.conversation_id.get_untracked();
    c.open("gone");
    assert_eq!(c.conversation_id.get_untracked(), before);
    assert_eq!(kinds(&c), [NoticeKind::Missing]);
    assert_eq!(c.conversations.with_untracked(Vec::len), 1);
}

#[test]
fn renaming_another_chat_rewrites_it_and_the_list() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    saved("b", "Pears", 4);
    c.open("a");
    c.rename("b", "  Plums ".into());
    let b = local_store::load(&MemoryShelf, "b");
    assert_eq!(
        b.as_ref().map(|r| (r.chat.title.as_str(), r.rev())),
        Some(("Plums", 5))
    );
    assert!(c
        .conversations
        .with_untracked(|l| l.iter().any(|s| s.title == "Plums")));
    assert_eq!(c.title.get_untracked(), "Apples");
    c.rename("a", "   ".into());
    assert_eq!(
        c.title.get_untracked(),
        "Apples",
        "a blank title is no title"
    );
}

#[test]
fn a_save_over_another_tabs_newer_write_keeps_this_tabs_version_as_a_copy() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    c.open("a");
    saved("a", "Apples (other tab)", 7);
    c.save();
    let id = c.conversation_id.get_untracked();
    assert_ne!(id, "a");
    assert_eq!(
        crate::i18n::title(
            crate::i18n::Locale::En.catalogue(),
            &c.title.get_untracked()
        ),
        "Apples (copy)"
    );
    assert_eq!(kinds(&c), [NoticeKind::Conflict]);
    let theirs = local_store::load(&MemoryShelf, "a").map(|r| r.chat.title);
    assert_eq!(theirs.as_deref(), Some("Apples (other tab)"));
    assert!(local_store::load(&MemoryShelf, &id).is_some());
}

#[test]
fn a_full_storage_is_said_once_and_the_notice_goes_when_a_save_succeeds() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    c.open("a");
    MemoryShelf::set_full(true);
    c.save();
    c.save();
    assert_eq!(kinds(&c), [NoticeKind::Save]);
    MemoryShelf::set_full(false);
    c.save();
    assert!(kinds(&c).is_empty());
    assert_eq!(local_store::stored_rev(&MemoryShelf, "a"), Some(2));
}

#[test]
fn deleting_the_open_chat_starts_a_new_one_and_drops_it_from_the_list() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    saved("b", "Pears", 1);
    c.open("a");
    c.delete("a");
    assert_ne!(c.conversation_id.get_untracked(), "a");
    assert!(c.entries.with_untracked(Vec::is_empty));
    assert!(local_store::load(&MemoryShelf, "a").is_none());
    let ids: Vec<String> = c
        .conversations
        .with_untracked(|l| l.iter().map(|s| s.id.clone()).collect());
    assert_eq!(ids, ["b"]);
}

#[test]
fn a_branch_holds_the_history_up_to_the_message_and_is_shown() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    c.open("a");
    let second = c.entries.with_untracked(|e| e[1].clone());
    c.branch(&second);
    let id = c.conversation_id.get_untracked();
    assert_ne!(id, "a");
    assert_eq!(c.entries.with_untracked(Vec::len), 2);
    assert_eq!(
        local_store::load(&MemoryShelf, &id).map(|r| r.chat.messages.len()),
        Some(2)
    );
    assert_eq!(
        local_store::load(&MemoryShelf, "a").map(|r| r.chat.messages.len()),
        Some(4)
    );
}

#[test]
fn editing_puts_the_message_back_and_cancelling_clears_it() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    c.open("a");
    let first = c.entries.with_untracked(|e| e[0].clone());
    c.edit(&first);
    assert_eq!(c.draft.get_untracked(), "one");
    assert_eq!(c.editing.get_untracked().as_deref(), Some("a-q1"));
    c.cancel_edit();
    assert_eq!(c.draft.get_untracked(), "");
    assert_eq!(c.editing.get_untracked(), None);
}

#[test]
fn a_browser_history_keeps_no_version_choice_beyond_this_browser_and_exports_the_page() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    c.open("a");
    let exported = std::rc::Rc::new(std::cell::RefCell::new(None));
    let into = exported.clone();
    c.exportable(move |r| *into.borrow_mut() = Some(r.chat.id));
    assert_eq!(exported.borrow().as_deref(), Some("a"));
    assert!(!c.backend().retry_keeps_versions(Some("m1")));
}

#[test]
fn a_chat_in_this_browser_carries_its_files_and_saves_those_that_fit() {
    use crate::client::saved_chat::carried;
    use crate::domain::attachment::{FileRef, Kind};
    let (_owner, c) = page();
    let file = |id: &str, name: &str| FileRef {
        id: id.into(),
        name: name.into(),
        kind: Kind::Text,
        size: 3,
        pixels: None,
        pages: None,
        sent_as: None,
    };
    let mut record = saved("f", "Files", 1);
    record.chat.messages[0].versions[0].files = vec![file("small", "a.md"), file("big", "b.md")];
    record.chat.messages[2].versions[0].files = vec![file("gone", "c.md")];
    carried::carry_base64(&mut record, vec![("small".into(), "YWJj".into())]);
    assert_eq!(local_store::save(&MemoryShelf, &record), Ok(()));
    c.open("f");
    let big = "A".repeat(super::attachments::INLINE_KEPT_BYTES);
    c.inline_files
        .update_value(|kept| drop(kept.insert("big".into(), big.clone())));

    let carried: Vec<Vec<(String, String)>> = c.entries.with_untracked(|entries| {
        entries
            .iter()
            .map(|e| {
                c.inline_of(e)
                    .into_iter()
                    .map(|f| (f.name, f.data))
                    .collect()
            })
            .collect()
    });
    assert_eq!(
        carried,
        [
            vec![
                ("a.md".to_string(), "YWJj".to_string()),
                ("b.md".into(), big)
            ],
            vec![],
            vec![],
            vec![],
        ],
        "the saved one and the one this page holds go; one no longer here does not"
    );
    let saved = c.record(5.0);
    assert_eq!(
        saved.extra.get(carried::FILES),
        Some(&serde_json::json!({"small": "YWJj"})),
        "the big one stays with the page"
    );
}

#[test]
fn a_message_sent_while_the_addressed_chat_opens_is_held_for_it_not_sent_to_a_new_chat() {
    let (_owner, c) = page();
    c.opening.set(true);
    c.send("And in 2027?".into());
    c.send("And later?".into());
    assert_eq!(c.entries.with_untracked(Vec::len), 0);
    assert_eq!(
        c.held.get_value().as_deref(),
        Some("And in 2027?\n\nAnd later?")
    );
}

#[test]
fn a_temporary_chat_stays_in_its_tab_only_and_is_gone_after_new_chat() {
    use super::temporary::{kept_in, KEEP_MS};
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    c.refresh_list();
    c.set_temporary(true);
    assert!(c.temporary.get_untracked());
    let mut record = saved("t", "Secret", 1);
    local_store::remove(&MemoryShelf, "t");
    record.set_rev(0);
    c.show_as(record, true);
    c.save();
    assert!(
        local_store::load(&MemoryShelf, "t").is_none(),
        "never in this browser's history"
    );
    assert!(c
        .conversations
        .with_untracked(|l| l.iter().all(|s| s.id != "t")));
    let settings = local_store::load_settings(&MemoryShelf);
    assert_ne!(settings.last_conversation.as_deref(), Some("t"));
    let now = super::now_ms();
    assert_eq!(kept_in(&MemoryTab, now).as_deref(), Some("t"));
    assert_eq!(
        kept_in(&MemoryTab, now + KEEP_MS + 1.0),
        None,
        "the timeout"
    );
    c.set_temporary(false);
    assert!(
        c.temporary.get_untracked(),
        "a chat with messages stays as it is"
    );
    let request = c.keeper().send_request(c, "more".into(), Vec::new(), None);
    assert!(!request.is_stored(), "asked without the server keeping it");

    // The tab reloads: the chat comes back, temporary.
    let (_owner2, again) = page();
    let id = again.temporary_in_tab().expect("kept in the tab");
    again.restore_temporary(READER, &id);
    assert!(again.temporary.get_untracked());
    assert_eq!(again.conversation_id.get_untracked(), "t");
    assert_eq!(again.entries.with_untracked(Vec::len), 4);

    again.new_chat();
    assert!(!again.temporary.get_untracked());
    assert_eq!(kept_in(&MemoryTab, super::now_ms()), None, "forgotten");
    assert!(local_store::load(&MemoryTab, "t").is_none());
    assert!(local_store::load(&MemoryShelf, "t").is_none());
}

#[test]
fn opening_another_chat_forgets_the_temporary_one() {
    let (_owner, c) = page();
    saved("a", "Apples", 1);
    let record = saved("t", "Secret", 1);
    local_store::remove(&MemoryShelf, "t");
    c.show_as(record, true);
    c.save();
    c.open("a");
    assert!(!c.temporary.get_untracked());
    assert_eq!(super::temporary::kept_in(&MemoryTab, super::now_ms()), None);
    assert_eq!(c.conversation_id.get_untracked(), "a");
}

/// A turn the page follows, as `follow` records it, with the receiving end of its Stop.
fn followed(
    c: &ChatController,
    server: Option<&str>,
) -> (
    RwSignal<TurnState>,
    futures::channel::oneshot::Receiver<crate::client::turn_stream::Leave>,
) {
    let turn = RwSignal::new(TurnState::new());
    let (leave, rx) = futures::channel::oneshot::channel();
    c.runs.update_value(|runs| {
        runs.push(super::Run {
            turn,
            leave,
            server: server.map(String::from),
        })
    });
    c.running.update(|r| r.push(turn));
    (turn, rx)
}

#[test]
fn a_pane_s_stop_ends_its_turn_only_and_the_composer_s_ends_them_all() {
    use crate::client::turn_stream::Leave;
    let (_owner, c) = page();
    let (deep, mut deep_rx) = followed(&c, Some("t-deep"));
    let (mini, mut mini_rx) = followed(&c, None);
    let (demo, mut demo_rx) = followed(&c, Some("t-demo"));
    c.stop_turn(deep);
    assert_eq!(deep_rx.try_recv(), Ok(Some(Leave::Stop)));
    assert_eq!(mini_rx.try_recv(), Ok(None));
    assert!(!c.runs_turn(deep) && c.runs_turn(mini) && c.runs_turn(demo));
    assert!(c.is_running());
    // Stopping it again, or a turn not followed, changes nothing.
    c.stop_turn(deep);
    assert!(c.runs_turn(mini));
    c.stop();
    assert_eq!(mini_rx.try_recv(), Ok(Some(Leave::Stop)));
    assert_eq!(demo_rx.try_recv(), Ok(Some(Leave::Stop)));
    assert!(!c.is_running());
}

#[test]
fn a_temporary_chat_stops_comparing() {
    let (_owner, c) = page();
    c.compare.set(crate::client::compare::first_panes(
        "a",
        &["a".to_string(), "b".to_string()],
    ));
    c.set_temporary(true);
    assert_eq!(c.compare.get_untracked(), None);
    assert!(c.panes_to_ask().is_empty());
}
