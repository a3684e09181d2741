//! OpenAI Chat Completions as the client speaks it: the request body, the
//! error bodies, the non-streamed response.

use std::time::Duration;

use reloop_wire::openai_chat::{ApiErrorBody, ChatCompletion, ChatRequest};
use reloop_wire::{ModelTurn, Prompt};

use super::{LlmError, wire_error};

/// The endpoint below the base URL.
pub(super) const PATH: &str = "/chat/completions";

/// The serialized request body.
pub(super) fn body(prompt: &Prompt) -> Result<Vec<u8>, LlmError> {
    serde_json::to_vec(&ChatRequest::from_prompt(prompt)).map_err(|e| LlmError::Protocol(e.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_overflow_body_is_classified() {
        let body = br#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert!(matches!(classify_error(400, body, None), LlmError::ContextWindowExceeded { .. }));
        assert_eq!(classify_error(500, b"oops", None), LlmError::Server { status: 500, message: "oops".into(), retry_after: None });
    }
}
