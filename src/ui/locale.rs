//! The page's language, as every component reads it: provided once by the root component from
//! the language the server rendered in.

use leptos::prelude::use_context;
use leptos::wasm_split::SplitLoaderError;

use crate::i18n::{Catalogue, Locale};

/// The page's locale.
pub fn locale() -> Locale {
    use_context::<Locale>().unwrap_or_default()
}

/// The page's words.
pub fn tr() -> &'static Catalogue {
    locale().catalogue()
}

/// The split points of the translated catalogues: a page fetches only its own language's.
#[leptos::wasm_split::wasm_split(words_pt_br, wasm_split_path = leptos::wasm_split, fallible)]
fn words_pt_br() -> Result<&'static Catalogue, SplitLoaderError> {
    Ok(&crate::i18n::PT_BR)
}

#[leptos::wasm_split::wasm_split(words_ja, wasm_split_path = leptos::wasm_split, fallible)]
fn words_ja() -> Result<&'static Catalogue, SplitLoaderError> {
    Ok(&crate::i18n::JA)
}

#[leptos::wasm_split::wasm_split(words_ar, wasm_split_path = leptos::wasm_split, fallible)]
fn words_ar() -> Result<&'static Catalogue, SplitLoaderError> {
    Ok(&crate::i18n::AR)
}

/// The name of a locale's chunk (`pkg/<stem>.<name>.wasm`), which the page's `<head>` preloads;
/// none for English, which the first download holds.
pub fn words_chunk(locale: Locale) -> Option<&'static str> {
    match locale {
        Locale::En => None,
        Locale::PtBr => Some("words_pt_br"),
        Locale::Ja => Some("words_ja"),
        Locale::Ar => Some("words_ar"),
    }
}

/// Fetches the page's catalogue before the page hydrates, so it hydrates with the words the
/// server wrote. Tries three times (a second, then two apart); if the chunk still cannot be
/// fetched the page goes on in English rather than not at all.
pub async fn fetch_words(locale: Locale) {
    for attempt in 0..3u32 {
        let words = match locale {
            Locale::En => return,
            Locale::PtBr => words_pt_br().await,
            Locale::Ja => words_ja().await,
            Locale::Ar => words_ar().await,
        };
        match words {
            Ok(words) => return crate::i18n::provide(locale, words),
            Err(e) => {
                leptos::logging::warn!("the {} words could not be fetched: {e}", locale.tag())
            }
        }
        if attempt < 2 {
            crate::client::browser::sleep(std::time::Duration::from_secs(u64::from(attempt) + 1))
                .await;
        }
    }
}
