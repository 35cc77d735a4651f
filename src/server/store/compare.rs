//! Comparisons kept: the answers a comparison started (versions of one assistant message marked
//! `compared`), the one the reader picked, their thumbs, and every compared answer with the
//! ledger's figures for the reader's record per model.

use super::scope::Scoped;
use super::StoreError;
use crate::domain::compare::{ComparedAnswer, MAX_COMPARED};
use crate::domain::history::ConversationSummary;

impl Scoped<'_> {
    /// Before a comparison's next answer to `message`: it must be a comparison's, with room.
    pub(super) async fn room_to_compare(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        message: &str,
    ) -> Result<(), StoreError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) AS n FROM message_versions WHERE message_id = $1 AND user_id = $2 AND compared = 1",
        )
        .bind(message)
        .bind(self.user_id())
        .fetch_one(&mut **tx)
        .await?;
        match n {
            0 => Err(StoreError::Conflict(
                "that answer did not start a comparison".into(),
            )),
            n if n as usize >= MAX_COMPARED => Err(StoreError::Conflict(format!(
                "a comparison holds at most {MAX_COMPARED} answers"
            ))),
            _ => Ok(()),
        }
    }

    /// Marks a version just opened as a comparison's answer.
    pub(super) async fn mark_compared(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        version_id: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE message_versions SET compared = 1 WHERE id = $1 AND user_id = $2")
            .bind(version_id)
            .bind(self.user_id())
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// The reader's thumbs on answer `version` of `message`: 1 up, -1 down, 0 none.
    pub async fn rate_version(
        &self,
        message: &str,
        version: usize,
        rating: i8,
    ) -> Result<(), StoreError> {
        let rated = sqlx::query(
            "UPDATE message_versions SET rating = $1 WHERE message_id = $2 AND idx = $3 AND user_id = $4",
        )
        .bind((rating != 0).then_some(i64::from(rating.signum())))
        .bind(message)
        .bind(version as i64)
        .bind(self.user_id())
        .execute(self.pool())
        .await?;
        if rated.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Keeps answer `version` of a comparison: the message's answer from now on, and its pick
    /// (any earlier pick of the same comparison is undone). The other answers stay as versions.
    pub async fn pick_version(&self, message: &str, version: usize) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        let compared: Option<i64> = sqlx::query_scalar(
            "SELECT compared FROM message_versions WHERE message_id = $1 AND idx = $2 AND user_id = $3",
        )
        .bind(message)
        .bind(version as i64)
        .bind(self.user_id())
        .fetch_optional(&mut *tx)
        .await?;
        match compared {
            None => return Err(StoreError::NotFound),
            Some(0) => {
                return Err(StoreError::Conflict(
                    "that answer is not a comparison's".into(),
                ))
            }
            Some(_) => {}
        }
        sqlx::query(
            "UPDATE message_versions SET picked = CASE WHEN idx = $1 THEN 1 ELSE 0 END \
             WHERE message_id = $2 AND user_id = $3",
        )
        .bind(version as i64)
        .bind(message)
        .bind(self.user_id())
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE messages SET active_version = $1 WHERE id = $2 AND user_id = $3")
            .bind(version as i64)
            .bind(message)
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "UPDATE conversations SET rev = rev + 1, updated_at = $1 WHERE user_id = $2 AND id = \
             (SELECT conversation_id FROM messages WHERE id = $3 AND user_id = $2)",
        )
        .bind(super::now_ms())
        .bind(self.user_id())
        .bind(message)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Every answer of the reader's comparisons, with the ledger's thinking time and reasoning
    /// tokens once its turn ended.
    pub async fn compared_answers(&self) -> Result<Vec<ComparedAnswer>, StoreError> {
        type Row = (
            String,
            Option<String>,
            i64,
            Option<i64>,
            Option<i64>,
            Option<i64>,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT v.message_id, v.model, v.picked, v.rating, l.thinking_ms, l.reasoning_tokens \
             FROM message_versions v LEFT JOIN usage_ledger l ON l.version_id = v.id \
             WHERE v.user_id = $1 AND v.compared = 1 ORDER BY v.message_id, v.idx",
        )
        .bind(self.user_id())
        .fetch_all(self.pool())
        .await?;
        let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        Ok(rows
            .into_iter()
            .map(
                |(message, model, picked, rating, thinking, tokens)| ComparedAnswer {
                    message,
                    model: model.unwrap_or_default(),
                    picked: picked != 0,
                    rating: rating.map_or(0, |r| r.signum() as i8),
                    thinking_ms: count(thinking),
                    reasoning_tokens: count(tokens),
                },
            )
            .collect())
    }

    /// Continues with every answer of the comparison answering `message` in `conversation`: a
    /// branch per answer, up to that message, showing that answer, titled and set to its model
    /// and reasoning settings, so the next question in it goes to that model. `409` for a
    /// message no comparison answered.
    pub async fn continue_comparison(
        &self,
        conversation: &str,
        message: &str,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        self.owns_conversation(conversation).await?;
        let answers: Vec<(i64, Option<String>)> = sqlx::query_as(
            "SELECT v.idx, v.model FROM message_versions v JOIN messages m ON m.id = v.message_id \
             WHERE v.message_id = $1 AND v.user_id = $2 AND m.conversation_id = $3 AND v.compared = 1 \
             ORDER BY v.idx",
        )
        .bind(message)
        .bind(self.user_id())
        .bind(conversation)
        .fetch_all(self.pool())
        .await?;
        if answers.is_empty() {
            return Err(StoreError::Conflict(
                "that answer did not start a comparison".into(),
            ));
        }
        let mut branches = Vec::with_capacity(answers.len());
        for (idx, model) in answers {
            let mut branch = self.branch_conversation(conversation, message).await?;
            if let Some(model) = &model {
                branch.title = format!("{} · {model}", branch.title);
            }
            let mut tx = self.begin_write().await?;
            sqlx::query(
                "UPDATE messages SET active_version = $1 WHERE conversation_id = $2 AND user_id = $3 \
                 AND position = (SELECT MAX(position) FROM messages WHERE conversation_id = $2 AND user_id = $3)",
            )
            .bind(idx)
            .bind(&branch.id)
            .bind(self.user_id())
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE conversations SET title = $1, \
                 model = COALESCE((SELECT model FROM message_versions WHERE message_id = $2 AND idx = $3 AND user_id = $4), model), \
                 thinking = (SELECT thinking FROM message_versions WHERE message_id = $2 AND idx = $3 AND user_id = $4), \
                 effort = (SELECT effort FROM message_versions WHERE message_id = $2 AND idx = $3 AND user_id = $4) \
                 WHERE id = $5 AND user_id = $4",
            )
            .bind(&branch.title)
            .bind(message)
            .bind(idx)
            .bind(self.user_id())
            .bind(&branch.id)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            branches.push(branch);
        }
        Ok(branches)
    }
}
