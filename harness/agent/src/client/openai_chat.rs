//! OpenAI Chat Completions: the request body, error bodies, and the stream
//! decoder as the client uses them.

use std::time::Duration;

use reloop_wire::openai_chat::{
    ApiErrorBody, ChatCompletion, ChatMessage, ChatRequest, ChatStreamAccumulator, ChatTool, ChatToolCall, FunctionDef,
    MessageContent, StreamDelta, StreamOptions,
};
use reloop_wire::{ModelTurn, SseFrame, WireError};

use super::{LlmError, LlmRequest};
use crate::message::Message;

/// The endpoint below the base URL.
pub(super) const PATH: &str = "/chat/completions";

/// Builds the Chat Completions request for `request`. Public so the harness
/// can price a counterfactual view with exactly the bytes the loop would send.
pub fn to_chat_request(model: &str, request: &LlmRequest<'_>) -> ChatRequest {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    messages.push(ChatMessage::System {
        content: MessageContent::Text(request.system.to_owned()),
        name: None,
    });
    messages.extend(request.messages.iter().map(to_chat_message));
    ChatRequest {
        model: model.to_owned(),
        messages,
        tools: request
            .tools
            .iter()
            .map(|spec| ChatTool {
                kind: "function".into(),
                function: FunctionDef {
                    name: spec.name.clone(),
                    description: Some(spec.description.clone()),
                    parameters: spec.parameters.clone(),
                    strict: None,
                },
            })
            .collect(),
        tool_choice: request.forbid_tools.then(|| serde_json::Value::from("none")),
        stream: request.stream,
        stream_options: request.stream.then_some(StreamOptions { include_usage: true }),
        max_tokens: None,
        max_completion_tokens: Some(request.max_output_tokens),
        extra: serde_json::Map::new(),
    }
}

fn to_chat_message(message: &Message) -> ChatMessage {
    match message {
        Message::User { text } => ChatMessage::User { content: MessageContent::Text(text.clone()), name: None },
        Message::Assistant { text, tool_calls } => ChatMessage::Assistant {
            content: (!text.is_empty() || tool_calls.is_empty()).then(|| MessageContent::Text(text.clone())),
            tool_calls: tool_calls.iter().map(ChatToolCall::from_tool_call).collect(),
            refusal: None,
            name: None,
        },
        Message::ToolResult { call_id, content, .. } => ChatMessage::Tool {
            tool_call_id: call_id.clone(),
            content: MessageContent::Text(content.clone()),
        },
    }
}

/// The serialized request body.
pub(super) fn body(model: &str, request: &LlmRequest<'_>) -> Result<Vec<u8>, LlmError> {
    serde_json::to_vec(&to_chat_request(model, request)).map_err(|e| LlmError::Protocol(e.to_string()))
}

/// Classifies an error response.
pub(super) fn classify_error(status: u16, body: &[u8], retry_after: Option<Duration>) -> LlmError {
    match serde_json::from_slice::<ApiErrorBody>(body) {
        Ok(parsed) if parsed.is_context_length_exceeded() => {
            LlmError::ContextWindowExceeded { message: parsed.error.message }
        }
        Ok(parsed) => LlmError::from_status(status, Some(&parsed.error.kind), parsed.error.message, retry_after),
        Err(_) => LlmError::from_status(status, None, String::from_utf8_lossy(body).into_owned(), retry_after),
    }
}

/// Reads a non-streamed completion.
pub(super) fn parse_complete(body: &[u8]) -> Result<ModelTurn, LlmError> {
    let completion: ChatCompletion = serde_json::from_slice(body).map_err(|e| LlmError::Protocol(e.to_string()))?;
    completion.to_turn().map_err(wire_error)
}

/// The stream decoder, yielding text deltas as they come.
#[derive(Debug, Default)]
pub(super) struct Decoder(ChatStreamAccumulator);

impl Decoder {
    /// Feeds one frame; returns its text deltas.
    pub(super) fn push(&mut self, frame: &SseFrame) -> Result<Vec<String>, LlmError> {
        let deltas = self.0.push_data(&frame.data).map_err(wire_error)?;
        Ok(deltas.into_iter().filter_map(|d| if let StreamDelta::Text(t) = d { Some(t) } else { None }).collect())
    }

    /// The whole turn, once the stream is over.
    pub(super) fn finish(self) -> Result<ModelTurn, LlmError> {
        self.0.finish().map_err(wire_error)
    }
}

fn wire_error(error: WireError) -> LlmError {
    match error {
        WireError::StreamEndedEarly => LlmError::StreamEndedEarly,
        other => LlmError::Protocol(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_overflow_body_is_classified() {
        let body = br#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert!(matches!(classify_error(400, body, None), LlmError::ContextWindowExceeded { .. }));
        assert_eq!(classify_error(500, b"oops", None), LlmError::Server { status: 500, message: "oops".into(), retry_after: None });
    }

    #[test]
    fn last_turn_keeps_tools_but_forbids_them() {
        let tools = [crate::tools::ToolSpec {
            name: "read".into(),
            description: "r".into(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        let request = LlmRequest { system: "s", messages: &[], tools: &tools, forbid_tools: true, max_output_tokens: 10, stream: true };
        let chat = to_chat_request("m", &request);
        assert_eq!(chat.tools.len(), 1);
        assert_eq!(chat.tool_choice, Some(serde_json::json!("none")));
    }
}
