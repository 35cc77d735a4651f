//! The history store on a real SQLite file and a real PostgreSQL: the schema, a turn written
//! as it streams, versions, deletion with its grace and purge, search, and above all that no
//! user ever reaches another user's rows.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it does not expect

use crate::common;

use ponder::domain::history::{HitKind, Page, VersionStatus};
use ponder::domain::{ChatMessage, ErrorCode, Failure, ThinkingKind};
use ponder::server::store::identity::Identity;
use ponder::server::store::records::{AnswerRecord, BlockRecord};
use ponder::server::store::{Store, StoreError};

static NEXT_FILE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn sqlite_url() -> String {
    let n = NEXT_FILE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("ponder-store-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    format!("sqlite://{}/ponder.db", dir.display())
}

/// Both engines' URLs, each a fresh database.
async fn engine_urls() -> [(&'static str, String); 2] {
    [
        ("sqlite", sqlite_url()),
        ("postgres", common::postgres::database().await),
    ]
}

/// Both engines, each on a fresh database.
async fn stores() -> Vec<(&'static str, Store)> {
    let mut out = Vec::new();
    for (engine, url) in engine_urls().await {
        out.push((engine, Store::open(&url).await.expect(engine)));
    }
    out
}

/// A connection of its own to `url`, for a test to change what the store wrote.
async fn side_connection(url: &str) -> sqlx::AnyConnection {
    sqlx::any::install_default_drivers();
    <sqlx::AnyConnection as sqlx::Connection>::connect(url)
        .await
        .expect("a second connection")
}

async fn two_users(store: &Store) -> (Identity, Identity) {
    (
        store.identity_for_name("alice", true).await.expect("alice"),
        store.identity_for_name("bob", true).await.expect("bob"),
    )
}

fn answer(content: &str, thinking: &str, status: VersionStatus) -> AnswerRecord {
    AnswerRecord {
        content: content.into(),
        extras: Default::default(),
        blocks: vec![BlockRecord {
            index: 0,
            kind: ThinkingKind::Raw,
            text: thinking.into(),
            started_at: Some(1),
            duration_ms: (status != VersionStatus::Streaming).then_some(4200),
            interrupted: false,
            cut_short: false,
        }],
        status,
        error: None,
        finish_reason: None,
        input_tokens: Some(3),
        output_tokens: Some(9),
        reasoning_tokens: None,
    }
}

#[tokio::test]
async fn the_schema_is_created_once_and_sqlite_uses_wal() {
    let url = sqlite_url();
    let first = Store::open(&url).await.expect("first open");
    let _ = first.identity_for_name("alice", true).await.expect("user");
    drop(first);
    let again = Store::open(&url)
        .await
        .expect("second open migrates nothing new");
    assert_eq!(again.user_count().await.expect("count"), 1);
    let path = url.trim_start_matches("sqlite://");
    assert!(
        std::path::Path::new(&format!("{path}-wal")).exists(),
        "the database runs in WAL mode"
    );
    let pg = Store::open(&common::postgres::database().await)
        .await
        .expect("pg");
    assert!(pg.is_up().await);
}

/// Two replicas (or a replica and `ponder admin`) started at once on a database nobody has
/// opened yet: both come up, the schema is made once.
#[tokio::test]
async fn two_stores_opening_a_new_database_at_once_both_come_up() {
    for round in 0..4 {
        for (engine, url) in engine_urls().await {
            let (a, b) = tokio::join!(Store::open(&url), Store::open(&url));
            let (a, b) = (
                a.unwrap_or_else(|e| panic!("{engine}, round {round}, first: {e}")),
                b.unwrap_or_else(|e| panic!("{engine}, round {round}, second: {e}")),
            );
            let alice = a.identity_for_name("alice", true).await.expect(engine);
            let again = b.identity_for_name("alice", true).await.expect(engine);
            assert_eq!(alice.user().id, again.user().id, "{engine}");
        }
    }
}

#[tokio::test]
async fn a_turn_is_stored_as_it_streams_and_opens_without_its_reasoning_text() {
    for (engine, store) in stores().await {
        let (alice, _) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me
            .create_conversation(None, "Why is the sky blue?")
            .await
            .expect("create");
        assert_eq!(conv.title, "Why is the sky blue?");
        me.add_user_message(&conv.id, "Why is the sky blue?", None)
            .await
            .expect("user message");
        let slot = me
            .start_answer(&conv.id, None, "demo", Default::default(), None)
            .await
            .expect("answer");
        me.save_answer(
            &slot,
            &answer("Rayleigh", "scattering, so far", VersionStatus::Streaming),
        )
        .await
        .expect("progress");
        let mid = me
            .conversation(&conv.id, false)
            .await
            .expect("open mid-stream");
        assert_eq!(mid.messages.len(), 2, "{engine}");
        assert_eq!(
            mid.messages[1].shown().map(|v| v.status),
            Some(VersionStatus::Streaming)
        );
        me.save_answer(
            &slot,
            &answer(
                "Rayleigh scattering.",
                "Short wavelengths scatter more.",
                VersionStatus::Done,
            ),
        )
        .await
        .expect("final");
        let opened = me.conversation(&conv.id, false).await.expect("open");
        let shown = opened.messages[1].shown().expect("a version");
        assert_eq!(shown.content, "Rayleigh scattering.", "{engine}");
        assert_eq!(shown.status, VersionStatus::Done);
        assert_eq!(shown.model.as_deref(), Some("demo"));
        let block = &shown.blocks[0];
        assert_eq!(
            block.text, None,
            "{engine}: opening loads headers, not reasoning"
        );
        assert_eq!((block.words, block.duration_ms), (4, Some(4200)));
        assert_eq!(
            me.block_text(&block.id).await.expect("text"),
            "Short wavelengths scatter more."
        );
        me.set_block_open(&block.id, Some(true))
            .await
            .expect("open choice");
        let again = me.conversation(&conv.id, true).await.expect("with text");
        let block = &again.messages[1].versions[0].blocks[0];
        assert_eq!(block.reader_open, Some(true));
        assert_eq!(
            block.text.as_deref(),
            Some("Short wavelengths scatter more.")
        );
        assert!(again.rev > opened.rev - 1);
    }
}

#[tokio::test]
async fn a_turn_opens_in_one_transaction_and_a_refused_one_leaves_nothing() {
    use ponder::server::store::opening::{Asked, Opening};
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let me = store.scoped(&alice);
        let bobs = store
            .scoped(&bob)
            .default_workspace()
            .await
            .expect("bob's workspace");
        let opening = |attachments: &'static [String]| Opening {
            conversation: None,
            workspace: None,
            title: "Why is the sky blue?",
            asked: Some(Asked {
                content: "Why is the sky blue?",
                edit: None,
                attachments,
                max_bytes: u64::MAX,
                send_as: &[],
            }),
            regenerate: None,
            model: "demo",
            settings: Default::default(),
            instructions: None,
            conversation_instructions: None,
            turn: "t1",
            replica: Some("replica-a"),
            compared: false,
        };
        static NOT_MINE: std::sync::LazyLock<Vec<String>> =
            std::sync::LazyLock::new(|| vec!["no-such-file".to_string()]);
        let refused = me.open_turn(opening(&NOT_MINE)).await;
        assert!(
            matches!(refused, Err(StoreError::NotFound)),
            "{engine}: {refused:?}"
        );
        let theirs = me
            .open_turn(Opening {
                workspace: Some(&bobs.id),
                turn: "t0",
                ..opening(&[])
            })
            .await;
        assert!(
            matches!(theirs, Err(StoreError::NotFound)),
            "{engine}: a new chat in another reader's workspace: {theirs:?}"
        );
        assert!(
            matches!(
                me.instruction_levels(None, Some(&bobs.id)).await,
                Err(StoreError::NotFound)
            ),
            "{engine}: nor are that workspace's instructions read"
        );
        assert!(
            me.conversations(None, false)
                .await
                .expect("list")
                .is_empty(),
            "{engine}: a refused opening writes no conversation"
        );
        let mine = me.default_workspace().await.expect("mine");
        let levels = me.instruction_levels(None, None).await.expect("levels");
        assert_eq!(
            levels.workspace_id.as_deref(),
            Some(mine.id.as_str()),
            "{engine}"
        );
        assert_eq!(
            store
                .scoped(&bob)
                .instruction_levels(None, Some(&bobs.id))
                .await
                .expect("bob's levels")
                .workspace_id,
            Some(bobs.id.clone()),
            "{engine}"
        );
        assert!(
            me.shared_turn("t1").await.expect("turn").is_none(),
            "{engine}: a refused opening records no running turn"
        );

        let opened = me
            .open_turn(Opening {
                conversation_instructions: Some("Answer briefly."),
                ..opening(&[])
            })
            .await
            .expect("opened");
        let kept = me
            .instruction_levels(Some(&opened.slot.conversation_id), None)
            .await
            .expect("the new chat's levels");
        assert_eq!(
            kept.conversation.as_deref(),
            Some("Answer briefly."),
            "{engine}"
        );
        assert_eq!(
            kept.workspace_id.as_deref(),
            Some(mine.id.as_str()),
            "{engine}"
        );
        let read = me
            .conversation(&opened.slot.conversation_id, false)
            .await
            .expect("read");
        assert_eq!(read.title, "Why is the sky blue?", "{engine}");
        assert_eq!(read.messages.len(), 2);
        assert_eq!(Some(read.messages[0].id.clone()), opened.user_message);
        assert_eq!(read.messages[1].id, opened.slot.message_id);
        let answer = read.messages[1].shown().expect("answer");
        assert_eq!(answer.status, VersionStatus::Streaming, "{engine}");
        assert_eq!(answer.model.as_deref(), Some("demo"));
        let running = me.shared_turn("t1").await.expect("turn");
        assert_eq!(
            running.map(|t| !t.ended),
            (engine == "postgres").then_some(true),
            "{engine}: the running turn is recorded with its opening, on a shared database only"
        );

        // Answering again opens a second version of the same answer, with no new message.
        let again = me
            .open_turn(Opening {
                conversation: Some(&opened.slot.conversation_id),
                asked: None,
                regenerate: Some(&opened.slot.message_id),
                turn: "t2",
                replica: None,
                compared: false,
                ..opening(&[])
            })
            .await
            .expect("again");
        assert_eq!(again.user_message, None);
        assert_eq!(
            (again.slot.message_id.as_str(), again.slot.version),
            (opened.slot.message_id.as_str(), 1)
        );
    }
}

#[tokio::test]
async fn streaming_states_of_many_answers_are_written_at_once_and_never_over_a_final_one() {
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let mut slots = Vec::new();
        for who in [&alice, &alice, &bob] {
            let me = store.scoped(who);
            let conv = me.create_conversation(None, "q").await.expect("create");
            me.add_user_message(&conv.id, "q", None).await.expect("q");
            let slot = me
                .start_answer(&conv.id, None, "demo", Default::default(), None)
                .await
                .expect("answer");
            slots.push((who, slot));
        }
        let state = |who: &Identity, slot, content: &str, blocks: Vec<(usize, &str)>| {
            let blocks = blocks
                .into_iter()
                .map(|(at, text)| {
                    let mut b = answer("", text, VersionStatus::Streaming).blocks.remove(0);
                    b.index = at as u32;
                    (at, b)
                })
                .collect();
            store
                .scoped(who)
                .streaming_state(slot, content.into(), None, blocks)
        };
        // The first answer ends before the batch that still holds an older state of it.
        store
            .scoped(&alice)
            .save_answer(
                &slots[0].1,
                &answer("the end", "all of it", VersionStatus::Done),
            )
            .await
            .expect("final");
        let mut second = state(&alice, &slots[1].1, "so", vec![(0, "one"), (1, "two")]);
        second.merge(state(&alice, &slots[1].1, "so far", vec![(1, "two three")]));
        // Bob's state handed over as Alice's is refused by the scope of the row.
        let forged = state(&alice, &slots[2].1, "forged", vec![(0, "forged")]);
        let written = store
            .save_streaming(&[
                state(&alice, &slots[0].1, "stale", vec![(0, "stale")]),
                second,
                forged,
            ])
            .await
            .expect("batch");
        assert_eq!(
            written,
            std::collections::HashSet::from([slots[1].1.version_id.clone()]),
            "{engine}"
        );

        let me = store.scoped(&alice);
        let first = me
            .conversation(&slots[0].1.conversation_id, true)
            .await
            .expect("first");
        let v = first.messages[1].shown().expect("version");
        assert_eq!(
            (v.content.as_str(), v.status),
            ("the end", VersionStatus::Done),
            "{engine}"
        );
        assert_eq!(v.blocks.len(), 1);
        assert_eq!(v.blocks[0].text.as_deref(), Some("all of it"), "{engine}");

        let mid = me
            .conversation(&slots[1].1.conversation_id, true)
            .await
            .expect("second");
        let v = mid.messages[1].shown().expect("version");
        assert_eq!(
            (v.content.as_str(), v.status),
            ("so far", VersionStatus::Streaming)
        );
        let texts: Vec<(Option<&str>, u64)> = v
            .blocks
            .iter()
            .map(|b| (b.text.as_deref(), b.words))
            .collect();
        assert_eq!(
            texts,
            vec![(Some("one"), 1), (Some("two three"), 2)],
            "{engine}"
        );

        // A later batch updates a block in place and leaves the other one as it was.
        store
            .save_streaming(&[state(
                &alice,
                &slots[1].1,
                "so far, so good",
                vec![(0, "one more")],
            )])
            .await
            .expect("second batch");
        let mid = me
            .conversation(&slots[1].1.conversation_id, true)
            .await
            .expect("again");
        let v = mid.messages[1].shown().expect("version");
        assert_eq!(v.content, "so far, so good");
        let texts: Vec<Option<&str>> = v.blocks.iter().map(|b| b.text.as_deref()).collect();
        assert_eq!(texts, vec![Some("one more"), Some("two three")], "{engine}");

        let bobs = store
            .scoped(&bob)
            .conversation(&slots[2].1.conversation_id, true)
            .await
            .expect("bob's");
        let v = bobs.messages[1].shown().expect("version");
        assert_eq!(
            v.content, "",
            "{engine}: another user's answer is not written"
        );
        assert!(v.blocks.is_empty(), "{engine}");

        // A final state that arrives after the answer ended (another replica found its server
        // dead and stored it interrupted, or its own final state was written) is refused as a
        // conflict, and what was stored stands.
        let late = me
            .save_answer(
                &slots[0].1,
                &answer("a late end", "late", VersionStatus::Done),
            )
            .await;
        assert!(
            matches!(late, Err(StoreError::Conflict(_))),
            "{engine}: {late:?}"
        );
        let over = store
            .scoped(&bob)
            .save_answer(&slots[0].1, &answer("bob's", "x", VersionStatus::Done))
            .await;
        assert!(
            matches!(over, Err(StoreError::NotFound)),
            "{engine}: {over:?}"
        );
        let first = me
            .conversation(&slots[0].1.conversation_id, true)
            .await
            .expect("first again");
        let v = first.messages[1].shown().expect("version");
        assert_eq!(
            (v.content.as_str(), v.status),
            ("the end", VersionStatus::Done)
        );
    }
}

/// Final states written together: each answer in a savepoint of its own, so a refused one (it
/// already ended; it is another user's) is rolled back alone, and the others are stored whole,
/// indexed for search and with their reasoning state; then many turns ending at once through
/// the server's batch all land, each with its own result.
#[tokio::test]
async fn final_states_of_many_answers_are_written_together_and_a_refused_one_alone_fails() {
    use ponder::server::store::finals::FinalState;
    use ponder::server::store::replay::{KeptState, Provenance};
    use ponder::server::turn::batch::FinalBatch;
    use std::sync::Arc;
    for (engine, url) in engine_urls().await {
        let store = Store::open(&url).await.expect(engine);
        let mut side = side_connection(&url).await;
        // A block whose text is "poison" fails its insert: an answer refused after its first
        // statement was written, which only its savepoint can undo.
        let poison: &[&str] = match store.backend() {
            ponder::server::store::Backend::Sqlite => {
                &["CREATE TRIGGER poison BEFORE INSERT ON thinking_blocks \
                 WHEN NEW.text = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned'); END"]
            }
            ponder::server::store::Backend::Postgres => &[
                "CREATE FUNCTION poison() RETURNS trigger AS $$ BEGIN \
                 IF NEW.text = 'poison' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END \
                 $$ LANGUAGE plpgsql",
                "CREATE TRIGGER poison BEFORE INSERT ON thinking_blocks FOR EACH ROW \
                 EXECUTE FUNCTION poison()",
            ],
        };
        for sql in poison {
            sqlx::query(sql).execute(&mut side).await.expect("trigger");
        }
        let (alice, bob) = two_users(&store).await;
        let (alice, bob) = (Arc::new(alice), Arc::new(bob));
        let mut slots = Vec::new();
        for who in [&alice, &alice, &bob, &bob, &alice] {
            let me = store.scoped(who);
            let conv = me.create_conversation(None, "q").await.expect("create");
            me.add_user_message(&conv.id, "q", None).await.expect("q");
            let slot = me
                .start_answer(&conv.id, None, "demo", Default::default(), None)
                .await
                .expect("answer");
            slots.push(slot);
        }
        store
            .scoped(&alice)
            .save_answer(&slots[1], &answer("ended first", "x", VersionStatus::Done))
            .await
            .expect("ended");
        let from = Provenance {
            provider: "anthropic".into(),
            model: "demo".into(),
            upstream: "http://u/v1".into(),
        };
        let kept = Arc::new(KeptState {
            provenance: from.clone(),
            items: vec![serde_json::json!({"type": "thinking", "signature": "sig-bob"})],
        });
        // Handed over newest conversation first: written in the conversations' order, the
        // results still come back in the order asked.
        let mut finals = [
            (&alice, 0, "azimuth answer", "perihelion thought", None),
            (&alice, 1, "a late end", "late", None),
            (&alice, 2, "forged onto bob's", "forged", None),
            (&bob, 3, "bob's answer", "bob thinks", Some((kept, 10_000))),
            (&alice, 4, "a poisoned answer", "poison", None),
        ]
        .map(|(who, at, content, thinking, kept)| FinalState {
            who: who.clone(),
            slot: slots[at].clone(),
            answer: answer(content, thinking, VersionStatus::Done),
            kept,
        });
        finals.sort_by(|a, b| b.slot.conversation_id.cmp(&a.slot.conversation_id));
        let results = store.save_finals(&finals).await;
        let mut outcome: Vec<(String, &'static str)> = finals
            .iter()
            .zip(&results)
            .map(|(f, r)| {
                let kind = match r {
                    Ok(()) => "ok",
                    Err(StoreError::Conflict(_)) => "conflict",
                    Err(StoreError::NotFound) => "not found",
                    Err(StoreError::Unavailable(_)) => "unavailable",
                    Err(StoreError::Refused(_)) => "refused",
                };
                (f.answer.content.clone(), kind)
            })
            .collect();
        outcome.sort();
        assert_eq!(
            outcome,
            [
                ("a late end".to_string(), "conflict"),
                ("a poisoned answer".to_string(), "unavailable"),
                ("azimuth answer".to_string(), "ok"),
                ("bob's answer".to_string(), "ok"),
                ("forged onto bob's".to_string(), "not found"),
            ],
            "{engine}"
        );
        let shown = |who: Arc<Identity>, at: usize| {
            let store = store.clone();
            let conversation = slots[at].conversation_id.clone();
            async move {
                let c = store
                    .scoped(&who)
                    .conversation(&conversation, true)
                    .await
                    .expect("conversation");
                let v = c.messages[1].shown().expect("version").clone();
                let texts: Vec<Option<String>> = v.blocks.into_iter().map(|b| b.text).collect();
                (v.content, v.status, texts)
            }
        };
        assert_eq!(
            shown(alice.clone(), 4).await,
            (String::new(), VersionStatus::Streaming, vec![]),
            "{engine}: the refused answer's first write is undone"
        );
        assert_eq!(
            shown(alice.clone(), 0).await,
            (
                "azimuth answer".into(),
                VersionStatus::Done,
                vec![Some("perihelion thought".into())]
            ),
            "{engine}"
        );
        assert_eq!(
            shown(alice.clone(), 1).await.0,
            "ended first",
            "{engine}: the earlier end stands"
        );
        assert_eq!(
            shown(bob.clone(), 2).await,
            (String::new(), VersionStatus::Streaming, vec![]),
            "{engine}: another user's answer is not written"
        );
        assert_eq!(
            shown(bob.clone(), 3).await.1,
            VersionStatus::Done,
            "{engine}"
        );

        let me = store.scoped(&alice);
        let mut found = Vec::new();
        for (word, thinking) in [("azimuth", false), ("perihelion", true), ("late", true)] {
            found.push(me.search(word, thinking, 10).await.expect("search").len());
        }
        assert_eq!(found, [1, 1, 0], "{engine}: azimuth, perihelion, late");
        let them = store.scoped(&bob);
        them.add_user_message(&slots[3].conversation_id, "again", None)
            .await
            .expect("q");
        let next = them
            .start_answer(
                &slots[3].conversation_id,
                None,
                "demo",
                Default::default(),
                None,
            )
            .await
            .expect("next");
        let history = them
            .history_before(&slots[3].conversation_id, &next.message_id, Some(&from))
            .await
            .expect("history");
        let replayed: Vec<&serde_json::Value> =
            history.iter().flat_map(|m| m.replay.iter()).collect();
        assert_eq!(
            replayed.len(),
            1,
            "{engine}: the state kept with the answer"
        );
        assert_eq!(replayed[0]["signature"], "sig-bob", "{engine}");

        // Sixty turns ending at once through the server's batch.
        let batch = Arc::new(FinalBatch::default());
        let mut ends = Vec::new();
        for n in 0..60 {
            let who = if n % 2 == 0 {
                alice.clone()
            } else {
                bob.clone()
            };
            let me = store.scoped(&who);
            let conv = me.create_conversation(None, "q").await.expect("create");
            let slot = me
                .start_answer(&conv.id, None, "demo", Default::default(), None)
                .await
                .expect("answer");
            let state = FinalState {
                who: who.clone(),
                slot,
                answer: answer(&format!("burst {n}"), "t", VersionStatus::Done),
                kept: None,
            };
            let (batch, store) = (batch.clone(), store.clone());
            ends.push(tokio::spawn(async move {
                let slot = state.slot.clone();
                (batch.save(&store, state).await, who, slot)
            }));
        }
        for (n, end) in ends.into_iter().enumerate() {
            let (result, who, slot) = end.await.expect("task");
            assert!(result.is_ok(), "{engine}: {result:?}");
            let c = store
                .scoped(&who)
                .conversation(&slot.conversation_id, true)
                .await
                .expect("conversation");
            let v = c.messages[0].shown().expect("version");
            assert_eq!(
                (v.content.as_str(), v.status),
                (format!("burst {n}").as_str(), VersionStatus::Done),
                "{engine}"
            );
        }
    }
}

#[tokio::test]
async fn tools_and_sources_are_kept_with_the_answer_and_a_damaged_copy_loses_only_them() {
    use ponder::domain::{SourceRef, ToolStatus, ToolStep};
    for (engine, url) in engine_urls().await {
        let store = Store::open(&url).await.expect(engine);
        let (alice, _) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me.create_conversation(None, "Rust?").await.expect("create");
        me.add_user_message(&conv.id, "Rust?", None)
            .await
            .expect("user message");
        let slot = me
            .start_answer(&conv.id, None, "demo", Default::default(), None)
            .await
            .expect("answer");
        let mut record = answer("Rust is fast.[^1]", "plan", VersionStatus::Done);
        record.extras.tools = vec![ToolStep {
            name: "web_search".into(),
            input: "rust speed".into(),
            status: ToolStatus::Finished,
            output: "2 results".into(),
            after_blocks: 1,
        }];
        record.extras.sources = vec![SourceRef {
            n: 1,
            url: "https://www.rust-lang.org/".into(),
            title: Some("Rust".into()),
        }];
        let mut cut_short = record.extras.tools[0].clone();
        cut_short.status = ToolStatus::Running;
        record.extras.tools.push(cut_short);
        me.save_answer(&slot, &record).await.expect("final");
        let opened = me.conversation(&conv.id, false).await.expect("open");
        let shown = opened.messages[1].shown().expect("a version");
        assert_eq!(shown.tools[0], record.extras.tools[0], "{engine}");
        assert_eq!(
            shown.tools[1].status,
            ToolStatus::Failed,
            "{engine}: a finished answer has no tool still running"
        );
        assert_eq!(shown.sources, record.extras.sources, "{engine}");
        assert_eq!(shown.content, "Rust is fast.[^1]");

        let mut conn = side_connection(&url).await;
        sqlx::query("UPDATE message_versions SET extras = $1 WHERE id = $2")
            .bind("{not json")
            .bind(&slot.version_id)
            .execute(&mut conn)
            .await
            .expect("damage");
        let opened = me.conversation(&conv.id, false).await.expect("still opens");
        let shown = opened.messages[1].shown().expect("a version");
        assert!(
            shown.tools.is_empty() && shown.sources.is_empty(),
            "{engine}"
        );
        assert_eq!(
            shown.content, "Rust is fast.[^1]",
            "{engine}: the text is kept"
        );
    }
}

#[tokio::test]
async fn a_long_conversation_opens_on_its_last_messages_and_pages_back() {
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me.create_conversation(None, "long").await.expect("create");
        for i in 0..30 {
            me.add_user_message(&conv.id, &format!("question {i}"), None)
                .await
                .expect("question");
            let slot = me
                .start_answer(&conv.id, None, "m", Default::default(), None)
                .await
                .expect("slot");
            me.save_answer(
                &slot,
                &answer(
                    &format!("answer {i}"),
                    &format!("thought {i}"),
                    VersionStatus::Done,
                ),
            )
            .await
            .expect("answer");
        }
        let page = |last, before| Page { last, before };
        let last = me
            .conversation_page(&conv.id, false, page(Some(10), None))
            .await
            .expect("last page");
        assert_eq!((last.first, last.messages.len()), (50, 10), "{engine}");
        let texts = |c: &ponder::domain::history::Conversation| -> Vec<String> {
            c.messages
                .iter()
                .filter_map(|m| m.shown().map(|v| v.content.clone()))
                .collect()
        };
        assert_eq!(texts(&last)[0], "question 25", "{engine}");
        assert_eq!(texts(&last)[9], "answer 29", "{engine}");
        let shown = last.messages[9].shown().expect("answer");
        assert_eq!(
            shown.blocks.len(),
            1,
            "{engine}: the page has its block headers"
        );
        assert_eq!(shown.blocks[0].text, None);
        let earlier = me
            .conversation_page(&conv.id, false, page(Some(20), Some(50)))
            .await
            .expect("earlier page");
        assert_eq!(
            (earlier.first, earlier.messages.len()),
            (30, 20),
            "{engine}"
        );
        assert_eq!(texts(&earlier)[0], "question 15");
        assert_eq!(texts(&earlier)[19], "answer 24");
        assert!(earlier.messages.iter().all(|m| m.versions.len() == 1));
        let start = me
            .conversation_page(&conv.id, false, page(Some(100), Some(4)))
            .await
            .expect("first page");
        assert_eq!(
            (start.first, texts(&start)),
            (
                0,
                vec![
                    "question 0".to_string(),
                    "answer 0".into(),
                    "question 1".into(),
                    "answer 1".into(),
                ]
            )
        );
        let all = me.conversation(&conv.id, false).await.expect("whole");
        assert_eq!((all.first, all.messages.len()), (0, 60));
        let other = store.scoped(&bob);
        assert!(
            matches!(
                other
                    .conversation_page(&conv.id, false, page(Some(10), None))
                    .await,
                Err(StoreError::NotFound)
            ),
            "{engine}: another user's page is not found"
        );
    }
}

#[tokio::test]
async fn history_is_built_from_the_store_and_versions_are_kept() {
    for (engine, store) in stores().await {
        let (alice, _) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me.create_conversation(None, "q").await.expect("create");
        let q1 = me
            .add_user_message(&conv.id, "first question", None)
            .await
            .expect("q1");
        let a1 = me
            .start_answer(&conv.id, None, "m", Default::default(), None)
            .await
            .expect("a1");
        me.save_answer(&a1, &answer("first answer", "t", VersionStatus::Done))
            .await
            .expect("a1 done");
        me.add_user_message(&conv.id, "second question", None)
            .await
            .expect("q2");
        let a2 = me
            .start_answer(&conv.id, None, "m", Default::default(), None)
            .await
            .expect("a2");
        assert_eq!(
            me.history_before(&conv.id, &a2.message_id, None)
                .await
                .expect("history"),
            [
                ChatMessage::user("first question"),
                ChatMessage::assistant("first answer"),
                ChatMessage::user("second question"),
            ],
            "{engine}"
        );
        // A failed answer is not sent back to the model.
        let mut failed = answer("partial", "t", VersionStatus::Error);
        failed.error = Some(Failure::coded(ErrorCode::Silent, "boom", true).with("seconds", 2));
        me.save_answer(&a2, &failed).await.expect("failed");
        // Regenerate keeps the failed version and shows the new one.
        let again = me
            .start_answer(
                &conv.id,
                Some(&a2.message_id),
                "m",
                Default::default(),
                None,
            )
            .await
            .expect("regenerate");
        assert_eq!(again.version, 1);
        me.save_answer(&again, &answer("second answer", "t", VersionStatus::Done))
            .await
            .expect("done");
        let opened = me.conversation(&conv.id, false).await.expect("open");
        let m = &opened.messages[3];
        assert_eq!(m.versions.len(), 2);
        assert_eq!(m.active, 1);
        assert_eq!(
            m.versions[0].error.as_ref().map(|e| e.message.as_str()),
            Some("boom")
        );
        // Its code and parameters are kept beside the message.
        let error = m.versions[0].error.as_ref().expect("the error");
        assert_eq!(error.code, ErrorCode::Silent, "{engine}");
        assert_eq!(error.param("seconds"), "2", "{engine}");
        assert!(m.versions[1].error.is_none(), "{engine}");
        me.set_active_version(&m.id, 0).await.expect("switch");
        assert!(matches!(
            me.set_active_version(&m.id, 5).await,
            Err(StoreError::Conflict(_))
        ));
        // Editing the first question keeps its earlier version and drops what followed.
        me.add_user_message(&conv.id, "first question, better", Some(&q1))
            .await
            .expect("edit");
        let edited = me.conversation(&conv.id, false).await.expect("open");
        assert_eq!(edited.messages.len(), 1, "{engine}");
        assert!(edited.messages[0].edited());
        assert_eq!(
            edited.messages[0].shown().map(|v| v.content.as_str()),
            Some("first question, better")
        );
        assert_eq!(edited.messages[0].versions[0].content, "first question");
        let found = me.search("first", false, 10).await.expect("search");
        assert_eq!(
            found.iter().map(|h| h.kind).collect::<Vec<_>>(),
            [HitKind::Question],
            "{engine}: the edit replaced the question's entry"
        );
        assert_eq!(
            me.search("better", false, 10).await.expect("search").len(),
            1
        );
        let a = me
            .start_answer(&conv.id, None, "m", Default::default(), None)
            .await
            .expect("answer the edit");
        assert_eq!(
            me.history_before(&conv.id, &a.message_id, None)
                .await
                .expect("history"),
            [ChatMessage::user("first question, better")]
        );
    }
}

#[tokio::test]
async fn another_users_rows_answer_not_found_everywhere() {
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let a = store.scoped(&alice);
        let b = store.scoped(&bob);
        let conv = a
            .create_conversation(None, "private")
            .await
            .expect("create");
        let q = a
            .add_user_message(&conv.id, "my secret question", None)
            .await
            .expect("q");
        let slot = a
            .start_answer(&conv.id, None, "m", Default::default(), None)
            .await
            .expect("answer");
        a.save_answer(
            &slot,
            &answer("my secret answer", "secret thinking", VersionStatus::Done),
        )
        .await
        .expect("save");
        let block = a
            .conversation(&conv.id, false)
            .await
            .expect("open")
            .messages[1]
            .versions[0]
            .blocks[0]
            .id
            .clone();
        let workspace = a.default_workspace().await.expect("workspace");
        let (token, _) = a.create_token("script").await.expect("token");

        let nf = |r: Result<(), StoreError>, what: &str| {
            assert!(
                matches!(r, Err(StoreError::NotFound)),
                "{engine}: {what}: {r:?}"
            );
        };
        nf(b.conversation(&conv.id, false).await.map(|_| ()), "open");
        nf(b.conversation(&conv.id, true).await.map(|_| ()), "export");
        nf(b.rename_conversation(&conv.id, "mine").await, "rename");
        nf(b.delete_conversation(&conv.id).await.map(|_| ()), "delete");
        nf(b.restore_conversation(&conv.id).await, "restore");
        nf(b.block_text(&block).await.map(|_| ()), "block text");
        nf(b.set_block_open(&block, Some(true)).await, "block choice");
        nf(b.set_active_version(&q, 0).await, "version");
        nf(
            b.add_user_message(&conv.id, "hi", None).await.map(|_| ()),
            "append",
        );
        nf(
            b.add_user_message(&conv.id, "hi", Some(&q))
                .await
                .map(|_| ()),
            "edit",
        );
        nf(
            b.start_answer(&conv.id, None, "m", Default::default(), None)
                .await
                .map(|_| ()),
            "answer",
        );
        nf(
            b.start_answer(
                &conv.id,
                Some(&slot.message_id),
                "m",
                Default::default(),
                None,
            )
            .await
            .map(|_| ()),
            "regenerate",
        );
        nf(
            b.history_before(&conv.id, &slot.message_id, None)
                .await
                .map(|_| ()),
            "history",
        );
        nf(
            b.save_answer(&slot, &answer("overwritten", "x", VersionStatus::Done))
                .await,
            "save",
        );
        nf(b.rename_workspace(&workspace.id, "mine").await, "workspace");
        nf(
            b.conversations(Some(&workspace.id), false)
                .await
                .map(|_| ()),
            "list",
        );
        nf(b.revoke_token(&token.id).await, "token");
        assert!(b
            .conversations(None, false)
            .await
            .expect("own list")
            .is_empty());
        assert!(
            b.search("secret", true, 10)
                .await
                .expect("search")
                .is_empty(),
            "{engine}"
        );
        // And Alice's data is untouched.
        let mine = a.conversation(&conv.id, false).await.expect("still there");
        assert_eq!(
            mine.messages[1].shown().map(|v| v.content.as_str()),
            Some("my secret answer")
        );
        assert_eq!(mine.title, "private");
    }
}

/// On SQLite a turn's search entries are written pending and indexed together: a search finds
/// them at once (it indexes what is pending first); without a search they are indexed within
/// seconds; an edited question's old words leave the index; and entries left pending by a
/// process that died are indexed when the store opens again, replacing an entry's old text.
#[tokio::test]
async fn pending_search_entries_are_found_at_once_indexed_soon_and_kept_across_a_restart() {
    let url = sqlite_url();
    let store = Store::open(&url).await.expect("open");
    let (alice, _) = two_users(&store).await;
    let me = store.scoped(&alice);
    let conv = me.create_conversation(None, "Sky").await.expect("create");
    let question = me
        .add_user_message(&conv.id, "why is the sky blue", None)
        .await
        .expect("q");
    let slot = me
        .start_answer(&conv.id, None, "m", Default::default(), None)
        .await
        .expect("a");
    me.save_answer(
        &slot,
        &answer(
            "Rayleigh scattering.",
            "Short wavelengths scatter.",
            VersionStatus::Done,
        ),
    )
    .await
    .expect("save");
    let mut side = side_connection(&url).await;
    let indexed = |word: &'static str| {
        format!("SELECT COUNT(*) FROM search_index WHERE search_index MATCH '\"{word}\"'")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let pending: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM search_refs WHERE pending_body IS NOT NULL")
                .fetch_one(&mut side)
                .await
                .expect("pending");
        let found: i64 = sqlx::query_scalar(&indexed("wavelengths"))
            .fetch_one(&mut side)
            .await
            .expect("match");
        if pending == 0 {
            assert_eq!(found, 1, "indexed without a search");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{pending} entries still pending"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        me.search("rayleigh", false, 10)
            .await
            .expect("search")
            .len(),
        1
    );
    let edited = me
        .add_user_message(&conv.id, "why is the grass green", Some(&question))
        .await
        .expect("edit");
    assert!(me
        .search("sky", false, 10)
        .await
        .expect("search")
        .is_empty());
    assert!(me
        .search("rayleigh", true, 10)
        .await
        .expect("search")
        .is_empty());
    assert_eq!(
        me.search("grass", false, 10).await.expect("search").len(),
        1
    );

    // A process that wrote entries and died before indexing them: the next one indexes them as
    // it opens, and an entry pending over an indexed one replaces its words.
    sqlx::query("UPDATE search_refs SET pending_body = 'why are clouds white' WHERE ref_id = $1")
        .bind(&edited)
        .execute(&mut side)
        .await
        .expect("pending again");
    drop(store);
    let store = Store::open(&url).await.expect("reopen");
    for (word, count) in [("clouds", 1), ("grass", 0)] {
        let found: i64 = sqlx::query_scalar(&indexed(word))
            .fetch_one(&mut side)
            .await
            .expect("match");
        assert_eq!(found, count, "{word}");
    }
    let me = store.scoped(&alice);
    assert_eq!(
        me.search("clouds", false, 10).await.expect("search").len(),
        1
    );
}

#[tokio::test]
async fn search_finds_answers_and_questions_and_thinking_only_when_asked() {
    for (engine, store) in stores().await {
        let (alice, _) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me
            .create_conversation(None, "Colours")
            .await
            .expect("create");
        me.add_user_message(&conv.id, "why is the sky blue", None)
            .await
            .expect("q");
        let slot = me
            .start_answer(&conv.id, None, "m", Default::default(), None)
            .await
            .expect("a");
        me.save_answer(
            &slot,
            &answer(
                "Because of Rayleigh scattering [see a[0] and [b]].",
                "The wavelength dependence of scattering matters.",
                VersionStatus::Done,
            ),
        )
        .await
        .expect("save");
        let hits = me.search("rayleigh", false, 10).await.expect("search");
        assert_eq!(hits.len(), 1, "{engine}: {hits:?}");
        assert_eq!(hits[0].kind, HitKind::Answer);
        assert_eq!(hits[0].conversation_title, "Colours");
        assert!(
            hits[0]
                .snippet
                .iter()
                .any(|p| p.hit && p.text == "Rayleigh"),
            "{engine}: {:?}",
            hits[0].snippet
        );
        assert_eq!(
            hits[0].snippet.iter().filter(|p| p.hit).count(),
            1,
            "{engine}: only the match is marked, whatever brackets the text holds: {:?}",
            hits[0].snippet
        );
        assert!(me
            .search("wavelength", false, 10)
            .await
            .expect("search")
            .is_empty());
        let thinking = me.search("wavelength", true, 10).await.expect("search");
        assert_eq!(thinking.len(), 1, "{engine}");
        assert_eq!(thinking[0].kind, HitKind::Thinking);
        assert_eq!(
            me.search("sky", false, 10).await.expect("q")[0].kind,
            HitKind::Question
        );
        // Deleted conversations leave the results.
        me.delete_conversation(&conv.id).await.expect("delete");
        assert!(me
            .search("rayleigh", true, 10)
            .await
            .expect("search")
            .is_empty());
        // Odd input is words, not syntax.
        assert!(
            me.search("\" OR 1=1 -- NEAR(", true, 10).await.is_ok(),
            "{engine}"
        );
    }
}

#[tokio::test]
async fn deletion_can_be_undone_until_the_purge_which_removes_everything() {
    for (engine, store) in stores().await {
        let (alice, _) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me
            .create_conversation(None, "to delete")
            .await
            .expect("create");
        me.add_user_message(&conv.id, "hello there", None)
            .await
            .expect("q");
        let slot = me
            .start_answer(&conv.id, None, "m", Default::default(), None)
            .await
            .expect("a");
        me.save_answer(
            &slot,
            &answer("general kenobi", "think", VersionStatus::Done),
        )
        .await
        .expect("save");
        let deleted_at = me.delete_conversation(&conv.id).await.expect("delete");
        assert!(me
            .conversations(None, false)
            .await
            .expect("list")
            .is_empty());
        assert_eq!(
            me.conversations(None, true).await.expect("deleted")[0].deleted_at,
            Some(deleted_at)
        );
        assert!(matches!(
            me.conversation(&conv.id, false).await,
            Err(StoreError::NotFound)
        ));
        me.restore_conversation(&conv.id).await.expect("undo");
        assert_eq!(me.conversations(None, false).await.expect("list").len(), 1);
        // Deleted again, then purged once the grace is over.
        me.delete_conversation(&conv.id).await.expect("delete");
        assert_eq!(
            store.purge_deleted(deleted_at - 1).await.expect("not yet"),
            0
        );
        assert_eq!(
            store.purge_deleted(i64::MAX).await.expect("purge"),
            1,
            "{engine}"
        );
        assert!(matches!(
            me.restore_conversation(&conv.id).await,
            Err(StoreError::NotFound)
        ));
        assert!(me
            .search("kenobi", true, 10)
            .await
            .expect("search")
            .is_empty());
    }
}

#[tokio::test]
async fn deleting_a_user_removes_everything_they_own() {
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        assert!(
            alice.user().is_admin && !bob.user().is_admin,
            "{engine}: the first user is the admin"
        );
        let b = store.scoped(&bob);
        let conv = b.create_conversation(None, "x").await.expect("create");
        b.add_user_message(&conv.id, "a question", None)
            .await
            .expect("q");
        let secret = store
            .open_session(&bob, "bob", 3_600_000)
            .await
            .expect("session");
        let (_, token) = b.create_token("t").await.expect("token");
        assert!(store.token_identity(&token).await.expect("token").is_some());
        assert!(
            matches!(
                store.delete_user(&bob, &alice.user().id).await,
                Err(StoreError::NotFound)
            ),
            "only an admin deletes users"
        );
        store
            .delete_user(&alice, &bob.user().id)
            .await
            .expect("delete");
        assert!(
            store
                .session_identity(&secret)
                .await
                .expect("lookup")
                .is_none(),
            "{engine}"
        );
        assert!(store
            .token_identity(&token)
            .await
            .expect("lookup")
            .is_none());
        assert!(store.user_by_name("bob").await.expect("lookup").is_none());
        // Nothing of theirs is left to find, even by a new user of the same name.
        let again = store
            .identity_for_name("bob", false)
            .await
            .expect("new bob");
        assert!(store
            .scoped(&again)
            .conversations(None, false)
            .await
            .expect("list")
            .is_empty());
        assert!(store
            .scoped(&again)
            .search("question", true, 10)
            .await
            .expect("search")
            .is_empty());
    }
}

#[tokio::test]
async fn sessions_expire_and_close_and_tokens_are_revoked() {
    for (engine, store) in stores().await {
        let (alice, _) = two_users(&store).await;
        let live = store
            .open_session(&alice, "alice", 3_600_000)
            .await
            .expect("session");
        let expired = store
            .open_session(&alice, "alice", -1)
            .await
            .expect("expired");
        assert_eq!(
            store
                .session_identity(&live)
                .await
                .expect("lookup")
                .map(|(i, _)| i),
            Some(alice.clone()),
            "{engine}"
        );
        assert!(store
            .session_identity(&expired)
            .await
            .expect("lookup")
            .is_none());
        assert!(store
            .session_identity("ps_forged")
            .await
            .expect("lookup")
            .is_none());
        store.close_session(&live).await.expect("close");
        assert!(store
            .session_identity(&live)
            .await
            .expect("lookup")
            .is_none());
        let one = store
            .open_session(&alice, "alice", 3_600_000)
            .await
            .expect("s1");
        let two = store
            .open_session(&alice, "alice", 3_600_000)
            .await
            .expect("s2");
        store
            .scoped(&alice)
            .sign_out_everywhere()
            .await
            .expect("everywhere");
        assert!(store
            .session_identity(&one)
            .await
            .expect("lookup")
            .is_none());
        assert!(store
            .session_identity(&two)
            .await
            .expect("lookup")
            .is_none());
        let me = store.scoped(&alice);
        let (info, secret) = me.create_token("cli").await.expect("token");
        assert_eq!(me.tokens().await.expect("list")[0].name, "cli");
        me.revoke_token(&info.id).await.expect("revoke");
        assert!(store
            .token_identity(&secret)
            .await
            .expect("lookup")
            .is_none());
        assert!(me.tokens().await.expect("list").is_empty());
    }
}

#[tokio::test]
async fn workspaces_hold_their_own_conversations() {
    for (engine, store) in stores().await {
        let (alice, _) = two_users(&store).await;
        let me = store.scoped(&alice);
        let personal = me.default_workspace().await.expect("default");
        let work = me.create_workspace("Work").await.expect("create");
        me.create_conversation(Some(&work.id), "at work")
            .await
            .expect("conv");
        me.create_conversation(None, "at home").await.expect("conv");
        assert_eq!(
            me.conversations(Some(&work.id), false).await.expect("work")[0].title,
            "at work"
        );
        assert_eq!(
            me.conversations(Some(&personal.id), false)
                .await
                .expect("home")[0]
                .title,
            "at home"
        );
        me.rename_workspace(&work.id, "Job").await.expect("rename");
        let names: Vec<String> = me
            .workspaces()
            .await
            .expect("list")
            .into_iter()
            .map(|w| w.name)
            .collect();
        assert_eq!(names, ["Personal", "Job"], "{engine}");
        assert!(me.create_workspace("   ").await.is_err());
    }
}

/// Reasoning state is kept beside its answer version and read back only for its own provider,
/// model and upstream; a conversation keeps at most the cap (the oldest go first); a row that
/// does not read replays nothing; a deleted conversation takes its state with it.
#[tokio::test]
async fn reasoning_state_is_kept_per_answer_and_read_back_only_for_its_provenance() {
    use ponder::server::store::replay::{KeptState, Provenance};
    use serde_json::json;
    for (engine, url) in engine_urls().await {
        let store = Store::open(&url).await.expect(engine);
        let mut conn = side_connection(&url).await;
        let (alice, _) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me.create_conversation(None, "q").await.expect("create");
        let from = Provenance {
            provider: "anthropic".into(),
            model: "m".into(),
            upstream: "http://u/v1".into(),
        };
        let mut slots = Vec::new();
        for n in 0..3 {
            me.add_user_message(&conv.id, &format!("q{n}"), None)
                .await
                .expect("q");
            let slot = me
                .start_answer(&conv.id, None, "m", Default::default(), None)
                .await
                .expect("a");
            me.save_answer(&slot, &answer(&format!("a{n}"), "t", VersionStatus::Done))
                .await
                .expect("done");
            let state = KeptState {
                provenance: from.clone(),
                items: vec![
                    json!({"type": "thinking", "thinking": "t", "signature": format!("sig{n}")}),
                ],
            };
            me.keep_reasoning_state(&slot, &state, 150)
                .await
                .expect("kept");
            slots.push(slot);
        }
        me.add_user_message(&conv.id, "last", None)
            .await
            .expect("q");
        let next = me
            .start_answer(&conv.id, None, "m", Default::default(), None)
            .await
            .expect("next");
        let history = me
            .history_before(&conv.id, &next.message_id, Some(&from))
            .await
            .expect("history");
        let signatures: Vec<String> = history
            .iter()
            .flat_map(|m| m.replay.iter())
            .map(|item| item["signature"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(
            signatures,
            ["sig1", "sig2"],
            "{engine}: the cap keeps the newest"
        );
        assert!(me.reasoning_state_bytes(&conv.id).await.expect("bytes") <= 150);
        for other in [
            Provenance {
                model: "other".into(),
                ..from.clone()
            },
            Provenance {
                upstream: "http://elsewhere/v1".into(),
                ..from.clone()
            },
        ] {
            let history = me
                .history_before(&conv.id, &next.message_id, Some(&other))
                .await
                .expect("history");
            assert!(history.iter().all(|m| m.replay.is_empty()), "{engine}");
        }
        sqlx::query("UPDATE reasoning_states SET items = 'not json' WHERE version_id = $1")
            .bind(&slots[2].version_id)
            .execute(&mut conn)
            .await
            .expect("damage");
        let history = me
            .history_before(&conv.id, &next.message_id, Some(&from))
            .await
            .expect("a damaged row does not fail the turn");
        assert_eq!(history.iter().filter(|m| !m.replay.is_empty()).count(), 1);
        me.discard_conversation(&conv.id).await.expect("discard");
        let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM reasoning_states")
            .fetch_one(&mut conn)
            .await
            .expect("count");
        assert_eq!(left, 0, "{engine}: gone with its conversation");
    }
}

/// A branch keeps every field of every version (settings, usage, finish reason, tools and
/// sources, each thinking block and its text) and is found by search, on both engines; another
/// user's conversation cannot be branched.
#[tokio::test]
async fn a_branch_keeps_every_field_and_is_found_by_search() {
    use ponder::domain::{Effort, ReasoningSettings, SourceRef, ToolStatus, ToolStep};
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let me = store.scoped(&alice);
        let conv = me.create_conversation(None, "Rust?").await.expect("create");
        me.add_user_message(&conv.id, "Is Rust fast?", None)
            .await
            .expect("question");
        let settings = ReasoningSettings::reasoning(Some(true), Some(Effort::High))
            .with_sampling(ponder::domain::sampling::Tunable::Temperature, Some(0.3))
            .unwrap();
        let slot = me
            .start_answer(&conv.id, None, "m-1", settings, None)
            .await
            .expect("answer");
        let mut record = answer(
            "Rust is quite zippy.[^1]",
            "pondering borrowck",
            VersionStatus::Done,
        );
        record.finish_reason = Some("stop".into());
        record.reasoning_tokens = Some(7);
        record.extras.tools = vec![ToolStep {
            name: "web_search".into(),
            input: "rust speed".into(),
            status: ToolStatus::Finished,
            output: "1 result".into(),
            after_blocks: 1,
        }];
        record.extras.sources = vec![SourceRef {
            n: 1,
            url: "https://www.rust-lang.org/".into(),
            title: Some("Rust".into()),
        }];
        me.save_answer(&slot, &record).await.expect("saved");
        me.add_user_message(&conv.id, "And later?", None)
            .await
            .expect("after");
        let original = me.conversation(&conv.id, true).await.expect("open");
        let branch = me
            .branch_conversation(&conv.id, &slot.message_id)
            .await
            .expect("branch");
        let copy = me
            .conversation(&branch.id, true)
            .await
            .expect("open branch");
        assert_eq!(copy.messages.len(), 2, "{engine}: up to the answer");
        assert_eq!(
            ponder::domain::history::TitleMark::split(&copy.title),
            Some((
                original.title.as_str(),
                ponder::domain::history::TitleMark::Branch
            )),
            "{engine}: the title says \"branch\" in no language; the reader's says it"
        );
        for (a, b) in original.messages[..2].iter().zip(&copy.messages) {
            assert_ne!(a.id, b.id);
            assert_eq!((a.role, a.active), (b.role, b.active), "{engine}");
            for (va, vb) in a.versions.iter().zip(&b.versions) {
                let strip = |v: &ponder::domain::history::Version| {
                    let mut v = v.clone();
                    v.id = String::new();
                    for block in &mut v.blocks {
                        block.id = String::new();
                    }
                    serde_json::to_value(&v).expect("json")
                };
                assert_eq!(strip(va), strip(vb), "{engine}: every field kept");
            }
        }
        let answer = copy.messages[1].shown().expect("answer");
        assert_eq!(answer.settings, settings, "{engine}");
        assert_eq!(answer.tools.len(), 1, "{engine}");
        assert_eq!(answer.sources.len(), 1, "{engine}");
        for (query, thinking) in [("zippy", false), ("borrowck", true), ("fast", false)] {
            let hits = me.search(query, thinking, 20).await.expect("search");
            assert!(
                hits.iter().any(|h| h.conversation_id == branch.id),
                "{engine}: the branch is found by {query:?}"
            );
        }
        assert!(
            matches!(
                store
                    .scoped(&bob)
                    .branch_conversation(&conv.id, &slot.message_id)
                    .await,
                Err(StoreError::NotFound)
            ),
            "{engine}"
        );
    }
}

/// The two engines' migrated schemas have the same tables with the same columns; the only
/// differences are the search index's, which each engine builds its own way (an FTS5 table and
/// a table of references on SQLite, an ordinary table with a text-search column on PostgreSQL).
#[tokio::test]
async fn both_engines_migrate_to_the_same_tables_and_columns() {
    use std::collections::{BTreeMap, BTreeSet};
    let [(_, sqlite), (_, pg)] = engine_urls().await;
    drop(Store::open(&sqlite).await.expect("sqlite"));
    drop(Store::open(&pg).await.expect("postgres"));
    type Schema = BTreeMap<String, BTreeSet<String>>;
    let mut lite = side_connection(&sqlite).await;
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name NOT LIKE 'search_index%' AND name NOT IN ('search_refs', '_sqlx_migrations')",
    )
    .fetch_all(&mut lite)
    .await
    .expect("tables");
    let mut on_sqlite = Schema::new();
    for table in tables {
        let columns: Vec<String> =
            sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{table}')"))
                .fetch_all(&mut lite)
                .await
                .expect("columns");
        on_sqlite.insert(table, columns.into_iter().collect());
    }
    let mut post = side_connection(&pg).await;
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text FROM information_schema.columns \
         WHERE table_schema = 'public' AND table_name NOT IN ('search_index', '_sqlx_migrations')",
    )
    .fetch_all(&mut post)
    .await
    .expect("columns");
    let mut on_postgres = Schema::new();
    for (table, column) in rows {
        on_postgres.entry(table).or_default().insert(column);
    }
    assert!(on_sqlite.len() > 10, "{on_sqlite:?}");
    assert_eq!(on_sqlite, on_postgres);
}

/// Import, discard, message order and preferences at the store, on both engines: an import is
/// stored whole, found by search and made once per key; discarded messages leave nothing found;
/// preferences are kept per workspace and per user, and a bad one is refused.
#[tokio::test]
async fn import_discard_position_and_preferences_at_the_store() {
    use ponder::domain::history::{Import, ImportBlock, ImportMessage, ImportVersion, Preferences};
    use ponder::domain::Role;
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let me = store.scoped(&alice);
        let version = |content: &str, blocks: Vec<ImportBlock>| ImportVersion {
            content: content.into(),
            status: VersionStatus::Done,
            error: None,
            created_at: 5,
            blocks,
            tools: Vec::new(),
            sources: Vec::new(),
            files: Vec::new(),
            usage: Some(ponder::domain::Usage {
                input_tokens: Some(1290),
                output_tokens: Some(40),
                reasoning_tokens: Some(12),
                file_tokens: Some(1032),
                ..Default::default()
            }),
        };
        let import = Import {
            instructions: None,
            key: "browser:abc".into(),
            title: "Old chat".into(),
            created_at: 5,
            messages: vec![
                ImportMessage {
                    role: Role::User,
                    created_at: 5,
                    active: 0,
                    versions: vec![version("Tell me about quokkas", Vec::new())],
                },
                ImportMessage {
                    role: Role::Assistant,
                    created_at: 6,
                    active: 1,
                    versions: vec![
                        version("first try", Vec::new()),
                        version(
                            "Quokkas smile.",
                            vec![ImportBlock {
                                kind: ThinkingKind::Summary,
                                text: "marsupial facts".into(),
                                duration_ms: Some(900),
                                interrupted: false,
                            }],
                        ),
                    ],
                },
            ],
        };
        assert!(me.import_conversation(None, &import).await.expect("import"));
        assert!(
            !me.import_conversation(None, &import).await.expect("again"),
            "{engine}: one key, one conversation"
        );
        let list = me.conversations(None, false).await.expect("list");
        let imported = list.iter().find(|c| c.title == "Old chat").expect("listed");
        let opened = me.conversation(&imported.id, true).await.expect("open");
        assert_eq!(opened.messages.len(), 2, "{engine}");
        let answer = &opened.messages[1];
        assert_eq!((answer.active, answer.versions.len()), (1, 2), "{engine}");
        let shown = answer.shown().expect("shown");
        assert_eq!(shown.content, "Quokkas smile.");
        assert_eq!(shown.blocks[0].kind, ThinkingKind::Summary);
        assert_eq!(shown.blocks[0].text.as_deref(), Some("marsupial facts"));
        let usage = shown.usage.as_ref().expect("the counts kept");
        assert_eq!(
            (
                usage.input_tokens,
                usage.file_tokens,
                usage.reasoning_tokens
            ),
            (Some(1290), Some(1032), Some(12)),
            "{engine}"
        );
        assert!(!me
            .search("quokkas", false, 10)
            .await
            .expect("search")
            .is_empty());
        assert!(!me
            .search("marsupial", true, 10)
            .await
            .expect("search")
            .is_empty());

        // Messages keep their order as more are added; discarding them leaves nothing found.
        me.add_user_message(&imported.id, "And wombats?", None)
            .await
            .expect("more");
        let again = me.conversation(&imported.id, false).await.expect("open");
        let roles: Vec<Role> = again.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::User], "{engine}");
        let ids: Vec<&str> = again.messages[1..].iter().map(|m| m.id.as_str()).collect();
        me.discard_messages(&imported.id, &ids)
            .await
            .expect("discard");
        let left = me.conversation(&imported.id, false).await.expect("open");
        assert_eq!(left.messages.len(), 1, "{engine}");
        for (word, thinking) in [("smile", false), ("marsupial", true), ("wombats", false)] {
            assert!(
                me.search(word, thinking, 10)
                    .await
                    .expect("search")
                    .is_empty(),
                "{engine}: {word} is gone from the index"
            );
        }

        // Preferences: per workspace, per user; a bad value changes nothing.
        let prefs = Preferences {
            thinking: Some("collapsed".into()),
            locale: Some("ja".into()),
            theme: None,
            default_model: Some("m-2".into()),
            titles: Some("off".into()),
        };
        me.set_preferences(None, &prefs).await.expect("set");
        assert_eq!(me.preferences(None).await.expect("get"), prefs, "{engine}");
        let work = me.create_workspace("Work").await.expect("workspace");
        assert_eq!(
            me.preferences(Some(&work.id)).await.expect("get"),
            Preferences::default(),
            "{engine}: another workspace keeps its own"
        );
        let theirs = store.scoped(&bob);
        assert_eq!(
            theirs.preferences(None).await.expect("get"),
            Preferences::default(),
            "{engine}"
        );
        assert!(
            theirs.preferences(Some(&work.id)).await.is_err(),
            "{engine}"
        );
        let bad = Preferences {
            locale: Some("x".repeat(65)),
            ..prefs.clone()
        };
        assert!(me.set_preferences(None, &bad).await.is_err(), "{engine}");
        let bad = Preferences {
            titles: Some("sometimes".into()),
            ..prefs.clone()
        };
        assert!(me.set_preferences(None, &bad).await.is_err(), "{engine}");
        assert_eq!(me.preferences(None).await.expect("get"), prefs, "{engine}");
    }
}

#[tokio::test]
async fn attachments_are_kept_once_per_content_and_reached_only_by_their_owner() {
    use ponder::domain::attachment::{sniff, Kind, Limits};
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x02\x80\0\0\x01\xe0\x08\x06\0\0\0".to_vec();
    png.extend([7u8; 200]);
    let sniffed = sniff("shot.png", &png, &Limits::default()).expect("a PNG");
    for (engine, url) in engine_urls().await {
        let store = Store::open(&url).await.expect(engine);
        let (alice, bob) = two_users(&store).await;
        let a = store.scoped(&alice);
        let first = a
            .put_attachment("shot.png", &sniffed, &png, 1_000)
            .await
            .expect("kept");
        assert_eq!(
            (first.kind, first.mime.as_str(), first.size, first.pixels),
            (Kind::Image, "image/png", png.len() as u64, Some((640, 480))),
            "{engine}"
        );
        let again = a
            .put_attachment("same bytes.png", &sniffed, &png, 1_000)
            .await
            .expect("kept again");
        assert_ne!(again.id, first.id, "{engine}: each attachment is its own");
        assert_eq!(again.sha256, first.sha256);
        assert_eq!(again.name, "same bytes.png");
        assert_eq!(
            a.attachment_bytes().await.expect("used"),
            png.len() as u64,
            "{engine}: the same bytes are kept once"
        );
        let (info, bytes) = a.attachment(&first.id).await.expect("read back");
        assert_eq!((info, bytes), (first.clone(), png.clone()), "{engine}");
        // Another user: not found, and their own quota.
        let b = store.scoped(&bob);
        assert!(
            matches!(b.attachment(&first.id).await, Err(StoreError::NotFound)),
            "{engine}"
        );
        assert!(matches!(
            b.attachment_info(&first.id).await,
            Err(StoreError::NotFound)
        ));
        let mut other = png.clone();
        other.push(1);
        match a.put_attachment("more.png", &sniffed, &other, 300).await {
            Err(StoreError::Refused(f)) => {
                assert_eq!(f.code, ErrorCode::AttachmentQuota, "{engine}");
                assert_eq!(
                    (f.param("name"), f.param("limit")),
                    ("more.png", "300 bytes")
                );
            }
            other => panic!("{engine}: {other:?}"),
        }
        assert_eq!(
            a.attachment_bytes().await.expect("used"),
            png.len() as u64,
            "{engine}: a refused file leaves nothing behind"
        );
        b.put_attachment("shot.png", &sniffed, &png, 1_000)
            .await
            .expect("bob keeps his own copy");
        // A deleted user's files go with them.
        store
            .delete_user(&alice, &bob.user().id)
            .await
            .expect("delete");
        let mut side = side_connection(&url).await;
        let (blobs, rows): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM attachment_blobs), (SELECT COUNT(*) FROM attachments)",
        )
        .fetch_one(&mut side)
        .await
        .expect("count");
        assert_eq!(
            (blobs, rows),
            (1, 2),
            "{engine}: alice's one content, two names"
        );
    }
}

#[tokio::test]
async fn a_message_s_files_show_with_it_go_with_a_branch_and_leave_with_the_purge() {
    use ponder::domain::attachment::{sniff, Kind, Limits, SendAs};
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x03\0\0\0\x02\x08\x06\0\0\0".to_vec();
    let text = b"some notes".to_vec();
    for (engine, url) in engine_urls().await {
        let store = Store::open(&url).await.expect(engine);
        let (alice, bob) = two_users(&store).await;
        let a = store.scoped(&alice);
        let image = a
            .put_attachment(
                "shot.png",
                &sniff("shot.png", &png, &Limits::default()).expect("png"),
                &png,
                1 << 20,
            )
            .await
            .expect("kept");
        let notes = a
            .put_attachment(
                "notes.md",
                &sniff("notes.md", &text, &Limits::default()).expect("text"),
                &text,
                1 << 20,
            )
            .await
            .expect("kept");
        let never_sent = a
            .put_attachment(
                "draft.md",
                &sniff("draft.md", b"later", &Limits::default()).expect("text"),
                b"later",
                1 << 20,
            )
            .await
            .expect("kept");
        let conv = a.create_conversation(None, "files").await.expect("conv");
        let ids = vec![image.id.clone(), notes.id.clone()];
        // Another user's file is not found, and nothing is written.
        let b = store.scoped(&bob);
        let bobs = b.create_conversation(None, "bob").await.expect("conv");
        assert!(
            matches!(
                b.add_user_message_with(&bobs.id, "mine?", None, &ids, 1 << 20)
                    .await,
                Err(StoreError::NotFound)
            ),
            "{engine}"
        );
        let message = a
            .add_user_message_with(&conv.id, "look", None, &ids, 1 << 20)
            .await
            .expect("message");
        a.record_sent_as(&message, &[Some(SendAs::Image), Some(SendAs::Text)])
            .await
            .expect("sent as");
        let shown = a.conversation(&conv.id, false).await.expect("get");
        let files = &shown.messages[0].versions[0].files;
        let seen: Vec<_> = files
            .iter()
            .map(|f| {
                (
                    f.id.as_str(),
                    f.name.as_str(),
                    f.kind,
                    f.size,
                    f.pixels,
                    f.sent_as,
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    image.id.as_str(),
                    "shot.png",
                    Kind::Image,
                    png.len() as u64,
                    Some((3, 2)),
                    Some(SendAs::Image)
                ),
                (
                    notes.id.as_str(),
                    "notes.md",
                    Kind::Text,
                    text.len() as u64,
                    None,
                    Some(SendAs::Text)
                ),
            ],
            "{engine}"
        );
        let branch = a
            .branch_conversation(&conv.id, &message)
            .await
            .expect("branch");
        let copied = a.conversation(&branch.id, false).await.expect("get");
        assert_eq!(&copied.messages[0].versions[0].files, files, "{engine}");
        // Both deleted and purged: the files no message keeps are gone, bytes and all.
        a.delete_conversation(&conv.id).await.expect("delete");
        store.purge_deleted(i64::MAX).await.expect("purge");
        assert!(
            a.attachment_info(&image.id).await.is_ok(),
            "{engine}: the branch keeps it"
        );
        a.delete_conversation(&branch.id).await.expect("delete");
        store.purge_deleted(i64::MAX).await.expect("purge");
        for id in [&image.id, &notes.id] {
            assert!(
                matches!(a.attachment_info(id).await, Err(StoreError::NotFound)),
                "{engine}"
            );
        }
        // An upload not sent yet (a file in someone's tray) stays a day, whatever the grace.
        assert!(a.attachment_info(&never_sent.id).await.is_ok(), "{engine}");
        assert_eq!(a.attachment_bytes().await.expect("used"), 5, "{engine}");
    }
}

#[tokio::test]
async fn uploads_at_the_same_time_all_land_and_the_quota_still_holds() {
    use ponder::domain::attachment::{sniff, Limits};
    for (engine, url) in engine_urls().await {
        let store = Store::open(&url).await.expect(engine);
        let (alice, _) = two_users(&store).await;
        let files: Vec<Vec<u8>> = (0..8)
            .map(|i| format!("file number {i}").into_bytes())
            .collect();
        let a = store.scoped(&alice);
        let each = |bytes: &Vec<u8>, limit: u64| {
            let a = &a;
            let bytes = bytes.clone();
            async move {
                let sniffed = sniff("f.txt", &bytes, &Limits::default()).expect("text");
                a.put_attachment("f.txt", &sniffed, &bytes, limit).await
            }
        };
        let all = futures::future::join_all(files.iter().map(|f| each(f, 1 << 20))).await;
        assert!(all.iter().all(Result::is_ok), "{engine}: {all:?}");
        // Three more distinct files of 14 bytes against room for two: two land, one is refused.
        let used = a.attachment_bytes().await.expect("used");
        let more: Vec<Vec<u8>> = (0..3)
            .map(|i| format!("more bytes {i:03}").into_bytes())
            .collect();
        let limit = used + 2 * more[0].len() as u64;
        let tried = futures::future::join_all(more.iter().map(|f| each(f, limit))).await;
        let refused = tried
            .iter()
            .filter(|r| matches!(r, Err(StoreError::Refused(f)) if f.code == ErrorCode::AttachmentQuota))
            .count();
        assert_eq!(
            (tried.len() - refused, refused),
            (2, 1),
            "{engine}: {tried:?}"
        );
        assert_eq!(a.attachment_bytes().await.expect("used"), limit, "{engine}");
    }
}

#[tokio::test]
async fn instruction_levels_are_each_users_own_and_an_answer_keeps_what_it_was_asked_with() {
    use ponder::domain::instructions::Level;
    use ponder::server::store::opening::{Asked, Opening};
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let me = store.scoped(&alice);
        let them = store.scoped(&bob);
        let workspace = me.default_workspace().await.expect("workspace").id;
        me.set_instructions(Level::Personal, None, Some("mine"))
            .await
            .expect("personal");
        me.set_instructions(Level::Workspace, Some(&workspace), Some("ours"))
            .await
            .expect("workspace");
        let opened = me
            .open_turn(Opening {
                conversation: None,
                workspace: None,
                title: "t",
                asked: Some(Asked {
                    content: "q",
                    edit: None,
                    attachments: &[],
                    max_bytes: u64::MAX,
                    send_as: &[],
                }),
                regenerate: None,
                model: "demo",
                settings: Default::default(),
                instructions: Some("mine\n\nours\n\nthis chat"),
                conversation_instructions: Some("this chat"),
                turn: "t1",
                replica: None,
                compared: false,
            })
            .await
            .expect("opened");
        let conversation = opened.slot.conversation_id.clone();
        let levels = me
            .instruction_levels(Some(&conversation), None)
            .await
            .expect("levels");
        assert_eq!(
            (
                levels.personal.as_deref(),
                levels.workspace.as_deref(),
                levels.conversation.as_deref()
            ),
            (Some("mine"), Some("ours"), Some("this chat")),
            "{engine}"
        );
        assert_eq!(
            me.version_instructions(&opened.slot.message_id)
                .await
                .expect("kept")
                .as_deref(),
            Some("mine\n\nours\n\nthis chat"),
            "{engine}"
        );
        let new_chat = me.instruction_levels(None, None).await.expect("new chat");
        assert_eq!(new_chat.conversation, None, "{engine}");
        assert_eq!(new_chat.workspace.as_deref(), Some("ours"), "{engine}");

        // Bob reaches none of Alice's, and his own are his.
        for result in [
            them.instruction_levels(Some(&conversation), None)
                .await
                .map(|_| ()),
            them.set_instructions(Level::Conversation, Some(&conversation), Some("x"))
                .await,
            them.set_instructions(Level::Workspace, Some(&workspace), Some("x"))
                .await,
            them.version_instructions(&opened.slot.message_id)
                .await
                .map(|_| ()),
        ] {
            assert!(
                matches!(result, Err(StoreError::NotFound)),
                "{engine}: {result:?}"
            );
        }
        assert_eq!(
            them.personal_instructions().await.expect("bob"),
            None,
            "{engine}"
        );
        assert!(matches!(
            me.set_instructions(Level::Model, None, Some("x")).await,
            Err(StoreError::Conflict(_))
        ));
        me.set_instructions(Level::Conversation, Some(&conversation), None)
            .await
            .expect("cleared");
        let read = me.conversation(&conversation, false).await.expect("read");
        assert_eq!(read.instructions, None, "{engine}");
    }
}

/// Presets on both engines: a reader's own and the shared ones, reached only as their scope
/// allows; a shared one is changed by an administrator only.
#[tokio::test]
async fn presets_keep_their_settings_and_their_owners_on_both_engines() {
    use ponder::domain::preset::Preset;
    use ponder::domain::sampling::Tunable;
    use ponder::domain::ReasoningSettings;
    for (engine, store) in stores().await {
        let (alice, bob) = two_users(&store).await;
        let settings = ReasoningSettings::reasoning(Some(false), None)
            .with_sampling(Tunable::Temperature, Some(0.35))
            .and_then(|s| s.with_sampling(Tunable::MaxTokens, Some(2048.0)))
            .expect("settings");
        let own = Preset {
            name: "Quick".into(),
            model: Some("m".into()),
            settings,
            instructions: Some("Be quick.".into()),
            ..Preset::default()
        };
        let kept = store
            .scoped(&bob)
            .save_preset(own, false)
            .await
            .expect(engine);
        assert_eq!(kept.settings, settings, "{engine}");
        assert!(kept.editable && !kept.shared, "{engine}");
        let shared = Preset {
            name: "House".into(),
            shared: true,
            ..Preset::default()
        };
        let house = store
            .scoped(&alice)
            .save_preset(shared, true)
            .await
            .expect(engine);
        let seen = store.scoped(&bob).presets(false).await.expect(engine);
        assert_eq!(
            seen.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["House", "Quick"],
            "{engine}"
        );
        let changed = Preset {
            name: "Mine".into(),
            ..house.clone()
        };
        assert!(matches!(
            store.scoped(&bob).save_preset(changed.clone(), false).await,
            Err(StoreError::NotFound)
        ));
        let changed = store
            .scoped(&alice)
            .save_preset(changed, true)
            .await
            .expect(engine);
        assert!(
            changed.shared,
            "{engine}: sharing is decided when it is made"
        );
        assert!(
            matches!(
                store.scoped(&alice).delete_preset(&kept.id, true).await,
                Err(StoreError::NotFound)
            ),
            "{engine}: an administrator does not delete a reader's own"
        );
        store
            .scoped(&alice)
            .delete_preset(&house.id, true)
            .await
            .expect(engine);
        let seen = store.scoped(&alice).presets(true).await.expect(engine);
        assert!(seen.is_empty(), "{engine}: {seen:?}");
    }
}

#[tokio::test]
async fn usage_lines_are_written_together_and_one_refused_line_costs_the_others_nothing() {
    use ponder::server::store::usage::LedgerLine;
    for (engine, store) in stores().await {
        let (alice, _) = two_users(&store).await;
        let line = |id: &str, user: &str, at_ms: i64| LedgerLine {
            id: id.into(),
            user_id: user.into(),
            workspace: None,
            conversation: None,
            version: None,
            model: "demo".into(),
            at_ms,
            spend: Default::default(),
            cost: None,
            outcome: "done".into(),
        };
        let lines = [
            line("l1", &alice.user().id, 1_000),
            line("l2", "no-such-reader", 2_000),
            line("l3", &alice.user().id, 3_000),
        ];
        let results = store.record_usages(&lines).await;
        assert_eq!(results.len(), 3, "{engine}");
        assert!(
            results[0].is_ok() && results[2].is_ok(),
            "{engine}: {results:?}"
        );
        assert!(results[1].is_err(), "{engine}: a reader who does not exist");
        // The same lines again (a turn's line retried) are written once.
        let again = store
            .record_usages(&[lines[0].clone(), lines[2].clone()])
            .await;
        assert!(again.iter().all(Result::is_ok), "{engine}: {again:?}");
        let kept = store
            .scoped(&alice)
            .usage_export(0, 10_000)
            .await
            .expect("export");
        assert_eq!(
            kept.iter().map(|r| r.at_ms).collect::<Vec<_>>(),
            vec![1_000, 3_000],
            "{engine}"
        );
    }
}
