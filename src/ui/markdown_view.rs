//! Rendered markdown for a growing text. The only place the app writes raw HTML: it always
//! comes from [`crate::markdown`], through the allow-list again in [`super::sanitize`].
//!
//! While the text streams, finished top-level blocks are appended to the DOM once and only the
//! open tail is replaced; changes arrive at most twenty times a second. Finished blocks go into
//! sections of about [`SECTION_CHARS`] of text, which the browser skips (style, layout and
//! paint) while they are out of view (`.md-section` in `style/markdown.css`), so each frame of
//! a megabyte of reasoning costs what is on screen, not the whole text.
//!
//! A view that is folded away (a thinking block closed once its answer starts) parks its
//! sections: their blocks leave the document for a detached fragment, and each section keeps
//! only its text, so the page's element count is what the reader can see, while reading the
//! block's text (and find in page) still works. Opening it puts the same nodes back.
//!
//! The renderer is not in the page's first download: it is part of the message bubbles' chunk
//! (see [`super::message_code`]), so it is here whenever a view of it is.

use leptos::html::Div;
use leptos::prelude::*;
use leptos::wasm_bindgen::JsCast;
use std::time::Duration;

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
        .filter(|s| *filled < SECTION_CHARS && !s.class_list().contains(PARKED));
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

/// Sections parked per step, so a megabyte of folded reasoning leaves the document over many
/// short tasks rather than one long one.
const PARKED_PER_STEP: usize = 8;

/// Sections of a folded view whose blocks are off the document, and the parking under way.
#[derive(Default)]
struct Parking {
    /// Each parked section with the blocks it held.
    parked: Vec<(web_sys::Element, web_sys::DocumentFragment)>,
    /// A step is scheduled.
    running: bool,
    /// Bumped on unfolding and on a reset: a scheduled step of an older generation does
    /// nothing.
    generation: u64,
    /// The text still streams: its last section is still being filled, and is parked once
    /// the text ends (parked now, each update would start a section of its own).
    live: bool,
}

impl Parking {
    /// Forgets the steps under way: a step scheduled before does nothing.
    fn stop(&mut self) {
        self.generation += 1;
        self.running = false;
    }
}

/// How long parking waits for a section's formulas and code to be dressed before it looks again.
const DRESSING_WAIT: Duration = Duration::from_millis(250);

/// The class of a section whose blocks are parked.
const PARKED: &str = "md-parked";

/// What is left to park after a step.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Left {
    Nothing,
    /// Sections ready to park.
    Ready,
    /// Only sections whose formulas or code are still being dressed: their text is not final
    /// yet, so they are parked once it is. (A live text's sections are looked at again after
    /// its next update instead.)
    Dressing,
}

/// A section not parked yet.
const UNPARKED: &str = ":scope > .md-section:not(.md-parked)";
/// A section not parked yet whose formulas and code are all dressed.
const PARKABLE: &str =
    ":scope > .md-section:not(.md-parked):not(:has([data-hl=pending], [data-math=pending]))";
/// The same, but not the last section (which a live text is still filling).
const PARKABLE_LIVE: &str = ":scope > .md-section:not(.md-parked):not(:last-child):not(:has([data-hl=pending], [data-math=pending]))";

/// Moves the blocks of up to `limit` sections of `done` ready to park into detached fragments,
/// each section keeping its text.
fn park_sections(done: &web_sys::Element, parking: &mut Parking, limit: usize) -> Left {
    let parkable = if parking.live {
        PARKABLE_LIVE
    } else {
        PARKABLE
    };
    let (Some(document), Ok(found)) = (done.owner_document(), done.query_selector_all(parkable))
    else {
        return Left::Nothing;
    };
    let sections = (0..found.length())
        .filter_map(|i| found.item(i))
        .filter_map(|n| n.dyn_into::<web_sys::Element>().ok());
    for section in sections.take(limit) {
        let text = section.text_content();
        let blocks = document.create_document_fragment();
        while let Some(block) = section.first_child() {
            if blocks.append_child(&block).is_err() {
                break;
            }
        }
        section.set_text_content(text.as_deref());
        let _ = section.class_list().add_1(PARKED);
        parking.parked.push((section, blocks));
    }
    if found.length() as usize > limit {
        Left::Ready
    } else if !parking.live && done.query_selector(UNPARKED).ok().flatten().is_some() {
        Left::Dressing
    } else {
        Left::Nothing
    }
}

/// Puts every parked section's blocks back in place.
fn unpark_sections(parking: &mut Parking) {
    parking.stop();
    for (section, blocks) in parking.parked.drain(..) {
        section.set_text_content(None);
        let _ = section.append_child(&blocks);
        let _ = section.class_list().remove_1(PARKED);
    }
}

/// Parks `done`'s sections a step at a time, each step in a task of its own, until none is
/// left or the view unfolds.
fn park_soon(done: web_sys::Element, parking: StoredValue<Parking, LocalStorage>) {
    let Some(generation) = parking
        .try_update_value(|p| (!std::mem::replace(&mut p.running, true)).then_some(p.generation))
        .flatten()
    else {
        return;
    };
    fn step(
        done: web_sys::Element,
        parking: StoredValue<Parking, LocalStorage>,
        generation: u64,
        wait: Duration,
    ) {
        set_timeout(
            move || {
                let left = parking.try_update_value(|p| {
                    if p.generation != generation {
                        return Left::Nothing;
                    }
                    let left = park_sections(&done, p, PARKED_PER_STEP);
                    p.running = left != Left::Nothing;
                    left
                });
                match left {
                    Some(Left::Ready) => step(done, parking, generation, Duration::ZERO),
                    Some(Left::Dressing) => step(done, parking, generation, DRESSING_WAIT),
                    _ => {}
                }
            },
            wait,
        );
    }
    step(done, parking, generation, Duration::ZERO);
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
    /// True while the view is folded away: its finished sections are then parked.
    #[prop(optional, into)]
    folded: Option<Signal<bool>>,
) -> impl IntoView {
    let done = NodeRef::<Div>::new();
    let tail = NodeRef::<Div>::new();
    let renderer = StoredValue::new_local(IncrementalMarkdown::with_urls(browser_url));
    let filled = StoredValue::new_local(0usize);
    let parking = StoredValue::new_local(Parking::default());
    let is_folded = move || folded.is_some_and(|f| f.get_untracked());

    Effect::new(move |_| {
        let Some(folded) = folded else {
            return;
        };
        let now_folded = folded.get();
        let Some(done_el) = done.get() else {
            return;
        };
        if now_folded {
            park_soon(done_el.into(), parking);
        } else {
            parking.update_value(unpark_sections);
        }
    });

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
        let done_el: &web_sys::Element = &done_el;
        parking.update_value(|p| p.live = streaming);
        renderer.with_value(|md| {
            if update == Update::Unchanged {
                return;
            }
            let added = match update {
                Update::Unchanged => "",
                Update::Appended { from } => &md.finished_html()[from..],
                Update::Reset => {
                    parking.update_value(|p| {
                        p.stop();
                        p.parked.clear();
                    });
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
        if is_folded() {
            park_soon(done_el.clone(), parking);
        }
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
