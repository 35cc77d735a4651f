//! The `ponder.chat.v1` record: how a [`SavedChat`] is written as JSON, and how every record
//! written since v1 reads back. Only serialization lives here; the page, the terminal and the
//! exports work on the domain's conversation.
//!
//! The shape: an assistant message carries its shown version at the top level (`content`,
//! `thinking`, `status`, …) and every version under `versions` only when there is more than
//! one; a user message the same way with its edits. A block whose text stays on the server
//! has `remote` instead of text. Fields this version does not know are kept and written back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::SavedChat;
use crate::domain::attachment::FileRef;
use crate::domain::history::{BlockHeader, Conversation, Message, Version, VersionStatus};
use crate::domain::{
    ErrorCode, Failure, ReasoningSettings, Role, SourceRef, ThinkingKind, ToolStep,
};

/// A block whose text stays on the server: its id, loaded when the block opens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Remote {
    id: String,
    words: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    chars: u64,
}

/// One reasoning block as saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Thinking {
    text: String,
    #[serde(default)]
    kind: ThinkingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open: Option<bool>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    cut_short: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    remote: Option<Remote>,
}

/// One version as saved: an answer, or an edit of the reader's text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Saved {
    /// Named apart from the message's `id`, which the top level of a message holds.
    #[serde(
        rename = "version_id",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    id: String,
    content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thinking: Option<Vec<Thinking>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<VersionStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "ErrorCode::is_other")]
    error_code: ErrorCode,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    error_params: BTreeMap<String, String>,
    #[serde(default)]
    created_at: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    settings: ReasoningSettings,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    sources: Vec<SourceRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    files: Vec<FileRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<crate::domain::Usage>,
}

/// One message as saved: its shown version at the top level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct SavedMessage {
    #[serde(default)]
    id: String,
    role: Role,
    #[serde(flatten)]
    shown: Saved,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    versions: Vec<Saved>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    active_version: Option<usize>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// One conversation as saved under `ponder.chat.v1.<id>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Record {
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    workspace_id: String,
    #[serde(default)]
    created_at: f64,
    #[serde(default)]
    updated_at: f64,
    #[serde(default)]
    rev: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    settings: ReasoningSettings,
    messages: Vec<SavedMessage>,
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    earlier: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

fn read_version(v: Saved) -> Version {
    Version {
        id: v.id,
        status: v.status.unwrap_or(VersionStatus::Done),
        error: v.error.map(|message| Failure {
            message,
            retryable: true,
            code: v.error_code,
            params: v.error_params,
        }),
        model: v.model,
        settings: v.settings,
        created_at: v.created_at as i64,
        blocks: v.thinking.into_iter().flatten().map(read_block).collect(),
        tools: v.tools,
        sources: v.sources,
        files: v.files,
        usage: v.usage,
        content: v.content,
        turn: None,
        compared: None,
    }
}

fn read_block(t: Thinking) -> BlockHeader {
    let header = |id: String, words: u64, chars: u64, text: Option<String>| BlockHeader {
        id,
        kind: t.kind,
        duration_ms: t.duration_ms,
        words,
        chars,
        reader_open: t.open,
        interrupted: t.interrupted,
        cut_short: t.cut_short,
        running_ms: None,
        text,
    };
    match t.remote.clone().filter(|_| t.text.is_empty()) {
        Some(r) => header(r.id, r.words, r.chars, None),
        None => header(
            String::new(),
            t.text.split_whitespace().count() as u64,
            t.text.chars().count() as u64,
            Some(t.text.clone()),
        ),
    }
}

fn write_block(b: &BlockHeader) -> Thinking {
    Thinking {
        text: b.text.clone().unwrap_or_default(),
        kind: b.kind,
        duration_ms: b.duration_ms,
        open: b.reader_open,
        interrupted: b.interrupted,
        cut_short: b.cut_short,
        remote: b.text.is_none().then(|| Remote {
            id: b.id.clone(),
            words: b.words,
            chars: b.chars,
        }),
    }
}

fn write_version(v: &Version) -> Saved {
    Saved {
        id: v.id.clone(),
        content: v.content.clone(),
        thinking: (!v.blocks.is_empty()).then(|| v.blocks.iter().map(write_block).collect()),
        status: (v.status != VersionStatus::Done).then_some(v.status),
        error: v.error.as_ref().map(|e| e.message.clone()),
        error_code: v.error.as_ref().map(|e| e.code).unwrap_or_default(),
        error_params: v
            .error
            .as_ref()
            .map(|e| e.params.clone())
            .unwrap_or_default(),
        created_at: v.created_at as f64,
        model: v.model.clone(),
        settings: v.settings,
        tools: v.tools.clone(),
        sources: v.sources.clone(),
        files: v.files.clone(),
        usage: v.usage.clone(),
    }
}

fn read_message(m: SavedMessage) -> (Message, Map<String, Value>) {
    let created_at = m.shown.created_at as i64;
    let (versions, active) = if m.versions.is_empty() {
        (vec![read_version(m.shown)], 0)
    } else {
        let last = m.versions.len() - 1;
        let active = m.active_version.unwrap_or(last).min(last);
        (m.versions.into_iter().map(read_version).collect(), active)
    };
    let message = Message {
        id: m.id,
        role: m.role,
        created_at,
        active,
        versions,
    };
    (message, m.extra)
}

fn write_message(m: &Message, extra: Map<String, Value>) -> SavedMessage {
    let many = m.versions.len() > 1;
    let mut shown = m.shown().map(write_version).unwrap_or_default();
    shown.created_at = m.created_at as f64;
    SavedMessage {
        id: m.id.clone(),
        role: m.role,
        shown,
        versions: if many {
            m.versions.iter().map(write_version).collect()
        } else {
            Vec::new()
        },
        active_version: many.then(|| m.active.min(m.versions.len() - 1)),
        extra,
    }
}

impl From<Record> for SavedChat {
    fn from(r: Record) -> SavedChat {
        let (messages, message_extra): (Vec<_>, Vec<_>) =
            r.messages.into_iter().map(read_message).unzip();
        let saved = SavedChat {
            chat: Conversation {
                id: r.id,
                title: r.title,
                workspace_id: r.workspace_id,
                created_at: r.created_at as i64,
                updated_at: r.updated_at as i64,
                rev: i64::try_from(r.rev).unwrap_or(i64::MAX),
                model: r.model,
                settings: r.settings,
                messages,
                first: r.earlier,
                instructions: r.instructions,
            },
            extra: r.extra,
            message_extra: Vec::new(),
        };
        saved.with_message_extra(message_extra)
    }
}

impl From<SavedChat> for Record {
    fn from(s: SavedChat) -> Record {
        let mut extras = s.message_extra.into_iter();
        let c = s.chat;
        Record {
            messages: c
                .messages
                .iter()
                .map(|m| write_message(m, extras.next().unwrap_or_default()))
                .collect(),
            id: c.id,
            title: c.title,
            workspace_id: c.workspace_id,
            created_at: c.created_at as f64,
            updated_at: c.updated_at as f64,
            rev: c.rev.max(0) as u64,
            model: c.model,
            settings: c.settings,
            earlier: c.first,
            instructions: c.instructions,
            extra: s.extra,
        }
    }
}
