//! Chat messages as the browser sends them to `POST /api/chat`.

use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use super::event::{ErrorCode, Failure};
use super::reasoning::{Effort, ReasoningSettings};
use super::sampling::Fraction;

/// Who wrote a message. Only two roles reach the model from the browser; a system prompt, if
/// any, is the server's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    User,
    Assistant,
}

crate::domain::wire::wire_names!(Role { User = "user", Assistant = "assistant" });

/// One message of the conversation sent upstream. Thinking is never sent back to the model as
/// text; only the provider's own opaque reasoning state may go back with an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    /// The opaque reasoning state (signed thinking blocks, encrypted reasoning items, thought
    /// signatures) the provider returned with this answer, in order, to be sent back with it.
    /// Only the server fills it, from its store: it is never read from a request nor written
    /// to any response, so no browser, terminal or export ever holds it.
    #[serde(skip)]
    pub replay: Vec<serde_json::Value>,
    /// The files the reader attached to this message. Only the server fills it, from its store,
    /// as it does `replay`, or from `inline`.
    #[serde(skip)]
    pub files: Vec<super::attachment::Attached>,
    /// Files carried inside the request with this (user) message, by a client that keeps its
    /// own history (the page under `PONDER_HISTORY=browser`, a script): judged, limited and sent
    /// as an uploaded file is, and kept nowhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inline: Vec<InlineFile>,
}

/// A file inside a request: its name, its bytes in base64, how the reader asked it to go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct InlineFile {
    pub name: String,
    pub data: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_as: Option<crate::domain::file_ref::SendAs>,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
            replay: Vec::new(),
            files: Vec::new(),
            inline: Vec::new(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
            replay: Vec::new(),
            files: Vec::new(),
            inline: Vec::new(),
        }
    }
}

/// One message of a conversation as the history sent upstream sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Said<'a> {
    /// What the reader wrote, and the files they attached: kept on the server, or carried
    /// inside the request by a client that keeps its own history.
    User(&'a str, &'a [super::attachment::Attached], &'a [InlineFile]),
    /// An answer; `finished` when it ended normally or was stopped with some text kept;
    /// `replay`, the opaque reasoning state to send back with it (empty in the browser).
    Answer {
        finished: bool,
        text: &'a str,
        replay: &'a [serde_json::Value],
    },
}

/// The history sent upstream: the reader's texts and the finished answers, thinking excluded.
/// A failed, unfinished or empty answer is left out, and messages of one role that end up next
/// to each other are joined by a blank line, since providers want turns to alternate; answers
/// so joined no longer match the reasoning state of either, which is dropped. The browser and
/// the server build it by this one rule.
pub fn history<'a>(said: impl IntoIterator<Item = Said<'a>>) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::new();
    for s in said {
        let message = match s {
            Said::User(text, files, inline) => ChatMessage {
                files: files.to_vec(),
                inline: inline.to_vec(),
                ..ChatMessage::user(text)
            },
            Said::Answer {
                finished: true,
                text,
                replay,
            } if !text.trim().is_empty() => ChatMessage {
                replay: replay.to_vec(),
                ..ChatMessage::assistant(text)
            },
            Said::Answer { .. } => continue,
        };
        match out.last_mut() {
            Some(last) if last.role == message.role => {
                last.replay.clear();
                last.content.push_str("\n\n");
                last.content.push_str(&message.content);
                last.files.extend(message.files);
                last.inline.extend(message.inline);
            }
            _ => out.push(message),
        }
    }
    out
}

/// The body of `POST /api/chat`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChatRequest {
    /// The whole history, for a turn the server does not store. Read with a bound: a body of
    /// too many messages stops parsing at the first one too many, before the rest is ever
    /// allocated.
    #[serde(
        default,
        deserialize_with = "at_most_max_messages",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub messages: Vec<ChatMessage>,
    /// A stored turn: the conversation it belongs to (none: a new conversation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    /// A new conversation's workspace (none: the default one); for a turn the server does not
    /// store (a temporary chat), the workspace whose instructions it follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// A stored turn: the reader's new message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// With `content`: the reader's message it replaces as a new version (what followed it is
    /// dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<String>,
    /// Instead of `content`: the answer to write again, as a new version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regenerate: Option<String>,
    /// The model to answer (none: the conversation's, else the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Thinking on or off, for a model that can switch it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<bool>,
    /// The reasoning effort, for a model that takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// Sampling parameters, for a model that takes them; nothing is sent for one not set
    /// (the output limit is then the operator's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<Fraction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// A stored turn: `false` sends the earlier answers without the reasoning state kept
    /// beside them (after the provider refused it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<bool>,
    /// With `content`: the files the reader attached to it, by the ids
    /// `POST /api/attachments` gave them, in order (at most [`MAX_ATTACHMENTS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<String>,
    /// The conversation's own instructions: for a turn the server does not store, sent with
    /// its history; for a stored turn that starts a conversation, kept as the new
    /// conversation's (later ones are set with `POST /api/instructions/set`). At most
    /// [`crate::domain::instructions::MAX_INSTRUCTION_CHARS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How the reader wants some of `attachments` sent, by id (a PDF `"text"` rather than as a
    /// document); kept with the message, and followed wherever the model can take it that way.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub send_as: std::collections::BTreeMap<String, crate::domain::file_ref::SendAs>,
    /// A stored turn that is one answer of a comparison: the first asks with `content`, the
    /// others `regenerate` its answer, each with its own `model` (at most
    /// [`crate::domain::compare::MAX_COMPARED`] to one message).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compare: bool,
}

impl ChatRequest {
    /// A turn the server does not store: the caller sends the history.
    pub fn stateless(messages: Vec<ChatMessage>) -> Self {
        ChatRequest {
            messages,
            conversation: None,
            workspace: None,
            content: None,
            edit: None,
            regenerate: None,
            model: None,
            thinking: None,
            effort: None,
            temperature: None,
            top_p: None,
            max_tokens: None,
            replay: None,
            attachments: Vec::new(),
            instructions: None,
            send_as: Default::default(),
            compare: false,
        }
    }

    /// The reasoning settings and sampling parameters the reader chose for this turn.
    pub fn settings(&self) -> ReasoningSettings {
        ReasoningSettings {
            thinking: self.thinking,
            effort: self.effort,
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
        }
    }

    /// True when the server stores the turn and builds the history itself.
    pub fn is_stored(&self) -> bool {
        self.conversation.is_some() || self.content.is_some() || self.regenerate.is_some()
    }
}

fn at_most_max_messages<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ChatMessage>, D::Error> {
    struct Bounded;
    impl<'de> serde::de::Visitor<'de> for Bounded {
        type Value = Vec<ChatMessage>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a list of at most {MAX_MESSAGES} messages")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
            while let Some(message) = seq.next_element()? {
                if out.len() == MAX_MESSAGES {
                    return Err(serde::de::Error::custom(format!(
                        "more than {MAX_MESSAGES} messages; the limit is {MAX_MESSAGES}"
                    )));
                }
                out.push(message);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Bounded)
}

/// Upper bound on the characters of one request's messages together, so a single request
/// cannot make the server buffer an unbounded body.
pub const MAX_REQUEST_CHARS: usize = 1_000_000;

/// Upper bound on the messages of one request: each costs the server a few hundred bytes to
/// forward, so 67,000 tiny messages in a 2 MB body cost 110 MB. A thousand is about five
/// hundred exchanges, longer than any model's context.
pub const MAX_MESSAGES: usize = 1_000;

/// Upper bound on the files of one message.
pub const MAX_ATTACHMENTS: usize = 20;

impl ChatRequest {
    /// Checks what serde cannot: a turn needs a last message from the user, and the history has
    /// a size limit. The failure is told to whoever sent the request.
    pub fn validate(&self) -> Result<(), Failure> {
        if let Some(text) = &self.instructions {
            if let Err(why) = crate::domain::instructions::checked(text) {
                return Err(Failure::of(ErrorCode::BadRequest, false).with("detail", why));
            }
        }
        if let Err(why) = self.settings().checked() {
            return Err(Failure::of(ErrorCode::BadRequest, false).with("detail", why));
        }
        if self.instructions.is_some() && self.is_stored() && self.conversation.is_some() {
            return Err(Failure::of(ErrorCode::BadRequest, false).with(
                "detail",
                "a stored conversation's `instructions` are set with POST /api/instructions/set",
            ));
        }
        if self.is_stored() {
            return self.validate_stored();
        }
        let bad =
            |detail: &str| Err(Failure::of(ErrorCode::BadRequest, false).with("detail", detail));
        let Some(last) = self.messages.last() else {
            return bad("`messages` is empty: send at least one user message");
        };
        if !self.attachments.is_empty() {
            return bad(
                "`attachments` go with a stored turn's `content`: files are kept on the server",
            );
        }
        if last.role != Role::User {
            return bad("the last message must have role \"user\"");
        }
        if last.content.trim().is_empty() && last.inline.is_empty() {
            return Err(Failure::of(ErrorCode::EmptyMessage, false));
        }
        if self
            .messages
            .iter()
            .any(|m| m.role != Role::User && !m.inline.is_empty())
        {
            return bad("`inline` files go with a user message");
        }
        if self
            .messages
            .iter()
            .any(|m| m.inline.len() > MAX_ATTACHMENTS)
        {
            return bad("more than 20 `inline` files for one message");
        }
        if self.messages.len() > MAX_MESSAGES {
            return Err(too_many_messages(self.messages.len()));
        }
        let total: usize = self.messages.iter().map(|m| m.content.len()).sum();
        if total > MAX_REQUEST_CHARS {
            return Err(Failure::of(ErrorCode::ConversationTooLong, false)
                .with("bytes", total)
                .with("limit", MAX_REQUEST_CHARS));
        }
        Ok(())
    }

    fn validate_stored(&self) -> Result<(), Failure> {
        let bad =
            |detail: &str| Err(Failure::of(ErrorCode::BadRequest, false).with("detail", detail));
        if !self.messages.is_empty() {
            return bad("a stored turn sends `content` (or `regenerate`), not `messages`: the server keeps the history");
        }
        if !self.attachments.is_empty() && self.content.is_none() {
            return bad("`attachments` go with `content`");
        }
        if self.attachments.len() > MAX_ATTACHMENTS {
            return bad("more than 20 `attachments` for one message");
        }
        if self.send_as.keys().any(|id| !self.attachments.contains(id)) {
            return bad("`send_as` names a file that is not in `attachments`");
        }
        match (&self.content, &self.regenerate) {
            (Some(_), Some(_)) => bad("send either `content` or `regenerate`, not both"),
            (None, None) => bad("a stored turn needs `content` (the new message) or `regenerate`"),
            (None, Some(_)) if self.conversation.is_none() => {
                bad("`regenerate` needs the `conversation` it belongs to")
            }
            (None, Some(_)) if self.edit.is_some() => {
                bad("`edit` goes with `content`, not `regenerate`")
            }
            (Some(content), None) if content.trim().is_empty() && self.attachments.is_empty() => {
                Err(Failure::of(ErrorCode::EmptyMessage, false))
            }
            (Some(content), None) if content.len() > MAX_REQUEST_CHARS => {
                Err(Failure::of(ErrorCode::MessageTooLong, false)
                    .with("bytes", content.len())
                    .with("limit", MAX_REQUEST_CHARS))
            }
            (Some(_), None) if self.edit.is_some() && self.conversation.is_none() => {
                bad("`edit` needs the `conversation` it belongs to")
            }
            _ => Ok(()),
        }
    }
}

/// The refusal of a request with more than [`MAX_MESSAGES`] messages (`count` of them).
pub fn too_many_messages(count: usize) -> Failure {
    Failure::of(ErrorCode::TooManyMessages, false)
        .with("count", count)
        .with("limit", MAX_MESSAGES)
}

/// How many messages a request body's `messages` list holds, read without keeping any of them:
/// for the refusal of a body whose list is over [`MAX_MESSAGES`] (the parse stops at the limit).
#[derive(Debug, Default, Deserialize)]
pub struct MessageCount {
    #[serde(default, deserialize_with = "count_items")]
    pub messages: usize,
}

fn count_items<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = usize;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    d.deserialize_seq(Count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_body() {
        let req: ChatRequest = serde_json::from_str(
            r#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"?"}]}"#,
        )
        .unwrap();
        assert_eq!(req.messages.len(), 3);
        assert_eq!(req.messages[1], ChatMessage::assistant("yo"));
        assert!(req.validate().is_ok());
    }

    #[test]
    fn rejects_unknown_roles_and_empty_or_assistant_final_turns() {
        assert!(serde_json::from_str::<ChatRequest>(
            r#"{"messages":[{"role":"system","content":"x"}]}"#
        )
        .is_err());
        assert!(ChatRequest::stateless(vec![]).validate().is_err());
        assert!(ChatRequest::stateless(vec![ChatMessage::assistant("x")])
            .validate()
            .is_err());
        assert!(ChatRequest::stateless(vec![ChatMessage::user("  ")])
            .validate()
            .is_err());
    }

    #[test]
    fn a_stored_turn_names_content_or_regenerate_and_never_sends_history() {
        let parse = |json: &str| serde_json::from_str::<ChatRequest>(json).unwrap();
        assert!(parse(r#"{"content":"hi"}"#).validate().is_ok());
        assert!(parse(r#"{"conversation":"c","content":"hi","edit":"m"}"#)
            .validate()
            .is_ok());
        assert!(parse(r#"{"conversation":"c","regenerate":"m"}"#)
            .validate()
            .is_ok());
        for bad in [
            r#"{"conversation":"c"}"#,
            r#"{"content":"  "}"#,
            r#"{"regenerate":"m"}"#,
            r#"{"content":"x","regenerate":"m","conversation":"c"}"#,
            r#"{"content":"x","edit":"m"}"#,
            r#"{"content":"x","messages":[{"role":"user","content":"y"}]}"#,
        ] {
            assert!(parse(bad).validate().is_err(), "{bad}");
        }
        assert!(!parse(r#"{"messages":[{"role":"user","content":"y"}]}"#).is_stored());
    }

    #[test]
    fn rejects_too_many_messages() {
        let messages = vec![ChatMessage::user("x"); MAX_MESSAGES + 1];
        let refused = ChatRequest::stateless(messages).validate().unwrap_err();
        assert_eq!(refused.code, ErrorCode::TooManyMessages);
        assert_eq!(refused.param("count"), "1001");
        assert_eq!(refused.param("limit"), "1000");
        let messages = vec![ChatMessage::user("x"); MAX_MESSAGES];
        assert!(ChatRequest::stateless(messages).validate().is_ok());
        let body = serde_json::json!({"messages": vec![ChatMessage::user("x"); MAX_MESSAGES + 5]});
        let err = serde_json::from_value::<ChatRequest>(body.clone()).unwrap_err();
        assert!(err.to_string().contains("the limit is 1000"), "{err}");
        let counted: MessageCount = serde_json::from_value(body).unwrap();
        assert_eq!(counted.messages, MAX_MESSAGES + 5);
    }

    #[test]
    fn rejects_oversized_histories() {
        let big = "x".repeat(MAX_REQUEST_CHARS + 1);
        let refused = ChatRequest::stateless(vec![ChatMessage::user(big)])
            .validate()
            .unwrap_err();
        assert_eq!(refused.code, ErrorCode::ConversationTooLong);
        assert_eq!(refused.param("bytes"), (MAX_REQUEST_CHARS + 1).to_string());
        assert_eq!(refused.param("limit"), MAX_REQUEST_CHARS.to_string());
    }
}
