//! A tool step: what the model asked a tool (web search, code execution, an MCP tool), whether
//! it is running, finished or failed, and what came back, between the thinking blocks.

use leptos::prelude::*;

use crate::client::labels::{tool_label, tool_status};
use crate::client::turn_state::TurnState;
use crate::domain::{ToolStatus, ToolStep};

/// One tool step of an assistant turn, in stream order between its thinking blocks. Its
/// output, when there is one, is behind a disclosure: a summary, never the whole result.
#[component]
pub fn ToolStepCard(
    /// The turn the step belongs to.
    turn: RwSignal<TurnState>,
    /// The step's position in the turn's tools.
    index: usize,
) -> impl IntoView {
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let step = Memo::new(move |_| turn.with(|t| t.tools.get(index).cloned().unwrap_or_default()));
    move || {
        let ToolStep {
            name,
            input,
            status,
            output,
            ..
        } = step.get();
        let label = tool_label(&name, l);
        let classes = match status {
            ToolStatus::Running => "tool-step running",
            ToolStatus::Finished => "tool-step finished",
            ToolStatus::Failed => "tool-step failed",
        };
        let header = view! {
            <span class="tool-indicator" aria-hidden="true"></span>
            <span class="tool-name">{label.clone()}</span>
            {(!input.is_empty()).then(|| view! { <span class="tool-input" dir="auto">{input.clone()}</span> })}
            <span class="tool-status">{tool_status(status, l)}</span>
        };
        let group = crate::i18n::fill(t.tool_card, &[("tool", &label)]);
        if output.is_empty() {
            view! {
                <div class=classes role="group" aria-label=group>
                    <div class="tool-header">{header}</div>
                </div>
            }
            .into_any()
        } else {
            view! {
                <div class=classes role="group" aria-label=group>
                    <details class="tool-details">
                        <summary>{header}</summary>
                        <div class="tool-output" dir="auto" tabindex="0" role="region" aria-label=t.tool_output>{output}</div>
                    </details>
                </div>
            }
            .into_any()
        }
    }
}
