//! Files from the terminal: `/attach PATH` in `ponder chat` (Tab completes the path) and
//! `ponder ask --file PATH` upload a file to the server, which keeps it and sends it with the
//! next message, as the page's paper clip does. `--as document|text|image` before the path
//! asks how it goes, as the page's tray does for a PDF. What a command says and what a path completes
//! to are decided here without I/O; reading the disk and the upload are the thin shells.

use std::path::{Path, PathBuf};

use super::client::{refusal, unreachable_server, Server};
use super::error::ClientError;
use crate::domain::attachment::{readable_bytes, FileRef, SendAs, UPLOAD_PATH};
use crate::domain::wire::WireName as _;

/// The command that attaches a file.
pub const ATTACH: &str = "/attach";
/// The command that drops the files attached so far.
pub const DETACH: &str = "/detach";

/// The largest file the terminal reads to send (the server's own limit is usually lower and
/// answers with its reason).
const MAX_READ_BYTES: u64 = 256 * 1024 * 1024;

/// What a line typed in `ponder chat` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `/attach [--as WAY] PATH`: the file, and how the reader asked it to go (none: as the
    /// model reads it).
    Attach(PathBuf, Option<SendAs>),
    /// `/detach`.
    Detach,
    /// An `/attach` whose `--as` names no way a file goes.
    UnknownWay(String),
}

/// The command a typed line is, if it is one (`/attach` needs a path).
pub fn command(line: &str) -> Option<Command> {
    let line = line.trim();
    if line == DETACH {
        return Some(Command::Detach);
    }
    let rest = line.strip_prefix(ATTACH)?.strip_prefix(' ')?.trim();
    let (way, path) = match rest.strip_prefix("--as ") {
        Some(asked) => {
            let (way, path) = asked.trim_start().split_once(' ')?;
            match way_named(way) {
                Some(way) => (way, path.trim()),
                None => return Some(Command::UnknownWay(way.to_string())),
            }
        }
        None => (None, rest),
    };
    (!path.is_empty()).then(|| Command::Attach(expand_home(path), way))
}

/// The way `--as` names (as the page's tray offers for a PDF): `model` for as the model reads
/// it, `document` for the provider's document input, `text` for the text read from it, `pages`
/// for its first pages drawn as images; `None` when it names none of them.
pub fn way_named(name: &str) -> Option<Option<SendAs>> {
    match SendAs::from_wire_name(name) {
        _ if name == "model" => Some(None),
        Some(way @ (SendAs::Document | SendAs::Text | SendAs::Pages)) => Some(Some(way)),
        _ => None,
    }
}

/// The ways `--as` takes, for a usage line.
pub const WAYS: &str = "model|document|text|pages";

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The line `/attach PATH` with PATH completed as far as the entries of its folder agree:
/// `list` gives the names in a folder and whether each is a folder (which gets its `/`).
/// `None` when the line is not an `/attach` or nothing completes it further.
pub fn complete(line: &str, list: impl FnOnce(&Path) -> Vec<(String, bool)>) -> Option<String> {
    let typed = line.strip_prefix(ATTACH)?.strip_prefix(' ')?;
    let (folder, start) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let read_from = match folder {
        "" => PathBuf::from("."),
        f => expand_home(f),
    };
    let matches: Vec<(String, bool)> = list(&read_from)
        .into_iter()
        .filter(|(name, _)| {
            name.starts_with(start) && (start.starts_with('.') || !name.starts_with('.'))
        })
        .collect();
    let (first, _) = matches.first()?;
    let mut common = first.clone();
    for (name, _) in &matches[1..] {
        let same = common
            .char_indices()
            .zip(name.chars())
            .find(|((_, a), b)| a != b)
            .map_or(common.len().min(name.len()), |((i, _), _)| i);
        common.truncate(same);
    }
    if let [(name, true)] = matches.as_slice() {
        common = format!("{name}/");
    }
    (common.len() > start.len()).then(|| format!("{ATTACH} {folder}{common}"))
}

/// The names in `folder` and whether each is a folder (nothing when it cannot be read).
pub fn entries(folder: &Path) -> Vec<(String, bool)> {
    let Ok(read) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut names: Vec<(String, bool)> = read
        .filter_map(Result::ok)
        .map(|e| {
            let folder = e.file_type().is_ok_and(|t| t.is_dir());
            (e.file_name().to_string_lossy().into_owned(), folder)
        })
        .collect();
    names.sort();
    names
}

/// A file as its chip says it: `photo.png · 2 KiB · Image`, and how it went once known.
pub fn chip(f: &FileRef) -> String {
    let about = crate::client::labels::file_about(
        f.size,
        Some(f.kind),
        f.pages,
        f.sent_as,
        super::locale(),
    );
    format!("{} · {about}", f.name)
}

/// A file waiting for the next message: its chip, and the way the reader asked for, if any
/// (`paper.pdf · 2 KiB · PDF → As its text`).
pub fn waiting_chip(f: &FileRef, asked: Option<SendAs>) -> String {
    let c = super::locale().catalogue();
    match asked {
        None => chip(f),
        Some(way) => {
            let way = match way {
                SendAs::Document => c.as_document,
                SendAs::Text => c.as_text,
                SendAs::Pages => c.as_pages,
                SendAs::Image => c.sent_as_image,
            };
            format!("{} → {way}", chip(f))
        }
    }
}

impl Server {
    /// Uploads the file at `path` (`POST /api/attachments`); the server judges and keeps it.
    pub async fn upload(&self, path: &Path) -> Result<FileRef, ClientError> {
        let unreadable = |e: &dyn std::fmt::Display| {
            ClientError::Usage(format!("{} could not be read: {e}", path.display()))
        };
        let size = tokio::fs::metadata(path)
            .await
            .map_err(|e| unreadable(&e))?
            .len();
        if size > MAX_READ_BYTES {
            return Err(unreadable(&format!(
                "it is larger than {}",
                readable_bytes(MAX_READ_BYTES)
            )));
        }
        let bytes = tokio::fs::read(path).await.map_err(|e| unreadable(&e))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut request = self
            .http()
            .post(format!("{}{UPLOAD_PATH}", self.base()))
            .query(&[("name", name)])
            .header("content-type", "application/octet-stream")
            .body(bytes);
        if let Some(token) = self.token() {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|e| ClientError::Unreachable(unreachable_server(self.base(), &e)))?;
        if !response.status().is_success() {
            return Err(ClientError::Refused(refusal(response).await));
        }
        response.json().await.map_err(|e| {
            ClientError::Unreadable(format!("the server's answer could not be read ({e})"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::attachment::{Kind, SendAs};

    #[test]
    fn a_line_is_a_command_only_in_its_own_words() {
        assert_eq!(
            command("/attach notes/a b.md "),
            Some(Command::Attach("notes/a b.md".into(), None))
        );
        assert_eq!(
            command("/attach --as text paper one.pdf"),
            Some(Command::Attach("paper one.pdf".into(), Some(SendAs::Text)))
        );
        assert_eq!(
            command("/attach --as model a.pdf"),
            Some(Command::Attach("a.pdf".into(), None))
        );
        assert_eq!(
            command("/attach --as pictures a.pdf"),
            Some(Command::UnknownWay("pictures".into()))
        );
        assert_eq!(command("/attach --as text"), None, "a way needs a path");
        assert_eq!(command(" /detach"), Some(Command::Detach));
        for not in [
            "/attach",
            "/attach   ",
            "/attachment x",
            "attach x",
            "what is /attach x?",
        ] {
            assert_eq!(command(not), None, "{not}");
        }
    }

    #[test]
    fn tab_completes_a_path_as_far_as_its_folder_agrees() {
        let folder = |_: &Path| {
            vec![
                ("notes".to_string(), true),
                ("notes-old.md".to_string(), false),
                ("photo.png".to_string(), false),
                (".hidden".to_string(), false),
            ]
        };
        assert_eq!(
            complete("/attach ph", folder),
            Some("/attach photo.png".into())
        );
        assert_eq!(
            complete("/attach docs/no", folder),
            Some("/attach docs/notes".into())
        );
        assert_eq!(complete("/attach notes", folder), None);
        assert_eq!(
            complete("/attach docs/notes-", folder),
            Some("/attach docs/notes-old.md".into())
        );
        assert_eq!(complete("/attach x", folder), None);
        assert_eq!(
            complete("/attach .h", folder),
            Some("/attach .hidden".into())
        );
        assert_eq!(complete("/attach ", folder), None, "no common start");
        assert_eq!(complete("hello", folder), None);
    }

    #[test]
    fn a_lone_folder_completes_with_its_slash() {
        let list = |_: &Path| vec![("src".to_string(), true), ("README.md".to_string(), false)];
        assert_eq!(complete("/attach s", list), Some("/attach src/".into()));
    }

    #[test]
    fn the_folder_listed_is_the_one_typed() {
        let dir = std::env::temp_dir().join(format!("ponder-attach-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("inner")).unwrap();
        std::fs::write(dir.join("only-file.txt"), "x").unwrap();
        let line = format!("/attach {}/on", dir.display());
        assert_eq!(
            complete(&line, entries),
            Some(format!("/attach {}/only-file.txt", dir.display()))
        );
        let line = format!("/attach {}/in", dir.display());
        assert_eq!(
            complete(&line, entries),
            Some(format!("/attach {}/inner/", dir.display()))
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_chip_names_the_file_its_size_kind_and_how_it_went() {
        let mut f = FileRef {
            id: "f".into(),
            name: "photo.png".into(),
            kind: Kind::Image,
            size: 2048,
            pixels: Some((3, 2)),
            pages: None,
            sent_as: None,
        };
        assert_eq!(chip(&f), "photo.png · 2 KiB · Image");
        f.sent_as = Some(SendAs::Image);
        assert_eq!(chip(&f), "photo.png · 2 KiB · Image · sent as image");
    }
}
