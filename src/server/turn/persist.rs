//! A turn written to the history as it streams: what the reader was sent (after redaction) is
//! folded into an answer record by a pure [`AnswerBuilder`]; its latest state goes to the
//! server's [`StreamingBatch`] at most once a second, and a writer task of the turn saves the
//! final state at the end through the server's [`FinalBatch`], with the others that end then. A closed tab or a
//! crashed browser loses nothing that arrived; a turn cut by the server is saved interrupted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::domain::answer::{Answer, Body};
use crate::domain::attachment::SendAs;
use crate::domain::history::VersionStatus;
use crate::domain::{Failure, TurnEvent};
use crate::i18n::errors::Said;
use crate::server::store::finals::FinalState;
use crate::server::store::identity::Identity;
use crate::server::store::records::{AnswerRecord, AnswerSlot, BlockRecord};
use crate::server::store::replay::{KeptState, Provenance};
use crate::server::store::{now_ms, Store};

use super::batch::{FinalBatch, StreamingBatch, FLUSH_EVERY};

/// Folds the events of a turn into the record that is stored. Pure.
#[derive(Clone, Debug)]
pub struct AnswerBuilder {
    record: AnswerRecord,
}

impl Default for AnswerBuilder {
    fn default() -> Self {
        AnswerBuilder {
            record: AnswerRecord {
                content: String::new(),
                blocks: Vec::new(),
                extras: Default::default(),
                status: VersionStatus::Streaming,
                error: None,
                finish_reason: None,
                input_tokens: None,
                output_tokens: None,
                reasoning_tokens: None,
            },
        }
    }
}

impl AnswerBuilder {
    fn answer(&mut self) -> Answer<'_, BlockRecord> {
        Answer {
            blocks: &mut self.record.blocks,
            body: Body {
                text: &mut self.record.content,
                tools: &mut self.record.extras.tools,
                sources: &mut self.record.extras.sources,
            },
        }
    }

    /// Takes one event as the reader got it, at `now` (ms since the epoch).
    pub fn apply(&mut self, event: &TurnEvent, now: i64) {
        if self.answer().apply(event, now as f64, None) {
            return;
        }
        match event {
            TurnEvent::Done {
                finish_reason,
                usage,
                ..
            } => {
                let stopped = event.is_stop();
                if stopped {
                    self.interrupt_open_blocks();
                }
                self.record.status = if stopped {
                    VersionStatus::Stopped
                } else if self.record.content.trim().is_empty() {
                    VersionStatus::NoAnswer
                } else {
                    VersionStatus::Done
                };
                self.record.finish_reason = Some(finish_reason.clone());
                if let Some(u) = usage {
                    self.record.input_tokens = u.input_tokens;
                    self.record.output_tokens = u.output_tokens;
                    self.record.reasoning_tokens = u.reasoning_tokens;
                    self.record.extras.file_tokens = u.file_tokens;
                    self.record.extras.cached_input_tokens = u.cached_input_tokens;
                    self.record.extras.estimated = u.estimated;
                    self.record.extras.cost = u.cost.clone();
                }
            }
            TurnEvent::Error(failure) => {
                self.record.status = VersionStatus::Error;
                self.record.error = Some(failure.clone());
                self.interrupt_open_blocks();
            }
            _ => {}
        }
    }

    /// The turn ended without its terminal event (the reader left, the server stopped it).
    pub fn interrupt(&mut self) {
        if self.record.status == VersionStatus::Streaming {
            self.record.status = VersionStatus::Interrupted;
            self.interrupt_open_blocks();
        }
    }

    fn interrupt_open_blocks(&mut self) {
        self.answer().interrupt(0.0);
    }

    pub fn is_final(&self) -> bool {
        self.record.status != VersionStatus::Streaming
    }

    pub fn record(&self) -> &AnswerRecord {
        &self.record
    }
}

/// Where a stored turn keeps the reasoning state its answer comes with: who produces it, and
/// the most one conversation keeps.
#[derive(Clone, Debug)]
pub struct StateKeeping {
    pub provenance: Provenance,
    pub max_bytes: usize,
}

/// What the turn's writer is handed: the answer's final state, and the reasoning state to keep
/// beside it (only a final state is handed over; streaming ones go to the batch).
type Pending = Option<(AnswerRecord, Option<Arc<KeptState>>)>;

/// What a reasoning block looked like when its state was last handed over: a block that has
/// not changed since is not written again.
#[derive(Clone, Copy, Debug, PartialEq)]
struct BlockMark {
    len: usize,
    ended: bool,
    interrupted: bool,
    cut_short: bool,
    kind: crate::domain::ThinkingKind,
}

impl BlockMark {
    fn of(block: &BlockRecord) -> Self {
        BlockMark {
            len: block.text.len(),
            ended: block.duration_ms.is_some(),
            interrupted: block.interrupted,
            cut_short: block.cut_short,
            kind: block.kind,
        }
    }
}

/// The writing side of one stored turn, held by the turn.
pub struct Persist {
    builder: AnswerBuilder,
    store: Store,
    who: Arc<Identity>,
    batch: Arc<StreamingBatch>,
    handed: Vec<BlockMark>,
    slot: AnswerSlot,
    keeping: Option<StateKeeping>,
    state: Option<Arc<KeptState>>,
    latest: watch::Sender<Pending>,
    last_sent: Instant,
    dirty: bool,
    failed: Arc<AtomicBool>,
    /// Set by the writer once the final state is written (or could not be).
    written: watch::Receiver<bool>,
}

/// How long the final state of an answer is retried after the database refused it.
const FINAL_RETRY_FOR: Duration = Duration::from_secs(600);

/// Retries the final state of an answer until the database takes it (a lock that lifts, a
/// database that comes back), so no answer stays marked as streaming once its turn is over.
async fn keep_trying(store: &Store, who: &Identity, slot: &AnswerSlot, record: &AnswerRecord) {
    let until = Instant::now() + FINAL_RETRY_FOR;
    let mut wait = Duration::from_millis(500);
    while Instant::now() < until {
        tokio::time::sleep(wait).await;
        match store.scoped(who).save_answer(slot, record).await {
            Ok(()) => {
                tracing::info!("the final state of an answer was saved on a later attempt");
                return;
            }
            Err(e) if e.is_final() => {
                tracing::warn!(error = %e, "the answer was ended elsewhere while its final state waited; that one stands");
                return;
            }
            Err(e) => tracing::debug!(error = %e, "the final state of an answer is still refused"),
        }
        wait = (wait * 2).min(Duration::from_secs(10));
    }
    tracing::error!("the final state of an answer could not be saved; it reads as streaming");
}

/// How long the terminal event waits for the final state to be written.
const FINAL_WRITE_WAIT: Duration = Duration::from_secs(5);

impl Persist {
    /// Starts the writer task of a turn whose answer goes to `slot` (and its reasoning state
    /// as `keeping` says, if at all); its streaming states go to `batch`.
    pub fn start(
        store: Store,
        who: Arc<Identity>,
        slot: AnswerSlot,
        keeping: Option<StateKeeping>,
        batch: Arc<StreamingBatch>,
        finals: Arc<FinalBatch>,
        title: Option<crate::server::titles::TitleJob>,
    ) -> Persist {
        let max_state = keeping.as_ref().map_or(0, |k| k.max_bytes);
        let (latest, mut rx) = watch::channel::<Pending>(None);
        let (written_tx, written) = watch::channel(false);
        let failed = Arc::new(AtomicBool::new(false));
        let writer_failed = failed.clone();
        let writer_slot = slot.clone();
        let writer_store = store.clone();
        let writer_who = who.clone();
        tokio::spawn(async move {
            let (store, who) = (writer_store, writer_who);
            let (record, state) = loop {
                let changed = rx.changed().await;
                if let Some(last) = rx.borrow_and_update().clone() {
                    if last.0.status != VersionStatus::Streaming {
                        break last;
                    }
                }
                if changed.is_err() {
                    return;
                }
            };
            let ending = FinalState {
                who: who.clone(),
                slot: writer_slot.clone(),
                answer: record.clone(),
                kept: state.map(|s| (s, max_state)),
            };
            let saved = finals.save(&store, ending).await;
            if let Err(e) = &saved {
                tracing::error!(error = %e, "an answer's final state could not be saved");
                writer_failed.store(true, Ordering::Relaxed);
            }
            written_tx.send_replace(true);
            if let (Ok(()), Some(job)) = (&saved, title) {
                if record.status == VersionStatus::Done && !record.content.trim().is_empty() {
                    job.start(record.content.clone());
                }
            }
            if matches!(saved, Err(ref e) if !e.is_final()) {
                keep_trying(&store, &who, &writer_slot, &record).await;
            }
        });
        Persist {
            builder: AnswerBuilder::default(),
            store,
            who,
            batch,
            handed: Vec::new(),
            slot,
            keeping,
            state: None,
            latest,
            last_sent: Instant::now(),
            dirty: false,
            failed,
            written,
        }
    }

    /// Waits (bounded) until the final state is written, so that a client acting on the
    /// terminal event reads what it saw. False when it was not taken in time (the database is
    /// down or out of reach): the turn must not then tell its viewers it is done.
    pub async fn final_written(&mut self) -> bool {
        let written = tokio::time::timeout(FINAL_WRITE_WAIT, self.written.wait_for(|done| *done))
            .await
            .is_ok();
        written && !self.has_failed()
    }

    /// The reasoning state the answer came with, to keep with its final state (when this turn
    /// keeps any).
    pub fn keep_state(&mut self, items: Vec<serde_json::Value>) {
        if let Some(keeping) = &self.keeping {
            self.state = Some(Arc::new(KeptState {
                provenance: keeping.provenance.clone(),
                items,
            }));
        }
    }

    /// Takes the events the reader was just sent; writes if a second has passed or the turn
    /// ended.
    pub fn note(&mut self, events: &[TurnEvent]) {
        if events.is_empty() {
            return;
        }
        let now = now_ms();
        for e in events {
            self.builder.apply(e, now);
        }
        self.dirty = true;
        if self.builder.is_final() || self.last_sent.elapsed() >= FLUSH_EVERY {
            self.flush();
        }
    }

    /// Writes a pending state now, if there is one (a keep-alive tick calls it too, so a
    /// turn that went quiet is not a second behind).
    pub fn flush(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.last_sent = Instant::now();
        if self.builder.is_final() {
            self.batch.forget(&self.slot.version_id);
            let state = self.state.take();
            let _ = self
                .latest
                .send(Some((self.builder.record().clone(), state)));
            return;
        }
        let record = self.builder.record();
        let mut changed = Vec::new();
        for (at, block) in record.blocks.iter().enumerate() {
            let mark = BlockMark::of(block);
            if self.handed.get(at) != Some(&mark) {
                changed.push((at, block.clone()));
                match self.handed.get_mut(at) {
                    Some(old) => *old = mark,
                    None => self.handed.push(mark),
                }
            }
        }
        let state = self.store.scoped(&self.who).streaming_state(
            &self.slot,
            record.content.clone(),
            record.extras.with_error(None).write(),
            changed,
        );
        self.batch.put(&self.store, state, self.failed.clone());
    }

    /// True once a write failed: the turn should tell the reader it is not being saved.
    /// Where the answer is written.
    pub fn slot(&self) -> &AnswerSlot {
        &self.slot
    }

    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }
}

impl Drop for Persist {
    fn drop(&mut self) {
        if !self.builder.is_final() {
            self.builder.interrupt();
            self.dirty = true;
        }
        self.flush();
    }
}

/// Opens a stored turn (`turn`: its id, kept on the answer for viewers that join it): checks
/// the conversation is the caller's (or makes a new one), stores the
/// reader's message (or opens a new version of the answer to regenerate), and returns the
/// history to send upstream built from the store, the first event (where the turn is stored)
/// and the writer.
pub async fn begin(
    state: &crate::server::state::AppState,
    who: Arc<Identity>,
    request: &crate::domain::ChatRequest,
    turn: &str,
    replica: Option<&str>,
) -> Result<
    (
        Vec<crate::domain::ChatMessage>,
        crate::server::providers::TurnOptions,
        TurnEvent,
        Persist,
    ),
    Failure,
> {
    use crate::domain::ErrorCode;
    use crate::server::config::HistoryMode;
    use crate::server::http::request::store_error;
    if state.config.history == HistoryMode::Browser {
        return Err(Failure::of(ErrorCode::NoServerHistory, false).said());
    }
    let store = &state.store;
    let me = store.scoped(&who);
    let made_here = request.conversation.is_none();
    let remembered = match &request.conversation {
        Some(id) => Some(me.conversation_model(id).await.map_err(store_error)?),
        None => None,
    };
    let asked_nothing = request.model.is_none() && request.settings().is_default();

    let settings = match &remembered {
        Some((_, kept)) if asked_nothing => *kept,
        _ => request.settings(),
    };
    let remembered_model = remembered.as_ref().and_then(|(m, _)| m.as_deref());
    state.models.first_fetch().await;
    let mut options = state.models.resolve(
        &state.config,
        request.model.as_deref(),
        remembered_model,
        settings,
    )?;
    let asked_for = request
        .instructions
        .as_deref()
        .and_then(|t| crate::domain::instructions::checked(t).ok().flatten());
    let reused = match &request.regenerate {
        Some(message) => me
            .version_instructions(message)
            .await
            .map_err(store_error)?,
        None => None,
    };
    let mut workspace = request.workspace.clone();
    options.instructions = match reused {
        Some(kept) => Some(kept).filter(|k| !k.is_empty()),
        None => {
            let levels = me
                .instruction_levels(
                    request.conversation.as_deref(),
                    request.workspace.as_deref(),
                )
                .await
                .map_err(store_error)?;
            if request.conversation.is_none() {
                workspace = levels.workspace_id;
            }
            crate::server::instructions::combined(
                &state.config,
                &options.model,
                levels.personal,
                levels.workspace,
                levels.conversation.or(asked_for.clone()),
            )
        }
    };
    let keeping = state.config.replay.enabled.then(|| StateKeeping {
        provenance: super::replay::provenance(&state.config, &state.upstream_base, &options.model),
        max_bytes: state.config.replay.max_conversation_bytes,
    });
    let mut title = String::new();
    if request.conversation.is_none() {
        title = request.content.clone().unwrap_or_default();
        if let (true, Some(first)) = (title.trim().is_empty(), request.attachments.first()) {
            if let Ok(file) = me.attachment_info(first).await {
                title = file.name;
            }
        }
    }
    let send_as: Vec<Option<SendAs>> = request
        .attachments
        .iter()
        .map(|a| request.send_as.get(a).copied())
        .collect();
    let opening = crate::server::store::opening::Opening {
        conversation: request.conversation.as_deref(),
        workspace: workspace.as_deref(),
        title: &title,
        asked: request
            .content
            .as_deref()
            .map(|content| crate::server::store::opening::Asked {
                content,
                edit: request.edit.as_deref(),
                attachments: &request.attachments,
                max_bytes: state.config.attachments.message_bytes,
                send_as: &send_as,
            }),
        regenerate: request.regenerate.as_deref(),
        model: &options.model,
        settings: options.settings,
        instructions: options.instructions.as_deref(),
        conversation_instructions: asked_for.as_deref(),
        turn,
        replica,
        compared: request.compare,
    };
    let opened = me.open_turn(opening).await.map_err(store_error)?;
    let conversation = opened.slot.conversation_id.clone();
    let mut added: Vec<String> = Vec::new();
    if let (Some(id), None) = (&opened.user_message, &request.edit) {
        added.push(id.clone());
    }
    if request.regenerate.is_none() {
        added.push(opened.slot.message_id.clone());
    }
    let prepared = async {
        let (user_message, slot) = (opened.user_message, opened.slot);
        let replay = keeping
            .as_ref()
            .map(|k| &k.provenance)
            .filter(|_| request.replay != Some(false));
        // A chat this turn starts holds only the question: nothing to read back but its files.
        let mut history = match (
            &request.content,
            made_here && request.attachments.is_empty(),
        ) {
            (Some(question), true) => {
                crate::domain::message::history([crate::domain::message::Said::User(
                    question,
                    &[],
                    &[],
                )])
            }
            _ => {
                me.history_before(&conversation, &slot.message_id, replay)
                    .await?
            }
        };
        super::files::prepare(state, &options.model, &mut history)
            .await
            .map_err(|f| crate::server::store::StoreError::Refused(f.said()))?;
        let sent_as: Vec<SendAs> = match (&user_message, history.last()) {
            (Some(message), Some(asked)) if !asked.files.is_empty() => {
                let sent: Vec<SendAs> = asked.files.iter().map(|f| f.how).collect();
                let kept: Vec<Option<SendAs>> = sent.iter().copied().map(Some).collect();
                me.record_sent_as(message, &kept).await?;
                sent
            }
            _ => Vec::new(),
        };
        Ok::<_, crate::server::store::StoreError>((user_message, slot, history, sent_as))
    }
    .await;
    let (user_message, slot, history, sent_as) = match prepared {
        Ok(prepared) => prepared,
        Err(e) => {
            let undone = if made_here {
                me.discard_conversation(&conversation).await
            } else {
                let ids: Vec<&str> = added.iter().map(String::as_str).collect();
                me.discard_messages(&conversation, &ids).await
            };
            if let Err(cleanup) = undone {
                tracing::warn!(error = %cleanup, "a refused turn's first writes could not be removed");
            }
            if let Err(cleanup) = store.end_running_turn(turn).await {
                tracing::warn!(error = %cleanup, "a refused turn could not be struck off the running ones");
            }
            return Err(store_error(e));
        }
    };
    let title = match (&request.content, made_here && state.config.titles) {
        (Some(question), true) => Some(crate::server::titles::TitleJob {
            config: state.config.clone(),
            http: state.http.clone(),
            base: state.upstream_base.clone(),
            store: store.clone(),
            who: who.clone(),
            board: state.titles.clone(),
            conversation: slot.conversation_id.clone(),
            question: question.clone(),
            model: options.model.clone(),
            controls: options.controls,
        }),
        _ => None,
    };
    let first = TurnEvent::Turn {
        conversation: slot.conversation_id.clone(),
        user_message,
        message: slot.message_id.clone(),
        version: slot.version,
        sent_as,
    };
    Ok((
        history,
        options,
        first,
        Persist::start(
            store.clone(),
            who,
            slot,
            keeping,
            state.streaming.clone(),
            state.finals.clone(),
            title,
        ),
    ))
}

/// The error a turn ends with when its answer cannot be saved.
pub fn not_saved() -> Failure {
    Failure::of(crate::domain::ErrorCode::NotSaved, true).said()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{ThinkingKind, Usage};

    fn build(events: &[TurnEvent]) -> AnswerBuilder {
        let mut b = AnswerBuilder::default();
        for (i, e) in events.iter().enumerate() {
            b.apply(e, 1000 + i as i64);
        }
        b
    }

    #[test]
    fn tools_sources_and_citation_markers_are_stored_as_shown() {
        let b = build(&[
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(5),
                cut_short: false,
            },
            TurnEvent::ToolStart {
                tool: 0,
                name: "web_search".into(),
                input: "rust".into(),
            },
            TurnEvent::ToolEnd {
                tool: 0,
                status: crate::domain::ToolStatus::Finished,
                output: "1 result".into(),
            },
            TurnEvent::ToolStart {
                tool: 1,
                name: "code_execution".into(),
                input: "1+1".into(),
            },
            TurnEvent::Source {
                n: 1,
                url: "https://rust-lang.org/".into(),
                title: None,
            },
            TurnEvent::Delta {
                text: "Fast.".into(),
            },
            TurnEvent::Cite { n: 1 },
            TurnEvent::Cite { n: 7 },
            TurnEvent::error("cut", true),
        ]);
        let r = b.record();
        assert_eq!(
            r.content, "Fast.[^1]",
            "no marker for a source never announced"
        );
        assert_eq!(r.extras.tools.len(), 2);
        assert_eq!(r.extras.tools[0].after_blocks, 1);
        assert_eq!(
            r.extras.tools[0].status,
            crate::domain::ToolStatus::Finished
        );
        assert_eq!(
            r.extras.tools[1].status,
            crate::domain::ToolStatus::Failed,
            "cut by the error"
        );
        assert_eq!(r.extras.sources.len(), 1);
    }

    #[test]
    fn the_record_holds_what_the_reader_saw() {
        let b = build(&[
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Summary,
                at_ms: None,
            },
            TurnEvent::Thinking {
                block: 0,
                text: "Plan".into(),
            },
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(40),
                cut_short: false,
            },
            TurnEvent::Delta { text: "Ans".into() },
            TurnEvent::Delta { text: "wer".into() },
            TurnEvent::Done {
                finish_reason: "stop".into(),
                usage: Some(Usage {
                    input_tokens: Some(3),
                    output_tokens: Some(5),
                    reasoning_tokens: None,
                    file_tokens: None,
                    ..Default::default()
                }),
                thinking_chars: 4,
                total_ms: 9,
            },
        ]);
        let r = b.record();
        assert_eq!(r.content, "Answer");
        assert_eq!(r.status, VersionStatus::Done);
        assert_eq!(r.blocks.len(), 1);
        assert_eq!(r.blocks[0].kind, ThinkingKind::Summary);
        assert_eq!(r.blocks[0].text, "Plan");
        assert_eq!(r.blocks[0].duration_ms, Some(40));
        assert_eq!((r.input_tokens, r.output_tokens), (Some(3), Some(5)));
        assert!(b.is_final());
    }

    #[test]
    fn thinking_with_no_answer_is_no_answer_and_a_cut_turn_is_interrupted() {
        let b = build(&[
            TurnEvent::Thinking {
                block: 0,
                text: "hm".into(),
            },
            TurnEvent::Done {
                finish_reason: "length".into(),
                usage: None,
                thinking_chars: 2,
                total_ms: 1,
            },
        ]);
        assert_eq!(b.record().status, VersionStatus::NoAnswer);
        let mut cut = build(&[TurnEvent::Thinking {
            block: 0,
            text: "half".into(),
        }]);
        assert!(!cut.is_final());
        cut.interrupt();
        assert_eq!(cut.record().status, VersionStatus::Interrupted);
        assert!(cut.record().blocks[0].interrupted);
    }

    #[test]
    fn a_stopped_turn_is_stored_stopped_with_its_open_block_interrupted() {
        let b = build(&[
            TurnEvent::Started { turn: "t".into() },
            TurnEvent::Clock { turn_ms: 3 },
            TurnEvent::Thinking {
                block: 0,
                text: "half".into(),
            },
            TurnEvent::Done {
                finish_reason: crate::domain::FinishReason::Stopped,
                usage: None,
                thinking_chars: 4,
                total_ms: 10,
            },
        ]);
        assert_eq!(b.record().status, VersionStatus::Stopped);
        assert!(b.record().blocks[0].interrupted);
        assert_eq!(b.record().blocks[0].text, "half");
        assert!(b.is_final());
    }

    #[test]
    fn a_reclassify_moves_the_answer_into_the_block_and_an_error_keeps_what_arrived() {
        let b = build(&[
            TurnEvent::Delta {
                text: "thinking out loud".into(),
            },
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Raw,
                at_ms: None,
            },
            TurnEvent::Reclassify { block: 0 },
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(5),
                cut_short: false,
            },
            TurnEvent::Delta { text: "ok".into() },
            TurnEvent::error("boom", true),
        ]);
        let r = b.record();
        assert_eq!(r.blocks[0].text, "thinking out loud");
        assert_eq!(r.content, "ok");
        assert_eq!(r.status, VersionStatus::Error);
        assert_eq!(r.error.as_ref().map(|e| e.message.as_str()), Some("boom"));
        assert!(!r.blocks[0].interrupted, "a finished block stays finished");
    }
}
