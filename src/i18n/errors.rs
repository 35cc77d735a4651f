//! Failures in the reader's language, from their stable code and parameters.

use super::Locale;
use crate::domain::Failure;

/// The failure's sentence in `l`, or `None` for a code with no words here (its English
/// `message` is shown then).
pub fn text(_f: &Failure, _l: Locale) -> Option<String> {
    None
}
