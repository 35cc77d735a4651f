//! A turn's files made ready for the upstream: the ones a request carries inside it (a client
//! that keeps its own history) judged and read as an upload is, then, for every message, the
//! way each file goes decided and a PDF's pages drawn where they go as images. Refusals come
//! before the turn starts, with the status their code carries.

use base64::Engine;

use crate::domain::attachment::{readable_bytes, sniff, Attached, SendAs};
use crate::domain::{ChatMessage, ErrorCode, Failure};
use crate::server::config::Config;
use crate::server::state::AppState;

/// The longer side of a PDF page drawn as an image, in pixels: what the providers read
/// without scaling it down again (Anthropic's advice is at most 1568).
const PAGE_SIDE: u32 = 1536;

/// Turns each message's `inline` files into its files: decoded, each within
/// `PONDER_MAX_ATTACHMENT_BYTES` and all of them within `PONDER_MAX_MESSAGE_ATTACHMENT_BYTES`,
/// judged by their bytes, a PDF's text read and a large image made smaller in the bounded
/// child process, as on upload. Nothing is kept.
pub async fn take_inline(config: &Config, messages: &mut [ChatMessage]) -> Result<(), Failure> {
    let limits = config.attachments;
    let mut total: u64 = 0;
    for message in messages.iter_mut() {
        for file in std::mem::take(&mut message.inline) {
            let unreadable =
                || Failure::of(ErrorCode::AttachmentUnreadable, false).with("name", &file.name);
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(file.data.trim().as_bytes())
                .map_err(|_| unreadable())?;
            total = total.saturating_add(bytes.len() as u64);
            if total > limits.message_bytes {
                return Err(Failure::of(ErrorCode::AttachmentsTooLarge, false)
                    .with("limit", readable_bytes(limits.message_bytes)));
            }
            let mut sniffed = sniff(&file.name, &bytes, &limits)?;
            let (bytes, contents) =
                crate::server::extract::read_inside(config, &file.name, &mut sniffed, bytes)
                    .await?;
            message.files.push(Attached {
                name: file.name,
                kind: sniffed.kind,
                mime: sniffed.mime.into(),
                bytes: bytes.into(),
                text: contents.pdf.map(|(_, text)| text.into()),
                asked: file.send_as,
                how: SendAs::Text,
                drawn: Vec::new(),
            });
        }
    }
    Ok(())
}

/// Decides how each file of `history` goes to `model` (refusing one it cannot take) and draws
/// the pages of each PDF that goes as page images.
pub async fn prepare(
    state: &AppState,
    model: &str,
    history: &mut [ChatMessage],
) -> Result<(), Failure> {
    let config = &state.config;
    let takes = crate::server::providers::files::takes(config, model, state.models.reads(model));
    for message in history.iter_mut().filter(|m| !m.files.is_empty()) {
        crate::server::providers::files::plan(
            &mut message.files,
            config.provider,
            takes,
            config.pdf_renderer.is_some(),
            model,
        )?;
        draw_pages(config, &mut message.files).await?;
    }
    Ok(())
}

/// Draws the pages of each PDF that goes as page images (in a child process, bounded like
/// every reading of a reader's file).
async fn draw_pages(config: &Config, files: &mut [Attached]) -> Result<(), Failure> {
    let Some(renderer) = &config.pdf_renderer else {
        return Ok(());
    };
    for f in files.iter_mut().filter(|f| f.how == SendAs::Pages) {
        let pages = crate::server::extract::pdf_pages(
            &config.file_reader,
            renderer,
            &f.name,
            &f.bytes,
            PAGE_SIDE,
        )
        .await?;
        f.drawn = pages.into_iter().map(|p| p.bytes.into()).collect();
    }
    Ok(())
}
