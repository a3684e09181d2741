//! Checks across files that parsing alone cannot make (`reloop validate`):
//! each tool a recording calls has a fixture in the scenario (or is one of
//! the loop's pseudo-tools, or a task tool the scenario enables; a black-box
//! `agent:` runs its own tools, so it needs none). Errors carry the line of the offending call.
//! Faults aimed past the recording's end are refused when the scenario
//! loads (`validate_settings`), so they never reach this check.

use std::path::Path;

use reloop_agent::task_store::is_task_tool;
use reloop_agent::tools::pseudo;
use reloop_mock::recording::{Exchange, Part, ToolCallPart};

use crate::scenario::Scenario;
use crate::yaml::InputError;
use crate::yaml_locate::{locate, locate_exact};

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
            let loop_answers = pseudo::is_pseudo(&call.name) || (scenario.spec.loop_settings.task_tools && is_task_tool(&call.name));
            if !loop_answers && !scenario.spec.tools.contains_key(&call.name) {
                let message = format!("calls tool `{}`, which {} declares no fixture for", call.name, scenario.file.display());
                errors.push(call_error(&recording_file, &recording_text, (i, part, j), message));
            }
        }
    }
    errors
}

/// An error about the call of exchange `i` (part `part`, call `j`), at its
/// name's line in the recording, written as v2 parts or as v1's
/// `tool_calls` shorthand.
pub fn call_error(recording_file: &Path, recording_text: &str, (i, part, j): (usize, usize, usize), message: String) -> InputError {
    let written = [format!("exchanges[{i}].parts[{part}].name"), format!("exchanges[{i}].tool_calls[{j}].name")];
    let located = written.iter().find_map(|field| locate_exact(recording_text, field).map(|p| (field.clone(), p)));
    let (field, position) = match located {
        Some((field, position)) => (field, Some(position)),
        None => (written[0].clone(), locate(recording_text, &written[0])),
    };
    let error = InputError::field(recording_file, field, message);
    InputError { line: position.map(|p| p.0), column: position.map(|p| p.1), ..error }
}

/// The tool-call parts of `exchange` with their indices among its parts.
pub fn tool_call_parts(exchange: &Exchange) -> impl Iterator<Item = (usize, &ToolCallPart)> {
    exchange.parts.iter().enumerate().filter_map(|(i, part)| if let Part::ToolCall(call) = part { Some((i, call)) } else { None })
}
