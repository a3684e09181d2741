//! Roku's `Agent` sub-agents (seeds 000, 001: `execute_sub_agent`): the
//! model delegates a self-contained task to a child loop with its own
//! history and step budget, and gets back only a compressed result.
//!
//! The child talks to the same provider (the same mock session, whose
//! recording authors its requests in order), runs the same tools, and may
//! not delegate further (depth 1). It has no user: `ask_user` ends it. A
//! child that outlives its timeout (virtual time) is abandoned and the
//! parent gets an error result. The loop side is `runtime_loop/delegate.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::outcome::Outcome;
use crate::state::LoopState;
use crate::tools::{ToolOutput, ToolSpec};

/// The tool's name, as Roku (and Claude Code) call it.
pub const AGENT_TOOL: &str = "Agent";

/// The scenario's `loop.sub_agent`, with Roku's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SubAgentSettings {
    /// Declare the `Agent` tool (default off).
    pub enabled: bool,
    /// The child's step budget (Roku: `max_steps = 10`).
    pub step_budget: u32,
    /// How long a child may run, in seconds of the run's clock (Roku: 120).
    pub timeout_secs: u64,
    /// The longest result handed back, in characters (Roku: 4,000).
    pub result_max_chars: usize,
}

impl Default for SubAgentSettings {
    fn default() -> Self {
        Self { enabled: false, step_budget: 10, timeout_secs: 120, result_max_chars: 4_000 }
    }
}

/// The declaration of the `Agent` tool.
pub fn agent_tool_spec() -> ToolSpec {
    ToolSpec {
        name: AGENT_TOOL.into(),
        description: "Delegate a self-contained task to a sub-agent. It works with the same tools, its own history and a \
                      small step budget, and returns only its final answer. It cannot ask the user or delegate further."
            .into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "description": { "type": "string", "description": "A short name for the task (3-5 words)." },
                "prompt": { "type": "string", "description": "The task, with everything the sub-agent needs to know." },
            },
            "required": ["prompt"],
        }),
    }
}

/// The task a call delegates: its `prompt` (or `task`), or `None`.
pub fn delegated_task(arguments: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    ["prompt", "task"].iter().find_map(|key| value.get(key)?.as_str()).map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned)
}

/// The result the parent gets from a child that ended (the compressed
/// result: its answer, cut to `max_chars`), or the error saying why there is
/// none.
pub fn child_result(child: &LoopState, max_chars: usize) -> ToolOutput {
    match (child.outcome(), &child.final_answer) {
        (Some(Outcome::FinalAnswer), Some(answer)) => ToolOutput::ok(cut_chars(answer, max_chars)),
        (Some(Outcome::AskUser), _) => {
            ToolOutput::error(format!("the sub-agent stopped to ask the user, which it cannot: {}", child.pending_question.as_deref().unwrap_or_default()))
        }
        (Some(Outcome::StepBudgetExhausted), _) => ToolOutput::error(format!("the sub-agent used its {} steps without an answer", child.steps_used())),
        (outcome, _) => ToolOutput::error(format!(
            "the sub-agent ended with {}{}",
            outcome.map_or("no outcome", Outcome::as_str),
            child.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
        )),
    }
}

/// The error result of a child that outlived its timeout.
pub fn timeout_result(timeout_secs: u64) -> ToolOutput {
    ToolOutput::error(format!("the sub-agent timed out after {timeout_secs} s and was stopped"))
}

/// `text` cut to `max` characters, with a marker naming what was left out.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}\n[… {} characters omitted …]", &text[..at], text[at..].chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(outcome: Outcome, answer: Option<&str>) -> LoopState {
        let mut state = LoopState::new("t", 3);
        state.final_answer = answer.map(str::to_owned);
        state.finish(outcome);
        state
    }

    #[test]
    fn the_answer_is_handed_back_cut_to_size() {
        let output = child_result(&finished(Outcome::FinalAnswer, Some("héllo world")), 5);
        assert_eq!(output, ToolOutput::ok("héllo\n[… 6 characters omitted …]"));
        assert_eq!(child_result(&finished(Outcome::FinalAnswer, Some("ok")), 5), ToolOutput::ok("ok"));
    }

    #[test]
    fn a_child_without_an_answer_is_an_error() {
        assert!(child_result(&finished(Outcome::StepBudgetExhausted, None), 9).content.contains("without an answer"));
        assert!(child_result(&finished(Outcome::AskUser, None), 9).content.contains("ask the user"));
        let failed = child_result(&finished(Outcome::Fail, None), 9);
        assert!(failed.is_error && failed.content.starts_with("the sub-agent ended with fail"), "{failed:?}");
    }

    #[test]
    fn the_task_is_the_prompt() {
        assert_eq!(delegated_task(r#"{"description": "d", "prompt": " find x "}"#).as_deref(), Some("find x"));
        assert_eq!(delegated_task(r#"{"task": "y"}"#).as_deref(), Some("y"));
        assert_eq!(delegated_task(r#"{"prompt": ""}"#), None);
        assert_eq!(delegated_task("not json"), None);
    }
}
