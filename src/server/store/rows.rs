//! The rows the store reads, one struct per shape of `SELECT`, decoded by `sqlx::FromRow` by
//! column name, and turned into the domain's conversation model in one place each. The domain
//! stays free of the database (it builds for the page too); integers are `i64` here because that
//! is what both engines hand back, and become counts and flags only on the way out.

use sqlx::FromRow;

use super::records::Extras;
use crate::domain::history::{
    settings_from_columns, BlockHeader, Conversation, ConversationSummary, Message, Preferences,
    Version, VersionStatus, Workspace,
};
use crate::domain::{Failure, ReasoningSettings};

use super::scope::{kind_of, role_of};

#[derive(FromRow)]
pub(super) struct WorkspaceRow {
    id: String,
    name: String,
}

impl From<WorkspaceRow> for Workspace {
    fn from(r: WorkspaceRow) -> Self {
        Workspace {
            id: r.id,
            name: r.name,
        }
    }
}

#[derive(FromRow)]
pub(super) struct SummaryRow {
    id: String,
    title: String,
    workspace_id: String,
    updated_at: i64,
    deleted_at: Option<i64>,
    pinned_at: Option<i64>,
    tags: Option<String>,
}

impl From<SummaryRow> for ConversationSummary {
    fn from(r: SummaryRow) -> Self {
        ConversationSummary {
            id: r.id,
            title: r.title,
            workspace_id: r.workspace_id,
            updated_at: r.updated_at,
            deleted_at: r.deleted_at,
            pinned: r.pinned_at.is_some(),
            tags: r
                .tags
                .and_then(|t| serde_json::from_str::<Vec<String>>(&t).ok())
                .and_then(|t| crate::domain::history::checked_tags(&t).ok())
                .unwrap_or_default(),
        }
    }
}

#[derive(FromRow)]
pub(super) struct PreferencesRow {
    thinking: Option<String>,
    locale: Option<String>,
    theme: Option<String>,
    default_model: Option<String>,
    titles: Option<String>,
}

impl From<PreferencesRow> for Preferences {
    fn from(r: PreferencesRow) -> Self {
        Preferences {
            thinking: r.thinking,
            locale: r.locale,
            theme: r.theme,
            default_model: r.default_model,
            titles: r.titles,
        }
    }
}

/// The model and reasoning settings as a conversation or a version keeps them.
#[derive(FromRow)]
pub(super) struct SettingsRow {
    pub model: Option<String>,
    thinking: Option<i64>,
    effort: Option<String>,
    temperature: Option<f64>,
    top_p: Option<f64>,
    max_tokens: Option<i64>,
}

impl SettingsRow {
    pub fn settings(&self) -> ReasoningSettings {
        crate::domain::history::Sampled {
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
        }
        .into_settings(settings_from_columns(self.thinking, self.effort.clone()))
    }
}

#[derive(FromRow)]
pub(super) struct ConversationRow {
    id: String,
    title: String,
    workspace_id: String,
    created_at: i64,
    updated_at: i64,
    rev: i64,
    instructions: Option<String>,
    #[sqlx(flatten)]
    settings: SettingsRow,
}

impl ConversationRow {
    /// The conversation with `messages`, the first of which is message `first` of the whole.
    pub fn with(self, messages: Vec<Message>, first: usize) -> Conversation {
        Conversation {
            settings: self.settings.settings(),
            model: self.settings.model,
            id: self.id,
            title: self.title,
            workspace_id: self.workspace_id,
            created_at: self.created_at,
            updated_at: self.updated_at,
            rev: self.rev,
            messages,
            first,
            instructions: self.instructions,
        }
    }
}

#[derive(FromRow)]
pub(super) struct MessageRow {
    pub id: String,
    role: String,
    created_at: i64,
    active_version: i64,
    pub position: i64,
}

impl MessageRow {
    pub fn with(self, versions: Vec<Version>) -> Message {
        Message {
            role: role_of(&self.role),
            created_at: self.created_at,
            active: self.active_version.max(0) as usize,
            versions,
            id: self.id,
        }
    }
}

#[derive(FromRow)]
pub(super) struct VersionRow {
    id: String,
    pub message_id: String,
    content: String,
    status: String,
    error: Option<String>,
    retryable: Option<i64>,
    created_at: i64,
    turn_id: Option<String>,
    extras: Option<String>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    reasoning_tokens: Option<i64>,
    compared: i64,
    picked: i64,
    rating: Option<i64>,
    #[sqlx(flatten)]
    settings: SettingsRow,
}

impl VersionRow {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The version with its thinking blocks. One no longer written has nothing still running:
    /// no block clock, no tool, no turn to follow.
    pub fn with(self, mut blocks: Vec<BlockHeader>) -> Version {
        let status = VersionStatus::parse(&self.status);
        let streaming = status == VersionStatus::Streaming;
        let mut extras = Extras::read(self.extras);
        if !streaming {
            blocks.iter_mut().for_each(|b| b.running_ms = None);
            extras.end_running_tools();
        }
        let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        let usage = crate::domain::Usage {
            input_tokens: count(self.input_tokens),
            output_tokens: count(self.output_tokens),
            reasoning_tokens: count(self.reasoning_tokens),
            file_tokens: extras.file_tokens,
            cached_input_tokens: extras.cached_input_tokens,
            estimated: extras.estimated,
            cost: extras.cost.clone(),
            limit_reached: None,
        };
        Version {
            usage: (!usage.is_empty()).then_some(usage),
            blocks,
            tools: extras.tools,
            sources: extras.sources,
            files: Vec::new(),
            content: self.content,
            turn: self.turn_id.filter(|_| streaming),
            status,
            error: self.error.map(|message| Failure {
                message,
                retryable: self.retryable.is_none_or(|r| r != 0),
                code: extras.error_code,
                params: extras.error_params,
            }),
            settings: self.settings.settings(),
            model: self.settings.model,
            created_at: self.created_at,
            id: self.id,
            compared: (self.compared != 0).then(|| crate::domain::compare::Compared {
                picked: self.picked != 0,
                rating: self.rating.map_or(0, |r| r.signum() as i8),
            }),
        }
    }
}

#[derive(FromRow)]
pub(super) struct BlockRow {
    id: String,
    pub version_id: String,
    kind: String,
    chars: i64,
    words: i64,
    duration_ms: Option<i64>,
    reader_open: Option<i64>,
    interrupted: i64,
    cut_short: i64,
    started_at: Option<i64>,
    text: Option<String>,
}

impl BlockRow {
    /// The block's header; one still being written tells how long it has run at `now`.
    pub fn header(self, now: i64) -> BlockHeader {
        BlockHeader {
            id: self.id,
            kind: kind_of(&self.kind),
            duration_ms: self.duration_ms.map(|d| d.max(0) as u64),
            words: self.words.max(0) as u64,
            chars: self.chars.max(0) as u64,
            reader_open: self.reader_open.map(|v| v != 0),
            interrupted: self.interrupted != 0,
            cut_short: self.cut_short != 0,
            running_ms: match (self.duration_ms, self.started_at) {
                (None, Some(started)) => Some((now - started).max(0) as u64),
                _ => None,
            },
            text: self.text,
        }
    }
}
