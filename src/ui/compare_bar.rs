//! Compare mode: the composer's bar that picks 2–4 models, each with its own thinking and effort
//! (the next question goes to all of them at once), and the reader's record of comparisons per
//! model (Settings → Comparisons: answers kept, thumbs, median thinking time and reasoning tokens,
//! as charts and a table). Both are a chunk of their own (`compare`), fetched the first time the
//! reader compares or opens the record: the first download has only the composer's button, the
//! bar's empty place and the shortcut ⌘⇧M.

use std::cell::Cell;

use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::SplitLoaderError;

use crate::client::compare::{first_panes, with_another, Pane};
use crate::client::controller::ChatController;
use crate::client::usage_view::duration;
use crate::domain::compare::ModelRecord;
use crate::domain::{Effort, Failure};

/// What the chunk gives the page.
#[derive(Clone, Copy)]
struct CompareCode {
    start: fn(ChatController),
    record: fn(RwSignal<bool>) -> AnyView,
}

thread_local! {
    static CODE: Cell<Option<CompareCode>> = const { Cell::new(None) };
}

#[leptos::wasm_split::wasm_split(compare, wasm_split_path = leptos::wasm_split, fallible)]
fn compare_code() -> Result<CompareCode, SplitLoaderError> {
    Ok(CompareCode {
        start,
        record: |open| view! { <RecordDialog open/> }.into_any(),
    })
}

fn loaded(chat: ChatController, then: impl FnOnce(CompareCode) + 'static) {
    if let Some(code) = CODE.get() {
        return then(code);
    }
    chat.when_loaded(compare_code(), move |code| {
        CODE.set(Some(code));
        then(code);
    });
}

/// Whether the reader can compare here: a chat the server keeps, and two models on offer.
pub fn can_compare(chat: ChatController) -> bool {
    chat.server.get() && !chat.temporary.get() && chat.models.with(|m| m.models.len() >= 2)
}

/// Turns compare mode on (fetching its code the first time) or off.
pub fn toggle(chat: ChatController) {
    if chat.compare.with_untracked(Option::is_some) {
        chat.compare.set(None);
    } else if untrack(|| can_compare(chat)) {
        loaded(chat, move |code| (code.start)(chat));
    }
}

/// Where the bar of models compared goes, above the composer's box: the chunk draws it there
/// the first time the reader compares (the first download carries only this empty place).
pub const BAR_SLOT: &str = "compare-bar-slot";

/// The composer's button that turns compare mode on and off (hidden where the reader cannot
/// compare).
#[component]
pub fn CompareToggle() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    view! {
        <button
            type="button"
            class="chip compare-toggle"
            hidden=move || !can_compare(chat)
            aria-pressed=move || chat.compare.with(Option::is_some).to_string()
            aria-keyshortcuts="Control+Shift+M"
            on:click=move |_| toggle(chat)
        >{t.compare_models}</button>
    }
}

/// Settings → Comparisons: opens the record, fetching its code the first time.
#[component]
pub fn RecordOpener() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let w = crate::i18n::compare_words(crate::ui::locale::locale());
    let open = RwSignal::new(false);
    let ready = RwSignal::new(false);
    let show = move |_| {
        if let Some(menu) = crate::ui::dom::find("#settings-menu") {
            use leptos::wasm_bindgen::JsCast;
            if let Ok(menu) = menu.dyn_into::<web_sys::HtmlDetailsElement>() {
                menu.set_open(false);
            }
        }
        loaded(chat, move |_| {
            ready.set(true);
            open.set(true);
        });
    };
    view! {
        <Show when=move || chat.server.get()>
            <button type="button" class="record-open" on:click=show>{w.record_open}</button>
        </Show>
        <Show when=move || open.get() && ready.get()>
            <leptos::portal::Portal>{move || CODE.get().map(|code| (code.record)(open))}</leptos::portal::Portal>
        </Show>
    }
}

fn offered(chat: ChatController) -> Vec<String> {
    chat.models
        .with_untracked(|m| m.models.iter().map(|m| m.id.clone()).collect())
}

/// Compare mode on: the bar is drawn in its place (once; again if the composer was drawn anew),
/// and the comparison starts with the model in use and the next one on offer.
fn start(chat: ChatController) {
    use leptos::wasm_bindgen::JsCast;
    let slot = crate::ui::dom::find(&format!("#{BAR_SLOT}"))
        .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(slot) = slot.filter(|s| s.child_element_count() == 0) {
        let locale = chat.locale;
        leptos::mount::mount_to(slot, move || {
            provide_context(chat);
            provide_context(locale);
            view! { <CompareBar/> }
        })
        .forget();
    }
    let current = untrack(|| chat.current_model());
    chat.compare.set(first_panes(&current, &offered(chat)));
}

#[component]
fn CompareBar() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let w = crate::i18n::compare_words(crate::ui::locale::locale());
    let count = Memo::new(move |_| chat.compare.with(|c| c.as_ref().map_or(0, Vec::len)));
    let can_add = Memo::new(move |_| {
        chat.compare
            .with(|c| c.as_ref().and_then(|p| with_another(p, &offered(chat))))
            .is_some()
    });
    let add = move |_| {
        chat.compare.update(|c| {
            if let Some(panes) = c {
                if let Some(more) = with_another(panes, &offered(chat)) {
                    panes.push(more);
                }
            }
        })
    };
    view! {
        <Show when=move || { count.get() > 0 }>
        <fieldset class="compare-bar">
            <legend>{w.models_compared}</legend>
            <div class="compare-slots">
                <For each=move || 0..count.get() key=|i| *i let:i>
                    <CompareSlot index=i count/>
                </For>
            </div>
            <div class="compare-bar-actions">
                <Show when=move || can_add.get()>
                    <button type="button" class="action add-model" on:click=add>{w.add_model}</button>
                </Show>
                <button type="button" class="action stop-comparing" on:click=move |_| chat.compare.set(None)>{w.stop_comparing}</button>
            </div>
        </fieldset>
        </Show>
    }
}

/// One model of the comparison: which, and its thinking and effort where it takes them.
#[component]
fn CompareSlot(index: usize, count: Memo<usize>) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let w = crate::i18n::compare_words(l);
    let pane = Memo::new(move |_| {
        chat.compare
            .with(|c| c.as_ref().and_then(|p| p.get(index).cloned()))
            .unwrap_or_default()
    });
    let change = move |f: &dyn Fn(&mut Pane)| {
        chat.compare.update(|c| {
            if let Some(p) = c.as_mut().and_then(|p| p.get_mut(index)) {
                f(p);
            }
        })
    };
    let controls = Memo::new(move |_| {
        let model = pane.with(|p| p.model.clone());
        chat.models.with(|m| m.controls(&model))
    });
    let thinking_on = move || pane.with(|p| p.thinking != Some(false));
    let id = format!("compare-model-{index}");
    let effort_id = format!("compare-effort-{index}");
    let label = crate::i18n::fill(w.model_n, &[("n", &l.integer(index as u64 + 1))]);
    view! {
        <div class="compare-slot">
            <label for=id.clone()>{label}</label>
            <select
                id=id
                prop:value=move || pane.with(|p| p.model.clone())
                on:change=move |ev| {
                    let model = event_target_value(&ev);
                    change(&|p: &mut Pane| {
                        *p = Pane { model: model.clone(), ..Pane::default() };
                    });
                }
            >
                {move || {
                    chat.models.with(|m| {
                        m.models
                            .iter()
                            .map(|m| view! { <option value=m.id.clone()>{m.label().to_string()}</option> })
                            .collect::<Vec<_>>()
                    })
                }}
            </select>
            <Show when=move || controls.get().toggle>
                <button
                    type="button"
                    class="chip thinking-toggle"
                    aria-pressed=move || thinking_on().to_string()
                    on:click=move |_| {
                        let on = thinking_on();
                        change(&|p: &mut Pane| p.thinking = Some(!on));
                    }
                >{move || if thinking_on() { t.thinking_on } else { t.thinking_off }}</button>
            </Show>
            <Show when=move || controls.get().effort && (thinking_on() || !controls.get().toggle)>
                <label class="visually-hidden" for=effort_id.clone()>{t.effort}</label>
                <select
                    id=effort_id.clone()
                    class="effort"
                    prop:value=move || pane.with(|p| p.effort.map(|e| e.as_str()).unwrap_or(""))
                    on:change=move |ev| {
                        let effort = Effort::parse(&event_target_value(&ev));
                        change(&|p: &mut Pane| p.effort = effort);
                    }
                >
                    <option value="">{t.effort_default}</option>
                    {move || {
                        controls
                            .get()
                            .levels
                            .iter()
                            .map(|e| view! { <option value=e.as_str()>{crate::client::labels::effort_word(e, t)}</option> })
                            .collect::<Vec<_>>()
                    }}
                </select>
            </Show>
            <Show when=move || { count.get() > 2 }>
                <button
                    type="button"
                    class="icon-button remove-model"
                    aria-label=move || crate::i18n::fill(w.remove_model, &[("model", &pane.with(|p| p.model.clone()))])
                    on:click=move |_| chat.compare.update(|c| {
                        if let Some(p) = c {
                            if index < p.len() {
                                p.remove(index);
                            }
                        }
                    })
                >{super::icons::icon(super::icons::Icon::Close)}</button>
            </Show>
        </div>
    }
}

/// Bars of a record's chart: the model and its value, drawn to the largest.
const CHART_WIDTH: f64 = 240.0;

/// The reader's comparisons per model: charts of answers kept, median thinking time and median
/// reasoning tokens, and the table with every figure.
#[component]
fn RecordDialog(open: RwSignal<bool>) -> impl IntoView {
    let l = crate::ui::locale::locale();
    let w = crate::i18n::compare_words(l);
    let record = RwSignal::new(None::<Result<Vec<ModelRecord>, Failure>>);
    spawn_local(async move {
        record.set(Some(
            crate::api::compare::compare_record().await.map_err(|e| e.0),
        ));
    });
    let dialog = NodeRef::<leptos::html::Dialog>::new();
    Effect::new(move |_| {
        if let Some(d) = dialog.get() {
            if !d.open() {
                let _ = d.show_modal();
            }
        }
    });
    let chart = move |rows: &[ModelRecord],
                      caption: &'static str,
                      value: fn(&ModelRecord) -> Option<u64>,
                      text: &dyn Fn(u64) -> String| {
        let max = rows.iter().filter_map(value).max().unwrap_or(0).max(1) as f64;
        let height = rows.len() as f64 * 24.0;
        view! {
            <figure class="record-chart">
                <figcaption>{caption}</figcaption>
                <svg role="img" aria-label=caption viewBox=format!("0 0 {} {height}", CHART_WIDTH + 160.0) class="record-bars">
                    {rows
                        .iter()
                        .enumerate()
                        .map(|(i, r)| {
                            let v = value(r);
                            let width = v.map_or(0.0, |v| v as f64 / max * CHART_WIDTH);
                            let y = i as f64 * 24.0;
                            view! {
                                <text x="0" y=y + 16.0 class="bar-label">{r.model.clone()}</text>
                                <rect x="120" y=y + 4.0 width=width.max(1.0) height="16" class="bar"></rect>
                                <text x=124.0 + width y=y + 16.0 class="bar-value">{v.map(text).unwrap_or_else(|| "–".into())}</text>
                            }
                        })
                        .collect::<Vec<_>>()}
                </svg>
            </figure>
        }
    };
    let body = move || match record.get() {
        None => view! { <p>{w.loading}</p> }.into_any(),
        Some(Err(e)) => {
            view! { <p class="error-message">{crate::client::labels::failure_text(&e, l)}</p> }
                .into_any()
        }
        Some(Ok(rows)) if rows.is_empty() => {
            view! { <p class="record-empty">{w.none_yet}</p> }.into_any()
        }
        Some(Ok(rows)) => {
            let wins = chart(&rows, w.wins_chart, |r| Some(r.wins), &|n| l.integer(n));
            let thought = chart(&rows, w.thinking_chart, |r| r.median_thinking_ms, &|ms| {
                duration(ms, l)
            });
            let tokens = chart(&rows, w.tokens_chart, |r| r.median_reasoning_tokens, &|n| {
                l.integer(n)
            });
            view! {
                {wins}
                {thought}
                {tokens}
                <table class="record-table">
                    <thead>
                        <tr>
                            <th scope="col">{w.model}</th>
                            <th scope="col">{w.comparisons}</th>
                            <th scope="col">{w.wins}</th>
                            <th scope="col">{w.thumbs_up}</th>
                            <th scope="col">{w.thumbs_down}</th>
                            <th scope="col">{w.median_thinking}</th>
                            <th scope="col">{w.median_tokens}</th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows
                            .into_iter()
                            .map(|r| view! {
                                <tr>
                                    <th scope="row">{r.model.clone()}</th>
                                    <td>{l.integer(r.comparisons)}</td>
                                    <td>{l.integer(r.wins)}</td>
                                    <td>{l.integer(r.thumbs_up)}</td>
                                    <td>{l.integer(r.thumbs_down)}</td>
                                    <td>{r.median_thinking_ms.map(|ms| duration(ms, l)).unwrap_or_else(|| "–".into())}</td>
                                    <td>{r.median_reasoning_tokens.map(|n| l.integer(n)).unwrap_or_else(|| "–".into())}</td>
                                </tr>
                            })
                            .collect::<Vec<_>>()}
                    </tbody>
                </table>
            }
            .into_any()
        }
    };
    view! {
        <dialog class="record-dialog" node_ref=dialog aria-labelledby="record-title" on:close=move |_| open.set(false)>
            <header class="record-head">
                <h2 id="record-title">{w.record_title}</h2>
                <form method="dialog">
                    <button type="submit" class="icon-button" aria-label=l.catalogue().close>{super::icons::icon(super::icons::Icon::Close)}</button>
                </form>
            </header>
            <p class="record-intro">{w.record_intro}</p>
            {body}
        </dialog>
    }
}
