//! The page's language, as every component reads it: provided once by the root component from
//! the language the server rendered in.

use leptos::prelude::use_context;

use crate::i18n::{Catalogue, Locale};

/// The page's locale.
pub fn locale() -> Locale {
    use_context::<Locale>().unwrap_or_default()
}

/// The page's words.
pub fn tr() -> &'static Catalogue {
    locale().catalogue()
}
