//! Checks across files that parsing alone cannot make (`reloop validate`):
//! each tool a recording calls has a fixture in the scenario (or is one of
//! the loop's pseudo-tools, or a task tool the scenario enables; a black-box
//! `agent:` runs its own tools, so it needs none). Errors carry the line of the offending call.
//! Faults aimed past the recording's end are refused when the scenario
//! loads (`validate_settings`), so they never reach this check.

use std::path::Path;

use reloop_agent::deferred_tools::TOOL_SEARCH;
use reloop_agent::sub_agent::AGENT_TOOL;
use reloop_agent::task_store::is_task_tool;
use reloop_agent::tools::pseudo;

use crate::call_site::{call_error, tool_call_parts};
use crate::scenario::Scenario;
use crate::yaml::InputError;

/// Every broken reference of `scenario` (already loaded, with its recording).
pub fn check(scenario: &Scenario) -> Vec<InputError> {
    let mut errors = Vec::new();
    if scenario.spec.agent.is_some() {
        return errors;
    }
    let recording_file = scenario.file.parent().unwrap_or(Path::new(".")).join(&scenario.spec.recording);
    let recording_text = std::fs::read_to_string(&recording_file).unwrap_or_default();
    for (i, exchange) in scenario.recording.exchanges.iter().enumerate() {
        for (j, (part, call)) in tool_call_parts(exchange).enumerate() {
            let settings = &scenario.spec.loop_settings;
            let loop_answers = pseudo::is_pseudo(&call.name)
                || (settings.task_tools && is_task_tool(&call.name))
                || (settings.sub_agent.enabled && call.name == AGENT_TOOL)
                || (settings.deferred_tools.threshold_tokens.is_some() && call.name == TOOL_SEARCH);
            if !loop_answers && !scenario.spec.tools.contains_key(&call.name) {
                let message = format!("calls tool `{}`, which {} declares no fixture for", call.name, scenario.file.display());
                errors.push(call_error(&recording_file, &recording_text, (i, part, j), message));
            }
        }
    }
    errors
}
