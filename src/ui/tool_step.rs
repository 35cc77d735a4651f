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

/// A run of tool steps next to each other, folded into one line that says how many and which
/// (the one running, while one runs), and opens to the steps themselves.
#[component]
pub fn ToolRun(
    /// The turn the steps belong to.
    turn: RwSignal<TurnState>,
    /// The run's first step in the turn's tools.
    first: usize,
) -> impl IntoView {
    let l = crate::ui::locale::locale();
    let t = l.catalogue();
    let end = Memo::new(move |_| turn.with(|t| t.run_end(first)));
    let line = Memo::new(move |_| {
        turn.with(|turn| {
            let steps = turn.tools.get(first..end.get()).unwrap_or_default();
            let running = steps.iter().find(|s| s.status == ToolStatus::Running);
            let failed = steps.iter().any(|s| s.status == ToolStatus::Failed);
            let mut names: Vec<String> = Vec::new();
            for s in steps {
                let name = tool_label(&s.name, l);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            let state = match (running, failed) {
                (Some(s), _) => Some(format!(
                    "{}: {}",
                    tool_label(&s.name, l),
                    tool_status(ToolStatus::Running, l)
                )),
                (None, true) => Some(tool_status(ToolStatus::Failed, l).to_string()),
                (None, false) => None,
            };
            (steps.len(), names.join(", "), state, running.is_some())
        })
    });
    view! {
        <div class="tool-step tool-run" class:running=move || line.with(|l| l.3) role="group" aria-label=move || l.count(&t.tool_steps, line.with(|l| l.0) as u64)>
            <details class="tool-details">
                <summary>
                    <span class="tool-indicator" aria-hidden="true"></span>
                    <span class="tool-name">{move || l.count(&t.tool_steps, line.with(|l| l.0) as u64)}</span>
                    <span class="tool-input" dir="auto">{move || line.with(|l| l.1.clone())}</span>
                    {move || line.with(|l| l.2.clone()).map(|s| view! { <span class="tool-status">{s}</span> })}
                </summary>
                <div class="tool-run-steps">
                    <For each=move || first..end.get() key=|i| *i let:index>
                        <ToolStepCard turn index/>
                    </For>
                </div>
            </details>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use leptos::prelude::*;

    use super::ToolRun;
    use crate::client::turn_state::TurnState;
    use crate::domain::{ToolStatus, ToolStep};
    use crate::i18n::Locale;

    fn render(locale: Locale, tools: Vec<ToolStep>) -> String {
        let owner = Owner::new();
        owner.set();
        provide_context(locale);
        let turn = RwSignal::new(TurnState {
            tools,
            ..TurnState::default()
        });
        view! { <ToolRun turn first=0/> }.to_html()
    }

    fn step(name: &str, status: ToolStatus) -> ToolStep {
        ToolStep {
            name: name.into(),
            input: "q".into(),
            status,
            ..ToolStep::default()
        }
    }

    #[test]
    fn a_run_of_steps_is_one_line_that_says_how_many_and_which_and_opens_to_them() {
        let html = render(
            Locale::En,
            vec![
                step("web_search", ToolStatus::Finished),
                step("web_search", ToolStatus::Finished),
                step("code_execution", ToolStatus::Running),
            ],
        );
        assert!(html.contains("3 tool steps"), "{html}");
        assert!(
            html.contains("Web search, Code execution"),
            "each name once: {html}"
        );
        assert!(
            html.contains("Code execution: Running…"),
            "the one running: {html}"
        );
        assert_eq!(
            html.matches("<details").count(),
            1,
            "one line that opens: {html}"
        );
        assert_eq!(
            html.matches("class=\"tool-step running\"").count()
                + html.matches("class=\"tool-step finished\"").count(),
            3,
            "every step inside it: {html}"
        );

        let done = render(
            Locale::Ja,
            vec![
                step("web_search", ToolStatus::Finished),
                step("web_search", ToolStatus::Failed),
            ],
        );
        assert!(done.contains("ツールの手順（2件）"), "{done}");
    }
}
