//! The final states of many answers written in one transaction: a group commit. Turns that end
//! together (a burst that started together, a server that stops) would otherwise each pay a
//! transaction of their own, writing the same pages of the index and the conversations again
//! at each commit. Each answer has a savepoint of its own, so one that is refused (another
//! replica ended it, it is not its user's) is rolled back alone and the others stand. The
//! answers are written in the order of their conversations, so that two replicas' batches take
//! the conversations' rows in the same order (PostgreSQL).

use std::sync::Arc;

use sqlx::Acquire;

use super::identity::Identity;
use super::records::{AnswerRecord, AnswerSlot};
use super::replay::KeptState;
use super::{Store, StoreError};

/// One answer's final state, with the reasoning state to keep beside it.
#[derive(Clone, Debug)]
pub struct FinalState {
    pub who: Arc<Identity>,
    pub slot: AnswerSlot,
    pub answer: AnswerRecord,
    /// The reasoning state, and the most its conversation keeps.
    pub kept: Option<(Arc<KeptState>, usize)>,
}

impl Store {
    /// Writes `finals` in one transaction, a savepoint each; the result of each, in order. A
    /// reasoning state that cannot be kept is logged and dropped: its answer stands. When the
    /// transaction itself fails (the database is down), every answer gets that failure.
    pub async fn save_finals(&self, finals: &[FinalState]) -> Vec<Result<(), StoreError>> {
        match self.save_finals_in_one(finals).await {
            Ok(results) => results,
            Err(e) => finals.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    async fn save_finals_in_one(
        &self,
        finals: &[FinalState],
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let mut turn = self.write_turn().await;
        let mut tx = turn.begin().await?;
        let mut results: Vec<Result<(), StoreError>> = finals.iter().map(|_| Ok(())).collect();
        let mut order: Vec<usize> = (0..finals.len()).collect();
        order.sort_by(|&a, &b| {
            finals[a]
                .slot
                .conversation_id
                .cmp(&finals[b].slot.conversation_id)
        });
        for at in order {
            let f = &finals[at];
            let me = self.scoped(&f.who);
            let mut one = tx.begin().await?;
            match me.save_answer_in(&mut one, &f.slot, &f.answer).await {
                Ok(()) => {
                    if let Some((state, max_bytes)) = &f.kept {
                        let mut inner = one.begin().await?;
                        match me
                            .keep_reasoning_state_in(&mut inner, &f.slot, state, *max_bytes)
                            .await
                        {
                            Ok(()) => inner.commit().await?,
                            Err(e) => {
                                inner.rollback().await?;
                                tracing::warn!(error = %e, "an answer's reasoning state could not be kept; the next turn is sent without it");
                            }
                        }
                    }
                    one.commit().await?;
                }
                Err(e) => {
                    one.rollback().await?;
                    results[at] = Err(e);
                }
            }
        }
        tx.commit().await?;
        Ok(results)
    }
}
