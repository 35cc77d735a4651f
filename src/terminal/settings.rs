//! The terminal client's own small config file: the thinking mode the reader chose, kept across
//! runs (`$PONDER_CHAT_CONFIG`, else `$XDG_CONFIG_HOME/ponder/chat.json`, else
//! `~/.config/ponder/chat.json`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::view::Mode;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct File {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<String>,
    /// Fields a later version writes are kept.
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

/// Where the file lives.
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PONDER_CHAT_CONFIG") {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("ponder").join("chat.json"))
}

/// The mode kept in the file at `path`; a missing or unreadable file gives the default (and a
/// note saying why, for a file that exists but cannot be read).
pub fn load_mode(path: Option<&std::path::Path>) -> (Mode, Option<String>) {
    let Some(path) = path else {
        return (Mode::default(), None);
    };
    let raw = match std::fs::read_to_string(path) {
        Ok(raw) => raw,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Mode::default(), None),
        Err(e) => {
            return (
                Mode::default(),
                Some(format!("{} could not be read ({e})", path.display())),
            )
        }
    };
    match serde_json::from_str::<File>(&raw) {
        Ok(file) => (
            file.mode
                .as_deref()
                .and_then(Mode::from_key)
                .unwrap_or_default(),
            None,
        ),
        Err(e) => (
            Mode::default(),
            Some(format!(
                "{} is not valid JSON ({e}); it is left as it is until the mode changes",
                path.display()
            )),
        ),
    }
}

/// Keeps `mode` in the file at `path`, with whatever else it holds.
pub fn save_mode(path: &std::path::Path, mode: Mode) -> Result<(), String> {
    let mut file = std::fs::read_to_string(path)
        .ok()
        .and_then(|raw| serde_json::from_str::<File>(&raw).ok())
        .unwrap_or_default();
    file.mode = Some(mode.key().to_string());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let json = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    let partial = path.with_extension("json.tmp");
    std::fs::write(&partial, json + "\n").map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ponder-chat-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("ponder").join("chat.json")
    }

    #[test]
    fn the_mode_is_kept_across_runs_with_the_rest_of_the_file() {
        let path = temp("keep");
        assert_eq!(load_mode(Some(&path)), (Mode::Overview, None));
        save_mode(&path, Mode::Detail).expect("save");
        assert_eq!(load_mode(Some(&path)).0, Mode::Detail);
        std::fs::write(&path, r#"{"mode":"detail","later":{"x":1}}"#).expect("write");
        save_mode(&path, Mode::Overview).expect("save again");
        let raw = std::fs::read_to_string(&path).expect("read");
        assert!(raw.contains("\"later\""), "{raw}");
        assert_eq!(load_mode(Some(&path)).0, Mode::Overview);
    }

    #[test]
    fn a_corrupt_file_gives_the_default_and_says_so() {
        let path = temp("corrupt");
        std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
        std::fs::write(&path, "{not json").expect("write");
        let (mode, note) = load_mode(Some(&path));
        assert_eq!(mode, Mode::Overview);
        assert!(note.is_some_and(|n| n.contains("not valid JSON")));
        assert_eq!(
            std::fs::read_to_string(&path).expect("kept"),
            "{not json",
            "nothing is lost"
        );
    }
}
