//! Formulas in rendered markdown become MathML. The writer leaves each formula as its source in
//! `<code class="math-inline">` or `<code class="math-display">`; once a block is finished (a
//! formula still being written is left alone), its formulas are asked for in one request
//! (`render/math`), each answer passes the MathML allow-list ([`super::sanitize`]) and takes
//! the source's place. A formula that does not parse, or cannot be asked for, stays source.

use std::cell::RefCell;
use std::collections::HashMap;

use leptos::task::spawn_local;
use leptos::wasm_bindgen::JsCast;
use web_sys::Element;

use crate::domain::MathItem;

/// What the page shows when a formula stays source.
const AS_WRITTEN: &str = "This formula could not be typeset; it is shown as written.";

thread_local! {
    /// Formulas already converted on this page (a regenerate or a reload of the same chat asks
    /// for nothing again).
    static TYPESET: RefCell<HashMap<MathItem, Option<String>>> = RefCell::new(HashMap::new());
}

/// Typesets the formulas under `root` not handled yet.
pub fn typeset(root: &Element) {
    let Ok(found) = root.query_selector_all(
        "code.math-inline:not([data-math]), code.math-display:not([data-math])",
    ) else {
        return;
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
    if formulas.is_empty() {
        return;
    }
    spawn_local(async move {
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
        if !missing.is_empty() {
            if let Ok(answers) = crate::api::rich::render_math(missing.clone()).await {
                TYPESET.with(|done| {
                    let mut done = done.borrow_mut();
                    for (item, mathml) in missing.into_iter().zip(answers) {
                        done.insert(item, mathml);
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
                let _ = el.set_attribute("title", AS_WRITTEN);
            }
        }
    });
}
