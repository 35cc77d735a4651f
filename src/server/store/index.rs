//! Writing and removing search entries by key, below every scope: the scoped store, the
//! identity store and the importer all remove entries through [`unindex`], and
//! [`super::search`] writes them.

use super::{Backend, StoreError};
use crate::domain::history::HitKind;

/// The longest text a PostgreSQL search entry indexes (a tsvector holds at most 1 MB).
pub(super) const PG_INDEXED_CHARS: usize = 256 * 1024;

/// Entries written by one statement: few enough for either engine's limit on bound values.
pub(super) const ROWS_PER_STATEMENT: usize = 100;

/// One text to index: its own id (a version, a block or a question), its message, what it is.
pub(super) struct Entry {
    pub ref_id: String,
    pub message_id: String,
    pub kind: HitKind,
    pub text: String,
}

/// A value bound into an [`unindex`] condition.
pub(super) enum Arg<'a> {
    Text(&'a str),
    Int(i64),
}

pub(super) fn kind_name(kind: HitKind) -> &'static str {
    match kind {
        HitKind::Answer => "answer",
        HitKind::Question => "question",
        HitKind::Thinking => "thinking",
    }
}

/// Removes the entries `filter` selects: a condition on `ref_id`, `message_id`,
/// `conversation_id` and `user_id`, with `args` bound to `$1`, `$2`… in order. Each of these
/// columns is indexed, so the cost is that of the entries removed.
pub(super) async fn unindex(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    filter: &str,
    args: &[Arg<'_>],
) -> Result<(), StoreError> {
    let table = match backend {
        Backend::Sqlite => "search_refs",
        Backend::Postgres => "search_index",
    };
    let sql = format!("DELETE FROM {table} WHERE {filter}");
    let mut query = sqlx::query(&sql);
    for arg in args {
        query = match arg {
            Arg::Text(v) => query.bind(*v),
            Arg::Int(v) => query.bind(*v),
        };
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// `count` value rows joined by commas; row `i` is `row(per_row * i)`, the offset of its first
/// own parameter less the shared ones.
pub(super) fn rows(count: usize, per_row: usize, row: impl Fn(usize) -> String) -> String {
    (0..count)
        .map(|i| row(per_row * i))
        .collect::<Vec<_>>()
        .join(", ")
}
