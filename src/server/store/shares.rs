//! Links that show a snapshot of a conversation to whoever has them. The owner makes, lists,
//! updates and revokes them through their scope; the admin lists and revokes every one; a
//! visitor reaches one only by its token, which is kept as its digest, so a link that was
//! revoked, deleted with its conversation or never made answers the same "not found".

use super::attachments::AttachmentInfo;
use super::identity::Identity;
use super::ids::{digest, new_id, strong_secret};
use super::scope::{found, Scoped};
use super::{now_ms, Store, StoreError};
use crate::domain::history::Conversation;
use crate::domain::share::{snapshot, ShareChoice, ShareLink};

/// The most links one conversation keeps: enough for every reader it is sent to, not a table
/// that grows without bound.
pub const MAX_LINKS_PER_CONVERSATION: i64 = 50;

/// A link opened by its token: the snapshot, what it includes, and whose files it shows.
#[derive(Debug)]
pub struct Opened {
    pub snapshot: Conversation,
    pub choice: ShareChoice,
    /// The snapshot's formulas and code as the server typeset them (JSON of
    /// [`crate::server::dress::Dressing`]).
    pub dressing: String,
    owner: String,
    files: Vec<String>,
}

impl Opened {
    /// The number of files the snapshot shows.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }
}

#[derive(sqlx::FromRow)]
struct LinkRow {
    id: String,
    conversation_id: String,
    title: String,
    thinking: i64,
    files: i64,
    instructions: i64,
    messages: i64,
    created_at: i64,
    updated_at: i64,
    owner: Option<String>,
}

impl LinkRow {
    fn link(self) -> ShareLink {
        ShareLink {
            id: self.id,
            conversation_id: self.conversation_id,
            title: self.title,
            choice: ShareChoice {
                thinking: self.thinking != 0,
                files: self.files != 0,
                instructions: self.instructions != 0,
            },
            created_at: self.created_at,
            updated_at: self.updated_at,
            messages: usize::try_from(self.messages).unwrap_or(0),
            owner: self.owner,
            url: None,
        }
    }
}

const LINK_COLUMNS: &str =
    "s.id, s.conversation_id, s.title, s.thinking, s.files, s.instructions, s.messages, \
     s.created_at, s.updated_at";

/// What a snapshot is stored as.
struct Taken {
    title: String,
    messages: i64,
    snapshot: String,
    file_ids: String,
}

impl Scoped<'_> {
    async fn take_snapshot(
        &self,
        conversation_id: &str,
        choice: ShareChoice,
        now: i64,
    ) -> Result<Taken, StoreError> {
        let conversation = self.conversation(conversation_id, true).await?;
        let (shot, files) = snapshot(&conversation, choice, now);
        Ok(Taken {
            title: crate::domain::history::TitleMark::strip(&shot.title),
            messages: shot.messages.len() as i64,
            snapshot: to_json(&shot)?,
            file_ids: to_json(&files)?,
        })
    }

    /// A new link to the conversation as it is now shown (the versions on screen), and its
    /// token, which is returned this once.
    pub async fn share(
        &self,
        conversation_id: &str,
        choice: ShareChoice,
    ) -> Result<(ShareLink, String), StoreError> {
        let (count,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM shares WHERE conversation_id = $1 AND user_id = $2",
        )
        .bind(conversation_id)
        .bind(self.user_id())
        .fetch_one(self.pool())
        .await?;
        if count >= MAX_LINKS_PER_CONVERSATION {
            return Err(StoreError::Conflict(format!(
                "a conversation keeps at most {MAX_LINKS_PER_CONVERSATION} links; revoke one first"
            )));
        }
        let now = now_ms();
        let taken = self.take_snapshot(conversation_id, choice, now).await?;
        let token = strong_secret().ok_or_else(|| {
            StoreError::Unavailable("the system gave no randomness for a link".into())
        })?;
        let id = new_id();
        sqlx::query(
            "INSERT INTO shares (id, token_hash, user_id, conversation_id, thinking, files, title, \
             messages, snapshot, file_ids, created_at, updated_at, instructions) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)",
        )
        .bind(&id)
        .bind(digest(&token))
        .bind(self.user_id())
        .bind(conversation_id)
        .bind(i64::from(choice.thinking))
        .bind(i64::from(choice.files))
        .bind(&taken.title)
        .bind(taken.messages)
        .bind(&taken.snapshot)
        .bind(&taken.file_ids)
        .bind(now)
        .bind(i64::from(choice.instructions))
        .execute(self.pool())
        .await?;
        Ok((self.share_link(&id).await?, token))
    }

    /// Takes the link's snapshot again (with `choice`): the same address now shows the
    /// conversation as it is shown now.
    pub async fn update_share(
        &self,
        id: &str,
        choice: ShareChoice,
    ) -> Result<ShareLink, StoreError> {
        let link = self.share_link(id).await?;
        let now = now_ms();
        let taken = self
            .take_snapshot(&link.conversation_id, choice, now)
            .await?;
        let done = sqlx::query(
            "UPDATE shares SET thinking = $1, files = $2, title = $3, messages = $4, snapshot = $5, \
             file_ids = $6, updated_at = $7, dressing = '{}', instructions = $10 \
             WHERE id = $8 AND user_id = $9",
        )
        .bind(i64::from(choice.thinking))
        .bind(i64::from(choice.files))
        .bind(&taken.title)
        .bind(taken.messages)
        .bind(&taken.snapshot)
        .bind(&taken.file_ids)
        .bind(now)
        .bind(id)
        .bind(self.user_id())
        .bind(i64::from(choice.instructions))
        .execute(self.pool())
        .await?;
        found(done.rows_affected())?;
        self.share_link(id).await
    }

    async fn share_link(&self, id: &str) -> Result<ShareLink, StoreError> {
        let row: LinkRow = sqlx::query_as(&format!(
            "SELECT {LINK_COLUMNS}, NULL AS owner FROM shares s WHERE s.id = $1 AND s.user_id = $2"
        ))
        .bind(id)
        .bind(self.user_id())
        .fetch_optional(self.pool())
        .await?
        .ok_or(StoreError::NotFound)?;
        Ok(row.link())
    }

    /// The snapshot a link of the user's shows.
    pub async fn share_snapshot(&self, id: &str) -> Result<Conversation, StoreError> {
        let (shot,): (String,) =
            sqlx::query_as("SELECT snapshot FROM shares WHERE id = $1 AND user_id = $2")
                .bind(id)
                .bind(self.user_id())
                .fetch_optional(self.pool())
                .await?
                .ok_or(StoreError::NotFound)?;
        serde_json::from_str(&shot)
            .map_err(|e| StoreError::Unavailable(format!("a snapshot does not read back: {e}")))
    }

    /// Keeps the snapshot's typeset formulas and highlighted code (JSON) with the link.
    pub async fn set_share_dressing(&self, id: &str, dressing: &str) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE shares SET dressing = $1 WHERE id = $2 AND user_id = $3")
            .bind(dressing)
            .bind(id)
            .bind(self.user_id())
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }

    /// The user's links to one conversation (every one of theirs without it), newest first.
    pub async fn shares(
        &self,
        conversation_id: Option<&str>,
    ) -> Result<Vec<ShareLink>, StoreError> {
        let rows: Vec<LinkRow> = match conversation_id {
            Some(conversation) => sqlx::query_as(&format!(
                "SELECT {LINK_COLUMNS}, NULL AS owner FROM shares s \
                 WHERE s.user_id = $1 AND s.conversation_id = $2 ORDER BY s.created_at DESC, s.id DESC"
            ))
            .bind(self.user_id())
            .bind(conversation)
            .fetch_all(self.pool())
            .await?,
            None => sqlx::query_as(&format!(
                "SELECT {LINK_COLUMNS}, NULL AS owner FROM shares s \
                 WHERE s.user_id = $1 ORDER BY s.created_at DESC, s.id DESC"
            ))
            .bind(self.user_id())
            .fetch_all(self.pool())
            .await?,
        };
        Ok(rows.into_iter().map(LinkRow::link).collect())
    }

    /// Revokes a link for good: its address answers "not found" from now on.
    pub async fn revoke_share(&self, id: &str) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM shares WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(self.user_id())
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }
}

impl Store {
    /// Every link on the server, with its owner's name (the admin's list; anyone else is
    /// told the list is not found).
    pub async fn all_shares(&self, admin: &Identity) -> Result<Vec<ShareLink>, StoreError> {
        if !admin.user().is_admin {
            return Err(StoreError::NotFound);
        }
        let rows: Vec<LinkRow> = sqlx::query_as(&format!(
            "SELECT {LINK_COLUMNS}, u.name AS owner FROM shares s JOIN users u ON u.id = s.user_id \
             ORDER BY s.created_at DESC, s.id DESC LIMIT 1000"
        ))
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(LinkRow::link).collect())
    }

    /// Revokes anyone's link (the admin only).
    pub async fn revoke_any_share(&self, admin: &Identity, id: &str) -> Result<(), StoreError> {
        if !admin.user().is_admin {
            return Err(StoreError::NotFound);
        }
        let done = sqlx::query("DELETE FROM shares WHERE id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }

    /// The link a token opens: not found when it was never made, was revoked, or its
    /// conversation was deleted (the same answer for each). A snapshot that does not read back
    /// (a corrupt row) is not found either, and logged.
    pub async fn open_share(&self, token: &str) -> Result<Opened, StoreError> {
        if token.is_empty() || token.len() > 100 {
            return Err(StoreError::NotFound);
        }
        let row: Option<(String, i64, i64, String, String, String)> = sqlx::query_as(
            "SELECT s.user_id, s.thinking, s.files, s.snapshot, s.file_ids, s.dressing FROM shares s \
             JOIN conversations c ON c.id = s.conversation_id \
             WHERE s.token_hash = $1 AND c.deleted_at IS NULL",
        )
        .bind(digest(token))
        .fetch_optional(self.pool())
        .await?;
        let (owner, thinking, files, shot, file_ids, dressing) = row.ok_or(StoreError::NotFound)?;
        let read = serde_json::from_str::<Conversation>(&shot)
            .and_then(|shot| Ok((shot, serde_json::from_str::<Vec<String>>(&file_ids)?)));
        match read {
            Ok((snapshot, files_shown)) => Ok(Opened {
                choice: ShareChoice {
                    thinking: thinking != 0,
                    files: files != 0,
                    instructions: snapshot.instructions.is_some(),
                },
                snapshot,
                dressing,
                owner,
                files: files_shown,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "a shared link's snapshot does not read back");
                Err(StoreError::NotFound)
            }
        }
    }

    /// The `n`th file an opened link shows, with its bytes (its owner's, read for the link).
    pub async fn shared_file(
        &self,
        opened: &Opened,
        n: usize,
    ) -> Result<(AttachmentInfo, Vec<u8>), StoreError> {
        let id = opened.files.get(n).ok_or(StoreError::NotFound)?;
        Scoped::for_link_owner(self, &opened.owner)
            .attachment(id)
            .await
    }
}

/// A value as the JSON a row keeps.
fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Unavailable(format!("a snapshot could not be written: {e}")))
}
