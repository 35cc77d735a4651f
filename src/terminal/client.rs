//! The terminal's side of the API: the same endpoints and turn contract the browser uses, over
//! reqwest, named by the server functions' own paths and argument types. Following a turn's
//! stream is [`super::follow`]'s.

use super::error::ClientError;
use std::time::Duration;

use leptos::server_fn::ServerFn;

use crate::api::account::WhoAmI;
use crate::api::chat::Chat;
use crate::api::history::{GetConversation, ListConversations};
use crate::api::share::{CreateShare, ListShares, RevokeShare};
use crate::api::turn::{StopTurn, TurnEvents};
use crate::domain::account::Me;
use crate::domain::history::{Conversation, ConversationSummary, Page};
use crate::domain::{ChatRequest, Failure, TurnEvent};

/// A Ponder server.
#[derive(Clone, Debug)]
pub struct Server {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Server {
    pub fn new(base: &str, token: Option<String>) -> Result<Server, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| ClientError::Terminal(format!("the HTTP client could not start: {e}")))?;
        Ok(Server {
            base: base.trim_end_matches('/').to_string(),
            token,
            http,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub(super) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub(super) fn token(&self) -> Option<&str> {
        self.token.as_deref()
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
    async fn call<F>(&self, args: F) -> Result<F::Output, ClientError>
    where
        F: ServerFn + serde::Serialize,
        F::Output: serde::de::DeserializeOwned,
    {
        let response = self
            .post(F::PATH, &args)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| ClientError::Unreachable(unreachable_server(&self.base, &e)))?;
        if !response.status().is_success() {
            return Err(ClientError::Refused(refusal(response).await));
        }
        response.json().await.map_err(|e| {
            ClientError::Unreadable(format!("the server's answer could not be read ({e})"))
        })
    }

    /// Who this client is and how the server keeps chats.
    pub async fn me(&self) -> Result<Me, ClientError> {
        self.call(WhoAmI {}).await
    }

    /// The user's conversations, newest first.
    pub async fn conversations(&self) -> Result<Vec<ConversationSummary>, ClientError> {
        self.call(ListConversations {
            workspace: None,
            deleted: false,
        })
        .await
    }

    /// The last `last` messages of a conversation.
    pub async fn conversation(&self, id: &str, last: usize) -> Result<Conversation, ClientError> {
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

    /// A new link to the conversation as it is shown; its `url` made absolute (this server's
    /// origin before the base path and `/s/<token>` the server gives).
    pub async fn create_share(
        &self,
        conversation: &str,
        choice: crate::domain::share::ShareChoice,
    ) -> Result<crate::domain::share::ShareLink, ClientError> {
        let mut link = self
            .call(CreateShare {
                conversation: conversation.to_string(),
                choice,
            })
            .await?;
        let origin = url::Url::parse(&self.base)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        link.url = link.url.map(|path| format!("{origin}{path}"));
        Ok(link)
    }

    /// The links to a conversation, newest first.
    pub async fn list_shares(
        &self,
        conversation: &str,
    ) -> Result<Vec<crate::domain::share::ShareLink>, ClientError> {
        self.call(ListShares {
            conversation: Some(conversation.to_string()),
        })
        .await
    }

    /// Revokes one of the user's links.
    pub async fn revoke_share(&self, id: &str) -> Result<(), ClientError> {
        self.call(RevokeShare { id: id.to_string() }).await
    }

    /// Stops the running turn `id` on the server (for every viewer of it).
    pub async fn stop_turn(&self, id: &str) -> Result<(), ClientError> {
        self.call(StopTurn {
            turn: id.to_string(),
        })
        .await
    }

    /// Starts a turn: `POST` [`Chat::PATH`]; the response streams its events.
    pub(super) fn chat(&self, request: &ChatRequest) -> reqwest::RequestBuilder {
        self.post(Chat::PATH, request)
    }

    /// Joins the running turn `turn`: its events after sequence number `after` (from its first
    /// without one), then the live tail.
    pub(super) fn turn_events(&self, turn: &str, after: Option<u64>) -> reqwest::RequestBuilder {
        let mut query = vec![("turn", turn.to_string())];
        if let Some(after) = after {
            query.push(("after", after.to_string()));
        }
        let mut request = self
            .http
            .get(format!("{}{}", self.base, TurnEvents::PATH))
            .query(&query);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }
}

pub(super) fn unreachable_server(base: &str, e: &reqwest::Error) -> String {
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
pub(super) async fn refusal(response: reqwest::Response) -> Failure {
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
