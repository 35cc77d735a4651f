//! A conversation shared by link: what the reader chose for the link, the link as its owner
//! lists it, and the snapshot a link shows. The snapshot is the domain's own [`Conversation`],
//! cut down to what a stranger may read, so the shared page, the terminal and "Continue in
//! Ponder" read the one model of a conversation.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::attachment::FileRef;
use super::history::{Conversation, Import, ImportMessage, ImportVersion, Message};

/// Where shared pages live, under the base path: `/s/<token>`.
pub const SHARE_PREFIX: &str = "/s/";

/// What a link includes besides the messages: the reasoning (off unless asked for: it is the
/// most private part of a chat), the files sent with the reader's messages, and the chat's own
/// instructions (off unless asked for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ShareChoice {
    #[serde(default)]
    pub thinking: bool,
    #[serde(default)]
    pub files: bool,
    #[serde(default)]
    pub instructions: bool,
}

/// A link as its owner (or the admin) lists it. The token itself is shown once, in `url`,
/// when the link is made: only its digest is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ShareLink {
    pub id: String,
    pub conversation_id: String,
    /// The title of the snapshot.
    pub title: String,
    pub choice: ShareChoice,
    pub created_at: i64,
    /// When the snapshot was last taken (made, or updated).
    pub updated_at: i64,
    /// How many messages the snapshot holds.
    pub messages: usize,
    /// Its owner's name, in the admin's list of every link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The link's address (base path and `/s/<token>`), only in the answer that made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// Who may open shared links on this server (`PONDER_SHARING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// No links are made and none opens.
    Off,
    /// Only someone signed in to this Ponder opens a link.
    SignedIn,
    /// Anyone with the link.
    Public,
}

impl Sharing {
    /// The setting's names, as `PONDER_SHARING` spells them.
    pub const NAMES: [(&'static str, Sharing); 3] = [
        ("off", Sharing::Off),
        ("signed-in", Sharing::SignedIn),
        ("public", Sharing::Public),
    ];

    pub fn parse(name: &str) -> Option<Sharing> {
        let name = name.trim();
        Self::NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, s)| s)
    }

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|&&(_, s)| s == self)
            .map_or("off", |&(n, _)| n)
    }
}

/// The snapshot of a conversation as a link shows it, and the ids of the files it shows in
/// order (each file's `id` in the snapshot is its place in that list).
///
/// Only the versions shown (the branch on screen) of the reader's and the assistant's messages
/// go in; no id of a row, workspace, turn or block; no reasoning settings or token counts; the
/// reasoning's text only with `choice.thinking`, and the files only with `choice.files`.
/// `conversation` must have been read with the reasoning's text.
pub fn snapshot(
    conversation: &Conversation,
    choice: ShareChoice,
    shared_at: i64,
) -> (Conversation, Vec<String>) {
    let mut files = Vec::new();
    let messages = conversation
        .messages
        .iter()
        .filter_map(|m| {
            let v = m.shown()?;
            let blocks = if choice.thinking {
                v.blocks
                    .iter()
                    .filter(|b| b.text.as_deref().is_some_and(|t| !t.trim().is_empty()))
                    .map(|b| super::history::BlockHeader {
                        id: String::new(),
                        reader_open: None,
                        running_ms: None,
                        ..b.clone()
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let mut tools: Vec<_> = v
                .tools
                .iter()
                .map(|t| super::rich::ToolStep {
                    after_blocks: if choice.thinking { t.after_blocks } else { 0 },
                    ..t.clone()
                })
                .collect();
            let shown_files = if choice.files {
                v.files
                    .iter()
                    .map(|f| {
                        files.push(f.id.clone());
                        FileRef {
                            id: (files.len() - 1).to_string(),
                            ..f.clone()
                        }
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let status = match v.status {
                super::history::VersionStatus::Streaming => {
                    super::rich::end_running_tools(&mut tools);
                    super::history::VersionStatus::Interrupted
                }
                other => other,
            };
            Some(Message {
                id: String::new(),
                role: m.role,
                created_at: m.created_at,
                active: 0,
                versions: vec![super::history::Version {
                    id: String::new(),
                    content: v.content.clone(),
                    status,
                    error: v.error.clone(),
                    model: v.model.clone(),
                    settings: Default::default(),
                    created_at: v.created_at,
                    blocks,
                    tools,
                    sources: v.sources.clone(),
                    files: shown_files,
                    usage: None,
                    turn: None,
                    compared: None,
                }],
            })
        })
        .collect();
    let snapshot = Conversation {
        id: String::new(),
        title: conversation.title.clone(),
        workspace_id: String::new(),
        created_at: conversation.created_at,
        updated_at: shared_at,
        rev: 0,
        model: conversation.model.clone(),
        settings: Default::default(),
        messages,
        first: 0,
        instructions: conversation
            .instructions
            .clone()
            .filter(|_| choice.instructions),
    };
    (snapshot, files)
}

/// The snapshot as a new conversation of the reader who continues it ("Continue in Ponder"),
/// with `files` standing for the snapshot's files (the reader's own copies, in the snapshot's
/// order; a file missing there is left out).
pub fn continued(snapshot: &Conversation, key: String, files: &[Option<FileRef>]) -> Import {
    Import {
        key,
        title: snapshot.title.clone(),
        created_at: 0,
        instructions: snapshot.instructions.clone(),
        messages: snapshot
            .messages
            .iter()
            .filter_map(|m| {
                let v = m.shown()?;
                Some(ImportMessage {
                    role: m.role,
                    created_at: m.created_at,
                    active: 0,
                    versions: vec![ImportVersion {
                        files: v
                            .files
                            .iter()
                            .filter_map(|f| {
                                let at: usize = f.id.parse().ok()?;
                                files.get(at).cloned().flatten()
                            })
                            .collect(),
                        usage: None,
                        ..ImportVersion::of(v)
                    }],
                })
            })
            .collect(),
    }
}

/// Who is reading a shared page, for its one action ("Continue in Ponder").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedReader {
    /// Someone this Ponder knows: the page offers to copy the conversation into their history.
    SignedIn,
    /// A visitor where accounts exist: the page offers to sign in first.
    Visitor,
}

/// What the shared page is drawn from: the server gathers it, the UI draws it.
#[derive(Clone, Debug)]
pub struct SharedPage {
    pub snapshot: Conversation,
    /// The language of the page's chrome (a BCP 47 tag); the content stays as written.
    pub locale: String,
    pub base_path: String,
    /// The address of the app's stylesheet.
    pub stylesheet: String,
    /// The link's token: the page's own address and its files' are under it.
    pub token: String,
    pub reader: SharedReader,
}

impl SharedPage {
    /// The page's own address.
    pub fn address(&self) -> String {
        format!("{}{SHARE_PREFIX}{}", self.base_path, self.token)
    }
}

/// A day as `YYYY-MM-DD` (UTC) from a time in ms: how the shared page dates a snapshot, the same
/// for every reader wherever they are.
pub fn iso_day(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::attachment::Kind;
    use crate::domain::history::{BlockHeader, Version, VersionStatus};
    use crate::domain::{Failure, Role, SourceRef, ThinkingKind, ToolStep, Usage};

    fn block(text: &str) -> BlockHeader {
        BlockHeader {
            id: "block-row-id".into(),
            kind: ThinkingKind::Raw,
            duration_ms: Some(4200),
            words: 3,
            chars: text.len() as u64,
            reader_open: Some(true),
            interrupted: false,
            cut_short: false,
            running_ms: Some(9),
            text: Some(text.into()),
        }
    }

    fn version(content: &str) -> Version {
        Version {
            id: "version-row-id".into(),
            turn: Some("turn-id".into()),
            usage: Some(Usage {
                input_tokens: Some(10),
                output_tokens: Some(20),
                reasoning_tokens: Some(5),
                ..Default::default()
            }),
            settings: crate::domain::ReasoningSettings::reasoning(Some(true), None),
            model: Some("demo".into()),
            ..Version::text(content, 7)
        }
    }

    fn file(id: &str) -> FileRef {
        FileRef {
            id: id.into(),
            name: format!("{id}.png"),
            kind: Kind::Image,
            size: 10,
            pixels: Some((1, 1)),
            pages: None,
            sent_as: None,
        }
    }

    fn chat() -> Conversation {
        let mut asked_first = version("first question");
        asked_first.files = vec![file("att-1")];
        let mut asked_again = version("the edit on screen");
        asked_again.files = vec![file("att-2"), file("att-3")];
        let old_answer = version("an answer on another branch");
        let mut answer = version("the answer shown");
        answer.blocks = vec![block("secret reasoning words"), block("  ")];
        answer.tools = vec![ToolStep {
            name: "search".into(),
            after_blocks: 1,
            ..Default::default()
        }];
        answer.sources = vec![SourceRef {
            n: 1,
            url: "https://example.org/".into(),
            title: Some("Example".into()),
        }];
        answer.error = Some(Failure::new("cut", true));
        answer.status = VersionStatus::Streaming;
        Conversation {
            id: "conversation-row-id".into(),
            title: "Plans".into(),
            workspace_id: "workspace-row-id".into(),
            created_at: 1,
            updated_at: 2,
            rev: 5,
            model: Some("demo".into()),
            instructions: None,
            settings: crate::domain::ReasoningSettings::reasoning(Some(true), None),
            messages: vec![
                Message {
                    id: "message-row-id".into(),
                    role: Role::User,
                    created_at: 3,
                    active: 1,
                    versions: vec![asked_first, asked_again],
                },
                Message {
                    id: "message-row-id-2".into(),
                    role: Role::Assistant,
                    created_at: 4,
                    active: 1,
                    versions: vec![old_answer, answer],
                },
            ],
            first: 0,
        }
    }

    #[test]
    fn without_thinking_or_files_the_snapshot_is_the_branch_on_screen_and_nothing_else() {
        let (shot, files) = snapshot(&chat(), ShareChoice::default(), 99);
        assert!(files.is_empty());
        let json = serde_json::to_string(&shot).unwrap();
        for private in [
            "row-id",
            "turn-id",
            "secret reasoning",
            "another branch",
            "first question",
            "att-",
            "reasoning_tokens",
            "settings",
        ] {
            assert!(!json.contains(private), "{private} in {json}");
        }
        assert_eq!(shot.updated_at, 99);
        assert_eq!(shot.title, "Plans");
        assert_eq!(shot.messages.len(), 2);
        let answer = &shot.messages[1].versions[0];
        assert_eq!(shot.messages[0].versions[0].content, "the edit on screen");
        assert_eq!(answer.content, "the answer shown");
        assert!(answer.blocks.is_empty());
        assert_eq!(answer.tools[0].after_blocks, 0);
        assert_eq!(answer.sources.len(), 1);
        assert_eq!(
            answer.error.as_ref().map(|e| e.message.as_str()),
            Some("cut")
        );
        assert_eq!(answer.status, VersionStatus::Interrupted);
        assert_eq!(answer.model.as_deref(), Some("demo"));
        assert!(shot
            .messages
            .iter()
            .all(|m| m.versions.len() == 1 && m.active == 0));
        // Every field a snapshot carries, and no other: a field added to the conversation later
        // (instructions, a system prompt) reaches a link only by being named here.
        let value = serde_json::to_value(&shot).unwrap();
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k.join(",")
        };
        assert_eq!(
            keys(&value),
            "created_at,id,messages,model,rev,title,updated_at,workspace_id"
        );
        assert_eq!(
            keys(&value["messages"][0]),
            "active,created_at,id,role,versions"
        );
        assert_eq!(
            keys(&value["messages"][1]["versions"][0]),
            "content,created_at,error,id,model,sources,status,tools"
        );
    }

    #[test]
    fn with_thinking_and_files_the_reasoning_and_the_shown_files_come_numbered() {
        let choice = ShareChoice {
            thinking: true,
            files: true,
            instructions: false,
        };
        let (shot, files) = snapshot(&chat(), choice, 99);
        assert_eq!(files, ["att-2", "att-3"]);
        let asked = &shot.messages[0].versions[0];
        let ids: Vec<&str> = asked.files.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["0", "1"]);
        assert_eq!(asked.files[1].name, "att-3.png");
        let answer = &shot.messages[1].versions[0];
        assert_eq!(answer.blocks.len(), 1, "an empty block is left out");
        let b = &answer.blocks[0];
        assert_eq!(b.text.as_deref(), Some("secret reasoning words"));
        assert_eq!(
            (b.id.as_str(), b.reader_open, b.running_ms),
            ("", None, None)
        );
        assert_eq!(b.duration_ms, Some(4200));
        assert_eq!(answer.tools[0].after_blocks, 1);
        assert_eq!(answer.tools[0].status, crate::domain::ToolStatus::Failed);
        let json = serde_json::to_string(&shot).unwrap();
        assert!(
            !json.contains("row-id") && !json.contains("\"id\":\"att-"),
            "{json}"
        );
    }

    #[test]
    fn a_chats_instructions_reach_a_link_only_when_chosen() {
        let mut chat = chat();
        chat.instructions = Some("Answer as a pirate.".into());
        let (shot, _) = snapshot(&chat, ShareChoice::default(), 99);
        assert_eq!(shot.instructions, None);
        assert!(!serde_json::to_string(&shot).unwrap().contains("pirate"));
        let chosen = ShareChoice {
            instructions: true,
            ..ShareChoice::default()
        };
        let (shot, _) = snapshot(&chat, chosen, 99);
        assert_eq!(shot.instructions.as_deref(), Some("Answer as a pirate."));
    }

    #[test]
    fn days_are_dated_in_utc() {
        assert_eq!(iso_day(0), "1970-01-01");
        assert_eq!(iso_day(1_764_892_800_000), "2025-12-05");
        assert_eq!(iso_day(951_782_400_000), "2000-02-29");
        assert_eq!(iso_day(-1), "1969-12-31");
    }

    #[test]
    fn continuing_makes_an_import_of_the_snapshot_with_the_readers_own_files() {
        let choice = ShareChoice {
            thinking: true,
            files: true,
            instructions: false,
        };
        let (shot, _) = snapshot(&chat(), choice, 99);
        let mine = file("my-copy");
        let import = continued(&shot, "share:x".into(), &[None, Some(mine.clone())]);
        assert_eq!(import.key, "share:x");
        assert_eq!(import.title, "Plans");
        assert_eq!(import.messages.len(), 2);
        assert_eq!(import.messages[0].versions[0].files, vec![mine]);
        let answer = &import.messages[1].versions[0];
        assert_eq!(answer.blocks[0].text, "secret reasoning words");
        assert_eq!(answer.error.as_deref(), Some("cut"));
        assert_eq!(answer.status, VersionStatus::Interrupted);
    }
}
