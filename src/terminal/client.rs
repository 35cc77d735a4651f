//! The terminal's side of the API: the same endpoints and turn contract the browser uses, over
//! reqwest, named by the server functions' own paths and argument types. A turn streams as [`Progress`] on a channel; dropping the task that runs it closes
//! the connection, and the server then drops the upstream.

use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc::UnboundedSender;

use leptos::server_fn::ServerFn;

use crate::api::account::WhoAmI;
use crate::api::chat::Chat;
use crate::api::history::{GetConversation, ListConversations};
use crate::api::turn::{StopTurn, TurnEvents};
use crate::domain::account::Me;
use crate::domain::history::{Conversation, ConversationSummary, Page};
use crate::domain::{ChatRequest, ErrorCode, Failure, TurnEvent};
use crate::wire::sse::TurnDecoder;

/// What a running turn reports.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// Bytes of stream arrived (the sign of life of a turn whose reasoning is hidden).
    Bytes(u64),
    Events(Vec<TurnEvent>),
    /// The stream ended without a terminal event.
    Ended,
    /// The request failed before or while streaming.
    Failed(Failure),
}

/// A Ponder server.
#[derive(Clone, Debug)]
pub struct Server {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Server {
    pub fn new(base: &str, token: Option<String>) -> Result<Server, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| format!("the HTTP client could not start: {e}"))?;
        Ok(Server {
            base: base.trim_end_matches('/').to_string(),
            token,
            http,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// A POST to the endpoint at `path` (a server function's own [`ServerFn::PATH`]).
    fn post(&self, path: &str, body: &impl serde::Serialize) -> reqwest::RequestBuilder {
        let request = self.http.post(format!("{}{path}", self.base)).json(body);
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// True when a Ponder answers at this address within `limit`.
    pub async fn answers(&self, limit: Duration) -> bool {
        let probe = self
            .http
            .get(format!("{}/healthz", self.base))
            .timeout(limit)
            .send();
        matches!(probe.await, Ok(r) if r.status().is_success())
    }

    /// Calls the server function `F` with its arguments, as the page does.
    async fn call<F>(&self, args: F) -> Result<F::Output, String>
    where
        F: ServerFn + serde::Serialize,
        F::Output: serde::de::DeserializeOwned,
    {
        let response = self
            .post(F::PATH, &args)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| unreachable_server(&self.base, &e))?;
        if !response.status().is_success() {
            return Err(refusal(response).await.message);
        }
        response
            .json()
            .await
            .map_err(|e| format!("the server's answer could not be read ({e})"))
    }

    /// Who this client is and how the server keeps chats.
    pub async fn me(&self) -> Result<Me, String> {
        self.call(WhoAmI {}).await
    }

    /// The user's conversations, newest first.
    pub async fn conversations(&self) -> Result<Vec<ConversationSummary>, String> {
        self.call(ListConversations {
            workspace: None,
            deleted: false,
        })
        .await
    }

    /// The last `last` messages of a conversation.
    pub async fn conversation(&self, id: &str, last: usize) -> Result<Conversation, String> {
        let page = Page {
            last: Some(last),
            before: None,
        };
        self.call(GetConversation {
            id: id.to_string(),
            page,
        })
        .await
    }

    /// Stops the running turn `id` on the server (for every viewer of it).
    pub async fn stop_turn(&self, id: &str) -> Result<(), String> {
        self.call(StopTurn {
            turn: id.to_string(),
        })
        .await
    }

    /// Runs one turn, reporting on `progress` until it ends. Nothing arriving for
    /// `guard` before the first event ends the turn with the browser's no-response message.
    pub async fn stream(
        &self,
        request: &ChatRequest,
        guard: Duration,
        progress: UnboundedSender<Progress>,
    ) {
        let sent = tokio::time::timeout(guard, self.post(Chat::PATH, request).send()).await;
        let response = match sent {
            Err(_) => {
                let _ = progress.send(Progress::Failed(crate::client::turn_state::no_response(
                    guard.as_secs(),
                )));
                return;
            }
            Ok(Err(e)) => {
                let _ = progress.send(Progress::Failed(Failure::coded(
                    ErrorCode::PonderUnreachable,
                    unreachable_server(&self.base, &e),
                    true,
                )));
                return;
            }
            Ok(Ok(r)) => r,
        };
        read_turn(response, guard, progress).await;
    }

    /// Joins the running turn `turn` (a stored conversation opened while its answer streams):
    /// its events from the first, then live, reported on `progress` until it ends.
    pub async fn join(&self, turn: &str, guard: Duration, progress: UnboundedSender<Progress>) {
        let mut request = self
            .http
            .get(format!("{}{}", self.base, TurnEvents::PATH))
            .query(&[("turn", turn)]);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        match tokio::time::timeout(guard, request.send()).await {
            Ok(Ok(response)) => read_turn(response, guard, progress).await,
            Ok(Err(e)) => {
                let _ = progress.send(Progress::Failed(Failure::coded(
                    ErrorCode::PonderUnreachable,
                    unreachable_server(&self.base, &e),
                    true,
                )));
            }
            Err(_) => {
                let _ = progress.send(Progress::Failed(crate::client::turn_state::no_response(
                    guard.as_secs(),
                )));
            }
        }
    }
}

/// Reads a turn's response to its end (or `guard` without a first event), reporting on
/// `progress`.
async fn read_turn(
    response: reqwest::Response,
    guard: Duration,
    progress: UnboundedSender<Progress>,
) {
    if !response.status().is_success() {
        let _ = progress.send(Progress::Failed(refusal(response).await));
        return;
    }
    let mut body = response.bytes_stream();
    let mut decoder = TurnDecoder::new();
    let mut events = Vec::new();
    let mut saw_event = false;
    loop {
        let next = if saw_event {
            body.next().await
        } else {
            match tokio::time::timeout(guard, body.next()).await {
                Ok(next) => next,
                Err(_) => {
                    let _ = progress.send(Progress::Failed(
                        crate::client::turn_state::no_response(guard.as_secs()),
                    ));
                    return;
                }
            }
        };
        match next {
            Some(Ok(chunk)) => {
                let _ = progress.send(Progress::Bytes(chunk.len() as u64));
                decoder.push(&chunk, &mut events);
                saw_event |= !events.is_empty();
                let terminal = events.iter().any(TurnEvent::is_terminal);
                if !events.is_empty() {
                    let _ = progress.send(Progress::Events(std::mem::take(&mut events)));
                }
                if terminal {
                    return;
                }
            }
            Some(Err(_)) | None => break,
        }
    }
    decoder.finish(&mut events);
    if !events.is_empty() {
        let terminal = events.iter().any(TurnEvent::is_terminal);
        let _ = progress.send(Progress::Events(events));
        if terminal {
            return;
        }
    }
    let _ = progress.send(Progress::Ended);
}

fn unreachable_server(base: &str, e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!("Ponder at {base} did not answer in time")
    } else if e.is_connect() {
        format!("Ponder at {base} could not be reached (is it running?)")
    } else {
        format!("the connection to Ponder at {base} failed")
    }
}

/// A refused request's reason: the API's error body (`{"message": …, "retryable": …}`), else
/// its status.
async fn refusal(response: reqwest::Response) -> Failure {
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    match serde_json::from_str::<TurnEvent>(&body) {
        Ok(TurnEvent::Error(failure)) => failure,
        _ => Failure::new(
            format!("the server refused the request (HTTP {})", status.as_u16()),
            status.is_server_error() || status.as_u16() == 429,
        ),
    }
}
