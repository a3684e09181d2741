//! OpenAI Chat Completions over HTTP with SSE streaming.

use futures_util::StreamExt;
use reloop_wire::openai_chat::{
    ApiErrorBody, ChatMessage, ChatRequest, ChatStreamAccumulator, ChatTool, ChatToolCall,
    FunctionDef, MessageContent, StreamOptions,
};
use reloop_wire::{ModelTurn, SseDecoder};

use super::{LlmError, LlmRequest};
use crate::config::ProviderConfig;
use crate::message::Message;

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
        stream: true,
        stream_options: Some(StreamOptions { include_usage: true }),
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

pub(super) async fn stream(
    http: &reqwest::Client,
    config: &ProviderConfig,
    request: &LlmRequest<'_>,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<ModelTurn, LlmError> {
    let body = serde_json::to_vec(&to_chat_request(&config.model, request))
        .map_err(|e| LlmError::Protocol(e.to_string()))?;
    let response = http
        .post(format!("{}/chat/completions", config.base_url))
        .bearer_auth(&config.api_key)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| LlmError::Transport(e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        let bytes = response.bytes().await.map_err(|e| LlmError::Transport(e.to_string()))?;
        return Err(classify_error(status.as_u16(), &bytes));
    }

    let mut decoder = SseDecoder::new();
    let mut accumulator = ChatStreamAccumulator::new();
    let mut body = response.bytes_stream();
    let mut feed = |frame: reloop_wire::SseFrame| -> Result<(), LlmError> {
        for delta in accumulator.push_data(&frame.data).map_err(|e| LlmError::Protocol(e.to_string()))? {
            if let reloop_wire::StreamDelta::Text(text) = delta {
                on_text(&text);
            }
        }
        Ok(())
    };
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| LlmError::Transport(e.to_string()))?;
        decoder.push(&chunk);
        while let Some(frame) = decoder.next_frame() {
            feed(frame)?;
        }
    }
    if let Some(frame) = decoder.finish() {
        feed(frame)?;
    }
    accumulator.finish().map_err(|e| LlmError::Protocol(e.to_string()))
}

fn classify_error(status: u16, body: &[u8]) -> LlmError {
    match serde_json::from_slice::<ApiErrorBody>(body) {
        Ok(parsed) if parsed.is_context_length_exceeded() => {
            LlmError::ContextWindowExceeded { message: parsed.error.message }
        }
        Ok(parsed) => LlmError::Http { status, message: parsed.error.message },
        Err(_) => LlmError::Http { status, message: String::from_utf8_lossy(body).into_owned() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_overflow_body_is_classified() {
        let body = br#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert!(matches!(classify_error(400, body), LlmError::ContextWindowExceeded { .. }));
        assert_eq!(classify_error(500, b"oops"), LlmError::Http { status: 500, message: "oops".into() });
    }

    #[test]
    fn last_turn_keeps_tools_but_forbids_them() {
        let tools = [crate::tools::ToolSpec {
            name: "read".into(),
            description: "r".into(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        let request = LlmRequest { system: "s", messages: &[], tools: &tools, forbid_tools: true, max_output_tokens: 10 };
        let chat = to_chat_request("m", &request);
        assert_eq!(chat.tools.len(), 1);
        assert_eq!(chat.tool_choice, Some(serde_json::json!("none")));
    }
}
