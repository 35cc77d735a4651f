//! Attached files as each wire format takes them, beside the reader's text: images as images
//! to a model that sees, a PDF as the provider's own document input where it has one, text files
//! as text with their name. Which way each file goes is decided before the turn starts
//! ([`plan`]), so a model that can take none of it is refused with a clear word, not an
//! upstream 400.

use base64::Engine;
use serde_json::{json, Value};

use crate::domain::attachment::{Attached, Kind, SendAs};
use crate::domain::{ErrorCode, Failure};
use crate::server::config::{Config, ProviderKind};

/// What the model can read besides text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Takes {
    pub images: bool,
    pub documents: bool,
}

/// Model families known to read images (their names as the providers and Ollama give them).
const SEES: &[&str] = &[
    "gpt-4o",
    "gpt-4.1",
    "gpt-5",
    "claude",
    "gemini",
    "gemma3",
    "gemma-3",
    "-vl",
    "llava",
    "vision",
    "pixtral",
    "mistral-small-3",
    "mistral-medium",
    "llama4",
    "llama-4",
    "minicpm-v",
    "internvl",
    "kimi-k2.5",
    "glm-4.5v",
    "glm-4.6v",
];

/// Model families known to read PDFs as documents.
const READS_DOCUMENTS: &[&str] = &["gpt-4o", "gpt-4.1", "gpt-5", "claude", "gemini"];

/// OpenAI's o-series, by the start of the model's own name (`o3`, `openai/o4-mini`).
const O_SERIES: &[&str] = &["o3", "o4"];

/// What `model` can read besides text: the built-in demo model reads everything (and says
/// what it received); a model the operator named in `PONDER_MODEL_FILES` what they said; a
/// model the upstream's list describes (`listed`) what it says; any other by its family's name.
pub fn takes(config: &Config, model: &str, listed: Option<Takes>) -> Takes {
    if config.uses_demo() {
        return Takes {
            images: true,
            documents: true,
        };
    }
    if let Some(set) = config.model_files.iter().find(|m| m.model == model) {
        return Takes {
            images: set.images,
            documents: set.documents,
        };
    }
    if let Some(said) = listed {
        return said;
    }
    let name = model.to_ascii_lowercase();
    let own = name.rsplit('/').next().unwrap_or(&name);
    let o_series = O_SERIES.iter().any(|o| own.starts_with(o));
    let any = |list: &[&str]| list.iter().any(|family| name.contains(family));
    Takes {
        images: o_series || any(SEES),
        documents: o_series || any(READS_DOCUMENTS),
    }
}

/// Whether a wire format has a document input at all (Ollama's has none).
fn has_document_input(wire: ProviderKind) -> bool {
    !matches!(wire, ProviderKind::Ollama)
}

/// Decides how each file goes to `model` over `wire`, or why one cannot: an image to a model
/// that does not see; a PDF goes as a document to a model that reads them over a wire format
/// that has the input, else as its text (read on upload), else (a scan) as its pages drawn as
/// images to a model that sees when `draws_pages` (a PDF renderer is installed), and is refused
/// only when none of these is possible. The way the reader asked for (or the way it went before)
/// wins wherever the model takes it.
pub fn plan(
    files: &mut [Attached],
    wire: ProviderKind,
    takes: Takes,
    draws_pages: bool,
    model: &str,
) -> Result<(), Failure> {
    for f in files {
        let has_text = f.text.as_deref().is_some_and(|t| !t.trim().is_empty());
        let possible = |how: SendAs| match (f.kind, how) {
            (Kind::Image, SendAs::Image) => takes.images,
            (Kind::Pdf, SendAs::Document) => takes.documents && has_document_input(wire),
            (Kind::Pdf, SendAs::Text) => has_text,
            (Kind::Pdf, SendAs::Pages) => takes.images && draws_pages,
            (Kind::Text, SendAs::Text) => true,
            _ => false,
        };
        if let Some(asked) = f.asked.filter(|how| possible(*how)) {
            f.how = asked;
            continue;
        }
        f.how = match f.kind {
            Kind::Text => SendAs::Text,
            Kind::Image if takes.images => SendAs::Image,
            Kind::Pdf if possible(SendAs::Document) => SendAs::Document,
            Kind::Pdf if has_text => SendAs::Text,
            Kind::Pdf if possible(SendAs::Pages) => SendAs::Pages,
            Kind::Image | Kind::Pdf => {
                return Err(Failure::of(ErrorCode::AttachmentNotTaken, false)
                    .with("name", &f.name)
                    .with("model", model))
            }
        };
    }
    Ok(())
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn data_url(f: &Attached) -> String {
    format!("data:{};base64,{}", f.mime, base64(&f.bytes))
}

/// A text file as the model reads it: between tags that name it, so several files and the
/// reader's words stay apart.
pub fn text_block(f: &Attached) -> String {
    let name = f.name.replace(['"', '<', '>'], "_");
    let text = match &f.text {
        Some(read) => std::borrow::Cow::Borrowed(&**read),
        None => String::from_utf8_lossy(&f.bytes),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    format!("<file name=\"{name}\">\n{}\n</file>", text.trim_end())
}

/// The content of a reader's message with its files, in `wire`'s shape: the files first, then
/// the reader's text (the order the providers recommend for images and documents).
pub fn user_content(wire: ProviderKind, text: &str, files: &[Attached]) -> Value {
    let mut parts: Vec<Value> = files.iter().flat_map(|f| parts(wire, f)).collect();
    if text.trim().is_empty() && !parts.is_empty() {
        return Value::Array(parts);
    }
    parts.push(match wire {
        ProviderKind::Responses => json!({"type": "input_text", "text": text}),
        ProviderKind::Gemini => json!({"text": text}),
        _ => json!({"type": "text", "text": text}),
    });
    Value::Array(parts)
}

/// The line before a PDF's pages drawn as images, naming the file and the pages.
pub fn pages_label(f: &Attached) -> String {
    let name = f.name.replace(['"', '<', '>'], "_");
    format!(
        "<file name=\"{name}\" pages=\"1-{}\">its pages follow as images</file>",
        f.drawn.len()
    )
}

/// A file's parts in `wire`'s shape: one, or a PDF's label and its drawn pages.
fn parts(wire: ProviderKind, f: &Attached) -> Vec<Value> {
    if f.how != SendAs::Pages {
        return vec![part(wire, f, f.how)];
    }
    let mut out = vec![match wire {
        ProviderKind::Responses => json!({"type": "input_text", "text": pages_label(f)}),
        ProviderKind::Gemini => json!({"text": pages_label(f)}),
        _ => json!({"type": "text", "text": pages_label(f)}),
    }];
    out.extend(f.drawn.iter().map(|page| {
        let drawn = Attached {
            mime: "image/png".into(),
            bytes: page.clone(),
            drawn: Vec::new(),
            ..f.clone()
        };
        part(wire, &drawn, SendAs::Image)
    }));
    out
}

fn part(wire: ProviderKind, f: &Attached, how: SendAs) -> Value {
    use ProviderKind as W;
    match (wire, how) {
        (W::Responses, SendAs::Text) => json!({"type": "input_text", "text": text_block(f)}),
        (W::Gemini, SendAs::Text) => json!({"text": text_block(f)}),
        (_, SendAs::Text) => json!({"type": "text", "text": text_block(f)}),
        (W::Gemini, _) => json!({"inline_data": {"mime_type": f.mime, "data": base64(&f.bytes)}}),
        (W::Interactions, SendAs::Image | SendAs::Pages) => {
            json!({"type": "image", "mime_type": f.mime, "data": base64(&f.bytes)})
        }
        (W::Interactions, SendAs::Document) => {
            json!({"type": "document", "mime_type": f.mime, "data": base64(&f.bytes)})
        }
        (W::Anthropic, SendAs::Image | SendAs::Pages) => json!({"type": "image", "source":
            {"type": "base64", "media_type": f.mime, "data": base64(&f.bytes)}}),
        (W::Anthropic, SendAs::Document) => json!({"type": "document", "title": f.name, "source":
            {"type": "base64", "media_type": f.mime, "data": base64(&f.bytes)}}),
        (W::Responses, SendAs::Image | SendAs::Pages) => {
            json!({"type": "input_image", "image_url": data_url(f)})
        }
        (W::Responses, SendAs::Document) => {
            json!({"type": "input_file", "filename": f.name, "file_data": data_url(f)})
        }
        (_, SendAs::Image | SendAs::Pages) => {
            json!({"type": "image_url", "image_url": {"url": data_url(f)}})
        }
        (_, SendAs::Document) => {
            json!({"type": "file", "file": {"filename": f.name, "file_data": data_url(f)}})
        }
    }
}

/// Ollama's native message takes text and a list of base64 images beside it: the text files
/// join the text, the images the list.
pub fn ollama_message(text: &str, files: &[Attached]) -> (String, Vec<String>) {
    let mut content: Vec<String> = files
        .iter()
        .filter_map(|f| match f.how {
            SendAs::Text => Some(text_block(f)),
            SendAs::Pages => Some(pages_label(f)),
            _ => None,
        })
        .collect();
    content.push(text.to_string());
    let images = files
        .iter()
        .flat_map(|f| match f.how {
            SendAs::Image => vec![base64(&f.bytes)],
            SendAs::Pages => f.drawn.iter().map(|p| base64(p)).collect(),
            _ => Vec::new(),
        })
        .collect();
    (content.join("\n\n"), images)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, kind: Kind, mime: &str, bytes: &[u8]) -> Attached {
        Attached {
            name: name.into(),
            kind,
            mime: mime.into(),
            bytes: std::sync::Arc::from(bytes),
            text: None,
            asked: None,
            how: SendAs::Text,
            drawn: Vec::new(),
        }
    }

    fn sample() -> Vec<Attached> {
        vec![
            file("shot.png", Kind::Image, "image/png", b"\x89PNG"),
            file("paper.pdf", Kind::Pdf, "application/pdf", b"%PDF-1.7"),
            file(
                "notes \"v2\".md",
                Kind::Text,
                "text/markdown",
                "\u{feff}# Hi\n\n".as_bytes(),
            ),
        ]
    }

    fn planned(wire: ProviderKind) -> Vec<Attached> {
        let mut files = sample();
        let all = Takes {
            images: true,
            documents: true,
        };
        plan(&mut files, wire, all, false, "m").unwrap();
        files
    }

    #[test]
    fn each_wire_format_gets_its_own_parts_and_the_text_last() {
        let png = "iVBORw=="; // base64 of \x89PNG
        let pdf = "JVBERi0xLjc="; // base64 of %PDF-1.7
        let text = "<file name=\"notes _v2_.md\">\n# Hi\n</file>";
        let cases = [
            (
                ProviderKind::OpenAi,
                json!([
                    {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}")}},
                    {"type": "file", "file": {"filename": "paper.pdf", "file_data": format!("data:application/pdf;base64,{pdf}")}},
                    {"type": "text", "text": text},
                    {"type": "text", "text": "What is this?"},
                ]),
            ),
            (
                ProviderKind::Responses,
                json!([
                    {"type": "input_image", "image_url": format!("data:image/png;base64,{png}")},
                    {"type": "input_file", "filename": "paper.pdf", "file_data": format!("data:application/pdf;base64,{pdf}")},
                    {"type": "input_text", "text": text},
                    {"type": "input_text", "text": "What is this?"},
                ]),
            ),
            (
                ProviderKind::Anthropic,
                json!([
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
                    {"type": "document", "title": "paper.pdf", "source": {"type": "base64", "media_type": "application/pdf", "data": pdf}},
                    {"type": "text", "text": text},
                    {"type": "text", "text": "What is this?"},
                ]),
            ),
            (
                ProviderKind::Gemini,
                json!([
                    {"inline_data": {"mime_type": "image/png", "data": png}},
                    {"inline_data": {"mime_type": "application/pdf", "data": pdf}},
                    {"text": text},
                    {"text": "What is this?"},
                ]),
            ),
            (
                ProviderKind::Interactions,
                json!([
                    {"type": "image", "mime_type": "image/png", "data": png},
                    {"type": "document", "mime_type": "application/pdf", "data": pdf},
                    {"type": "text", "text": text},
                    {"type": "text", "text": "What is this?"},
                ]),
            ),
        ];
        for (wire, expected) in cases {
            assert_eq!(
                user_content(wire, "What is this?", &planned(wire)),
                expected,
                "{wire:?}"
            );
        }
    }

    #[test]
    fn ollama_takes_images_beside_the_text_and_no_documents() {
        let mut files = sample();
        let takes = Takes {
            images: true,
            documents: true,
        };
        let refused = plan(&mut files, ProviderKind::Ollama, takes, false, "qwen3-vl").unwrap_err();
        assert_eq!(refused.code, ErrorCode::AttachmentNotTaken);
        assert_eq!(
            (refused.param("name"), refused.param("model")),
            ("paper.pdf", "qwen3-vl")
        );
        let mut no_pdf: Vec<Attached> = files.into_iter().filter(|f| f.kind != Kind::Pdf).collect();
        plan(&mut no_pdf, ProviderKind::Ollama, takes, false, "qwen3-vl").unwrap();
        let (content, images) = ollama_message("Describe.", &no_pdf);
        assert_eq!(
            content,
            "<file name=\"notes _v2_.md\">\n# Hi\n</file>\n\nDescribe."
        );
        assert_eq!(images, ["iVBORw=="]);
    }

    #[test]
    fn what_a_model_reads_comes_from_its_family() {
        let config = crate::server::config::Config::from_lookup(|name| {
            (name == "PONDER_UPSTREAM_URL").then(|| "http://127.0.0.1:9/v1".to_string())
        })
        .unwrap();
        let t = |model: &str| takes(&config, model, None);
        assert_eq!(
            t("qwen3-vl:8b"),
            Takes {
                images: true,
                documents: false
            }
        );
        assert_eq!(
            t("claude-opus-4-7"),
            Takes {
                images: true,
                documents: true
            }
        );
        assert_eq!(
            t("openai/o4-mini"),
            Takes {
                images: true,
                documents: true
            }
        );
        assert_eq!(t("deepseek-r1:32b"), Takes::default());
        assert_eq!(
            t("olmo3:7b"),
            Takes::default(),
            "o3 only at the start of a name"
        );
        let demo = crate::server::config::Config::from_lookup(|_| None).unwrap();
        assert_eq!(
            takes(&demo, "anything", None),
            Takes {
                images: true,
                documents: true
            }
        );
    }

    #[test]
    fn the_operator_s_word_on_a_model_wins_over_its_family() {
        let config = crate::server::config::Config::from_lookup(|name| match name {
            "PONDER_UPSTREAM_URL" => Some("http://127.0.0.1:9/v1".to_string()),
            "PONDER_MODEL_FILES" => {
                Some("my-vision=images, claude-opus-4-7=none,doc=images+documents".into())
            }
            _ => None,
        })
        .unwrap();
        let t = |model: &str| takes(&config, model, None);
        assert_eq!(
            t("my-vision"),
            Takes {
                images: true,
                documents: false
            }
        );
        assert_eq!(t("claude-opus-4-7"), Takes::default());
        assert_eq!(
            t("doc"),
            Takes {
                images: true,
                documents: true
            }
        );
        assert_eq!(
            t("claude-sonnet-4-6"),
            Takes {
                images: true,
                documents: true
            }
        );
        for bad in ["x=sound", "=images", "x"] {
            let refused = crate::server::config::Config::from_lookup(|name| match name {
                "PONDER_UPSTREAM_URL" => Some("http://127.0.0.1:9/v1".to_string()),
                "PONDER_MODEL_FILES" => Some(bad.into()),
                _ => None,
            });
            assert!(refused.is_err(), "{bad}");
        }
    }

    #[test]
    fn the_readers_way_wins_where_the_model_takes_it() {
        let takes = Takes {
            images: true,
            documents: true,
        };
        let mut files = sample();
        let pdf = files.iter().position(|f| f.kind == Kind::Pdf).unwrap();
        files[pdf].text = Some("the paper's words".into());
        files[pdf].asked = Some(SendAs::Text);
        plan(&mut files, ProviderKind::Anthropic, takes, false, "claude").unwrap();
        assert_eq!(files[pdf].how, SendAs::Text);
        assert!(text_block(&files[pdf]).contains("the paper's words"));
        // A way the model cannot take falls back to the one it reads.
        let image = files.iter().position(|f| f.kind == Kind::Image).unwrap();
        files[image].asked = Some(SendAs::Text);
        files[pdf].asked = Some(SendAs::Document);
        plan(&mut files, ProviderKind::Ollama, takes, false, "qwen3-vl").unwrap();
        assert_eq!(
            (files[image].how, files[pdf].how),
            (SendAs::Image, SendAs::Text)
        );
    }

    #[test]
    fn a_model_that_cannot_read_a_file_refuses_it_by_name_before_the_turn() {
        let mut files = sample();
        let blind = plan(
            &mut files,
            ProviderKind::OpenAi,
            Takes::default(),
            false,
            "deepseek-r1",
        );
        assert_eq!(blind.unwrap_err().param("name"), "shot.png");
        let mut text_only = [files[2].clone()];
        text_only[0].how = SendAs::Image;
        plan(
            &mut text_only,
            ProviderKind::OpenAi,
            Takes::default(),
            false,
            "deepseek-r1",
        )
        .unwrap();
        assert_eq!(
            text_only[0].how,
            SendAs::Text,
            "a text file goes to any model"
        );
        let sees = Takes {
            images: true,
            documents: false,
        };
        let pdf = plan(&mut files[..2], ProviderKind::Anthropic, sees, false, "m").unwrap_err();
        assert_eq!(pdf.param("name"), "paper.pdf");
    }

    #[test]
    fn a_scan_goes_as_its_pages_to_a_model_that_sees_with_a_label_naming_them() {
        let mut files = vec![file("scan.pdf", Kind::Pdf, "application/pdf", b"%PDF-1.7")];
        let sees = Takes {
            images: true,
            documents: false,
        };
        let no_renderer = plan(&mut files.clone(), ProviderKind::OpenAi, sees, false, "m");
        assert_eq!(no_renderer.unwrap_err().code, ErrorCode::AttachmentNotTaken);
        plan(&mut files, ProviderKind::OpenAi, sees, true, "m").unwrap();
        assert_eq!(files[0].how, SendAs::Pages);
        files[0].drawn = vec![
            std::sync::Arc::from(&b"\x89PNG1"[..]),
            std::sync::Arc::from(&b"\x89PNG2"[..]),
        ];
        let label = "<file name=\"scan.pdf\" pages=\"1-2\">its pages follow as images</file>";
        let content = user_content(ProviderKind::Anthropic, "q", &files);
        assert_eq!(content.as_array().map(Vec::len), Some(4), "{content}");
        assert_eq!(content[0]["text"], label);
        assert_eq!(content[1]["source"]["media_type"], "image/png");
        assert_eq!(content[2]["source"]["data"], "iVBORzI=");
        let (text, images) = ollama_message("q", &files);
        assert_eq!(text, format!("{label}\n\nq"));
        assert_eq!(images, ["iVBORzE=", "iVBORzI="]);
        // Asked for, pages win over a document the model could read; blind, they fall back.
        let mut asked = vec![file("p.pdf", Kind::Pdf, "application/pdf", b"%PDF")];
        asked[0].asked = Some(SendAs::Pages);
        let all = Takes {
            images: true,
            documents: true,
        };
        plan(&mut asked, ProviderKind::Anthropic, all, true, "m").unwrap();
        assert_eq!(asked[0].how, SendAs::Pages);
        let blind = Takes {
            images: false,
            documents: true,
        };
        plan(&mut asked, ProviderKind::Anthropic, blind, true, "m").unwrap();
        assert_eq!(asked[0].how, SendAs::Document);
    }
}
