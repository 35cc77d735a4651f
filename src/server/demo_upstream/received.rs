//! What the demo model received with the reader's last message, in any wire format: each file's
//! type and size (an image's pixels, read from the bytes it got), a document's name, a text
//! file's name and first words. The demo answers with it, so a test sees the bytes that reached
//! the upstream.

use base64::Engine;
use serde_json::Value;

use crate::domain::attachment::{sniff, Limits};
use crate::server::config::ProviderKind;

/// One line per file the last user message carried, and how many files the earlier ones carry
/// (the history sent again); `None` when there are none at all.
pub(super) fn report(provider: ProviderKind, body: &Value) -> Option<String> {
    let users = user_messages(provider, body);
    let (last, earlier) = users.split_last()?;
    let lines = files_of(provider, last);
    let before: usize = earlier.iter().map(|m| files_of(provider, m).len()).sum();
    if lines.is_empty() && before == 0 {
        return None;
    }
    let mut out = format!("I received {} file(s):\n\n", lines.len());
    for line in lines {
        out.push_str(&format!("- {line}\n"));
    }
    if before > 0 {
        out.push_str(&format!("\nThe earlier messages carry {before} file(s).\n"));
    }
    Some(out)
}

/// What a `[system]` question is answered with: the system text the request carried, wherever
/// its wire format keeps it, quoted whole so a test reads every level that reached the model.
pub(super) fn system_report(provider: ProviderKind, body: &Value) -> String {
    match system_text(provider, body) {
        Some(text) => format!("My system text:\n\n```text\n{text}\n```\n"),
        None => "I received no system text.".to_string(),
    }
}

/// What the demo answers a title request (Ponder's own, after a conversation's first answer)
/// with: for a question with `[titled]` in it a title of its own, after reasoning written
/// inline where a real model might leak it (`<think>…</think>`), which Ponder must not keep;
/// for any other question nothing, so a chat keeps its first words. `None` for any other
/// request.
pub(super) fn title_reply(provider: ProviderKind, body: &Value) -> Option<String> {
    let system = system_text(provider, body)?;
    if !system.starts_with("You write titles for conversations") {
        return None;
    }
    let asked = user_messages(provider, body)
        .last()
        .map(|m| {
            let parts = match provider {
                ProviderKind::Gemini => &m["parts"],
                _ => &m["content"],
            };
            match parts {
                Value::String(s) => s.clone(),
                Value::Array(list) => list
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            }
        })
        .unwrap_or_default();
    let question = asked
        .strip_prefix("Question:\n")
        .and_then(|rest| rest.split("\n\nAnswer:\n").next())
        .unwrap_or(&asked);
    if question.contains("[titled]") {
        return Some(
            "<think>DEMO-TITLE-REASONING: a title of six words at most.</think>A Title by the Demo Model"
                .to_string(),
        );
    }
    Some(String::new())
}

/// The system text of a request: Chat Completions' and Ollama's `system` or `developer`
/// messages, Anthropic's `system`, Responses' `instructions`, Gemini's `systemInstruction`,
/// Interactions' `system_instruction`.
fn system_text(provider: ProviderKind, body: &Value) -> Option<String> {
    let texts = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => Some(
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        }
    };
    let text = match provider {
        ProviderKind::OpenAi | ProviderKind::Ollama => {
            let found: Vec<String> = body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["role"] == "system" || m["role"] == "developer")
                .filter_map(|m| texts(&m["content"]))
                .collect();
            (!found.is_empty()).then(|| found.join("\n"))
        }
        ProviderKind::Anthropic => texts(&body["system"]),
        ProviderKind::Responses => texts(&body["instructions"]),
        ProviderKind::Gemini => texts(&body["systemInstruction"]["parts"]),
        ProviderKind::Interactions => texts(&body["system_instruction"]),
    };
    text.filter(|t| !t.is_empty())
}

/// The tokens a provider that counts them apart would say the files of every user message
/// took: [`FILE_TOKENS`] each, images apart from documents (text files count as text).
pub(super) fn file_tokens(provider: ProviderKind, body: &Value) -> FileTokens {
    let mut tokens = FileTokens::default();
    for line in user_messages(provider, body)
        .into_iter()
        .flat_map(|m| files_of(provider, m))
    {
        if line.starts_with("image/") {
            tokens.images += FILE_TOKENS;
        } else if !line.starts_with("text \"") {
            tokens.documents += FILE_TOKENS;
        }
    }
    tokens
}

/// What the demo says one file took of the prompt (Gemini's count for a small image).
pub(super) const FILE_TOKENS: u64 = 258;

/// The prompt's tokens that files took, by modality.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileTokens {
    pub images: u64,
    pub documents: u64,
}

/// What one user message carried.
fn files_of(provider: ProviderKind, message: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    if provider == ProviderKind::Ollama {
        for image in message["images"].as_array().into_iter().flatten() {
            lines.push(binary(None, None, image.as_str().unwrap_or_default()));
        }
        if let Some(text) = message["content"].as_str() {
            lines.extend(text_files(text));
        }
    }
    let parts = match provider {
        ProviderKind::Gemini => message["parts"].as_array(),
        _ => message["content"].as_array(),
    };
    for part in parts.into_iter().flatten() {
        lines.extend(describe(part));
    }
    lines
}

/// The user messages, in order (Interactions: the `user_input` steps).
fn user_messages(provider: ProviderKind, body: &Value) -> Vec<&Value> {
    let list = match provider {
        ProviderKind::Responses | ProviderKind::Interactions => "input",
        ProviderKind::Gemini => "contents",
        _ => "messages",
    };
    body[list]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user" || m["type"] == "user_input")
        .collect()
}

/// One content part, if it is a file: what it is.
fn describe(part: &Value) -> Option<String> {
    let text = part["text"].as_str();
    if let Some(text) = text {
        return text_files(text).into_iter().next();
    }
    let (mime, data, name) = if let Some(url) = part["image_url"]["url"]
        .as_str()
        .or(part["image_url"].as_str())
    {
        let (mime, data) = data_url(url)?;
        (Some(mime), data, None)
    } else if let Some(url) = part["file"]["file_data"]
        .as_str()
        .or(part["file_data"].as_str())
    {
        let (mime, data) = data_url(url)?;
        let name = part["file"]["filename"]
            .as_str()
            .or(part["filename"].as_str());
        (Some(mime), data, name)
    } else if let Some(data) = part["source"]["data"].as_str() {
        (
            part["source"]["media_type"].as_str(),
            data,
            part["title"].as_str(),
        )
    } else if let Some(data) = part["inline_data"]["data"].as_str() {
        (part["inline_data"]["mime_type"].as_str(), data, None)
    } else if let Some(data) = part["data"].as_str() {
        (part["mime_type"].as_str(), data, None)
    } else {
        return None;
    };
    Some(binary(mime, name, data))
}

fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime, data))
}

/// A file sent as bytes: the type it was sent as, the name when it had one, its size, and an
/// image's pixels as the bytes say.
fn binary(mime: Option<&str>, name: Option<&str>, data: &str) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap_or_default();
    let sniffed = sniff("received", &bytes, &Limits::default()).ok();
    let mime = mime
        .map(str::to_string)
        .or_else(|| sniffed.as_ref().map(|s| s.mime.to_string()))
        .unwrap_or_else(|| "unknown".into());
    let mut line = match name {
        Some(name) => format!("{mime} \"{name}\""),
        None => mime,
    };
    if let Some((w, h)) = sniffed.and_then(|s| s.pixels) {
        line.push_str(&format!(", {w}×{h} pixels"));
    }
    line.push_str(&format!(", {} bytes", bytes.len()));
    line
}

/// The text files in a text part: their names and first words.
fn text_files(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<file name=\"") {
        let after = &rest[start + 12..];
        let Some((name, body)) = after.split_once("\">\n") else {
            break;
        };
        let (content, next) = body.split_once("\n</file>").unwrap_or((body, ""));
        let first: Vec<&str> = content.split_whitespace().take(6).collect();
        out.push(format!("text \"{name}\": \"{}\"", first.join(" ")));
        rest = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_format_reports_what_it_carried() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAoAAAAHgCAYAAAA="; // a PNG header, 640×480
        let openai = json!({"messages": [
            {"role": "user", "content": "earlier"},
            {"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}")}},
                {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjc="}},
                {"type": "text", "text": "<file name=\"n.md\">\n# Notes on the plan\n</file>"},
                {"type": "text", "text": "What is this?"},
            ]},
        ]});
        assert_eq!(
            report(ProviderKind::OpenAi, &openai).unwrap(),
            "I received 3 file(s):\n\n- image/png, 640×480 pixels, 29 bytes\n\
             - application/pdf \"a.pdf\", 8 bytes\n- text \"n.md\": \"# Notes on the plan\"\n"
        );
        let ollama = json!({"messages": [{"role": "user", "content": "hi", "images": [png]}]});
        assert_eq!(
            report(ProviderKind::Ollama, &ollama).unwrap(),
            "I received 1 file(s):\n\n- image/png, 640×480 pixels, 29 bytes\n"
        );
        let gemini = json!({"contents": [{"role": "user", "parts": [
            {"inline_data": {"mime_type": "application/pdf", "data": "JVBERi0xLjc="}}, {"text": "hi"}]}]});
        assert!(report(ProviderKind::Gemini, &gemini)
            .unwrap()
            .contains("application/pdf, 8 bytes"));
        let plain = json!({"messages": [{"role": "user", "content": "no files"}]});
        assert_eq!(report(ProviderKind::OpenAi, &plain), None);
        let mut later = openai.clone();
        later["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "user", "content": "and now?"}));
        assert_eq!(
            report(ProviderKind::OpenAi, &later).unwrap(),
            "I received 0 file(s):\n\n\nThe earlier messages carry 3 file(s).\n"
        );
    }
}
