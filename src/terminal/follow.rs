//! Following one turn from the terminal, by the page's rules ([`crate::client::turn_stream`]):
//! its stream is read and decoded, and when a turn the server keeps loses its connection
//! (a reset, a restart behind a proxy, a proxy's timeout) the client joins it again through
//! `turn/events`, asking for what follows the last event it has, with the page's backoff and
//! give-up ([`crate::client::decisions::reconnect`]). Nothing is missed or doubled: a frame cut
//! off by the break is dropped, and comes again.

use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::client::{refusal, unreachable_server, Server};
use crate::client::decisions;
use crate::client::turn_state::{no_response, TurnState};
use crate::domain::{ChatRequest, ErrorCode, Failure, TurnEvent};
use crate::wire::sse::TurnDecoder;

/// What a followed turn reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// Bytes of stream arrived (the sign of life of a turn whose reasoning is hidden).
    Bytes(u64),
    Events(Vec<TurnEvent>),
    /// The connection broke mid-turn and the client is joining the turn again.
    Lost,
    /// A connection answered again after [`Progress::Lost`].
    Back,
    /// The turn to join is over and no longer kept: the stored conversation holds all of it.
    Gone,
    /// The stream ended without a terminal event, and the turn cannot be joined again.
    Ended,
    /// The request failed before or while streaming.
    Failed(Failure),
}

/// Where a turn's events come from: the request that starts it, or a turn already running.
#[derive(Clone, Debug)]
pub enum Source {
    /// Boxed: a request is far larger than a turn's id.
    Send(Box<ChatRequest>),
    Join(String),
}

/// Follows `source` in a task of its own (`ponder ask`, each model of `ponder ask --models`):
/// the task (abort it to stop following) and where its progress arrives.
pub fn spawn(
    server: &Server,
    source: Source,
    guard: Duration,
) -> (tokio::task::JoinHandle<()>, UnboundedReceiver<Progress>) {
    let (tx, progress) = mpsc::unbounded_channel();
    let server = server.clone();
    let task = tokio::spawn(async move { follow(&server, source, guard, tx).await });
    (task, progress)
}

/// What one piece of progress means to a turn folded in `state` at client time `now`.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Events to show and fold.
    Events(Vec<TurnEvent>),
    /// Nothing to show: a sign of life, a reconnection.
    Wait,
    /// The stream is over; `state` says how it ended.
    End,
}

/// Reads `p` for a turn folded in `state`: an end without a terminal event, or a failure, ends
/// `state` there.
pub fn next(p: Progress, state: &mut TurnState, now: f64) -> Next {
    match p {
        Progress::Bytes(_) | Progress::Lost | Progress::Back => Next::Wait,
        Progress::Events(events) => Next::Events(events),
        Progress::Ended | Progress::Gone => {
            state.end_of_stream(now);
            Next::End
        }
        Progress::Failed(failure) => {
            state.fail(failure, now);
            Next::End
        }
    }
}

/// Follows the turn from `source` until it ends, reporting on `progress`. Nothing but clocks
/// arriving for `guard` ends it with the page's no-response message (and stops it on the
/// server, where it would otherwise run on unwatched).
pub async fn follow(
    server: &Server,
    source: Source,
    guard: Duration,
    progress: UnboundedSender<Progress>,
) {
    let report = |p: Progress| {
        let _ = progress.send(p);
    };
    let deadline = tokio::time::Instant::now() + guard;
    let (stored, mut turn, mut request) = match source {
        Source::Send(request) => (request.is_stored(), None, Some(request)),
        Source::Join(id) => (true, Some(id), None),
    };
    let mut last_id: Option<u64> = None;
    let mut saw_frame = false;
    let mut attempt = 0u32;
    let mut lost = false;
    loop {
        let call = match (request.take(), &turn) {
            (Some(request), _) => server.chat(&request),
            (None, Some(id)) => server.turn_events(id, last_id),
            (None, None) => return report(Progress::Ended),
        }
        .send();
        let answered = if saw_frame {
            Ok(call.await)
        } else {
            tokio::time::timeout_at(deadline, call).await
        };
        let failure = match answered {
            Err(_) => return report(Progress::Failed(no_response(guard.as_secs()))),
            Ok(Err(e)) => unreachable_failure(server, &e),
            Ok(Ok(response)) if response.status().is_success() => {
                if std::mem::take(&mut lost) {
                    report(Progress::Back);
                }
                let mut read = Reading {
                    turn: &mut turn,
                    last_id: &mut last_id,
                    saw_frame: &mut saw_frame,
                    attempt: &mut attempt,
                };
                match read.through(response, deadline, &progress).await {
                    Read::Terminal => return,
                    Read::Silent => {
                        report(Progress::Failed(no_response(guard.as_secs())));
                        if let Some(id) = turn.filter(|_| stored) {
                            if let Err(e) = server.stop_turn(&id).await {
                                tracing::debug!(error = %e, "the silent turn could not be stopped");
                            }
                        }
                        return;
                    }
                    Read::Broke(rest) => {
                        match decisions::reconnect(stored, turn.as_deref(), &mut attempt) {
                            Some(delay) => {
                                lost = true;
                                report(Progress::Lost);
                                tokio::time::sleep(delay).await;
                                continue;
                            }
                            None => {
                                let terminal = rest.iter().any(TurnEvent::is_terminal);
                                if !rest.is_empty() {
                                    report(Progress::Events(rest));
                                }
                                if !terminal {
                                    report(Progress::Ended);
                                }
                                return;
                            }
                        }
                    }
                }
            }
            Ok(Ok(response)) => {
                let failure = refusal(response).await;
                if turn.is_some() && failure.code == ErrorCode::TurnNotFound {
                    return report(Progress::Gone);
                }
                failure
            }
        };
        match decisions::reconnect(stored, turn.as_deref(), &mut attempt) {
            Some(delay) => {
                if !lost {
                    lost = true;
                    report(Progress::Lost);
                }
                tokio::time::sleep(delay).await;
            }
            None => return report(Progress::Failed(failure)),
        }
    }
}

fn unreachable_failure(server: &Server, e: &reqwest::Error) -> Failure {
    Failure::coded(
        ErrorCode::PonderUnreachable,
        unreachable_server(server.base(), e),
        true,
    )
}

/// How reading one response ended.
enum Read {
    /// The turn's last event arrived.
    Terminal,
    /// Nothing but clocks within the guard.
    Silent,
    /// The connection broke or closed first; what a final flush of the decoder gives, for a
    /// turn that is not joined again.
    Broke(Vec<TurnEvent>),
}

/// What one connection's reading updates of the turn being followed.
struct Reading<'a> {
    turn: &'a mut Option<String>,
    last_id: &'a mut Option<u64>,
    saw_frame: &'a mut bool,
    attempt: &'a mut u32,
}

impl Reading<'_> {
    async fn through(
        &mut self,
        response: reqwest::Response,
        deadline: tokio::time::Instant,
        progress: &UnboundedSender<Progress>,
    ) -> Read {
        let report = |p: Progress| {
            let _ = progress.send(p);
        };
        let mut body = response.bytes_stream();
        let mut decoder = TurnDecoder::new();
        let mut events = Vec::new();
        loop {
            let next = if *self.saw_frame {
                body.next().await
            } else {
                match tokio::time::timeout_at(deadline, body.next()).await {
                    Ok(next) => next,
                    Err(_) => return Read::Silent,
                }
            };
            let Some(Ok(chunk)) = next else {
                break;
            };
            report(Progress::Bytes(chunk.len() as u64));
            decoder.push(&chunk, &mut events);
            if decoder.last_id() > *self.last_id {
                // Something new arrived: the reconnection budget starts again.
                *self.last_id = decoder.last_id();
                *self.attempt = 0;
            }
            for e in &events {
                if let TurnEvent::Started { turn } = e {
                    *self.turn = Some(turn.clone());
                }
            }
            *self.saw_frame |= events.iter().any(|e| !matches!(e, TurnEvent::Clock { .. }));
            let terminal = events.iter().any(TurnEvent::is_terminal);
            if !events.is_empty() {
                report(Progress::Events(std::mem::take(&mut events)));
            }
            if terminal {
                return Read::Terminal;
            }
        }
        decoder.finish(&mut events);
        Read::Broke(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_ends_a_turn_only_when_its_stream_ends_or_fails() {
        let mut state = TurnState::started(0.0);
        assert_eq!(next(Progress::Bytes(10), &mut state, 1.0), Next::Wait);
        assert_eq!(next(Progress::Lost, &mut state, 1.0), Next::Wait);
        assert_eq!(
            next(
                Progress::Events(vec![TurnEvent::Delta { text: "a".into() }]),
                &mut state,
                1.0
            ),
            Next::Events(vec![TurnEvent::Delta { text: "a".into() }])
        );
        assert!(state.phase.is_running());
        assert_eq!(next(Progress::Ended, &mut state, 2.0), Next::End);
        assert!(!state.phase.is_running());
        let mut failed = TurnState::started(0.0);
        let failure = Failure::coded(ErrorCode::StreamDropped, "gone", true);
        assert_eq!(
            next(Progress::Failed(failure.clone()), &mut failed, 2.0),
            Next::End
        );
        assert_eq!(failed.error, Some(failure));
    }
}
