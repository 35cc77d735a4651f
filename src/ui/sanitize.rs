//! The second layer of the markdown renderer, in the browser: the writer's HTML is parsed by the
//! browser's own parser into an inert `<template>`, then every node is checked against
//! [`crate::markdown`]'s allow-list before the fragment is moved into the page.
//!
//! Checking the browser's own tree, not a string, means there is no second HTML parser that
//! could disagree with the browser's (the root of mutation XSS) and nothing is serialized again.
//! Where the browser has the HTML Sanitizer API (`setHTML`), it parses with the same allow-list
//! first, as a layer the browser maintains; the walk below runs either way, and is the only
//! layer in browsers without it. A template's content belongs to a document with no browsing
//! context: nothing in it runs or loads while it is checked.

use leptos::wasm_bindgen::{JsCast, JsValue};
use web_sys::{DocumentFragment, Element, HtmlTemplateElement, Node};

use crate::markdown::{
    attribute, element, highlight_class, math_attribute, math_element, Verdict, LINK_ATTRIBUTES,
};

const HTML_NAMESPACE: &str = "http://www.w3.org/1999/xhtml";
const MATHML_NAMESPACE: &str = "http://www.w3.org/1998/Math/MathML";

/// Which allow-list a tree is checked against.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Vocabulary {
    /// The markdown writer's HTML.
    Markdown,
    /// A typeset formula's MathML.
    Math,
    /// Highlighted code: text in spans with `hl-` classes.
    Code,
}

/// The browser's WHATWG URL parser, as the renderer's [`crate::markdown::UrlParser`]: the same
/// algorithm that will read the `href`, and no URL library in the download.
pub fn browser_url(raw: &str) -> Option<String> {
    web_sys::Url::new(raw).ok().map(|url| url.href())
}

/// `html` parsed by the browser and reduced to what the allow-list keeps, ready to be appended.
pub fn sanitized_fragment(html: &str) -> Option<DocumentFragment> {
    fragment(html, true)
}

fn fragment(html: &str, with_sanitizer_api: bool) -> Option<DocumentFragment> {
    let document = web_sys::window()?.document()?;
    let template: HtmlTemplateElement =
        document.create_element("template").ok()?.dyn_into().ok()?;
    if !(with_sanitizer_api && set_html_with_sanitizer(&template, html)) {
        template.set_inner_html(html);
    }
    let content = template.content();
    clean_tree(&content, Vocabulary::Markdown);
    Some(content)
}

/// Highlighted code (from the server) parsed by the browser and reduced to text in `hl-`
/// spans.
pub fn sanitized_highlight(html: &str) -> Option<DocumentFragment> {
    let document = web_sys::window()?.document()?;
    let template: HtmlTemplateElement =
        document.create_element("template").ok()?.dyn_into().ok()?;
    template.set_inner_html(html);
    let content = template.content();
    clean_tree(&content, Vocabulary::Code);
    Some(content)
}

/// A typeset formula (MathML from the server) parsed by the browser and reduced to the MathML
/// allow-list; `None` unless it is one `<math>` element.
pub fn sanitized_math(mathml: &str) -> Option<DocumentFragment> {
    let document = web_sys::window()?.document()?;
    let template: HtmlTemplateElement =
        document.create_element("template").ok()?.dyn_into().ok()?;
    template.set_inner_html(mathml);
    let content = template.content();
    clean_tree(&content, Vocabulary::Math);
    let root = content.first_element_child()?;
    let single = content.child_element_count() == 1
        && root.local_name() == "math"
        && root.namespace_uri().as_deref() == Some(MATHML_NAMESPACE);
    single.then_some(content)
}

/// Replaces `target`'s content with the sanitized `html`.
pub fn replace_with_markup(target: &Element, html: &str) {
    target.set_text_content(None);
    append_markup(target, html);
}

/// Appends the sanitized `html` to `target`.
pub fn append_markup(target: &Element, html: &str) {
    if let Some(fragment) = markup_fragment(html) {
        let _ = target.append_child(&fragment);
    }
}

/// The sanitized `html`, each block in the direction of its own text, ready to be appended;
/// `None` when there is nothing to append.
pub fn markup_fragment(html: &str) -> Option<DocumentFragment> {
    if html.is_empty() {
        return None;
    }
    let fragment = sanitized_fragment(html)?;
    own_directions(&fragment);
    Some(fragment)
}

/// Each block of text takes the direction of its own first strong character, whatever the
/// page's language and the blocks around it: an Arabic list item in an English answer has its
/// marker on the right, and the other way round (`dir="auto"`, set on the sanitized nodes).
fn own_directions(fragment: &DocumentFragment) {
    let Ok(blocks) =
        fragment.query_selector_all("p, li, h1, h2, h3, h4, h5, h6, blockquote, th, td")
    else {
        return;
    };
    for i in 0..blocks.length() {
        if let Some(el) = blocks.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
            let _ = el.set_attribute("dir", "auto");
        }
    }
}

/// The sanitized serialization of `html`: what the page would show, as text, with or without
/// the Sanitizer API. For the end-to-end suite, which feeds this layer markup the writer never
/// emits.
pub fn sanitized_markup(html: &str, with_sanitizer_api: bool) -> String {
    let Some(holder) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("div").ok())
    else {
        return String::new();
    };
    if let Some(fragment) = fragment(html, with_sanitizer_api) {
        let _ = holder.append_child(&fragment);
    }
    holder.inner_html()
}

/// `template.setHTML(html, {sanitizer})` with the allow-list's elements and attribute names;
/// false where the browser has no Sanitizer API or refuses the configuration.
fn set_html_with_sanitizer(template: &HtmlTemplateElement, html: &str) -> bool {
    let Ok(set_html) = js_sys::Reflect::get(template, &JsValue::from_str("setHTML")) else {
        return false;
    };
    let Some(set_html) = set_html.dyn_ref::<js_sys::Function>() else {
        return false;
    };
    SANITIZER_OPTIONS.with(|options| {
        set_html
            .call2(template, &JsValue::from_str(html), options)
            .is_ok()
    })
}

thread_local! {
    /// The `setHTML` options, built once per page: the tail is sanitized every frame.
    static SANITIZER_OPTIONS: JsValue = sanitizer_options();
}

fn sanitizer_options() -> JsValue {
    let set = |target: &js_sys::Object, key: &str, value: &JsValue| {
        let _ = js_sys::Reflect::set(target, &JsValue::from_str(key), value);
    };
    let elements = js_sys::Array::new();
    for (name, attributes) in crate::markdown::allowed_elements() {
        let entry = js_sys::Object::new();
        let list: js_sys::Array = attributes.iter().map(|a| JsValue::from_str(a)).collect();
        set(&entry, "name", &JsValue::from_str(name));
        set(&entry, "attributes", &list);
        elements.push(&entry);
    }
    let sanitizer = js_sys::Object::new();
    set(&sanitizer, "elements", &elements);
    set(&sanitizer, "attributes", &js_sys::Array::new());
    set(&sanitizer, "comments", &JsValue::FALSE);
    set(&sanitizer, "dataAttributes", &JsValue::FALSE);
    let options = js_sys::Object::new();
    set(&options, "sanitizer", &sanitizer);
    options.into()
}

/// Walks `root` without recursion (model output can nest thousands deep): keeps, unwraps or
/// removes each element by [`element`], filters each kept element's attributes by
/// [`attribute`], and drops everything that is neither element nor text (comments,
/// processing instructions).
fn clean_tree(root: &Node, vocabulary: Vocabulary) {
    let mut parents = vec![root.clone()];
    while let Some(parent) = parents.pop() {
        let mut child = parent.first_child();
        while let Some(node) = child {
            let mut next = node.next_sibling();
            match node.dyn_ref::<Element>() {
                Some(el) => {
                    let name = el.local_name();
                    let namespace = el.namespace_uri();
                    let verdict = match vocabulary {
                        Vocabulary::Markdown => {
                            element(&name, namespace.as_deref() == Some(HTML_NAMESPACE))
                        }
                        Vocabulary::Math => {
                            math_element(&name, namespace.as_deref() == Some(MATHML_NAMESPACE))
                        }
                        Vocabulary::Code => {
                            let html = namespace.as_deref() == Some(HTML_NAMESPACE);
                            match element(&name, html) {
                                Verdict::Keep if name == "span" => Verdict::Keep,
                                Verdict::Remove => Verdict::Remove,
                                _ => Verdict::Unwrap,
                            }
                        }
                    };
                    match verdict {
                        Verdict::Keep => {
                            clean_attributes(el, &name, vocabulary);
                            parents.push(node.clone());
                        }
                        Verdict::Unwrap => {
                            let first = node.first_child();
                            while let Some(inner) = node.first_child() {
                                let _ = parent.insert_before(&inner, Some(&node));
                            }
                            let _ = parent.remove_child(&node);
                            if first.is_some() {
                                next = first;
                            }
                        }
                        Verdict::Remove => {
                            let _ = parent.remove_child(&node);
                        }
                    }
                }
                None if node.node_type() == Node::TEXT_NODE => {}
                None => {
                    let _ = parent.remove_child(&node);
                }
            }
            child = next;
        }
    }
}

fn clean_attributes(el: &Element, name: &str, vocabulary: Vocabulary) {
    for attr in el
        .get_attribute_names()
        .iter()
        .filter_map(|a| a.as_string())
    {
        let value = el.get_attribute(&attr).unwrap_or_default();
        let kept = match vocabulary {
            Vocabulary::Markdown => attribute(name, &attr, &value, browser_url),
            Vocabulary::Math => math_attribute(name, &attr, &value),
            Vocabulary::Code => (attr == "class").then(|| highlight_class(&value)).flatten(),
        };
        match kept {
            Some(kept) if kept == value => {}
            Some(kept) => {
                let _ = el.set_attribute(&attr, &kept);
            }
            None => {
                let _ = el.remove_attribute(&attr);
            }
        }
    }
    if vocabulary == Vocabulary::Markdown && name == "a" {
        for (attr, value) in LINK_ATTRIBUTES {
            let _ = el.set_attribute(attr, value);
        }
    }
}
