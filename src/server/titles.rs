//! Titles by the model: after a new conversation's first answer, the conversation's model (or
//! `PONDER_TITLE_MODEL`) is asked for a short title with its thinking off or at its lowest. Only
//! the answer's text is read, never its reasoning; the title replaces the first-words title
//! unless the reader renamed the conversation meanwhile. A page waits for it with
//! `POST /api/titles/wait`.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::Controls;
use crate::server::config::Config;
use crate::server::providers::{self, Piece, TurnOptions};
use crate::server::store::identity::Identity;
use crate::server::store::Store;

/// What the title request tells the model.
pub const TITLE_INSTRUCTIONS: &str = "You write titles for conversations. Reply with a title of at most six words for the conversation below, in the language the conversation is written in. Reply with the title alone: no quotes, no final period, no explanation.";

/// How much of the question and of the answer the title request carries.
const EXCERPT_CHARS: usize = 2_000;

/// The longest title kept (characters).
pub const MAX_TITLE_CHARS: usize = 80;

/// How long the title request may take, and how much of its response is read.
const TITLE_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_RESPONSE_BYTES: usize = 256 * 1024;

/// Wakes the pages waiting for a title (`titles/wait`) when one is written on this replica;
/// waiters also look at the store once a second, for titles written on another replica.
#[derive(Default)]
pub struct TitleBoard {
    written: tokio::sync::Notify,
}

impl TitleBoard {
    pub fn written(&self) {
        self.written.notify_waiters();
    }

    /// Resolves when a title is written here, or after `at_most`.
    pub async fn wait(&self, at_most: Duration) {
        let _ = tokio::time::timeout(at_most, self.written.notified()).await;
    }
}

/// One title to make, for conversation `conversation` of `who`, from its first exchange.
pub struct TitleJob {
    pub config: Arc<Config>,
    pub http: reqwest::Client,
    pub base: String,
    pub store: Store,
    pub who: Arc<Identity>,
    pub board: Arc<TitleBoard>,
    pub conversation: String,
    pub question: String,
    pub model: String,
    pub controls: Controls,
}

impl TitleJob {
    /// Asks for the title of the exchange that ended with `answer`, in the background.
    pub fn start(self, answer: String) {
        tokio::spawn(async move {
            let me = self.store.scoped(&self.who);
            let wanted = match me.preferences(None).await.map(|p| p.titles) {
                Ok(Some(choice)) => choice != "off",
                _ => true,
            };
            if !wanted {
                if let Err(e) = me.set_model_title(&self.conversation, None).await {
                    tracing::warn!(error = %e, "a chat's first words could not be kept as its title");
                }
                self.board.written();
                return;
            }
            let made = tokio::time::timeout(TITLE_TIMEOUT, self.ask(&answer)).await;
            let title = match made {
                Ok(Ok(title)) => title,
                Ok(Err(why)) => {
                    tracing::info!(why = %why, "no title from the model");
                    None
                }
                Err(_) => {
                    tracing::info!("no title from the model within 30 s");
                    None
                }
            };
            // Without one the first words stay, and the pages waiting are told so.
            let me = self.store.scoped(&self.who);
            match me
                .set_model_title(&self.conversation, title.as_deref())
                .await
            {
                Ok(_) => self.board.written(),
                Err(e) => tracing::warn!(error = %e, "a model's title could not be kept"),
            }
        });
    }

    async fn ask(&self, answer: &str) -> Result<Option<String>, String> {
        let excerpt = |text: &str| text.chars().take(EXCERPT_CHARS).collect::<String>();
        let asked = format!(
            "Question:\n{}\n\nAnswer:\n{}",
            excerpt(&self.question),
            excerpt(answer)
        );
        let model = self
            .config
            .title_model
            .clone()
            .unwrap_or_else(|| self.model.clone());
        let options = TurnOptions {
            settings: providers::ask_again_settings(self.controls),
            controls: self.controls,
            model,
            answer_now: None,
            instructions: Some(TITLE_INSTRUCTIONS.to_string()),
        };
        let messages = [crate::domain::ChatMessage::user(asked)];
        let req = providers::build_request(&self.config, &self.base, &messages, &options);
        let mut builder = self.http.post(&req.url).json(&req.body);
        for (name, value) in &req.headers {
            builder = builder.header(*name, value);
        }
        let mut response = builder.send().await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("the upstream answered {}", response.status()));
        }
        let mut parser = providers::parser(&self.config);
        let mut pieces = Vec::new();
        let mut read = 0;
        while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
            read += chunk.len();
            parser.feed(&chunk, &mut pieces);
            if read > MAX_RESPONSE_BYTES {
                break;
            }
        }
        parser.finish(&mut pieces);
        Ok(title_from(&pieces))
    }
}

/// The title a response's pieces hold: the answer's text only (reasoning, however it came, is
/// not read), cleaned by [`clean_title`].
pub fn title_from(pieces: &[Piece]) -> Option<String> {
    let mut answer = String::new();
    for piece in pieces {
        match piece {
            Piece::Answer(text) => answer.push_str(text),
            Piece::Reclassify => answer.clear(),
            Piece::Error(_) => return None,
            _ => {}
        }
    }
    clean_title(&answer)
}

/// A model's reply as a title: reasoning tags and everything between them dropped, its first
/// line with text, without a "Title:" label, markdown marks, wrapping quotes or a final period,
/// spaces collapsed, at most [`MAX_TITLE_CHARS`]. `None` when nothing is left.
pub fn clean_title(reply: &str) -> Option<String> {
    let mut text = reply.to_string();
    for (open, close) in [("<think>", "</think>"), ("<thinking>", "</thinking>")] {
        while let Some(start) = text.find(open) {
            match text[start..].find(close) {
                Some(end) => text.replace_range(start..start + end + close.len(), ""),
                None => text.truncate(start),
            }
        }
        if let Some(end) = text.find(close) {
            text.replace_range(..end + close.len(), "");
        }
    }
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut line = line.trim_start_matches(['#', '*', '_', '`', '>', '-', ' ']);
    for label in [
        "Title:",
        "title:",
        "TITLE:",
        "Título:",
        "タイトル:",
        "العنوان:",
    ] {
        if let Some(rest) = line.strip_prefix(label) {
            line = rest;
        }
    }
    let marks: &[char] = &[
        '"', '\'', '“', '”', '‘', '’', '«', '»', '「', '」', '*', '_', '`', ' ', '.', '。',
    ];
    let line = line.trim_matches(marks);
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    let title: String = words.join(" ").chars().take(MAX_TITLE_CHARS).collect();
    let title = title.trim().to_string();
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_becomes_a_clean_title_and_reasoning_never_stays() {
        let cases = [
            ("Why the Sky Is Blue", Some("Why the Sky Is Blue")),
            (
                "\"Rayleigh scattering explained.\"",
                Some("Rayleigh scattering explained"),
            ),
            (
                "**Title:** Tides and the Moon\n\nThis title says…",
                Some("Tides and the Moon"),
            ),
            ("# Cozinhar arroz", Some("Cozinhar arroz")),
            (
                "<think>the user asked about tides, so</think>Tides",
                Some("Tides"),
            ),
            ("<think>never closed, all reasoning", None),
            (
                "reasoning leaked before</think>\nMoon phases",
                Some("Moon phases"),
            ),
            ("「空が青い理由」", Some("空が青い理由")),
            ("  \n\n  ", None),
            ("a\u{7}b   c", Some("a b c")),
        ];
        for (reply, want) in cases {
            assert_eq!(clean_title(reply).as_deref(), want, "{reply:?}");
        }
        let long = "word ".repeat(40);
        assert_eq!(
            clean_title(&long).unwrap().chars().count(),
            MAX_TITLE_CHARS - 1
        );
    }

    #[test]
    fn only_the_answer_is_read_and_a_reclassify_drops_what_was_reasoning() {
        let pieces = [
            Piece::Reasoning {
                text: "SECRET reasoning about a title".into(),
                kind: crate::domain::ThinkingKind::Raw,
            },
            Piece::Answer("Sky Colours".into()),
        ];
        assert_eq!(title_from(&pieces).as_deref(), Some("Sky Colours"));
        let reclassified = [
            Piece::Answer("thinking out loud".into()),
            Piece::Reclassify,
            Piece::Answer("Blue Sky".into()),
        ];
        assert_eq!(title_from(&reclassified).as_deref(), Some("Blue Sky"));
        let failed = [
            Piece::Answer("Half".into()),
            Piece::Error(crate::domain::Failure::new("boom", false)),
        ];
        assert_eq!(title_from(&failed), None);
    }
}
