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
                .map(|c| ListItem::new(text::fit_start(&text::sanitize(&c.title), cols)))
                .collect();
            frame.render_widget(Clear, popup);
            frame.render_stateful_widget(
                List::new(items)
                    .block(
                        Block::default()
                            .borders(Borders::ALL)
                            .title(" chats · Enter: open · Esc: close "),
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
