//! Auxiliary requests: what an agent asks besides its main loop (opencode's
//! title request, a summary prompt), sent without tools. The rule the real
//! APIs keep is that a request declaring no tools never gets a tool call;
//! so when the next recorded main turn calls tools, such a request gets a
//! short text instead and the recorded turn waits for the request it was
//! made for.

use reloop_wire::{FinishReason, ModelTurn, Prompt};

use crate::recording::{Exchange, ReplayMode};

/// The text an auxiliary request gets.
pub const AUXILIARY_TEXT: &str = "reloop replay";

/// The log's `result` of an auxiliary request.
pub const AUXILIARY_RESULT: &str = "auxiliary";

/// Whether `request` is auxiliary given the exchange it would otherwise
/// get: it declares no tools, and that exchange calls some. An exchange
/// replayed raw (byte for byte) is sent as recorded, never diverted.
pub fn is_auxiliary(request: &Prompt, next: Option<&Exchange>) -> bool {
    request.tools.is_empty()
        && next.is_some_and(|exchange| exchange.replay != ReplayMode::Raw && exchange.tool_calls().next().is_some())
}

/// The short text turn an auxiliary request gets.
pub fn auxiliary_turn() -> ModelTurn {
    ModelTurn { text: AUXILIARY_TEXT.to_owned(), finish_reason: FinishReason::Stop, ..ModelTurn::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(json: serde_json::Value) -> Exchange {
        serde_json::from_value(json).unwrap()
    }

    fn prompt(tools: serde_json::Value) -> Prompt {
        let body = serde_json::json!({ "model": "m", "messages": [{ "role": "user", "content": "Title this chat" }], "tools": tools });
        serde_json::from_value::<reloop_wire::openai_chat::ChatRequest>(body).unwrap().to_prompt()
    }

    #[test]
    fn only_a_tool_less_request_facing_a_tool_call_is_auxiliary() {
        let calls = exchange(serde_json::json!({ "tool_calls": [{ "name": "read", "arguments": {} }] }));
        let text = exchange(serde_json::json!({ "text": "done" }));
        let tool = serde_json::json!([{ "type": "function", "function": { "name": "read", "parameters": { "type": "object" } } }]);
        assert!(is_auxiliary(&prompt(serde_json::json!([])), Some(&calls)));
        assert!(!is_auxiliary(&prompt(serde_json::json!([])), Some(&text)));
        assert!(!is_auxiliary(&prompt(tool), Some(&calls)));
        assert!(!is_auxiliary(&prompt(serde_json::json!([])), None));
    }
}
