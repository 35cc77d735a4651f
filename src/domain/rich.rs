//! Rich content the page asks the server for when it shows it: formulas to typeset and code
//! to highlight.

use serde::{Deserialize, Serialize};

/// One formula: its LaTeX source, and whether it is displayed as a block (`$$…$$`, `\[…\]`)
/// or inline (`$…$`, `\(…\)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MathItem {
    pub tex: String,
    #[serde(default)]
    pub display: bool,
}

/// One finished code block: its fence's language and its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CodeItem {
    pub lang: String,
    pub code: String,
}
