//! What a reader attaches to a message, told from its bytes: never from its name or the type the
//! browser claims, so a page that says "image/png" over an HTML file is not believed. Only the
//! headers are read (an image's size from its first bytes, never by decoding it), so a file
//! cannot cost more to judge than its own length.

use super::event::{ErrorCode, Failure};

/// The path of the upload route, below the base path (`GET` it with `/<id>` for the file).
pub const UPLOAD_PATH: &str = "/api/attachments";

/// The longest file name kept, in characters.
pub const MAX_NAME_CHARS: usize = 255;

/// Whether an upload asks to be kept: `keep=0` asks the server only to judge it (a temporary
/// chat's file, which the page keeps and sends inside each request as a browser's history does).
pub fn to_keep(query: Option<&str>) -> bool {
    !url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .any(|(k, v)| k == "keep" && v == "0")
}

/// The name a file was sent under (`?name=` of the upload's query), as it is kept: its last
/// path segment, without control characters or the direction overrides that make
/// `photo\u{202e}gnp.exe` read as `photoexe.png`, at most [`MAX_NAME_CHARS`]; `file` when
/// nothing is left.
pub fn file_name(query: Option<&str>) -> String {
    let raw = url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == "name")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    let last = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let name: String = last
        .chars()
        .filter(|c| {
            !c.is_control() && !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .take(MAX_NAME_CHARS)
        .collect();
    match name.trim() {
        "" | "." | ".." => "file".into(),
        kept => kept.to_string(),
    }
}

pub use super::file_ref::{FileRef, Kind, SendAs};

/// A file going upstream with a reader's message, read from the store, and how it goes (decided
/// for the model before the turn starts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attached {
    pub name: String,
    pub kind: Kind,
    pub mime: String,
    pub bytes: std::sync::Arc<[u8]>,
    /// A PDF's text, read on upload: what goes when the model reads no documents.
    pub text: Option<std::sync::Arc<str>>,
    /// How the reader asked for it to go, or how it went before (kept with the message).
    pub asked: Option<SendAs>,
    pub how: SendAs,
    /// A PDF's first pages drawn as PNG images, when it goes as [`SendAs::Pages`] (drawn once
    /// the way is decided).
    pub drawn: Vec<std::sync::Arc<[u8]>>,
}

/// A file judged by its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sniffed {
    pub kind: Kind,
    /// The type it is served and sent as.
    pub mime: &'static str,
    /// An image's width and height in pixels, from its header.
    pub pixels: Option<(u32, u32)>,
}

/// How much one file may be. The defaults suit a household server; `PONDER_MAX_ATTACHMENT_BYTES`
/// and its friends change them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// One file, in bytes.
    pub file_bytes: u64,
    /// Every file of one message together.
    pub message_bytes: u64,
    /// Every file one user keeps.
    pub user_bytes: u64,
    /// An image's longer side, in pixels: a larger one is refused before anything decodes it.
    pub image_side: u32,
    /// An image whose longer side is above this is written again at this size on upload (a
    /// GIF always, as its first frame): what a model is sent and the page shows.
    pub resize_side: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file_bytes: 20 * MIB,
            message_bytes: 50 * MIB,
            user_bytes: 1024 * MIB,
            image_side: 16_384,
            resize_side: 2_048,
        }
    }
}

const MIB: u64 = 1024 * 1024;

/// The sizes of files as people read them: `20 MiB`, `512 KiB`, `900 bytes`.
pub fn readable_bytes(n: u64) -> String {
    const KIB: u64 = 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= KIB {
        format!("{} KiB", n.div_ceil(KIB))
    } else {
        format!("{n} bytes")
    }
}

/// Extensions of text files, read as UTF-8 and sent as text.
const TEXT_EXTENSIONS: &[&str] = &[
    "txt",
    "text",
    "md",
    "markdown",
    "mdx",
    "rst",
    "adoc",
    "org",
    "tex",
    "bib",
    "csv",
    "tsv",
    "json",
    "jsonl",
    "ndjson",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "env",
    "properties",
    "xml",
    "svg",
    "html",
    "htm",
    "css",
    "scss",
    "sass",
    "less",
    "log",
    "diff",
    "patch",
    "sql",
    "rs",
    "py",
    "pyi",
    "ipynb",
    "js",
    "mjs",
    "cjs",
    "ts",
    "tsx",
    "jsx",
    "vue",
    "svelte",
    "c",
    "h",
    "cc",
    "cpp",
    "cxx",
    "hpp",
    "hh",
    "m",
    "mm",
    "java",
    "kt",
    "kts",
    "scala",
    "groovy",
    "gradle",
    "go",
    "rb",
    "php",
    "pl",
    "pm",
    "lua",
    "r",
    "jl",
    "swift",
    "dart",
    "cs",
    "fs",
    "fsx",
    "vb",
    "hs",
    "ml",
    "mli",
    "ex",
    "exs",
    "erl",
    "clj",
    "cljs",
    "elm",
    "zig",
    "nim",
    "v",
    "sv",
    "vhd",
    "asm",
    "s",
    "sh",
    "bash",
    "zsh",
    "fish",
    "ps1",
    "bat",
    "cmd",
    "nix",
    "dockerfile",
    "make",
    "cmake",
    "proto",
    "graphql",
    "gql",
    "tf",
    "hcl",
    "lock",
];

const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "jpe", "webp", "gif"];

/// The extension of `name`, lower case, if it has one.
fn extension(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let (stem, ext) = base.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Judges `bytes`, named `name` by the reader, against `limits`: its kind from its contents, or
/// the refusal the reader is shown (each names the file).
pub fn sniff(name: &str, bytes: &[u8], limits: &Limits) -> Result<Sniffed, Failure> {
    let refuse = |code: ErrorCode| Failure::of(code, false).with("name", name);
    if bytes.len() as u64 > limits.file_bytes {
        return Err(
            refuse(ErrorCode::AttachmentTooLarge).with("limit", readable_bytes(limits.file_bytes))
        );
    }
    if bytes.is_empty() {
        return Err(refuse(ErrorCode::AttachmentEmpty));
    }
    if let Some(found) = image(bytes) {
        let (mime, pixels) = found.map_err(|()| refuse(ErrorCode::AttachmentDamaged))?;
        let (w, h) = pixels;
        if w == 0 || h == 0 {
            return Err(refuse(ErrorCode::AttachmentDamaged));
        }
        if w.max(h) > limits.image_side {
            return Err(refuse(ErrorCode::ImageTooLarge)
                .with("width", w)
                .with("height", h)
                .with("limit", limits.image_side));
        }
        return Ok(Sniffed {
            kind: Kind::Image,
            mime,
            pixels: Some(pixels),
        });
    }
    if is_heif(bytes) {
        return Err(refuse(ErrorCode::AttachmentHeic));
    }
    if is_pdf(bytes) {
        return Ok(Sniffed {
            kind: Kind::Pdf,
            mime: "application/pdf",
            pixels: None,
        });
    }
    let ext = extension(name);
    let named_text = match ext.as_deref() {
        Some(ext) => TEXT_EXTENSIONS.contains(&ext),
        None => true,
    };
    if named_text && is_text(bytes) {
        return Ok(Sniffed {
            kind: Kind::Text,
            mime: text_mime(ext.as_deref()),
            pixels: None,
        });
    }
    let named_kind = ext
        .as_deref()
        .is_some_and(|e| named_text || IMAGE_EXTENSIONS.contains(&e) || e == "pdf");
    Err(refuse(if named_kind {
        ErrorCode::AttachmentMisnamed
    } else {
        ErrorCode::AttachmentUnsupported
    }))
}

fn text_mime(ext: Option<&str>) -> &'static str {
    match ext {
        Some("md" | "markdown" | "mdx") => "text/markdown; charset=utf-8",
        Some("csv") => "text/csv; charset=utf-8",
        Some("json" | "jsonl" | "ndjson" | "ipynb") => "application/json",
        _ => "text/plain; charset=utf-8",
    }
}

/// UTF-8 (a byte-order mark allowed) without NUL: what a text file is.
fn is_text(bytes: &[u8]) -> bool {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    !body.contains(&0) && std::str::from_utf8(body).is_ok()
}

/// PDF readers take the header anywhere in the first kilobyte.
fn is_pdf(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(1024)]
        .windows(5)
        .any(|w| w == b"%PDF-")
}

/// HEIC and the other HEIF photos (and AVIF): an ISO box `ftyp` with one of their brands.
fn is_heif(bytes: &[u8]) -> bool {
    bytes.get(4..8) == Some(b"ftyp")
        && bytes.get(8..12).is_some_and(|brand| {
            [
                b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif",
                b"avis",
            ]
            .iter()
            .any(|b| brand == *b)
        })
}

type Found = Result<(&'static str, (u32, u32)), ()>;

/// An image's type and size, when `bytes` start as one of the kinds Ponder sends (`Err` when
/// they start as one but its header is cut or broken).
fn image(bytes: &[u8]) -> Option<Found> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(png(bytes).map(|p| ("image/png", p)).ok_or(()));
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(jpeg(bytes).map(|p| ("image/jpeg", p)).ok_or(()));
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        let size = (le16(bytes, 6), le16(bytes, 8));
        return Some(match size {
            (Some(w), Some(h)) => Ok(("image/gif", (w, h))),
            _ => Err(()),
        });
    }
    if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        return Some(webp(bytes).map(|p| ("image/webp", p)).ok_or(()));
    }
    None
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes(
        b.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn png(b: &[u8]) -> Option<(u32, u32)> {
    (b.get(12..16)? == b"IHDR").then_some(())?;
    Some((be32(b, 16)?, be32(b, 20)?))
}

/// The size from the first start-of-frame marker; each step moves forward, so the walk ends.
fn jpeg(b: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        while *b.get(at)? == 0xFF && b.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        if *b.get(at)? != 0xFF {
            return None;
        }
        let marker = *b.get(at + 1)?;
        at += 2;
        match marker {
            0xD0..=0xD7 | 0x01 => continue,
            0xD9 | 0xDA => return None,
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                return Some((be16(b, at + 5)?, be16(b, at + 3)?));
            }
            _ => {
                let len = be16(b, at)? as usize;
                if len < 2 {
                    return None;
                }
                at += len;
            }
        }
    }
}

fn webp(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8 " => {
            (b.get(23..26)? == [0x9D, 0x01, 0x2A]).then_some(())?;
            Some((le16(b, 26)? & 0x3FFF, le16(b, 28)? & 0x3FFF))
        }
        b"VP8L" => {
            (*b.get(20)? == 0x2F).then_some(())?;
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => Some((le24(b, 24)? + 1, le24(b, 27)? + 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(w: u32, h: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(w.to_be_bytes());
        b.extend(h.to_be_bytes());
        b.extend([8, 6, 0, 0, 0]);
        b
    }

    fn code(r: Result<Sniffed, Failure>) -> ErrorCode {
        match r {
            Ok(s) => panic!("accepted: {s:?}"),
            Err(f) => f.code,
        }
    }

    #[test]
    fn the_bytes_decide_never_the_name() {
        let l = Limits::default();
        let png = sniff("notes.txt", &png_of(640, 480), &l).unwrap();
        assert_eq!(
            (png.kind, png.mime, png.pixels),
            (Kind::Image, "image/png", Some((640, 480)))
        );
        assert_eq!(
            code(sniff(
                "cat.png",
                b"<!doctype html><script>alert(1)</script>",
                &l
            )),
            ErrorCode::AttachmentMisnamed,
            "an HTML page named .png is no image"
        );
        assert_eq!(
            code(sniff("setup.exe", b"MZ\x90\0\x03\0\0\0", &l)),
            ErrorCode::AttachmentUnsupported
        );
        assert_eq!(
            code(sniff("data.txt", b"PK\x03\x04\0\0binary", &l)),
            ErrorCode::AttachmentMisnamed
        );
        let pdf = sniff("paper", b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n", &l).unwrap();
        assert_eq!((pdf.kind, pdf.mime), (Kind::Pdf, "application/pdf"));
        let md = sniff("README.md", "# Título\n".as_bytes(), &l).unwrap();
        assert_eq!(
            (md.kind, md.mime),
            (Kind::Text, "text/markdown; charset=utf-8")
        );
        assert_eq!(
            sniff("Makefile", b"all:\n\ttrue\n", &l).unwrap().kind,
            Kind::Text
        );
        assert_eq!(
            sniff(".bashrc", b"alias ll='ls -l'\n", &l).unwrap().kind,
            Kind::Text
        );
        assert_eq!(
            sniff("main.rs", b"\xEF\xBB\xBFfn main() {}", &l)
                .unwrap()
                .kind,
            Kind::Text
        );
        assert_eq!(
            code(sniff("latin1.txt", b"caf\xE9", &l)),
            ErrorCode::AttachmentMisnamed,
            "not UTF-8"
        );
    }

    #[test]
    fn each_image_kind_gives_its_size_from_its_header() {
        let l = Limits::default();
        let gif = sniff("a.gif", b"GIF89a\x40\x01\xF0\x00\x80\0\0", &l).unwrap();
        assert_eq!((gif.mime, gif.pixels), ("image/gif", Some((320, 240))));
        let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0];
        jpeg.extend([0xFF, 0xC2, 0, 11, 8, 0x01, 0xE0, 0x02, 0x80, 3]);
        let jpeg = sniff("a.jpg", &jpeg, &l).unwrap();
        assert_eq!((jpeg.mime, jpeg.pixels), ("image/jpeg", Some((640, 480))));
        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        vp8x.extend([0x7F, 0x02, 0x00, 0xDF, 0x01, 0x00]);
        let webp = sniff("a.webp", &vp8x, &l).unwrap();
        assert_eq!((webp.mime, webp.pixels), ("image/webp", Some((640, 480))));
        let mut vp8l = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2F".to_vec();
        vp8l.extend(((639u32) | (479u32 << 14)).to_le_bytes());
        assert_eq!(sniff("b.webp", &vp8l, &l).unwrap().pixels, Some((640, 480)));
        let mut vp8 = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0\0\0\0\x9D\x01\x2A".to_vec();
        vp8.extend([0x80, 0x02, 0xE0, 0x01]);
        assert_eq!(sniff("c.webp", &vp8, &l).unwrap().pixels, Some((640, 480)));
    }

    #[test]
    fn what_cannot_be_sent_is_refused_by_name_with_its_reason() {
        let l = Limits {
            file_bytes: 64,
            ..Limits::default()
        };
        let big = sniff("big.txt", &[b'a'; 65], &l).unwrap_err();
        assert_eq!(big.code, ErrorCode::AttachmentTooLarge);
        assert_eq!(
            (big.param("name"), big.param("limit")),
            ("big.txt", "64 bytes")
        );
        assert_eq!(code(sniff("e.txt", b"", &l)), ErrorCode::AttachmentEmpty);
        let heic = b"\0\0\0\x18ftypheic\0\0\0\0mif1heic";
        assert_eq!(
            code(sniff("IMG_0001.HEIC", heic, &l)),
            ErrorCode::AttachmentHeic
        );
        let wide = sniff("wide.png", &png_of(60_000, 10), &Limits::default()).unwrap_err();
        assert_eq!(wide.code, ErrorCode::ImageTooLarge);
        assert_eq!(
            (wide.param("width"), wide.param("limit")),
            ("60000", "16384")
        );
        assert_eq!(
            code(sniff("cut.png", &png_of(1, 1)[..14], &l)),
            ErrorCode::AttachmentDamaged
        );
        assert_eq!(
            code(sniff("zero.png", &png_of(0, 5), &l)),
            ErrorCode::AttachmentDamaged
        );
        assert_eq!(
            code(sniff("loop.jpg", &[0xFF, 0xD8, 0xFF, 0xE0, 0, 0], &l)),
            ErrorCode::AttachmentDamaged,
            "a segment that does not move the walk forward"
        );
    }

    #[test]
    fn a_walk_over_any_bytes_ends() {
        let l = Limits::default();
        let mut seed = 0x2545_F491_u32;
        for _ in 0..2000 {
            let mut b = vec![0xFF, 0xD8, 0xFF];
            for _ in 0..64 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                b.push((seed & 0xFF) as u8);
            }
            match sniff("x.jpg", &b, &l) {
                Ok(s) => assert_eq!(s.mime, "image/jpeg"),
                Err(f) => assert!(
                    matches!(
                        f.code,
                        ErrorCode::AttachmentDamaged | ErrorCode::ImageTooLarge
                    ),
                    "{f:?}"
                ),
            }
        }
    }

    #[test]
    fn a_file_keeps_its_last_segment_without_control_characters() {
        assert_eq!(file_name(Some("name=report%20Q3.pdf")), "report Q3.pdf");
        assert_eq!(file_name(Some("name=a+b.txt")), "a b.txt");
        assert_eq!(file_name(Some("x=1&name=..%2F..%2Fetc%2Fpasswd")), "passwd");
        assert_eq!(file_name(Some("name=a%0Ab%00.txt")), "ab.txt");
        assert_eq!(
            file_name(Some("name=photo%E2%80%AEgnp.exe")),
            "photognp.exe"
        );
        assert_eq!(file_name(Some("name=..")), "file");
        assert_eq!(file_name(None), "file");
        assert_eq!(
            file_name(Some(&format!("name={}", "x".repeat(400)))).len(),
            MAX_NAME_CHARS
        );
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(readable_bytes(20 * MIB), "20 MiB");
        assert_eq!(readable_bytes(3 * MIB / 2), "1.5 MiB");
        assert_eq!(readable_bytes(1000), "1000 bytes");
        assert_eq!(readable_bytes(1500), "2 KiB");
    }
}
