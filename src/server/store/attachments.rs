//! The files a user attached, kept once per content: a second upload of the same bytes by the
//! same user stores nothing new (another name for them, at most), and a user's files count
//! against their own quota only.

use std::collections::HashMap;
use utoipa::ToSchema;

use super::ids::{content_digest, new_id};
use super::scope::Scoped;
use super::{now_ms, StoreError};
use crate::domain::attachment::{readable_bytes, Attached, FileRef, Kind, SendAs, Sniffed};
use crate::domain::wire::WireName;
use crate::domain::{ErrorCode, Failure};

/// A stored attachment as its owner's page and the turn read it (not its bytes).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct AttachmentInfo {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub mime: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixels: Option<(u32, u32)>,
    /// A PDF's page count, when its text was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// An image written again smaller on upload (served inline: its bytes are Ponder's own).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reencoded: bool,
    /// The SHA-256 of its bytes, as hex.
    pub sha256: String,
    pub created_at: i64,
}

pub use crate::server::extract::Contents;

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    name: String,
    kind: String,
    mime: String,
    size: i64,
    width: Option<i64>,
    height: Option<i64>,
    sha256: String,
    created_at: i64,
    pages: Option<i64>,
    reencoded: i64,
}

impl Row {
    fn info(self) -> AttachmentInfo {
        let side = |n: Option<i64>| n.and_then(|n| u32::try_from(n).ok());
        AttachmentInfo {
            kind: Kind::from_wire_name(&self.kind).unwrap_or(Kind::Text),
            pixels: side(self.width).zip(side(self.height)),
            size: self.size.max(0) as u64,
            pages: self.pages.and_then(|n| u32::try_from(n).ok()),
            reencoded: self.reencoded != 0,
            id: self.id,
            name: self.name,
            mime: self.mime,
            sha256: self.sha256,
            created_at: self.created_at,
        }
    }
}

const COLUMNS: &str =
    "id, name, kind, mime, size, width, height, sha256, created_at, pages, reencoded";

impl Scoped<'_> {
    /// Keeps `bytes` (already judged: `sniffed`) as an attachment named `name`, refused when the
    /// user's files would then take more than `user_limit` bytes. Bytes the user already keeps
    /// are not stored again and cost nothing more.
    pub async fn put_attachment(
        &self,
        name: &str,
        sniffed: &Sniffed,
        bytes: &[u8],
        user_limit: u64,
    ) -> Result<AttachmentInfo, StoreError> {
        self.put_attachment_with(name, sniffed, bytes, user_limit, &Contents::default())
            .await
    }

    /// [`Self::put_attachment`] with what was read from inside the file.
    pub async fn put_attachment_with(
        &self,
        name: &str,
        sniffed: &Sniffed,
        bytes: &[u8],
        user_limit: u64,
        contents: &Contents,
    ) -> Result<AttachmentInfo, StoreError> {
        let sha256 = content_digest(bytes);
        let size = bytes.len() as i64;
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        // One user's uploads one at a time: the quota holds, and SQLite's write lock is taken
        // before anything is read (two readers both upgrading would fail one of them).
        sqlx::query("UPDATE users SET created_at = created_at WHERE id = $1")
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
        let known: Option<(i64,)> =
            sqlx::query_as("SELECT size FROM attachment_blobs WHERE user_id = $1 AND sha256 = $2")
                .bind(self.user_id())
                .bind(&sha256)
                .fetch_optional(&mut *tx)
                .await?;
        if known.is_none() {
            let (used,): (i64,) = sqlx::query_as(
                "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM attachment_blobs WHERE user_id = $1",
            )
            .bind(self.user_id())
            .fetch_one(&mut *tx)
            .await?;
            if used.max(0) as u64 + bytes.len() as u64 > user_limit {
                return Err(StoreError::Refused(
                    Failure::of(ErrorCode::AttachmentQuota, false)
                        .with("name", name)
                        .with("limit", readable_bytes(user_limit)),
                ));
            }
            sqlx::query(
                "INSERT INTO attachment_blobs (user_id, sha256, size, bytes, created_at) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(self.user_id())
            .bind(&sha256)
            .bind(size)
            .bind(bytes.to_vec())
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        let (width, height) = sniffed.pixels.map_or((None, None), |(w, h)| {
            (Some(i64::from(w)), Some(i64::from(h)))
        });
        let id = new_id();
        sqlx::query(
            "INSERT INTO attachments (id, user_id, sha256, name, kind, mime, size, width, height, created_at, pages, text, reencoded) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(&id)
        .bind(self.user_id())
        .bind(&sha256)
        .bind(name)
        .bind(sniffed.kind.wire_name())
        .bind(sniffed.mime)
        .bind(size)
        .bind(width)
        .bind(height)
        .bind(now)
        .bind(contents.pdf.as_ref().map(|(pages, _)| i64::from(*pages)))
        .bind(contents.pdf.as_ref().map(|(_, text)| text.as_str()))
        .bind(i64::from(contents.reencoded))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.attachment_info(&id).await
    }

    /// An attachment of the user's (another user's answers not found).
    pub async fn attachment_info(&self, id: &str) -> Result<AttachmentInfo, StoreError> {
        let row: Row = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM attachments WHERE id = $1 AND user_id = $2"
        ))
        .bind(id)
        .bind(self.user_id())
        .fetch_one(self.pool())
        .await?;
        Ok(row.info())
    }

    /// An attachment of the user's with its bytes.
    pub async fn attachment(&self, id: &str) -> Result<(AttachmentInfo, Vec<u8>), StoreError> {
        let info = self.attachment_info(id).await?;
        let (bytes,): (Vec<u8>,) =
            sqlx::query_as("SELECT bytes FROM attachment_blobs WHERE user_id = $1 AND sha256 = $2")
                .bind(self.user_id())
                .bind(&info.sha256)
                .fetch_one(self.pool())
                .await?;
        Ok((info, bytes))
    }

    /// How many bytes the user's files take, each content counted once.
    pub async fn attachment_bytes(&self) -> Result<u64, StoreError> {
        let (used,): (i64,) = sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM attachment_blobs WHERE user_id = $1",
        )
        .bind(self.user_id())
        .fetch_one(self.pool())
        .await?;
        Ok(used.max(0) as u64)
    }

    /// Checks, before anything is written, that the files `ids` are the user's (any other is
    /// not found) and together at most `max_bytes`.
    pub(super) async fn check_attachments(
        &self,
        ids: &[String],
        max_bytes: u64,
    ) -> Result<(), StoreError> {
        let mut total: u64 = 0;
        for id in ids {
            let (size,): (i64,) =
                sqlx::query_as("SELECT size FROM attachments WHERE id = $1 AND user_id = $2")
                    .bind(id)
                    .bind(self.user_id())
                    .fetch_one(self.pool())
                    .await?;
            total = total.saturating_add(size.max(0) as u64);
        }
        if total > max_bytes {
            return Err(StoreError::Refused(
                Failure::of(ErrorCode::AttachmentsTooLarge, false)
                    .with("limit", readable_bytes(max_bytes)),
            ));
        }
        Ok(())
    }

    /// Links the files `ids` (checked by [`Self::check_attachments`]), in order, to the message
    /// version `version`.
    pub(super) async fn attach(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        version: &str,
        ids: &[String],
    ) -> Result<(), StoreError> {
        for (position, id) in ids.iter().enumerate() {
            sqlx::query(
                "INSERT INTO version_attachments (version_id, position, attachment_id) \
                 SELECT $1, $2, id FROM attachments WHERE id = $3 AND user_id = $4",
            )
            .bind(version)
            .bind(position as i64)
            .bind(id)
            .bind(self.user_id())
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }

    /// Links the files `files` of an imported version, in order, where they are the user's own
    /// (any other is left out), with how each went.
    pub(super) async fn attach_kept(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        version: &str,
        files: &[FileRef],
    ) -> Result<(), StoreError> {
        for (position, f) in files.iter().enumerate() {
            sqlx::query(
                "INSERT INTO version_attachments (version_id, position, attachment_id, sent_as) \
                 SELECT $1, $2, id, $3 FROM attachments WHERE id = $4 AND user_id = $5",
            )
            .bind(version)
            .bind(position as i64)
            .bind(f.sent_as.map(SendAs::wire_name))
            .bind(&f.id)
            .bind(self.user_id())
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }

    /// Keeps how each file of the reader's message `message` (its shown version) went to the
    /// model, in the order attached.
    pub async fn record_sent_as(
        &self,
        message: &str,
        sent: &[Option<SendAs>],
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        self.record_sent_as_in(&mut tx, message, sent).await?;
        tx.commit().await?;
        Ok(())
    }

    /// [`Self::record_sent_as`] inside the caller's transaction.
    pub(super) async fn record_sent_as_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        message: &str,
        sent: &[Option<SendAs>],
    ) -> Result<(), StoreError> {
        for (position, how) in sent.iter().enumerate() {
            let Some(how) = how else {
                continue;
            };
            sqlx::query(
                "UPDATE version_attachments SET sent_as = $1 WHERE position = $2 AND version_id = \
                 (SELECT v.id FROM message_versions v JOIN messages m ON m.id = v.message_id \
                  WHERE m.id = $3 AND m.user_id = $4 AND v.idx = m.active_version)",
            )
            .bind(how.wire_name())
            .bind(position as i64)
            .bind(message)
            .bind(self.user_id())
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }

    /// The files of the message versions of `conversation` between the positions `low` and
    /// `high`, as the page shows them, by version id, in the order attached.
    pub(super) async fn files_shown(
        &self,
        conversation: &str,
        (low, high): (i64, i64),
    ) -> Result<HashMap<String, Vec<FileRef>>, StoreError> {
        type ShownRow = (
            String,
            String,
            String,
            String,
            i64,
            Option<i64>,
            Option<i64>,
            Option<String>,
            Option<i64>,
        );
        let rows: Vec<ShownRow> = sqlx::query_as(
            "SELECT va.version_id, a.id, a.name, a.kind, a.size, a.width, a.height, va.sent_as, a.pages \
             FROM version_attachments va \
             JOIN message_versions v ON v.id = va.version_id \
             JOIN messages m ON m.id = v.message_id \
             JOIN attachments a ON a.id = va.attachment_id \
             WHERE m.conversation_id = $1 AND m.user_id = $2 AND a.user_id = $2 \
             AND m.position BETWEEN $3 AND $4 ORDER BY va.version_id, va.position",
        )
        .bind(conversation)
        .bind(self.user_id())
        .bind(low)
        .bind(high)
        .fetch_all(self.pool())
        .await?;
        let side = |n: Option<i64>| n.and_then(|n| u32::try_from(n).ok());
        let mut out: HashMap<String, Vec<FileRef>> = HashMap::new();
        for (version, id, name, kind, size, width, height, sent_as, pages) in rows {
            out.entry(version).or_default().push(FileRef {
                id,
                name,
                kind: Kind::from_wire_name(&kind).unwrap_or(Kind::Text),
                size: size.max(0) as u64,
                pixels: side(width).zip(side(height)),
                pages: pages.and_then(|n| u32::try_from(n).ok()),
                sent_as: sent_as.as_deref().and_then(SendAs::from_wire_name),
            });
        }
        Ok(out)
    }

    /// Copies the files of the version `from` to the version `to` (a branch's copy).
    pub(super) async fn copy_files(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        from: &str,
        to: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO version_attachments (version_id, position, attachment_id, sent_as) \
             SELECT $1, va.position, va.attachment_id, va.sent_as FROM version_attachments va \
             JOIN attachments a ON a.id = va.attachment_id WHERE va.version_id = $2 AND a.user_id = $3",
        )
        .bind(to)
        .bind(from)
        .bind(self.user_id())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// The files of every message version of `conversation`, with their bytes, by version id,
    /// in the order they were attached (each goes as text until the turn decides).
    pub async fn files_of(
        &self,
        conversation: &str,
    ) -> Result<HashMap<String, Vec<Attached>>, StoreError> {
        self.files_of_on(self.pool(), conversation).await
    }

    /// [`Self::files_of`], read on `on` (a connection already held for other reads).
    pub(super) async fn files_of_on<'e>(
        &self,
        on: impl sqlx::Executor<'e, Database = sqlx::Any>,
        conversation: &str,
    ) -> Result<HashMap<String, Vec<Attached>>, StoreError> {
        type FileRow = (
            String,
            String,
            String,
            String,
            Vec<u8>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<FileRow> = sqlx::query_as(
            "SELECT va.version_id, a.name, a.kind, a.mime, b.bytes, a.text, va.sent_as FROM version_attachments va \
             JOIN message_versions v ON v.id = va.version_id \
             JOIN messages m ON m.id = v.message_id \
             JOIN attachments a ON a.id = va.attachment_id \
             JOIN attachment_blobs b ON b.user_id = a.user_id AND b.sha256 = a.sha256 \
             WHERE m.conversation_id = $1 AND m.user_id = $2 AND a.user_id = $2 \
             ORDER BY va.version_id, va.position",
        )
        .bind(conversation)
        .bind(self.user_id())
        .fetch_all(on)
        .await?;
        let mut out: HashMap<String, Vec<Attached>> = HashMap::new();
        for (version, name, kind, mime, bytes, text, asked) in rows {
            out.entry(version).or_default().push(Attached {
                name,
                kind: Kind::from_wire_name(&kind).unwrap_or(Kind::Text),
                mime,
                bytes: bytes.into(),
                text: text.map(Into::into),
                asked: asked.as_deref().and_then(SendAs::from_wire_name),
                how: SendAs::Text,
                drawn: Vec::new(),
            });
        }
        Ok(out)
    }
}
