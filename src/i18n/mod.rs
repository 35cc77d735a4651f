//! The languages Ponder speaks: English, Brazilian Portuguese, Japanese and Arabic.
//!
//! One [`Catalogue`] per locale holds every user-visible string; the functions here choose the
//! locale (from a stored choice or `Accept-Language`), pick plural forms by each language's CLDR
//! rule and format numbers the way its readers write them. Pure, shared by the server's render,
//! the browser and the terminal client, so the page hydrates with the very words the server
//! wrote.
//!
//! The browser's first download holds English only: each other catalogue is a WebAssembly chunk
//! of its own that a page in that language fetches before it hydrates (preloaded by the page's
//! `<head>`) and hands over with [`provide`].

mod ar;
pub mod catalogue;
mod en;
pub mod errors;
mod ja;
mod pt_br;

pub use ar::AR;
pub use catalogue::{Catalogue, ErrorWords, Plural, TerminalWords};
pub use en::EN;
pub use ja::JA;
pub use pt_br::PT_BR;

/// A language of the interface. Model output and Ponder's own name are never translated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Locale {
    #[default]
    En,
    PtBr,
    Ja,
    Ar,
}

/// Which way a locale's interface runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Ltr,
    Rtl,
}

/// The name of the cookie that keeps the reader's choice when nobody is signed in.
pub const COOKIE: &str = "ponder_locale";

impl Locale {
    /// Every locale, in the order the language picker lists them.
    pub const ALL: [Locale; 4] = [Locale::En, Locale::PtBr, Locale::Ja, Locale::Ar];

    /// The BCP 47 tag, as `<html lang>`, the cookie and the preferences carry it.
    pub fn tag(self) -> &'static str {
        match self {
            Locale::En => "en",
            Locale::PtBr => "pt-BR",
            Locale::Ja => "ja",
            Locale::Ar => "ar",
        }
    }

    /// The language's name in itself, as the language picker lists it. Not in the catalogues:
    /// the page holds only its own language's words (each a chunk), and a name both there and
    /// in the picker's chunk would become a third chunk, one round trip after the words.
    pub fn own_name(self) -> &'static str {
        match self {
            Locale::En => "English",
            Locale::PtBr => "Português (Brasil)",
            Locale::Ja => "日本語",
            Locale::Ar => "العربية",
        }
    }

    /// The locale a tag names: exact tags, any region of a language we have (`pt-PT` reads
    /// Brazilian Portuguese, `ar-EG` Arabic), case-insensitively.
    pub fn from_tag(tag: &str) -> Option<Locale> {
        let tag = tag.trim();
        let language = tag.split(['-', '_']).next().unwrap_or("");
        match language.to_ascii_lowercase().as_str() {
            "en" => Some(Locale::En),
            "pt" => Some(Locale::PtBr),
            "ja" => Some(Locale::Ja),
            "ar" => Some(Locale::Ar),
            _ => None,
        }
    }

    pub fn dir(self) -> Direction {
        match self {
            Locale::Ar => Direction::Rtl,
            _ => Direction::Ltr,
        }
    }

    /// `"ltr"` or `"rtl"`, as the `dir` attribute takes it.
    pub fn dir_attr(self) -> &'static str {
        match self.dir() {
            Direction::Ltr => "ltr",
            Direction::Rtl => "rtl",
        }
    }

    /// The locale's words. In the browser a catalogue other than English is there once the
    /// page has fetched it ([`provide`]); until then, or if it could not be fetched, English.
    pub fn catalogue(self) -> &'static Catalogue {
        match self {
            Locale::En => &en::EN,
            other => translated(other),
        }
    }

    fn index(self) -> usize {
        match self {
            Locale::En => 0,
            Locale::PtBr => 1,
            Locale::Ja => 2,
            Locale::Ar => 3,
        }
    }

    /// A terminal's language, from the first of `LC_ALL`, `LC_MESSAGES` and `LANG` that is set
    /// (`pt_BR.UTF-8`, `ja_JP.UTF-8`); English for `C`, `POSIX` or none.
    pub fn from_posix(var: impl Fn(&str) -> Option<String>) -> Locale {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .into_iter()
            .filter_map(var)
            .find(|v| !v.is_empty())
            .and_then(|v| Locale::from_tag(v.split(['.', '@']).next().unwrap_or("")))
            .unwrap_or_default()
    }

    /// The first locale we speak in an `Accept-Language` header, by its `q` weights (ties keep
    /// the header's order); English when none is.
    pub fn negotiate(accept_language: &str) -> Locale {
        let mut best: Option<(f32, usize, Locale)> = None;
        for (i, item) in accept_language.split(',').enumerate() {
            let mut parts = item.split(';');
            let tag = parts.next().unwrap_or("").trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            if q.is_nan() || q <= 0.0 {
                continue;
            }
            if let Some(locale) = Locale::from_tag(tag) {
                if best.is_none_or(|(bq, bi, _)| q > bq || (q == bq && i < bi)) {
                    best = Some((q, i, locale));
                }
            }
        }
        best.map(|(_, _, l)| l).unwrap_or_default()
    }

    /// The locale of a page: the reader's stored choice if it names one, else the browser's
    /// languages.
    pub fn choose(stored: Option<&str>, accept_language: Option<&str>) -> Locale {
        stored
            .and_then(Locale::from_tag)
            .unwrap_or_else(|| Locale::negotiate(accept_language.unwrap_or("")))
    }

    /// The CLDR plural category of a count written with `decimals` fraction digits.
    pub fn plural(self, n: f64, decimals: usize) -> PluralCategory {
        plural_category(self, n, decimals)
    }

    /// Picks and fills the form of `phrase` for `n` (an integer count).
    pub fn count(self, phrase: &Plural, n: u64) -> String {
        let form = match self.plural(n as f64, 0) {
            PluralCategory::Zero => phrase.zero,
            PluralCategory::One => phrase.one,
            PluralCategory::Two => phrase.two,
            PluralCategory::Few => phrase.few,
            PluralCategory::Many => phrase.many,
            PluralCategory::Other => phrase.other,
        };
        fill(form, &[("n", &self.integer(n))])
    }

    /// An integer with the locale's digit grouping: 1,234 / 1.234.
    pub fn integer(self, n: u64) -> String {
        let digits = n.to_string();
        let sep = self.group_separator();
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(sep);
            }
            out.push(c);
        }
        out
    }

    /// A number with exactly one fraction digit, in the locale's way: 4.2 / 4,2.
    pub fn one_decimal(self, x: f64) -> String {
        self.tenths((x * 10.0).round().max(0.0) as u64)
    }

    /// A count of tenths written with one fraction digit (42 → 4.2 / 4,2). Exact, and it keeps
    /// float parsing (10 KB of tables) out of the page.
    pub fn tenths(self, tenths: u64) -> String {
        format!(
            "{}{}{}",
            self.integer(tenths / 10),
            self.decimal_separator(),
            tenths % 10
        )
    }

    fn decimal_separator(self) -> char {
        match self {
            Locale::PtBr => ',',
            _ => '.',
        }
    }

    fn group_separator(self) -> char {
        match self {
            Locale::PtBr => '.',
            _ => ',',
        }
    }
}

/// The translated catalogues, built into every binary but the browser's.
#[cfg(not(all(feature = "hydrate", not(feature = "ssr"))))]
fn translated(locale: Locale) -> &'static Catalogue {
    match locale {
        Locale::En => &en::EN,
        Locale::PtBr => &pt_br::PT_BR,
        Locale::Ja => &ja::JA,
        Locale::Ar => &ar::AR,
    }
}

/// The translated catalogues the page has fetched (see [`provide`]).
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
fn translated(locale: Locale) -> &'static Catalogue {
    PROVIDED[locale.index()].get().copied().unwrap_or(&en::EN)
}

static PROVIDED: [std::sync::OnceLock<&'static Catalogue>; 4] = [
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
    std::sync::OnceLock::new(),
];

/// Hands the browser a catalogue its first download does not hold (the chunk's statics are
/// only reachable from the chunk). The first one given for a locale stays; elsewhere this
/// changes nothing, every catalogue being built in.
pub fn provide(locale: Locale, words: &'static Catalogue) {
    let _ = PROVIDED[locale.index()].set(words);
}

/// Every catalogue as JSON (`{"en": {...}, "pt-BR": {...}, ...}`), for `ponder catalogue`: the
/// end-to-end suite reads the page's words from it, and translators can review them side by side.
/// The words of comparing models are under `compare_page`.
pub fn catalogues_json() -> String {
    let all: serde_json::Map<String, serde_json::Value> = Locale::ALL
        .iter()
        .map(|l| {
            let mut value = serde_json::to_value(l.catalogue()).unwrap_or_default();
            if let Some(map) = value.as_object_mut() {
                map.insert(
                    "compare_page".into(),
                    serde_json::to_value(compare_words(*l)).unwrap_or_default(),
                );
            }
            (l.tag().to_string(), value)
        })
        .collect();
    serde_json::to_string_pretty(&all).unwrap_or_default()
}

/// The usage page's words in `locale`: apart from the catalogue, so that only the page's chunk
/// carries them.
pub fn usage_words(locale: Locale) -> &'static catalogue::UsageWords {
    match locale {
        Locale::En => &en::USAGE_WORDS,
        Locale::PtBr => &pt_br::USAGE_WORDS,
        Locale::Ja => &ja::USAGE_WORDS,
        Locale::Ar => &ar::USAGE_WORDS,
    }
}

/// The words of comparing models in `locale`: apart from the catalogue, so that only the code
/// that shows them carries them.
pub fn compare_words(locale: Locale) -> &'static catalogue::CompareWords {
    match locale {
        Locale::En => &en::COMPARE_WORDS,
        Locale::PtBr => &pt_br::COMPARE_WORDS,
        Locale::Ja => &ja::COMPARE_WORDS,
        Locale::Ar => &ar::COMPARE_WORDS,
    }
}

/// The six categories CLDR's plural rules sort numbers into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluralCategory {
    Zero,
    One,
    Two,
    Few,
    Many,
    Other,
}

/// CLDR's cardinal rules for our four languages (`n` the absolute value, `i` its integer part,
/// `v` the count of visible fraction digits).
fn plural_category(locale: Locale, n: f64, v: usize) -> PluralCategory {
    use PluralCategory::*;
    let n = n.abs();
    let i = n.trunc() as u64;
    let integral = v == 0 && n.fract() == 0.0;
    match locale {
        Locale::En => {
            if i == 1 && v == 0 {
                One
            } else {
                Other
            }
        }
        Locale::PtBr => {
            if i <= 1 {
                One
            } else if integral && i != 0 && i.is_multiple_of(1_000_000) {
                Many
            } else {
                Other
            }
        }
        Locale::Ja => Other,
        Locale::Ar => {
            if !integral && n.fract() != 0.0 {
                return Other;
            }
            match (i, i % 100) {
                (0, _) => Zero,
                (1, _) => One,
                (2, _) => Two,
                (_, 3..=10) => Few,
                (_, 11..=99) => Many,
                _ => Other,
            }
        }
    }
}

/// A stored title in `c`'s words: a title Ponder made (`TitleMark`) is said in the reader's
/// language, an empty one is a new chat, the reader's own is as they wrote it.
pub fn title(c: &Catalogue, stored: &str) -> String {
    use crate::domain::history::TitleMark;
    match TitleMark::split(stored) {
        Some((_, TitleMark::Imported)) => c.title_imported.to_string(),
        Some((of, TitleMark::Branch)) => fill(c.title_branch, &[("title", &title(c, of))]),
        Some((of, TitleMark::Copy)) => fill(c.title_copy, &[("title", &title(c, of))]),
        None if stored.trim().is_empty() => c.new_chat.to_string(),
        None => stored.to_string(),
    }
}

/// Puts named values into a template: `{name}` becomes its value; an unknown name stays as
/// written, so a catalogue's typo shows instead of vanishing.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match values.iter().find(|(k, _)| *k == name) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names a template asks for, in order (the catalogue tests compare them across locales).
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                out.push(&after[..close]);
                rest = &after[close + 1..];
            }
            None => break,
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests;
