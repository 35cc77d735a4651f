//! Settings → Usage: a modal page with the reader's month (or last month) at a glance: tokens
//! per day split into reasoning, answer and input, time spent thinking, cost when priced, each
//! model's share, and their limits; every chart has its table. An administrator also sees
//! everyone's, reader by reader, exports CSV and sets each reader's limits. It is a chunk of
//! its own (`usage`), fetched the first time it opens.

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::SplitLoaderError;

use crate::client::controller::ChatController;
use crate::client::usage_view::{
    cost_chart, duration, money, percent, shares, thinking_chart, tokens_chart, DayChart,
    BAR_WIDTH, CHART_HEIGHT,
};
use crate::domain::usage::{
    micros_text, previous_month, QuotaMeasure, QuotaPeriod, QuotaState, UsageLine, UsageReport,
};
use crate::domain::Failure;
use crate::i18n::{fill, Locale};

/// Builds the page; it closes itself by setting `open` to false.
pub type UsageCode = fn(RwSignal<bool>) -> AnyView;

/// The page, from its chunk.
#[leptos::wasm_split::wasm_split(usage, wasm_split_path = leptos::wasm_split, fallible)]
pub fn usage_code() -> Result<UsageCode, SplitLoaderError> {
    Ok(|open| view! { <UsageDialog open/> }.into_any())
}

/// The dialog's id.
pub const USAGE_ID: &str = "usage-dialog";

#[component]
fn UsageDialog(open: RwSignal<bool>) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let w = crate::i18n::usage_words(l);
    let admin = move || {
        chat.me.with(|me| {
            me.as_ref()
                .and_then(|m| m.account.as_ref())
                .is_some_and(|a| a.is_admin)
        })
    };
    let last_month = RwSignal::new(false);
    let everyone = RwSignal::new(false);
    // An administrator looking at one reader's month, picked from everyone's.
    let reader = RwSignal::new(None::<String>);
    let this_month = RwSignal::new(None::<String>);
    let report = RwSignal::new(None::<Result<UsageReport, Failure>>);
    Effect::new(move |_| {
        let month = if last_month.get() {
            this_month
                .get_untracked()
                .as_deref()
                .and_then(previous_month)
        } else {
            None
        };
        let everyone = everyone.get();
        let reader = reader.get();
        spawn_local(async move {
            let got = crate::api::usage::month_usage(month, everyone, reader)
                .await
                .map_err(|e| e.0);
            if let Ok(r) = &got {
                if this_month.get_untracked().is_none() {
                    this_month.set(Some(r.month.clone()));
                }
            }
            report.set(Some(got));
        });
    });
    let dialog = NodeRef::<leptos::html::Dialog>::new();
    Effect::new(move |_| {
        if let Some(d) = dialog.get() {
            if !d.open() {
                let _ = d.show_modal();
            }
        }
    });
    let csv = move || {
        let month = report
            .with(|r| {
                r.as_ref()
                    .and_then(|r| r.as_ref().ok())
                    .map(|r| r.month.clone())
            })
            .unwrap_or_default();
        let all = match reader.get() {
            Some(name) => format!(
                "&reader={}",
                url::form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>()
            ),
            None if everyone.get() => "&everyone=1".into(),
            None => String::new(),
        };
        format!(
            "{}/api/usage.csv?month={month}{all}",
            crate::client::browser::base_path()
        )
    };
    view! {
        <dialog
            id=USAGE_ID
            class="disclaimer-dialog usage-dialog"
            style:width="min(52rem, 96vw)"
            aria-labelledby="usage-title"
            node_ref=dialog
            on:close=move |_| open.set(false)
        >
            <h2 id="usage-title">{l.catalogue().usage_title}</h2>
            <div class="usage-controls" style:display="flex" style:flex-wrap="wrap" style:gap="var(--gap)" style:align-items="center">
                <fieldset class="usage-months" style:display="flex" style:gap="var(--gap)" style:border="0" style:padding="0" style:margin="0">
                    <legend class="visually-hidden">{l.catalogue().usage_title}</legend>
                    <label>
                        <input type="radio" name="usage-month" prop:checked=move || !last_month.get() on:change=move |_| last_month.set(false)/>
                        {w.this_month}
                    </label>
                    <label>
                        <input type="radio" name="usage-month" prop:checked=move || last_month.get() on:change=move |_| last_month.set(true)/>
                        {w.last_month}
                    </label>
                </fieldset>
                <Show when=admin>
                    <label class="usage-everyone">
                        <input type="checkbox" prop:checked=move || everyone.get() on:change=move |ev| {
                            reader.set(None);
                            everyone.set(event_target_checked(&ev));
                        }/>
                        {w.everyone}
                    </label>
                </Show>
                <a class="usage-export" href=csv download="">{w.export}</a>
            </div>
            {move || match report.get() {
                None => view! { <p role="status">{w.loading}</p> }.into_any(),
                Some(Err(f)) => view! { <p class="usage-error" role="alert">{crate::client::labels::failure_text(&f, l)}</p> }.into_any(),
                Some(Ok(r)) => view! {
                    {reader.get().map(|name| view! { <h3 class="usage-reader">{format!("{}: {name}", w.reader)}</h3> })}
                    <Report report=r pick=Callback::new(move |name: String| {
                        everyone.set(false);
                        reader.set(Some(name));
                    })/>
                }.into_any(),
            }}
            <Show when=admin>
                <ReaderLimits/>
            </Show>
            <form method="dialog">
                <button type="submit" autofocus>{t.close}</button>
            </form>
        </dialog>
    }
}

/// One month's figures: the totals, the charts with their tables, each model and reader.
#[component]
fn Report(
    report: UsageReport,
    /// Shows one reader's month (from everyone's).
    pick: Callback<String>,
) -> impl IntoView {
    let l = crate::ui::locale::locale();
    let w = crate::i18n::usage_words(l);
    let total = report.total.clone();
    if total.turns == 0 {
        return view! {
            <Limits quotas=report.quotas.clone()/>
            <p class="usage-none">{w.none}</p>
        }
        .into_any();
    }
    let currency = report.currency.clone();
    let tokens = tokens_chart(&report, l);
    let thinking = thinking_chart(&report, l);
    let cost = cost_chart(&report);
    let estimated = (total.estimated_turns > 0)
        .then(|| fill(w.estimated, &[("n", &l.integer(total.estimated_turns))]));
    let days = report.days.clone();
    let cost_days = report.days.clone();
    let cost_currency = currency.clone().unwrap_or_default();
    view! {
        <Limits quotas=report.quotas.clone()/>
        <dl class="usage-totals" style:display="flex" style:flex-wrap="wrap" style:gap="var(--gap) 2rem">
            <Figure name=w.turns value=l.integer(total.turns)/>
            <Figure name=w.tokens value=l.integer(total.input_tokens + total.output_tokens)/>
            <Figure name=w.reasoning value=l.integer(total.reasoning_tokens)/>
            <Figure name=w.thinking_time value=duration(total.thinking_ms, l)/>
            {currency.clone().map(|c| view! { <Figure name=w.cost value=money(total.cost_micros, &c)/> })}
        </dl>
        {estimated.map(|e| view! { <Note text=e/> })}
        {currency.is_none().then(|| view! { <Note text=w.unpriced.to_string()/> })}
        <Chart id="usage-tokens" title=w.tokens_per_day chart=tokens legend=vec![("reasoning", w.reasoning), ("answer", w.answer), ("input", w.input)]>
            <table style:border-spacing="0.75rem 0.2rem" style:font-variant-numeric="tabular-nums" style:white-space="nowrap">
                <thead><tr><th scope="col">{w.day}</th><th scope="col">{w.reasoning}</th><th scope="col">{w.answer}</th><th scope="col">{w.input}</th><th scope="col">{w.cached_input}</th></tr></thead>
                <tbody>
                    {days.iter().map(|d| view! {
                        <tr><th scope="row">{d.key.clone()}</th><td>{l.integer(d.reasoning_tokens)}</td><td>{l.integer(d.answer_tokens())}</td><td>{l.integer(d.input_tokens)}</td><td>{l.integer(d.cached_input_tokens)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        </Chart>
        <Chart id="usage-thinking" title=w.thinking_per_day chart=thinking legend=vec![]>
            <table style:border-spacing="0.75rem 0.2rem" style:font-variant-numeric="tabular-nums" style:white-space="nowrap">
                <thead><tr><th scope="col">{w.day}</th><th scope="col">{w.thinking_time}</th><th scope="col">{w.turns}</th></tr></thead>
                <tbody>
                    {report.days.iter().map(|d| view! {
                        <tr><th scope="row">{d.key.clone()}</th><td>{duration(d.thinking_ms, l)}</td><td>{l.integer(d.turns)}</td></tr>
                    }).collect_view()}
                </tbody>
            </table>
        </Chart>
        {cost.map(|chart| view! {
            <Chart id="usage-cost" title=w.cost_per_day chart legend=vec![]>
                <table style:border-spacing="0.75rem 0.2rem" style:font-variant-numeric="tabular-nums" style:white-space="nowrap">
                    <thead><tr><th scope="col">{w.day}</th><th scope="col">{w.cost}</th></tr></thead>
                    <tbody>
                        {cost_days.iter().map(|d| view! {
                            <tr><th scope="row">{d.key.clone()}</th><td>{money(d.cost_micros, &cost_currency)}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </Chart>
        })}
        <Lines id="usage-models" title=w.by_model first=w.model lines=report.models.clone() currency=currency.clone() pick=None/>
        {(!report.users.is_empty()).then(|| view! {
            <Lines id="usage-readers" title=w.by_reader first=w.reader lines=report.users.clone() currency=currency.clone() pick=Some(pick)/>
        })}
    }
    .into_any()
}

/// A day chart drawn as SVG (an image with its summary as its name), its legend, and its table
/// (`children`) under "The numbers".
#[component]
fn Chart(
    id: &'static str,
    title: &'static str,
    chart: DayChart,
    legend: Vec<(&'static str, &'static str)>,
    children: Children,
) -> impl IntoView {
    let l = crate::ui::locale::locale();
    let w = crate::i18n::usage_words(l);
    let heading = format!("{id}-title");
    let labelled = heading.clone();
    let view_box = format!("0 0 {} {}", chart.width, CHART_HEIGHT + 14);
    view! {
        <section class="usage-chart" id=id aria-labelledby=labelled>
            <h3 id=heading>{title}</h3>
            <svg viewBox=view_box role="img" aria-label=title class="usage-bars" style:width="100%" style:height="auto" style:max-height="12rem">
                <line class="usage-axis" x1="0" y1=CHART_HEIGHT x2=chart.width y2=CHART_HEIGHT style:stroke="var(--line-strong)"/>
                {chart.bars.into_iter().map(|bar| {
                    let x = bar.x;
                    let label = (!bar.day.is_empty() && (bar.day == "1" || bar.day.parse::<u32>().is_ok_and(|d| d % 5 == 0)))
                        .then(|| view! { <text class="usage-day" x=x + BAR_WIDTH / 2 y=CHART_HEIGHT + 12 text-anchor="middle" style:font-size="9px" style:fill="var(--ink-soft)">{bar.day.clone()}</text> });
                    view! {
                        <g class="usage-bar">
                            <title>{bar.title}</title>
                            {bar.segments.into_iter().map(|s| view! {
                                <rect class=format!("usage-{}", s.series) x=x y=s.y width=BAR_WIDTH height=s.height style:fill=colour(s.series)/>
                            }).collect_view()}
                            {label}
                        </g>
                    }
                }).collect_view()}
            </svg>
            {(!legend.is_empty()).then(|| view! {
                <ul class="usage-legend" style:display="flex" style:gap="var(--gap)" style:list-style="none" style:padding="0">
                    {legend.into_iter().map(|(series, name)| view! {
                        <li>
                            <svg class="usage-swatch" viewBox="0 0 10 10" aria-hidden="true" style:width="0.75rem" style:height="0.75rem" style:margin-inline-end="0.3rem">
                                <rect x="0" y="0" width="10" height="10" style:fill=colour(series)/>
                            </svg>
                            {name}
                        </li>
                    }).collect_view()}
                </ul>
            })}
            <Note text=format!("0 – {}", l.integer(chart.top))/>
            <details class="usage-numbers">
                <summary>{w.numbers}</summary>
                {children()}
            </details>
        </section>
    }
}

/// Each model's (or reader's) tokens, reasoning, thinking time and cost, with its share drawn
/// as a bar.
#[component]
fn Lines(
    id: &'static str,
    title: &'static str,
    first: &'static str,
    lines: Vec<UsageLine>,
    currency: Option<String>,
    /// A name that opens its own month (the readers', for an administrator).
    pick: Option<Callback<String>>,
) -> impl IntoView {
    let l = crate::ui::locale::locale();
    let w = crate::i18n::usage_words(l);
    let parts = shares(&lines);
    let heading = format!("{id}-title");
    let labelled = heading.clone();
    let priced = currency.is_some();
    view! {
        <section class="usage-lines" id=id aria-labelledby=labelled>
            <h3 id=heading>{title}</h3>
            <table style:border-spacing="0.75rem 0.2rem" style:font-variant-numeric="tabular-nums" style:white-space="nowrap">
                <thead>
                    <tr>
                        <th scope="col">{first}</th>
                        <th scope="col">{w.share}</th>
                        <th scope="col">{w.tokens}</th>
                        <th scope="col">{w.reasoning}</th>
                        <th scope="col">{w.thinking_time}</th>
                        <th scope="col">{w.turns}</th>
                        {priced.then(|| view! { <th scope="col">{w.cost}</th> })}
                    </tr>
                </thead>
                <tbody>
                    {lines.into_iter().zip(parts).map(|(line, (_, permille))| {
                        let share = permille / 10;
                        let cost = currency.clone().map(|c| view! { <td>{money(line.cost_micros, &c)}</td> });
                        view! {
                            <tr>
                                <th scope="row">
                                    {match pick {
                                        Some(pick) => {
                                            let name = line.key.clone();
                                            view! { <button type="button" class="linklike" on:click=move |_| pick.run(name.clone())>{line.key.clone()}</button> }.into_any()
                                        }
                                        None => line.key.clone().into_any(),
                                    }}
                                </th>
                                <td class="usage-share">
                                    <svg class="usage-share-bar" viewBox="0 0 100 6" aria-hidden="true" style:width="4rem" style:height="0.6rem" style:margin-inline-end="0.4rem"><rect x="0" y="0" width=share height="6" style:fill="var(--brand)"/></svg>
                                    {percent(permille, l)}
                                </td>
                                <td>{l.integer(line.input_tokens + line.output_tokens)}</td>
                                <td>{l.integer(line.reasoning_tokens)}</td>
                                <td>{duration(line.thinking_ms, l)}</td>
                                <td>{l.integer(line.turns)}</td>
                                {cost}
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// The reader's limits and where they stand.
#[component]
fn Limits(quotas: Vec<QuotaState>) -> impl IntoView {
    let l = crate::ui::locale::locale();
    let w = crate::i18n::usage_words(l);
    (!quotas.is_empty()).then(|| {
        view! {
            <section class="usage-limits" aria-labelledby="usage-limits-title">
                <h3 id="usage-limits-title">{w.limits}</h3>
                <ul>
                    {quotas.into_iter().map(|q| {
                        let amount = |n: u64| match q.quota.measure {
                            QuotaMeasure::Tokens => l.integer(n),
                            QuotaMeasure::Cost => micros_text(n),
                        };
                        let period = match q.quota.period {
                            QuotaPeriod::Day => w.per_day,
                            QuotaPeriod::Month => w.per_month,
                        };
                        let line = fill(w.limit_line, &[
                            ("used", &amount(q.used)),
                            ("limit", &amount(q.quota.limit)),
                            ("period", period),
                            ("when", &when(q.resets_at, l)),
                        ]);
                        let over = q.used >= q.quota.limit;
                        view! {
                            <li class:usage-over=over style:color=over.then_some("var(--error)")>
                                <meter min="0" max=q.quota.limit as f64 high=q.quota.limit as f64 * 0.8 optimum="0" value=q.used.min(q.quota.limit) as f64></meter>
                                {line}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </section>
        }
    })
}

/// One total: its name, and its figure in larger type.
#[component]
fn Figure(name: &'static str, value: String) -> impl IntoView {
    view! {
        <div>
            <dt>{name}</dt>
            <dd style:margin="0" style:font-size="1.25rem" style:font-weight="600">{value}</dd>
        </div>
    }
}

/// A note in smaller, softer type.
#[component]
fn Note(text: String) -> impl IntoView {
    view! { <p class="usage-note" style:font-size="0.8125rem" style:color="var(--ink-soft)">{text}</p> }
}

/// The colour a series is drawn in, from the page's palette (light or dark alike).
fn colour(series: &str) -> &'static str {
    match series {
        "reasoning" => "var(--brand)",
        "answer" => "var(--hl-support)",
        "input" => "var(--line-strong)",
        "thinking" => "var(--brand-soft)",
        _ => "var(--hl-constant)",
    }
}

/// A reset time in the reader's own clock and language.
fn when(ms: i64, l: Locale) -> String {
    let date = js_sys::Date::new(&leptos::wasm_bindgen::JsValue::from_f64(ms as f64));
    String::from(date.to_locale_string(l.tag(), &leptos::wasm_bindgen::JsValue::UNDEFINED))
}

/// The administrator's form: each reader's own limits, set or back to the default.
#[component]
fn ReaderLimits() -> impl IntoView {
    let l = crate::ui::locale::locale();
    let w = crate::i18n::usage_words(l);
    let settings = RwSignal::new(None::<crate::api::usage::QuotaSettings>);
    let status = RwSignal::new(None::<String>);
    let name = RwSignal::new(String::new());
    let limits = RwSignal::new(String::new());
    let load = move || {
        spawn_local(async move {
            match crate::api::usage::quotas_in_force().await {
                Ok(s) => settings.set(Some(s)),
                Err(e) => status.set(Some(crate::client::labels::failure_text(&e.0, l))),
            }
        });
    };
    load();
    let send = move |to: Option<String>| {
        let who = name.get_untracked().trim().to_string();
        if who.is_empty() {
            return;
        }
        spawn_local(async move {
            match crate::api::usage::set_quota(who, to).await {
                Ok(()) => {
                    status.set(Some(w.saved.to_string()));
                    load();
                }
                Err(e) => status.set(Some(crate::client::labels::failure_text(&e.0, l))),
            }
        });
    };
    view! {
        <section class="usage-admin" aria-labelledby="usage-admin-title">
            <h3 id="usage-admin-title">{w.readers_limits}</h3>
            {move || settings.get().map(|s| {
                let default = if s.default.is_empty() { w.no_limit.to_string() } else { s.default.clone() };
                view! {
                    <p>{fill(w.default_limits, &[("limits", &default)])}</p>
                    {s.admins_exempt.then(|| view! { <Note text=w.admins_exempt.to_string()/> })}
                    <ul class="usage-reader-limits">
                        {s.readers.into_iter().map(|(who, set)| {
                            let set = if set.is_empty() { w.no_limit.to_string() } else { set };
                            view! { <li><strong>{who}</strong>": " {set}</li> }
                        }).collect_view()}
                    </ul>
                }
            })}
            <form class="usage-limit-form" style:display="flex" style:flex-wrap="wrap" style:gap="var(--gap)" style:align-items="end" on:submit=move |ev| {
                ev.prevent_default();
                send(Some(limits.get_untracked()));
            }>
                <label style:display="grid">{w.reader}<input type="text" required autocomplete="off" bind:value=name/></label>
                <label style:display="grid">{w.limits_field}<input type="text" dir="ltr" placeholder="tokens/day=200000, cost/month=5.50" bind:value=limits/></label>
                <button type="submit">{l.catalogue().save}</button>
                <button type="button" on:click=move |_| send(None)>{w.back_to_default}</button>
            </form>
            <p role="status" class="usage-saved">{move || status.get()}</p>
        </section>
    }
}
