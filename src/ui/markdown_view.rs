//! Rendered markdown for a growing text. The only place the app writes raw HTML: it always
//! comes from [`crate::markdown`], through the allow-list again in [`super::sanitize`].
//!
//! While the text streams, finished top-level blocks are appended to the DOM once and only the
//! open tail is replaced; changes arrive at most once per animation frame.
//!
//! The renderer is not in the page's first download: `make site` splits it (pulldown-cmark and
//! the writer, about 70 KB brotli) into a WebAssembly chunk of its own, which [`want_renderer`] fetches
//! once, when the first text is typed or the first markdown is shown. Until it has arrived a view
//! shows nothing new and catches up at once; if it cannot be fetched the text is shown as plain
//! text, and the next wish fetches again.

use std::cell::Cell;

use leptos::html::Div;
use leptos::prelude::*;
use leptos::wasm_split::SplitLoaderError;

use super::sanitize::{append_markup, browser_url, replace_with_markup, sanitized_fragment};
use crate::markdown::{RendererFactory, StreamRenderer, Update};

/// Markdown with every kind of block the renderer handles, for the warm-up in [`want_renderer`].
const WARM_UP_SAMPLE: &str =
    "## Plan\n\nSome *emphasis*, **strong**, `code` and [a link](https://example.com).\n\n\
1. first\n2. second\n\n- a\n- [x] done\n\n> quoted\n\n```rust\nfn main() {}\n```\n\n\
| a | b |\n|:--|--:|\n| 1 | 2 |\n\n---\n";

/// Where the renderer's code is.
#[derive(Clone, Copy)]
enum Engine {
    Absent,
    Loading,
    Ready(RendererFactory),
    Failed,
}

thread_local! {
    static ENGINE: Cell<Engine> = const { Cell::new(Engine::Absent) };
    static ENGINE_CHANGED: ArcTrigger = ArcTrigger::new();
}

/// The split point: in the browser, calling it fetches and instantiates the markdown chunk
/// (once; a failure is not remembered, so a later call tries again).
#[leptos::wasm_split::wasm_split(markdown, wasm_split_path = leptos::wasm_split, fallible)]
fn renderer_code() -> Result<RendererFactory, SplitLoaderError> {
    Ok(crate::markdown::stream_renderer)
}

/// Starts fetching the renderer unless it is here or on its way. Once it arrives it renders a
/// sample off the document, so the first streamed frame does not pay for compiling it (the
/// browser compiles WebAssembly lazily, a 50–60 ms frame otherwise), then every view catches up.
pub fn want_renderer() {
    if matches!(ENGINE.get(), Engine::Loading | Engine::Ready(_)) {
        return;
    }
    ENGINE.set(Engine::Loading);
    leptos::task::spawn_local(async {
        let engine = match renderer_code().await {
            Ok(factory) => {
                warm_up(factory);
                Engine::Ready(factory)
            }
            Err(e) => {
                leptos::logging::warn!("the markdown renderer could not be fetched: {e}");
                Engine::Failed
            }
        };
        ENGINE.set(engine);
        ENGINE_CHANGED.with(|changed| changed.notify());
    });
}

fn warm_up(factory: RendererFactory) {
    let mut md = factory(browser_url);
    let half = WARM_UP_SAMPLE.len() / 2;
    let cut = (0..=half)
        .rev()
        .find(|&i| WARM_UP_SAMPLE.is_char_boundary(i))
        .unwrap_or(0);
    let _ = md.update(&WARM_UP_SAMPLE[..cut]);
    let _ = md.finish(WARM_UP_SAMPLE);
    let _ = sanitized_fragment(md.finished_html());
}

/// Renders `text` as sanitized markdown.
#[component]
pub fn MarkdownView(
    /// Lends the markdown source to the function it is given, reading it (and tracking it)
    /// where it lives: a streaming answer or reasoning is not copied every frame to be shown.
    text: impl Fn(&mut dyn FnMut(&str)) + 'static,
    /// True while `text` may still grow; when it turns false the text is rendered exactly.
    #[prop(into)]
    streaming: Signal<bool>,
    /// Extra classes for the container.
    #[prop(optional)]
    class: &'static str,
) -> impl IntoView {
    let done = NodeRef::<Div>::new();
    let tail = NodeRef::<Div>::new();
    let renderer = StoredValue::new_local(None::<Box<dyn StreamRenderer>>);

    Effect::new(move |_| {
        let (Some(done_el), Some(tail_el)) = (done.get(), tail.get()) else {
            return;
        };
        let streaming = streaming.get();
        if renderer.with_value(Option::is_none) {
            // Only a view still waiting for the renderer listens for its arrival.
            ENGINE_CHANGED.with(|changed| changed.track());
            match ENGINE.get() {
                Engine::Ready(factory) => renderer.set_value(Some(factory(browser_url))),
                Engine::Failed => {
                    text(&mut |t| tail_el.set_text_content(Some(t)));
                    return;
                }
                Engine::Absent | Engine::Loading => {
                    want_renderer();
                    return;
                }
            }
        }
        let mut update = Update::Unchanged;
        text(&mut |t| {
            renderer.update_value(|md| {
                if let Some(md) = md {
                    update = if streaming {
                        md.update(t)
                    } else {
                        md.finish(t)
                    };
                }
            });
        });
        if update == Update::Unchanged {
            return;
        }
        renderer.with_value(|md| {
            let Some(md) = md else {
                return;
            };
            let added = match update {
                Update::Unchanged => "",
                Update::Appended { from } => {
                    let added = &md.finished_html()[from..];
                    append_markup(&done_el, added);
                    added
                }
                Update::Reset => {
                    replace_with_markup(&done_el, md.finished_html());
                    md.finished_html()
                }
            };
            // Formulas and code are dressed once their block is finished, never in the open
            // tail, and the finished part is only searched when a block with either arrived.
            if super::rich::wants_dressing(added) {
                super::rich::typeset(&done_el);
            }
            replace_with_markup(&tail_el, md.tail_html());
        });
    });

    view! {
        <div
            class=format!("markdown {class}")
            dir="auto"
            on:click=move |ev| super::dom::copy_code_from_click(&ev)
        >
            <div class="md-done" node_ref=done></div>
            <div class="md-tail" node_ref=tail></div>
        </div>
    }
}
