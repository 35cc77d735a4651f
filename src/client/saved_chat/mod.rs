//! A chat as this browser saves it, and how a turn becomes a stored answer and back, pure and
//! tested natively.
//!
//! What is saved is the domain's [`Conversation`] (the one model the server, the page and the
//! terminal share), one JSON record under its own key, `ponder.chat.v1.<id>`, written whole, so
//! two tabs working on different conversations never overwrite each other. The record's shape
//! is [`v1`]'s: every record written since v1 still reads, and fields this version does not
//! know are kept and written back untouched.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::labels;
use super::turn_state::{BlockState, BlockStatus, RemoteText, TurnPhase, TurnState};

use crate::domain::history::{
    BlockHeader, Conversation, Import, ImportMessage, ImportVersion, Version, VersionStatus,
};
use crate::domain::{ErrorCode, Failure, Role, ToolStep};
use crate::i18n::{fill, Catalogue, Locale};

/// Prefix of every conversation key.
pub const CHAT_PREFIX: &str = "ponder.chat.v1.";
/// The reader's settings.
pub const SETTINGS_KEY: &str = "ponder.settings.v1";
/// Prefix under which unreadable values are kept aside.
pub const BACKUP_PREFIX: &str = "ponder.backup.";

/// Shown for a turn that was still streaming when the page went away.
pub const INTERRUPTED: &str = "This answer was interrupted before it finished — try again?";

/// The failure of a turn that was still streaming when the page (or its server) went away.
pub fn interrupted() -> Failure {
    Failure::coded(ErrorCode::Interrupted, INTERRUPTED, true)
}

pub mod carried;
mod v1;

/// A conversation as this browser keeps it: the domain's conversation (every version, block
/// headers, the text of the blocks it has), and what its record says beyond it. Saved as the
/// `ponder.chat.v1` record ([`v1`]), which every earlier record still reads as.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "v1::Record", into = "v1::Record")]
pub struct SavedChat {
    pub chat: Conversation,
    /// Fields of the record this version does not know, written back untouched.
    pub extra: Map<String, Value>,
    /// The same for each message, in the order of `chat.messages` (a missing one: none).
    pub message_extra: Vec<Map<String, Value>>,
}

/// What the conversation list shows.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub updated_at: f64,
    /// Kept on top of the list (chats on the server).
    pub pinned: bool,
    /// The reader's tags (chats on the server).
    pub tags: Vec<String>,
}

impl From<crate::domain::history::ConversationSummary> for ConversationSummary {
    fn from(s: crate::domain::history::ConversationSummary) -> Self {
        ConversationSummary {
            id: s.id,
            title: s.title,
            updated_at: s.updated_at as f64,
            pinned: s.pinned,
            tags: s.tags,
        }
    }
}

impl SavedChat {
    /// A conversation with nothing beyond what the domain says of it.
    pub fn of(chat: Conversation) -> SavedChat {
        SavedChat {
            chat,
            extra: Map::new(),
            message_extra: Vec::new(),
        }
    }

    /// The conversation as the server keeps it, as this browser's copy of it: a cache, never a
    /// chat to import.
    pub fn server_copy(chat: Conversation) -> SavedChat {
        let mut saved = SavedChat::of(chat);
        mark_server_copy(&mut saved);
        saved
    }

    /// With each message's unknown fields, in message order (one list however it was built:
    /// what no message has is left off the end).
    pub fn with_message_extra(mut self, mut extras: Vec<Map<String, Value>>) -> SavedChat {
        while extras.last().is_some_and(Map::is_empty) {
            extras.pop();
        }
        self.message_extra = extras;
        self
    }

    pub fn key(&self) -> String {
        key_for(&self.chat.id)
    }

    /// The write count, so a tab can tell that another tab wrote the record since it last read it.
    pub fn rev(&self) -> u64 {
        self.chat.rev.max(0) as u64
    }

    pub fn set_rev(&mut self, rev: u64) {
        self.chat.rev = i64::try_from(rev).unwrap_or(i64::MAX);
    }

    pub fn summary(&self) -> ConversationSummary {
        ConversationSummary {
            id: self.chat.id.clone(),
            title: self.chat.title.clone(),
            updated_at: self.chat.updated_at as f64,
            ..ConversationSummary::default()
        }
    }
}

/// The storage key of a conversation.
pub fn key_for(id: &str) -> String {
    format!("{CHAT_PREFIX}{id}")
}

/// Why a stored value could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable(pub String);

/// Parses a stored conversation, rejecting values that are not this format (foreign data under
/// our key, truncated writes, hand edits). Read from bytes, as every JSON the page reads is
/// (server functions' answers too), so the browser build carries one JSON reader, not two.
pub fn parse_conversation(raw: &str) -> Result<SavedChat, Unreadable> {
    let record: SavedChat =
        serde_json::from_slice(raw.as_bytes()).map_err(|e| Unreadable(e.to_string()))?;
    if record.chat.id.is_empty() {
        return Err(Unreadable("the record has no id".into()));
    }
    Ok(record)
}

/// A title from the first user message: its first line, cut at a word near 60 characters.
/// Never from thinking.
pub fn title_from(first_user_message: &str) -> String {
    let line = first_user_message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.is_empty() {
        return String::new();
    }
    if line.chars().count() <= 60 {
        return line.to_string();
    }
    let cut: String = line.chars().take(60).collect();
    let at_word = cut
        .rfind(' ')
        .filter(|&i| i > 30)
        .map(|i| &cut[..i])
        .unwrap_or(&cut);
    format!("{}…", at_word.trim_end())
}

/// Conversations newest first.
pub fn sort_newest_first(list: &mut [ConversationSummary]) {
    list.sort_by(|a, b| {
        b.updated_at
            .total_cmp(&a.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// Saves a turn as the reader sees it at `now`: a running turn is saved as interrupted.
pub fn version_from_turn(turn: &TurnState, now: f64) -> Version {
    let status = match turn.phase {
        TurnPhase::Thinking | TurnPhase::Streaming => VersionStatus::Interrupted,
        TurnPhase::Done if turn.fallback_text().is_some() => VersionStatus::NoAnswer,
        TurnPhase::Done => VersionStatus::Done,
        TurnPhase::Error => VersionStatus::Error,
        TurnPhase::Stopped => VersionStatus::Stopped,
    };
    let content = match turn.fallback_text() {
        Some(fallback) => fallback.to_string(),
        None => turn.answer.clone(),
    };
    let blocks = turn
        .blocks
        .iter()
        .map(|b| {
            let ms = b.elapsed_ms(now);
            let remote = b.text.is_empty().then(|| b.remote.clone()).flatten();
            BlockHeader {
                words: remote
                    .as_ref()
                    .map_or(b.text.split_whitespace().count() as u64, |r| r.words),
                chars: b.text.chars().count() as u64,
                text: remote.is_none().then(|| b.text.clone()),
                id: remote.map(|r| r.id).unwrap_or_default(),
                kind: b.kind,
                duration_ms: (ms > 0).then_some(ms),
                reader_open: b.reader_open,
                interrupted: b.status != BlockStatus::Done,
                cut_short: b.cut_short,
                running_ms: None,
            }
        })
        .collect();
    Version {
        id: String::new(),
        content,
        error: match status {
            VersionStatus::Interrupted => Some(interrupted()),
            _ => turn.error.clone(),
        },
        status,
        created_at: turn.created_at as i64,
        model: turn.model.clone(),
        settings: turn.settings,
        blocks,
        tools: turn.tools.clone(),
        sources: turn.sources.clone(),
        files: Vec::new(),
        usage: turn.usage.clone(),
        turn: None,
        compared: turn.compared,
    }
}

/// A stored answer (the server's, or this browser's saved copy) as a finished, not live, turn:
/// what the page, the terminal and an export all show of it.
pub fn turn_from_stored(v: &Version) -> TurnState {
    let status = v.status;
    let blocks = v
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| BlockState {
            index: i as u32,
            kind: b.kind,
            text: b.text.clone().unwrap_or_default(),
            // A turn cut short interrupts only the blocks that had not ended: one that ended
            // (it has its time) keeps reading "Thought".
            status: if b.interrupted
                || (matches!(
                    status,
                    VersionStatus::Interrupted | VersionStatus::Streaming
                ) && b.duration_ms.is_none())
            {
                BlockStatus::Interrupted
            } else {
                BlockStatus::Done
            },
            duration_ms: b.duration_ms,
            started_at: 0.0,
            ended_at: Some(0.0),
            answer_followed: true,
            reader_open: b.reader_open,
            remote: b.text.is_none().then(|| RemoteText {
                id: b.id.clone(),
                words: b.words,
            }),
            cut_short: b.cut_short,
        })
        .collect();
    let (phase, error) = match status {
        VersionStatus::Done | VersionStatus::NoAnswer => (TurnPhase::Done, None),
        VersionStatus::Stopped => (TurnPhase::Stopped, None),
        VersionStatus::Error => (
            TurnPhase::Error,
            Some(v.error.clone().map_or_else(interrupted, |f| Failure {
                retryable: true,
                ..f
            })),
        ),
        // Cut before it finished; still being written is cut as far as a stored copy knows.
        VersionStatus::Interrupted | VersionStatus::Streaming => (
            TurnPhase::Error,
            Some(match &v.error {
                // Saved before errors had codes: an interrupted one still says so.
                Some(f) if f.code.is_other() => Failure {
                    message: f.message.clone(),
                    ..interrupted()
                },
                Some(f) => Failure {
                    retryable: true,
                    ..f.clone()
                },
                None => interrupted(),
            }),
        ),
    };
    // A restored answer is not live: a tool it shows still running never returned.
    let mut tools = v.tools.clone();
    crate::domain::rich::end_running_tools(&mut tools);
    TurnState {
        phase,
        blocks,
        answer: if status == VersionStatus::NoAnswer {
            String::new()
        } else {
            v.content.clone()
        },
        error,
        saw_frame: true,
        created_at: v.created_at as f64,
        live: false,
        model: v.model.clone(),
        settings: v.settings,
        tools,
        sources: v.sources.clone(),
        usage: v.usage.clone(),
        compared: v.compared,
        ..TurnState::default()
    }
}

/// The field that marks a record as this browser's copy of a server conversation.
const SERVER_COPY: &str = "server_copy";

/// Marks `record` as this browser's copy of a conversation kept on the server, even one begun
/// in this page: a cache, never a chat to import.
pub fn mark_server_copy(record: &mut SavedChat) {
    record.extra.insert(SERVER_COPY.into(), Value::Bool(true));
}

/// True when the record's last answer was saved unfinished (this page left while it was being
/// written): a copy of a server chat that says so may be out of date, its answer still running
/// on the server, and is not shown before the server's own (it would read as cut, then jump back
/// to live).
pub fn ends_unfinished(record: &SavedChat) -> bool {
    record
        .chat
        .messages
        .last()
        .filter(|m| m.role == Role::Assistant)
        .and_then(|m| m.shown())
        .is_some_and(|v| {
            matches!(
                v.status,
                VersionStatus::Interrupted | VersionStatus::Streaming
            )
        })
}

/// True for this browser's copy of a conversation kept on the server (not a chat to import).
pub fn is_server_copy(record: &SavedChat) -> bool {
    record.extra.get(SERVER_COPY).and_then(Value::as_bool) == Some(true)
}

/// A saved chat (or a JSON export) as the server imports it: keyed by its id, so importing it
/// twice makes nothing new. Every version is imported, the reader's edits too.
pub fn to_import(record: &SavedChat) -> Import {
    let c = &record.chat;
    Import {
        key: c.id.clone(),
        title: c.title.clone(),
        created_at: c.created_at,
        instructions: c.instructions.clone(),
        messages: c
            .messages
            .iter()
            .map(|m| ImportMessage {
                role: m.role,
                created_at: m.created_at,
                active: m.active,
                versions: m.versions.iter().map(ImportVersion::of).collect(),
            })
            .collect(),
    }
}

/// Renders a conversation as Markdown, with each reasoning block as a `<details>` carrying its
/// label when `with_thinking` is set.
pub fn export_markdown(chat: &Conversation, with_thinking: bool, l: Locale) -> String {
    let c = l.catalogue();
    let mut out = format!("# {}\n\n", crate::i18n::title(c, &chat.title));
    if let Some(text) = &chat.instructions {
        out.push_str(&format!("> **{}**\n>\n", c.instructions_chat));
        for line in text.lines() {
            out.push_str(&format!("> {line}\n"));
        }
        out.push('\n');
    }
    for m in &chat.messages {
        let Some(v) = m.shown() else { continue };
        let who = match m.role {
            Role::User => c.export_you,
            Role::Assistant => c.export_assistant,
        };
        out.push_str(&format!("## {who}\n\n"));
        if with_thinking {
            for b in &v.blocks {
                let text = b.text.as_deref().unwrap_or_default();
                let block = BlockState {
                    text: text.to_string(),
                    kind: b.kind,
                    status: if b.interrupted {
                        BlockStatus::Interrupted
                    } else {
                        BlockStatus::Done
                    },
                    duration_ms: b.duration_ms,
                    ended_at: Some(0.0),
                    ..BlockState::default()
                };
                let mut label = labels::header(&block, 0.0, l);
                if let Some(note) = labels::origin_note(b.kind, l) {
                    label.push_str(&format!(" ({note})"));
                }
                out.push_str(&format!(
                    "<details>\n<summary>{}</summary>\n\n{}\n\n</details>\n\n",
                    escape_html(&label),
                    text.trim_end()
                ));
            }
        }
        for t in &v.tools {
            out.push_str(&tool_line(t, c));
        }
        if !v.tools.is_empty() {
            out.push('\n');
        }
        out.push_str(crate::domain::rich::with_footnotes(&v.content, &v.sources).trim_end());
        out.push_str("\n\n");
    }
    out
}

/// A tool step as one quoted line of an export: its name, its status, what it was asked.
fn tool_line(t: &ToolStep, c: &Catalogue) -> String {
    let status = match t.status {
        crate::domain::ToolStatus::Running => c.export_running,
        crate::domain::ToolStatus::Finished => c.export_finished,
        crate::domain::ToolStatus::Failed => c.export_failed,
    };
    let name = format!("`{}`", t.name.replace('`', "'"));
    let mut line = format!(
        "> {}",
        fill(c.export_tool, &[("tool", &name), ("status", status)])
    );
    if !t.input.is_empty() {
        line.push_str(": ");
        line.push_str(&t.input);
    }
    line.push('\n');
    line
}

/// The record as JSON, without reasoning when `with_thinking` is off.
pub fn export_json(record: &SavedChat, with_thinking: bool) -> String {
    let mut record = record.clone();
    record.extra.remove(SERVER_COPY);
    if !with_thinking {
        for m in &mut record.chat.messages {
            for v in &mut m.versions {
                v.blocks.clear();
            }
        }
    }
    serde_json::to_string_pretty(&record).unwrap_or_else(|_| "{}".into())
}

/// A JSON export read back: the v1 record it holds, refused when it is not one or has no
/// messages.
pub fn parse_export(raw: &str) -> Result<SavedChat, Unreadable> {
    let mut record = parse_conversation(raw.trim_start_matches('\u{feff}'))?;
    if record.chat.messages.is_empty() {
        return Err(Unreadable("the export holds no messages".into()));
    }
    record.extra.remove(SERVER_COPY);
    Ok(record)
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The reader's settings, kept under [`SETTINGS_KEY`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    #[serde(default)]
    pub thinking: super::thinking_view::ThinkingPref,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_conversation: Option<String>,
    /// The reader chose to keep this browser's older chats here: the import is not offered
    /// again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub import_declined: bool,
    /// The model the reader picked last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_model: Option<String>,
    /// Which model a new chat starts with.
    #[serde(default)]
    pub new_chat_model: crate::domain::reasoning::NewChatModel,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Chats and messages for tests, built the way the page builds them.
#[cfg(test)]
pub(crate) mod sample {
    use super::SavedChat;
    use crate::domain::history::{Conversation, Message, Version};
    use crate::domain::Role;

    /// A message of one finished version holding `text`.
    pub fn said(id: &str, role: Role, text: &str) -> Message {
        Message {
            id: id.into(),
            role,
            created_at: 1,
            active: 0,
            versions: vec![Version::text(text, 1)],
        }
    }

    pub fn user(id: &str, text: &str) -> Message {
        said(id, Role::User, text)
    }

    /// A chat kept in this browser, at revision 1.
    pub fn chat(id: &str, title: &str, messages: Vec<Message>) -> SavedChat {
        SavedChat::of(Conversation {
            id: id.into(),
            title: title.into(),
            workspace_id: String::new(),
            created_at: 1,
            updated_at: 2,
            rev: 1,
            model: None,
            settings: Default::default(),
            messages,
            first: 0,
            instructions: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::history::Message;
    use crate::domain::{SourceRef, ThinkingKind, TurnEvent};

    #[test]
    fn the_saved_enums_keep_their_snake_case_names() {
        use crate::client::thinking_view::ThinkingPref;
        use crate::client::turn_state::{BlockStatus, TurnPhase};
        use crate::domain::wire::tests::check;
        check::<VersionStatus>();
        check::<ThinkingPref>();
        check::<TurnPhase>();
        check::<BlockStatus>();
    }

    fn sample_turn() -> TurnState {
        let mut t = TurnState::started(1000.0);
        t.apply(
            &TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            1000.0,
        );
        t.apply(
            &TurnEvent::Thinking {
                block: 0,
                text: "let me see".into(),
            },
            1100.0,
        );
        t.apply(
            &TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(4200),
                cut_short: false,
            },
            5200.0,
        );
        t.apply(
            &TurnEvent::Delta {
                text: "the answer".into(),
            },
            5300.0,
        );
        t.apply(
            &TurnEvent::Done {
                finish_reason: "stop".into(),
                usage: None,
                thinking_chars: 10,
                total_ms: 5400,
            },
            5400.0,
        );
        t
    }

    fn record_with(messages: Vec<Message>) -> SavedChat {
        sample::chat("c1", "t", messages)
    }

    /// An answer with these versions; a message keeps one time, its shown version's.
    fn answered(id: &str, versions: Vec<Version>, active: usize) -> Message {
        Message {
            id: id.into(),
            role: Role::Assistant,
            created_at: versions.get(active).map_or(0, |v| v.created_at),
            active,
            versions,
        }
    }

    fn json_of(record: &SavedChat) -> Value {
        serde_json::to_value(record).unwrap()
    }

    fn read_back(record: &SavedChat) -> SavedChat {
        parse_conversation(&serde_json::to_string(record).unwrap()).unwrap()
    }

    fn shown_turn(record: &SavedChat, i: usize) -> TurnState {
        turn_from_stored(record.chat.messages[i].shown().unwrap())
    }

    #[test]
    fn a_conversation_round_trips_through_json() {
        let v = version_from_turn(&sample_turn(), 6000.0);
        let record = record_with(vec![sample::user("m1", "q"), answered("m2", vec![v], 0)]);
        assert_eq!(read_back(&record), record);
        let wire = json_of(&record);
        assert_eq!(wire["messages"][1]["thinking"][0]["duration_ms"], 4200);
        assert_eq!(wire["messages"][1]["thinking"][0]["kind"], "raw");
        assert_eq!(wire["messages"][1]["content"], "the answer");
        assert_eq!(wire["messages"][0]["content"], "q");
        assert!(
            wire["messages"][1].get("status").is_none(),
            "done is the default and left out"
        );
        assert!(
            wire["messages"][1].get("versions").is_none(),
            "one version is the message itself"
        );
    }

    #[test]
    fn a_chats_own_instructions_are_kept_with_it_and_an_export_says_them() {
        let mut record = record_with(vec![sample::user("m1", "q")]);
        record.chat.instructions = Some("Be brief.\nUse SI units.".into());
        assert_eq!(read_back(&record), record);
        assert_eq!(json_of(&record)["instructions"], "Be brief.\nUse SI units.");
        assert_eq!(
            to_import(&record).instructions.as_deref(),
            Some("Be brief.\nUse SI units.")
        );
        let md = export_markdown(&record.chat, false, Locale::En);
        assert!(
            md.contains("> **This chat’s**\n>\n> Be brief.\n> Use SI units.\n"),
            "{md}"
        );
        record.chat.instructions = None;
        assert!(json_of(&record).get("instructions").is_none());
        assert!(!export_markdown(&record.chat, false, Locale::En).contains("This chat’s"));
    }

    #[test]
    fn a_record_without_thinking_restores_as_a_plain_message() {
        let raw = r#"{"id":"c","title":"old","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}"#;
        let record = parse_conversation(raw).unwrap();
        let turn = shown_turn(&record, 1);
        assert_eq!(turn.phase, TurnPhase::Done);
        assert_eq!(turn.answer, "hello");
        assert!(turn.blocks.is_empty());
        assert!(!turn.wants_retry());
        assert_eq!(record.chat.messages[0].shown().unwrap().content, "hi");
    }

    #[test]
    fn corrupt_or_foreign_values_are_unreadable() {
        assert!(parse_conversation("{not json").is_err());
        assert!(parse_conversation("[1,2,3]").is_err());
        assert!(parse_conversation(r#"{"id":"","messages":[]}"#).is_err());
        assert!(
            parse_conversation(r#"{"id":"x","messages":[{"role":"robot","content":"?"}]}"#)
                .is_err()
        );
        assert!(
            parse_conversation(r#"{"id":"x","messages":[{"role":"user"}]}"#).is_err(),
            "a message without its text"
        );
    }

    #[test]
    fn unknown_future_fields_are_preserved() {
        let raw = r#"{"id":"c","messages":[{"role":"user","content":"hi","reactions":["👍"]},{"role":"assistant","content":"yo"}],"pinned":true}"#;
        let record = parse_conversation(raw).unwrap();
        let again = json_of(&record);
        assert_eq!(again["pinned"], true);
        assert_eq!(again["messages"][0]["reactions"][0], "👍");
        assert!(again["messages"][1].get("reactions").is_none());
    }

    #[test]
    fn restored_thinking_is_finished_collapsed_and_keeps_the_readers_choice() {
        let mut turn = sample_turn();
        turn.blocks[0].reader_open = Some(true);
        let back = turn_from_stored(&version_from_turn(&turn, 9000.0));
        assert!(!back.live);
        assert_eq!(back.blocks[0].status, BlockStatus::Done);
        assert_eq!(back.blocks[0].reader_open, Some(true));
        assert_eq!(
            labels::header(&back.blocks[0], 0.0, Locale::En),
            "Thought for 4.2s · 3 words"
        );
    }

    #[test]
    fn a_server_conversation_is_cached_with_lazy_blocks_and_every_version() {
        use crate::domain::history::BlockHeader;
        let version = |content: &str, status, blocks: Vec<BlockHeader>| Version {
            id: format!("v-{content}"),
            content: content.into(),
            status,
            error: None,
            model: Some("m".into()),
            settings: Default::default(),
            created_at: 5,
            blocks,
            tools: Vec::new(),
            sources: Vec::new(),
            files: Vec::new(),
            usage: None,
            turn: None,
            compared: None,
        };
        let conv = Conversation {
            id: "c1".into(),
            title: "Sky".into(),
            workspace_id: "w".into(),
            created_at: 1,
            updated_at: 2,
            rev: 3,
            model: Some("m".into()),
            instructions: None,
            settings: Default::default(),
            messages: vec![
                Message {
                    id: "u1".into(),
                    role: Role::User,
                    created_at: 1,
                    active: 1,
                    versions: vec![
                        version("first", VersionStatus::Done, vec![]),
                        version("second", VersionStatus::Done, vec![]),
                    ],
                },
                Message {
                    id: "a1".into(),
                    role: Role::Assistant,
                    created_at: 5,
                    active: 0,
                    versions: vec![version(
                        "answer",
                        VersionStatus::Done,
                        vec![BlockHeader {
                            id: "b1".into(),
                            kind: ThinkingKind::Raw,
                            duration_ms: Some(4200),
                            words: 234,
                            chars: 1000,
                            reader_open: None,
                            cut_short: false,
                            interrupted: false,
                            running_ms: None,
                            text: None,
                        }],
                    )],
                },
            ],
            first: 960,
        };
        let cached = SavedChat::server_copy(conv.clone());
        assert!(is_server_copy(&cached));
        let wire = json_of(&cached);
        assert_eq!(
            wire["earlier"], 960,
            "the messages before this page stay on the server"
        );
        assert_eq!(
            wire["messages"][0]["content"], "second",
            "the shown version of the question"
        );
        assert_eq!(
            wire["messages"][0]["versions"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(wire["messages"][1]["thinking"][0]["remote"]["id"], "b1");
        assert_eq!(wire["messages"][1]["thinking"][0]["text"], "");
        let back = read_back(&cached);
        assert_eq!(
            back, cached,
            "the cache is the server's conversation, to the field"
        );
        let turn = shown_turn(&back, 1);
        assert_eq!(turn.answer, "answer");
        let block = &turn.blocks[0];
        assert!(block.text.is_empty());
        assert_eq!(block.remote.as_ref().map(|r| r.id.as_str()), Some("b1"));
        assert_eq!(
            labels::header(block, 0.0, Locale::En),
            "Thought for 4.2s · 234 words"
        );
    }

    #[test]
    fn a_record_from_before_versions_had_ids_or_remote_sizes_still_reads() {
        let raw = r#"{"id":"c","rev":4,"server_copy":true,"messages":[
            {"id":"a","role":"assistant","content":"two","created_at":9,
             "thinking":[{"text":"","kind":"raw","remote":{"id":"b9","words":12}}],
             "versions":[{"content":"one","created_at":3},{"content":"two","created_at":9,
               "thinking":[{"text":"","kind":"raw","remote":{"id":"b9","words":12}}]}],
             "active_version":1}]}"#;
        let record = parse_conversation(raw).unwrap();
        assert!(is_server_copy(&record));
        assert_eq!(record.rev(), 4);
        let m = &record.chat.messages[0];
        assert_eq!((m.active, m.versions.len()), (1, 2));
        assert_eq!(m.versions[0].content, "one");
        let block = &m.versions[1].blocks[0];
        assert_eq!(
            (block.id.as_str(), block.words, block.text.as_deref()),
            ("b9", 12, None)
        );
    }

    #[test]
    fn a_block_saved_without_time_says_thought() {
        let raw = r#"{"id":"c","messages":[{"role":"assistant","content":"a","thinking":[{"text":"x y"}]}]}"#;
        let record = parse_conversation(raw).unwrap();
        assert_eq!(
            labels::header(&shown_turn(&record, 0).blocks[0], 0.0, Locale::En),
            "Thought · 2 words"
        );
    }

    #[test]
    fn a_turn_saved_mid_stream_comes_back_interrupted_with_what_arrived() {
        let mut t = TurnState::started(0.0);
        t.apply(
            &TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            0.0,
        );
        t.apply(
            &TurnEvent::Thinking {
                block: 0,
                text: "partial".into(),
            },
            10.0,
        );
        let v = version_from_turn(&t, 2500.0);
        assert_eq!(v.status, VersionStatus::Interrupted);
        let back = shown_turn(&read_back(&record_with(vec![answered("a", vec![v], 0)])), 0);
        assert_eq!(back.phase, TurnPhase::Error);
        assert_eq!(back.blocks[0].status, BlockStatus::Interrupted);
        assert_eq!(back.blocks[0].text, "partial");
        assert_eq!(back.blocks[0].duration_ms, Some(2500));
        assert!(back.wants_retry());
        let error = back.error.expect("the interruption");
        assert_eq!(error.message, INTERRUPTED);
        assert_eq!(error.code, ErrorCode::Interrupted);
    }

    #[test]
    fn an_error_keeps_its_code_and_params_through_a_save() {
        let mut t = TurnState::started(0.0);
        t.apply(
            &TurnEvent::Error(
                Failure::coded(ErrorCode::Silent, "went silent for 2 s", true).with("seconds", 2),
            ),
            10.0,
        );
        let record = record_with(vec![answered("a", vec![version_from_turn(&t, 20.0)], 0)]);
        let json = json_of(&record);
        let saved = &json["messages"][0];
        assert_eq!(saved["error"], "went silent for 2 s");
        assert_eq!(saved["error_code"], "silent");
        assert_eq!(saved["error_params"]["seconds"], "2");
        let back = shown_turn(&read_back(&record), 0);
        let error = back.error.expect("the error");
        assert_eq!(error.code, ErrorCode::Silent);
        assert_eq!(error.param("seconds"), "2");
        assert_eq!(error.message, "went silent for 2 s");
        // A record saved before errors had codes: its error reads as `other`, or as
        // `interrupted` when the turn was cut.
        let old = |status: &str, error: &str| {
            let raw = serde_json::json!({"id": "c", "messages": [
                {"role": "assistant", "content": "", "status": status, "error": error}
            ]});
            let record = parse_conversation(&raw.to_string()).unwrap();
            shown_turn(&record, 0).error.unwrap().code
        };
        assert_eq!(old("error", "boom"), ErrorCode::Other);
        assert_eq!(old("interrupted", INTERRUPTED), ErrorCode::Interrupted);
        // An answer without an error saves no code.
        let mut t = TurnState::started(0.0);
        t.apply(&TurnEvent::Delta { text: "ok".into() }, 1.0);
        t.apply(
            &TurnEvent::Done {
                finish_reason: "stop".into(),
                usage: None,
                thinking_chars: 0,
                total_ms: 2,
            },
            2.0,
        );
        let done = json_of(&record_with(vec![answered(
            "a",
            vec![version_from_turn(&t, 3.0)],
            0,
        )]));
        let done = &done["messages"][0];
        assert!(done.get("error_code").is_none(), "{done}");
        assert!(done.get("error_params").is_none(), "{done}");
    }

    #[test]
    fn a_block_that_ended_before_the_turn_was_cut_still_reads_thought() {
        let mut t = TurnState::started(0.0);
        for (e, at) in [
            (
                TurnEvent::ThinkingStart {
                    block: 0,
                    kind: ThinkingKind::Raw,
                    at_ms: None,
                },
                0.0,
            ),
            (
                TurnEvent::Thinking {
                    block: 0,
                    text: "ten words of reasoning that ended before the answer began".into(),
                },
                10.0,
            ),
            (
                TurnEvent::ThinkingEnd {
                    block: 0,
                    duration_ms: Some(399),
                    cut_short: false,
                },
                400.0,
            ),
            (
                TurnEvent::Delta {
                    text: "The answer so".into(),
                },
                500.0,
            ),
        ] {
            t.apply(&e, at);
        }
        let v = version_from_turn(&t, 2500.0);
        assert_eq!(v.status, VersionStatus::Interrupted);
        let back = turn_from_stored(&v);
        assert_eq!(back.blocks[0].status, BlockStatus::Done);
        assert_eq!(
            labels::header(&back.blocks[0], 0.0, Locale::En),
            "Thought · 10 words"
        );
        // The same turn as the server keeps it: the block has its time, the version is cut.
        let mut stored = v.clone();
        stored.blocks[0].interrupted = false;
        assert_eq!(
            turn_from_stored(&stored).blocks[0].status,
            BlockStatus::Done
        );
        // A block still open when the turn was cut has no time of its own: interrupted.
        stored.blocks[0].duration_ms = None;
        assert_eq!(
            turn_from_stored(&stored).blocks[0].status,
            BlockStatus::Interrupted
        );
    }

    #[test]
    fn what_the_reader_saw_is_what_is_stored() {
        let mut t = TurnState::started(0.0);
        t.apply(
            &TurnEvent::Thinking {
                block: 0,
                text: "hm".into(),
            },
            0.0,
        );
        t.apply(
            &TurnEvent::Done {
                finish_reason: "length".into(),
                usage: None,
                thinking_chars: 2,
                total_ms: 1,
            },
            1.0,
        );
        let v = version_from_turn(&t, 1.0);
        assert_eq!(v.content, super::super::turn_state::THOUGHT_NO_ANSWER);
        assert_eq!(v.status, VersionStatus::NoAnswer);
        let back = turn_from_stored(&v);
        assert_eq!(
            back.fallback_text(),
            Some(super::super::turn_state::THOUGHT_NO_ANSWER)
        );
    }

    #[test]
    fn a_copy_saved_while_its_answer_ran_says_so() {
        let mut running = TurnState::started(0.0);
        running.apply(
            &TurnEvent::Delta {
                text: "so far".into(),
            },
            1.0,
        );
        let cut = record_with(vec![
            sample::user("q", "?"),
            answered("a", vec![version_from_turn(&running, 2.0)], 0),
        ]);
        assert!(ends_unfinished(&cut));
        let done = record_with(vec![
            sample::user("q", "?"),
            answered("a", vec![version_from_turn(&sample_turn(), 6000.0)], 0),
        ]);
        assert!(!ends_unfinished(&done));
        assert!(!ends_unfinished(&record_with(vec![sample::user("q", "?")])));
    }

    #[test]
    fn versions_round_trip_with_the_active_one_on_top() {
        let a = version_from_turn(&sample_turn(), 1.0);
        let mut b = a.clone();
        b.content = "second".into();
        b.created_at = 7;
        let record = record_with(vec![answered("m", vec![a.clone(), b], 0)]);
        let wire = json_of(&record);
        assert_eq!(wire["messages"][0]["content"], a.content);
        assert_eq!(wire["messages"][0]["active_version"], 0);
        assert_eq!(read_back(&record), record);
    }

    #[test]
    fn titles_come_from_the_first_line_and_are_cut_at_a_word() {
        assert_eq!(title_from("\n  Hello there \nmore"), "Hello there");
        assert_eq!(
            title_from(""),
            "",
            "untitled: a new chat in the reader's words"
        );
        let long = "word ".repeat(30);
        let t = title_from(&long);
        assert!(t.ends_with('…') && t.chars().count() <= 61, "{t}");
    }

    #[test]
    fn exports_include_thinking_only_when_asked() {
        let v = version_from_turn(&sample_turn(), 6000.0);
        let record = record_with(vec![answered("m", vec![v], 0)]);
        let with = export_markdown(&record.chat, true, Locale::En);
        assert!(
            with.contains("<details>\n<summary>Thought for 4.2s · 3 words</summary>"),
            "{with}"
        );
        assert!(with.contains("let me see"));
        let without = export_markdown(&record.chat, false, Locale::En);
        assert!(!without.contains("let me see") && without.contains("the answer"));
        assert!(export_json(&record, true).contains("let me see"));
        assert!(!export_json(&record, false).contains("let me see"));
    }

    #[test]
    fn tools_and_sources_are_saved_restored_exported_and_imported() {
        let mut turn = sample_turn();
        turn.answer = "Fast.[^1]".into();
        turn.tools = vec![ToolStep {
            name: "web_search".into(),
            input: "rust".into(),
            status: crate::domain::ToolStatus::Finished,
            output: "1 result".into(),
            after_blocks: 1,
        }];
        turn.sources = vec![SourceRef {
            n: 1,
            url: "https://rust-lang.org/".into(),
            title: Some("Rust".into()),
        }];
        let v = version_from_turn(&turn, 6000.0);
        let record = record_with(vec![answered("m", vec![v], 0)]);
        let back = shown_turn(&read_back(&record), 0);
        assert_eq!(
            (back.tools.clone(), back.sources.clone()),
            (turn.tools.clone(), turn.sources.clone())
        );
        let md = export_markdown(&record.chat, false, Locale::En);
        assert!(
            md.contains("> Tool `web_search` (finished): rust\n"),
            "{md}"
        );
        assert!(
            md.contains("Fast.[^1]\n\n[^1]: [Rust](<https://rust-lang.org/>)"),
            "{md}"
        );
        let json = parse_export(&export_json(&record, false)).unwrap();
        assert_eq!(json.chat.messages[0].versions[0].sources, turn.sources);
        let import = to_import(&record);
        assert_eq!(import.messages[0].versions[0].tools, turn.tools);
        assert_eq!(import.messages[0].versions[0].sources, turn.sources);
    }

    #[test]
    fn a_json_export_reads_back_as_the_same_record() {
        let v = version_from_turn(&sample_turn(), 6000.0);
        let mut record = record_with(vec![answered("m", vec![v], 0)]);
        record.extra.insert(SERVER_COPY.into(), Value::Bool(true));
        let back = parse_export(&format!("\u{feff}{}", export_json(&record, true))).unwrap();
        assert!(!is_server_copy(&back));
        record.extra.remove(SERVER_COPY);
        assert_eq!(back, record);
        assert!(parse_export("{\"id\":\"x\",\"title\":\"t\",\"messages\":[]}").is_err());
        assert!(parse_export("[1,2]").is_err());
    }

    #[test]
    fn newest_conversations_come_first() {
        let mut list = vec![
            ConversationSummary {
                id: "a".into(),
                title: "a".into(),
                updated_at: 1.0,
                ..Default::default()
            },
            ConversationSummary {
                id: "b".into(),
                title: "b".into(),
                updated_at: 3.0,
                ..Default::default()
            },
        ];
        sort_newest_first(&mut list);
        assert_eq!(list[0].id, "b");
    }
}
