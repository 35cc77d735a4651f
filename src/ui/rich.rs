//! Rich content in finished markdown blocks (never in the open tail, which changes every frame):
//! formulas become MathML and code blocks are highlighted, both made on the server (the page's
//! first load carries neither converter).
//!
//! The writer leaves each formula as its source in `<code class="math-inline">` or
//! `"math-display"`; the formulas found are asked for in one request (`render/math`), each
//! answer passes the MathML allow-list ([`super::sanitize`]) and takes the source's place. A
//! formula that does not parse, or cannot be asked for, stays source. A fenced code block with
//! a language is asked for the same way (`render/code`); its highlighted text (spans with `hl-`
//! classes) passes its own allow-list and replaces the plain text, which stays otherwise.

use std::cell::RefCell;
use std::collections::HashMap;

use leptos::task::spawn_local;
use leptos::wasm_bindgen::JsCast;
use web_sys::Element;

use crate::domain::{CodeItem, MathItem};

thread_local! {
    /// Formulas already converted on this page (a regenerate or a reload of the same chat asks
    /// for nothing again).
    static TYPESET: RefCell<HashMap<MathItem, Option<String>>> = RefCell::new(HashMap::new());
    /// Code blocks already highlighted on this page.
    static HIGHLIGHTED: RefCell<HashMap<CodeItem, Option<String>>> = RefCell::new(HashMap::new());
    /// What waits for the next round of requests.
    static QUEUE: RefCell<Queue> = RefCell::new(Queue::default());
}

/// Elements found but not dressed yet. One round asks for all of them at once (one
/// `render/code` and one `render/math` request at most); what is found while a round's
/// requests are out waits for the next round, so a long stream that finishes a code block
/// every few milliseconds costs a request per round trip, not one per block.
#[derive(Default)]
struct Queue {
    code: Vec<(Element, CodeItem)>,
    math: Vec<(Element, MathItem)>,
    running: bool,
}

/// True when rendered markdown `html` holds a formula or a code block with a language.
pub fn wants_dressing(html: &str) -> bool {
    html.contains("class=\"math-") || html.contains("class=\"language-")
}

/// Typesets the formulas and highlights the code blocks under `root` not handled yet.
pub fn typeset(root: &Element) {
    let (math, code) = (found_math(root), found_code(root));
    if math.is_empty() && code.is_empty() {
        return;
    }
    let start = QUEUE.with(|queue| {
        let mut queue = queue.borrow_mut();
        queue.math.extend(math);
        queue.code.extend(code);
        !std::mem::replace(&mut queue.running, true)
    });
    if start {
        spawn_local(rounds());
    }
}

/// Runs rounds until nothing waits.
async fn rounds() {
    loop {
        let (code, math) = QUEUE.with(|queue| {
            let mut queue = queue.borrow_mut();
            let taken = (
                std::mem::take(&mut queue.code),
                std::mem::take(&mut queue.math),
            );
            if taken.0.is_empty() && taken.1.is_empty() {
                queue.running = false;
            }
            taken
        });
        if code.is_empty() && math.is_empty() {
            return;
        }
        futures::join!(highlight_code(code), typeset_math(math));
    }
}

/// The fenced code blocks with a language under `root` not handled yet, marked pending.
fn found_code(root: &Element) -> Vec<(Element, CodeItem)> {
    let Ok(found) =
        root.query_selector_all(".code-block pre > code[class^=\"language-\"]:not([data-hl])")
    else {
        return Vec::new();
    };
    let mut blocks = Vec::new();
    for i in 0..found.length() {
        let Some(el) = found.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
            continue;
        };
        let _ = el.set_attribute("data-hl", "pending");
        let lang = el.class_name();
        let item = CodeItem {
            lang: lang.trim_start_matches("language-").to_string(),
            code: el.text_content().unwrap_or_default(),
        };
        blocks.push((el, item));
    }
    blocks
}

/// Highlights `blocks`, asking (one request per hundred) for those not highlighted on this page before.
async fn highlight_code(blocks: Vec<(Element, CodeItem)>) {
    if blocks.is_empty() {
        return;
    }
    let mut missing: Vec<CodeItem> = HIGHLIGHTED.with(|done| {
        let done = done.borrow();
        blocks
            .iter()
            .map(|(_, item)| item)
            .filter(|item| !done.contains_key(item))
            .cloned()
            .collect()
    });
    missing.sort_by(|a, b| (&a.lang, &a.code).cmp(&(&b.lang, &b.code)));
    missing.dedup();
    for part in missing.chunks(crate::domain::rich::MAX_BLOCKS) {
        if let Ok(answers) = crate::api::rich::render_code(part.to_vec()).await {
            HIGHLIGHTED.with(|done| {
                let mut done = done.borrow_mut();
                for (item, html) in part.iter().zip(answers) {
                    done.insert(item.clone(), html);
                }
            });
        }
    }
    for (el, item) in blocks {
        let html = HIGHLIGHTED.with(|done| done.borrow().get(&item).cloned().flatten());
        let fragment = html.and_then(|h| super::sanitize::sanitized_highlight(&h));
        // The highlighted text must be the same text, or it is not used.
        let same = fragment
            .as_ref()
            .is_some_and(|f| f.text_content().as_deref() == Some(item.code.as_str()));
        match fragment.filter(|_| same) {
            Some(fragment) => {
                el.set_text_content(None);
                let _ = el.append_child(&fragment);
                let _ = el.set_attribute("data-hl", "done");
            }
            None => {
                let _ = el.set_attribute("data-hl", "plain");
            }
        }
    }
}

/// The formulas under `root` not handled yet, marked pending.
fn found_math(root: &Element) -> Vec<(Element, MathItem)> {
    let Ok(found) = root.query_selector_all(
        "code.math-inline:not([data-math]), code.math-display:not([data-math])",
    ) else {
        return Vec::new();
    };
    let mut formulas = Vec::new();
    for i in 0..found.length() {
        let Some(el) = found.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
            continue;
        };
        let _ = el.set_attribute("data-math", "pending");
        let item = MathItem {
            tex: el.text_content().unwrap_or_default(),
            display: el.class_list().contains("math-display"),
        };
        formulas.push((el, item));
    }
    formulas
}

/// Typesets `formulas`, asking (one request per five hundred) for those not converted on this page before.
async fn typeset_math(formulas: Vec<(Element, MathItem)>) {
    if formulas.is_empty() {
        return;
    }
    let mut missing: Vec<MathItem> = TYPESET.with(|done| {
        let done = done.borrow();
        formulas
            .iter()
            .map(|(_, item)| item)
            .filter(|item| !done.contains_key(item))
            .cloned()
            .collect()
    });
    missing.sort_by(|a, b| (&a.tex, a.display).cmp(&(&b.tex, b.display)));
    missing.dedup();
    for part in missing.chunks(crate::domain::rich::MAX_FORMULAS) {
        if let Ok(answers) = crate::api::rich::render_math(part.to_vec()).await {
            TYPESET.with(|done| {
                let mut done = done.borrow_mut();
                for (item, mathml) in part.iter().zip(answers) {
                    done.insert(item.clone(), mathml);
                }
            });
        }
    }
    for (el, item) in formulas {
        let mathml = TYPESET.with(|done| done.borrow().get(&item).cloned().flatten());
        let typeset = mathml
            .and_then(|m| super::sanitize::sanitized_math(&m))
            .is_some_and(|math| el.replace_with_with_node_1(&math).is_ok());
        if !typeset {
            let _ = el.set_attribute("data-math", "source");
            let _ = el.set_attribute(
                "title",
                crate::client::browser::page_locale()
                    .catalogue()
                    .formula_not_typeset,
            );
        }
    }
}
