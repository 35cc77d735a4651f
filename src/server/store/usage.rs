//! The usage ledger and the readers' own limits. A reader reads their own lines; an
//! administrator reads everyone's and sets each reader's limits. Lines outlive the chats they
//! came from: deleting a chat does not give its spending back.

use sqlx::FromRow;

use super::identity::Identity;
use super::scope::Scoped;
use super::{now_ms, Store, StoreError};
use crate::domain::usage::{
    parse_quotas, period_bounds, quotas_text, Cost, LedgerGroup, Quota, QuotaPeriod, Spend,
    UsageLine, Used,
};

/// One turn's line, as [`crate::server::turn::ledger`] hands it over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerLine {
    pub id: String,
    pub user_id: String,
    pub workspace: Option<String>,
    pub conversation: Option<String>,
    pub version: Option<String>,
    pub model: String,
    pub at_ms: i64,
    pub spend: Spend,
    pub cost: Option<Cost>,
    pub outcome: String,
}

/// One line as the CSV export writes it.
#[derive(Clone, Debug, FromRow)]
pub struct ExportRow {
    pub at_ms: i64,
    pub user_name: String,
    pub model: String,
    pub workspace_id: Option<String>,
    pub conversation_id: Option<String>,
    pub outcome: String,
    pub input_tokens: i64,
    pub cached_input_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_tokens: i64,
    pub estimated: i64,
    pub thinking_ms: i64,
    pub total_ms: i64,
    pub cost_micros: Option<i64>,
    pub currency: Option<String>,
}

#[derive(FromRow)]
struct GroupRow {
    day: i64,
    model: String,
    user_name: String,
    turns: i64,
    input_tokens: i64,
    cached_input_tokens: i64,
    output_tokens: i64,
    reasoning_tokens: i64,
    estimated: i64,
    thinking_ms: i64,
    total_ms: i64,
    cost_micros: Option<i64>,
}

impl GroupRow {
    fn group(self) -> LedgerGroup {
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        LedgerGroup {
            day: self.day,
            line: UsageLine {
                key: String::new(),
                turns: n(self.turns),
                input_tokens: n(self.input_tokens),
                cached_input_tokens: n(self.cached_input_tokens),
                output_tokens: n(self.output_tokens),
                reasoning_tokens: n(self.reasoning_tokens),
                estimated_turns: n(self.estimated),
                thinking_ms: n(self.thinking_ms),
                total_ms: n(self.total_ms),
                cost_micros: self.cost_micros.map(n),
            },
            model: self.model,
            user: self.user_name,
        }
    }
}

/// The sums of a group, cast so both engines hand back a 64-bit integer.
const SUMS: &str = "COUNT(*) AS turns, \
     CAST(COALESCE(SUM(l.input_tokens), 0) AS BIGINT) AS input_tokens, \
     CAST(COALESCE(SUM(l.cached_input_tokens), 0) AS BIGINT) AS cached_input_tokens, \
     CAST(COALESCE(SUM(l.output_tokens), 0) AS BIGINT) AS output_tokens, \
     CAST(COALESCE(SUM(l.reasoning_tokens), 0) AS BIGINT) AS reasoning_tokens, \
     CAST(COALESCE(SUM(l.estimated), 0) AS BIGINT) AS estimated, \
     CAST(COALESCE(SUM(l.thinking_ms), 0) AS BIGINT) AS thinking_ms, \
     CAST(COALESCE(SUM(l.total_ms), 0) AS BIGINT) AS total_ms, \
     CAST(SUM(l.cost_micros) AS BIGINT) AS cost_micros";

const EXPORT: &str = "SELECT l.at_ms, u.name AS user_name, l.model, l.workspace_id, \
     l.conversation_id, l.outcome, l.input_tokens, l.cached_input_tokens, l.output_tokens, \
     l.reasoning_tokens, l.estimated, l.thinking_ms, l.total_ms, l.cost_micros, l.currency \
     FROM usage_ledger l JOIN users u ON u.id = l.user_id";

/// The most lines one export holds: a month of a busy team's turns, not an unbounded read.
pub const MAX_EXPORT_LINES: i64 = 200_000;

fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// Writes a turn's line; the same turn twice is written once. It is written by the hot
    /// writers' connection, in their queue: from another connection each line made that one
    /// read its pages from the file again, and waited for the write lock in SQLite's busy
    /// handler.
    pub async fn record_usage(&self, line: &LedgerLine) -> Result<(), StoreError> {
        self.insert_usage(std::slice::from_ref(line)).await
    }

    /// Writes many turns' lines in one statement, as [`Store::record_usage`] writes one; one
    /// result for each. Should the statement fail, each line is written alone, so that one
    /// line the database refuses costs the others nothing.
    pub async fn record_usages(&self, lines: &[LedgerLine]) -> Vec<Result<(), StoreError>> {
        if self.insert_usage(lines).await.is_ok() {
            return lines.iter().map(|_| Ok(())).collect();
        }
        let mut results = Vec::with_capacity(lines.len());
        for line in lines {
            results.push(self.record_usage(line).await);
        }
        results
    }

    async fn insert_usage(&self, lines: &[LedgerLine]) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        let values = (0..lines.len())
            .map(|r| {
                let p = |c: usize| format!("${}", r * 17 + c);
                format!(
                    "({}, {}, COALESCE({}, (SELECT workspace_id FROM conversations WHERE id = {})), {})",
                    p(1),
                    p(2),
                    p(3),
                    p(4),
                    (4..=17).map(p).collect::<Vec<_>>().join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "INSERT INTO usage_ledger (id, user_id, workspace_id, conversation_id, version_id, \
             model, at_ms, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, \
             estimated, thinking_ms, total_ms, cost_micros, currency, outcome) \
             VALUES {values} ON CONFLICT (id) DO NOTHING"
        );
        let mut insert = sqlx::query(&sql);
        for line in lines {
            let s = &line.spend;
            insert = insert
                .bind(&line.id)
                .bind(&line.user_id)
                .bind(line.workspace.as_deref())
                .bind(line.conversation.as_deref())
                .bind(line.version.as_deref())
                .bind(&line.model)
                .bind(line.at_ms)
                .bind(count(s.input_tokens))
                .bind(count(s.cached_input_tokens))
                .bind(count(s.output_tokens))
                .bind(count(s.reasoning_tokens))
                .bind(i64::from(s.estimated))
                .bind(count(s.thinking_ms))
                .bind(count(s.total_ms))
                .bind(line.cost.as_ref().map(|c| count(c.micros)))
                .bind(line.cost.as_ref().map(|c| c.currency.as_str()))
                .bind(&line.outcome);
        }
        let mut turn = self.write_turn().await;
        let mut tx = turn.begin().await?;
        insert.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Everyone's lines between `from` and `to` (ms), or only those of the reader named
    /// `reader`, grouped by day, model and reader; for an administrator only.
    pub async fn usage_groups_all(
        &self,
        admin: &Identity,
        from: i64,
        to: i64,
        reader: Option<&str>,
    ) -> Result<Vec<LedgerGroup>, StoreError> {
        admin_only(admin)?;
        let rows: Vec<GroupRow> = sqlx::query_as(&format!(
            "SELECT l.at_ms / 86400000 AS day, l.model, u.name AS user_name, {SUMS} \
             FROM usage_ledger l JOIN users u ON u.id = l.user_id \
             WHERE l.at_ms >= $1 AND l.at_ms < $2 AND ($3 IS NULL OR u.name = $3) \
             GROUP BY l.at_ms / 86400000, l.model, u.name"
        ))
        .bind(from)
        .bind(to)
        .bind(reader)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(GroupRow::group).collect())
    }

    /// Everyone's lines between `from` and `to` (or only the reader named `reader`'s), oldest
    /// first, for the CSV export; for an administrator only.
    pub async fn usage_export_all(
        &self,
        admin: &Identity,
        from: i64,
        to: i64,
        reader: Option<&str>,
    ) -> Result<Vec<ExportRow>, StoreError> {
        admin_only(admin)?;
        Ok(sqlx::query_as(&format!(
            "{EXPORT} WHERE l.at_ms >= $1 AND l.at_ms < $2 AND ($3 IS NULL OR u.name = $3) \
             ORDER BY l.at_ms, l.id LIMIT {MAX_EXPORT_LINES}"
        ))
        .bind(from)
        .bind(to)
        .bind(reader)
        .fetch_all(self.pool())
        .await?)
    }

    /// Each reader with limits of their own: name, id, limits as written.
    pub async fn user_quotas(
        &self,
        admin: &Identity,
    ) -> Result<Vec<(String, String, String)>, StoreError> {
        admin_only(admin)?;
        Ok(sqlx::query_as(
            "SELECT u.id, u.name, q.limits FROM user_quotas q JOIN users u ON u.id = q.user_id \
             ORDER BY u.name",
        )
        .fetch_all(self.pool())
        .await?)
    }

    /// Sets the limits of the reader named `name`: `Some(text)` their own (empty: none at
    /// all), `None` back to the default. An unknown reader is not found.
    pub async fn set_user_quota(
        &self,
        admin: &Identity,
        name: &str,
        limits: Option<&[Quota]>,
    ) -> Result<(), StoreError> {
        admin_only(admin)?;
        let found: Option<(String,)> = sqlx::query_as("SELECT id FROM users WHERE name = $1")
            .bind(name)
            .fetch_optional(self.pool())
            .await?;
        let (user_id,) = found.ok_or(StoreError::NotFound)?;
        match limits {
            None => {
                sqlx::query("DELETE FROM user_quotas WHERE user_id = $1")
                    .bind(&user_id)
                    .execute(self.pool())
                    .await?;
            }
            Some(limits) => {
                sqlx::query(
                    "INSERT INTO user_quotas (user_id, limits, updated_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (user_id) DO UPDATE SET limits = excluded.limits, \
                     updated_at = excluded.updated_at",
                )
                .bind(&user_id)
                .bind(quotas_text(limits))
                .bind(now_ms())
                .execute(self.pool())
                .await?;
            }
        }
        Ok(())
    }
}

fn admin_only(who: &Identity) -> Result<(), StoreError> {
    if who.user().is_admin {
        Ok(())
    } else {
        Err(StoreError::Refused(crate::i18n::errors::Said::said(
            crate::domain::Failure::of(crate::domain::ErrorCode::AdminOnly, false),
        )))
    }
}

impl Scoped<'_> {
    /// The reader's own limits, if an administrator set them (an empty list: none at all).
    /// A stored text that no longer reads is no limit, and logged.
    pub async fn own_quotas(&self) -> Result<Option<Vec<Quota>>, StoreError> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT limits FROM user_quotas WHERE user_id = $1")
                .bind(self.user_id())
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(text,)| {
            parse_quotas(&text).unwrap_or_else(|why| {
                tracing::warn!(%why, "a reader's stored limits are unreadable; none applied");
                Vec::new()
            })
        }))
    }

    /// What the reader spent today and this month (UTC) as of `now` (ms).
    pub async fn used(&self, now: i64) -> Result<Used, StoreError> {
        let (day, _) = period_bounds(QuotaPeriod::Day, now);
        let (month, _) = period_bounds(QuotaPeriod::Month, now);
        let (day_tokens, day_cost, month_tokens, month_cost): (i64, i64, i64, i64) =
            sqlx::query_as(
                "SELECT \
                 CAST(COALESCE(SUM(CASE WHEN at_ms >= $2 THEN input_tokens + output_tokens ELSE 0 END), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(CASE WHEN at_ms >= $2 THEN COALESCE(cost_micros, 0) ELSE 0 END), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(input_tokens + output_tokens), 0) AS BIGINT), \
                 CAST(COALESCE(SUM(COALESCE(cost_micros, 0)), 0) AS BIGINT) \
                 FROM usage_ledger WHERE user_id = $1 AND at_ms >= $3",
            )
            .bind(self.user_id())
            .bind(day)
            .bind(month)
            .fetch_one(self.pool())
            .await?;
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(Used {
            day_tokens: n(day_tokens),
            day_cost: n(day_cost),
            month_tokens: n(month_tokens),
            month_cost: n(month_cost),
        })
    }

    /// The reader's lines between `from` and `to` (ms), grouped by day and model.
    pub async fn usage_groups(&self, from: i64, to: i64) -> Result<Vec<LedgerGroup>, StoreError> {
        let rows: Vec<GroupRow> = sqlx::query_as(&format!(
            "SELECT l.at_ms / 86400000 AS day, l.model, '' AS user_name, {SUMS} \
             FROM usage_ledger l WHERE l.user_id = $1 AND l.at_ms >= $2 AND l.at_ms < $3 \
             GROUP BY l.at_ms / 86400000, l.model"
        ))
        .bind(self.user_id())
        .bind(from)
        .bind(to)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(GroupRow::group).collect())
    }

    /// The reader's own lines between `from` and `to`, oldest first, for the CSV export.
    pub async fn usage_export(&self, from: i64, to: i64) -> Result<Vec<ExportRow>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{EXPORT} WHERE l.user_id = $1 AND l.at_ms >= $2 AND l.at_ms < $3 \
             ORDER BY l.at_ms, l.id LIMIT {MAX_EXPORT_LINES}"
        ))
        .bind(self.user_id())
        .bind(from)
        .bind(to)
        .fetch_all(self.pool())
        .await?)
    }
}
