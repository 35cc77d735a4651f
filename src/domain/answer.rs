//! The one set of rules that folds a turn's events into an answer: its thinking blocks, text,
//! tool steps and sources. The server's stored record (`server::turn::persist`) and the page's
//! live state (`client::turn_state`, which the terminal shares) both fold through
//! [`Answer::apply`], so a stored answer and the one a reader watched cannot come out different.
//! How a turn ended (the page's phase, the store's status) and what only one side keeps of a
//! block (the page's clock and the reader's choice, the store's timestamps) stay with that side,
//! behind [`ThinkingBlock`].

use super::rich::{cite_marker, end_running_tools, SourceRef, ToolStatus, ToolStep};
use super::{ThinkingKind, TurnEvent};

/// A thinking block as one side keeps it. The fold decides which block an event touches and
/// when; the block decides how its own clock reads that.
pub trait ThinkingBlock {
    /// A block first heard of at `at` (ms on the holder's clock).
    fn begun(index: u32, at: f64) -> Self;
    /// The block's number in its turn.
    fn index(&self) -> u32;
    fn set_kind(&mut self, kind: ThinkingKind);
    fn text_mut(&mut self) -> &mut String;
    /// `thinking_end` arrived, with the server's measurement when it sent one.
    fn end(&mut self, duration_ms: Option<u64>, cut_short: bool, now: f64);
    /// Still streaming.
    fn is_open(&self) -> bool;
    /// The turn ended (error, stop, drop) while the block was open: its time is frozen.
    fn interrupt(&mut self, now: f64);
}

/// An answer being folded: its thinking blocks and its body, borrowed from whichever record
/// holds them.
pub struct Answer<'a, B> {
    pub blocks: &'a mut Vec<B>,
    pub body: Body<'a>,
}

impl<B: ThinkingBlock> Answer<'_, B> {
    /// Folds `event` in when it shapes the answer (thinking, body, `reclassify`) and says whether
    /// it did; how the turn ended is the holder's. `turn_began` places a joined turn's blocks
    /// at the moment they really began (`thinking_start`'s `at_ms`).
    pub fn apply(&mut self, event: &TurnEvent, now: f64, turn_began: Option<f64>) -> bool {
        match event {
            TurnEvent::ThinkingStart { block, kind, at_ms } => {
                let began = match (turn_began, at_ms) {
                    (Some(start), Some(at)) => (start + *at as f64).min(now),
                    _ => now,
                };
                self.block(*block, began).set_kind(*kind);
            }
            TurnEvent::Thinking { block, text } => {
                self.block(*block, now).text_mut().push_str(text)
            }
            TurnEvent::ThinkingEnd {
                block,
                duration_ms,
                cut_short,
            } => self.block(*block, now).end(*duration_ms, *cut_short, now),
            TurnEvent::Reclassify { block } => {
                let moved = std::mem::take(self.body.text);
                self.block(*block, now).text_mut().insert_str(0, &moved);
            }
            _ => {
                let blocks = self.blocks.len();
                return self.body.apply(event, blocks);
            }
        }
        true
    }

    /// The turn ended without finishing what was open: open blocks and running tools stop.
    pub fn interrupt(&mut self, now: f64) {
        end_running_tools(self.body.tools);
        for b in self.blocks.iter_mut().filter(|b| b.is_open()) {
            b.interrupt(now);
        }
    }

    fn block(&mut self, index: u32, at: f64) -> &mut B {
        let pos = match self.blocks.iter().rposition(|b| b.index() == index) {
            Some(pos) => pos,
            None => {
                self.blocks.push(B::begun(index, at));
                self.blocks.len() - 1
            }
        };
        &mut self.blocks[pos]
    }
}

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

    #[derive(Debug, Default, PartialEq)]
    struct Kept {
        index: u32,
        kind: ThinkingKind,
        text: String,
        began: f64,
        ended: Option<(Option<u64>, bool)>,
        interrupted: bool,
    }

    impl ThinkingBlock for Kept {
        fn begun(index: u32, at: f64) -> Self {
            Kept {
                index,
                began: at,
                ..Kept::default()
            }
        }
        fn index(&self) -> u32 {
            self.index
        }
        fn set_kind(&mut self, kind: ThinkingKind) {
            self.kind = kind;
        }
        fn text_mut(&mut self) -> &mut String {
            &mut self.text
        }
        fn end(&mut self, duration_ms: Option<u64>, cut_short: bool, _now: f64) {
            self.ended = Some((duration_ms, cut_short));
        }
        fn is_open(&self) -> bool {
            self.ended.is_none() && !self.interrupted
        }
        fn interrupt(&mut self, _now: f64) {
            self.interrupted = true;
        }
    }

    #[test]
    fn blocks_are_found_by_number_a_reclassify_moves_the_text_and_an_interrupt_stops_the_open_ones()
    {
        let (mut blocks, mut text, mut tools, mut sources) =
            (Vec::<Kept>::new(), String::new(), Vec::new(), Vec::new());
        let mut answer = Answer {
            blocks: &mut blocks,
            body: Body {
                text: &mut text,
                tools: &mut tools,
                sources: &mut sources,
            },
        };
        let events = [
            TurnEvent::ThinkingStart {
                block: 0,
                kind: ThinkingKind::Summary,
                at_ms: Some(400),
            },
            TurnEvent::Thinking {
                block: 0,
                text: "plan".into(),
            },
            TurnEvent::ThinkingEnd {
                block: 0,
                duration_ms: Some(900),
                cut_short: false,
            },
            TurnEvent::Delta {
                text: "<think>".into(),
            },
            TurnEvent::Reclassify { block: 7 },
            TurnEvent::Thinking {
                block: 7,
                text: " more".into(),
            },
            TurnEvent::ToolStart {
                tool: 0,
                name: "search".into(),
                input: String::new(),
            },
        ];
        let taken = events
            .iter()
            .filter(|e| answer.apply(e, 10_000.0, Some(1_000.0)))
            .count();
        assert!(!answer.apply(&TurnEvent::Clock { turn_ms: 5 }, 10_000.0, None));
        answer.interrupt(11_000.0);
        assert_eq!(taken, events.len());
        assert_eq!(text, "", "the reclassified text left the answer");
        assert_eq!(tools[0].status, ToolStatus::Failed, "a running tool stops");
        assert_eq!(tools[0].after_blocks, 2);
        assert_eq!(
            blocks.len(),
            2,
            "block 7 is the second block, not the eighth"
        );
        assert_eq!(
            (blocks[0].kind, blocks[0].text.as_str(), blocks[0].began),
            (ThinkingKind::Summary, "plan", 1_400.0),
            "a joined turn's block is placed when it began"
        );
        assert_eq!(blocks[0].ended, Some((Some(900), false)));
        assert!(!blocks[0].interrupted, "an ended block is not interrupted");
        assert_eq!(
            (
                blocks[1].index,
                blocks[1].text.as_str(),
                blocks[1].interrupted
            ),
            (7, "<think> more", true)
        );
    }
}
