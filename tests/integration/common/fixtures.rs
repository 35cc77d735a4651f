//! The recorded provider streams under tests/fixtures/providers, as the bytes an adapter reads.
//!
//! Raw captures (`*.sse`, `*.ndjson`, `*.json-array`) are used as they are. vercel/ai's
//! `*.chunks.txt` hold one parsed `data:` payload per line: they are framed back into SSE the
//! way vercel/ai's own tests do (`data: <line>\n\n`, plus `data: [DONE]` only for the Chat
//! Completions servers that really send it). Files holding several responses one after the
//! other are split into them.

#![allow(dead_code)]

use std::path::PathBuf;

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/providers")
}

pub fn read(file: &str) -> Vec<u8> {
    let path = dir().join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `part`-th response of `file`, as the bytes of an HTTP body.
pub fn body(file: &str, part: usize) -> Vec<u8> {
    let raw = read(file);
    if !file.ends_with(".chunks.txt") {
        assert_eq!(part, 0, "{file} holds one response");
        return raw;
    }
    let text = String::from_utf8(raw).expect("chunks files are UTF-8");
    let responses = split_responses(&text);
    let lines = responses
        .get(part)
        .unwrap_or_else(|| panic!("{file} has {} responses", responses.len()));
    let mut out = String::new();
    for line in lines {
        out.push_str("data: ");
        out.push_str(line);
        out.push_str("\n\n");
    }
    if file.starts_with("openai-chat/") || file.starts_with("mistral/") {
        out.push_str("data: [DONE]\n\n");
    }
    out.into_bytes()
}

/// Lines grouped by response: a Responses stream starts at `response.created`, a Chat
/// Completions one when the chunk `id` changes.
fn split_responses(text: &str) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    let mut last_id: Option<String> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let json: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        let starts = match json.get("type").and_then(|t| t.as_str()) {
            Some(t) => t == "response.created",
            None => {
                let id = json
                    .get("id")
                    .and_then(|i| i.as_str())
                    .filter(|i| !i.is_empty())
                    .map(str::to_string);
                let changed = id.is_some() && last_id.is_some() && id != last_id;
                if id.is_some() {
                    last_id = id;
                }
                changed
            }
        };
        let fresh = out.last().is_none_or(|r| starts && !r.is_empty());
        if fresh {
            out.push(Vec::new());
        }
        if let Some(last) = out.last_mut() {
            last.push(line);
        }
    }
    out
}

/// Every replayable file, for the benchmark's pick of the largest per format.
pub fn files_under(sub: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir().join(sub)];
    while let Some(path) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(name) = p.to_str() {
                let rel = name.trim_start_matches(dir().to_str().unwrap_or_default());
                let rel = rel.trim_start_matches('/').to_string();
                if [".sse", ".chunks.txt", ".ndjson", ".json-array"]
                    .iter()
                    .any(|ext| rel.ends_with(ext))
                {
                    out.push(rel);
                }
            }
        }
    }
    out.sort();
    out
}
