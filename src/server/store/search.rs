//! The search index, written and removed by key so its cost does not grow with its size.
//!
//! On SQLite the index is an FTS5 table, which finds rows only by its words and its rowid; each
//! entry has a row in `search_refs` (ordinary indexes on its text's id, message, conversation
//! and user) whose id is the entry's rowid, and removing that row removes the entry (a
//! trigger). On PostgreSQL `search_index` is an ordinary table with btree indexes on the same
//! columns. Either way an entry is found by an index, never by reading the whole index.
//!
//! On SQLite an entry is first written on its reference, pending, in the writer's transaction,
//! and [`Store::index_pending`] writes the pending ones into the FTS5 table together: a second
//! after the first of them, before any search, and when the store opens. Every commit that
//! touched the FTS5 table flushed a segment of its own and merged, and each turn wrote three.

use super::index::{kind_name, rows, Entry, PG_INDEXED_CHARS, ROWS_PER_STATEMENT};
use super::scope::Scoped;
use super::{Backend, Store, StoreError};
use crate::domain::history::{indexable, snippet_parts, HitKind, SearchHit};

/// Pending search entries indexed by one transaction: a second of a thousand running turns.
const PENDING_PER_TRANSACTION: i64 = 1000;

/// How long a pending search entry waits for others to be indexed with it.
const INDEX_PENDING_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

impl Store {
    /// Indexes every pending search entry (SQLite), [`PENDING_PER_TRANSACTION`] to a
    /// transaction: the entries of a turn's opening and end are written pending, and a second of
    /// them costs one FTS5 flush here instead of one per commit. An entry written again while
    /// indexed replaces its text. The writers' queue is let go between transactions, so a big
    /// import's entries never hold the others up for long.
    pub(crate) async fn index_pending(&self) -> Result<(), StoreError> {
        if self.backend() != Backend::Sqlite {
            return Ok(());
        }
        self.search_due
            .store(false, std::sync::atomic::Ordering::SeqCst);
        loop {
            let mut turn = self.write_turn().await;
            let mut tx = turn.begin().await?;
            let last: Option<i64> = sqlx::query_scalar(
                "SELECT MAX(id) FROM (SELECT id FROM search_refs WHERE pending_body IS NOT NULL \
                 ORDER BY id LIMIT $1)",
            )
            .bind(PENDING_PER_TRANSACTION)
            .fetch_one(&mut *tx)
            .await?;
            let Some(last) = last else {
                return Ok(());
            };
            for sql in [
                "DELETE FROM search_index WHERE rowid IN \
                 (SELECT id FROM search_refs WHERE pending_body IS NOT NULL AND id <= $1)",
                "INSERT INTO search_index (rowid, body, kind, ref_id, message_id, conversation_id, user_id) \
                 SELECT id, pending_body, kind, ref_id, message_id, conversation_id, user_id \
                 FROM search_refs WHERE pending_body IS NOT NULL AND id <= $1",
                "UPDATE search_refs SET pending_body = NULL WHERE pending_body IS NOT NULL AND id <= $1",
            ] {
                sqlx::query(sql).bind(last).execute(&mut *tx).await?;
            }
            tx.commit().await?;
        }
    }

    /// True when some search entry is still pending (SQLite).
    pub(super) async fn search_pending(&self) -> Result<bool, StoreError> {
        if self.backend() != Backend::Sqlite {
            return Ok(false);
        }
        let found: Option<i64> =
            sqlx::query_scalar("SELECT id FROM search_refs WHERE pending_body IS NOT NULL LIMIT 1")
                .fetch_optional(self.pool())
                .await?;
        Ok(found.is_some())
    }

    /// Indexes the pending entries a second from now, unless that is planned already.
    fn index_soon(&self) {
        if self.backend() != Backend::Sqlite
            || self
                .search_due
                .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let store = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(INDEX_PENDING_AFTER).await;
            if let Err(e) = store.index_pending().await {
                tracing::warn!(error = %e, "pending search entries could not be indexed: the next write or search tries again");
            }
        });
    }
}

impl Scoped<'_> {
    /// Indexes texts, a hundred to a statement, inside the caller's transaction, each replacing
    /// what its reference had (on SQLite pending). Empty texts are left out.
    pub(super) async fn index_new(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
        entries: &[Entry],
    ) -> Result<(), StoreError> {
        let entries: Vec<&Entry> = entries
            .iter()
            .filter(|e| !e.text.trim().is_empty())
            .collect();
        for chunk in entries.chunks(ROWS_PER_STATEMENT) {
            match self.backend() {
                Backend::Sqlite => self.index_sqlite(tx, conversation, chunk).await?,
                Backend::Postgres => self.index_postgres(tx, conversation, chunk).await?,
            }
        }
        if !entries.is_empty() {
            self.store().index_soon();
        }
        Ok(())
    }

    async fn index_sqlite(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
        chunk: &[&Entry],
    ) -> Result<(), StoreError> {
        let refs = rows(chunk.len(), 4, |n| {
            format!("(${}, ${}, $1, $2, ${}, ${})", n + 3, n + 4, n + 5, n + 6)
        });
        let sql = format!(
            "INSERT INTO search_refs (ref_id, message_id, conversation_id, user_id, kind, pending_body) \
             VALUES {refs} ON CONFLICT (ref_id) DO UPDATE SET message_id = excluded.message_id, \
             conversation_id = excluded.conversation_id, kind = excluded.kind, \
             pending_body = excluded.pending_body WHERE search_refs.user_id = excluded.user_id"
        );
        let mut insert = sqlx::query(&sql).bind(conversation).bind(self.user_id());
        for e in chunk {
            insert = insert
                .bind(&e.ref_id)
                .bind(&e.message_id)
                .bind(kind_name(e.kind))
                .bind(indexable(&e.text).into_owned());
        }
        insert.execute(&mut **tx).await?;
        Ok(())
    }

    async fn index_postgres(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
        chunk: &[&Entry],
    ) -> Result<(), StoreError> {
        let entries = rows(chunk.len(), 4, |n| {
            format!(
                "(${r}, ${k}, ${m}, $1, $2, ${b}, to_tsvector('simple', ${b}))",
                r = n + 3,
                k = n + 4,
                m = n + 5,
                b = n + 6,
            )
        });
        let sql = format!(
            "INSERT INTO search_index (ref_id, kind, message_id, conversation_id, user_id, body, document) \
             VALUES {entries} ON CONFLICT (ref_id) DO UPDATE SET kind = excluded.kind, \
             message_id = excluded.message_id, conversation_id = excluded.conversation_id, \
             body = excluded.body, document = excluded.document \
             WHERE search_index.user_id = excluded.user_id"
        );
        let bodies: Vec<String> = chunk
            .iter()
            .map(|e| indexable(&e.text).chars().take(PG_INDEXED_CHARS).collect())
            .collect();
        let mut insert = sqlx::query(&sql).bind(conversation).bind(self.user_id());
        for (e, body) in chunk.iter().zip(&bodies) {
            insert = insert
                .bind(&e.ref_id)
                .bind(kind_name(e.kind))
                .bind(&e.message_id)
                .bind(body);
        }
        insert.execute(&mut **tx).await?;
        Ok(())
    }

    /// The user's messages that hold every word of `query`: answers and questions, and with
    /// `thinking` the reasoning too; newest conversations first.
    pub async fn search(
        &self,
        query: &str,
        thinking: bool,
        limit: usize,
    ) -> Result<Vec<SearchHit>, StoreError> {
        let words: Vec<String> = query
            .split_whitespace()
            .map(|w| {
                w.chars()
                    .filter(|c| c.is_alphanumeric())
                    .collect::<String>()
            })
            .filter(|w| !w.is_empty())
            .take(16)
            .collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        if self.store().search_pending().await? {
            self.store().index_pending().await?;
        }
        let kinds = if thinking {
            "('answer', 'question', 'thinking')"
        } else {
            "('answer', 'question')"
        };
        let rows = match self.backend() {
            Backend::Sqlite => {
                let fts: String = words
                    .iter()
                    .map(|w| format!("\"{w}\""))
                    .collect::<Vec<_>>()
                    .join(" ");
                sqlx::query_as::<_, HitRow>(&format!(
                    "SELECT s.kind, s.message_id, s.conversation_id, c.title, snippet(search_index, 0, char(57344), char(57345), '…', 12) AS snippet \
                     FROM search_index s JOIN conversations c ON c.id = s.conversation_id \
                     WHERE search_index MATCH $1 AND s.user_id = $2 AND c.user_id = $2 AND c.deleted_at IS NULL AND s.kind IN {kinds} \
                     ORDER BY c.updated_at DESC LIMIT $3"
                ))
                .bind(fts)
                .bind(self.user_id())
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?
            }
            Backend::Postgres => {
                sqlx::query_as::<_, HitRow>(&format!(
                    "SELECT s.kind, s.message_id, s.conversation_id, c.title, \
                     ts_headline('simple', s.body, plainto_tsquery('simple', $1), 'StartSel=' || chr(57344) || ', StopSel=' || chr(57345) || ', MaxWords=24, MinWords=8') AS snippet \
                     FROM search_index s JOIN conversations c ON c.id = s.conversation_id \
                     WHERE s.document @@ plainto_tsquery('simple', $1) AND s.user_id = $2 AND c.user_id = $2 AND c.deleted_at IS NULL AND s.kind IN {kinds} \
                     ORDER BY c.updated_at DESC LIMIT $3"
                ))
                .bind(words.join(" "))
                .bind(self.user_id())
                .bind(limit as i64)
                .fetch_all(self.pool())
                .await?
            }
        };
        Ok(rows.into_iter().map(SearchHit::from).collect())
    }
}

#[derive(sqlx::FromRow)]
struct HitRow {
    kind: String,
    message_id: String,
    conversation_id: String,
    title: String,
    snippet: String,
}

impl From<HitRow> for SearchHit {
    fn from(r: HitRow) -> Self {
        SearchHit {
            conversation_id: r.conversation_id,
            conversation_title: r.title,
            message_id: r.message_id,
            kind: match r.kind.as_str() {
                "thinking" => HitKind::Thinking,
                "question" => HitKind::Question,
                _ => HitKind::Answer,
            },
            snippet: snippet_parts(&r.snippet),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_rows_number_their_parameters_after_the_shared_ones() {
        let sql = rows(2, 2, |n| format!("(${}, ${}, $1)", n + 3, n + 4));
        assert_eq!(sql, "($3, $4, $1), ($5, $6, $1)");
    }
}
