//! A turn's line in the usage ledger: who asked, where, and what it spent, written when the
//! turn ends however it ends (done, stopped, failed, cut short, its reader gone); and the quota
//! check a turn passes before its upstream is called.

use std::sync::Arc;

use super::batch::UsageBatch;
use crate::domain::usage::{over_quota, Cost, OverQuota, Quota, Spend, Streamed};
use crate::domain::{ChatMessage, ErrorCode, Failure, TurnEvent, Usage};
use crate::i18n::errors::Said;
use crate::server::outcome::Outcome;
use crate::server::state::AppState;
use crate::server::store::identity::Identity;
use crate::server::store::usage::LedgerLine;
use crate::server::store::Store;

/// Who a turn spends for and where its answer goes, handed to the turn when it starts.
#[derive(Clone, Debug, Default)]
pub struct Ticket {
    pub turn: String,
    pub user_id: String,
    pub workspace: Option<String>,
    pub conversation: Option<String>,
    pub version: Option<String>,
    /// Characters of the messages and instructions sent, for an input the provider does not
    /// count.
    pub input_chars: u64,
    /// Who asked, and the limits they were held to when the turn started: a turn that crosses
    /// one says so in its `done`.
    pub who: Option<Arc<Identity>>,
    pub quotas: Vec<Quota>,
}

impl Ticket {
    /// A ticket for `turn`, asked by `user` with `messages` and `instructions`.
    pub fn new(
        turn: &str,
        who: &Arc<Identity>,
        messages: &[ChatMessage],
        instructions: Option<&str>,
    ) -> Ticket {
        let chars = messages
            .iter()
            .map(|m| m.content.chars().count() as u64)
            .sum::<u64>()
            + instructions.map_or(0, |i| i.chars().count() as u64);
        Ticket {
            turn: turn.to_string(),
            user_id: who.user().id.clone(),
            input_chars: chars,
            who: Some(who.clone()),
            ..Ticket::default()
        }
    }
}

/// The usage a turn reports at its end: the provider's counts, the estimates for the ones it
/// left out (marked), and the cost at the operator's prices when the model has one.
pub fn final_usage(state: &AppState, model: &str, reported: &Usage, spend: &Spend) -> Usage {
    let cost = state.config.prices.cost(model, spend);
    Usage {
        input_tokens: Some(spend.input_tokens),
        output_tokens: Some(spend.output_tokens),
        reasoning_tokens: reported
            .reasoning_tokens
            .or((spend.reasoning_tokens > 0).then_some(spend.reasoning_tokens)),
        file_tokens: reported.file_tokens,
        cached_input_tokens: (spend.cached_input_tokens > 0).then_some(spend.cached_input_tokens),
        estimated: spend.estimated,
        cost,
        limit_reached: None,
    }
}

/// Changes the usage of the `done` among `events`, if there is one.
pub fn amend_done(events: &mut [TurnEvent], mut amend: impl FnMut(&mut Option<Usage>)) {
    for event in events {
        if let TurnEvent::Done { usage, .. } = event {
            amend(usage);
        }
    }
}

/// What the turn streamed, for [`Spend::of`].
pub fn streamed(
    ticket: Option<&Ticket>,
    thinking_chars: u64,
    answer_chars: u64,
    thinking_ms: u64,
    total_ms: u64,
) -> Streamed {
    Streamed {
        input_chars: ticket.map_or(0, |t| t.input_chars),
        thinking_chars,
        answer_chars,
        thinking_ms,
        total_ms,
    }
}

/// The turn's line, its tokens counted in the metrics as it is made.
pub fn line(
    state: &AppState,
    ticket: Ticket,
    model: &str,
    spend: Spend,
    outcome: Outcome,
) -> LedgerLine {
    state.metrics.tokens(model, &spend);
    let cost: Option<Cost> = state.config.prices.cost(model, &spend);
    LedgerLine {
        id: ticket.turn,
        user_id: ticket.user_id,
        workspace: ticket.workspace,
        conversation: ticket.conversation,
        version: ticket.version,
        model: model.to_string(),
        at_ms: crate::server::store::now_ms() - spend.total_ms as i64,
        spend,
        cost,
        outcome: outcome.name().to_string(),
    }
}

/// How long the terminal event waits for the turn's line to be written: the reader's next turn
/// then sees it in the quota check.
pub const WRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Writes `line` before the turn's last event goes out. A line that cannot be written in time
/// goes on being tried in the background; one the database refuses is logged. The turn's
/// answer stands either way.
pub async fn write(store: &Store, batch: &Arc<UsageBatch>, line: LedgerLine) {
    let id = line.id.clone();
    let attempt = batch.save(store, line.clone());
    match tokio::time::timeout(WRITE_WAIT, attempt).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(turn = %id, error = %e, "a turn's usage could not be recorded")
        }
        Err(_) => record_later(store.clone(), line),
    }
}

/// Writes `line` in the background: the turn ended without a last event to hold (its reader
/// left, the server stops).
pub fn record_later(store: Store, line: LedgerLine) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!(turn = %line.id, "a turn's usage could not be recorded: the server is stopping");
        return;
    };
    runtime.spawn(async move {
        if let Err(e) = store.record_usage(&line).await {
            tracing::warn!(turn = %line.id, error = %e, "a turn's usage could not be recorded");
        }
    });
}

/// Refuses a turn when `who` has reached one of their limits (`429`, `quota_exceeded`, with
/// the limit and when it resets); administrators pass when `PONDER_QUOTA_ADMINS=exempt`. Turns
/// already running are not counted until they end: a burst that starts under the limit runs,
/// and the next turn after it is refused.
pub async fn check_quota(state: &AppState, who: &Identity) -> Result<Vec<Quota>, Failure> {
    if who.user().is_admin && state.config.quota.admins_exempt {
        return Ok(Vec::new());
    }
    let me = state.store.scoped(who);
    let quotas = match me.own_quotas().await {
        Ok(Some(own)) => own,
        Ok(None) => state.config.quota.default.clone(),
        Err(e) => return Err(crate::server::http::request::store_error(e)),
    };
    if quotas.is_empty() {
        return Ok(quotas);
    }
    let now = crate::server::store::now_ms();
    let used = me
        .used(now)
        .await
        .map_err(crate::server::http::request::store_error)?;
    match over_quota(&quotas, &used, now) {
        None => Ok(quotas),
        Some(over) => {
            state.metrics.request_refused("quota");
            Err(refusal(&over, state.config.prices.currency()))
        }
    }
}

/// The limit the turn's reader has reached now that its line is written, if any (the turn
/// that crossed it finished all the same).
pub async fn reached(store: &Store, who: &Identity, quotas: &[Quota]) -> Option<OverQuota> {
    if quotas.is_empty() {
        return None;
    }
    let now = crate::server::store::now_ms();
    let used = store.scoped(who).used(now).await.ok()?;
    over_quota(quotas, &used, now)
}

/// The reader's limits (their own, else the default) and what they used of each, now.
pub async fn standing(
    state: &AppState,
    who: &Identity,
) -> Result<Vec<crate::domain::usage::QuotaState>, crate::server::store::StoreError> {
    use crate::domain::usage::{period_bounds, QuotaState};
    if who.user().is_admin && state.config.quota.admins_exempt {
        return Ok(Vec::new());
    }
    let me = state.store.scoped(who);
    let quotas = match me.own_quotas().await? {
        Some(own) => own,
        None => state.config.quota.default.clone(),
    };
    if quotas.is_empty() {
        return Ok(Vec::new());
    }
    let now = crate::server::store::now_ms();
    let used = me.used(now).await?;
    Ok(quotas
        .into_iter()
        .map(|quota| QuotaState {
            used: used.of(&quota),
            resets_at: period_bounds(quota.period, now).1,
            quota,
        })
        .collect())
}

/// The refusal of a turn over `over`: its limit as written, and when it lifts (RFC 3339, UTC,
/// and milliseconds since the epoch for programs).
pub fn refusal(over: &OverQuota, currency: &str) -> Failure {
    use crate::domain::usage::{micros_text, QuotaMeasure, QuotaPeriod};
    let limit = match over.quota.measure {
        QuotaMeasure::Tokens => over.quota.limit.to_string(),
        QuotaMeasure::Cost => format!("{} {currency}", micros_text(over.quota.limit)),
    };
    let period = match over.quota.period {
        QuotaPeriod::Day => "day",
        QuotaPeriod::Month => "month",
    };
    Failure::of(ErrorCode::QuotaExceeded, false)
        .with("limit", limit)
        .with("period", period)
        .with("resets_at", rfc3339(over.resets_at))
        .with("resets_at_ms", over.resets_at.to_string())
        .said()
}

/// `2026-12-07T00:00:00Z` for a time in ms (whole seconds, UTC).
pub fn rfc3339(ms: i64) -> String {
    use crate::domain::usage::{day_of, day_text};
    let day = day_of(ms);
    let secs = (ms - day * 86_400_000) / 1000;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        day_text(day),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_rfc3339_in_utc() {
        assert_eq!(rfc3339(1_796_597_739_000), "2026-12-06T22:55:39Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    }
}
