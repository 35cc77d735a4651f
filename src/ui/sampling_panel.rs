//! The sampling parameters in the model picker (temperature, top-p, the output limit): one
//! field per parameter the current model takes, blank for the model's own default, so nothing
//! is sent that the reader did not set. Part of the `menu_panels` chunk.

use leptos::prelude::*;

use crate::client::controller::ChatController;
use crate::domain::sampling::Tunable;

/// A parameter's label in the reader's language.
fn label(tunable: Tunable, t: &'static crate::i18n::Catalogue) -> &'static str {
    match tunable {
        Tunable::Temperature => t.param_temperature,
        Tunable::TopP => t.param_top_p,
        Tunable::MaxTokens => t.param_max_tokens,
    }
}

/// The fields of the parameters the current model takes; nothing for a model that takes none.
#[component]
pub fn SamplingControls() -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let t = crate::ui::locale::tr();
    let params = Memo::new(move |_| chat.controls().params);
    let any_set = move || {
        chat.sampling
            .with(|s| Tunable::ALL.iter().any(|t| s.sampling(*t).is_some()))
    };
    view! {
        <Show when=move || !params.get().is_empty()>
            <fieldset class="sampling">
                <legend>{t.params}</legend>
                {move || params.get().iter().map(|tunable| view! { <SamplingField tunable/> }).collect::<Vec<_>>()}
                <Show when=any_set>
                    <button
                        type="button"
                        class="sampling-reset"
                        on:click=move |_| chat.sampling.set(Default::default())
                    >{t.params_reset}</button>
                </Show>
            </fieldset>
        </Show>
    }
}

/// One parameter: a number field, blank for the default; a value out of range is refused with
/// the range and keeps the previous setting.
#[component]
fn SamplingField(tunable: Tunable) -> impl IntoView {
    let chat = expect_context::<ChatController>();
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let wrong = RwSignal::new(false);
    let id = format!("param-{}", tunable.as_str());
    let hint = format!("{id}-hint");
    let field = id.clone();
    let (step, ceiling) = match tunable {
        Tunable::MaxTokens => ("1", tunable.ceiling()),
        _ => ("0.05", tunable.ceiling()),
    };
    let low = if tunable == Tunable::MaxTokens { 1 } else { 0 };
    let range = crate::i18n::fill(
        t.param_range,
        &[("low", &low.to_string()), ("high", &ceiling.to_string())],
    );
    let shown = move || chat.sampling.with(|s| s.sampling_text(tunable));
    let change = move |text: String| {
        let text = text.trim().replace(',', ".");
        let value = if text.is_empty() {
            Ok(None)
        } else {
            text.parse::<f64>().map(Some).map_err(|_| ())
        };
        let next = value.and_then(|v| {
            chat.sampling
                .get_untracked()
                .with_sampling(tunable, v)
                .map_err(|_| ())
        });
        match next {
            Ok(settings) => {
                wrong.set(false);
                chat.sampling.set(settings);
            }
            Err(()) => wrong.set(true),
        }
    };
    view! {
        <label class="sampling-field" for=field>
            <span>{label(tunable, t)}</span>
            <input
                id=id
                type="number"
                inputmode="decimal"
                min=low
                max=ceiling
                step=step
                placeholder=t.param_default
                aria-invalid=move || wrong.get().to_string()
                aria-describedby=hint.clone()
                prop:value=move || shown().unwrap_or_default()
                on:change=move |ev| change(event_target_value(&ev))
            />
        </label>
        <p id=hint class="sampling-hint" class:wrong=move || wrong.get()>{range}</p>
    }
}
