//! `GET /api/usage.csv`: the ledger's lines of a month as CSV, for a spreadsheet or an
//! accountant. A reader gets their own; an administrator, with `everyone=1`, everyone's.

use axum::body::Body;
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::Response;

use super::attachments::{caller, refused};
use super::request::store_error;
use crate::domain::usage::{day_of, micros_text, period_bounds, QuotaPeriod};
use crate::server::state::AppState;
use crate::server::store::usage::ExportRow;
use crate::server::turn::ledger::rfc3339;

/// Where the export is served, under the base path.
pub const CSV_PATH: &str = "/api/usage.csv";

/// The CSV's header line.
pub const CSV_HEADER: &str = "time,user,model,workspace,conversation,outcome,input_tokens,\
cached_input_tokens,output_tokens,reasoning_tokens,answer_tokens,estimated,thinking_ms,total_ms,cost,currency";

/// The month's lines (`?month=2026-12`, this one by default; `&everyone=1` for an
/// administrator's export of every reader, `&reader=<name>` of one).
pub async fn csv(state: &AppState, req: Request<Body>) -> Response {
    let who = match caller(&req) {
        Ok(who) => who,
        Err(failure) => return refused(failure),
    };
    let query = req.uri().query().unwrap_or("");
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let now = crate::server::store::now_ms();
    let at = match month_start(get("month"), now) {
        Ok(at) => at,
        Err(failure) => return refused(crate::i18n::errors::Said::said(failure)),
    };
    let (from, to) = period_bounds(QuotaPeriod::Month, at);
    let everyone = matches!(get("everyone"), Some("1" | "true"));
    let reader = get("reader").filter(|r| !r.is_empty());
    let rows = if everyone || reader.is_some() {
        state.store.usage_export_all(&who, from, to, reader).await
    } else {
        state.store.scoped(&who).usage_export(from, to).await
    };
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => return refused(store_error(e)),
    };
    let mut out = String::with_capacity(64 + rows.len() * 160);
    out.push_str(CSV_HEADER);
    out.push_str("\r\n");
    for row in &rows {
        write_row(&mut out, row);
    }
    let (y, m, _) = crate::domain::usage::civil(day_of(from));
    let name = if everyone {
        format!("ponder-usage-{y:04}-{m:02}-everyone.csv")
    } else {
        format!("ponder-usage-{y:04}-{m:02}.csv")
    };
    let mut response = Response::new(Body::from(out));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// The month asked for (`2026-12`), or this one; a month that does not read is `400`.
pub fn month_start(month: Option<&str>, now: i64) -> Result<i64, crate::domain::Failure> {
    use crate::domain::{ErrorCode, Failure};
    match month.map(str::trim).filter(|m| !m.is_empty()) {
        None => Ok(now),
        Some(m) => crate::domain::usage::parse_month(m).ok_or_else(|| {
            Failure::of(ErrorCode::BadRequest, false).with(
                "detail",
                format!("month {m:?} must be written like 2026-12"),
            )
        }),
    }
}

/// One line of the CSV.
fn write_row(out: &mut String, r: &ExportRow) {
    let answer = r.output_tokens.saturating_sub(r.reasoning_tokens);
    let cells = [
        rfc3339(r.at_ms),
        field(&r.user_name),
        field(&r.model),
        field(r.workspace_id.as_deref().unwrap_or("")),
        field(r.conversation_id.as_deref().unwrap_or("")),
        field(&r.outcome),
        r.input_tokens.to_string(),
        r.cached_input_tokens.to_string(),
        r.output_tokens.to_string(),
        r.reasoning_tokens.to_string(),
        answer.to_string(),
        (if r.estimated != 0 { "yes" } else { "no" }).to_string(),
        r.thinking_ms.to_string(),
        r.total_ms.to_string(),
        r.cost_micros
            .and_then(|c| u64::try_from(c).ok())
            .map(micros_text)
            .unwrap_or_default(),
        field(r.currency.as_deref().unwrap_or("")),
    ];
    out.push_str(&cells.join(","));
    out.push_str("\r\n");
}

/// A text cell, quoted when it holds a comma, a quote or a line break, and kept from being read
/// as a formula by a spreadsheet (a leading `=`, `+`, `-`, `@`, tab or carriage return).
fn field(text: &str) -> String {
    let guarded = match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_string(),
    };
    if guarded.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_and_never_formulas() {
        assert_eq!(field("ann"), "ann");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(field("@cmd"), "'@cmd");
        assert_eq!(field("line\nbreak"), "\"line\nbreak\"");
    }

    #[test]
    fn a_row_has_every_column_and_the_answer_apart_from_the_reasoning() {
        let row = ExportRow {
            at_ms: 1_796_597_739_000,
            user_name: "ann".into(),
            model: "demo-deep".into(),
            workspace_id: None,
            conversation_id: Some("c1".into()),
            outcome: "done".into(),
            input_tokens: 10,
            cached_input_tokens: 2,
            output_tokens: 50,
            reasoning_tokens: 30,
            estimated: 1,
            thinking_ms: 1200,
            total_ms: 2000,
            cost_micros: Some(1_500),
            currency: Some("EUR".into()),
        };
        let mut out = String::new();
        write_row(&mut out, &row);
        assert_eq!(
            out,
            "2026-12-06T22:55:39Z,ann,demo-deep,,c1,done,10,2,50,30,20,yes,1200,2000,0.0015,EUR\r\n"
        );
        assert_eq!(out.split(',').count(), CSV_HEADER.split(',').count());
    }
}
