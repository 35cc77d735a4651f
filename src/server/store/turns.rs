//! The running turns as the database knows them, for several replicas on one PostgreSQL: a
//! command for a turn that runs on another replica is checked against its owner here, then
//! passed on with `NOTIFY` on [`CHANNEL`], which every replica listens to. With SQLite (one
//! process) nothing is written: the in-process registry is the whole truth.

use sqlx::Row;

use super::scope::Scoped;
use super::{now_ms, Backend, Store, StoreError};

/// The channel turn commands travel on between replicas.
pub const CHANNEL: &str = "ponder_turn_control";

impl Scoped<'_> {
    /// Records that the caller's turn `id` runs (PostgreSQL only).
    pub async fn note_running_turn(&self, id: &str) -> Result<(), StoreError> {
        if self.backend() != Backend::Postgres {
            return Ok(());
        }
        sqlx::query("INSERT INTO running_turns (id, user_id, started_at) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(self.user_id())
            .bind(now_ms())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Passes "Answer now" to the replica running the caller's turn `id`; false when no such
    /// turn of the caller's runs anywhere (or the database is not shared).
    pub async fn forward_answer_now(&self, id: &str) -> Result<bool, StoreError> {
        if self.backend() != Backend::Postgres {
            return Ok(false);
        }
        let found = sqlx::query("SELECT id FROM running_turns WHERE id = $1 AND user_id = $2")
            .bind(id)
            .bind(self.user_id())
            .fetch_optional(self.pool())
            .await?;
        let Some(row) = found else {
            return Ok(false);
        };
        let id: String = row.try_get("id")?;
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(&id)
            .execute(self.pool())
            .await?;
        Ok(true)
    }
}

impl Store {
    /// Forgets the running turn `id` (it ended, whoever owned it).
    pub async fn end_running_turn(&self, id: &str) -> Result<(), StoreError> {
        if self.backend() != Backend::Postgres {
            return Ok(());
        }
        sqlx::query("DELETE FROM running_turns WHERE id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

/// Listens on [`CHANNEL`] of the PostgreSQL at `url` for as long as the server runs, handing
/// each turn id that arrives to `deliver`; reconnects after a failure.
pub async fn listen(url: String, deliver: impl Fn(&str) + Send + 'static) {
    let mut wait = std::time::Duration::from_millis(500);
    loop {
        match sqlx::postgres::PgListener::connect(&url).await {
            Ok(mut listener) => {
                if let Err(e) = listener.listen(CHANNEL).await {
                    tracing::warn!(error = %e, "could not listen for turn commands");
                } else {
                    wait = std::time::Duration::from_millis(500);
                    loop {
                        match listener.recv().await {
                            Ok(note) => deliver(note.payload()),
                            Err(e) => {
                                tracing::warn!(error = %e, "the turn command listener lost its connection");
                                break;
                            }
                        }
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not connect the turn command listener"),
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(std::time::Duration::from_secs(10));
    }
}
