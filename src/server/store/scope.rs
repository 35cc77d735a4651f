//! Everything a user owns, reached only through [`Scoped`], which can only be made from an
//! [`Identity`]: every query below names the user, so another user's conversation, message,
//! block or workspace is simply not found (the same answer as a missing one).

use super::identity::Identity;
use super::index::{unindex, Arg};
use super::{now_ms, Store, StoreError};
use crate::domain::history::TitleMark;
use crate::domain::{Role, ThinkingKind};

/// The store, as one user sees it.
pub struct Scoped<'s> {
    store: &'s Store,
    user: &'s str,
}

/// How long a file uploaded and never sent is kept (it may be in a reader's tray).
pub const UNSENT_FILE_MS: i64 = 24 * 60 * 60 * 1000;

/// The attachments linked to the messages of conversations (`va`, `c`), to be narrowed.
const KEPT_BY: &str = "SELECT va.attachment_id FROM version_attachments va \
     JOIN message_versions v ON v.id = va.version_id JOIN messages m ON m.id = v.message_id \
     JOIN conversations c ON c.id = m.conversation_id";

impl Scoped<'_> {
    /// The store as a shared link's owner sees it, for what the link shows of theirs: reached
    /// only from a link opened by its token ([`Store::shared_file`]).
    pub(super) fn for_link_owner<'s>(store: &'s Store, owner: &'s str) -> Scoped<'s> {
        Scoped { store, user: owner }
    }
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
    /// versions, thinking and search entries, and the files no other message keeps (a file
    /// uploaded and never sent goes after [`UNSENT_FILE_MS`]). Run by the background purge.
    pub async fn purge_deleted(&self, before: i64) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        unindex(
            &mut tx,
            self.backend(),
            "conversation_id IN \
             (SELECT id FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at < $1)",
            &[Arg::Int(before)],
        )
        .await?;
        sqlx::query(&format!(
            "DELETE FROM attachments WHERE id IN ({KEPT_BY} WHERE c.deleted_at < $1) \
             AND NOT EXISTS ({KEPT_BY} WHERE va.attachment_id = attachments.id \
             AND (c.deleted_at IS NULL OR c.deleted_at >= $1))"
        ))
        .bind(before)
        .execute(&mut *tx)
        .await?;
        let done = sqlx::query(
            "DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at < $1",
        )
        .bind(before)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM attachments WHERE created_at < $1 AND NOT EXISTS \
             (SELECT 1 FROM version_attachments va WHERE va.attachment_id = attachments.id)",
        )
        .bind(now_ms() - UNSENT_FILE_MS)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM attachment_blobs WHERE NOT EXISTS (SELECT 1 FROM attachments a \
             WHERE a.user_id = attachment_blobs.user_id AND a.sha256 = attachment_blobs.sha256)",
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(done.rows_affected())
    }
}

pub(super) fn kind_name(kind: ThinkingKind) -> &'static str {
    kind.label()
}

pub(super) fn kind_of(name: &str) -> ThinkingKind {
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

/// A conversation's title from the reader's first message: its first line, at most 60
/// characters; empty (a new chat, in the reader's words) when it has none. A reader's text
/// carries no title mark.
pub(super) fn title_from(text: &str) -> String {
    let text = TitleMark::strip(text);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}

impl<'s> Scoped<'s> {
    pub(super) fn store(&self) -> &'s Store {
        self.store
    }
}

impl Scoped<'_> {
    pub(super) fn pool(&self) -> &sqlx::AnyPool {
        self.store.pool()
    }

    /// [`super::Store::begin_write`].
    pub(super) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        self.store.begin_write().await
    }

    pub(super) fn backend(&self) -> super::Backend {
        self.store.backend()
    }

    pub(super) async fn write_turn(&self) -> super::WriteTurn {
        self.store.write_turn().await
    }

    pub(super) fn user_id(&self) -> &str {
        self.user
    }

    /// Marks the conversation changed (its place in the list, its revision), inside the
    /// caller's transaction.
    pub(super) async fn touch_in(
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

    pub(super) async fn owns_conversation(&self, conversation: &str) -> Result<(), StoreError> {
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
}

pub(super) fn clean_name(name: &str) -> Result<String, StoreError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 80 || name.chars().any(char::is_control) {
        return Err(StoreError::Conflict(
            "a name is 1 to 80 characters, with no control characters".into(),
        ));
    }
    Ok(name.to_string())
}

pub(super) fn found(rows: u64) -> Result<(), StoreError> {
    if rows == 0 {
        Err(StoreError::NotFound)
    } else {
        Ok(())
    }
}

/// Takes the conversation's write lock for the rest of the transaction (a row lock on
/// PostgreSQL, the database's write lock on SQLite), so two replicas adding to one conversation
/// at once take turns instead of both reading the same last position.
pub(super) async fn lock_conversation(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    conversation: &str,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE conversations SET rev = rev WHERE id = $1")
        .bind(conversation)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
