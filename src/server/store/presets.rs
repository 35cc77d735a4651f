//! Presets as the store keeps them: each reader's own and the shared ones an administrator
//! offers. A reader reaches their own and the shared ones; another reader's preset is not
//! found, and only an administrator changes a shared one.

use sqlx::FromRow;

use super::ids::new_id;
use super::rows::SettingsRow;
use super::scope::{found, Scoped};
use super::{now_ms, StoreError};
use crate::domain::history::Sampled;
use crate::domain::preset::{Preset, MAX_PRESETS};

#[derive(FromRow)]
struct PresetRow {
    id: String,
    user_id: String,
    shared: i64,
    name: String,
    instructions: Option<String>,
    #[sqlx(flatten)]
    settings: SettingsRow,
}

const COLUMNS: &str = "id, user_id, shared, name, instructions, model, thinking, effort, \
     temperature, top_p, max_tokens";

impl PresetRow {
    fn preset(self, me: &str, admin: bool) -> Preset {
        let shared = self.shared != 0;
        Preset {
            editable: if shared { admin } else { self.user_id == me },
            settings: self.settings.settings(),
            id: self.id,
            name: self.name,
            model: self.settings.model,
            instructions: self.instructions,
            shared,
        }
    }
}

impl Scoped<'_> {
    /// The shared presets, then the reader's own, each by name.
    pub async fn presets(&self, admin: bool) -> Result<Vec<Preset>, StoreError> {
        let rows: Vec<PresetRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM presets WHERE shared = 1 OR user_id = $1 \
             ORDER BY shared DESC, name, id LIMIT {}",
            2 * MAX_PRESETS
        ))
        .bind(self.user_id())
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| r.preset(self.user_id(), admin))
            .collect())
    }

    /// Keeps `preset` (already checked): a new one when it has no id, else the one it names,
    /// which must be the reader's own or, for an administrator, a shared one (whether it is
    /// shared is decided when it is made). A full shelf is a conflict.
    pub async fn save_preset(&self, preset: Preset, admin: bool) -> Result<Preset, StoreError> {
        let settings = preset.settings;
        let sampled = Sampled::of(&settings);
        let thinking = settings.thinking.map(i64::from);
        let effort = settings.effort.map(|e| e.as_str());
        let id = if preset.id.is_empty() {
            let mut tx = self.begin_write().await?;
            let (count,): (i64,) = if preset.shared {
                sqlx::query_as("SELECT COUNT(*) FROM presets WHERE shared = 1")
                    .fetch_one(&mut *tx)
                    .await?
            } else {
                sqlx::query_as("SELECT COUNT(*) FROM presets WHERE shared = 0 AND user_id = $1")
                    .bind(self.user_id())
                    .fetch_one(&mut *tx)
                    .await?
            };
            if count >= MAX_PRESETS as i64 {
                return Err(StoreError::Conflict(format!(
                    "at most {MAX_PRESETS} presets are kept: delete one first"
                )));
            }
            let id = new_id();
            sqlx::query(
                "INSERT INTO presets (id, user_id, shared, name, model, thinking, effort, \
                 temperature, top_p, max_tokens, instructions, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            )
            .bind(&id)
            .bind(self.user_id())
            .bind(i64::from(preset.shared))
            .bind(&preset.name)
            .bind(&preset.model)
            .bind(thinking)
            .bind(effort)
            .bind(sampled.temperature)
            .bind(sampled.top_p)
            .bind(sampled.max_tokens)
            .bind(&preset.instructions)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            id
        } else {
            let done = sqlx::query(
                "UPDATE presets SET name = $1, model = $2, thinking = $3, effort = $4, \
                 temperature = $5, top_p = $6, max_tokens = $7, instructions = $8 \
                 WHERE id = $9 AND ((shared = 0 AND user_id = $10) OR (shared = 1 AND $11 = 1))",
            )
            .bind(&preset.name)
            .bind(&preset.model)
            .bind(thinking)
            .bind(effort)
            .bind(sampled.temperature)
            .bind(sampled.top_p)
            .bind(sampled.max_tokens)
            .bind(&preset.instructions)
            .bind(&preset.id)
            .bind(self.user_id())
            .bind(i64::from(admin))
            .execute(self.pool())
            .await?;
            found(done.rows_affected())?;
            preset.id.clone()
        };
        let row: PresetRow =
            sqlx::query_as(&format!("SELECT {COLUMNS} FROM presets WHERE id = $1"))
                .bind(&id)
                .fetch_optional(self.pool())
                .await?
                .ok_or(StoreError::NotFound)?;
        Ok(row.preset(self.user_id(), admin))
    }

    /// Deletes the reader's own preset, or for an administrator a shared one.
    pub async fn delete_preset(&self, id: &str, admin: bool) -> Result<(), StoreError> {
        let done = sqlx::query(
            "DELETE FROM presets WHERE id = $1 \
             AND ((shared = 0 AND user_id = $2) OR (shared = 1 AND $3 = 1))",
        )
        .bind(id)
        .bind(self.user_id())
        .bind(i64::from(admin))
        .execute(self.pool())
        .await?;
        found(done.rows_affected())
    }
}
