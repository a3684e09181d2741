//! Tool calling for models without native tools (`loop.tool_calling:
//! text`, ZeroClaw's prompt tool-calling in seed 003): the request declares
//! no tools and describes them in the system prompt ([`render`]); the
//! model's calls are read from its text ([`parse`]); results go back as a
//! user message.
//!
//! The transcript keeps its usual shape (an assistant turn with its calls,
//! one result per call), so doom-loop detection, guards and reports work
//! unchanged; only the view sent is rendered as text.

pub mod parse;
pub mod render;

use reloop_wire::ToolCall;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use parse::{ParsedText, TextCall, parse_text_tool_calls};
pub use render::{TOOL_RESULTS_HEADER, protocol_instructions, render_view, system_with_protocol};

/// How the model is told about tools and how it calls them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalling {
    /// The API's own tool declarations and tool calls.
    #[default]
    Native,
    /// Tools described in the system prompt; calls read from the text.
    Text,
}

/// The name given to a call that could not be read: the loop answers it
/// with the reason as a tool error, so the model sees what went wrong.
pub const MALFORMED_TOOL_CALL: &str = "malformed_tool_call";

/// The calls of a text turn at `step`, as tool calls with ids the loop
/// makes up (`text-{step}-{n}`): a malformed block becomes a call of
/// [`MALFORMED_TOOL_CALL`] whose arguments are the reason.
pub fn tool_calls_in_text(text: &str, step: u32) -> Vec<ToolCall> {
    parse_text_tool_calls(text)
        .calls
        .into_iter()
        .enumerate()
        .map(|(n, call)| {
            let id = format!("text-{step}-{n}");
            match call {
                TextCall::Call { name, arguments } => ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() },
                TextCall::Malformed(reason) => ToolCall { id: id.into(), name: MALFORMED_TOOL_CALL.into(), arguments: reason.into() },
            }
        })
        .collect()
}

/// The error a malformed call gets back.
pub fn malformed_message(reason: &str) -> String {
    format!("malformed tool call: {reason}. Write each call as <tool_call>{{\"name\": \"…\", \"arguments\": {{…}}}}</tool_call>.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_get_ids_and_malformed_blocks_keep_their_reason() {
        let text = "<tool_call>{\"name\": \"ls\"}</tool_call><tool_call>{oops</tool_call>";
        let calls = tool_calls_in_text(text, 3);
        assert_eq!(calls[0], ToolCall { id: "text-3-0".into(), name: "ls".into(), arguments: "{}".into() });
        assert_eq!(calls[1].id, "text-3-1");
        assert_eq!(calls[1].name, MALFORMED_TOOL_CALL);
        assert!(calls[1].arguments.contains("does not parse"));
    }
}
