//! `ponder chat`: the full-screen shell. It owns the terminal (raw mode and the alternate
//! screen, restored on every exit, a panic included), reads keys on a thread of their own, runs
//! each turn as a task ([`super::follow`]), and paints while a turn runs about four times a
//! second, laying out again only the running turn ([`super::transcript::Layout`]).
//!
//! What a key or a turn's progress does to the chat is decided without I/O ([`Chat::on_key`],
//! [`Chat::on_progress`]); what needs the server comes back as [`Effect`]s, which
//! [`Chat::apply`] carries out. So keys and drawing are tested in-process.

use super::error::ClientError;
use crate::i18n::errors::Said;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::widgets::ListState;
use tokio::sync::mpsc;

use super::attach;
use super::client::Server;
use super::follow::{self, Progress, Source};
use super::settings;
use super::transcript::{Layout, Transcript};
use super::view::{self, Item, Mode, Turn};
use crate::client::turn_state::TurnState;
use crate::domain::attachment::{FileRef, SendAs};
use crate::domain::history::{Conversation, ConversationSummary};
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

/// A task that ends when this is dropped: dropping a turn's task closes its connection.
#[derive(Debug, Default)]
struct Task(Option<tokio::task::JoinHandle<()>>);

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// The turn being followed.
#[derive(Debug)]
pub struct Running {
    task: Task,
    progress: mpsc::UnboundedReceiver<Progress>,
    /// The turn's id on the server, once its `started` event arrived.
    turn: Option<String>,
    /// Stop was pressed before the id arrived: the turn is stopped as soon as it does.
    stop_when_started: bool,
}

pub(super) struct Picker {
    pub(super) list: Vec<ConversationSummary>,
    pub(super) state: ListState,
}

/// What the chat asks of the server, decided by a key or a turn's progress.
#[derive(Debug)]
pub enum Effect {
    /// Follow a turn, reporting on the channel of the [`Running`] already set.
    Follow(Source, mpsc::UnboundedSender<Progress>),
    /// Stop the server's turn (for every viewer of it).
    StopOnServer(String),
    /// Another chat is shown while a Stop waits for the turn's id: deliver it when it comes.
    StopWhenStarted(Running),
    /// List the stored chats for the picker.
    ListChats,
    /// Open a stored conversation (and follow its answer if it still streams).
    Open(String),
    /// Upload a file to go with the next message, the way the reader asked (if any).
    Attach(std::path::PathBuf, Option<SendAs>),
    /// Make, list or revoke a link to the conversation `0`.
    Share(String, super::share::Command),
}

/// The chat shown: its transcript, the input line, the turn being followed.
pub struct Chat {
    pub(super) server: Server,
    pub(super) stored: bool,
    pub(super) transcript: Transcript,
    pub(super) layout: Layout,
    pub(super) mode: Mode,
    config: Option<std::path::PathBuf>,
    pub(super) input: Vec<char>,
    pub(super) cursor: usize,
    pub(super) back: usize,
    /// Lines the transcript had when last drawn.
    pub(super) drawn: usize,
    pub(super) running: Option<Running>,
    pub(super) conversation: Option<String>,
    /// The stored answer of the last turn, for Ctrl-R on the server.
    last_answer: Option<String>,
    pub(super) status: String,
    /// Files uploaded to go with the next message (`/attach`), each with the way the reader
    /// asked it to go (`--as`), if any.
    pub(super) attached: Vec<(FileRef, Option<SendAs>)>,
    /// The chat's links as `/shares` last listed them (what `/unshare N` counts in).
    links: Vec<crate::domain::share::ShareLink>,
    /// The running turn's stream broke and it is being joined again.
    pub(super) reconnecting: bool,
    pub(super) quit_armed: Option<Instant>,
    pub(super) picker: Option<Picker>,
    pub(super) started: Instant,
    pub(super) quit: bool,
}

/// The history sent upstream, by the page's rule ([`crate::domain::message::history`]): failed
/// and unfinished answers are left out, turns of one role joined.
fn history_of<'a>(items: impl Iterator<Item = &'a Item>) -> Vec<ChatMessage> {
    use crate::client::decisions::{history, Said};
    history(items.filter_map(|i| match i {
        Item::User(t, _) => Some(Said::User(t, &[])),
        Item::Assistant(t) => Some(Said::Assistant {
            phase: t.state.phase,
            answer: &t.state.answer,
        }),
        Item::Notice(_) => None,
    }))
}

/// Runs `ponder chat` until the reader quits.
pub async fn run(options: Options) -> Result<(), ClientError> {
    let (server, in_process) = super::local::find(options.server.as_deref(), options.token).await?;
    let me = server.me().await?;
    if me.account.is_none() {
        return Err(ClientError::Refused(
            crate::domain::Failure::of(crate::domain::ErrorCode::SignInRequired, false)
                .with(
                    "detail",
                    format!(
                        "{}: make a token in the account panel and pass --token (or PONDER_TOKEN)",
                        server.base()
                    ),
                )
                .said(),
        ));
    }
    let greeting = if in_process {
        "the built-in Ponder (demo model unless PONDER_UPSTREAM_URL is set)"
    } else {
        ""
    };
    let mut chat = Chat::new(server, me.history == "server", settings::path(), greeting);
    if let Some(id) = options.conversation {
        chat.apply(vec![Effect::Open(id)]).await;
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

    let mut terminal =
        ratatui::try_init().map_err(|e| ClientError::Terminal(format!("the terminal: {e}")))?;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut dirty = true;
    let now = tokio::time::Instant::now();
    let mut drawn_at = now.checked_sub(FRAME).unwrap_or(now);
    let mut trace = super::trace::FrameTrace::from_env(now);
    let result = loop {
        // A stream's pieces arrive faster than a screen shows them: while a turn runs, at most
        // one frame every FRAME, with all that arrived in between.
        let due = !chat.is_running() || drawn_at.elapsed() >= FRAME;
        if dirty && due {
            dirty = false;
            drawn_at = tokio::time::Instant::now();
            if let Err(e) = terminal.draw(|f| chat.draw(f)) {
                break Err(ClientError::Terminal(format!("the terminal: {e}")));
            }
            trace.note('f');
        }
        if chat.quit {
            break Ok(());
        }
        tokio::select! {
            _ = tokio::time::sleep_until(drawn_at + FRAME), if dirty => {},
            key = keys.recv() => {
                match key {
                    Some(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                        let effects = chat.on_key(k);
                        chat.apply(effects).await;
                    }
                    Some(_) => {}
                    None => break Ok(()),
                }
                dirty = true;
            },
            Some(progress) = chat.next_progress() => {
                trace.note('e');
                let effects = chat.on_progress(progress);
                chat.apply(effects).await;
                dirty = true;
            },
            // Only a running turn changes with time (its clock, its live line).
            _ = tick.tick() => dirty = chat.is_running(),
        }
    };
    ratatui::restore();
    trace.write();
    result
}

/// The shortest time between two frames while a turn runs (30 a second at most: a terminal
/// redraw costs the client about half a millisecond, and the stream comes in hundreds of pieces
/// a second).
const FRAME: Duration = Duration::from_millis(33);

impl Chat {
    /// A chat on `server` (`stored`: it keeps conversations), in the mode kept in `config`,
    /// with `status` on the status line.
    pub fn new(
        server: Server,
        stored: bool,
        config: Option<std::path::PathBuf>,
        status: &str,
    ) -> Chat {
        let (mode, note) = settings::load_mode(config.as_deref());
        Chat {
            server,
            stored,
            transcript: Transcript::default(),
            layout: Layout::default(),
            mode,
            config,
            input: Vec::new(),
            cursor: 0,
            back: 0,
            drawn: 0,
            running: None,
            conversation: None,
            last_answer: None,
            status: note.unwrap_or_else(|| status.to_string()),
            attached: Vec::new(),
            links: Vec::new(),
            reconnecting: false,
            quit_armed: None,
            picker: None,
            started: Instant::now(),
            quit: false,
        }
    }

    /// True once the reader asked to quit.
    pub fn quits(&self) -> bool {
        self.quit
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// The next progress of the running turn; pending while none runs.
    pub async fn next_progress(&mut self) -> Option<Progress> {
        match &mut self.running {
            Some(r) => r.progress.recv().await,
            None => std::future::pending().await,
        }
    }

    pub(super) fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    pub(super) fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        if let Some(path) = &self.config {
            if let Err(e) = settings::save_mode(path, mode) {
                self.status = say(words().mode_not_kept, &e);
            }
        }
    }

    /// Carries out `effects`, and what they lead to.
    pub async fn apply(&mut self, effects: Vec<Effect>) {
        let mut queue = VecDeque::from(effects);
        while let Some(effect) = queue.pop_front() {
            match effect {
                Effect::Follow(source, tx) => {
                    let server = self.server.clone();
                    let task =
                        tokio::spawn(
                            async move { follow::follow(&server, source, GUARD, tx).await },
                        );
                    if let Some(running) = &mut self.running {
                        running.task = Task(Some(task));
                    } else {
                        task.abort();
                    }
                }
                Effect::StopOnServer(id) => {
                    let server = self.server.clone();
                    tokio::spawn(async move { stop_on_server(&server, &id).await });
                }
                Effect::StopWhenStarted(running) => {
                    let server = self.server.clone();
                    tokio::spawn(stop_when_started(server, running));
                }
                Effect::ListChats => {
                    let listed = self.server.conversations().await;
                    self.show_chats(listed);
                }
                Effect::Open(id) => {
                    let opened = self.server.conversation(&id, 200).await;
                    queue.extend(self.opened(opened));
                }
                Effect::Attach(path, asked) => {
                    let uploaded = self.server.upload(&path).await;
                    self.attached_file(uploaded, asked);
                }
                Effect::Share(conversation, command) => {
                    self.shared(&conversation, command).await;
                }
            }
        }
    }

    /// Shows the stored chats in the picker (or says why not).
    pub(super) fn show_chats(&mut self, listed: Result<Vec<ConversationSummary>, ClientError>) {
        match listed {
            Ok(list) if list.is_empty() => self.status = words().no_chats.into(),
            Ok(list) => {
                let mut state = ListState::default();
                state.select(Some(0));
                self.picker = Some(Picker { list, state });
            }
            Err(e) => self.status = say(words().chats_not_listed, &e),
        }
    }

    /// Replays a stored conversation (its last 200 messages); an answer still streaming is
    /// followed live, from its first event.
    pub(super) fn opened(&mut self, opened: Result<Conversation, ClientError>) -> Vec<Effect> {
        let conversation = match opened {
            Ok(conversation) => conversation,
            Err(e) => {
                self.status = say(words().chat_not_opened, &e);
                return Vec::new();
            }
        };
        let mut items = view::replay(&conversation);
        let title = crate::i18n::title(super::locale().catalogue(), &conversation.title);
        items.insert(0, Item::Notice(format!("“{title}”")));
        self.transcript.replace(items);
        self.conversation = Some(conversation.id.clone());
        self.links.clear();
        let last = conversation
            .messages
            .last()
            .filter(|m| m.role == crate::domain::Role::Assistant);
        self.last_answer = last.map(|m| m.id.clone());
        self.back = 0;
        self.status = String::new();
        match last.and_then(|m| m.shown()).and_then(|v| v.turn.clone()) {
            Some(turn) => self.join(turn),
            None => Vec::new(),
        }
    }

    pub(super) fn send(&mut self) -> Vec<Effect> {
        let question: String = self.input.iter().collect();
        if let Some(command) = attach::command(&question) {
            self.input.clear();
            self.cursor = 0;
            return self.run_command(command);
        }
        if let Some(command) = super::share::command(&question) {
            self.input.clear();
            self.cursor = 0;
            return self.share(command);
        }
        if self.is_running() || (question.trim().is_empty() && self.attached.is_empty()) {
            return Vec::new();
        }
        self.input.clear();
        self.cursor = 0;
        let (files, asked): (Vec<FileRef>, Vec<Option<SendAs>>) =
            std::mem::take(&mut self.attached).into_iter().unzip();
        let send_as = files
            .iter()
            .zip(asked)
            .filter_map(|(f, way)| Some((f.id.clone(), way?)))
            .collect();
        self.transcript
            .push(Item::User(question.clone(), files.clone()));
        let request = if self.stored {
            ChatRequest {
                conversation: self.conversation.clone(),
                content: Some(question),
                attachments: files.into_iter().map(|f| f.id).collect(),
                send_as,
                ..ChatRequest::stateless(Vec::new())
            }
        } else {
            ChatRequest::stateless(history_of(self.transcript.items()))
        };
        self.start(request)
    }

    fn run_command(&mut self, command: attach::Command) -> Vec<Effect> {
        match command {
            attach::Command::Attach(..) if !self.stored => {
                self.status = words().files_need_server.into();
                Vec::new()
            }
            attach::Command::Attach(path, asked) => vec![Effect::Attach(path, asked)],
            attach::Command::UnknownWay(way) => {
                self.status = crate::i18n::fill(
                    words().file_way_unknown,
                    &[("way", &way), ("ways", attach::WAYS)],
                );
                Vec::new()
            }
            attach::Command::Detach => {
                self.attached.clear();
                self.status = words().files_dropped.into();
                Vec::new()
            }
        }
    }

    /// What a `/share`, `/shares` or `/unshare` asks of the server, if anything: a chat kept on
    /// the server is needed, with a message in it.
    fn share(&mut self, command: super::share::Command) -> Vec<Effect> {
        use super::share::{Command, USAGE};
        let conversation = match (&self.conversation, self.stored) {
            (Some(id), true) => id.clone(),
            (_, false) => {
                self.status = words().share_needs_server.into();
                return Vec::new();
            }
            (None, true) => {
                self.status = words().share_nothing_yet.into();
                return Vec::new();
            }
        };
        match command {
            Command::Usage => {
                self.status = USAGE.into();
                Vec::new()
            }
            Command::Revoke(n) if n > self.links.len() => {
                self.status = crate::i18n::fill(words().no_such_link, &[("n", &n.to_string())]);
                Vec::new()
            }
            command => vec![Effect::Share(conversation, command)],
        }
    }

    /// Carries out a link command on the server and shows what came of it.
    async fn shared(&mut self, conversation: &str, command: super::share::Command) {
        use super::share::{listed, Command};
        let t = super::locale().catalogue();
        match command {
            Command::Make(choice) => match self.server.create_share(conversation, choice).await {
                Ok(link) => {
                    let url = link.url.unwrap_or_default();
                    self.transcript
                        .push(Item::Notice(format!("{url}\n{}", t.link_shown_once)));
                    self.status = t.link_shown_once.into();
                }
                Err(e) => self.status = say(words().share_failed, &e),
            },
            Command::Revoke(n) => {
                let Some(link) = self.links.get(n - 1).cloned() else {
                    return;
                };
                match self.server.revoke_share(&link.id).await {
                    Ok(()) => {
                        self.links.remove(n - 1);
                        self.status = t.link_revoked.into();
                    }
                    Err(e) => self.status = say(words().share_failed, &e),
                }
            }
            Command::List | Command::Usage => match self.server.list_shares(conversation).await {
                Ok(links) => {
                    let mut lines = vec![t.links_of_chat.to_string()];
                    if links.is_empty() {
                        lines.push(t.no_links.into());
                    }
                    let locale = super::locale();
                    lines.extend(
                        links
                            .iter()
                            .enumerate()
                            .map(|(i, l)| listed(i + 1, l, locale)),
                    );
                    self.transcript.push(Item::Notice(lines.join("\n")));
                    self.links = links;
                }
                Err(e) => self.status = say(words().share_failed, &e),
            },
        }
    }

    /// What came of an `/attach`: the file waits for the next message, or the status line
    /// says why it does not.
    pub(super) fn attached_file(
        &mut self,
        uploaded: Result<FileRef, ClientError>,
        asked: Option<SendAs>,
    ) {
        self.status = match uploaded {
            Ok(file) => {
                let chip = attach::waiting_chip(&file, asked);
                let said = crate::i18n::fill(words().file_attached, &[("file", &chip)]);
                self.attached.push((file, asked));
                said
            }
            Err(ClientError::Refused(failure)) => say(
                words().file_not_attached,
                &crate::client::labels::failure_text(&failure, super::locale()),
            ),
            Err(e) => say(words().file_not_attached, &e),
        };
    }

    /// Answers the last question again: a new version on the server, else the same history.
    pub(super) fn retry(&mut self) -> Vec<Effect> {
        if self.is_running() || !matches!(self.transcript.last(), Some(Item::Assistant(_))) {
            return Vec::new();
        }
        let request = match (&self.conversation, &self.last_answer, self.stored) {
            (Some(conversation), Some(answer), true) => ChatRequest {
                conversation: Some(conversation.clone()),
                regenerate: Some(answer.clone()),
                ..ChatRequest::stateless(Vec::new())
            },
            _ => {
                self.transcript.pop();
                ChatRequest::stateless(history_of(self.transcript.items()))
            }
        };
        if matches!(self.transcript.last(), Some(Item::Assistant(_))) {
            self.transcript.pop();
        }
        self.start(request)
    }

    fn start(&mut self, request: ChatRequest) -> Vec<Effect> {
        self.transcript.push(Item::Assistant(Box::new(Turn {
            state: TurnState::started(self.now()),
            bytes: 0,
        })));
        self.back = 0;
        self.status = String::new();
        vec![self.follow(Source::Send(Box::new(request)), None)]
    }

    /// Follows the running turn `turn` that writes the last answer shown.
    fn join(&mut self, turn: String) -> Vec<Effect> {
        let now = self.now();
        let Some(Item::Assistant(shown)) = self.transcript.last_mut() else {
            return Vec::new();
        };
        shown.state = TurnState::joined(&shown.state, now);
        shown.bytes = 0;
        vec![self.follow(Source::Join(turn.clone()), Some(turn))]
    }

    fn follow(&mut self, source: Source, turn: Option<String>) -> Effect {
        let (tx, progress) = mpsc::unbounded_channel();
        self.reconnecting = false;
        self.running = Some(Running {
            task: Task::default(),
            progress,
            turn,
            stop_when_started: false,
        });
        Effect::Follow(source, tx)
    }

    /// Ends the running turn. A stored turn runs on the server whether or not anyone watches, so
    /// it is stopped there (for every viewer); one stored nowhere ends when its connection
    /// closes.
    pub(super) fn stop(&mut self) -> Vec<Effect> {
        if self.running.is_none() {
            return Vec::new();
        }
        let now = self.now();
        if let Some(turn) = self.transcript.turn_mut() {
            turn.state.stop(now);
        }
        let Some(running) = self.running.as_mut() else {
            return Vec::new();
        };
        let effects = match running.turn.clone() {
            Some(id) if self.stored => vec![Effect::StopOnServer(id)],
            None if self.stored => {
                // Pressed again before the id came: the first press is already waiting for it.
                running.stop_when_started = true;
                return Vec::new();
            }
            _ => Vec::new(),
        };
        self.running = None;
        self.reconnecting = false;
        effects
    }

    /// The client stops following the running turn (another chat is shown): a stored turn goes
    /// on on the server, as it does when a browser tab moves on, and a Stop still waiting for
    /// the turn's id is delivered once it comes; one stored nowhere ends with its connection.
    pub(super) fn detach(&mut self) -> Vec<Effect> {
        self.reconnecting = false;
        match self.running.take() {
            Some(running) if running.stop_when_started => {
                vec![Effect::StopWhenStarted(running)]
            }
            _ => Vec::new(),
        }
    }

    /// Starts a new chat.
    pub(super) fn new_chat(&mut self) -> Vec<Effect> {
        let effects = self.detach();
        self.transcript.clear();
        self.conversation = None;
        self.links.clear();
        self.last_answer = None;
        self.back = 0;
        self.status = words().new_chat.into();
        effects
    }

    /// Folds what the running turn reports into the chat.
    pub fn on_progress(&mut self, progress: Progress) -> Vec<Effect> {
        let now = self.now();
        let mut ended = false;
        let mut stored = None;
        let mut sent = Vec::new();
        let mut started = None;
        match progress {
            Progress::Lost => {
                self.reconnecting = true;
                return Vec::new();
            }
            Progress::Back => {
                self.reconnecting = false;
                return Vec::new();
            }
            Progress::Gone => {
                // The turn ended while the client was away: the stored conversation holds it.
                self.running = None;
                self.reconnecting = false;
                return match self.conversation.clone() {
                    Some(id) => vec![Effect::Open(id)],
                    None => {
                        if let Some(turn) = self.transcript.turn_mut() {
                            turn.state.end_of_stream(now);
                        }
                        Vec::new()
                    }
                };
            }
            _ => {}
        }
        if let Some(turn) = self.transcript.turn_mut() {
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
                            sent_as,
                            ..
                        } = e
                        {
                            stored = Some((conversation.clone(), message.clone()));
                            sent = sent_as.clone();
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
                Progress::Lost | Progress::Back | Progress::Gone => {}
            }
        }
        if !sent.is_empty() {
            if let Some(files) = self.transcript.question_files_mut() {
                for (f, how) in files.iter_mut().zip(sent) {
                    f.sent_as = Some(how);
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
                self.running = None;
                return vec![Effect::StopOnServer(id)];
            }
        }
        if ended {
            self.running = None;
            self.reconnecting = false;
        }
        Vec::new()
    }
}

async fn stop_on_server(server: &Server, id: &str) {
    if let Err(e) = server.stop_turn(id).await {
        tracing::debug!(error = %e, "the turn could not be stopped on the server");
    }
}

/// Waits for the turn's id in `running`'s progress, then stops it on the server.
async fn stop_when_started(server: Server, running: Running) {
    let Running {
        task, mut progress, ..
    } = running;
    while let Some(progress) = progress.recv().await {
        let Progress::Events(events) = progress else {
            continue;
        };
        let started = events.iter().find_map(|e| match e {
            TurnEvent::Started { turn } => Some(turn.clone()),
            _ => None,
        });
        if let Some(id) = started {
            stop_on_server(&server, &id).await;
            break;
        }
    }
    drop(task);
}

/// Reads the arguments after `chat`.
pub fn parse(args: &[String]) -> Result<Options, ClientError> {
    let mut options = Options {
        token: std::env::var("PONDER_TOKEN").ok(),
        server: std::env::var("PONDER_SERVER").ok(),
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let value = it
            .next()
            .cloned()
            .ok_or(ClientError::Usage(super::ask::USAGE.into()));
        match arg.as_str() {
            "--server" => options.server = Some(value?),
            "--token" => options.token = Some(value?),
            "--conversation" => options.conversation = Some(value?),
            _ => return Err(ClientError::Usage(super::ask::USAGE.into())),
        }
    }
    Ok(options)
}

/// The terminal's own words in its language.
pub(super) fn words() -> &'static crate::i18n::TerminalWords {
    &super::locale().catalogue().terminal
}

/// A status line with what failed in it.
fn say(template: &str, detail: &impl std::fmt::Display) -> String {
    crate::i18n::fill(template, &[("detail", &detail.to_string())])
}

/// What the in-process tests of keys and drawing share: a chat on a server that is never
/// called (the effects that would call it are returned, not carried out), and a turn's
/// progress fed through the channel the chat reads.
#[cfg(test)]
pub(super) mod testing {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    pub fn chat(stored: bool) -> Chat {
        let server = Server::new("http://127.0.0.1:9", None).expect("a client");
        Chat::new(server, stored, None, "")
    }

    pub fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    pub fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    pub fn type_text(chat: &mut Chat, text: &str) {
        for c in text.chars() {
            assert!(chat.on_key(key(KeyCode::Char(c))).is_empty());
        }
    }

    /// Types `question` and sends it: the request and the channel its progress goes on.
    pub fn ask(chat: &mut Chat, question: &str) -> (Source, mpsc::UnboundedSender<Progress>) {
        type_text(chat, question);
        let mut effects = chat.on_key(key(KeyCode::Enter));
        match (effects.pop(), effects.is_empty()) {
            (Some(Effect::Follow(source, tx)), true) => (source, tx),
            other => panic!("Enter follows one turn: {other:?}"),
        }
    }

    /// Feeds `progress` to the chat as the running turn would: what it decides is returned.
    pub fn feed(
        chat: &mut Chat,
        tx: &mpsc::UnboundedSender<Progress>,
        progress: Progress,
    ) -> Vec<Effect> {
        tx.send(progress).expect("the chat follows the turn");
        let mut effects = Vec::new();
        while let Some(p) = chat
            .running
            .as_mut()
            .and_then(|r| r.progress.try_recv().ok())
        {
            effects.extend(chat.on_progress(p));
        }
        effects
    }

    pub fn events(events: Vec<TurnEvent>) -> Progress {
        Progress::Events(events)
    }

    pub fn done() -> TurnEvent {
        TurnEvent::Done {
            finish_reason: "stop".into(),
            usage: None,
            thinking_chars: 0,
            total_ms: 2,
        }
    }

    pub fn started(id: &str) -> TurnEvent {
        TurnEvent::Started { turn: id.into() }
    }

    pub fn stored_as(conversation: &str, message: &str) -> TurnEvent {
        TurnEvent::Turn {
            conversation: conversation.into(),
            user_message: Some(format!("{message}-q")),
            message: message.into(),
            version: 0,
            sent_as: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_name_the_server_the_token_and_the_chat_to_open() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let options = parse(&args(&["--server", "http://h:1", "--conversation", "c1"]))
            .expect("valid arguments");
        assert_eq!(options.server.as_deref(), Some("http://h:1"));
        assert_eq!(options.conversation.as_deref(), Some("c1"));
        assert!(
            parse(&args(&["--conversation"])).is_err(),
            "a flag needs its value"
        );
        assert!(parse(&args(&["--loud"])).is_err());
    }
}
