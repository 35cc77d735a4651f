//! An independent safety check for rendered HTML: parse it the way a browser would (html5ever
//! through scraper, fragment mode) and look at the resulting tree, not at the string.

use scraper::{Html, Node};

/// Elements that must never appear, whatever the renderer's policy says.
const FORBIDDEN_ELEMENTS: &[&str] = &[
    "script",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "svg",
    "math",
    "style",
    "form",
    "input",
    "textarea",
    "select",
    "img",
    "image",
    "picture",
    "source",
    "video",
    "audio",
    "track",
    "canvas",
    "base",
    "meta",
    "link",
    "template",
    "noscript",
    "xmp",
    "plaintext",
    "noembed",
    "noframes",
    "title",
    "portal",
    "isindex",
    "keygen",
    "marquee",
];

/// What the renderer is expected to emit: anything else is flagged as unexpected, so the
/// check also catches a policy that grew without anyone noticing.
const EXPECTED_ELEMENTS: &[&str] = &[
    "p",
    "br",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "pre",
    "code",
    "strong",
    "em",
    "del",
    "a",
    "div",
    "span",
    "button",
];

/// Attributes that hold a URL a browser would follow or fetch.
const URL_ATTRIBUTES: &[&str] = &[
    "href",
    "src",
    "srcset",
    "action",
    "formaction",
    "data",
    "poster",
    "background",
    "ping",
    "cite",
    "longdesc",
    "lowsrc",
    "dynsrc",
    "codebase",
    "manifest",
    "icon",
    "srcdoc",
];

const XHTML: &str = "http://www.w3.org/1999/xhtml";

/// Returns every problem found in `html`; empty means safe.
pub fn violations(html: &str) -> Vec<String> {
    let fragment = Html::parse_fragment(html);
    let mut found = Vec::new();
    for node in fragment.tree.root().descendants() {
        let element = match node.value() {
            Node::Element(element) => element,
            Node::Comment(_) => {
                found.push("comment node".to_string());
                continue;
            }
            Node::ProcessingInstruction(_) | Node::Doctype(_) => {
                found.push("processing instruction or doctype".to_string());
                continue;
            }
            Node::Document | Node::Fragment | Node::Text(_) => continue,
        };
        if node.parent().is_some_and(|p| p.value().is_fragment()) && element.name() == "html" {
            continue;
        }
        let name = element.name().to_ascii_lowercase();
        if &*element.name.ns != XHTML {
            found.push(format!("<{name}> in namespace {}", &*element.name.ns));
        }
        if FORBIDDEN_ELEMENTS.contains(&name.as_str()) {
            found.push(format!("forbidden element <{name}>"));
        } else if !EXPECTED_ELEMENTS.contains(&name.as_str()) {
            found.push(format!("unexpected element <{name}>"));
        }
        for (qual, value) in element.attrs.iter() {
            let attr = str::to_ascii_lowercase(&qual.local);
            if qual.prefix.is_some() || !qual.ns.is_empty() {
                found.push(format!("namespaced attribute {attr} on <{name}>"));
            }
            if attr.starts_with("on") {
                found.push(format!("event handler {attr} on <{name}>"));
            }
            if attr == "style" {
                found.push(format!("style attribute on <{name}>"));
            }
            if attr == "id" || attr == "name" || attr == "form" {
                found.push(format!("clobbering attribute {attr} on <{name}>"));
            }
            if URL_ATTRIBUTES.contains(&attr.as_str()) && !url_is_safe(value) {
                found.push(format!("unsafe URL {attr}={value:?} on <{name}>"));
            }
            if !attribute_expected(&name, &attr) {
                found.push(format!("unexpected attribute {attr} on <{name}>"));
            }
        }
        if name == "a" && element.attr("href").is_some() {
            let rel = element.attr("rel").unwrap_or("");
            let rel: Vec<&str> = rel.split_ascii_whitespace().collect();
            if !(rel.contains(&"noopener") && rel.contains(&"noreferrer")) {
                found.push(format!("link without rel=noopener noreferrer: {rel:?}"));
            }
            if element.attr("target") != Some("_blank") {
                found.push("link not opening in a new tab".to_string());
            }
        }
    }
    let reserialized = fragment.root_element().inner_html();
    if reserialized != html {
        found.push(format!(
            "not stable under re-parsing (a mutation vector or malformed HTML):\n  got  {html:?}\n  then {reserialized:?}"
        ));
    }
    found
}

fn attribute_expected(element: &str, attr: &str) -> bool {
    matches!(
        (element, attr),
        ("a", "href" | "title" | "class" | "rel" | "target")
            | ("code" | "div" | "span" | "th" | "td", "class")
            | ("button", "class" | "type" | "aria-label")
            | ("ol", "start")
    )
}

/// A URL is safe if, after the decoding a browser applies (entities are already decoded by
/// the parser; then control characters, whitespace, and percent-encoding), it is an absolute
/// `http(s)://` or `mailto:` URL. Relative URLs are refused: they would reach Ponder itself.
pub fn url_is_safe(value: &str) -> bool {
    let stripped: String = value
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let decoded = percent_decode(&stripped);
    [stripped.as_str(), decoded.as_str()]
        .iter()
        .all(|candidate| absolute_allowed(candidate))
}

fn absolute_allowed(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once(':') else {
        return false;
    };
    let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !valid_scheme {
        return false;
    }
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => rest.starts_with("//") && rest.len() > 2,
        "mailto" => true,
        _ => false,
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Panics with every violation, labelled, if `html` is unsafe.
pub fn assert_safe(label: &str, input: &str, html: &str) {
    let found = violations(html);
    assert!(
        found.is_empty(),
        "{label}: unsafe output\ninput: {input:?}\noutput: {html:?}\n- {}",
        found.join("\n- ")
    );
}

/// The checker must be able to fail: known-bad HTML, each with the problem it must report.
#[test]
fn the_checker_flags_known_bad_html() {
    let bad: &[(&str, &str)] = &[
        ("<script>alert(1)</script>", "forbidden element <script>"),
        (
            "<p><iframe src=\"https://x.example\"></iframe></p>",
            "forbidden element <iframe>",
        ),
        ("<object data=\"x\"></object>", "forbidden element <object>"),
        (
            "<embed src=\"https://x.example\">",
            "forbidden element <embed>",
        ),
        ("<svg></svg>", "forbidden element <svg>"),
        ("<svg></svg>", "in namespace http://www.w3.org/2000/svg"),
        ("<math></math>", "forbidden element <math>"),
        ("<style>p{}</style>", "forbidden element <style>"),
        ("<form></form>", "forbidden element <form>"),
        (
            "<img src=\"https://x.example/a.png\">",
            "forbidden element <img>",
        ),
        (
            "<base href=\"https://x.example/\">",
            "forbidden element <base>",
        ),
        ("<meta charset=\"utf-8\">", "forbidden element <meta>"),
        (
            "<link rel=\"stylesheet\" href=\"https://x.example\">",
            "forbidden element <link>",
        ),
        (
            "<template><p>x</p></template>",
            "forbidden element <template>",
        ),
        ("<blink>x</blink>", "unexpected element <blink>"),
        ("<p onclick=\"alert(1)\">x</p>", "event handler onclick"),
        (
            "<p ONMOUSEOVER=\"alert(1)\">x</p>",
            "event handler onmouseover",
        ),
        ("<p style=\"color:red\">x</p>", "style attribute"),
        ("<p id=\"x\">x</p>", "clobbering attribute id"),
        ("<a name=\"x\">x</a>", "clobbering attribute name"),
        ("<p lang=\"en\">x</p>", "unexpected attribute lang"),
        ("<p><!-- c --></p>", "comment node"),
        ("<p>unclosed", "not stable under re-parsing"),
        ("<p><div>x</div></p>", "not stable under re-parsing"),
        ("<a href=\"https://x.example/\">x</a>", "link without rel"),
        (
            "<a href=\"https://x.example/\" rel=\"noopener noreferrer\">x</a>",
            "new tab",
        ),
    ];
    for (html, expected) in bad {
        let found = violations(html);
        assert!(
            found.iter().any(|v| v.contains(expected)),
            "{html:?} should be flagged with {expected:?}, got {found:?}"
        );
    }
    let link = |href: &str| {
        format!("<a href=\"{href}\" rel=\"noopener noreferrer nofollow\" target=\"_blank\">x</a>")
    };
    for href in [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "&#106;avascript:alert(1)",
        "java&#x09;script:alert(1)",
        "java&Tab;script:alert(1)",
        "%6Aavascript:alert(1)",
        "javascript%3Aalert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,x",
        "DATA:text/html,x",
        "/api/chat",
        "api/chat",
        "//evil.example",
        "#top",
        "http:api/chat",
        "https:/x.example",
        "",
    ] {
        let html = link(href);
        assert!(
            violations(&html).iter().any(|v| v.contains("unsafe URL")),
            "{html:?} should be flagged as an unsafe URL"
        );
    }
}

/// ...and must pass what is fine, or every test using it would prove nothing.
#[test]
fn the_checker_passes_good_html() {
    for html in [
        "<p>text &amp; <strong>bold</strong></p>\n",
        "<p><a href=\"https://x.example/\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">x</a></p>",
        "<p><a href=\"mailto:a@b.example\" target=\"_blank\" rel=\"noopener noreferrer nofollow\">m</a></p>",
        "<table><thead><tr><th class=\"align-left\">a</th></tr></thead><tbody></tbody></table>",
        "<div class=\"code-block\"><pre><code class=\"language-rust\">&lt;script&gt;</code></pre></div>",
        "<ol start=\"3\"><li>x</li></ol>",
    ] {
        assert_eq!(violations(html), Vec::<String>::new(), "{html}");
    }
}
