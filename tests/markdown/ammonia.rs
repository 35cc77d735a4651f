//! The differential check: what the renderer writes (and the page's allow-list keeps whole) comes
//! back unchanged from ammonia configured with the same policy, over every corpus: the XSS
//! payloads alone and inside ordinary markdown, the demo model's hostile scripts (the `[xss]`
//! payloads as thinking and answer, the `[xss-sources]` citations and their footnotes) and its
//! other texts, and a long realistic answer. A difference names the place where the hand-written
//! allow-list lets through what ammonia would take out, or where the browser would build
//! another tree than the one the writer meant.

use ponder::domain::rich::{cite_marker, with_footnotes, SourceRef};
use ponder::markdown::{allow_list_change, ammonia_change, render, sanitize};
use ponder::server::demo_upstream::{Scenario, Step};

use crate::samples::{long_answer, xss_payloads, CONTEXTS};

/// Each text rendered, and the changes the page's allow-list or ammonia would make, one line
/// each.
fn differences(texts: impl IntoIterator<Item = (String, String)>) -> (usize, Vec<String>) {
    let mut checked = 0;
    let found = texts
        .into_iter()
        .filter_map(|(label, text)| {
            checked += 1;
            let html = render(&text);
            let found = allow_list_change(&html)
                .map(|d| format!("the page's allow-list: {d}"))
                .or_else(|| ammonia_change(&html));
            found.map(|d| format!("{label}: {d}\n  in {html:?}"))
        })
        .collect();
    (checked, found)
}

fn assert_none(checked: usize, found: Vec<String>, at_least: usize) {
    assert!(checked >= at_least, "only {checked} texts");
    assert!(
        found.is_empty(),
        "{} of {checked} differ:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn every_xss_payload_comes_back_from_ammonia_unchanged() {
    let texts = xss_payloads().into_iter().flat_map(|(label, payload)| {
        std::iter::once((label.to_string(), payload.to_string())).chain(
            CONTEXTS
                .iter()
                .map(move |c| (format!("{label} in {c:?}"), c.replace("{}", payload))),
        )
    });
    let (checked, found) = differences(texts);
    assert_none(checked, found, 1_500);
}

/// The thinking and the answer of every demo script, as the turn folds them (a citation leaves
/// its marker), and the answer with its sources as footnotes (what Copy and the export carry).
fn demo_texts() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (tag, scenario) in Scenario::TAGS {
        let script = scenario.script();
        let (mut thinking, mut answer, mut sources) = (String::new(), String::new(), Vec::new());
        for step in &script.steps {
            match step {
                Step::Think(t) => thinking.push_str(t),
                Step::Answer(a) => answer.push_str(a),
                Step::AnswerBytes(bytes) => answer.push_str(&String::from_utf8_lossy(bytes)),
                Step::Cite(url, title) => {
                    let n = sources.len() as u32 + 1;
                    answer.push_str(&cite_marker(n));
                    sources.push(SourceRef {
                        n,
                        url: url.clone(),
                        title: Some(title.clone()),
                    });
                }
                _ => {}
            }
        }
        let footnoted = with_footnotes(&answer, &sources);
        out.push((format!("{tag} thinking"), thinking));
        out.push((format!("{tag} answer"), answer));
        out.push((format!("{tag} answer with its sources"), footnoted));
    }
    out
}

#[test]
fn the_demo_models_hostile_and_ordinary_texts_come_back_unchanged() {
    let texts = demo_texts();
    assert!(
        texts
            .iter()
            .any(|(label, text)| label.starts_with("[xss-sources]") && text.contains("[^2]:")),
        "the hostile sources are among them"
    );
    let (checked, found) = differences(texts);
    assert_none(checked, found, 60);
}

#[test]
fn a_long_realistic_answer_comes_back_unchanged() {
    let (checked, found) = differences([("long answer".to_string(), long_answer(60_000))]);
    assert_none(checked, found, 1);
}

/// The check can fail: markup the writer never emits, handed to it, is a difference, and
/// sanitizing takes it out.
#[test]
fn markup_outside_the_allow_list_is_a_difference() {
    for hostile in [
        "<p><img src=\"https://a.example/x.png\"></p>",
        "<p><a href=\"https://a.example/\" onclick=\"x()\">l</a></p>",
        "<p style=\"color:red\">p</p>",
        "<a href=\"javascript:alert(1)\">x</a>",
        "<div class=\"error\">fake</div>",
        "<svg><script>alert(1)</script></svg>",
    ] {
        assert!(ammonia_change(hostile).is_some(), "{hostile}");
        assert_eq!(ammonia_change(&sanitize(hostile)), None, "{hostile}");
    }
}
