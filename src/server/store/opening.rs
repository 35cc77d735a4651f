//! A stored turn's first writes in one transaction: the conversation (when the turn starts
//! one), the reader's message with how its files are to be sent, and the answer it opens. A
//! thousand turns starting at once wait for one commit each, not four, and a turn that is
//! refused leaves none of them behind. With several replicas, the row saying which one runs the
//! turn is written in the same transaction.

use super::messages::Asking;
use super::records::AnswerSlot;
use super::scope::{lock_conversation, Scoped};
use super::{Backend, StoreError};
use crate::domain::attachment::SendAs;
use crate::domain::ReasoningSettings;

/// The reader's message a turn opens with.
#[derive(Clone, Copy, Debug)]
pub struct Asked<'a> {
    pub content: &'a str,
    /// The message this one is an edit of.
    pub edit: Option<&'a str>,
    /// The reader's files, by id, at most `max_bytes` together.
    pub attachments: &'a [String],
    pub max_bytes: u64,
    /// How the reader asked each file to be sent, in the order attached.
    pub send_as: &'a [Option<SendAs>],
}

/// Where and how a turn opens.
#[derive(Clone, Copy, Debug)]
pub struct Opening<'a> {
    /// The conversation; `None` starts one in `workspace` titled `title`.
    pub conversation: Option<&'a str>,
    pub workspace: Option<&'a str>,
    pub title: &'a str,
    /// The reader's message; `None` when the turn answers again (`regenerate`).
    pub asked: Option<Asked<'a>>,
    pub regenerate: Option<&'a str>,
    pub model: &'a str,
    pub settings: ReasoningSettings,
    /// The combined instructions the answer is asked with (`None`: none), kept with it.
    pub instructions: Option<&'a str>,
    /// A new conversation's own instructions, written with it.
    pub conversation_instructions: Option<&'a str>,
    pub turn: &'a str,
    /// The replica the turn runs on, recorded with the opening (several replicas only: the
    /// row goes to PostgreSQL's `running_turns`).
    pub replica: Option<&'a str>,
    /// One answer of a comparison (the first asks; the others answer `regenerate` again).
    pub compared: bool,
}

/// What an opening wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// The reader's message, when the turn stored one (a new message or a new version of it).
    pub user_message: Option<String>,
    pub slot: AnswerSlot,
}

impl Scoped<'_> {
    /// Writes a turn's opening in one transaction, checking first that the conversation,
    /// workspace and files are the caller's.
    pub async fn open_turn(&self, opening: Opening<'_>) -> Result<Opened, StoreError> {
        let workspace = match (opening.conversation, opening.workspace) {
            (Some(id), _) => {
                self.owns_conversation(id).await?;
                None
            }
            (None, Some(named)) => Some(named.to_string()),
            (None, None) => Some(self.own_workspace(None).await?.id),
        };
        if let Some(asked) = &opening.asked {
            self.check_attachments(asked.attachments, asked.max_bytes)
                .await?;
        }
        let mut turn = self.write_turn().await;
        let mut tx = turn.begin().await?;
        let conversation = match (opening.conversation, workspace) {
            (Some(id), _) => {
                lock_conversation(&mut tx, id).await?;
                id.to_string()
            }
            (None, Some(workspace)) => {
                self.new_conversation_in(
                    &mut tx,
                    &workspace,
                    opening.title,
                    opening.conversation_instructions,
                )
                .await?
                .id
            }
            (None, None) => return Err(StoreError::NotFound),
        };
        let user_message = match &opening.asked {
            Some(asked) => {
                let id = self
                    .add_user_message_in(
                        &mut tx,
                        &conversation,
                        asked.content,
                        asked.edit,
                        asked.attachments,
                    )
                    .await?;
                if asked.send_as.iter().any(Option::is_some) {
                    self.record_sent_as_in(&mut tx, &id, asked.send_as).await?;
                }
                Some(id)
            }
            None => None,
        };
        if let (true, Some(message)) = (opening.compared, opening.regenerate) {
            self.room_to_compare(&mut tx, message).await?;
        }
        let slot = self
            .start_answer_in(
                &mut tx,
                &conversation,
                opening.regenerate,
                Asking {
                    model: opening.model,
                    settings: opening.settings,
                    instructions: Some(opening.instructions.unwrap_or_default()),
                },
                Some(opening.turn),
            )
            .await?;
        if opening.compared {
            self.mark_compared(&mut tx, &slot.version_id).await?;
        }
        if let (Some(replica), Backend::Postgres) = (opening.replica, self.backend()) {
            self.insert_running_turn(&mut *tx, opening.turn, replica, Some(&slot.version_id))
                .await?;
        }
        tx.commit().await?;
        Ok(Opened { user_message, slot })
    }
}
