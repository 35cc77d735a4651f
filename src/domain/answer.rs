//! The one set of rules that folds a turn's events into an answer's text, tool steps and
//! sources. The server's stored record (`server::turn::persist`) and the page's live state
//! (`client::turn_state`, which the terminal shares) both fold through [`Body::apply`], so a
//! stored answer and the one a reader watched cannot come out different. What only one side
//! keeps (block timing, the page's phase, the store's status) stays with that side.

use super::rich::{cite_marker, SourceRef, ToolStatus, ToolStep};
use super::TurnEvent;

/// The most tool steps one answer keeps; the assembler streams no more than this.
pub const MAX_TOOLS: usize = 200;

/// An answer's text, tool steps and sources, borrowed from whichever record holds them.
pub struct Body<'a> {
    pub text: &'a mut String,
    pub tools: &'a mut Vec<ToolStep>,
    pub sources: &'a mut Vec<SourceRef>,
}

impl Body<'_> {
    /// Folds `event` in when it shapes the answer's body (`delta`, `tool_start`, `tool_end`,
    /// `source`, `cite`) and says whether it did. `blocks` is how many thinking blocks began
    /// before it: a tool's place in stream order.
    pub fn apply(&mut self, event: &TurnEvent, blocks: usize) -> bool {
        match event {
            TurnEvent::Delta { text } => self.text.push_str(text),
            TurnEvent::ToolStart { tool, name, input } => {
                let index = *tool as usize;
                if index < MAX_TOOLS {
                    while self.tools.len() <= index {
                        self.tools.push(ToolStep {
                            after_blocks: blocks as u32,
                            ..ToolStep::default()
                        });
                    }
                    self.tools[index].name = name.clone();
                    self.tools[index].input = input.clone();
                }
            }
            TurnEvent::ToolEnd {
                tool,
                status,
                output,
            } => {
                if let Some(step) = self.tools.get_mut(*tool as usize) {
                    step.status = match status {
                        ToolStatus::Running => ToolStatus::Finished,
                        other => *other,
                    };
                    step.output = output.clone();
                }
            }
            TurnEvent::Source { n, url, title } => {
                if !self.sources.iter().any(|s| s.n == *n) {
                    let at = self.sources.partition_point(|s| s.n < *n);
                    self.sources.insert(
                        at,
                        SourceRef {
                            n: *n,
                            url: url.clone(),
                            title: title.clone(),
                        },
                    );
                }
            }
            TurnEvent::Cite { n } => {
                if self.sources.iter().any(|s| s.n == *n) {
                    self.text.push_str(&cite_marker(*n));
                }
            }
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(events: &[TurnEvent]) -> (String, Vec<ToolStep>, Vec<SourceRef>, usize) {
        let (mut text, mut tools, mut sources) = (String::new(), Vec::new(), Vec::new());
        let mut taken = 0;
        for e in events {
            let mut body = Body {
                text: &mut text,
                tools: &mut tools,
                sources: &mut sources,
            };
            taken += usize::from(body.apply(e, 2));
        }
        (text, tools, sources, taken)
    }

    #[test]
    fn the_body_takes_text_tools_sources_and_cites_and_leaves_the_rest() {
        let source = |n: u32| TurnEvent::Source {
            n,
            url: format!("https://example.org/{n}"),
            title: None,
        };
        let (text, tools, sources, taken) = fold(&[
            TurnEvent::Thinking {
                block: 0,
                text: "not the body".into(),
            },
            TurnEvent::ToolStart {
                tool: 0,
                name: "search".into(),
                input: "q".into(),
            },
            TurnEvent::ToolEnd {
                tool: 0,
                status: ToolStatus::Running,
                output: "3 results".into(),
            },
            source(2),
            source(1),
            source(2),
            TurnEvent::Delta { text: "Yes".into() },
            TurnEvent::Cite { n: 1 },
            TurnEvent::Cite { n: 9 },
            TurnEvent::ToolStart {
                tool: MAX_TOOLS as u32,
                name: "over".into(),
                input: String::new(),
            },
        ]);
        assert_eq!(taken, 9, "all but the thinking");
        assert_eq!(
            text, "Yes[^1]",
            "a citation of an unknown source is dropped"
        );
        assert_eq!(tools.len(), 1, "a tool past the cap is not kept");
        assert_eq!(
            (tools[0].status, tools[0].after_blocks),
            (ToolStatus::Finished, 2)
        );
        assert_eq!(
            sources.iter().map(|s| s.n).collect::<Vec<_>>(),
            [1, 2],
            "in order, each once"
        );
    }
}
