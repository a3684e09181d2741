//! Where a recording's tool calls sit: the tool-call parts of an exchange,
//! and an error that points at a call's line in the recording file, for the
//! checks that load a scenario and for `reloop validate`.

use std::path::Path;

use reloop_recording::{Exchange, Part, ToolCallPart};

use crate::yaml::InputError;
use reloop_files::yaml_locate::{locate, locate_exact};

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
