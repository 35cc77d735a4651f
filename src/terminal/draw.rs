//! Painting the chat: the transcript's lines in their tones, the status line, the input box
//! with its cursor, and the chats picker.

use ratatui::layout::{Constraint, Layout, Position};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, Paragraph};
use ratatui::Frame;

use super::app::Chat;
use super::markdown::{StyledLine, Tone};
use super::{text, view};

impl Chat {
    /// Paints the chat into `frame`: the transcript (laid out again only where it changed),
    /// the status line and the input box, and the picker over them when it is open.
    pub fn draw(&mut self, frame: &mut Frame) {
        let [transcript, status, input] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(1),
            Constraint::Length(3),
        ])
        .areas(frame.area());
        let width = transcript.width as usize;
        let now = self.now();
        let lines = self.layout.lines(&self.transcript, self.mode, now, width);
        // Scrolled back, the reader keeps looking at the same lines while new ones arrive.
        if self.back > 0 && lines.len() > self.drawn {
            self.back += lines.len() - self.drawn;
        }
        self.drawn = lines.len();
        let (first, back) = view::window(lines.len(), transcript.height as usize, self.back);
        self.back = back;
        let shown: Vec<Line> = lines
            .window(first, transcript.height as usize)
            .map(styled)
            .collect();
        frame.render_widget(Paragraph::new(shown), transcript);

        let l = super::locale();
        let words = &l.catalogue().terminal;
        let mut hints = crate::i18n::fill(
            words.hints,
            &[
                ("mode", self.mode.label()),
                ("other", self.mode.toggled().label()),
            ],
        );
        if back > 0 {
            hints = format!("{} · {hints}", l.count(&words.lines_up, back as u64));
        }
        if !self.attached.is_empty() {
            let chips: Vec<String> = self
                .attached
                .iter()
                .map(|(f, asked)| super::attach::waiting_chip(f, *asked))
                .collect();
            let files = crate::i18n::fill(words.files_attached, &[("files", &chips.join(", "))]);
            hints = format!("{files} · {hints}");
        }
        if !self.status.is_empty() {
            hints = format!("{} · {hints}", self.status);
        }
        if self.reconnecting {
            hints = format!("{} · {hints}", words.reconnecting);
        }
        frame.render_widget(
            Paragraph::new(text::fit_start(
                &text::sanitize(&hints),
                status.width as usize,
            ))
            .style(Style::default().fg(Color::DarkGray)),
            status,
        );

        let inner = input.width.saturating_sub(2) as usize;
        let typed: String = self.input.iter().collect();
        let before: String = self.input[..self.cursor].iter().collect();
        let offset = text::width(&before).saturating_sub(inner.saturating_sub(1));
        let visible = skip_columns(&typed, offset);
        let title = if self.is_running() {
            words.input_thinking
        } else {
            words.input_message
        };
        frame.render_widget(
            Paragraph::new(text::fit_start(&visible, inner))
                .block(Block::default().borders(Borders::ALL).title(title)),
            input,
        );
        frame.set_cursor_position(Position::new(
            input.x + 1 + (text::width(&before) - offset) as u16,
            input.y + 1,
        ));

        if let Some(picker) = &mut self.picker {
            let area = frame.area();
            let height = (picker.list.len() as u16 + 2)
                .min(area.height.saturating_sub(2))
                .max(3);
            let popup = ratatui::layout::Rect {
                x: area.x + 2,
                y: area.y + 1,
                width: area.width.saturating_sub(4),
                height,
            };
            let cols = popup.width.saturating_sub(4) as usize;
            let items: Vec<ListItem> = picker
                .list
                .iter()
                .map(|c| {
                    let title = crate::i18n::title(super::locale().catalogue(), &c.title);
                    ListItem::new(text::fit_start(&text::sanitize(&title), cols))
                })
                .collect();
            frame.render_widget(Clear, popup);
            frame.render_stateful_widget(
                List::new(items)
                    .block(
                        Block::default()
                            .borders(Borders::ALL)
                            .title(format!(" {} ", words.picker_title)),
                    )
                    .highlight_symbol("› ")
                    .highlight_style(Style::default().add_modifier(Modifier::REVERSED)),
                popup,
                &mut picker.state,
            );
        }
    }
}

/// `s` without its first `columns` display columns.
fn skip_columns(s: &str, columns: usize) -> String {
    let mut skipped = 0;
    s.chars()
        .skip_while(|c| {
            if skipped >= columns {
                return false;
            }
            skipped += text::width(&c.to_string());
            true
        })
        .collect()
}

fn styled(line: &StyledLine) -> Line<'static> {
    Line::from(
        line.pieces
            .iter()
            .map(|p| Span::styled(p.text.clone(), tone_style(p.tone)))
            .collect::<Vec<_>>(),
    )
}

fn tone_style(tone: Tone) -> Style {
    let s = Style::default();
    match tone {
        Tone::Plain => s,
        Tone::Strong => s.add_modifier(Modifier::BOLD),
        Tone::Emphasis => s.add_modifier(Modifier::ITALIC),
        Tone::Code => s.fg(Color::Yellow),
        Tone::CodeBlock => s.fg(Color::Cyan),
        Tone::Heading => s.add_modifier(Modifier::BOLD).fg(Color::Magenta),
        Tone::Link => s.fg(Color::Blue).add_modifier(Modifier::UNDERLINED),
        Tone::Quote => s.fg(Color::DarkGray),
        Tone::Marker => s.fg(Color::Magenta),
        Tone::Rule => s.fg(Color::DarkGray),
    }
}

#[cfg(test)]
mod tests {
    use super::super::app::testing::*;
    use super::super::follow::Progress;
    use super::*;
    use crate::domain::{ThinkingKind, TurnEvent};
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::KeyCode;
    use ratatui::Terminal;

    /// The chat drawn on a `cols`×`rows` screen, row by row.
    fn screen(chat: &mut Chat, cols: u16, rows: u16) -> (Vec<String>, ratatui::buffer::Buffer) {
        let mut terminal = Terminal::new(TestBackend::new(cols, rows)).expect("a test terminal");
        terminal.draw(|f| chat.draw(f)).expect("drawn");
        let buffer = terminal.backend().buffer().clone();
        let rows = (0..rows)
            .map(|y| {
                (0..cols)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect();
        (rows, buffer)
    }

    fn shows(rows: &[String], text: &str) -> bool {
        rows.iter().any(|r| r.contains(text))
    }

    fn thinking(text: &str) -> Vec<TurnEvent> {
        vec![
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            TurnEvent::Thinking {
                block: 0,
                text: text.into(),
            },
        ]
    }

    #[test]
    fn a_thinking_block_streams_live_then_collapses_to_one_line_and_tab_expands_it() {
        let mut chat = chat(true);
        let (_, tx) = ask(&mut chat, "prove it");
        let (rows, _) = screen(&mut chat, 60, 16);
        assert!(shows(&rows, "› prove it"), "{rows:#?}");
        assert!(shows(&rows, "waiting for the model…"), "{rows:#?}");
        assert!(
            shows(&rows, " thinking… "),
            "the input box says a turn runs: {rows:#?}"
        );

        feed(
            &mut chat,
            &tx,
            events(thinking("First the base case.\nThen the step")),
        );
        let (rows, _) = screen(&mut chat, 60, 16);
        assert!(shows(&rows, "▸ Thinking… ("), "{rows:#?}");
        assert!(
            shows(&rows, "  Then the step"),
            "the newest line, live: {rows:#?}"
        );
        assert!(!shows(&rows, "First the base case."), "{rows:#?}");

        feed(
            &mut chat,
            &tx,
            events(vec![
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(12_000),
                    cut_short: false,
                },
                TurnEvent::Delta {
                    text: "The **answer** is 42.".into(),
                },
                done(),
            ]),
        );
        let (rows, buffer) = screen(&mut chat, 60, 16);
        assert!(shows(&rows, "▪ Thought for 12.0s · 7 words"), "{rows:#?}");
        assert!(!shows(&rows, "Then the step"), "collapsed: {rows:#?}");
        assert!(!shows(&rows, "▸ Thinking"), "{rows:#?}");
        let answer = rows
            .iter()
            .position(|r| r.starts_with("The answer is 42."))
            .expect("the answer");
        let bold = buffer[(4, answer as u16)].style().add_modifier;
        assert!(bold.contains(Modifier::BOLD), "markdown's strong is bold");
        assert!(shows(&rows, " message "), "{rows:#?}");

        chat.on_key(key(KeyCode::Tab));
        let (rows, _) = screen(&mut chat, 60, 16);
        assert!(
            shows(&rows, "  First the base case."),
            "expanded: {rows:#?}"
        );
        assert!(shows(&rows, "  Then the step"), "{rows:#?}");
        assert!(
            shows(&rows, "detail mode · detail · Tab: overview"),
            "{rows:#?}"
        );
    }

    #[test]
    fn the_status_line_says_reconnecting_while_the_stream_is_rejoined() {
        let mut chat = chat(true);
        let (_, tx) = ask(&mut chat, "q");
        feed(&mut chat, &tx, events(vec![started("t1")]));
        let status = |chat: &mut Chat| screen(chat, 100, 12).0[8].clone();
        assert!(!status(&mut chat).contains("reconnecting"));
        feed(&mut chat, &tx, Progress::Lost);
        assert!(
            status(&mut chat).starts_with("connection lost — reconnecting… · overview"),
            "{}",
            status(&mut chat)
        );
        feed(&mut chat, &tx, Progress::Back);
        assert!(!status(&mut chat).contains("reconnecting"));
    }

    #[test]
    fn the_picker_is_drawn_over_the_chat_with_the_chosen_line_marked() {
        let mut chat = chat(true);
        chat.show_chats(Ok(["Sky", "Sea", "Stars"]
            .iter()
            .map(|t| crate::domain::history::ConversationSummary {
                id: t.to_lowercase(),
                title: t.to_string(),
                workspace_id: "w".into(),
                updated_at: 0,
                deleted_at: None,
                pinned: false,
                tags: Vec::new(),
            })
            .collect()));
        let (rows, _) = screen(&mut chat, 50, 14);
        assert!(
            rows[1].contains("chats · Enter: open · Esc: close"),
            "{rows:#?}"
        );
        assert!(rows[2].contains("› Sky"), "{rows:#?}");
        chat.on_key(key(KeyCode::Down));
        let (rows, buffer) = screen(&mut chat, 50, 14);
        assert!(
            rows[3].contains("› Sea") && !rows[2].contains('›'),
            "{rows:#?}"
        );
        assert!(buffer[(6, 3)]
            .style()
            .add_modifier
            .contains(Modifier::REVERSED));
        chat.on_key(key(KeyCode::Esc));
        let (rows, _) = screen(&mut chat, 50, 14);
        assert!(!shows(&rows, "Sea"), "{rows:#?}");
    }

    #[test]
    fn a_stopped_block_freezes_its_time() {
        let mut chat = chat(false);
        let (_, tx) = ask(&mut chat, "stop me");
        feed(&mut chat, &tx, events(thinking("half a thought")));
        let earlier = |chat: &mut Chat, secs| {
            chat.started = chat
                .started
                .checked_sub(std::time::Duration::from_secs(secs))
                .expect("a clock");
        };
        earlier(&mut chat, 3);
        chat.on_key(key(KeyCode::Esc));
        let (rows, _) = screen(&mut chat, 70, 12);
        assert!(shows(&rows, "■ stopped"), "{rows:#?}");
        let header = rows
            .iter()
            .find(|r| r.contains("Thinking stopped after 3.0s"))
            .cloned()
            .unwrap_or_else(|| panic!("the interrupted block is marked: {rows:#?}"));
        earlier(&mut chat, 5);
        let (later, _) = screen(&mut chat, 70, 12);
        assert!(later.contains(&header), "{later:#?}");
    }

    #[test]
    fn a_redraw_lays_out_only_the_running_turn_and_an_idle_one_nothing() {
        let mut chat = chat(true);
        let (_, tx) = ask(&mut chat, "q");
        feed(
            &mut chat,
            &tx,
            events(vec![
                TurnEvent::Delta {
                    text: "done".into(),
                },
                done(),
            ]),
        );
        let (_, tx) = ask(&mut chat, "and then?");
        feed(&mut chat, &tx, events(thinking("hmm")));
        screen(&mut chat, 60, 12);
        let first = chat.layout.counts;
        screen(&mut chat, 60, 12);
        let second = chat.layout.counts;
        assert_eq!(second.laid, first.laid, "the finished items are kept");
        assert_eq!(
            second.live,
            first.live + 1,
            "the running turn is laid out again"
        );
        feed(&mut chat, &tx, events(vec![done()]));
        screen(&mut chat, 60, 12);
        let idle = chat.layout.counts;
        screen(&mut chat, 60, 12);
        assert_eq!(chat.layout.counts.laid, idle.laid);
        assert_eq!(chat.layout.counts.live, idle.live);
    }

    #[test]
    fn the_files_waiting_for_the_next_message_are_on_the_status_line() {
        let mut chat = chat(true);
        let file = |name: &str, kind| crate::domain::attachment::FileRef {
            id: name.into(),
            name: name.into(),
            kind,
            size: 900,
            pixels: None,
            pages: None,
            sent_as: None,
        };
        use crate::domain::attachment::{Kind, SendAs};
        chat.attached.push((file("notes.md", Kind::Text), None));
        chat.attached
            .push((file("paper.pdf", Kind::Pdf), Some(SendAs::Text)));
        let (rows, _) = screen(&mut chat, 160, 12);
        assert!(
            rows[8].starts_with(
                "files: notes.md · 900 bytes · Text, paper.pdf · 900 bytes · PDF → As its text \
                 (/detach drops them) · overview"
            ),
            "{:?}",
            rows[8]
        );
    }
}
