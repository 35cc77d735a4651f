//! Small browser helpers the components share: clipboard, downloads, local time.
//! Only ever called from event handlers and effects, i.e. in the browser.

use leptos::prelude::*;

/// Copies `text` to the clipboard; resolves to whether it worked.
pub async fn copy_text(text: String) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let promise = window.navigator().clipboard().write_text(&text);
    wasm_bindgen_futures::JsFuture::from(promise).await.is_ok()
}

/// Offers `content` as a file download named `filename`.
pub fn download(filename: &str, mime: &str, content: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let parts = js_sys::Array::of1(&leptos::wasm_bindgen::JsValue::from_str(content));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Ok(el) = document.create_element("a") {
        let _ = el.set_attribute("href", &url);
        let _ = el.set_attribute("download", filename);
        if let Some(body) = document.body() {
            let _ = body.append_child(&el);
            if let Some(a) = leptos::wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlElement>(&el) {
                a.click();
            }
            let _ = body.remove_child(&el);
        }
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// The text of the file chosen in a file input, if one was chosen and it reads as text.
pub async fn chosen_file_text(ev: &leptos::ev::Event) -> Option<String> {
    use leptos::wasm_bindgen::JsCast;
    let input = ev.target()?.dyn_into::<web_sys::HtmlInputElement>().ok()?;
    let file = input.files()?.get(0)?;
    input.set_value("");
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .ok()?;
    text.as_string()
}

/// Lowercases for matching, as the browser's `toLowerCase` does in the page (Rust's Unicode
/// case tables, 12 KB, then stay out of its download) and as `str::to_lowercase` does on the
/// server, which renders the same list.
pub fn lowercase(s: &str) -> String {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::JsString::from(s).to_lower_case().into()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        s.to_lowercase()
    }
}

/// The local time of a client timestamp, as `(ISO 8601, "14:05")`.
pub fn local_time(ms: f64) -> (String, String) {
    if ms <= 0.0 {
        return (String::new(), String::new());
    }
    let date = js_sys::Date::new(&leptos::wasm_bindgen::JsValue::from_f64(ms));
    let iso: String = date.to_iso_string().into();
    let short = format!("{:02}:{:02}", date.get_hours(), date.get_minutes());
    (iso, short)
}

/// Runs `f` with a short-lived "done" flag, e.g. to show "Copied" for two seconds.
pub fn flash(flag: RwSignal<bool>) {
    flag.set(true);
    set_timeout(move || flag.set(false), std::time::Duration::from_secs(2));
}

/// Handles a click on a code block's Copy button inside rendered markdown (event delegation).
pub fn copy_code_from_click(ev: &web_sys::MouseEvent) {
    use leptos::wasm_bindgen::JsCast;
    let Some(target) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    else {
        return;
    };
    let Ok(Some(button)) = target.closest(".copy-code") else {
        return;
    };
    let Ok(Some(block)) = button.closest(".code-block") else {
        return;
    };
    let Ok(Some(code)) = block.query_selector("pre") else {
        return;
    };
    let text = code.text_content().unwrap_or_default();
    leptos::task::spawn_local(async move {
        if copy_text(text).await {
            button.set_text_content(Some(
                crate::client::browser::page_locale().catalogue().copied,
            ));
            set_timeout(
                move || button.set_text_content(Some(crate::markdown::copy_labels().0)),
                std::time::Duration::from_secs(2),
            );
        }
    });
}

/// The top bar's open menus (`details.menu[open]`).
fn open_menus() -> Vec<web_sys::HtmlDetailsElement> {
    use leptos::wasm_bindgen::JsCast;
    let Some(list) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector_all("details.menu[open]").ok())
    else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| n.dyn_into::<web_sys::HtmlDetailsElement>().ok())
        .collect()
}

/// Closes every open menu that does not contain `inside` (a click's target, a menu that just
/// opened): one menu is open at a time, and a click elsewhere closes it.
pub fn close_menus_outside(inside: Option<&web_sys::Node>) {
    for menu in open_menus() {
        let holds = inside.is_some_and(|n| menu.contains(Some(n)));
        if !holds {
            menu.set_open(false);
        }
    }
}

/// Closes the open menu, if any, and gives focus back to its button. True when one was open.
pub fn close_menu_with_escape() -> bool {
    use leptos::wasm_bindgen::JsCast;
    let menus = open_menus();
    for menu in &menus {
        menu.set_open(false);
        if let Ok(Some(summary)) = menu.query_selector("summary") {
            if let Some(el) = summary.dyn_ref::<web_sys::HtmlElement>() {
                let _ = el.focus();
            }
        }
    }
    !menus.is_empty()
}

/// Gives the focus to the element with this id, if there is one.
pub fn focus_by_id(id: &str) {
    use leptos::wasm_bindgen::JsCast;
    let found = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id));
    if let Some(el) = found
        .as_ref()
        .and_then(|e| e.dyn_ref::<web_sys::HtmlElement>())
    {
        let _ = el.focus();
    }
}

/// The name of the CSS highlight search matches are painted with (`::highlight(search-hit)`).
const SEARCH_HIT: &str = "search-hit";

/// Paints every occurrence of `words` in the text under `root` with the CSS Custom Highlight
/// API, leaving the DOM (which Leptos owns) as it is, and brings the first into view. Says how
/// many were found; a browser without the API finds none.
pub fn highlight_words(root: &web_sys::Element, words: &[String]) -> usize {
    use leptos::wasm_bindgen::{JsCast, JsValue};
    let (Some(window), Some(document)) = (
        web_sys::window(),
        web_sys::window().and_then(|w| w.document()),
    ) else {
        return 0;
    };
    let get = |target: &JsValue, key: &str| js_sys::Reflect::get(target, &JsValue::from_str(key));
    let Some(highlights) = get(&window, "CSS")
        .and_then(|css| get(&css, "highlights"))
        .ok()
        .filter(|h| !h.is_undefined())
    else {
        return 0;
    };
    let Ok(constructor) = get(&window, "Highlight").and_then(|c| c.dyn_into::<js_sys::Function>())
    else {
        return 0;
    };
    let ranges = js_sys::Array::new();
    let mut first: Option<web_sys::Element> = None;
    let mut texts = Vec::new();
    text_nodes(root, &mut texts);
    for node in texts {
        let text = node.node_value().unwrap_or_default();
        for word in words {
            for (start, end) in crate::client::find::occurrences(&text, word, 50) {
                let Ok(range) = document.create_range() else {
                    continue;
                };
                if range.set_start(&node, start).is_ok() && range.set_end(&node, end).is_ok() {
                    ranges.push(&range);
                    if first.is_none() {
                        first = node.parent_element();
                    }
                }
            }
        }
    }
    if ranges.length() == 0 {
        return 0;
    }
    let Ok(highlight) = js_sys::Reflect::construct(&constructor, &ranges) else {
        return 0;
    };
    if let Ok(set) = get(&highlights, "set").and_then(|f| f.dyn_into::<js_sys::Function>()) {
        let _ = set.call2(&highlights, &JsValue::from_str(SEARCH_HIT), &highlight);
    }
    if let Some(el) = first {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Center);
        el.scroll_into_view_with_scroll_into_view_options(&options);
    }
    ranges.length() as usize
}

fn text_nodes(node: &web_sys::Node, out: &mut Vec<web_sys::Node>) {
    let children = node.child_nodes();
    for i in 0..children.length() {
        let Some(child) = children.item(i) else {
            continue;
        };
        match child.node_type() {
            web_sys::Node::TEXT_NODE => out.push(child),
            web_sys::Node::ELEMENT_NODE => text_nodes(&child, out),
            _ => {}
        }
    }
}

/// The focus is in a field that takes text: an input that is not a button or a box, a text
/// area, a select or editable content.
pub fn typing_in_field() -> bool {
    let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element())
    else {
        return false;
    };
    match el.tag_name().to_ascii_lowercase().as_str() {
        "textarea" | "select" => true,
        "input" => !matches!(
            el.get_attribute("type").unwrap_or_default().as_str(),
            "checkbox" | "radio" | "button" | "submit" | "reset" | "file" | "range" | "color"
        ),
        _ => el
            .get_attribute("contenteditable")
            .is_some_and(|v| v != "false"),
    }
}

/// The first element `selector` finds, as an HTML element.
pub fn find(selector: &str) -> Option<web_sys::HtmlElement> {
    use leptos::wasm_bindgen::JsCast;
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
}

/// Opens or closes the last `<details>` `selector` finds, as a click on its summary would
/// (its `toggle` handler runs). False when there is none.
pub fn toggle_last_details(selector: &str) -> bool {
    use leptos::wasm_bindgen::JsCast;
    let found = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector_all(selector).ok());
    let Some(list) = found else {
        return false;
    };
    let last = list
        .get(list.length().saturating_sub(1))
        .and_then(|n| n.dyn_into::<web_sys::HtmlDetailsElement>().ok());
    match last {
        Some(details) => {
            details.set_open(!details.open());
            true
        }
        None => false,
    }
}

/// Clicks what `inner` finds in the last element `outer` finds; false when there is none.
pub fn click_in_last(outer: &str, inner: &str) -> bool {
    use leptos::wasm_bindgen::JsCast;
    let target = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector_all(outer).ok())
        .and_then(|list| list.get(list.length().saturating_sub(1)))
        .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        .and_then(|last| last.query_selector(inner).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    match target {
        Some(el) => {
            el.click();
            true
        }
        None => false,
    }
}
