//! The saved-chat format and its conversions, pure and tested natively.
//!
//! Each conversation is one JSON record under its own key, `ponder.chat.v1.<id>`, written
//! whole, so two tabs working on different conversations never overwrite each other. An
//! assistant message may carry `thinking`; a record without it restores exactly as a plain
//! message. Fields this version does not know are kept and written back untouched.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::labels;
use super::turn_state::{BlockState, BlockStatus, RemoteText, TurnPhase, TurnState};
use std::collections::BTreeMap;

use crate::domain::history::VersionStatus;
use crate::domain::{
    ErrorCode, Failure, ReasoningSettings, Role, SourceRef, ThinkingKind, ToolStep,
};
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

/// One reasoning block as saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThinkingRecord {
    pub text: String,
    #[serde(default)]
    pub kind: ThinkingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The reader's own open/closed choice, remembered across reloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<bool>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The reader cut this reasoning short ("Answer now").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
    /// A block stored on the server whose text is loaded on demand: its id and word count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteText>,
}

/// One version of an assistant answer (regenerate keeps the earlier ones).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VersionRecord {
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Vec<ThinkingRecord>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<VersionStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The code of `error`, so a restored error is said in the reader's language too.
    #[serde(default, skip_serializing_if = "ErrorCode::is_other")]
    pub error_code: ErrorCode,
    /// The parameters of `error`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_params: BTreeMap<String, String>,
    #[serde(default)]
    pub created_at: f64,
    /// The model that wrote this answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the answer was asked with.
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    pub settings: ReasoningSettings,
    /// The tools the model used, in stream order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolStep>,
    /// The sources `[^n]` in the answer refers to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceRef>,
}

/// One message as saved. For an assistant message the top-level fields are its active version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageRecord {
    #[serde(default)]
    pub id: String,
    pub role: Role,
    pub content: String,
    #[serde(default)]
    pub created_at: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Vec<ThinkingRecord>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<VersionStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "ErrorCode::is_other")]
    pub error_code: ErrorCode,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_params: BTreeMap<String, String>,
    /// The model that wrote the shown answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the shown answer was asked with.
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    pub settings: ReasoningSettings,
    /// Every version, when there is more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<VersionRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_version: Option<usize>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One conversation as saved under `ponder.chat.v1.<id>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConversationRecord {
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub created_at: f64,
    #[serde(default)]
    pub updated_at: f64,
    /// Counts writes, so a tab can tell that another tab wrote the record since it last read it.
    #[serde(default)]
    pub rev: u64,
    pub messages: Vec<MessageRecord>,
    /// Messages kept on the server before the first one here (server-side history opens a
    /// long conversation on its last messages).
    #[serde(default, skip_serializing_if = "crate::domain::history::is_zero")]
    pub earlier: usize,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What the conversation list shows.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub updated_at: f64,
}

impl ConversationRecord {
    pub fn key(&self) -> String {
        key_for(&self.id)
    }

    pub fn summary(&self) -> ConversationSummary {
        ConversationSummary {
            id: self.id.clone(),
            title: self.title.clone(),
            updated_at: self.updated_at,
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
pub fn parse_conversation(raw: &str) -> Result<ConversationRecord, Unreadable> {
    let record: ConversationRecord =
        serde_json::from_slice(raw.as_bytes()).map_err(|e| Unreadable(e.to_string()))?;
    if record.id.is_empty() {
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
pub fn version_from_turn(turn: &TurnState, now: f64) -> VersionRecord {
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
    let thinking: Vec<ThinkingRecord> = turn
        .blocks
        .iter()
        .map(|b| {
            let ms = b.elapsed_ms(now);
            ThinkingRecord {
                text: b.text.clone(),
                kind: b.kind,
                duration_ms: (ms > 0).then_some(ms),
                open: b.reader_open,
                interrupted: b.status != BlockStatus::Done,
                cut_short: b.cut_short,
                remote: b.text.is_empty().then(|| b.remote.clone()).flatten(),
            }
        })
        .collect();
    let failure = match status {
        VersionStatus::Interrupted => Some(interrupted()),
        _ => turn.error.clone(),
    };
    let (error_code, error_params) = failure
        .as_ref()
        .map(|e| (e.code, e.params.clone()))
        .unwrap_or_default();
    VersionRecord {
        content,
        thinking: (!thinking.is_empty()).then_some(thinking),
        status: Some(status),
        error: failure.map(|e| e.message),
        error_code,
        error_params,
        created_at: turn.created_at,
        model: turn.model.clone(),
        settings: turn.settings,
        tools: turn.tools.clone(),
        sources: turn.sources.clone(),
    }
}

/// Restores a saved version as a finished, not live, turn: the record read as the domain's
/// version ([`stored_version`]), then shown by the one rule for every stored answer
/// ([`turn_from_stored`]).
pub fn turn_from_version(v: &VersionRecord) -> TurnState {
    turn_from_stored(&stored_version(v))
}

/// A saved version as the domain's model of it: the saved-chat format is a serialization of
/// [`crate::domain::history::Version`] (old records still read).
pub fn stored_version(v: &VersionRecord) -> crate::domain::history::Version {
    use crate::domain::history::{BlockHeader, Version};
    Version {
        id: String::new(),
        content: v.content.clone(),
        status: v.status.unwrap_or(VersionStatus::Done),
        error: v.error.as_ref().map(|message| Failure {
            message: message.clone(),
            retryable: true,
            code: v.error_code,
            params: v.error_params.clone(),
        }),
        model: v.model.clone(),
        settings: v.settings,
        created_at: v.created_at as i64,
        blocks: v
            .thinking
            .iter()
            .flatten()
            .map(|t| {
                let remote = t.remote.as_ref().filter(|_| t.text.is_empty());
                BlockHeader {
                    id: remote.map(|r| r.id.clone()).unwrap_or_default(),
                    kind: t.kind,
                    duration_ms: t.duration_ms,
                    words: remote.map_or(t.text.split_whitespace().count() as u64, |r| r.words),
                    chars: t.text.chars().count() as u64,
                    reader_open: t.open,
                    interrupted: t.interrupted,
                    cut_short: t.cut_short,
                    running_ms: None,
                    text: remote.is_none().then(|| t.text.clone()),
                }
            })
            .collect(),
        tools: v.tools.clone(),
        sources: v.sources.clone(),
        turn: None,
    }
}

/// A stored answer (the server's, or this browser's saved copy) as a finished, not live, turn:
/// what the page, the terminal and an export all show of it.
pub fn turn_from_stored(v: &crate::domain::history::Version) -> TurnState {
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
        ..TurnState::default()
    }
}

/// A stored version's failure: the one it was stored with, or for one cut without a word of
/// why, that it was interrupted (as [`turn_from_stored`] says it).
fn failure_of(v: &crate::domain::history::Version) -> Option<Failure> {
    let cut = matches!(
        v.status,
        VersionStatus::Streaming | VersionStatus::Interrupted
    );
    v.error.clone().or_else(|| cut.then(interrupted))
}

/// A conversation as the server keeps it, in the saved-chat format the page works with (and
/// caches in localStorage): every version, block headers with their ids and word counts, the
/// reasoning text left on the server until a block opens.
pub fn record_from_server(conv: &crate::domain::history::Conversation) -> ConversationRecord {
    use crate::domain::history::VersionStatus;
    let version = |v: &crate::domain::history::Version| {
        let failure = failure_of(v);
        VersionRecord {
            content: v.content.clone(),
            thinking: (!v.blocks.is_empty()).then(|| {
                v.blocks
                    .iter()
                    .map(|b| ThinkingRecord {
                        text: b.text.clone().unwrap_or_default(),
                        kind: b.kind,
                        duration_ms: b.duration_ms,
                        open: b.reader_open,
                        interrupted: b.interrupted,
                        cut_short: b.cut_short,
                        remote: b.text.is_none().then(|| RemoteText {
                            id: b.id.clone(),
                            words: b.words,
                        }),
                    })
                    .collect()
            }),
            status: match v.status {
                VersionStatus::Done => None,
                VersionStatus::Streaming => Some(VersionStatus::Interrupted),
                ended => Some(ended),
            },
            error_code: failure.as_ref().map(|e| e.code).unwrap_or_default(),
            error_params: failure
                .as_ref()
                .map(|e| e.params.clone())
                .unwrap_or_default(),
            error: failure.map(|e| e.message),
            created_at: v.created_at as f64,
            model: v.model.clone(),
            settings: v.settings,
            tools: v.tools.clone(),
            sources: v.sources.clone(),
        }
    };
    let messages = conv
        .messages
        .iter()
        .map(|m| match m.role {
            Role::User => {
                let shown = m.shown();
                let mut record = MessageRecord {
                    id: m.id.clone(),
                    role: Role::User,
                    content: shown.map(|v| v.content.clone()).unwrap_or_default(),
                    created_at: m.created_at as f64,
                    thinking: None,
                    status: None,
                    error: None,
                    error_code: Default::default(),
                    error_params: Default::default(),
                    versions: Vec::new(),
                    active_version: None,
                    model: None,
                    settings: Default::default(),
                    tools: Vec::new(),
                    sources: Vec::new(),
                    extra: Map::new(),
                };
                if m.versions.len() > 1 {
                    record.versions = m.versions.iter().map(version).collect();
                    record.active_version = Some(m.active.min(m.versions.len() - 1));
                }
                record
            }
            Role::Assistant => assistant_record(
                m.id.clone(),
                m.created_at as f64,
                m.versions.iter().map(version).collect(),
                m.active,
            ),
        })
        .collect();
    let mut record = ConversationRecord {
        id: conv.id.clone(),
        title: conv.title.clone(),
        created_at: conv.created_at as f64,
        updated_at: conv.updated_at as f64,
        rev: conv.rev.max(0) as u64,
        messages,
        earlier: conv.first,
        extra: Map::new(),
    };
    mark_server_copy(&mut record);
    record
}

/// The field that marks a record as this browser's copy of a server conversation.
const SERVER_COPY: &str = "server_copy";

/// Marks `record` as this browser's copy of a conversation kept on the server, even one begun
/// in this page: a cache, never a chat to import.
pub fn mark_server_copy(record: &mut ConversationRecord) {
    record.extra.insert(SERVER_COPY.into(), Value::Bool(true));
}

/// True for this browser's copy of a conversation kept on the server (not a chat to import).
pub fn is_server_copy(record: &ConversationRecord) -> bool {
    record.extra.get(SERVER_COPY).and_then(Value::as_bool) == Some(true)
}

/// A saved chat (or a JSON export) as the server imports it: keyed by its id, so importing it
/// twice makes nothing new.
pub fn to_import(record: &ConversationRecord) -> crate::domain::history::Import {
    use crate::domain::history::{Import, ImportBlock, ImportMessage, ImportVersion};
    let version = |v: &VersionRecord| ImportVersion {
        content: v.content.clone(),
        status: match v.status {
            None => VersionStatus::Done,
            Some(VersionStatus::Streaming) => VersionStatus::Interrupted,
            Some(ended) => ended,
        },
        error: v.error.clone(),
        created_at: v.created_at as i64,
        blocks: v
            .thinking
            .iter()
            .flatten()
            .map(|t| ImportBlock {
                kind: t.kind,
                text: t.text.clone(),
                duration_ms: t.duration_ms,
                interrupted: t.interrupted,
            })
            .collect(),
        tools: v.tools.clone(),
        sources: v.sources.clone(),
    };
    Import {
        key: record.id.clone(),
        title: record.title.clone(),
        created_at: record.created_at as i64,
        messages: record
            .messages
            .iter()
            .map(|m| {
                let (versions, active) = match m.role {
                    Role::User => (
                        vec![VersionRecord {
                            content: m.content.clone(),
                            thinking: None,
                            status: None,
                            error: None,
                            error_code: Default::default(),
                            error_params: Default::default(),
                            created_at: m.created_at,
                            model: None,
                            settings: ReasoningSettings::default(),
                            tools: Vec::new(),
                            sources: Vec::new(),
                        }],
                        0,
                    ),
                    Role::Assistant => versions_of(m),
                };
                ImportMessage {
                    role: m.role,
                    created_at: m.created_at as i64,
                    active,
                    versions: versions.iter().map(version).collect(),
                }
            })
            .collect(),
    }
}

/// An assistant message record from its versions (the active one mirrored at the top level).
pub fn assistant_record(
    id: String,
    created_at: f64,
    versions: Vec<VersionRecord>,
    active: usize,
) -> MessageRecord {
    let active = active.min(versions.len().saturating_sub(1));
    let top = versions.get(active).cloned().unwrap_or(VersionRecord {
        content: String::new(),
        thinking: None,
        status: None,
        error: None,
        error_code: Default::default(),
        error_params: Default::default(),
        created_at,
        model: None,
        settings: ReasoningSettings::default(),
        tools: Vec::new(),
        sources: Vec::new(),
    });
    let many = versions.len() > 1;
    MessageRecord {
        id,
        role: Role::Assistant,
        content: top.content,
        created_at,
        thinking: top.thinking,
        status: top.status.filter(|s| *s != VersionStatus::Done),
        error: top.error,
        error_code: top.error_code,
        error_params: top.error_params,
        versions: if many { versions } else { Vec::new() },
        active_version: many.then_some(active),
        model: top.model,
        settings: top.settings,
        tools: top.tools,
        sources: top.sources,
        extra: Map::new(),
    }
}

/// The shown version of a saved assistant message.
pub fn shown_version(m: &MessageRecord) -> Option<VersionRecord> {
    let (versions, active) = versions_of(m);
    versions.into_iter().nth(active)
}

/// The versions of a saved assistant message and the active index. A plain record (no
/// `versions`) is one version.
pub fn versions_of(m: &MessageRecord) -> (Vec<VersionRecord>, usize) {
    if m.versions.is_empty() {
        let v = VersionRecord {
            content: m.content.clone(),
            thinking: m.thinking.clone(),
            status: m.status,
            error: m.error.clone(),
            error_code: m.error_code,
            error_params: m.error_params.clone(),
            created_at: m.created_at,
            model: m.model.clone(),
            settings: m.settings,
            tools: m.tools.clone(),
            sources: m.sources.clone(),
        };
        (vec![v], 0)
    } else {
        let active = m
            .active_version
            .unwrap_or(m.versions.len() - 1)
            .min(m.versions.len() - 1);
        (m.versions.clone(), active)
    }
}

/// Renders a conversation as Markdown, with each reasoning block as a `<details>` carrying its
/// label when `with_thinking` is set.
pub fn export_markdown(record: &ConversationRecord, with_thinking: bool, l: Locale) -> String {
    let c = l.catalogue();
    let mut out = format!("# {}\n\n", crate::i18n::title(c, &record.title));
    for m in &record.messages {
        let who = match m.role {
            Role::User => c.export_you,
            Role::Assistant => c.export_assistant,
        };
        out.push_str(&format!("## {who}\n\n"));
        if with_thinking {
            for t in m.thinking.iter().flatten() {
                let block = BlockState {
                    text: t.text.clone(),
                    kind: t.kind,
                    status: if t.interrupted {
                        BlockStatus::Interrupted
                    } else {
                        BlockStatus::Done
                    },
                    duration_ms: t.duration_ms,
                    ended_at: Some(0.0),
                    ..BlockState::default()
                };
                let mut label = labels::header(&block, 0.0, l);
                if let Some(note) = labels::origin_note(t.kind, l) {
                    label.push_str(&format!(" ({note})"));
                }
                out.push_str(&format!(
                    "<details>\n<summary>{}</summary>\n\n{}\n\n</details>\n\n",
                    escape_html(&label),
                    t.text.trim_end()
                ));
            }
        }
        for t in &m.tools {
            out.push_str(&tool_line(t, c));
        }
        if !m.tools.is_empty() {
            out.push('\n');
        }
        out.push_str(crate::domain::rich::with_footnotes(&m.content, &m.sources).trim_end());
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
pub fn export_json(record: &ConversationRecord, with_thinking: bool) -> String {
    let mut record = record.clone();
    record.extra.remove(SERVER_COPY);
    if !with_thinking {
        for m in &mut record.messages {
            m.thinking = None;
            for v in &mut m.versions {
                v.thinking = None;
            }
        }
    }
    serde_json::to_string_pretty(&record).unwrap_or_else(|_| "{}".into())
}

/// A JSON export read back: the v1 record it holds, refused when it is not one or has no
/// messages.
pub fn parse_export(raw: &str) -> Result<ConversationRecord, Unreadable> {
    let mut record = parse_conversation(raw.trim_start_matches('\u{feff}'))?;
    if record.messages.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::TurnEvent;

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

    fn record_with(messages: Vec<MessageRecord>) -> ConversationRecord {
        ConversationRecord {
            id: "c1".into(),
            title: "t".into(),
            created_at: 1.0,
            updated_at: 2.0,
            rev: 1,
            messages,
            earlier: 0,
            extra: Map::new(),
        }
    }

    #[test]
    fn a_conversation_round_trips_through_json() {
        let v = version_from_turn(&sample_turn(), 6000.0);
        let user = MessageRecord {
            id: "m1".into(),
            role: Role::User,
            content: "q".into(),
            created_at: 1.0,
            thinking: None,
            status: None,
            error: None,
            error_code: Default::default(),
            error_params: Default::default(),
            versions: vec![],
            active_version: None,
            model: None,
            settings: Default::default(),
            tools: Vec::new(),
            sources: Vec::new(),
            extra: Map::new(),
        };
        let record = record_with(vec![
            user,
            assistant_record("m2".into(), 1000.0, vec![v], 0),
        ]);
        let json = serde_json::to_string(&record).unwrap();
        assert_eq!(parse_conversation(&json).unwrap(), record);
        let wire: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(wire["messages"][1]["thinking"][0]["duration_ms"], 4200);
        assert_eq!(wire["messages"][1]["thinking"][0]["kind"], "raw");
        assert!(
            wire["messages"][1].get("status").is_none(),
            "done is the default and left out"
        );
    }

    #[test]
    fn a_record_without_thinking_restores_as_a_plain_message() {
        let raw = r#"{"id":"c","title":"old","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}"#;
        let record = parse_conversation(raw).unwrap();
        let (versions, active) = versions_of(&record.messages[1]);
        let turn = turn_from_version(&versions[active]);
        assert_eq!(turn.phase, TurnPhase::Done);
        assert_eq!(turn.answer, "hello");
        assert!(turn.blocks.is_empty());
        assert!(!turn.wants_retry());
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
    }

    #[test]
    fn unknown_future_fields_are_preserved() {
        let raw = r#"{"id":"c","messages":[{"role":"user","content":"hi","reactions":["👍"]}],"pinned":true}"#;
        let record = parse_conversation(raw).unwrap();
        let again: Value = serde_json::from_str(&serde_json::to_string(&record).unwrap()).unwrap();
        assert_eq!(again["pinned"], true);
        assert_eq!(again["messages"][0]["reactions"][0], "👍");
    }

    #[test]
    fn restored_thinking_is_finished_collapsed_and_keeps_the_readers_choice() {
        let mut turn = sample_turn();
        turn.blocks[0].reader_open = Some(true);
        let back = turn_from_version(&version_from_turn(&turn, 9000.0));
        assert!(!back.live);
        assert_eq!(back.blocks[0].status, BlockStatus::Done);
        assert_eq!(back.blocks[0].reader_open, Some(true));
        assert_eq!(
            labels::header(&back.blocks[0], 0.0, Locale::En),
            "Thought for 4.2s · 3 words"
        );
    }

    #[test]
    fn a_server_conversation_becomes_a_record_with_lazy_blocks_and_versions() {
        use crate::domain::history::{BlockHeader, Conversation, Message, Version, VersionStatus};
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
            turn: None,
        };
        let conv = Conversation {
            id: "c1".into(),
            title: "Sky".into(),
            workspace_id: "w".into(),
            created_at: 1,
            updated_at: 2,
            rev: 3,
            model: None,
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
                    created_at: 2,
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
        let record = record_from_server(&conv);
        assert_eq!((record.id.as_str(), record.rev), ("c1", 3));
        assert_eq!(
            record.earlier, 960,
            "the messages before this page stay on the server"
        );
        assert_eq!(
            record.messages[0].content, "second",
            "the shown version of the question"
        );
        assert_eq!(record.messages[0].versions.len(), 2);
        let turn = turn_from_version(&versions_of(&record.messages[1]).0[0]);
        assert_eq!(turn.answer, "answer");
        let block = &turn.blocks[0];
        assert!(block.text.is_empty());
        assert_eq!(block.remote.as_ref().map(|r| r.id.as_str()), Some("b1"));
        assert_eq!(
            labels::header(block, 0.0, Locale::En),
            "Thought for 4.2s · 234 words"
        );
        // Saved again as this browser's copy, the block keeps what it needs to load its text.
        let json = serde_json::to_string(&record).unwrap();
        let back = parse_conversation(&json).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn a_block_saved_without_time_says_thought() {
        let v = VersionRecord {
            content: "a".into(),
            thinking: Some(vec![ThinkingRecord {
                text: "x y".into(),
                kind: ThinkingKind::Raw,
                duration_ms: None,
                open: None,
                cut_short: false,
                interrupted: false,
                remote: None,
            }]),
            status: None,
            error: None,
            error_code: Default::default(),
            error_params: Default::default(),
            model: None,
            settings: Default::default(),
            tools: Vec::new(),
            sources: Vec::new(),
            created_at: 0.0,
        };
        assert_eq!(
            labels::header(&turn_from_version(&v).blocks[0], 0.0, Locale::En),
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
        assert_eq!(v.status, Some(VersionStatus::Interrupted));
        let back = turn_from_version(&v);
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
        let v = version_from_turn(&t, 20.0);
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["error"], "went silent for 2 s");
        assert_eq!(json["error_code"], "silent");
        assert_eq!(json["error_params"]["seconds"], "2");
        let back = turn_from_version(&serde_json::from_value(json).unwrap());
        let error = back.error.expect("the error");
        assert_eq!(error.code, ErrorCode::Silent);
        assert_eq!(error.param("seconds"), "2");
        assert_eq!(error.message, "went silent for 2 s");
        // A record saved before errors had codes: its error reads as `other`, or as
        // `interrupted` when the turn was cut.
        let old: VersionRecord = serde_json::from_value(serde_json::json!({
            "content": "", "status": "error", "error": "boom"
        }))
        .unwrap();
        assert_eq!(
            turn_from_version(&old).error.unwrap().code,
            ErrorCode::Other
        );
        let old: VersionRecord = serde_json::from_value(serde_json::json!({
            "content": "", "status": "interrupted", "error": INTERRUPTED
        }))
        .unwrap();
        assert_eq!(
            turn_from_version(&old).error.unwrap().code,
            ErrorCode::Interrupted
        );
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
        let done = serde_json::to_value(version_from_turn(&t, 3.0)).unwrap();
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
        assert_eq!(v.status, Some(VersionStatus::Interrupted));
        let back = turn_from_version(&v);
        assert_eq!(back.blocks[0].status, BlockStatus::Done);
        assert_eq!(
            labels::header(&back.blocks[0], 0.0, Locale::En),
            "Thought · 10 words"
        );
        // The same turn as the server keeps it: the block has its time, the version is cut.
        let mut stored = v.clone();
        if let Some(blocks) = stored.thinking.as_mut() {
            blocks[0].interrupted = false;
        }
        assert_eq!(
            turn_from_version(&stored).blocks[0].status,
            BlockStatus::Done
        );
        // A block still open when the turn was cut has no time of its own: interrupted.
        if let Some(blocks) = stored.thinking.as_mut() {
            blocks[0].duration_ms = None;
        }
        assert_eq!(
            turn_from_version(&stored).blocks[0].status,
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
        assert_eq!(v.status, Some(VersionStatus::NoAnswer));
        let back = turn_from_version(&v);
        assert_eq!(
            back.fallback_text(),
            Some(super::super::turn_state::THOUGHT_NO_ANSWER)
        );
    }

    #[test]
    fn versions_round_trip_with_the_active_one_on_top() {
        let a = version_from_turn(&sample_turn(), 1.0);
        let mut b = a.clone();
        b.content = "second".into();
        let m = assistant_record("m".into(), 0.0, vec![a.clone(), b.clone()], 0);
        assert_eq!(m.content, a.content);
        assert_eq!(versions_of(&m), (vec![a, b], 0));
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
        let record = record_with(vec![assistant_record("m".into(), 0.0, vec![v], 0)]);
        let with = export_markdown(&record, true, Locale::En);
        assert!(
            with.contains("<details>\n<summary>Thought for 4.2s · 3 words</summary>"),
            "{with}"
        );
        assert!(with.contains("let me see"));
        let without = export_markdown(&record, false, Locale::En);
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
        let back = turn_from_version(&v);
        assert_eq!(
            (back.tools.clone(), back.sources.clone()),
            (turn.tools.clone(), turn.sources.clone())
        );
        let record = record_with(vec![assistant_record("m".into(), 0.0, vec![v], 0)]);
        let md = export_markdown(&record, false, Locale::En);
        assert!(
            md.contains("> Tool `web_search` (finished): rust\n"),
            "{md}"
        );
        assert!(
            md.contains("Fast.[^1]\n\n[^1]: [Rust](<https://rust-lang.org/>)"),
            "{md}"
        );
        let json = parse_export(&export_json(&record, false)).unwrap();
        assert_eq!(json.messages[0].sources, turn.sources);
        let import = to_import(&record);
        assert_eq!(import.messages[0].versions[0].tools, turn.tools);
        assert_eq!(import.messages[0].versions[0].sources, turn.sources);
    }

    #[test]
    fn a_json_export_reads_back_as_the_same_record() {
        let v = version_from_turn(&sample_turn(), 6000.0);
        let mut record = record_with(vec![assistant_record("m".into(), 0.0, vec![v], 0)]);
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
            },
            ConversationSummary {
                id: "b".into(),
                title: "b".into(),
                updated_at: 3.0,
            },
        ];
        sort_newest_first(&mut list);
        assert_eq!(list[0].id, "b");
    }
}
