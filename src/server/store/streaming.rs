//! The streaming states of many answers written at once: one transaction and a few statements
//! a second for every turn that is running, where one transaction per turn per second made a
//! thousand turns queue for the database (and the turns starting behind them).
//!
//! A streaming state never overwrites a final one: only versions still marked `streaming` are
//! written, and only their blocks.

use std::collections::HashSet;

use super::records::{AnswerSlot, BlockRecord};
use super::scope::{kind_name, words, Scoped};
use super::{Backend, Store, StoreError};

/// Rows per statement (4 parameters each for an answer, 12 for a block): far below SQLite's
/// and PostgreSQL's limits on parameters.
const VERSIONS_PER_STATEMENT: usize = 400;
const BLOCKS_PER_STATEMENT: usize = 150;

/// One answer's state as it streams: its text so far, its extras, and the reasoning blocks that
/// changed since its last state was handed over, each with its place among the answer's blocks
/// (the others are already stored as they are).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamingState {
    user_id: String,
    version_id: String,
    content: String,
    extras: Option<String>,
    blocks: Vec<(usize, BlockRecord)>,
}

impl Scoped<'_> {
    /// The caller's answer in `slot` as it stands, to be written with others.
    pub fn streaming_state(
        &self,
        slot: &AnswerSlot,
        content: String,
        extras: Option<String>,
        blocks: Vec<(usize, BlockRecord)>,
    ) -> StreamingState {
        StreamingState {
            user_id: self.user_id().to_string(),
            version_id: slot.version_id.clone(),
            content,
            extras,
            blocks,
        }
    }
}

impl StreamingState {
    /// The answer version this state is of.
    pub fn version_id(&self) -> &str {
        &self.version_id
    }

    /// Takes a later state of the same answer: its text and extras replace these, its blocks
    /// replace the ones with the same number, and the blocks it left out (unchanged since)
    /// keep what this state had of them.
    pub fn merge(&mut self, later: StreamingState) {
        self.content = later.content;
        self.extras = later.extras;
        for (at, block) in later.blocks {
            match self.blocks.iter_mut().find(|(kept, _)| *kept == at) {
                Some(kept) => kept.1 = block,
                None => self.blocks.push((at, block)),
            }
        }
    }
}

impl Store {
    /// Writes the streaming states in one transaction; returns the versions written (the
    /// others had ended, or are not their caller's, and are left as they are).
    pub async fn save_streaming(
        &self,
        states: &[StreamingState],
    ) -> Result<HashSet<String>, StoreError> {
        let mut written = HashSet::new();
        if states.is_empty() {
            return Ok(written);
        }
        let mut turn = self.write_turn().await;
        let mut tx = turn.begin().await?;
        if self.backend() == Backend::Postgres {
            // A state the next second overwrites need not wait for the disk; the final one does.
            sqlx::query("SET LOCAL synchronous_commit = off")
                .execute(&mut *tx)
                .await?;
        }
        for chunk in states.chunks(VERSIONS_PER_STATEMENT) {
            let sql = format!(
                "UPDATE message_versions SET content = v.column3, extras = v.column4 \
                 FROM (VALUES {}) AS v \
                 WHERE message_versions.id = v.column1 AND message_versions.user_id = v.column2 \
                 AND message_versions.status = 'streaming' RETURNING message_versions.id",
                placeholders(self.backend(), chunk.len(), 4)
            );
            let mut query = sqlx::query_as::<_, (String,)>(&sql);
            for s in chunk {
                query = query
                    .bind(&s.version_id)
                    .bind(&s.user_id)
                    .bind(&s.content)
                    .bind(&s.extras);
            }
            written.extend(query.fetch_all(&mut *tx).await?.into_iter().map(|(id,)| id));
        }
        let blocks: Vec<BlockRow> = states
            .iter()
            .filter(|s| written.contains(&s.version_id))
            .flat_map(|s| {
                s.blocks
                    .iter()
                    .map(move |(at, b)| (s.version_id.as_str(), s.user_id.as_str(), *at, b))
            })
            .collect();
        upsert_blocks(&mut tx, self.backend(), &blocks).await?;
        tx.commit().await?;
        Ok(written)
    }
}

/// A reasoning block to write: its answer version, its user, its place among the answer's
/// blocks, and the block.
pub(super) type BlockRow<'a> = (&'a str, &'a str, usize, &'a BlockRecord);

/// Writes reasoning blocks, a new one inserted and a known one (by version and place) replaced,
/// a few statements for any number of them; returns each block's id with its place (a known
/// block keeps the id it had).
pub(super) async fn upsert_blocks(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    blocks: &[BlockRow<'_>],
) -> Result<Vec<(String, i64)>, StoreError> {
    let mut ids = Vec::with_capacity(blocks.len());
    for chunk in blocks.chunks(BLOCKS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO thinking_blocks (id, version_id, user_id, idx, kind, text, chars, words, \
             started_at, duration_ms, interrupted, cut_short) VALUES {} \
             ON CONFLICT (version_id, idx) DO UPDATE SET kind = excluded.kind, text = excluded.text, \
             chars = excluded.chars, words = excluded.words, started_at = excluded.started_at, \
             duration_ms = excluded.duration_ms, interrupted = excluded.interrupted, \
             cut_short = excluded.cut_short RETURNING id, idx",
            placeholders(backend, chunk.len(), 12)
        );
        let mut query = sqlx::query_as::<_, (String, i64)>(&sql);
        for (version, user, at, block) in chunk {
            query = query
                .bind(super::ids::new_id())
                .bind(*version)
                .bind(*user)
                .bind(*at as i64)
                .bind(kind_name(block.kind))
                .bind(&block.text)
                .bind(block.text.chars().count() as i64)
                .bind(words(&block.text))
                .bind(block.started_at)
                .bind(block.duration_ms.map(|d| d as i64))
                .bind(i64::from(block.interrupted))
                .bind(i64::from(block.cut_short));
        }
        ids.extend(query.fetch_all(&mut **tx).await?);
    }
    Ok(ids)
}

/// `($1, $2), ($3, $4)…`: `rows` rows of `width` numbered parameters; for SQLite `(?, ?), …`,
/// which it binds in order (a numbered one is looked up by name, in a list as long as the
/// statement's parameters, for each of them).
fn placeholders(backend: Backend, rows: usize, width: usize) -> String {
    let mut out = String::with_capacity(rows * width * 5);
    for r in 0..rows {
        if r > 0 {
            out.push_str(", ");
        }
        out.push('(');
        for c in 0..width {
            if c > 0 {
                out.push_str(", ");
            }
            match backend {
                Backend::Sqlite => out.push('?'),
                Backend::Postgres => {
                    out.push('$');
                    out.push_str(&(r * width + c + 1).to_string());
                }
            }
        }
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_number_rows_in_order() {
        assert_eq!(
            placeholders(Backend::Postgres, 2, 3),
            "($1, $2, $3), ($4, $5, $6)"
        );
        assert_eq!(placeholders(Backend::Sqlite, 2, 2), "(?, ?), (?, ?)");
    }

    fn block(index: u32, text: &str) -> BlockRecord {
        BlockRecord {
            index,
            kind: Default::default(),
            text: text.into(),
            started_at: None,
            duration_ms: None,
            interrupted: false,
            cut_short: false,
        }
    }

    fn state(content: &str, blocks: Vec<(usize, BlockRecord)>) -> StreamingState {
        StreamingState {
            user_id: "u".into(),
            version_id: "v".into(),
            content: content.into(),
            extras: None,
            blocks,
        }
    }

    #[test]
    fn a_later_state_keeps_the_blocks_it_left_out() {
        let mut s = state("a", vec![(0, block(0, "x")), (1, block(1, "y"))]);
        s.merge(state("ab", vec![(1, block(1, "yz")), (2, block(2, "w"))]));
        assert_eq!(s.content, "ab");
        let texts: Vec<(usize, &str)> = s
            .blocks
            .iter()
            .map(|(at, b)| (*at, b.text.as_str()))
            .collect();
        assert_eq!(texts, vec![(0, "x"), (1, "yz"), (2, "w")]);
    }
}
