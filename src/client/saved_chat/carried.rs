//! The files a JSON export carries: their bytes, in base64 under the record's `files` field
//! (keyed by the id each message names), so the chat keeps its files when it is imported by
//! another account or on another server. Pure: fetching the bytes and uploading them again are
//! the controller's.

use std::collections::HashMap;

use base64::Engine;
use serde_json::{Map, Value};

use super::SavedChat;
use crate::domain::attachment::FileRef;

/// The record's field that holds the files' bytes.
pub const FILES: &str = "files";

/// Each file the record's messages name, once, in the order first named.
pub fn named_files(record: &SavedChat) -> Vec<FileRef> {
    let mut seen = std::collections::BTreeSet::new();
    record
        .chat
        .messages
        .iter()
        .flat_map(|m| &m.versions)
        .flat_map(|v| &v.files)
        .filter(|f| seen.insert(f.id.clone()))
        .cloned()
        .collect()
}

/// Puts the bytes of each file (by id) into the record.
pub fn carry(record: &mut SavedChat, bytes: Vec<(String, Vec<u8>)>) {
    if bytes.is_empty() {
        return;
    }
    let files: Map<String, Value> = bytes
        .into_iter()
        .map(|(id, b)| {
            let data = base64::engine::general_purpose::STANDARD.encode(b);
            (id, Value::String(data))
        })
        .collect();
    record.extra.insert(FILES.into(), Value::Object(files));
}

/// Puts files already in base64 (by id) into the record, in place of any it carried.
pub fn carry_base64(record: &mut SavedChat, files: Vec<(String, String)>) {
    if files.is_empty() {
        record.extra.remove(FILES);
        return;
    }
    let files: Map<String, Value> = files
        .into_iter()
        .map(|(id, data)| (id, Value::String(data)))
        .collect();
    record.extra.insert(FILES.into(), Value::Object(files));
}

/// The files (in base64, by id, in the order given) while they fit `cap` bytes together; the
/// first that does not fit and every one after it are left out.
pub fn within(
    files: impl IntoIterator<Item = (String, String)>,
    cap: usize,
) -> Vec<(String, String)> {
    let mut used = 0usize;
    files
        .into_iter()
        .take_while(|(_, data)| {
            used = used.saturating_add(data.len());
            used <= cap
        })
        .collect()
}

/// Takes the carried files out of the record: each file its messages name whose bytes it
/// carries (bytes that are not base64 are left out), by the order first named.
pub fn take_carried(record: &mut SavedChat) -> Vec<(FileRef, Vec<u8>)> {
    let Some(Value::Object(mut carried)) = record.extra.remove(FILES) else {
        return Vec::new();
    };
    named_files(record)
        .into_iter()
        .filter_map(|f| {
            let Value::String(data) = carried.remove(&f.id)? else {
                return None;
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.as_bytes())
                .ok()?;
            Some((f, bytes))
        })
        .collect()
}

/// Names the files kept again under their new ids (`kept`: old id to the file the server
/// kept), keeping how each went; a file not kept again keeps its old reference, which the
/// server keeps only when it is the importing user's own.
pub fn rename_files(record: &mut SavedChat, kept: &HashMap<String, FileRef>) {
    for v in record
        .chat
        .messages
        .iter_mut()
        .flat_map(|m| &mut m.versions)
    {
        for f in &mut v.files {
            if let Some(new) = kept.get(&f.id) {
                *f = FileRef {
                    sent_as: f.sent_as,
                    ..new.clone()
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::saved_chat::{export_json, parse_export, sample};
    use crate::domain::attachment::{Kind, SendAs};

    fn file(id: &str, name: &str) -> FileRef {
        FileRef {
            id: id.into(),
            name: name.into(),
            kind: Kind::Image,
            size: 3,
            pixels: Some((1, 1)),
            pages: None,
            sent_as: Some(SendAs::Image),
        }
    }

    fn chat_with_files() -> SavedChat {
        let mut first = sample::user("m1", "look");
        first.versions[0].files = vec![file("a", "a.png"), file("b", "b.png")];
        let mut edited = sample::user("m3", "again");
        edited.versions[0].files = vec![file("a", "a.png")];
        sample::chat(
            "c",
            "t",
            vec![
                first,
                sample::said("m2", crate::domain::Role::Assistant, "ok"),
                edited,
            ],
        )
    }

    #[test]
    fn an_export_carries_each_named_file_once_and_reads_them_back() {
        let mut record = chat_with_files();
        assert_eq!(
            named_files(&record)
                .iter()
                .map(|f| f.id.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        carry(
            &mut record,
            vec![("a".into(), vec![0, 255, 7]), ("b".into(), b"png".to_vec())],
        );
        let json = export_json(&record, true);
        assert!(json.contains("\"a\": \"AP8H\""), "{json}");
        let mut back = parse_export(&json).expect("an export");
        let carried = take_carried(&mut back);
        assert_eq!(
            carried
                .iter()
                .map(|(f, b)| (f.name.as_str(), b.clone()))
                .collect::<Vec<_>>(),
            [("a.png", vec![0, 255, 7]), ("b.png", b"png".to_vec())]
        );
        assert!(!back.extra.contains_key(FILES), "taken out");
    }

    #[test]
    fn bytes_that_are_not_base64_or_name_no_file_are_left_out() {
        let mut record = chat_with_files();
        record.extra.insert(
            FILES.into(),
            serde_json::json!({"a": "not base64!", "b": 7, "zzz": "AAAA"}),
        );
        assert!(take_carried(&mut record).is_empty());
        assert!(
            take_carried(&mut chat_with_files()).is_empty(),
            "nothing carried"
        );
        let mut none = chat_with_files();
        carry(&mut none, Vec::new());
        assert!(!none.extra.contains_key(FILES));
    }

    #[test]
    fn files_kept_again_take_their_new_ids_and_keep_how_they_went() {
        let mut record = chat_with_files();
        let mut kept = HashMap::new();
        let mut new = file("a2", "a.png");
        new.sent_as = None;
        kept.insert("a".to_string(), new);
        rename_files(&mut record, &kept);
        let files: Vec<_> = record
            .chat
            .messages
            .iter()
            .flat_map(|m| &m.versions)
            .flat_map(|v| &v.files)
            .map(|f| (f.id.as_str(), f.sent_as))
            .collect();
        assert_eq!(
            files,
            [
                ("a2", Some(SendAs::Image)),
                ("b", Some(SendAs::Image)),
                ("a2", Some(SendAs::Image))
            ]
        );
    }
}
