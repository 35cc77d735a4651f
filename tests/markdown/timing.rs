//! Render cost of streamed answers, incremental vs. a full re-render per update. Not a
//! benchmark gate: it prints figures for the book's performance chapter
//! (`docs/src/performance.md`).
//!
//! cargo test --release --no-default-features --features ssr --test markdown -- --ignored --nocapture

use std::time::{Duration, Instant};

use ponder::markdown::{render, IncrementalMarkdown};

use crate::samples::long_answer;

/// `count` prefixes of `text`, evenly spaced, ending with the whole text.
fn increments(text: &str, count: usize) -> Vec<&str> {
    (1..=count)
        .map(|i| {
            let mut end = text.len() * i / count;
            while !text.is_char_boundary(end) {
                end += 1;
            }
            &text[..end]
        })
        .collect()
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

struct Run {
    total: Duration,
    median: Duration,
    max: Duration,
}

fn run(steps: &[&str], mut update: impl FnMut(&str)) -> Run {
    let mut each: Vec<Duration> = steps.iter().map(|s| time(|| update(s))).collect();
    let total = each.iter().sum();
    each.sort_unstable();
    Run {
        total,
        median: each[each.len() / 2],
        max: each[each.len() - 1],
    }
}

fn report(name: &str, text: &str, count: usize) {
    render("warm up the sanitizer policy");
    let steps = increments(text, count);
    let mut md = IncrementalMarkdown::new();
    let incremental = run(&steps, |s| {
        md.update(s);
    });
    let finish = time(|| {
        md.finish(text);
    });
    let full = run(&steps, |s| {
        std::hint::black_box(render(s));
    });
    let once = time(|| {
        std::hint::black_box(render(text));
    });
    println!(
        "{name}: {} bytes in {count} updates\n  \
         incremental: total {:.1?}, median update {:.2?}, longest {:.2?}, finish {:.2?}, {} bytes parsed\n  \
         full render per update: total {:.1?}, median update {:.2?}, longest {:.2?}\n  \
         one render of the whole text: {once:.2?}",
        text.len(),
        incremental.total,
        incremental.median,
        incremental.max,
        finish,
        md.stats().bytes_parsed,
        full.total,
        full.median,
        full.max,
    );
}

#[test]
#[ignore = "prints timings; run in release"]
fn streaming_cost_of_a_50_kb_answer() {
    report("50 KB answer", &long_answer(50 * 1024), 1_000);
}

/// The limit of block-level incrementality: one open block is re-rendered whole.
#[test]
#[ignore = "prints timings; run in release"]
fn streaming_cost_of_one_long_block() {
    let code: String = (0..2_500)
        .map(|i| format!("    let value_{i} = compute({i}) + offset; // line {i}\n"))
        .collect();
    report("100 KB code block", &format!("```rust\n{code}```\n"), 1_000);
    let paragraph =
        "This sentence is one of many in a very long paragraph, streamed as fast as possible.\n";
    report(
        "100 KB paragraph",
        &paragraph.repeat(100 * 1024 / paragraph.len()),
        1_000,
    );
}
