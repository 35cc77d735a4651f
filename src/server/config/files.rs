//! The settings of attached files: what named models read (`PONDER_MODEL_FILES`), the program
//! that draws a PDF's pages (`PONDER_PDF_RENDERER`), and the size limits.

use super::{parse_num, ConfigError};

/// What one model reads besides text, as the operator said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelFiles {
    pub model: String,
    pub images: bool,
    pub documents: bool,
}

/// `PONDER_MODEL_FILES`: `model=images+documents,other=images,plain=none`, comma-separated.
pub(super) fn model_files(value: Option<&str>) -> Result<Vec<ModelFiles>, ConfigError> {
    let mut out = Vec::new();
    for entry in value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let bad = || {
            ConfigError(format!(
                "PONDER_MODEL_FILES: \"{entry}\" is not model=images, model=documents, model=images+documents or model=none"
            ))
        };
        let (model, inputs) = entry.split_once('=').ok_or_else(bad)?;
        let mut files = ModelFiles {
            model: model.trim().to_string(),
            images: false,
            documents: false,
        };
        for input in inputs.split('+').map(str::trim) {
            match input {
                "images" => files.images = true,
                "documents" => files.documents = true,
                "none" => {}
                _ => return Err(bad()),
            }
        }
        if files.model.is_empty() {
            return Err(bad());
        }
        out.push(files);
    }
    Ok(out)
}

/// `PONDER_PDF_RENDERER` (a path, or `off`), else `pdftoppm` where `PATH` has it.
pub(super) fn pdf_renderer(get: &impl Fn(&str) -> Option<String>) -> Option<std::path::PathBuf> {
    match get("PONDER_PDF_RENDERER").as_deref().map(str::trim) {
        Some("off") => None,
        Some(path) if !path.is_empty() => Some(path.into()),
        _ => get("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("pdftoppm"))
                .find(|p| p.is_file())
        }),
    }
}

/// The attachment limits: bytes per file, per message and per user, and an image's longest side.
pub(super) fn attachment_limits(
    get: &impl Fn(&str) -> Option<String>,
) -> Result<crate::domain::attachment::Limits, ConfigError> {
    let d = crate::domain::attachment::Limits::default();
    let bytes = |name: &str, default: u64| -> Result<u64, ConfigError> {
        match get(name) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if (1024..=1 << 40).contains(&n) => Ok(n),
                _ => Err(ConfigError(format!(
                    "{name}={v:?} must be a whole number of bytes from 1024 to {}",
                    1u64 << 40
                ))),
            },
        }
    };
    let file_bytes = bytes("PONDER_MAX_ATTACHMENT_BYTES", d.file_bytes)?;
    let limits = crate::domain::attachment::Limits {
        file_bytes,
        message_bytes: bytes(
            "PONDER_MAX_MESSAGE_ATTACHMENT_BYTES",
            d.message_bytes.max(file_bytes),
        )?,
        user_bytes: bytes(
            "PONDER_MAX_USER_ATTACHMENT_BYTES",
            d.user_bytes.max(file_bytes),
        )?,
        image_side: parse_num(get, "PONDER_MAX_IMAGE_SIDE", d.image_side, 16, 65_535)?,
        resize_side: parse_num(get, "PONDER_RESIZE_IMAGES_ABOVE", d.resize_side, 16, 65_535)?,
    };
    if limits.message_bytes < file_bytes || limits.user_bytes < file_bytes {
        return Err(ConfigError(
            "PONDER_MAX_MESSAGE_ATTACHMENT_BYTES and PONDER_MAX_USER_ATTACHMENT_BYTES must be at least PONDER_MAX_ATTACHMENT_BYTES".into(),
        ));
    }
    Ok(limits)
}
