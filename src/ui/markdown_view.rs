//! Rendered markdown for a growing text. The only place the app writes raw HTML: it always
//! comes from [`crate::markdown`], through the allow-list again in [`super::sanitize`].
//!
//! While the text streams, finished top-level blocks are appended to the DOM once and only the
//! open tail is replaced; changes arrive at most twenty times a second. Finished blocks go into
//! sections of about [`SECTION_CHARS`] of text, which the browser skips (style, layout and
//! paint) while they are out of view (`.md-section` in `style/markdown.css`), so each frame of
//! a megabyte of reasoning costs what is on screen, not the whole text.
//!
//! The renderer is not in the page's first download: it is part of the message bubbles' chunk
//! (see [`super::message_code`]), so it is here whenever a view of it is.

use leptos::html::Div;
use leptos::prelude::*;

use super::sanitize::{browser_url, markup_fragment, replace_with_markup, sanitized_fragment};
use crate::markdown::{IncrementalMarkdown, Update};

/// Markdown with every kind of block the renderer handles, for [`warm_up_renderer`].
const WARM_UP_SAMPLE: &str =
    "## Plan\n\nSome *emphasis*, **strong**, `code` and [a link](https://example.com).\n\n\
1. first\n2. second\n\n- a\n- [x] done\n\n> quoted\n\n```rust\nfn main() {}\n```\n\n\
| a | b |\n|:--|--:|\n| 1 | 2 |\n\n---\n";

/// Renders a sample off the document, half streamed then finished, so the first streamed frame
/// does not pay for compiling the renderer (a 50–60 ms frame otherwise).
pub fn warm_up_renderer() {
    let mut md = IncrementalMarkdown::with_urls(browser_url);
    let half = WARM_UP_SAMPLE.len() / 2;
    let cut = (0..=half)
        .rev()
        .find(|&i| WARM_UP_SAMPLE.is_char_boundary(i))
        .unwrap_or(0);
    let _ = md.update(&WARM_UP_SAMPLE[..cut]);
    let _ = md.finish(WARM_UP_SAMPLE);
    let _ = sanitized_fragment(md.finished_html());
}

/// Characters of text after which a new section of finished blocks starts.
const SECTION_CHARS: usize = 4096;

/// Appends the sanitized `html` to `done`, block by block, into its last section while that
/// holds under [`SECTION_CHARS`] of text (`filled`), else into a new one. Only sections made by
/// the steps of a live stream after its first may be skipped (`md-skip`): each is drawn as it
/// fills, so the browser knows its size when it skips it. A text shown whole at once (a stored
/// answer, a replay) would be skipped at a guessed size, and a message scrolled into view could
/// then move away as the sections around it are drawn.
fn append_in_sections(done: &web_sys::Element, html: &str, filled: &mut usize, skip: bool) {
    let (Some(fragment), Some(document)) = (markup_fragment(html), done.owner_document()) else {
        return;
    };
    let mut section = done
        .last_element_child()
        .filter(|_| *filled < SECTION_CHARS);
    while let Some(block) = fragment.first_child() {
        let current = match section.take() {
            Some(s) => s,
            None => {
                let Ok(s) = document.create_element("div") else {
                    return;
                };
                s.set_class_name(if skip {
                    "md-section md-skip"
                } else {
                    "md-section"
                });
                let _ = done.append_child(&s);
                *filled = 0;
                s
            }
        };
        *filled += block.text_content().map_or(0, |t| t.len());
        let _ = current.append_child(&block);
        section = Some(current).filter(|_| *filled < SECTION_CHARS);
    }
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
    let renderer = StoredValue::new_local(IncrementalMarkdown::with_urls(browser_url));
    let filled = StoredValue::new_local(0usize);

    Effect::new(move |_| {
        let (Some(done_el), Some(tail_el)) = (done.get(), tail.get()) else {
            return;
        };
        let streaming = streaming.get();
        let mut update = Update::Unchanged;
        text(&mut |t| {
            renderer.update_value(|md| {
                update = if streaming {
                    md.update(t)
                } else {
                    md.finish(t)
                };
            });
        });
        if update == Update::Unchanged {
            return;
        }
        let done_el: &web_sys::Element = &done_el;
        renderer.with_value(|md| {
            let added = match update {
                Update::Unchanged => "",
                Update::Appended { from } => &md.finished_html()[from..],
                Update::Reset => {
                    done_el.set_text_content(None);
                    filled.set_value(0);
                    md.finished_html()
                }
            };
            // A later step of a live stream; a replay's first step brings all it has, like a
            // stored text.
            let skip = streaming && matches!(update, Update::Appended { from } if from > 0);
            filled.update_value(|filled| append_in_sections(done_el, added, filled, skip));
            // Formulas and code are dressed once their block is finished, never in the open
            // tail, and the finished part is only searched when a block with either arrived.
            if super::rich::wants_dressing(added) {
                super::rich::typeset(done_el);
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
