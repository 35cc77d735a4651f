//! `ponder chat`: the full-screen shell. It owns the terminal (raw mode and the alternate
//! screen, restored on every exit, a panic included), reads keys on a thread of their own, runs
//! each turn as a task, and paints [`view::lines`] about four times a second while a turn runs.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Position};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph};
use ratatui::Frame;
use tokio::sync::mpsc;

use super::client::{Progress, Server};
use super::markdown::{StyledLine, Tone};
use super::view::{self, Item, Mode, Turn};
use super::{settings, text};
use crate::client::turn_state::TurnState;
use crate::domain::history::ConversationSummary;
use crate::domain::{ChatMessage, ChatRequest, TurnEvent};

/// Seconds with no event before a turn gives up, as in the browser.
const GUARD: Duration = Duration::from_secs(120);

/// Options of `ponder chat`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub server: Option<String>,
    pub token: Option<String>,
    pub conversation: Option<String>,
}

struct Running {
    task: tokio::task::JoinHandle<()>,
    progress: mpsc::UnboundedReceiver<Progress>,
    /// The turn's id on the server, once its `started` event arrived.
    turn: Option<String>,
    /// Stop was pressed before the id arrived: the turn is stopped as soon as it does.
    stop_when_started: bool,
}

struct Picker {
    list: Vec<ConversationSummary>,
    state: ListState,
}

struct Chat {
    server: Server,
    stored: bool,
    items: Vec<Item>,
    mode: Mode,
    config: Option<std::path::PathBuf>,
    input: Vec<char>,
    cursor: usize,
    back: usize,
    /// Lines the transcript had when last drawn.
    drawn: usize,
    running: Option<Running>,
    conversation: Option<String>,
    /// The stored answer of the last turn, for Ctrl-R on the server.
    last_answer: Option<String>,
    status: String,
    quit_armed: Option<Instant>,
    picker: Option<Picker>,
    started: Instant,
    quit: bool,
}

/// The history sent upstream, by the page's rule ([`crate::domain::message::history`]): failed
/// and unfinished answers are left out, turns of one role joined.
fn history_of(items: &[Item]) -> Vec<ChatMessage> {
    use crate::client::decisions::{history, Said};
    history(items.iter().filter_map(|i| match i {
        Item::User(t) => Some(Said::User(t)),
        Item::Assistant(t) => Some(Said::Assistant {
            phase: t.state.phase,
            answer: &t.state.answer,
        }),
        Item::Notice(_) => None,
    }))
}

fn now(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Runs `ponder chat` until the reader quits.
pub async fn run(options: Options) -> Result<(), String> {
    let (server, in_process) = super::local::find(options.server.as_deref(), options.token).await?;
    let me = server.me().await?;
    if me.account.is_none() {
        return Err(format!(
            "{} needs sign-in: make a token in the account panel and pass --token (or PONDER_TOKEN)",
            server.base()
        ));
    }
    let config = settings::path();
    let (mode, note) = settings::load_mode(config.as_deref());
    let mut chat = Chat {
        stored: me.history == "server",
        server,
        items: Vec::new(),
        mode,
        config,
        input: Vec::new(),
        cursor: 0,
        back: 0,
        drawn: 0,
        running: None,
        conversation: None,
        last_answer: None,
        status: note.unwrap_or_else(|| {
            if in_process {
                "the built-in Ponder (demo model unless PONDER_UPSTREAM_URL is set)".into()
            } else {
                String::new()
            }
        }),
        quit_armed: None,
        picker: None,
        started: Instant::now(),
        quit: false,
    };
    if let Some(id) = options.conversation {
        chat.open(&id).await;
    }

    let (keys_tx, mut keys) = mpsc::unbounded_channel();
    std::thread::spawn(move || loop {
        match event::read() {
            Ok(e) => {
                if keys_tx.send(e).is_err() {
                    return;
                }
            }
            Err(_) => return,
        }
    });

    let mut terminal = ratatui::try_init().map_err(|e| format!("the terminal: {e}"))?;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let result = loop {
        if let Err(e) = terminal.draw(|f| chat.draw(f)) {
            break Err(format!("the terminal: {e}"));
        }
        if chat.quit {
            break Ok(());
        }
        tokio::select! {
            key = keys.recv() => match key {
                Some(Event::Key(k)) if k.kind != KeyEventKind::Release => chat.on_key(k).await,
                Some(_) => {}
                None => break Ok(()),
            },
            Some(progress) = next_progress(&mut chat.running) => chat.on_progress(progress),
            _ = tick.tick() => {}
        }
    };
    ratatui::restore();
    result
}

async fn next_progress(running: &mut Option<Running>) -> Option<Progress> {
    match running {
        Some(r) => r.progress.recv().await,
        None => std::future::pending().await,
    }
}

impl Chat {
    fn now(&self) -> f64 {
        now(self.started)
    }

    fn turn_mut(&mut self) -> Option<&mut Turn> {
        self.items.iter_mut().rev().find_map(|i| match i {
            Item::Assistant(t) => Some(&mut **t),
            _ => None,
        })
    }

    fn is_running(&self) -> bool {
        self.running.is_some()
    }

    fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        if let Some(path) = &self.config {
            if let Err(e) = settings::save_mode(path, mode) {
                self.status = say(words().mode_not_kept, &e);
            }
        }
    }

    async fn on_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            if self
                .quit_armed
                .is_some_and(|t| t.elapsed() < Duration::from_secs(3))
            {
                self.quit = true;
                return;
            }
            self.stop();
            self.quit_armed = Some(Instant::now());
            self.status = words().quit_again.into();
            return;
        }
        self.quit_armed = None;
        if self.picker.is_some() {
            return self.on_picker_key(key).await;
        }
        match (key.code, ctrl) {
            (KeyCode::Esc, _) => {
                if self.is_running() {
                    self.stop();
                } else {
                    self.input.clear();
                    self.cursor = 0;
                }
            }
            (KeyCode::Enter, _) => self.send(),
            (KeyCode::Tab, _) | (KeyCode::Char('o'), true) => {
                let mode = self.mode.toggled();
                self.set_mode(mode);
                self.status = format!("{} mode", mode.key());
            }
            (KeyCode::Char('r'), true) => self.retry(),
            (KeyCode::Char('n'), true) => {
                self.detach();
                self.items.clear();
                self.conversation = None;
                self.last_answer = None;
                self.back = 0;
                self.status = words().new_chat.into();
            }
            (KeyCode::Char('p'), true) => self.open_picker().await,
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
    }

    async fn on_picker_key(&mut self, key: KeyEvent) {
        let Some(picker) = &mut self.picker else {
            return;
        };
        let count = picker.list.len();
        match key.code {
            KeyCode::Esc => self.picker = None,
            KeyCode::Up => {
                let at = picker.state.selected().unwrap_or(0);
                picker.state.select(Some(at.saturating_sub(1)));
            }
            KeyCode::Down => {
                let at = picker.state.selected().unwrap_or(0);
                picker
                    .state
                    .select(Some((at + 1).min(count.saturating_sub(1))));
            }
            KeyCode::Enter => {
                let chosen = picker
                    .state
                    .selected()
                    .and_then(|i| picker.list.get(i))
                    .map(|c| c.id.clone());
                self.picker = None;
                if let Some(id) = chosen {
                    self.detach();
                    self.open(&id).await;
                }
            }
            _ => {}
        }
    }

    async fn open_picker(&mut self) {
        if !self.stored {
            self.status = words().browser_history.into();
            return;
        }
        match self.server.conversations().await {
            Ok(list) if list.is_empty() => self.status = words().no_chats.into(),
            Ok(list) => {
                let mut state = ListState::default();
                state.select(Some(0));
                self.picker = Some(Picker { list, state });
            }
            Err(e) => self.status = say(words().chats_not_listed, &e),
        }
    }

    /// Replays a stored conversation (its last 200 messages).
    async fn open(&mut self, id: &str) {
        match self.server.conversation(id, 200).await {
            Ok(conversation) => {
                self.items = view::replay(&conversation);
                self.items
                    .insert(0, Item::Notice(format!("“{}”", conversation.title)));
                self.conversation = Some(conversation.id.clone());
                let last = conversation
                    .messages
                    .last()
                    .filter(|m| m.role == crate::domain::Role::Assistant);
                self.last_answer = last.map(|m| m.id.clone());
                self.back = 0;
                self.status = String::new();
                // An answer still streaming is followed live, from its first event.
                if let Some(turn) = last.and_then(|m| m.shown()).and_then(|v| v.turn.clone()) {
                    self.join(turn);
                }
            }
            Err(e) => self.status = say(words().chat_not_opened, &e),
        }
    }

    /// The history sent upstream, by the page's rule ([`crate::domain::message::history`]):
    /// failed and unfinished answers are left out, turns of one role joined.
    fn history(&self) -> Vec<ChatMessage> {
        history_of(&self.items)
    }

    fn send(&mut self) {
        let question: String = self.input.iter().collect();
        if self.is_running() || question.trim().is_empty() {
            return;
        }
        self.input.clear();
        self.cursor = 0;
        self.items.push(Item::User(question.clone()));
        let request = if self.stored {
            ChatRequest {
                conversation: self.conversation.clone(),
                content: Some(question),
                ..ChatRequest::stateless(Vec::new())
            }
        } else {
            ChatRequest::stateless(self.history())
        };
        self.start(request);
    }

    /// Answers the last question again: a new version on the server, else the same history.
    fn retry(&mut self) {
        if self.is_running() || !matches!(self.items.last(), Some(Item::Assistant(_))) {
            return;
        }
        let request = match (&self.conversation, &self.last_answer, self.stored) {
            (Some(conversation), Some(answer), true) => ChatRequest {
                conversation: Some(conversation.clone()),
                regenerate: Some(answer.clone()),
                ..ChatRequest::stateless(Vec::new())
            },
            _ => {
                self.items.pop();
                ChatRequest::stateless(self.history())
            }
        };
        if matches!(self.items.last(), Some(Item::Assistant(_))) {
            self.items.pop();
        }
        self.start(request);
    }

    fn start(&mut self, request: ChatRequest) {
        self.items.push(Item::Assistant(Box::new(Turn {
            state: TurnState::started(self.now()),
            bytes: 0,
        })));
        self.back = 0;
        self.status = String::new();
        let (tx, progress) = mpsc::unbounded_channel();
        let server = self.server.clone();
        let task = tokio::spawn(async move { server.stream(&request, GUARD, tx).await });
        self.running = Some(Running {
            task,
            progress,
            turn: None,
            stop_when_started: false,
        });
    }

    /// Follows the running turn `turn` that writes the last answer shown.
    fn join(&mut self, turn: String) {
        let now = self.now();
        let Some(Item::Assistant(shown)) = self.items.last_mut() else {
            return;
        };
        shown.state = TurnState::joined(&shown.state, now);
        shown.bytes = 0;
        let (tx, progress) = mpsc::unbounded_channel();
        let server = self.server.clone();
        let id = turn.clone();
        let task = tokio::spawn(async move { server.join(&id, GUARD, tx).await });
        self.running = Some(Running {
            task,
            progress,
            turn: Some(turn),
            stop_when_started: false,
        });
    }

    /// Ends the running turn. A stored turn runs on the server whether or not anyone watches, so
    /// it is stopped there (for every viewer); one stored nowhere ends when its connection
    /// closes.
    fn stop(&mut self) {
        if self.running.is_none() {
            return;
        }
        let now = self.now();
        if let Some(turn) = self.turn_mut() {
            turn.state.stop(now);
        }
        let Some(running) = self.running.as_mut() else {
            return;
        };
        match running.turn.clone() {
            Some(id) if self.stored => {
                self.stop_on_server(id);
            }
            None if self.stored => {
                // Pressed again before the id came: the first press is already waiting for it.
                running.stop_when_started = true;
                return;
            }
            _ => {}
        }
        if let Some(running) = self.running.take() {
            running.task.abort();
        }
    }

    /// The client stops following the running turn (another chat is shown): a stored turn goes
    /// on on the server, as it does when a browser tab moves on, and a Stop still waiting for
    /// the turn's id is delivered once it comes; one stored nowhere ends with its connection.
    fn detach(&mut self) {
        let Some(running) = self.running.take() else {
            return;
        };
        if !running.stop_when_started {
            running.task.abort();
            return;
        }
        let server = self.server.clone();
        let Running {
            task, mut progress, ..
        } = running;
        tokio::spawn(async move {
            while let Some(progress) = progress.recv().await {
                let Progress::Events(events) = progress else {
                    continue;
                };
                let started = events.iter().find_map(|e| match e {
                    TurnEvent::Started { turn } => Some(turn.clone()),
                    _ => None,
                });
                if let Some(id) = started {
                    if let Err(e) = server.stop_turn(&id).await {
                        tracing::debug!(error = %e, "the turn could not be stopped on the server");
                    }
                    break;
                }
            }
            task.abort();
        });
    }

    fn stop_on_server(&self, id: String) {
        let server = self.server.clone();
        tokio::spawn(async move {
            if let Err(e) = server.stop_turn(&id).await {
                tracing::debug!(error = %e, "the turn could not be stopped on the server");
            }
        });
    }

    fn on_progress(&mut self, progress: Progress) {
        let now = self.now();
        let mut ended = false;
        let mut stored = None;
        let mut started = None;
        if let Some(turn) = self.turn_mut() {
            match progress {
                Progress::Bytes(n) => turn.bytes += n,
                Progress::Events(events) => {
                    for e in &events {
                        if let TurnEvent::Started { turn } = e {
                            started = Some(turn.clone());
                        }
                        if let TurnEvent::Turn {
                            conversation,
                            message,
                            ..
                        } = e
                        {
                            stored = Some((conversation.clone(), message.clone()));
                        }
                        turn.state.apply(e, now);
                        ended |= e.is_terminal();
                    }
                }
                Progress::Ended => {
                    turn.state.end_of_stream(now);
                    ended = true;
                }
                Progress::Failed(failure) => {
                    turn.state.fail(failure, now);
                    ended = true;
                }
            }
        }
        if let Some((conversation, message)) = stored {
            self.conversation = Some(conversation);
            self.last_answer = Some(message);
        }
        if let (Some(id), Some(running)) = (started, self.running.as_mut()) {
            running.turn = Some(id.clone());
            if running.stop_when_started {
                self.stop_on_server(id);
                if let Some(running) = self.running.take() {
                    running.task.abort();
                }
                return;
            }
        }
        if ended {
            self.running = None;
        }
    }

    fn draw(&mut self, frame: &mut Frame) {
        let [transcript, status, input] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(1),
            Constraint::Length(3),
        ])
        .areas(frame.area());
        let width = transcript.width as usize;
        let lines = view::lines(&self.items, self.mode, self.now(), width);
        // Scrolled back, the reader keeps looking at the same lines while new ones arrive.
        if self.back > 0 && lines.len() > self.drawn {
            self.back += lines.len() - self.drawn;
        }
        self.drawn = lines.len();
        let (first, back) = view::window(lines.len(), transcript.height as usize, self.back);
        self.back = back;
        let shown: Vec<Line> = lines
            .iter()
            .skip(first)
            .take(transcript.height as usize)
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

/// Reads the arguments after `chat`.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        token: std::env::var("PONDER_TOKEN").ok(),
        server: std::env::var("PONDER_SERVER").ok(),
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let value = it.next().cloned().ok_or(super::ask::USAGE.to_string());
        match arg.as_str() {
            "--server" => options.server = Some(value?),
            "--token" => options.token = Some(value?),
            "--conversation" => options.conversation = Some(value?),
            _ => return Err(super::ask::USAGE.into()),
        }
    }
    Ok(options)
}

/// The terminal's own words in its language.
fn words() -> &'static crate::i18n::TerminalWords {
    &super::locale().catalogue().terminal
}

/// A status line with what failed in it.
fn say(template: &str, detail: &impl std::fmt::Display) -> String {
    crate::i18n::fill(template, &[("detail", &detail.to_string())])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Failure;

    fn answer(text: &str, failed: bool) -> Item {
        let mut state = TurnState::started(0.0);
        state.apply(&TurnEvent::Delta { text: text.into() }, 1.0);
        if failed {
            state.fail(Failure::new("boom", true), 2.0);
        } else {
            state.apply(
                &TurnEvent::Done {
                    finish_reason: "stop".into(),
                    usage: None,
                    thinking_chars: 0,
                    total_ms: 2,
                },
                2.0,
            );
        }
        Item::Assistant(Box::new(Turn { state, bytes: 0 }))
    }

    #[test]
    fn the_terminal_sends_the_history_by_the_pages_rule() {
        let items = [
            Item::Notice("“a chat”".into()),
            Item::User("one".into()),
            answer("half an answer", true),
            Item::User("two".into()),
            answer("a whole answer", false),
            Item::User("three".into()),
        ];
        assert_eq!(
            history_of(&items),
            [
                ChatMessage::user("one\n\ntwo"),
                ChatMessage::assistant("a whole answer"),
                ChatMessage::user("three"),
            ],
            "the failed answer is not sent, and the questions around it are joined"
        );
    }
}
