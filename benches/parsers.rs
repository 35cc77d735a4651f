//! Parser throughput per provider, in MB/s of upstream bytes, on the largest recorded stream of
//! each wire format (tests/fixtures/providers). Run with `make bench` or
//! `cargo bench --no-default-features --features ssr --bench parsers`.
//!
//! Each iteration feeds the whole body as 16 KiB network chunks into a fresh parser, the way
//! `reqwest` hands them over, and drops the pieces.
//!
//! Beside them, what ammonia adds to the server's drawing of an answer (`draw`): a 60 KB answer
//! rendered, and rendered then sanitized, in one run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

#[path = "../tests/integration/common/fixtures.rs"]
mod fixtures;
#[allow(dead_code)]
#[path = "../tests/markdown/samples.rs"]
mod samples;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ponder::server::config::ProviderKind;
use ponder::server::providers::parser_for;

const CHUNK: usize = 16 * 1024;

/// (label, provider, the folders holding its format) — the largest file there is measured.
const FORMATS: [(&str, ProviderKind, &[&str]); 6] = [
    ("openai", ProviderKind::OpenAi, &["openai-chat", "mistral"]),
    ("openai+think-tags", ProviderKind::OpenAi, &["inline-think"]),
    ("anthropic", ProviderKind::Anthropic, &["anthropic"]),
    ("responses", ProviderKind::Responses, &["openai-responses"]),
    ("gemini", ProviderKind::Gemini, &["gemini"]),
    ("ollama", ProviderKind::Ollama, &["ollama"]),
];

fn largest(dirs: &[&str]) -> (String, Vec<u8>) {
    dirs.iter()
        .flat_map(|d| fixtures::files_under(d))
        .map(|f| {
            let body = fixtures::body(&f, 0);
            (f, body)
        })
        .max_by_key(|(_, body)| body.len())
        .expect("a fixture")
}

fn parsers(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for (label, provider, dirs) in FORMATS {
        let (file, body) = largest(dirs);
        eprintln!("{label}: {file} ({} bytes)", body.len());
        group.throughput(Throughput::BytesDecimal(body.len() as u64));
        group.bench_function(label, |b| {
            b.iter(|| {
                let mut parser = parser_for(provider, false);
                let mut pieces = Vec::new();
                for chunk in body.chunks(CHUNK) {
                    parser.feed(chunk, &mut pieces);
                    pieces.clear();
                }
                parser.finish(&mut pieces);
                std::hint::black_box(pieces.len())
            })
        });
    }
    group.finish();
}

fn draw(c: &mut Criterion) {
    let answer = samples::long_answer(60_000);
    let mut group = c.benchmark_group("draw");
    group.throughput(Throughput::BytesDecimal(answer.len() as u64));
    group.bench_function("render", |b| {
        b.iter(|| std::hint::black_box(ponder::markdown::render(&answer).len()))
    });
    group.bench_function("render+ammonia", |b| {
        b.iter(|| {
            let html = ponder::markdown::render(&answer);
            std::hint::black_box(ponder::markdown::sanitize(&html).len())
        })
    });
    group.finish();
}

criterion_group!(benches, parsers, draw);
criterion_main!(benches);
