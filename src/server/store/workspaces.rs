//! A user's workspaces and the preferences kept for each.

use super::rows::{PreferencesRow, WorkspaceRow};
use super::scope::{clean_name, found, Scoped};
use super::StoreError;
use crate::domain::history::Workspace;

impl Scoped<'_> {
    pub async fn workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        let rows: Vec<WorkspaceRow> = sqlx::query_as(
            "SELECT id, name FROM workspaces WHERE user_id = $1 ORDER BY created_at, id",
        )
        .bind(self.user_id())
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(Workspace::from).collect())
    }

    /// The user's first workspace, made if they have none.
    pub async fn default_workspace(&self) -> Result<Workspace, StoreError> {
        if let Some(first) = self.workspaces().await?.into_iter().next() {
            return Ok(first);
        }
        self.create_workspace(crate::domain::history::FIRST_WORKSPACE)
            .await
    }

    pub async fn rename_workspace(&self, id: &str, name: &str) -> Result<(), StoreError> {
        let name = clean_name(name)?;
        let done = sqlx::query("UPDATE workspaces SET name = $1 WHERE id = $2 AND user_id = $3")
            .bind(&name)
            .bind(id)
            .bind(self.user_id())
            .execute(self.pool())
            .await?;
        found(done.rows_affected())
    }

    pub(super) async fn own_workspace(&self, id: Option<&str>) -> Result<Workspace, StoreError> {
        match id {
            None => self.default_workspace().await,
            Some(id) => self
                .workspaces()
                .await?
                .into_iter()
                .find(|w| w.id == id)
                .ok_or(StoreError::NotFound),
        }
    }

    /// The thinking preference, locale, theme and default model for a workspace.
    pub async fn preferences(&self, workspace: Option<&str>) -> Result<Preferences, StoreError> {
        let workspace = self.own_workspace(workspace).await?.id;
        let row: Option<PreferencesRow> = sqlx::query_as(
            "SELECT thinking, locale, theme, default_model, titles FROM preferences WHERE user_id = $1 AND workspace_id = $2",
        )
        .bind(self.user_id())
        .bind(&workspace)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(Preferences::from).unwrap_or_default())
    }

    pub async fn set_preferences(
        &self,
        workspace: Option<&str>,
        prefs: &Preferences,
    ) -> Result<(), StoreError> {
        if !prefs.is_valid() {
            return Err(StoreError::Conflict(
                "a preference is 1 to 64 characters, with no control characters".into(),
            ));
        }
        let workspace = self.own_workspace(workspace).await?.id;
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM preferences WHERE user_id = $1 AND workspace_id = $2")
            .bind(self.user_id())
            .bind(&workspace)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO preferences (user_id, workspace_id, thinking, locale, theme, default_model, titles) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(self.user_id())
        .bind(&workspace)
        .bind(prefs.thinking.as_deref())
        .bind(prefs.locale.as_deref())
        .bind(prefs.theme.as_deref())
        .bind(prefs.default_model.as_deref())
        .bind(prefs.titles.as_deref())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

pub use crate::domain::history::Preferences;
