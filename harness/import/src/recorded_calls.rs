//! The tool calls of a captured recording, each with the result the
//! session sent back for it. A recording holds the model's side; the tools'
//! side travels in the later requests, as the tool message that names the
//! call's id. `reloop record`, `serve --capture` and the cassette import
//! turn them into the skeleton's fixtures, so that a run of the skeleton
//! feeds the loop what the recorded session saw.

use std::collections::HashMap;

use reloop_recording::{Arguments, Part, RecordedRequest, Recording};
use reloop_wire::{Message, Prompt, codec};
use serde_json::Value;

/// One tool call the model made, and what answered it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// The tool called.
    pub name: String,
    /// Its arguments (a string that is not JSON stays a string).
    pub arguments: Value,
    /// The result's text and whether it was an error; `None` when no later
    /// request answered the call (the session ended after it).
    pub result: Option<(String, bool)>,
}

/// Every tool call of `recording`'s responses in order, with its result.
pub fn recorded_calls(recording: &Recording) -> Vec<RecordedCall> {
    let mut results: HashMap<String, (String, bool)> = HashMap::new();
    for prompt in recording.exchanges.iter().filter_map(|exchange| exchange.request.as_ref().and_then(prompt_of)) {
        for message in prompt.messages {
            if let Message::ToolResult { call_id, content, is_error, .. } = message {
                results.entry(call_id.to_string()).or_insert((content.into(), is_error));
            }
        }
    }
    let calls = recording.exchanges.iter().flat_map(|exchange| &exchange.parts).filter_map(|part| match part {
        Part::ToolCall(call) => Some(call),
        _ => None,
    });
    calls
        .map(|call| RecordedCall {
            name: call.name.clone(),
            arguments: match &call.arguments {
                Arguments::Json(value) => value.clone(),
                Arguments::Raw(text) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
            },
            result: call.id.as_ref().and_then(|id| results.get(id).cloned()),
        })
        .collect()
}

/// The neutral prompt of a recorded request, when its path names one of the
/// APIs and its body parses as that API's request.
fn prompt_of(request: &RecordedRequest) -> Option<Prompt> {
    let body = serde_json::to_vec(&request.body).ok()?;
    codec::decode_request_at(&request.path, &body)?.1.ok().map(|request| request.prompt)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Two calls answered in the second request (one of them failed), and a
    /// third call that the session never answered.
    fn recording(path: &str, second_request: Value) -> Recording {
        let call = |id: &str, path: &str| json!({ "type": "tool_call", "id": id, "name": "read", "arguments": { "path": path } });
        serde_json::from_value(json!({ "format": "reloop.recording/v2", "exchanges": [
            { "parts": [call("c1", "a"), call("c2", "b")], "request": { "path": path, "body": { "model": "m", "messages": [], "input": [] } } },
            { "parts": [call("c3", "a")], "request": { "path": path, "body": second_request } },
        ] }))
        .unwrap()
    }

    #[test]
    fn each_api_gives_the_results_its_later_requests_sent() {
        let calls = json!([{ "id": "c1", "type": "function", "function": { "name": "read", "arguments": "{\"path\":\"a\"}" } },
                           { "id": "c2", "type": "function", "function": { "name": "read", "arguments": "{\"path\":\"b\"}" } }]);
        let chat = json!({ "model": "m", "messages": [
            { "role": "user", "content": "go" }, { "role": "assistant", "tool_calls": calls },
            { "role": "tool", "tool_call_id": "c1", "content": "alpha" }, { "role": "tool", "tool_call_id": "c2", "content": "Error: no such file" } ] });
        let responses = json!({ "model": "m", "input": [
            { "role": "user", "content": "go" },
            { "type": "function_call", "call_id": "c1", "name": "read", "arguments": "{\"path\":\"a\"}" },
            { "type": "function_call", "call_id": "c2", "name": "read", "arguments": "{\"path\":\"b\"}" },
            { "type": "function_call_output", "call_id": "c1", "output": "alpha" },
            { "type": "function_call_output", "call_id": "c2", "output": "Error: no such file" } ] });
        let anthropic = json!({ "model": "m", "max_tokens": 10, "messages": [
            { "role": "user", "content": "go" },
            { "role": "assistant", "content": [{ "type": "tool_use", "id": "c1", "name": "read", "input": { "path": "a" } },
                                               { "type": "tool_use", "id": "c2", "name": "read", "input": { "path": "b" } }] },
            { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "c1", "content": "alpha" },
                                          { "type": "tool_result", "tool_use_id": "c2", "content": "Error: no such file", "is_error": true }] } ] });
        for (path, body, failed) in [("/v1/chat/completions", chat, false), ("/v1/responses", responses, false), ("/v1/messages", anthropic, true)] {
            let calls = recorded_calls(&recording(path, body));
            let seen: Vec<(&Value, Option<(&str, bool)>)> = calls.iter().map(|c| (&c.arguments, c.result.as_ref().map(|(t, e)| (t.as_str(), *e)))).collect();
            assert_eq!(
                seen,
                [
                    (&json!({ "path": "a" }), Some(("alpha", false))),
                    (&json!({ "path": "b" }), Some(("Error: no such file", failed))),
                    (&json!({ "path": "a" }), None)
                ],
                "{path}"
            );
        }
    }
}
