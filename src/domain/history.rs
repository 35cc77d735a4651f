//! Server-side history as the browser (or any client) reads it: workspaces, conversations,
//! messages with their versions, and thinking blocks as headers whose text loads on demand.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::event::{Failure, ThinkingKind};
use super::message::Role;
use super::reasoning::{Effort, ReasoningSettings};
use super::rich::{SourceRef, ToolStep};

/// A workspace: each conversation belongs to one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Workspace {
    pub id: String,
    pub name: String,
}

/// The name of the workspace every user starts with. Stored in English; the page shows it in
/// the reader's language while it keeps this name.
pub const FIRST_WORKSPACE: &str = "Personal";

/// A conversation in the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub workspace_id: String,
    pub updated_at: i64,
    /// Set when it was deleted: it can be restored until the grace period ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
    /// Kept on top of the list.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// The reader's tags, which filter the list ([`checked_tags`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// How many tags a conversation may have, and how long each may be (characters).
pub const MAX_TAGS: usize = 10;
pub const MAX_TAG_CHARS: usize = 32;

/// Tags as kept: trimmed, inner spaces folded to one, blanks and repeats (ignoring case) left
/// out, in the order given; more than [`MAX_TAGS`], a tag over [`MAX_TAG_CHARS`] or one with a
/// control character or a comma is refused with the reason.
pub fn checked_tags(tags: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.split_whitespace().collect::<Vec<_>>().join(" ");
        if tag.is_empty() {
            continue;
        }
        if tag.chars().count() > MAX_TAG_CHARS {
            return Err(format!("a tag has at most {MAX_TAG_CHARS} characters"));
        }
        if tag.chars().any(|c| c.is_control() || c == ',') {
            return Err("a tag must not hold a comma or a control character".into());
        }
        if !out.iter().any(|t| t.to_lowercase() == tag.to_lowercase()) {
            out.push(tag);
        }
    }
    if out.len() > MAX_TAGS {
        return Err(format!("a conversation has at most {MAX_TAGS} tags"));
    }
    Ok(out)
}

/// A title Ponder made rather than the reader: a mark after the title it came from (or
/// alone), so the title is stored in no language and read in the reader's (`i18n::title`).
/// Private-use characters: no one types them, and a reader's own title never holds one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TitleMark {
    /// A branch of the chat whose title comes before the mark.
    Branch,
    /// The copy a save conflict keeps of the chat whose title comes before the mark.
    Copy,
    /// An imported chat that had no title (the mark alone).
    Imported,
}

impl TitleMark {
    const ALL: [TitleMark; 3] = [TitleMark::Branch, TitleMark::Copy, TitleMark::Imported];

    fn char(self) -> char {
        match self {
            TitleMark::Branch => '\u{E010}',
            TitleMark::Copy => '\u{E011}',
            TitleMark::Imported => '\u{E012}',
        }
    }

    /// `title` marked: the stored title of a branch or a copy of it.
    pub fn after(self, title: &str) -> String {
        let mut out = title.trim_end().to_string();
        out.push(self.char());
        out
    }

    /// The stored title of an imported chat that had none.
    pub fn imported() -> String {
        TitleMark::Imported.char().to_string()
    }

    /// The outermost mark of a stored title and the title it marks; `None` for a plain one.
    pub fn split(stored: &str) -> Option<(&str, TitleMark)> {
        let last = stored.chars().next_back()?;
        let mark = TitleMark::ALL.into_iter().find(|m| m.char() == last)?;
        Some((&stored[..stored.len() - last.len_utf8()], mark))
    }

    /// A title with every mark taken out, for what reads it as text (a file name, a search).
    pub fn strip(stored: &str) -> String {
        stored
            .chars()
            .filter(|c| !TitleMark::ALL.iter().any(|m| m.char() == *c))
            .collect()
    }
}

/// How a stored message version ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionStatus {
    /// The reader's own text, or an answer that finished.
    Done,
    /// Finished without answer text.
    NoAnswer,
    Error,
    Stopped,
    /// Still being written by a running turn.
    Streaming,
    /// Cut before it finished (the server stopped, or the stream broke).
    Interrupted,
}

crate::domain::wire::wire_names!(VersionStatus {
    Done = "done",
    NoAnswer = "no_answer",
    Error = "error",
    Stopped = "stopped",
    Streaming = "streaming",
    Interrupted = "interrupted",
});

impl VersionStatus {
    pub fn name(self) -> &'static str {
        super::wire::WireName::wire_name(self)
    }

    /// A stored status; an unknown one reads as done.
    pub fn parse(name: &str) -> VersionStatus {
        super::wire::WireName::from_wire_name(name).unwrap_or(VersionStatus::Done)
    }
}

/// A reasoning block: its header always, its text only once asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BlockHeader {
    pub id: String,
    pub kind: ThinkingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    pub words: u64,
    pub chars: u64,
    /// The reader's own open/closed choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_open: Option<bool>,
    #[serde(default)]
    pub interrupted: bool,
    /// The reader cut this reasoning short ("Answer now").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
    /// While its answer streams: how long this unfinished block had been going when the server
    /// answered (ms), so a page that joins the turn shows its clock right at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_ms: Option<u64>,
    /// The reasoning, when it was loaded with the header (an export, a small block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// One version of a message: an edit of the reader's text, or one answer of the assistant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Version {
    pub id: String,
    pub content: String,
    pub status: VersionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Failure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the answer was asked with (thinking on/off, effort).
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    pub settings: ReasoningSettings,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<BlockHeader>,
    /// The tools the model used, in stream order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolStep>,
    /// The sources `[^n]` in the answer refers to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceRef>,
    /// The files sent with a reader's message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<crate::domain::attachment::FileRef>,
    /// The answer's token counts, where the upstream reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::domain::Usage>,
    /// While the answer streams: the turn writing it, which a viewer joins with
    /// `GET /api/turn/events`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
    /// An answer of a comparison (issue #49): picked or not, and the reader's thumbs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compared: Option<crate::domain::compare::Compared>,
}

impl Version {
    /// A version that is only text, finished: the reader's message or an edit of it.
    pub fn text(content: impl Into<String>, created_at: i64) -> Version {
        Version {
            id: String::new(),
            content: content.into(),
            status: VersionStatus::Done,
            error: None,
            model: None,
            settings: ReasoningSettings::default(),
            created_at,
            blocks: Vec::new(),
            tools: Vec::new(),
            sources: Vec::new(),
            files: Vec::new(),
            usage: None,
            turn: None,
            compared: None,
        }
    }
}

/// One message with every version; `active` is the one shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Message {
    pub id: String,
    pub role: Role,
    pub created_at: i64,
    pub active: usize,
    pub versions: Vec<Version>,
}

impl Message {
    /// The version shown.
    pub fn shown(&self) -> Option<&Version> {
        self.versions.get(self.active).or(self.versions.last())
    }

    /// The reader edited this message (it has more than one version).
    pub fn edited(&self) -> bool {
        self.role == Role::User && self.versions.len() > 1
    }
}

/// A conversation opened: its messages with block headers, not the reasoning text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Conversation {
    pub id: String,
    pub title: String,
    pub workspace_id: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub rev: i64,
    /// The model its last turn used; the next turn uses it too unless the reader picks another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning settings its last turn was asked with.
    #[serde(default, skip_serializing_if = "ReasoningSettings::is_default")]
    pub settings: ReasoningSettings,
    pub messages: Vec<Message>,
    /// How many messages come before the first one here: a page of a long conversation
    /// leaves the earlier ones to a later request (0: it starts at the beginning).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first: usize,
    /// The conversation's own system instructions (the other levels are the reader's, the
    /// workspace's and the administrator's). Left out of a share or an export unless the
    /// reader chooses to include them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Settings as their nullable columns store them (`thinking`, `effort`; the sampling
/// parameters apart, see [`Sampled`]).
pub fn settings_from_columns(thinking: Option<i64>, effort: Option<String>) -> ReasoningSettings {
    ReasoningSettings::reasoning(
        thinking.map(|t| t != 0),
        effort.as_deref().and_then(Effort::parse),
    )
}

/// The sampling parameters as three nullable columns store them (`temperature`, `top_p`,
/// `max_tokens`); a value the columns hold out of range (an edited database) is left out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sampled {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_tokens: Option<i64>,
}

impl Sampled {
    pub fn of(settings: &ReasoningSettings) -> Sampled {
        Sampled {
            temperature: settings.temperature.map(|f| f.get()),
            top_p: settings.top_p.map(|f| f.get()),
            max_tokens: settings.max_tokens.map(i64::from),
        }
    }

    /// `settings` with these parameters.
    pub fn into_settings(self, settings: ReasoningSettings) -> ReasoningSettings {
        use crate::domain::sampling::Tunable;
        let pairs = [
            (Tunable::Temperature, self.temperature),
            (Tunable::TopP, self.top_p),
            (Tunable::MaxTokens, self.max_tokens.map(|n| n as f64)),
        ];
        pairs
            .into_iter()
            .fold(settings, |s, (t, v)| s.with_sampling(t, v).unwrap_or(s))
    }
}

/// For `skip_serializing_if`: a count of nothing is left out of the JSON.
pub fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Which messages of a conversation one request reads: the `last` ones before message
/// `before` (an index; the end when absent). Empty asks for every message. Indexes stay
/// valid while a conversation grows, since messages are only ever appended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Page {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<usize>,
}

impl Page {
    /// The messages `[first, end)` of a conversation of `len` this page holds.
    pub fn range(self, len: usize) -> (usize, usize) {
        let end = self.before.map_or(len, |b| b.min(len));
        let first = self.last.map_or(0, |n| end.saturating_sub(n));
        (first, end)
    }
}

/// Where a search found its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitKind {
    Answer,
    Question,
    Thinking,
}

crate::domain::wire::wire_names!(HitKind {
    Answer = "answer",
    Question = "question",
    Thinking = "thinking",
});

/// One search result: the match in context, and where to open it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SearchHit {
    pub conversation_id: String,
    pub conversation_title: String,
    pub message_id: String,
    pub kind: HitKind,
    /// The words around the match, in order; the parts that matched have `hit`. Structured,
    /// so brackets or any other character in the text itself are never taken for a mark.
    pub snippet: Vec<SnippetPart>,
}

/// A run of a search snippet's text, matched or not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SnippetPart {
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hit: bool,
}

/// Where the search engines mark a match in a snippet they write: characters of Unicode's
/// private use area, which indexed text never carries (the index replaces them).
pub const HIT_START: char = '\u{E000}';
pub const HIT_END: char = '\u{E001}';

/// The parts of a snippet the engine marked with [`HIT_START`] and [`HIT_END`].
pub fn snippet_parts(marked: &str) -> Vec<SnippetPart> {
    let mut parts: Vec<SnippetPart> = Vec::new();
    let mut hit = false;
    for piece in marked.split([HIT_START, HIT_END]) {
        if !piece.is_empty() {
            match parts.last_mut() {
                Some(last) if last.hit == hit => last.text.push_str(piece),
                _ => parts.push(SnippetPart {
                    text: piece.to_string(),
                    hit,
                }),
            }
        }
        hit = !hit;
    }
    parts
}

/// `text` as the index keeps it: the snippet markers it may hold replaced, so a mark in a
/// snippet is always the engine's.
pub fn indexable(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([HIT_START, HIT_END]) {
        std::borrow::Cow::Owned(text.replace([HIT_START, HIT_END], "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A conversation brought to the server from elsewhere (a browser's saved chats, a JSON
/// export). `key` identifies it: importing the same key twice makes nothing new.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Import {
    pub key: String,
    pub title: String,
    pub created_at: i64,
    pub messages: Vec<ImportMessage>,
    /// The conversation's own instructions, when the file carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportMessage {
    pub role: Role,
    pub created_at: i64,
    pub active: usize,
    pub versions: Vec<ImportVersion>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportVersion {
    pub content: String,
    pub status: VersionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<ImportBlock>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceRef>,
    /// The files of a reader's message: kept with it when they are the importing user's own
    /// (the export of a chat on this server); any other is left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<crate::domain::attachment::FileRef>,
    /// The answer's token counts, kept with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::domain::Usage>,
}

impl ImportVersion {
    /// A stored version as an import carries it: one still streaming is imported as
    /// interrupted, each block with its text.
    pub fn of(v: &Version) -> ImportVersion {
        ImportVersion {
            content: v.content.clone(),
            status: match v.status {
                VersionStatus::Streaming => VersionStatus::Interrupted,
                ended => ended,
            },
            error: v.error.as_ref().map(|e| e.message.clone()),
            created_at: v.created_at,
            blocks: v
                .blocks
                .iter()
                .map(|b| ImportBlock {
                    kind: b.kind,
                    text: b.text.clone().unwrap_or_default(),
                    duration_ms: b.duration_ms,
                    interrupted: b.interrupted,
                })
                .collect(),
            tools: v.tools.clone(),
            sources: v.sources.clone(),
            files: v.files.clone(),
            usage: v.usage.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportBlock {
    pub kind: ThinkingKind,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub interrupted: bool,
}

/// What a user chose for one workspace (thinking behaviour, locale, theme, default model);
/// an unset field keeps the default, so a client that knows only some of them keeps the rest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Preferences {
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub locale: Option<String>,
    #[serde(default)]
    pub theme: Option<String>,
    #[serde(default)]
    pub default_model: Option<String>,
    /// Titles by the model for this reader's new chats: `"model"` or `"off"` (none: the
    /// server's `PONDER_TITLES`). Read from the first workspace's preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub titles: Option<String>,
}

impl Preferences {
    /// Each field set: 1 to 64 characters without control characters.
    pub fn is_valid(&self) -> bool {
        [
            &self.thinking,
            &self.locale,
            &self.theme,
            &self.default_model,
        ]
        .into_iter()
        .flatten()
        .all(|v| !v.is_empty() && v.chars().count() <= 64 && !v.chars().any(char::is_control))
            && matches!(self.titles.as_deref(), None | Some("model" | "off"))
    }
}

#[cfg(test)]
mod snippet_tests {
    use super::*;

    #[test]
    fn a_snippets_marks_become_parts_and_brackets_stay_text() {
        let marked = format!("see a[0] {HIT_START}Rayleigh{HIT_END} and [b] {HIT_START}x{HIT_END}");
        let part = |text: &str, hit| SnippetPart {
            text: text.into(),
            hit,
        };
        assert_eq!(
            snippet_parts(&marked),
            [
                part("see a[0] ", false),
                part("Rayleigh", true),
                part(" and [b] ", false),
                part("x", true),
            ]
        );
        assert_eq!(snippet_parts(""), []);
        let sneaky = format!("a{HIT_START}b");
        assert_eq!(indexable(&sneaky), "a\u{FFFD}b");
        assert!(matches!(
            indexable("plain [x]"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::Page;

    #[test]
    fn a_page_is_the_last_messages_before_an_index() {
        assert_eq!(Page::default().range(1000), (0, 1000));
        let last = |n| Page {
            last: Some(n),
            before: None,
        };
        assert_eq!(last(40).range(1000), (960, 1000));
        assert_eq!(last(40).range(12), (0, 12));
        assert_eq!(last(0).range(12), (12, 12));
        let earlier = Page {
            last: Some(100),
            before: Some(960),
        };
        assert_eq!(earlier.range(1002), (860, 960));
        let start = Page {
            last: Some(100),
            before: Some(30),
        };
        assert_eq!(start.range(1000), (0, 30));
        let past_the_end = Page {
            last: None,
            before: Some(5000),
        };
        assert_eq!(past_the_end.range(10), (0, 10));
    }
}
