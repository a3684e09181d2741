//! What differs between the three wire formats on the client side: the
//! request body, the authentication headers, the non-streamed response and
//! the error bodies. Streaming is common (`reloop_wire::format::decoder_for`).

use std::time::Duration;

use reloop_wire::anthropic::{AnthropicErrorBody, Message, MessagesRequest};
use reloop_wire::openai_chat::{ApiErrorBody, ChatCompletion, ChatRequest};
use reloop_wire::openai_responses::{Response, ResponsesRequest};
use reloop_wire::{Format, ModelTurn, Prompt};

use super::cache_breakpoints::CacheBreakpointSettings;
use super::{LlmError, wire_error};
use crate::tool_schema::FrozenToolSchema;

/// The `anthropic-version` header the client sends.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The serialized request body of `prompt` (whose own tools are not
/// rendered) declaring the frozen `tools`: their bytes are spliced in as the
/// body's last member, never serialized again. Anthropic's body carries the
/// cache breakpoints; the tools' own is in the frozen bytes. The prompt is
/// moved into the Chat Completions request, whose texts are not copied.
pub(super) fn body(format: Format, prompt: Prompt, tools: &FrozenToolSchema, cache: &CacheBreakpointSettings) -> Result<Vec<u8>, LlmError> {
    let json = match format {
        Format::OpenaiChat => serde_json::to_vec(&ChatRequest::from_owned_prompt(prompt)),
        Format::OpenaiResponses => serde_json::to_vec(&ResponsesRequest::from_prompt(&prompt)),
        Format::Anthropic => {
            let mut request = MessagesRequest::from_prompt(&prompt);
            request.place_cache_breakpoints(&cache.breakpoints(&prompt));
            serde_json::to_vec(&request)
        }
    };
    let body = json.map_err(|e| LlmError::Protocol(e.to_string()))?;
    Ok(if tools.specs().is_empty() { body } else { with_tools(body, tools.wire_json()) })
}

/// `body`, a JSON object, with `"tools": tools` added as its last member.
fn with_tools(mut body: Vec<u8>, tools: &[u8]) -> Vec<u8> {
    debug_assert_eq!(body.last(), Some(&b'}'), "a request body is an object with a model");
    body.pop();
    body.extend_from_slice(b",\"tools\":");
    body.extend_from_slice(tools);
    body.push(b'}');
    body
}

/// Adds the format's authentication headers.
pub(super) fn authenticate(format: Format, request: reqwest::RequestBuilder, api_key: &str) -> reqwest::RequestBuilder {
    match format {
        Format::OpenaiChat | Format::OpenaiResponses => request.bearer_auth(api_key),
        Format::Anthropic => request.header("x-api-key", api_key).header("anthropic-version", ANTHROPIC_VERSION),
    }
}

/// Whether the provider honours a client-set output slot (Roku's
/// `supports_output_slot_cap`): the Responses API budgets output itself.
pub(super) fn supports_output_slot_cap(format: Format) -> bool {
    !matches!(format, Format::OpenaiResponses)
}

/// Reads a non-streamed response.
pub(super) fn parse_complete(format: Format, body: &[u8]) -> Result<ModelTurn, LlmError> {
    let protocol = |e: serde_json::Error| LlmError::Protocol(e.to_string());
    let turn = match format {
        Format::OpenaiChat => serde_json::from_slice::<ChatCompletion>(body).map_err(protocol)?.to_turn(),
        Format::OpenaiResponses => serde_json::from_slice::<Response>(body).map_err(protocol)?.to_turn(),
        Format::Anthropic => serde_json::from_slice::<Message>(body).map_err(protocol)?.to_turn(),
    };
    turn.map_err(wire_error)
}

/// Classifies an error response by its status and body.
pub(super) fn classify_error(format: Format, status: u16, body: &[u8], retry_after: Option<Duration>) -> LlmError {
    let raw = || String::from_utf8_lossy(body).into_owned();
    match format {
        Format::OpenaiChat | Format::OpenaiResponses => match serde_json::from_slice::<ApiErrorBody>(body) {
            Ok(parsed) if parsed.is_context_length_exceeded() => LlmError::ContextWindowExceeded { message: parsed.error.message },
            Ok(parsed) => LlmError::from_status(status, Some(&parsed.error.kind), parsed.error.message, retry_after),
            Err(_) => LlmError::from_status(status, None, raw(), retry_after),
        },
        Format::Anthropic => match serde_json::from_slice::<AnthropicErrorBody>(body) {
            Ok(parsed) if parsed.is_prompt_too_long() => LlmError::ContextWindowExceeded { message: parsed.error.message },
            Ok(parsed) => LlmError::from_status(status, Some(&parsed.error.kind), parsed.error.message, retry_after),
            Err(_) => LlmError::from_status(status, None, raw(), retry_after),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_overflow_bodies_of_both_providers_are_classified() {
        let openai = br#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let anthropic = br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201234 tokens > 200000 maximum"}}"#;
        for (format, body) in [(Format::OpenaiChat, &openai[..]), (Format::OpenaiResponses, openai), (Format::Anthropic, anthropic)] {
            assert!(matches!(classify_error(format, 400, body, None), LlmError::ContextWindowExceeded { .. }), "{format:?}");
        }
    }

    /// The body with the frozen tools spliced in is the request the format
    /// renders from the whole prompt, and carries the frozen bytes verbatim.
    #[test]
    fn frozen_tools_splice_into_the_body_every_format_renders() {
        let spec = reloop_wire::ToolSpec { name: "read".into(), description: "Read".into(), parameters: serde_json::json!({"type": "object"}) };
        let cache = CacheBreakpointSettings::default();
        let full = Prompt {
            model: "m".into(),
            system: Some("s".into()),
            messages: vec![reloop_wire::Message::user("go")],
            tools: vec![spec.clone()],
            ..Prompt::default()
        };
        let without_tools = Prompt { tools: Vec::new(), ..full.clone() };
        for format in Format::ALL {
            let frozen = FrozenToolSchema::freeze(vec![spec.clone()], format, &cache);
            let spliced = body(format, without_tools.clone(), &frozen, &cache).unwrap();
            let whole = body(format, full.clone(), &FrozenToolSchema::none(), &cache).unwrap();
            let tail = [&b",\"tools\":"[..], frozen.wire_json(), b"}"].concat();
            assert!(spliced.ends_with(&tail), "{format:?}: the frozen bytes, verbatim");
            let parse = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
            assert_eq!(parse(&spliced), parse(&whole), "{format:?}");
        }
    }

    #[test]
    fn anthropic_overload_is_overloaded() {
        let body = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(classify_error(Format::Anthropic, 529, body, None).class(), "overloaded");
        assert_eq!(classify_error(Format::OpenaiChat, 500, b"oops", None), LlmError::Server { status: 500, message: "oops".into(), retry_after: None });
    }
}
