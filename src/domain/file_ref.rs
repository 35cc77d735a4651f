//! A file as a message keeps it: its kind, how it went to the model, and the reference the
//! page, the terminal, the turn's events and an export carry (never its bytes). Apart from
//! [`super::attachment`], which judges files and says what is wrong with them, so the turn's
//! events can name how a file went without depending on the judging.

use utoipa::ToSchema;

/// The kinds Ponder sends to a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// PNG, JPEG, WebP or GIF (its first frame).
    Image,
    Pdf,
    /// Plain text, Markdown, CSV, JSON, source code: sent as text with its name.
    Text,
}

crate::domain::wire::wire_names!(Kind {
    Image = "image",
    Pdf = "pdf",
    Text = "text",
});

/// How one file goes to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendAs {
    Image,
    /// The provider's own document input (Anthropic `document`, Gemini `inline_data`,
    /// Responses `input_file`, Chat Completions `file`).
    Document,
    /// Its text, in a block that names the file.
    Text,
    /// A PDF's first pages drawn as images, for a model that sees but reads no documents.
    Pages,
}

crate::domain::wire::wire_names!(SendAs {
    Image = "image",
    Document = "document",
    Text = "text",
    Pages = "pages",
});

/// A file kept with a reader's message, as the page, the terminal and an export show it (its
/// bytes are at [`super::attachment::UPLOAD_PATH`]`/<id>`, for its owner only).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, ToSchema)]
pub struct FileRef {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    pub size: u64,
    /// An image's width and height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixels: Option<(u32, u32)>,
    /// A PDF's page count, when its text could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// How it went to the model the first time the message was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_as: Option<SendAs>,
}
