//! Checks across files that parsing alone cannot make (`reloop validate`):
//! each fault of a scenario aims at an exchange its recording has, and each
//! tool its recording calls has a fixture in the scenario (or is one of the
//! loop's pseudo-tools). Errors carry the line of the offending item.

use std::path::Path;

use reloop_agent::tools::pseudo;

use crate::scenario::Scenario;
use crate::yaml::InputError;

/// Every broken reference of `scenario` (already loaded, with its recording).
pub fn check(scenario: &Scenario) -> Vec<InputError> {
    let mut errors = Vec::new();
    let scenario_text = std::fs::read_to_string(&scenario.file).unwrap_or_default();
    let exchanges = scenario.recording.exchanges.len();
    for (i, fault) in scenario.spec.faults.iter().enumerate() {
        if fault.exchange >= exchanges {
            let message = format!("aims at exchange {} but the recording has {exchanges} (0-based)", fault.exchange);
            errors.push(at(&scenario.file, item_line(&scenario_text, "faults", i), format!("faults[{i}].exchange"), message));
        }
    }
    let recording_file = scenario.file.parent().unwrap_or(Path::new(".")).join(&scenario.spec.recording);
    let recording_text = std::fs::read_to_string(&recording_file).unwrap_or_default();
    for (i, exchange) in scenario.recording.exchanges.iter().enumerate() {
        for (j, call) in exchange.tool_calls.iter().enumerate() {
            if !pseudo::is_pseudo(&call.name) && !scenario.spec.tools.contains_key(&call.name) {
                let message = format!("calls tool `{}`, which {} declares no fixture for", call.name, scenario.file.display());
                errors.push(at(&recording_file, item_line(&recording_text, "exchanges", i), format!("exchanges[{i}].tool_calls[{j}].name"), message));
            }
        }
    }
    errors
}

fn at(file: &Path, line: Option<u64>, field: String, message: String) -> InputError {
    InputError { line, ..InputError::field(file, field, message) }
}

/// The 1-based line of item `index` of the top-level block list `key`.
fn item_line(text: &str, key: &str, index: usize) -> Option<u64> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|line| line.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':')))?;
    let body = lines[start + 1..].iter().take_while(|line| line.is_empty() || line.starts_with([' ', '-', '#']));
    let items: Vec<(usize, usize)> = body
        .enumerate()
        .filter_map(|(offset, line)| {
            let indent = line.len() - line.trim_start().len();
            line.trim_start().starts_with("- ").then_some((start + 1 + offset, indent))
        })
        .collect();
    let outer = items.iter().map(|item| item.1).min()?;
    items.iter().filter(|item| item.1 == outer).nth(index).map(|item| item.0 as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_line_of_a_list_item() {
        let text = "name: x\nfaults:\n  - exchange: 0\n    times: 2\n  - { exchange: 9 }\nexpect: {}\n";
        assert_eq!(item_line(text, "faults", 0), Some(3));
        assert_eq!(item_line(text, "faults", 1), Some(5));
        assert_eq!(item_line(text, "faults", 2), None);
        assert_eq!(item_line(text, "expect", 0), None);
    }
}
