//! Usage over the API: the reader's month (and, for an administrator, everyone's), and the
//! limits an administrator sets. The ledger's lines as CSV are a plain download
//! (`GET /api/usage.csv`, in [`crate::server::http`]).

use leptos::server;
use leptos::server_fn::codec::Json;

use super::error::ApiError;
use crate::domain::usage::UsageReport;

/// The reader's usage over `month` (`2026-12`; none: this month, UTC), by day and by model,
/// with their limits and what they used of each. `everyone` (administrators only) sums every
/// reader's lines and lists each reader; `reader` (administrators only) is one reader's, by name.
#[server(
    prefix = "/api",
    endpoint = "usage/report",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn month_usage(
    #[server(default)] month: Option<String>,
    #[server(default)] everyone: bool,
    #[server(default)] reader: Option<String>,
) -> Result<UsageReport, ApiError> {
    use crate::domain::usage::{period_bounds, report, QuotaPeriod};
    use crate::server::http::request::{caller, store_error};
    let (state, who) = caller()?;
    let now = crate::server::store::now_ms();
    let at = crate::server::http::usage::month_start(month.as_deref(), now)?;
    let (from, to) = period_bounds(QuotaPeriod::Month, at);
    let currency = state
        .config
        .prices
        .any()
        .then(|| state.config.prices.currency().to_string());
    let me = state.store.scoped(&who);
    if everyone || reader.is_some() {
        let groups = state
            .store
            .usage_groups_all(&who, from, to, reader.as_deref())
            .await
            .map_err(store_error)?;
        return Ok(report(at, now, &groups, currency, reader.is_none()));
    }
    let groups = me.usage_groups(from, to).await.map_err(store_error)?;
    let mut out = report(at, now, &groups, currency, false);
    out.quotas = crate::server::turn::ledger::standing(&state, &who)
        .await
        .map_err(store_error)?;
    Ok(out)
}

/// The limits every reader has unless set apart (`PONDER_QUOTA`), and each reader's own.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
pub struct QuotaSettings {
    /// The default limits as written (`tokens/day=200000, cost/month=5.50`); empty: none.
    pub default: String,
    /// Administrators start turns whatever they spent.
    pub admins_exempt: bool,
    /// The currency of cost limits.
    pub currency: String,
    /// Each reader with limits of their own: name and limits as written (empty: none at all).
    pub readers: Vec<(String, String)>,
}

/// The limits in force (administrators only).
#[server(
    prefix = "/api",
    endpoint = "usage/quotas",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn quotas_in_force() -> Result<QuotaSettings, ApiError> {
    use crate::domain::usage::quotas_text;
    use crate::server::http::request::{caller, store_error};
    let (state, who) = caller()?;
    let readers = state
        .store
        .user_quotas(&who)
        .await
        .map_err(store_error)?
        .into_iter()
        .map(|(_, name, limits)| (name, limits))
        .collect();
    Ok(QuotaSettings {
        default: quotas_text(&state.config.quota.default),
        admins_exempt: state.config.quota.admins_exempt,
        currency: state.config.prices.currency().to_string(),
        readers,
    })
}

/// Sets the limits of the reader `name` (administrators only): `limits` as written
/// (`tokens/day=200000, cost/month=5.50`; empty: no limit at all), or none to go back to the
/// default. A limit that does not read is `400` saying why; an unknown reader `404`.
#[server(
    prefix = "/api",
    endpoint = "usage/set_quota",
    input = Json,
    output = Json,
    input_derive = (Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)
)]
pub async fn set_quota(
    name: String,
    #[server(default)] limits: Option<String>,
) -> Result<(), ApiError> {
    use crate::domain::usage::parse_quotas;
    use crate::domain::{ErrorCode, Failure};
    use crate::server::http::request::{caller, store_error};
    let parsed = match limits.as_deref() {
        Some(text) => Some(parse_quotas(text).map_err(|why| {
            ApiError::from(Failure::of(ErrorCode::BadRequest, false).with("detail", why))
        })?),
        None => None,
    };
    let (state, who) = caller()?;
    state
        .store
        .set_user_quota(&who, &name, parsed.as_deref())
        .await
        .map_err(store_error)?;
    Ok(())
}
