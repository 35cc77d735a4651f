//! What each key does to the chat. Decided without I/O: what needs the server comes back as
//! [`Effect`]s, so every key is tested in-process.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{words, Chat, Effect};

impl Chat {
    /// Applies `key` to the chat; what it asks of the server is returned.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            if self
                .quit_armed
                .is_some_and(|t| t.elapsed() < Duration::from_secs(3))
            {
                self.quit = true;
                return Vec::new();
            }
            let effects = self.stop();
            self.quit_armed = Some(Instant::now());
            self.status = words().quit_again.into();
            return effects;
        }
        self.quit_armed = None;
        if self.picker.is_some() {
            return self.on_picker_key(key);
        }
        match (key.code, ctrl) {
            (KeyCode::Esc, _) => {
                if self.is_running() {
                    return self.stop();
                }
                self.input.clear();
                self.cursor = 0;
            }
            (KeyCode::Enter, _) => return self.send(),
            (KeyCode::Tab, false) if self.input_starts(super::attach::ATTACH) => {
                let typed: String = self.input.iter().collect();
                if let Some(done) = super::attach::complete(&typed, super::attach::entries) {
                    self.input = done.chars().collect();
                    self.cursor = self.input.len();
                }
            }
            (KeyCode::Tab, _) | (KeyCode::Char('o'), true) => {
                let mode = self.mode.toggled();
                self.set_mode(mode);
                self.status = crate::i18n::fill(words().mode_now, &[("mode", mode.label())]);
            }
            (KeyCode::Char('r'), true) => return self.retry(),
            (KeyCode::Char('n'), true) => return self.new_chat(),
            (KeyCode::Char('p'), true) => {
                if self.stored {
                    return vec![Effect::ListChats];
                }
                self.status = words().browser_history.into();
            }
            (KeyCode::Char('d'), true) if self.input.is_empty() => self.quit = true,
            (KeyCode::Up, _) => self.back += 1,
            (KeyCode::Down, _) => self.back = self.back.saturating_sub(1),
            (KeyCode::PageUp, _) => self.back += 10,
            (KeyCode::PageDown, _) => self.back = self.back.saturating_sub(10),
            (KeyCode::End, true) => self.back = 0,
            (KeyCode::Left, _) => self.cursor = self.cursor.saturating_sub(1),
            (KeyCode::Right, _) => self.cursor = (self.cursor + 1).min(self.input.len()),
            (KeyCode::Home, _) | (KeyCode::Char('a'), true) => self.cursor = 0,
            (KeyCode::End, _) | (KeyCode::Char('e'), true) => self.cursor = self.input.len(),
            (KeyCode::Backspace, _) if self.cursor > 0 => {
                self.cursor -= 1;
                self.input.remove(self.cursor);
            }
            (KeyCode::Delete, _) if self.cursor < self.input.len() => {
                self.input.remove(self.cursor);
            }
            (KeyCode::Char('u'), true) => {
                self.input.drain(..self.cursor);
                self.cursor = 0;
            }
            (KeyCode::Char(c), false) => {
                self.input.insert(self.cursor, c);
                self.cursor += 1;
            }
            _ => {}
        }
        Vec::new()
    }

    fn on_picker_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(picker) = &mut self.picker else {
            return Vec::new();
        };
        let count = picker.list.len();
        let at = picker.state.selected().unwrap_or(0);
        match key.code {
            KeyCode::Esc => self.picker = None,
            KeyCode::Up => picker.state.select(Some(at.saturating_sub(1))),
            KeyCode::Down => picker
                .state
                .select(Some((at + 1).min(count.saturating_sub(1)))),
            KeyCode::Enter => {
                let chosen = picker.list.get(at).map(|c| c.id.clone());
                self.picker = None;
                if let Some(id) = chosen {
                    let mut effects = self.detach();
                    effects.push(Effect::Open(id));
                    return effects;
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Whether the input line begins with `word` and a space (a command being typed).
    fn input_starts(&self, word: &str) -> bool {
        let typed: String = self.input.iter().take(word.chars().count() + 1).collect();
        typed.strip_prefix(word) == Some(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::super::app::testing::*;
    use super::super::follow::{Progress, Source};
    use super::super::view::{Item, Mode};
    use super::*;
    use crate::client::turn_state::TurnPhase;
    use crate::domain::history::ConversationSummary;
    use crate::domain::{ChatMessage, Failure, TurnEvent};

    fn phase(chat: &Chat) -> Option<TurnPhase> {
        chat.transcript.items().rev().find_map(|i| match i {
            Item::Assistant(t) => Some(t.state.phase),
            _ => None,
        })
    }

    #[test]
    fn typing_edits_the_input_and_enter_sends_it_once() {
        let mut chat = chat(true);
        type_text(&mut chat, "helo");
        chat.on_key(key(KeyCode::Left));
        chat.on_key(key(KeyCode::Char('l')));
        chat.on_key(key(KeyCode::End));
        chat.on_key(key(KeyCode::Char('!')));
        chat.on_key(key(KeyCode::Backspace));
        assert_eq!(chat.input.iter().collect::<String>(), "hello");
        let (source, _tx) = ask(&mut chat, "");
        let Source::Send(request) = source else {
            panic!("a new turn is sent");
        };
        assert_eq!(request.content.as_deref(), Some("hello"));
        assert_eq!(request.conversation, None);
        assert!(chat.input.is_empty() && chat.is_running());
        assert!(phase(&chat).is_some_and(TurnPhase::is_running));
        type_text(&mut chat, "more");
        assert!(
            chat.on_key(key(KeyCode::Enter)).is_empty(),
            "nothing is sent while a turn runs"
        );
        assert_eq!(
            chat.input.iter().collect::<String>(),
            "more",
            "the text waits"
        );
        chat.on_key(ctrl('u'));
        assert!(chat.input.is_empty());
        assert!(
            chat.on_key(key(KeyCode::Enter)).is_empty(),
            "an empty line is not sent"
        );
    }

    #[test]
    fn a_chat_kept_in_the_browser_sends_the_history_by_the_pages_rule() {
        let mut chat = chat(false);
        let (_, tx) = ask(&mut chat, "one");
        feed(&mut chat, &tx, Progress::Failed(Failure::new("boom", true)));
        let (_, tx) = ask(&mut chat, "two");
        feed(
            &mut chat,
            &tx,
            events(vec![
                TurnEvent::Delta {
                    text: "a whole answer".into(),
                },
                done(),
            ]),
        );
        let (source, _) = ask(&mut chat, "three");
        let Source::Send(request) = source else {
            panic!("a new turn is sent");
        };
        assert_eq!(
            request.messages,
            [
                ChatMessage::user("one\n\ntwo"),
                ChatMessage::assistant("a whole answer"),
                ChatMessage::user("three"),
            ],
            "the failed answer is not sent, and the questions around it are joined"
        );
        assert_eq!(request.content, None);
    }

    #[test]
    fn esc_stops_a_stored_turn_on_the_server_once_its_id_is_known() {
        let mut chat = chat(true);
        let (_, tx) = ask(&mut chat, "stop me");
        feed(&mut chat, &tx, events(vec![started("t1")]));
        let effects = chat.on_key(key(KeyCode::Esc));
        assert!(
            matches!(&effects[..], [Effect::StopOnServer(id)] if id == "t1"),
            "{effects:?}"
        );
        assert!(!chat.is_running());
        assert_eq!(phase(&chat), Some(TurnPhase::Stopped));

        // Before the id came, Stop waits for it, and stops the turn when it comes.
        let (_, tx) = ask(&mut chat, "stop me sooner");
        assert!(chat.on_key(key(KeyCode::Esc)).is_empty());
        assert_eq!(phase(&chat), Some(TurnPhase::Stopped));
        let effects = feed(&mut chat, &tx, events(vec![started("t2")]));
        assert!(
            matches!(&effects[..], [Effect::StopOnServer(id)] if id == "t2"),
            "{effects:?}"
        );
        assert!(!chat.is_running());

        // A new chat meanwhile hands the waiting Stop over.
        let (_, _tx) = ask(&mut chat, "and leave");
        chat.on_key(key(KeyCode::Esc));
        let effects = chat.on_key(ctrl('n'));
        assert!(
            matches!(&effects[..], [Effect::StopWhenStarted(_)]),
            "{effects:?}"
        );
        assert!(chat.transcript.is_empty() && !chat.is_running());
    }

    #[test]
    fn esc_ends_a_turn_kept_nowhere_by_closing_its_connection() {
        let mut chat = chat(false);
        let (_, tx) = ask(&mut chat, "stop me");
        feed(&mut chat, &tx, events(vec![started("t1")]));
        assert!(chat.on_key(key(KeyCode::Esc)).is_empty());
        assert!(!chat.is_running());
        assert!(
            tx.is_closed(),
            "the turn's channel is dropped with its task"
        );
        assert_eq!(phase(&chat), Some(TurnPhase::Stopped));
        type_text(&mut chat, "draft");
        chat.on_key(key(KeyCode::Esc));
        assert!(
            chat.input.is_empty(),
            "with nothing running Esc clears the input"
        );
    }

    #[test]
    fn ctrl_r_asks_the_server_for_a_new_version_of_the_stored_answer() {
        let mut chat = chat(true);
        let (_, tx) = ask(&mut chat, "q");
        feed(
            &mut chat,
            &tx,
            events(vec![stored_as("c1", "a1"), started("t1")]),
        );
        feed(&mut chat, &tx, Progress::Failed(Failure::new("busy", true)));
        let effects = chat.on_key(ctrl('r'));
        let [Effect::Follow(Source::Send(request), _)] = &effects[..] else {
            panic!("{effects:?}");
        };
        assert_eq!(request.conversation.as_deref(), Some("c1"));
        assert_eq!(request.regenerate.as_deref(), Some("a1"));
        let turns = chat
            .transcript
            .items()
            .filter(|i| matches!(i, Item::Assistant(_)))
            .count();
        assert_eq!(turns, 1, "the new answer takes the old one's place");
    }

    #[test]
    fn tab_toggles_the_mode_and_the_next_run_starts_in_it() {
        let dir = std::env::temp_dir().join(format!("ponder-keys-{}", std::process::id()));
        let config = dir.join("chat.json");
        let server =
            || super::super::client::Server::new("http://127.0.0.1:9", None).expect("client");
        let mut first = Chat::new(server(), true, Some(config.clone()), "");
        assert_eq!(first.mode, Mode::Overview);
        first.on_key(key(KeyCode::Tab));
        assert_eq!(first.mode, Mode::Detail);
        assert_eq!(first.status, "detail mode");
        let again = Chat::new(server(), true, Some(config.clone()), "");
        assert_eq!(again.mode, Mode::Detail, "the mode is kept");
        first.on_key(ctrl('o'));
        assert_eq!(
            Chat::new(server(), true, Some(config), "").mode,
            Mode::Overview
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    fn summaries(n: usize) -> Vec<ConversationSummary> {
        (0..n)
            .map(|i| ConversationSummary {
                id: format!("c{i}"),
                title: format!("chat {i}"),
                workspace_id: "w".into(),
                updated_at: 0,
                deleted_at: None,
                pinned: false,
                tags: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn the_picker_lists_moves_within_its_chats_opens_one_and_closes() {
        let mut chat = chat(true);
        assert!(matches!(&chat.on_key(ctrl('p'))[..], [Effect::ListChats]));
        chat.show_chats(Ok(summaries(3)));
        for _ in 0..5 {
            chat.on_key(key(KeyCode::Down));
        }
        let selected = |chat: &Chat| chat.picker.as_ref().and_then(|p| p.state.selected());
        assert_eq!(selected(&chat), Some(2), "no further than the last");
        chat.on_key(key(KeyCode::Up));
        type_text(&mut chat, "x");
        assert!(
            chat.input.is_empty(),
            "keys go to the picker while it is open"
        );
        let effects = chat.on_key(key(KeyCode::Enter));
        assert!(
            matches!(&effects[..], [Effect::Open(id)] if id == "c1"),
            "{effects:?}"
        );
        assert!(chat.picker.is_none());

        chat.show_chats(Ok(summaries(2)));
        assert!(chat.on_key(key(KeyCode::Esc)).is_empty());
        assert!(chat.picker.is_none());
        chat.show_chats(Ok(Vec::new()));
        assert!(chat.picker.is_none());
        assert_eq!(chat.status, words().no_chats);

        let mut browser = super::super::app::testing::chat(false);
        assert!(browser.on_key(ctrl('p')).is_empty());
        assert_eq!(browser.status, words().browser_history);
    }

    #[test]
    fn ctrl_c_stops_then_quits_when_pressed_again_and_ctrl_d_quits_on_an_empty_line() {
        let mut chat = chat(true);
        let (_, tx) = ask(&mut chat, "q");
        feed(&mut chat, &tx, events(vec![started("t1")]));
        let effects = chat.on_key(ctrl('c'));
        assert!(
            matches!(&effects[..], [Effect::StopOnServer(_)]),
            "the turn is stopped first"
        );
        assert!(!chat.quits());
        assert_eq!(chat.status, words().quit_again);
        chat.on_key(ctrl('c'));
        assert!(chat.quits());

        let mut chat = super::super::app::testing::chat(true);
        chat.on_key(ctrl('c'));
        chat.on_key(key(KeyCode::Char('a')));
        chat.on_key(ctrl('c'));
        assert!(!chat.quits(), "another key in between disarms it");
        type_text(&mut chat, "x");
        chat.on_key(ctrl('d'));
        assert!(!chat.quits(), "not with text typed");
        chat.on_key(ctrl('u'));
        chat.on_key(key(KeyCode::Backspace));
        chat.on_key(key(KeyCode::Home));
        chat.on_key(key(KeyCode::Delete));
        chat.on_key(ctrl('d'));
        assert!(chat.quits());
    }

    #[test]
    fn a_broken_stream_shows_reconnecting_until_it_is_back_and_a_gone_turn_reopens_its_chat() {
        let mut chat = chat(true);
        let (_, tx) = ask(&mut chat, "q");
        feed(
            &mut chat,
            &tx,
            events(vec![stored_as("c1", "a1"), started("t1")]),
        );
        feed(&mut chat, &tx, Progress::Lost);
        assert!(chat.reconnecting && chat.is_running());
        feed(&mut chat, &tx, Progress::Back);
        assert!(!chat.reconnecting);
        feed(&mut chat, &tx, Progress::Lost);
        let effects = feed(&mut chat, &tx, Progress::Gone);
        assert!(
            matches!(&effects[..], [Effect::Open(id)] if id == "c1"),
            "{effects:?}"
        );
        assert!(!chat.reconnecting && !chat.is_running());
    }

    #[test]
    fn attach_uploads_on_the_server_tab_completes_and_the_files_go_with_the_next_message() {
        let dir = std::env::temp_dir().join(format!("ponder-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("photo-of-the-cat.png"), b"x").expect("file");
        let mut chat = chat(true);
        type_text(&mut chat, &format!("/attach {}/pho", dir.display()));
        assert!(chat.on_key(key(KeyCode::Tab)).is_empty());
        let typed: String = chat.input.iter().collect();
        assert_eq!(
            typed,
            format!("/attach {}/photo-of-the-cat.png", dir.display())
        );
        assert_eq!(
            chat.mode,
            Mode::default(),
            "Tab completed, it did not switch the view"
        );
        let effects = chat.on_key(key(KeyCode::Enter));
        assert!(
            matches!(effects.as_slice(), [Effect::Attach(p, None)] if *p == dir.join("photo-of-the-cat.png")),
            "{effects:?}"
        );
        assert!(chat.input.is_empty());
        assert!(chat.transcript.is_empty(), "a command is not a message");
        std::fs::remove_dir_all(&dir).expect("clean");

        let file = crate::domain::attachment::FileRef {
            id: "f1".into(),
            name: "photo-of-the-cat.png".into(),
            kind: crate::domain::attachment::Kind::Image,
            size: 2048,
            pixels: Some((4, 3)),
            pages: None,
            sent_as: None,
        };
        chat.attached_file(Ok(file.clone()), None);
        assert_eq!(chat.status, "attached photo-of-the-cat.png · 2 KiB · Image");
        chat.attached_file(
            Err(crate::terminal::error::ClientError::Refused(
                Failure::of(crate::domain::ErrorCode::AttachmentHeic, false).with("name", "x.heic"),
            )),
            None,
        );
        assert!(
            chat.status.starts_with("not attached: x.heic"),
            "{}",
            chat.status
        );
        let paper = crate::domain::attachment::FileRef {
            id: "f2".into(),
            name: "paper.pdf".into(),
            kind: crate::domain::attachment::Kind::Pdf,
            size: 4096,
            pixels: None,
            pages: Some(3),
            sent_as: None,
        };
        type_text(&mut chat, "/attach --as txt paper.pdf");
        assert!(chat.on_key(key(KeyCode::Enter)).is_empty());
        assert_eq!(chat.status, "--as txt: say model|document|text|pages");
        type_text(&mut chat, "/attach --as text paper.pdf");
        assert!(matches!(
            chat.on_key(key(KeyCode::Enter)).as_slice(),
            [Effect::Attach(p, Some(crate::domain::attachment::SendAs::Text))] if p.ends_with("paper.pdf")
        ));
        chat.attached_file(Ok(paper), Some(crate::domain::attachment::SendAs::Text));
        assert_eq!(
            chat.status,
            "attached paper.pdf · 4 KiB · PDF, 3 pages → As its text"
        );
        let (source, _tx) = ask(&mut chat, "what is it?");
        let Source::Send(request) = source else {
            panic!("a turn")
        };
        assert_eq!(
            request.attachments,
            vec!["f1".to_string(), "f2".to_string()]
        );
        assert_eq!(
            request.send_as,
            [("f2".to_string(), crate::domain::attachment::SendAs::Text)].into()
        );
        assert_eq!(request.content.as_deref(), Some("what is it?"));
        assert!(chat.attached.is_empty(), "the files went with that message");
        assert!(matches!(
            chat.transcript.items().next(),
            Some(Item::User(q, files)) if q == "what is it?" && files.len() == 2 && files[0] == file
        ));
    }

    #[test]
    fn a_chat_kept_in_the_browser_attaches_nothing_and_detach_drops_the_files() {
        let mut chat = chat(false);
        type_text(&mut chat, "/attach notes.md");
        assert!(chat.on_key(key(KeyCode::Enter)).is_empty());
        assert_eq!(chat.status, words_of().files_need_server);
        let mut chat = super::super::app::testing::chat(true);
        chat.attached_file(
            Ok(crate::domain::attachment::FileRef {
                id: "f".into(),
                name: "a.md".into(),
                kind: crate::domain::attachment::Kind::Text,
                size: 3,
                pixels: None,
                pages: None,
                sent_as: None,
            }),
            None,
        );
        type_text(&mut chat, "/detach");
        assert!(chat.on_key(key(KeyCode::Enter)).is_empty());
        assert!(chat.attached.is_empty());
        assert_eq!(chat.status, words_of().files_dropped);
    }

    #[test]
    fn share_commands_need_a_stored_chat_with_a_message_and_name_its_links() {
        let mut browser = chat(false);
        type_text(&mut browser, "/share");
        assert!(browser.on_key(key(KeyCode::Enter)).is_empty());
        assert_eq!(browser.status, words_of().share_needs_server);
        let mut chat = chat(true);
        type_text(&mut chat, "/share thinking");
        assert!(chat.on_key(key(KeyCode::Enter)).is_empty());
        assert_eq!(chat.status, words_of().share_nothing_yet);
        chat.conversation = Some("c1".into());
        type_text(&mut chat, "/share thinking");
        assert!(matches!(
            chat.on_key(key(KeyCode::Enter)).as_slice(),
            [Effect::Share(id, crate::terminal::share::Command::Make(choice))] if id == "c1" && choice.thinking && !choice.files
        ));
        assert!(
            chat.input.is_empty(),
            "the command is not sent as a message"
        );
        type_text(&mut chat, "/unshare 1");
        assert!(chat.on_key(key(KeyCode::Enter)).is_empty(), "no list yet");
        assert_eq!(chat.status, "no link 1: /shares lists them");
        type_text(&mut chat, "/shares");
        assert!(matches!(
            chat.on_key(key(KeyCode::Enter)).as_slice(),
            [Effect::Share(_, crate::terminal::share::Command::List)]
        ));
    }

    fn words_of() -> &'static crate::i18n::TerminalWords {
        &crate::i18n::Locale::En.catalogue().terminal
    }
}
