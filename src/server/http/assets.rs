//! The site's assets: their content-hashed names and how long a browser may keep them.
//!
//! `make build` names the page's script, WebAssembly and stylesheet after a hash of their
//! contents (`pkg/ponder.<hash>.js`, `.wasm`, `.css`), writes brotli and gzip copies beside them
//! (served by `Accept-Encoding`, never for event streams) and the stem in `pkg/assets.txt`. A
//! hashed file never changes, so a browser keeps it for a year without asking again; the page
//! itself and any unhashed file are revalidated on every load, so a new build is seen at once.

use std::path::Path;

use axum::body::Body;
use axum::http::{header, HeaderValue, Request};
use axum::middleware::Next;
use axum::response::Response;
use leptos::config::LeptosOptions;

/// The file under the site's pkg directory that names the hashed assets.
pub const MANIFEST: &str = "assets.txt";

const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const REVALIDATE: &str = "no-cache";

/// The asset stem `make build` wrote (`ponder.<hash>`), if the manifest is there and sane.
/// A site built another way (cargo-leptos, the tests) keeps the plain `ponder.*` names.
pub fn hashed_stem(site_root: &Path, pkg_dir: &str, output_name: &str) -> Option<String> {
    let text = std::fs::read_to_string(site_root.join(pkg_dir).join(MANIFEST)).ok()?;
    let stem = text.trim();
    let hash = stem.strip_prefix(output_name)?.strip_prefix('.')?;
    let sane = (8..=64).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit());
    sane.then(|| stem.to_string())
}

/// The options with the output name set to the hashed stem when there is one (the hydration
/// scripts and the stylesheet link are named from it), and that stem for [`cache_control`].
pub fn with_hashed_names(
    mut options: LeptosOptions,
) -> (LeptosOptions, Option<std::sync::Arc<str>>) {
    let root = std::path::PathBuf::from(options.site_root.as_ref());
    let stem: Option<std::sync::Arc<str>> =
        hashed_stem(&root, &options.site_pkg_dir, &options.output_name).map(Into::into);
    if let Some(stem) = &stem {
        options.output_name = stem.clone();
    }
    (options, stem)
}

/// The file name of the split loader the page's script imports, if the site has one: the
/// hashed `<stem>.split.js` that `make build` writes beside the other assets, or the plain
/// `__wasm_split.js` of a site built without hashed names.
pub fn split_loader(options: &LeptosOptions) -> Option<String> {
    let pkg = Path::new(options.site_root.as_ref()).join(options.site_pkg_dir.as_ref());
    [
        format!("{}.split.js", options.output_name),
        "__wasm_split.js".to_string(),
    ]
    .into_iter()
    .find(|name| pkg.join(name).is_file())
}

/// The file name of a split chunk (`split_<name>.wasm` as `make build` hashes it:
/// `<stem>.<name>.wasm`), if the site has it.
pub fn split_chunk(options: &LeptosOptions, name: &str) -> Option<String> {
    let pkg = Path::new(options.site_root.as_ref()).join(options.site_pkg_dir.as_ref());
    [
        format!("{}.{name}.wasm", options.output_name),
        format!("split_{name}.wasm"),
    ]
    .into_iter()
    .find(|file| pkg.join(file).is_file())
}

/// The caching rule for a response to `path`: hashed assets (`…/pkg/<stem>.<ext>` with the
/// current stem) are immutable; everything else that has no rule of its own is revalidated.
pub fn cache_rule(path: &str, hashed_stem: Option<&str>) -> &'static str {
    let file = path.rsplit('/').next().unwrap_or_default();
    let in_pkg = path.contains("/pkg/");
    match hashed_stem {
        Some(stem) if in_pkg && file.strip_prefix(stem).is_some_and(|r| r.starts_with('.')) => {
            IMMUTABLE
        }
        _ => REVALIDATE,
    }
}

/// Middleware: sets `Cache-Control` by [`cache_rule`] on responses that carry none, and
/// `Vary: Accept-Encoding` on assets.
pub async fn cache_control(
    stem: Option<std::sync::Arc<str>>,
    req: Request<Body>,
    next: Next,
) -> Response {
    let rule = cache_rule(req.uri().path(), stem.as_deref());
    let asset = req.uri().path().contains("/pkg/");
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(rule));
    }
    // The same address answers brotli, gzip or plain bytes: a shared cache must key on it.
    if asset && !headers.contains_key(header::VARY) {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_current_hashed_assets_are_immutable() {
        let stem = Some("ponder.0123456789abcdef");
        assert_eq!(
            cache_rule("/pkg/ponder.0123456789abcdef.wasm", stem),
            IMMUTABLE
        );
        assert_eq!(
            cache_rule("/ponder/pkg/ponder.0123456789abcdef.js", stem),
            IMMUTABLE
        );
        assert_eq!(cache_rule("/pkg/ponder.wasm", stem), REVALIDATE);
        assert_eq!(
            cache_rule("/pkg/ponder.fedcba9876543210.wasm", stem),
            REVALIDATE
        );
        assert_eq!(cache_rule("/ponder.0123456789abcdef.js", stem), REVALIDATE);
        assert_eq!(cache_rule("/", stem), REVALIDATE);
        assert_eq!(cache_rule("/pkg/ponder.js", None), REVALIDATE);
    }

    #[test]
    fn the_manifest_must_name_a_hash_of_this_output() {
        let dir = std::env::temp_dir().join(format!("ponder-assets-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("pkg")).expect("dir");
        let write =
            |text: &str| std::fs::write(dir.join("pkg").join(MANIFEST), text).expect("write");
        assert_eq!(hashed_stem(&dir, "pkg", "ponder"), None);
        write("ponder.0123456789abcdef\n");
        assert_eq!(
            hashed_stem(&dir, "pkg", "ponder").as_deref(),
            Some("ponder.0123456789abcdef")
        );
        for bad in [
            "ponder.../../etc",
            "other.0123456789abcdef",
            "ponder.xyz",
            "ponder.",
            "ponder.0123",
        ] {
            write(bad);
            assert_eq!(hashed_stem(&dir, "pkg", "ponder"), None, "{bad}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_split_loader_is_the_one_of_this_build() {
        let dir = std::env::temp_dir().join(format!("ponder-split-{}", std::process::id()));
        let pkg = dir.join("pkg");
        std::fs::create_dir_all(&pkg).expect("dir");
        let mut options = LeptosOptions::builder()
            .output_name("ponder.0123456789abcdef")
            .site_root(dir.to_string_lossy().to_string())
            .site_pkg_dir("pkg")
            .build();
        assert_eq!(split_loader(&options), None);
        std::fs::write(pkg.join("__wasm_split.js"), "").expect("write");
        assert_eq!(split_loader(&options).as_deref(), Some("__wasm_split.js"));
        std::fs::write(pkg.join("ponder.0123456789abcdef.split.js"), "").expect("write");
        assert_eq!(
            split_loader(&options).as_deref(),
            Some("ponder.0123456789abcdef.split.js")
        );
        options.output_name = "ponder.fedcba9876543210".into();
        assert_eq!(split_loader(&options).as_deref(), Some("__wasm_split.js"));

        assert_eq!(split_chunk(&options, "words_ja"), None);
        std::fs::write(pkg.join("split_words_ja.wasm"), "").expect("write");
        assert_eq!(
            split_chunk(&options, "words_ja").as_deref(),
            Some("split_words_ja.wasm")
        );
        std::fs::write(pkg.join("ponder.fedcba9876543210.words_ja.wasm"), "").expect("write");
        assert_eq!(
            split_chunk(&options, "words_ja").as_deref(),
            Some("ponder.fedcba9876543210.words_ja.wasm")
        );
        assert_eq!(split_chunk(&options, "words_ar"), None);
        std::fs::remove_dir_all(&dir).ok();
    }
}
