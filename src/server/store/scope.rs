//! Everything a user owns, reached only through [`Scoped`], which can only be made from an
//! [`Identity`]: every query below names the user, so another user's conversation, message,
//! block or workspace is simply not found (the same answer as a missing one).

use sqlx::Row;

use super::identity::Identity;
use super::ids::new_id;
use super::index::{unindex, Arg};
use super::{now_ms, Backend, Store, StoreError};
use crate::domain::history::{
    settings_from_columns, BlockHeader, Conversation, ConversationSummary, HitKind, Message, Page,
    Version, VersionStatus, Workspace,
};
use crate::domain::{ErrorCode, Failure, ReasoningSettings, Role, ThinkingKind};

/// The store, as one user sees it.
pub struct Scoped<'s> {
    store: &'s Store,
    user: &'s str,
}

impl Store {
    /// The store as `who` sees it.
    pub fn scoped<'s>(&'s self, who: &'s Identity) -> Scoped<'s> {
        Scoped {
            store: self,
            user: who.user_id(),
        }
    }

    /// Removes for good the conversations deleted before `before` (ms), with their messages,
    /// versions, thinking and search entries. Run by the background purge.
    pub async fn purge_deleted(&self, before: i64) -> Result<u64, StoreError> {
        let mut tx = self.pool().begin().await?;
        unindex(
            &mut tx,
            self.backend(),
            "conversation_id IN \
             (SELECT id FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at < $1)",
            &[Arg::Int(before)],
        )
        .await?;
        let done = sqlx::query(
            "DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at < $1",
        )
        .bind(before)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}

/// One reasoning block as the turn writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockRecord {
    pub kind: ThinkingKind,
    pub text: String,
    pub started_at: Option<i64>,
    pub duration_ms: Option<u64>,
    pub interrupted: bool,
    /// The reader cut the reasoning short ("Answer now").
    pub cut_short: bool,
}

/// The state of an answer being written, saved as the turn streams and at its end.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerRecord {
    pub content: String,
    pub blocks: Vec<BlockRecord>,
    /// The tools the model used and the sources the answer cites.
    pub extras: Extras,
    pub status: VersionStatus,
    pub error: Option<Failure>,
    pub finish_reason: Option<String>,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
}

/// The parts of an answer beside its text and reasoning: the tools the model used, the
/// sources it cites and the code and parameters of its error (whose message and `retryable`
/// have their own columns), stored as one JSON document.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Extras {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<crate::domain::ToolStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<crate::domain::SourceRef>,
    #[serde(default, skip_serializing_if = "ErrorCode::is_other")]
    pub error_code: ErrorCode,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub error_params: std::collections::BTreeMap<String, String>,
}

impl Extras {
    /// The stored document read back; a missing or unreadable one is none (the answer's text
    /// and reasoning still show), and the damage is logged.
    pub fn read(json: Option<String>) -> Extras {
        let Some(json) = json else {
            return Extras::default();
        };
        serde_json::from_str(&json).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "a stored answer's tools and sources are unreadable; shown without them");
            Extras::default()
        })
    }

    /// A version no longer written has no tool still running: one that was (its turn was cut,
    /// or the server stopped) failed.
    pub fn end_running_tools(&mut self) {
        crate::domain::rich::end_running_tools(&mut self.tools);
    }

    /// The document to store, `None` when there is nothing in it.
    pub fn write(&self) -> Option<String> {
        if self.tools.is_empty()
            && self.sources.is_empty()
            && self.error_code.is_other()
            && self.error_params.is_empty()
        {
            return None;
        }
        serde_json::to_string(self).ok()
    }

    /// The same document, with the code and parameters of `error` (none: no error).
    pub fn with_error(&self, error: Option<&Failure>) -> Extras {
        Extras {
            tools: self.tools.clone(),
            sources: self.sources.clone(),
            error_code: error.map(|e| e.code).unwrap_or_default(),
            error_params: error.map(|e| e.params.clone()).unwrap_or_default(),
        }
    }
}

/// Where a turn's answer is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerSlot {
    pub conversation_id: String,
    pub message_id: String,
    pub version_id: String,
    pub version: usize,
}

/// A personal API token as listed (its secret is shown only once, when made).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}

pub(super) fn kind_name(kind: ThinkingKind) -> &'static str {
    kind.label()
}

fn kind_of(name: &str) -> ThinkingKind {
    match name {
        "summary" => ThinkingKind::Summary,
        "redacted" => ThinkingKind::Redacted,
        "hidden" => ThinkingKind::Hidden,
        _ => ThinkingKind::Raw,
    }
}

pub(super) fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

pub(super) fn role_of(name: &str) -> Role {
    if name == "assistant" {
        Role::Assistant
    } else {
        Role::User
    }
}

pub(super) fn words(text: &str) -> i64 {
    text.split_whitespace().count() as i64
}

pub(super) fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    if title.is_empty() {
        "New chat".into()
    } else {
        title
    }
}

impl Scoped<'_> {
    pub(super) fn pool(&self) -> &sqlx::AnyPool {
        self.store.pool()
    }

    pub(super) fn backend(&self) -> super::Backend {
        self.store.backend()
    }

    pub(super) fn user_id(&self) -> &str {
        self.user
    }

    // ---------- workspaces ----------

    pub async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name FROM workspaces WHERE user_id = $1 ORDER BY created_at, id",
        )
        .bind(self.user)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Workspace {
                    id: r.try_get("id")?,
                    name: r.try_get("name")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    /// The user's first workspace, made if they have none.
    pub async fn default_workspace(&self) -> Result<Workspace, StoreError> {
        if let Some(first) = self.workspaces().await?.into_iter().next() {
            return Ok(first);
        }
        self.create_workspace(crate::domain::history::FIRST_WORKSPACE)
            .await
    }

    pub async fn rename_workspace(&self, id: &str, name: &str) -> Result<(), StoreError> {
        let name = clean_name(name)?;
        let done = sqlx::query("UPDATE workspaces SET name = $1 WHERE id = $2 AND user_id = $3")
            .bind(&name)
            .bind(id)
            .bind(self.user)
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }

    pub(super) async fn own_workspace(&self, id: Option<&str>) -> Result<Workspace, StoreError> {
        match id {
            None => self.default_workspace().await,
            Some(id) => self
                .workspaces()
                .await?
                .into_iter()
                .find(|w| w.id == id)
                .ok_or(StoreError::NotFound),
        }
    }

    // ---------- conversations ----------

    /// The conversations of a workspace (the default one when none is named), newest first.
    /// Deleted ones are listed only with `deleted`, for Undo.
    pub async fn conversations(
        &self,
        workspace: Option<&str>,
        deleted: bool,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        let workspace = self.own_workspace(workspace).await?;
        let sql = if deleted {
            "SELECT id, title, workspace_id, updated_at, deleted_at FROM conversations \
             WHERE user_id = $1 AND workspace_id = $2 AND deleted_at IS NOT NULL ORDER BY deleted_at DESC"
        } else {
            "SELECT id, title, workspace_id, updated_at, deleted_at FROM conversations \
             WHERE user_id = $1 AND workspace_id = $2 AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC"
        };
        let rows = sqlx::query(sql)
            .bind(self.user)
            .bind(&workspace.id)
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(ConversationSummary {
                    id: r.try_get("id")?,
                    title: r.try_get("title")?,
                    workspace_id: r.try_get("workspace_id")?,
                    updated_at: r.try_get("updated_at")?,
                    deleted_at: r.try_get("deleted_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    pub async fn create_conversation(
        &self,
        workspace: Option<&str>,
        title: &str,
    ) -> Result<ConversationSummary, StoreError> {
        let workspace = self.own_workspace(workspace).await?;
        let id = new_id();
        let now = now_ms();
        let title = title_from(title);
        sqlx::query(
            "INSERT INTO conversations (id, user_id, workspace_id, title, created_at, updated_at, rev) \
             VALUES ($1, $2, $3, $4, $5, $5, 0)",
        )
        .bind(&id)
        .bind(self.user)
        .bind(&workspace.id)
        .bind(&title)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(ConversationSummary {
            id,
            title,
            workspace_id: workspace.id,
            updated_at: now,
            deleted_at: None,
        })
    }

    /// Marks the conversation changed (its place in the list, its revision), inside the
    /// caller's transaction.
    async fn touch_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE conversations SET updated_at = $1, rev = rev + 1 WHERE id = $2 AND user_id = $3")
            .bind(now_ms())
            .bind(conversation)
            .bind(self.user)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    pub async fn rename_conversation(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(StoreError::Conflict("a title cannot be empty".into()));
        }
        let title: String = title.chars().take(200).collect();
        let done = sqlx::query(
            "UPDATE conversations SET title = $1, updated_at = $2, rev = rev + 1 WHERE id = $3 AND user_id = $4 AND deleted_at IS NULL",
        )
        .bind(&title)
        .bind(now_ms())
        .bind(id)
        .bind(self.user)
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// Deletes a conversation, restorable until the purge; returns when it was deleted.
    pub async fn delete_conversation(&self, id: &str) -> Result<i64, StoreError> {
        let now = now_ms();
        let done = sqlx::query(
            "UPDATE conversations SET deleted_at = $1 WHERE id = $2 AND user_id = $3 AND deleted_at IS NULL",
        )
        .bind(now)
        .bind(id)
        .bind(self.user)
        .execute(self.pool())
        .await?;
        found(done.rows_affected()).map(|()| now)
    }

    pub async fn restore_conversation(&self, id: &str) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE conversations SET deleted_at = NULL, updated_at = $1 WHERE id = $2 AND user_id = $3 AND deleted_at IS NOT NULL",
        )
        .bind(now_ms())
        .bind(id)
        .bind(self.user)
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// A conversation with its messages, every version and the block headers, but no
    /// reasoning text (`with_text` for exports).
    pub async fn conversation(
        &self,
        id: &str,
        with_text: bool,
    ) -> Result<Conversation, StoreError> {
        self.conversation_page(id, with_text, Page::default()).await
    }

    /// The messages of `page` of a conversation (all of them by default), so a long one
    /// opens on its last messages and loads earlier ones as the reader scrolls up to them.
    pub async fn conversation_page(
        &self,
        id: &str,
        with_text: bool,
        page: Page,
    ) -> Result<Conversation, StoreError> {
        let head = sqlx::query(
            "SELECT id, title, workspace_id, created_at, updated_at, rev, model, thinking, effort FROM conversations \
             WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(self.user)
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        let all = sqlx::query(
            "SELECT id, role, created_at, active_version, position FROM messages WHERE conversation_id = $1 AND user_id = $2 ORDER BY position",
        )
        .bind(id)
        .bind(self.user)
        .fetch_all(self.pool())
        .await?;
        let (first, end) = page.range(all.len());
        let messages = &all[first..end];
        let (low, high) = match (messages.first(), messages.last()) {
            (Some(a), Some(b)) => (
                a.try_get::<i64, _>("position")?,
                b.try_get::<i64, _>("position")?,
            ),
            _ => (0, -1),
        };
        let versions = sqlx::query(
            "SELECT v.id, v.message_id, v.idx, v.content, v.status, v.error, v.retryable, v.model, v.thinking, v.effort, v.created_at, v.turn_id, v.extras \
             FROM message_versions v JOIN messages m ON m.id = v.message_id \
             WHERE m.conversation_id = $1 AND v.user_id = $2 AND m.position BETWEEN $3 AND $4 \
             ORDER BY v.message_id, v.idx",
        )
        .bind(id)
        .bind(self.user)
        .bind(low)
        .bind(high)
        .fetch_all(self.pool())
        .await?;
        let text_column = if with_text { "b.text" } else { "NULL" };
        let blocks = sqlx::query(&format!(
            "SELECT b.id, b.version_id, b.idx, b.kind, b.chars, b.words, b.duration_ms, b.reader_open, b.interrupted, b.cut_short, b.started_at, {text_column} AS text \
             FROM thinking_blocks b JOIN message_versions v ON v.id = b.version_id JOIN messages m ON m.id = v.message_id \
             WHERE m.conversation_id = $1 AND b.user_id = $2 AND m.position BETWEEN $3 AND $4 \
             ORDER BY b.version_id, b.idx"
        ))
        .bind(id)
        .bind(self.user)
        .bind(low)
        .bind(high)
        .fetch_all(self.pool())
        .await?;

        let mut by_version: std::collections::HashMap<String, Vec<BlockHeader>> =
            Default::default();
        let now = now_ms();
        for b in &blocks {
            let version: String = b.try_get("version_id")?;
            let duration: Option<i64> = b.try_get("duration_ms")?;
            let text: Option<String> = b.try_get("text")?;
            by_version.entry(version).or_default().push(BlockHeader {
                id: b.try_get("id")?,
                kind: kind_of(&b.try_get::<String, _>("kind")?),
                duration_ms: duration.map(|d| d.max(0) as u64),
                words: b.try_get::<i64, _>("words")?.max(0) as u64,
                chars: b.try_get::<i64, _>("chars")?.max(0) as u64,
                reader_open: b.try_get::<Option<i64>, _>("reader_open")?.map(|v| v != 0),
                interrupted: b.try_get::<i64, _>("interrupted")? != 0,
                cut_short: b.try_get::<i64, _>("cut_short")? != 0,
                running_ms: match (duration, b.try_get::<Option<i64>, _>("started_at")?) {
                    (None, Some(started)) => Some((now - started).max(0) as u64),
                    _ => None,
                },
                text,
            });
        }
        let mut by_message: std::collections::HashMap<String, Vec<Version>> = Default::default();
        for v in &versions {
            let message: String = v.try_get("message_id")?;
            let id: String = v.try_get("id")?;
            let error: Option<String> = v.try_get("error")?;
            let retryable: Option<i64> = v.try_get("retryable")?;
            let status = VersionStatus::parse(&v.try_get::<String, _>("status")?);
            let mut blocks = by_version.remove(&id).unwrap_or_default();
            if status != VersionStatus::Streaming {
                for b in &mut blocks {
                    b.running_ms = None;
                }
            }
            let mut extras = Extras::read(v.try_get("extras")?);
            if status != VersionStatus::Streaming {
                extras.end_running_tools();
            }
            by_message.entry(message).or_default().push(Version {
                blocks,
                tools: extras.tools,
                sources: extras.sources,
                id,
                content: v.try_get("content")?,
                turn: if status == VersionStatus::Streaming {
                    v.try_get("turn_id")?
                } else {
                    None
                },
                status,
                error: error.map(|message| Failure {
                    message,
                    retryable: retryable.is_none_or(|r| r != 0),
                    code: extras.error_code,
                    params: extras.error_params,
                }),
                model: v.try_get("model")?,
                settings: settings_from_columns(v.try_get("thinking")?, v.try_get("effort")?),
                created_at: v.try_get("created_at")?,
            });
        }
        let messages = messages
            .iter()
            .map(|m| {
                let id: String = m.try_get("id")?;
                Ok(Message {
                    role: role_of(&m.try_get::<String, _>("role")?),
                    created_at: m.try_get("created_at")?,
                    active: m.try_get::<i64, _>("active_version")?.max(0) as usize,
                    versions: by_message.remove(&id).unwrap_or_default(),
                    id,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        Ok(Conversation {
            id: head.try_get("id")?,
            title: head.try_get("title")?,
            workspace_id: head.try_get("workspace_id")?,
            created_at: head.try_get("created_at")?,
            updated_at: head.try_get("updated_at")?,
            rev: head.try_get("rev")?,
            model: head.try_get("model")?,
            settings: settings_from_columns(head.try_get("thinking")?, head.try_get("effort")?),
            messages,
            first,
        })
    }

    /// The model and reasoning settings a conversation's last turn used.
    pub async fn conversation_model(
        &self,
        id: &str,
    ) -> Result<(Option<String>, ReasoningSettings), StoreError> {
        let row = sqlx::query(
            "SELECT model, thinking, effort FROM conversations WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(self.user)
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        Ok((
            row.try_get("model")?,
            settings_from_columns(row.try_get("thinking")?, row.try_get("effort")?),
        ))
    }

    /// A block's reasoning text, loaded when the reader opens it.
    pub async fn block_text(&self, block: &str) -> Result<String, StoreError> {
        let row = sqlx::query("SELECT text FROM thinking_blocks WHERE id = $1 AND user_id = $2")
            .bind(block)
            .bind(self.user)
            .fetch_optional(self.pool())
            .await?
            .ok_or(StoreError::NotFound)?;
        Ok(row.try_get("text")?)
    }

    /// Keeps the reader's open/closed choice for a block.
    pub async fn set_block_open(&self, block: &str, open: Option<bool>) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE thinking_blocks SET reader_open = $1 WHERE id = $2 AND user_id = $3",
        )
        .bind(open.map(i64::from))
        .bind(block)
        .bind(self.user)
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// Keeps the reader's choice for the block at `index` of version `version` of `message`
    /// (a block streamed on the page does not know its id).
    pub async fn set_block_open_at(
        &self,
        message: &str,
        version: usize,
        index: usize,
        open: Option<bool>,
    ) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE thinking_blocks SET reader_open = $1 WHERE user_id = $2 AND idx = $3 AND version_id = \
             (SELECT id FROM message_versions WHERE message_id = $4 AND idx = $5 AND user_id = $2)",
        )
        .bind(open.map(i64::from))
        .bind(self.user)
        .bind(index as i64)
        .bind(message)
        .bind(version as i64)
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }

    /// Shows another version of a message.
    pub async fn set_active_version(
        &self,
        message: &str,
        version: usize,
    ) -> Result<(), StoreError> {
        let count = sqlx::query(
            "SELECT COUNT(*) AS n FROM message_versions WHERE message_id = $1 AND user_id = $2",
        )
        .bind(message)
        .bind(self.user)
        .fetch_one(self.pool())
        .await?
        .try_get::<i64, _>("n")?;
        if count == 0 {
            return Err(StoreError::NotFound);
        }
        if version as i64 >= count {
            return Err(StoreError::Conflict(format!(
                "that message has {count} versions"
            )));
        }
        sqlx::query("UPDATE messages SET active_version = $1 WHERE id = $2 AND user_id = $3")
            .bind(version as i64)
            .bind(message)
            .bind(self.user)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    // ---------- turns ----------

    pub(super) async fn message_position(
        &self,
        conversation: &str,
        message: &str,
    ) -> Result<(i64, Role), StoreError> {
        let row = sqlx::query("SELECT position, role FROM messages WHERE id = $1 AND conversation_id = $2 AND user_id = $3")
            .bind(message)
            .bind(conversation)
            .bind(self.user)
            .fetch_optional(self.pool())
            .await?
            .ok_or(StoreError::NotFound)?;
        Ok((
            row.try_get("position")?,
            role_of(&row.try_get::<String, _>("role")?),
        ))
    }

    async fn owns_conversation(&self, conversation: &str) -> Result<(), StoreError> {
        sqlx::query(
            "SELECT id FROM conversations WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL",
        )
        .bind(conversation)
        .bind(self.user)
        .fetch_optional(self.pool())
        .await?
        .map(|_| ())
        .ok_or(StoreError::NotFound)
    }

    /// Removes at once a conversation this request has just made, when the turn it was made for
    /// could not be stored whole: a failed turn leaves no empty conversation behind.
    pub async fn discard_conversation(&self, conversation: &str) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        unindex(
            &mut tx,
            self.backend(),
            "conversation_id = $1 AND user_id = $2",
            &[Arg::Text(conversation), Arg::Text(self.user)],
        )
        .await?;
        sqlx::query("DELETE FROM conversations WHERE id = $1 AND user_id = $2")
            .bind(conversation)
            .bind(self.user)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Removes at once messages this request has just added, for the same reason.
    pub async fn discard_messages(
        &self,
        conversation: &str,
        messages: &[&str],
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        for message in messages {
            unindex(
                &mut tx,
                self.backend(),
                "message_id = $1 AND user_id = $2",
                &[Arg::Text(message), Arg::Text(self.user)],
            )
            .await?;
            sqlx::query(
                "DELETE FROM messages WHERE id = $1 AND conversation_id = $2 AND user_id = $3",
            )
            .bind(*message)
            .bind(conversation)
            .bind(self.user)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Stores the reader's message at the end of the conversation, or as a new version of the
    /// message `edit_of` (what followed it is dropped: history stays linear). Returns its id.
    pub async fn add_user_message(
        &self,
        conversation: &str,
        content: &str,
        edit_of: Option<&str>,
    ) -> Result<String, StoreError> {
        self.owns_conversation(conversation).await?;
        let now = now_ms();
        let mut tx = self.pool().begin().await?;
        lock_conversation(&mut tx, conversation).await?;
        let message_id = match edit_of {
            Some(message) => {
                let (position, role) = self.message_position(conversation, message).await?;
                if role != Role::User {
                    return Err(StoreError::Conflict(
                        "only your own messages can be edited".into(),
                    ));
                }
                let next =
                    sqlx::query("SELECT COUNT(*) AS n FROM message_versions WHERE message_id = $1")
                        .bind(message)
                        .fetch_one(&mut *tx)
                        .await?
                        .try_get::<i64, _>("n")?;
                insert_version(
                    &mut tx,
                    message,
                    self.user,
                    next,
                    content,
                    VersionStatus::Done,
                    now,
                )
                .await?;
                sqlx::query("UPDATE messages SET active_version = $1 WHERE id = $2")
                    .bind(next)
                    .bind(message)
                    .execute(&mut *tx)
                    .await?;
                unindex(
                    &mut tx,
                    self.backend(),
                    "message_id IN \
                     (SELECT id FROM messages WHERE conversation_id = $1 AND position > $2)",
                    &[Arg::Text(conversation), Arg::Int(position)],
                )
                .await?;
                sqlx::query("DELETE FROM messages WHERE conversation_id = $1 AND position > $2")
                    .bind(conversation)
                    .bind(position)
                    .execute(&mut *tx)
                    .await?;
                message.to_string()
            }
            None => {
                let id = new_id();
                insert_message(&mut tx, conversation, self.user, &id, Role::User, now).await?;
                insert_version(
                    &mut tx,
                    &id,
                    self.user,
                    0,
                    content,
                    VersionStatus::Done,
                    now,
                )
                .await?;
                id
            }
        };
        self.index_in(
            &mut tx,
            &message_id,
            &message_id,
            HitKind::Question,
            conversation,
            content,
        )
        .await?;
        self.touch_in(&mut tx, conversation).await?;
        tx.commit().await?;
        Ok(message_id)
    }

    /// Opens the answer to the conversation's last message, or a new version of the assistant
    /// message `regenerate` (earlier versions are kept).
    pub async fn start_answer(
        &self,
        conversation: &str,
        regenerate: Option<&str>,
        model: &str,
        settings: ReasoningSettings,
        turn: Option<&str>,
    ) -> Result<AnswerSlot, StoreError> {
        self.owns_conversation(conversation).await?;
        let now = now_ms();
        let mut tx = self.pool().begin().await?;
        lock_conversation(&mut tx, conversation).await?;
        let (message_id, version) = match regenerate {
            Some(message) => {
                let (_, role) = self.message_position(conversation, message).await?;
                if role != Role::Assistant {
                    return Err(StoreError::Conflict(
                        "only an answer can be regenerated".into(),
                    ));
                }
                let next =
                    sqlx::query("SELECT COUNT(*) AS n FROM message_versions WHERE message_id = $1")
                        .bind(message)
                        .fetch_one(&mut *tx)
                        .await?
                        .try_get::<i64, _>("n")?;
                sqlx::query("UPDATE messages SET active_version = $1 WHERE id = $2")
                    .bind(next)
                    .bind(message)
                    .execute(&mut *tx)
                    .await?;
                (message.to_string(), next)
            }
            None => {
                let id = new_id();
                insert_message(&mut tx, conversation, self.user, &id, Role::Assistant, now).await?;
                (id, 0)
            }
        };
        let version_id = insert_version(
            &mut tx,
            &message_id,
            self.user,
            version,
            "",
            VersionStatus::Streaming,
            now,
        )
        .await?;
        let thinking = settings.thinking.map(i64::from);
        let effort = settings.effort.map(|e| e.as_str());
        sqlx::query(
            "UPDATE message_versions SET model = $1, thinking = $2, effort = $3, turn_id = $5 WHERE id = $4",
        )
        .bind(model)
        .bind(thinking)
        .bind(effort)
        .bind(&version_id)
        .bind(turn)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE conversations SET model = $1, thinking = $2, effort = $3 WHERE id = $4 AND user_id = $5",
        )
        .bind(model)
        .bind(thinking)
        .bind(effort)
        .bind(conversation)
        .bind(self.user)
        .execute(&mut *tx)
        .await?;
        self.touch_in(&mut tx, conversation).await?;
        tx.commit().await?;
        Ok(AnswerSlot {
            conversation_id: conversation.to_string(),
            message_id,
            version_id,
            version: version as usize,
        })
    }

    /// Writes an answer's state as it streams and at its end; a final state also enters the
    /// search index.
    pub async fn save_answer(
        &self,
        slot: &AnswerSlot,
        answer: &AnswerRecord,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        if answer.status == VersionStatus::Streaming && self.store.backend() == Backend::Postgres {
            // A state the next second overwrites need not wait for the disk; the final one does.
            sqlx::query("SET LOCAL synchronous_commit = off")
                .execute(&mut *tx)
                .await?;
        }
        let done = sqlx::query(
            "UPDATE message_versions SET content = $1, status = $2, error = $3, retryable = $4, finish_reason = $5, \
             input_tokens = $6, output_tokens = $7, reasoning_tokens = $8, extras = $11 WHERE id = $9 AND user_id = $10",
        )
        .bind(&answer.content)
        .bind(answer.status.name())
        .bind(answer.error.as_ref().map(|e| e.message.as_str()))
        .bind(answer.error.as_ref().map(|e| i64::from(e.retryable)))
        .bind(answer.finish_reason.as_deref())
        .bind(answer.input_tokens.map(|n| n as i64))
        .bind(answer.output_tokens.map(|n| n as i64))
        .bind(answer.reasoning_tokens.map(|n| n as i64))
        .bind(&slot.version_id)
        .bind(self.user)
        .bind(answer.extras.with_error(answer.error.as_ref()).write())
        .execute(&mut *tx)
        .await?;
        found(done.rows_affected())?;
        for (idx, block) in answer.blocks.iter().enumerate() {
            let updated = sqlx::query(
                "UPDATE thinking_blocks SET kind = $1, text = $2, chars = $3, words = $4, started_at = $5, duration_ms = $6, interrupted = $7, cut_short = $10 \
                 WHERE version_id = $8 AND idx = $9",
            )
            .bind(kind_name(block.kind))
            .bind(&block.text)
            .bind(block.text.chars().count() as i64)
            .bind(words(&block.text))
            .bind(block.started_at)
            .bind(block.duration_ms.map(|d| d as i64))
            .bind(i64::from(block.interrupted))
            .bind(&slot.version_id)
            .bind(idx as i64)
            .bind(i64::from(block.cut_short))
            .execute(&mut *tx)
            .await?;
            if updated.rows_affected() == 0 {
                sqlx::query(
                    "INSERT INTO thinking_blocks (id, version_id, user_id, idx, kind, text, chars, words, started_at, duration_ms, interrupted, cut_short) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
                )
                .bind(new_id())
                .bind(&slot.version_id)
                .bind(self.user)
                .bind(idx as i64)
                .bind(kind_name(block.kind))
                .bind(&block.text)
                .bind(block.text.chars().count() as i64)
                .bind(words(&block.text))
                .bind(block.started_at)
                .bind(block.duration_ms.map(|d| d as i64))
                .bind(i64::from(block.interrupted))
                .bind(i64::from(block.cut_short))
                .execute(&mut *tx)
                .await?;
            }
        }
        if answer.status != VersionStatus::Streaming {
            self.index_in(
                &mut tx,
                &slot.version_id,
                &slot.message_id,
                HitKind::Answer,
                &slot.conversation_id,
                &answer.content,
            )
            .await?;
            let ids = sqlx::query(
                "SELECT id, text FROM thinking_blocks WHERE version_id = $1 AND user_id = $2",
            )
            .bind(&slot.version_id)
            .bind(self.user)
            .fetch_all(&mut *tx)
            .await?;
            for row in ids {
                let id: String = row.try_get("id")?;
                let text: String = row.try_get("text")?;
                self.index_in(
                    &mut tx,
                    &id,
                    &slot.message_id,
                    HitKind::Thinking,
                    &slot.conversation_id,
                    &text,
                )
                .await?;
            }
            self.touch_in(&mut tx, &slot.conversation_id).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    // ---------- tokens and sessions ----------

    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, created_at, last_used_at FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at",
        )
        .bind(self.user)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(TokenInfo {
                    id: r.try_get("id")?,
                    name: r.try_get("name")?,
                    created_at: r.try_get("created_at")?,
                    last_used_at: r.try_get("last_used_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    pub async fn revoke_token(&self, id: &str) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL")
            .bind(now_ms())
            .bind(id)
            .bind(self.user)
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }

    /// Ends every session of the user, on every device, and revokes every API token they made:
    /// signing out everywhere is what one does after losing a device or a secret, and a token
    /// is as good as a session to whoever holds it.
    pub async fn sign_out_everywhere(&self) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        for table in ["sessions", "api_tokens"] {
            sqlx::query(&format!(
                "UPDATE {table} SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL"
            ))
            .bind(now_ms())
            .bind(self.user)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    // ---------- preferences ----------

    /// The thinking preference, locale, theme and default model for a workspace.
    pub async fn preferences(&self, workspace: Option<&str>) -> Result<Preferences, StoreError> {
        let workspace = self.own_workspace(workspace).await?.id;
        let row = sqlx::query(
            "SELECT thinking, locale, theme, default_model FROM preferences WHERE user_id = $1 AND workspace_id = $2",
        )
        .bind(self.user)
        .bind(&workspace)
        .fetch_optional(self.pool())
        .await?;
        Ok(match row {
            None => Preferences::default(),
            Some(r) => Preferences {
                thinking: r.try_get("thinking")?,
                locale: r.try_get("locale")?,
                theme: r.try_get("theme")?,
                default_model: r.try_get("default_model")?,
            },
        })
    }

    pub async fn set_preferences(
        &self,
        workspace: Option<&str>,
        prefs: &Preferences,
    ) -> Result<(), StoreError> {
        if !prefs.is_valid() {
            return Err(StoreError::Conflict(
                "a preference is 1 to 64 characters, with no control characters".into(),
            ));
        }
        let workspace = self.own_workspace(workspace).await?.id;
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM preferences WHERE user_id = $1 AND workspace_id = $2")
            .bind(self.user)
            .bind(&workspace)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO preferences (user_id, workspace_id, thinking, locale, theme, default_model) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(self.user)
        .bind(&workspace)
        .bind(prefs.thinking.as_deref())
        .bind(prefs.locale.as_deref())
        .bind(prefs.theme.as_deref())
        .bind(prefs.default_model.as_deref())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

pub use crate::domain::history::Preferences;

pub(super) fn clean_name(name: &str) -> Result<String, StoreError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 || name.chars().any(char::is_control) {
        return Err(StoreError::Conflict(
            "a name is 1 to 80 characters, with no control characters".into(),
        ));
    }
    Ok(name.to_string())
}

fn found(rows: u64) -> Result<(), StoreError> {
    if rows == 0 {
        Err(StoreError::NotFound)
    } else {
        Ok(())
    }
}

/// Takes the conversation's write lock for the rest of the transaction (a row lock on
/// PostgreSQL, the database's write lock on SQLite), so two replicas adding to one conversation
/// at once take turns instead of both reading the same last position.
async fn lock_conversation(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    conversation: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE conversations SET rev = rev WHERE id = $1")
        .bind(conversation)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

async fn insert_message(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    conversation: &str,
    user: &str,
    id: &str,
    role: Role,
    now: i64,
) -> Result<(), StoreError> {
    let next = sqlx::query(
        "SELECT COALESCE(MAX(position), -1) + 1 AS next FROM messages WHERE conversation_id = $1",
    )
    .bind(conversation)
    .fetch_one(&mut **tx)
    .await?
    .try_get::<i64, _>("next")?;
    sqlx::query(
        "INSERT INTO messages (id, conversation_id, user_id, position, role, active_version, created_at) VALUES ($1, $2, $3, $4, $5, 0, $6)",
    )
    .bind(id)
    .bind(conversation)
    .bind(user)
    .bind(next)
    .bind(role_name(role))
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(super) async fn insert_version(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    message: &str,
    user: &str,
    idx: i64,
    content: &str,
    status: VersionStatus,
    now: i64,
) -> Result<String, StoreError> {
    let id = new_id();
    sqlx::query(
        "INSERT INTO message_versions (id, message_id, user_id, idx, content, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(message)
    .bind(user)
    .bind(idx)
    .bind(content)
    .bind(status.name())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}
