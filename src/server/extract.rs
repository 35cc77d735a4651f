//! What is inside a reader's PDF or a large image, read in a process of its own: the server
//! runs itself again (`ponder extract-pdf`, `ponder shrink-image`) with the file on stdin, and
//! the child limits its own memory and CPU time before it reads a byte. A decompression bomb, a
//! page tree of a billion pages, a parser's panic or a loop end that child, never the server;
//! the server waits a bounded time and kills it past that. What the child writes is one JSON
//! object, read with a size limit.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::domain::attachment::{Kind, Sniffed};
use crate::domain::{ErrorCode, Failure};

/// The subcommand that reads a PDF's text.
pub const PDF_COMMAND: &str = "extract-pdf";
/// The subcommand that decodes an image and writes it again, smaller.
pub const IMAGE_COMMAND: &str = "shrink-image";
/// The subcommand that draws a PDF's first pages as PNG images (with Poppler's `pdftoppm`,
/// which inherits the child's limits).
pub const PAGES_COMMAND: &str = "pdf-pages";
/// The most pages of one PDF sent as images (a model's context holds few more).
pub const MAX_PAGE_IMAGES: u32 = 20;

/// The most memory a child may map, in bytes.
const CHILD_MEMORY: u64 = 768 * 1024 * 1024;
/// The most CPU time a child may use, in seconds.
const CHILD_CPU_SECS: u64 = 20;
/// How long the server waits for a child.
const CHILD_WAIT: Duration = Duration::from_secs(30);
/// The most text kept of one PDF, in bytes (a model's context is smaller still).
const MAX_PDF_TEXT: usize = 4 * 1024 * 1024;
/// The most a child may write back.
const MAX_CHILD_OUTPUT: u64 = 64 * 1024 * 1024;

/// A PDF's pages and their text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PdfText {
    pub pages: u32,
    pub text: String,
}

/// An image written again: its bytes, type and size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shrunk {
    #[serde(with = "base64_bytes")]
    pub bytes: Vec<u8>,
    pub mime: String,
    pub width: u32,
    pub height: u32,
}

mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}

/// The text of the PDF `bytes` (named `name`, for the refusal), read by `program`.
pub async fn pdf_text(program: &Path, name: &str, bytes: &[u8]) -> Result<PdfText, Failure> {
    let out = run(program, PDF_COMMAND, &[], bytes).await;
    out.and_then(|o| serde_json::from_slice(&o).ok())
        .ok_or_else(|| Failure::of(ErrorCode::AttachmentUnreadable, false).with("name", name))
}

/// The image `bytes` with its longer side at most `side`, read by `program`.
pub async fn shrink_image(
    program: &Path,
    name: &str,
    bytes: &[u8],
    side: u32,
) -> Result<Shrunk, Failure> {
    let out = run(program, IMAGE_COMMAND, &[side.to_string()], bytes).await;
    out.and_then(|o| serde_json::from_slice(&o).ok())
        .ok_or_else(|| Failure::of(ErrorCode::AttachmentUnreadable, false).with("name", name))
}

/// The first [`MAX_PAGE_IMAGES`] pages of the PDF `bytes` as PNG images, their longer side
/// `side`, drawn by `renderer` in a child of `program`.
pub async fn pdf_pages(
    program: &Path,
    renderer: &Path,
    name: &str,
    bytes: &[u8],
    side: u32,
) -> Result<Vec<Shrunk>, Failure> {
    let args = [renderer.display().to_string(), side.to_string()];
    let out = run(program, PAGES_COMMAND, &args, bytes).await;
    out.and_then(|o| serde_json::from_slice::<Vec<Shrunk>>(&o).ok())
        .filter(|pages| !pages.is_empty())
        .ok_or_else(|| Failure::of(ErrorCode::AttachmentUnreadable, false).with("name", name))
}

/// What was read from inside a file on upload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contents {
    /// A PDF's page count and text.
    pub pdf: Option<(u32, String)>,
    /// The image was written again (the bytes kept are the new ones).
    pub reencoded: bool,
}

/// What is inside the file, read by the server's child process: a PDF's pages and text; an
/// image above `PONDER_RESIZE_IMAGES_ABOVE` on its longer side (a GIF always, for its first
/// frame) written again smaller, which then stands for the file.
pub async fn read_inside(
    config: &crate::server::config::Config,
    name: &str,
    sniffed: &mut Sniffed,
    bytes: Vec<u8>,
) -> Result<(Vec<u8>, Contents), Failure> {
    let reader = &config.file_reader;
    match sniffed.kind {
        Kind::Pdf => {
            let read = pdf_text(reader, name, &bytes).await?;
            let contents = Contents {
                pdf: Some((read.pages, read.text)),
                reencoded: false,
            };
            Ok((bytes, contents))
        }
        Kind::Image => {
            let side = config.attachments.resize_side;
            let large = sniffed.pixels.is_some_and(|(w, h)| w.max(h) > side);
            if !large && sniffed.mime != "image/gif" {
                return Ok((bytes, Contents::default()));
            }
            let shrunk = shrink_image(reader, name, &bytes, side).await?;
            sniffed.mime = if shrunk.mime == "image/jpeg" {
                "image/jpeg"
            } else {
                "image/png"
            };
            sniffed.pixels = Some((shrunk.width, shrunk.height));
            let contents = Contents {
                pdf: None,
                reencoded: true,
            };
            Ok((shrunk.bytes, contents))
        }
        Kind::Text => Ok((bytes, Contents::default())),
    }
}

/// Runs `program command args…` with `input` on stdin; its stdout when it ends well in time.
async fn run(program: &Path, command: &str, args: &[String], input: &[u8]) -> Option<Vec<u8>> {
    let mut child = tokio::process::Command::new(program)
        .arg(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| tracing::warn!(error = %e, "the file reader could not start"))
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let mut stdout = child.stdout.take()?;
    let input = input.to_vec();
    let work = async move {
        let writing = async move {
            let _ = stdin.write_all(&input).await;
            drop(stdin);
        };
        let mut out = Vec::new();
        let mut limited = (&mut stdout).take(MAX_CHILD_OUTPUT);
        let reading = limited.read_to_end(&mut out);
        let ((), read) = tokio::join!(writing, reading);
        read.ok()?;
        let status = child.wait().await.ok()?;
        status.success().then_some(out)
    };
    match tokio::time::timeout(CHILD_WAIT, work).await {
        Ok(out) => out,
        Err(_) => {
            tracing::warn!(command, "a file took too long to read and was given up");
            None
        }
    }
}

/// The child's side of `ponder extract-pdf` and `ponder shrink-image SIDE`: limits itself,
/// reads the file from stdin, writes what it found as JSON; the exit code says whether it did.
pub fn child_main(command: &str, args: &[String]) -> i32 {
    limit_self();
    let mut input = Vec::new();
    if std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut input).is_err() {
        return 1;
    }
    let out = match command {
        PDF_COMMAND => read_pdf(&input).and_then(|t| serde_json::to_vec(&t).ok()),
        IMAGE_COMMAND => args
            .first()
            .and_then(|s| s.parse::<u32>().ok())
            .and_then(|side| shrink(&input, side))
            .and_then(|s| serde_json::to_vec(&s).ok()),
        PAGES_COMMAND => match args {
            [renderer, side] => side
                .parse::<u32>()
                .ok()
                .and_then(|side| draw_pages(&input, Path::new(renderer), side))
                .and_then(|p| serde_json::to_vec(&p).ok()),
            _ => None,
        },
        _ => None,
    };
    match out {
        Some(out) => match std::io::Write::write_all(&mut std::io::stdout().lock(), &out) {
            Ok(()) => 0,
            Err(_) => 1,
        },
        None => 1,
    }
}

/// Caps this process's address space and CPU time (Linux; elsewhere the server's wait is the
/// only bound).
fn limit_self() {
    #[cfg(target_os = "linux")]
    for (resource, limit) in [
        (libc::RLIMIT_AS, CHILD_MEMORY),
        (libc::RLIMIT_CPU, CHILD_CPU_SECS),
    ] {
        let cap = libc::rlimit {
            rlim_cur: limit as libc::rlim_t,
            rlim_max: limit as libc::rlim_t,
        };
        // SAFETY: `cap` is a valid rlimit for the call's duration; setrlimit reads it only.
        unsafe {
            libc::setrlimit(resource, &cap);
        }
    }
}

/// The first [`MAX_PAGE_IMAGES`] pages of a PDF drawn by `renderer` (Poppler's `pdftoppm`)
/// as PNG images whose longer side is `side`, in a folder of this process's own that is
/// removed after; `None` when none could be drawn.
pub fn draw_pages(bytes: &[u8], renderer: &Path, side: u32) -> Option<Vec<Shrunk>> {
    let dir = std::env::temp_dir().join(format!(
        "ponder-pages-{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir(&dir).ok()?;
    let drawn = (|| {
        std::fs::write(dir.join("in.pdf"), bytes).ok()?;
        let status = std::process::Command::new(renderer)
            .args(["-png", "-scale-to"])
            .arg(side.to_string())
            .args(["-f", "1", "-l"])
            .arg(MAX_PAGE_IMAGES.to_string())
            .args(["in.pdf", "page"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        let mut names: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "png"))
            .collect();
        names.sort();
        let pages: Vec<Shrunk> = names
            .iter()
            .filter_map(|p| {
                let bytes = std::fs::read(p).ok()?;
                let (width, height) = png_size(&bytes)?;
                Some(Shrunk {
                    bytes,
                    mime: "image/png".into(),
                    width,
                    height,
                })
            })
            .collect();
        (status.success() || !pages.is_empty()).then_some(pages)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    drawn.filter(|p| !p.is_empty())
}

/// A PNG's width and height, from its header.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let be = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    bytes
        .starts_with(b"\x89PNG\r\n\x1a\n")
        .then(|| Some((be(16)?, be(20)?)))
        .flatten()
}

/// A PDF's pages and their text, at most [`MAX_PDF_TEXT`] of it; `None` for one that does not
/// read or has no page.
pub fn read_pdf(bytes: &[u8]) -> Option<PdfText> {
    let pages = pdf_extract::extract_text_from_mem_by_pages(bytes).ok()?;
    // A page tree that leads nowhere (a loop claiming a billion pages) has none to read.
    if pages.is_empty() {
        return None;
    }
    let mut text = String::new();
    for (n, page) in pages.iter().enumerate() {
        if text.len() >= MAX_PDF_TEXT {
            break;
        }
        if n > 0 {
            text.push_str("\n\n");
        }
        text.push_str(page.trim());
    }
    if text.len() > MAX_PDF_TEXT {
        let mut end = MAX_PDF_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    Some(PdfText {
        pages: u32::try_from(pages.len()).unwrap_or(u32::MAX),
        text,
    })
}

/// An image decoded (within the `image` crate's memory limits) and written again with its
/// longer side at most `side`: a JPEG as JPEG, anything else as PNG (a GIF's first frame).
pub fn shrink(bytes: &[u8], side: u32) -> Option<Shrunk> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(CHILD_MEMORY / 2);
    reader.limits(limits);
    let format = reader.format()?;
    let decoded = reader.decode().ok()?;
    let fitted = if decoded.width().max(decoded.height()) > side {
        decoded.resize(side, side, image::imageops::FilterType::Triangle)
    } else {
        decoded
    };
    let (out_format, mime) = match format {
        image::ImageFormat::Jpeg => (image::ImageFormat::Jpeg, "image/jpeg"),
        _ => (image::ImageFormat::Png, "image/png"),
    };
    let fitted = match out_format {
        image::ImageFormat::Jpeg => image::DynamicImage::ImageRgb8(fitted.to_rgb8()),
        _ => fitted,
    };
    let mut out = std::io::Cursor::new(Vec::new());
    fitted.write_to(&mut out, out_format).ok()?;
    Some(Shrunk {
        bytes: out.into_inner(),
        mime: mime.into(),
        width: fitted.width(),
        height: fitted.height(),
    })
}
