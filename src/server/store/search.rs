//! The search index, written and removed by key so its cost does not grow with its size.
//!
//! On SQLite the index is an FTS5 table, which finds rows only by its words and its rowid; each
//! entry has a row in `search_refs` (ordinary indexes on its text's id, message, conversation
//! and user) whose id is the entry's rowid, and removing that row removes the entry (a
//! trigger). On PostgreSQL `search_index` is an ordinary table with btree indexes on the same
//! columns. Either way an entry is found by an index, never by reading the whole index.

use super::index::{kind_name, rows, unindex, Arg, Entry, PG_INDEXED_CHARS, ROWS_PER_STATEMENT};
use super::scope::Scoped;
use super::{Backend, StoreError};
use crate::domain::history::{indexable, snippet_parts, HitKind, SearchHit};

impl Scoped<'_> {
    /// Indexes `text` for search inside the caller's transaction, replacing what `ref_id` had.
    pub(super) async fn index_in(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        ref_id: &str,
        message: &str,
        kind: HitKind,
        conversation: &str,
        text: &str,
    ) -> Result<(), StoreError> {
        unindex(
            tx,
            self.backend(),
            "ref_id = $1 AND user_id = $2",
            &[Arg::Text(ref_id), Arg::Text(self.user_id())],
        )
        .await?;
        let entry = Entry {
            ref_id: ref_id.to_string(),
            message_id: message.to_string(),
            kind,
            text: text.to_string(),
        };
        self.index_new(tx, conversation, std::slice::from_ref(&entry))
            .await
    }

    /// Indexes texts that have no entry yet (an import's), a hundred to a statement, inside the
    /// caller's transaction. Empty texts are left out.
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
        Ok(())
    }

    async fn index_sqlite(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        conversation: &str,
        chunk: &[&Entry],
    ) -> Result<(), StoreError> {
        let refs = rows(chunk.len(), 2, |n| {
            format!("(${}, ${}, $1, $2)", n + 3, n + 4)
        });
        let sql = format!(
            "INSERT INTO search_refs (ref_id, message_id, conversation_id, user_id) VALUES {refs}"
        );
        let mut insert = sqlx::query(&sql).bind(conversation).bind(self.user_id());
        for e in chunk {
            insert = insert.bind(&e.ref_id).bind(&e.message_id);
        }
        insert.execute(&mut **tx).await?;
        let entries = rows(chunk.len(), 4, |n| {
            format!(
                "((SELECT id FROM search_refs WHERE ref_id = ${r}), ${b}, ${k}, ${r}, ${m}, $1, $2)",
                r = n + 3,
                b = n + 4,
                k = n + 5,
                m = n + 6,
            )
        });
        let sql = format!(
            "INSERT INTO search_index (rowid, body, kind, ref_id, message_id, conversation_id, user_id) VALUES {entries}"
        );
        let mut insert = sqlx::query(&sql).bind(conversation).bind(self.user_id());
        for e in chunk {
            insert = insert
                .bind(&e.ref_id)
                .bind(indexable(&e.text).into_owned())
                .bind(kind_name(e.kind))
                .bind(&e.message_id);
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
            "INSERT INTO search_index (ref_id, kind, message_id, conversation_id, user_id, body, document) VALUES {entries}"
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
