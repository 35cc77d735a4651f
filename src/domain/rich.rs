//! Rich content the page asks the server for when it shows it: formulas to typeset and code
//! to highlight.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The most formulas one `render/math` request converts (the page splits a longer list).
pub const MAX_FORMULAS: usize = 500;

/// The most code blocks one `render/code` request highlights (the page splits a longer list).
pub const MAX_BLOCKS: usize = 100;

/// One formula: its LaTeX source, and whether it is displayed as a block (`$$…$$`, `\[…\]`)
/// or inline (`$…$`, `\(…\)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub struct MathItem {
    pub tex: String,
    #[serde(default)]
    pub display: bool,
}

/// One finished code block: its fence's language and its text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub struct CodeItem {
    pub lang: String,
    pub code: String,
}

/// How far a tool step has got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolStatus {
    /// Asked for and not finished yet.
    #[default]
    Running,
    Finished,
    /// The tool reported an error, or it never ran (a tool the model asked the app to run,
    /// a turn that ended first).
    Failed,
}

crate::domain::wire::wire_names!(ToolStatus {
    Running = "running",
    Finished = "finished",
    Failed = "failed",
});

/// One tool the model used inside a turn (web search, code execution, an MCP tool, a function
/// it asked for), as the bubble shows it between the thinking blocks and stores it with the
/// answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ToolStep {
    pub name: String,
    /// A short summary of what it was asked (a query, the first lines of code, arguments).
    #[serde(default)]
    pub input: String,
    #[serde(default)]
    pub status: ToolStatus,
    /// A short summary of what it gave back, or why it failed.
    #[serde(default)]
    pub output: String,
    /// How many thinking blocks came before it: where it sits in stream order.
    #[serde(default)]
    pub after_blocks: u32,
}

/// The tools of a turn that ended: one still running never returned, so it failed.
pub fn end_running_tools(tools: &mut [ToolStep]) {
    for t in tools {
        if t.status == ToolStatus::Running {
            t.status = ToolStatus::Failed;
        }
    }
}

/// A source an answer can cite: `[^n]` in the answer text refers to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SourceRef {
    pub n: u32,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl SourceRef {
    /// The host of its address without `www.`, the short form a Sources list shows.
    pub fn domain(&self) -> &str {
        let rest = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, r)| r);
        let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        let host = match host.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host,
        };
        host.strip_prefix("www.").unwrap_or(host)
    }

    /// What the list shows as its name: the title, else the domain.
    pub fn label(&self) -> &str {
        match self.title.as_deref().map(str::trim) {
            Some(t) if !t.is_empty() => t,
            _ => self.domain(),
        }
    }
}

/// The marker a citation of source `n` leaves in the answer text: a markdown footnote
/// reference, so the answer reads the same in Ponder, in a copy and in an export.
pub fn cite_marker(n: u32) -> String {
    format!("[^{n}]")
}

/// The answer with its sources as markdown footnotes after it (`[^1]: [Title](url)`): what Copy
/// and the markdown export carry. The answer is returned unchanged when it has no sources.
pub fn with_footnotes(answer: &str, sources: &[SourceRef]) -> String {
    if sources.is_empty() {
        return answer.to_string();
    }
    let mut out = answer.trim_end().to_string();
    out.push_str("\n\n");
    for s in sources {
        let title = s.label().replace(['[', ']'], "").replace('\n', " ");
        out.push_str(&format!(
            "[^{}]: [{}](<{}>)\n",
            s.n,
            title,
            s.url.replace('>', "%3E")
        ));
    }
    out
}

/// `text` on one line, cut to `max` characters with an ellipsis: tool inputs and outputs are
/// summaries, whatever the tool sent.
pub fn summary(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in text.split_whitespace() {
        if count > 0 {
            if count + 1 >= max {
                out.push('…');
                return out;
            }
            out.push(' ');
            count += 1;
        }
        for c in word.chars() {
            if count == max {
                out.push('…');
                return out;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

/// How long a tool step's input summary may be, in characters.
pub const TOOL_INPUT_CHARS: usize = 200;
/// How long a tool step's output summary may be, in characters.
pub const TOOL_OUTPUT_CHARS: usize = 1_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn source(n: u32, url: &str, title: Option<&str>) -> SourceRef {
        SourceRef {
            n,
            url: url.into(),
            title: title.map(Into::into),
        }
    }

    #[test]
    fn a_source_shows_its_title_or_else_its_domain() {
        let s = source(1, "https://www.example.com:8443/a?b#c", None);
        assert_eq!(s.domain(), "example.com");
        assert_eq!(s.label(), "example.com");
        let s = source(2, "https://user@docs.rs/sqlx", Some("sqlx docs"));
        assert_eq!(s.domain(), "docs.rs");
        assert_eq!(s.label(), "sqlx docs");
        assert_eq!(source(3, "https://x.org", Some("  ")).label(), "x.org");
    }

    #[test]
    fn footnotes_follow_the_answer_and_cannot_break_their_own_syntax() {
        assert_eq!(with_footnotes("Plain.", &[]), "Plain.");
        let out = with_footnotes(
            "Rust is fast.[^1]\n",
            &[
                source(1, "https://a.example/x", Some("A [b]\nc")),
                source(2, "https://b.example/y>z", None),
            ],
        );
        assert_eq!(
            out,
            "Rust is fast.[^1]\n\n[^1]: [A b c](<https://a.example/x>)\n[^2]: [b.example](<https://b.example/y%3Ez>)\n"
        );
    }

    #[test]
    fn summaries_are_one_line_and_bounded() {
        assert_eq!(summary("  a\n\n b\tc ", 10), "a b c");
        assert_eq!(summary("abcdef", 3), "abc…");
        assert_eq!(summary("ab cd", 3), "ab…");
        assert_eq!(summary("éééé", 4), "éééé");
        assert_eq!(cite_marker(12), "[^12]");
    }
}
