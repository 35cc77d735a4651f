//! `cargo bench --bench history -- --only indexing`: what the end of a turn costs in search
//! indexing on a big index. The index is filled to a million entries by imports (themselves
//! timed), then 50 turns are stored on it and the final save of each answer (its text and its
//! reasoning entering the index) is timed; so is the reader's message, indexed as it is stored.
//! For comparison, the statement every indexing ran before the index was found by key (a delete
//! by an FTS5 column that is not indexed, which reads the whole index) is timed on the same
//! database. SQLite, and PostgreSQL when `--database postgres://…` is given.

use std::time::Instant;

use ponder::domain::history::{Import, ImportBlock, ImportMessage, ImportVersion, VersionStatus};
use ponder::domain::{ReasoningSettings, Role, ThinkingKind};
use ponder::server::store::records::{AnswerRecord, BlockRecord, Extras};
use ponder::server::store::{Backend, Store};

type Res<T> = Result<T, String>;

/// Entries the index is filled to.
const ENTRIES: usize = 1_000_000;
/// Messages of one filling import (a question, then an answer with one block: 3 entries a pair).
const PER_IMPORT: usize = 20_000;
const TURNS: usize = 50;

fn words(i: usize, n: usize) -> String {
    const W: [&str; 12] = [
        "invariant",
        "bound",
        "proof",
        "lemma",
        "step",
        "case",
        "holds",
        "after",
        "before",
        "edge",
        "so",
        "then",
    ];
    (0..n)
        .map(|k| W[(i * 7 + k * 13) % W.len()])
        .collect::<Vec<_>>()
        .join(" ")
        + &format!(" w{i}")
}

fn filler(n: usize) -> Import {
    let messages = (0..PER_IMPORT)
        .map(|i| {
            let at = 1_764_489_600_000 + i as i64;
            let user = i % 2 == 0;
            ImportMessage {
                role: if user { Role::User } else { Role::Assistant },
                created_at: at,
                active: 0,
                versions: vec![ImportVersion {
                    content: words(i, 12),
                    status: VersionStatus::Done,
                    error: None,
                    created_at: at,
                    blocks: if user {
                        Vec::new()
                    } else {
                        vec![ImportBlock {
                            kind: ThinkingKind::Raw,
                            text: words(i + 1, 30),
                            duration_ms: Some(1_000),
                            interrupted: false,
                        }]
                    },
                    tools: Vec::new(),
                    sources: Vec::new(),
                    files: Vec::new(),
                    usage: None,
                }],
            }
        })
        .collect();
    Import {
        instructions: None,
        key: format!("fill-{n}"),
        title: format!("Filler {n}"),
        created_at: 1_764_489_600_000,
        messages,
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    super::percentile(sorted, p)
}

/// One row of the table for the database at `url`.
pub async fn run(url: &str, engine: &str) -> Res<String> {
    let store = Store::open(url).await.map_err(|e| e.to_string())?;
    let who = store
        .identity_for_name("bench", true)
        .await
        .map_err(|e| e.to_string())?;
    let scoped = store.scoped(&who);
    let per_import = PER_IMPORT / 2 * 3;
    let imports = ENTRIES.div_ceil(per_import);
    let started = Instant::now();
    for n in 0..imports {
        scoped
            .import_conversation(None, &filler(n))
            .await
            .map_err(|e| e.to_string())?;
    }
    let fill_s = started.elapsed().as_secs_f64();
    let entries = imports * per_import;

    let mut questions = Vec::with_capacity(TURNS);
    let mut ends = Vec::with_capacity(TURNS);
    for t in 0..TURNS {
        let conversation = scoped
            .create_conversation(None, "A turn")
            .await
            .map_err(|e| e.to_string())?;
        let clock = Instant::now();
        scoped
            .add_user_message(&conversation.id, &words(t, 20), None)
            .await
            .map_err(|e| e.to_string())?;
        questions.push(clock.elapsed().as_secs_f64() * 1000.0);
        let slot = scoped
            .start_answer(
                &conversation.id,
                None,
                "bench",
                ReasoningSettings::default(),
                None,
            )
            .await
            .map_err(|e| e.to_string())?;
        let answer = AnswerRecord {
            content: words(t, 200),
            blocks: vec![BlockRecord {
                index: 0,
                kind: ThinkingKind::Raw,
                text: words(t + 1, 2_000),
                started_at: None,
                duration_ms: Some(4_000),
                interrupted: false,
                cut_short: false,
            }],
            extras: Extras::default(),
            status: VersionStatus::Done,
            error: None,
            finish_reason: Some("stop".into()),
            input_tokens: None,
            output_tokens: None,
            reasoning_tokens: None,
        };
        let clock = Instant::now();
        scoped
            .save_answer(&slot, &answer)
            .await
            .map_err(|e| e.to_string())?;
        ends.push(clock.elapsed().as_secs_f64() * 1000.0);
    }
    questions.sort_by(f64::total_cmp);
    ends.sort_by(f64::total_cmp);
    let scan_ms = old_scan(url, store.backend()).await?;
    Ok(format!(
        "| {engine} | {entries} | {fill_s:.0} s | {:.1} / {:.1} ms | {:.1} / {:.1} / {:.1} ms | {scan_ms} |",
        percentile(&questions, 50.0),
        percentile(&questions, 95.0),
        percentile(&ends, 50.0),
        percentile(&ends, 95.0),
        percentile(&ends, 100.0),
    ))
}

/// The statement each indexing ran before (a delete by `ref_id` and `user_id`, which SQLite's
/// FTS5 table can only answer by reading every entry), timed on the filled index: ms, p50 of 5.
async fn old_scan(url: &str, backend: Backend) -> Res<String> {
    if backend != Backend::Sqlite {
        return Ok("(indexed: ref_id is the key)".into());
    }
    let path = url
        .strip_prefix("sqlite://")
        .ok_or("not an sqlite:// URL")?;
    let pool = sqlx::AnyPool::connect(&format!("sqlite://{path}?mode=rw"))
        .await
        .map_err(|e| e.to_string())?;
    let mut times = Vec::new();
    for _ in 0..5 {
        let clock = Instant::now();
        sqlx::query("DELETE FROM search_index WHERE ref_id = $1 AND user_id = $2")
            .bind("no such entry")
            .bind("nobody")
            .execute(&pool)
            .await
            .map_err(|e| e.to_string())?;
        times.push(clock.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    Ok(format!("{:.0} ms", percentile(&times, 50.0)))
}
