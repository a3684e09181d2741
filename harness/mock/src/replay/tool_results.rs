//! The tool results a request sends back, as the server sees them: which
//! call each answers and what it said. A black-box agent's tool runs are
//! out of sight; its next request is the only witness of their results, and
//! the doom-loop detectors need them (no progress is "the calls vary, the
//! results do not"). Each result is kept once, with the request that first
//! sent it, not with every later request that repeats the history.

use reloop_wire::{Message, Prompt, Text};
use serde::Serialize;

/// One tool result in a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResultSeen {
    /// The id of the call it answers.
    pub call_id: String,
    /// What the tool returned, or its error text.
    pub content: Text,
    /// Whether the tool failed.
    pub is_error: bool,
}

/// The results `request` sends for the model's latest turn: those after
/// its last assistant message (earlier ones were seen with earlier requests).
pub fn new_tool_results(request: &Prompt) -> Vec<ToolResultSeen> {
    let start = request.messages.iter().rposition(|m| matches!(m, Message::Assistant { .. })).map_or(0, |i| i + 1);
    request.messages[start..]
        .iter()
        .filter_map(|message| match message {
            Message::ToolResult { call_id, content, is_error, .. } => {
                Some(ToolResultSeen { call_id: call_id.to_string(), content: content.clone(), is_error: *is_error })
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(messages: serde_json::Value) -> Prompt {
        let body = serde_json::json!({ "model": "m", "messages": messages });
        serde_json::from_value::<reloop_wire::openai_chat::ChatRequest>(body).unwrap().to_prompt()
    }

    #[test]
    fn only_the_results_after_the_last_assistant_turn_are_new() {
        let call = |id: &str| serde_json::json!({ "id": id, "type": "function", "function": { "name": "read", "arguments": "{}" } });
        let request = prompt(serde_json::json!([
            { "role": "user", "content": "go" },
            { "role": "assistant", "tool_calls": [call("a")] },
            { "role": "tool", "tool_call_id": "a", "content": "same" },
            { "role": "assistant", "tool_calls": [call("b"), call("c")] },
            { "role": "tool", "tool_call_id": "b", "content": "same" },
            { "role": "tool", "tool_call_id": "c", "content": "other" },
        ]));
        let seen = new_tool_results(&request);
        let pairs: Vec<(&str, &str)> = seen.iter().map(|r| (r.call_id.as_str(), r.content.as_str())).collect();
        assert_eq!(pairs, [("b", "same"), ("c", "other")]);
        assert!(new_tool_results(&prompt(serde_json::json!([{ "role": "user", "content": "go" }]))).is_empty());
    }
}
