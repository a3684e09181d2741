//! The error envelope Anthropic returns with 4xx/5xx statuses, and inside a stream as
//! `event: error`, so the mock server can fail exactly like the real API and the agent can
//! recognise specific failures.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::WireError;
use crate::error_reply::{DIVERGENCE_ERROR_TYPE, ErrorReply};

/// An error response body: `{"type": "error", "error": {...}, "request_id": ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnthropicErrorBody {
    /// `"error"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The error.
    pub error: AnthropicError,
    /// The request id (`req_...`), on HTTP error bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// The error inside an [`AnthropicErrorBody`] or an `error` stream event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnthropicError {
    /// Error class, e.g. `invalid_request_error` or `overloaded_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Human-readable message.
    pub message: String,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `type` of errors caused by the request (HTTP 400).
const INVALID_REQUEST_ERROR: &str = "invalid_request_error";

/// How the message of the context-window error starts.
const PROMPT_TOO_LONG: &str = "prompt is too long: ";

/// The `type` of the server's own refusal with `status`.
fn server_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

impl AnthropicErrorBody {
    /// The body of `error`.
    pub fn of_reply(error: ErrorReply<'_>) -> Self {
        match error {
            ErrorReply::Status(429) => Self::rate_limited("Number of request tokens has exceeded your per-minute rate limit"),
            ErrorReply::Status(529 | 503) => Self::overloaded(),
            ErrorReply::Status(500..=599) => Self::api_error("Internal server error"),
            ErrorReply::Status(_) => Self::invalid_request("Invalid request."),
            ErrorReply::ContextExceeded { window, requested } => Self::prompt_too_long(requested, window),
            ErrorReply::InvalidRequest(message) => Self::invalid_request(message),
            ErrorReply::Divergence { message, .. } => Self::new(DIVERGENCE_ERROR_TYPE, message),
            ErrorReply::Server { status, message } => Self::new(server_type(status), message),
        }
    }

    /// A body with this error type and message (and no request id).
    pub fn new(kind: &str, message: impl Into<String>) -> Self {
        Self { kind: "error".to_owned(), error: AnthropicError { kind: kind.to_owned(), message: message.into(), extra: Map::new() }, request_id: None }
    }

    /// The 400 body the API returns when the prompt exceeds the model's context window.
    pub fn prompt_too_long(requested: u64, max: u64) -> Self {
        Self::invalid_request(format!("{PROMPT_TOO_LONG}{requested} tokens > {max} maximum"))
    }

    /// The body of HTTP 529 (and of the in-stream error) when the API is overloaded.
    pub fn overloaded() -> Self {
        Self::new("overloaded_error", "Overloaded")
    }

    /// The HTTP 429 body.
    pub fn rate_limited(message: impl Into<String>) -> Self {
        Self::new("rate_limit_error", message)
    }

    /// A generic HTTP 400 body.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST_ERROR, message)
    }

    /// The HTTP 500 body.
    pub fn api_error(message: impl Into<String>) -> Self {
        Self::new("api_error", message)
    }

    /// Whether this is the context-window error.
    pub fn is_prompt_too_long(&self) -> bool {
        self.error.kind == INVALID_REQUEST_ERROR && self.error.message.starts_with(PROMPT_TOO_LONG)
    }
}

impl AnthropicError {
    /// The [`WireError::Provider`] for this error (its type is the kind).
    pub fn to_wire_error(&self) -> WireError {
        WireError::Provider { kind: self.kind.clone(), message: self.message.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INVALID_REQUEST: &str = include_str!("../../tests/data/errors/anthropic-400-invalid-request.vercel-ai.json");
    const PROMPT_TOO_LONG_BODY: &str = include_str!("../../tests/data/errors/anthropic-400-prompt-too-long.troll-llm-log.json");
    const OVERLOADED: &str = include_str!("../../tests/data/errors/anthropic-529-overloaded.vecsum-log.json");

    /// A fixture without its request id, which the constructors do not invent.
    fn without_request_id(fixture: &str) -> AnthropicErrorBody {
        AnthropicErrorBody { request_id: None, ..serde_json::from_str(fixture).unwrap() }
    }

    #[test]
    fn every_fixture_parses_and_round_trips() {
        for fixture in [INVALID_REQUEST, PROMPT_TOO_LONG_BODY, OVERLOADED] {
            let body: AnthropicErrorBody = serde_json::from_str(fixture).unwrap();
            assert!(body.request_id.as_deref().unwrap().starts_with("req_"));
            let expected: Value = serde_json::from_str(fixture).unwrap();
            assert_eq!(serde_json::to_value(&body).unwrap(), expected);
        }
        // The compact real bodies come back byte for byte.
        for fixture in [PROMPT_TOO_LONG_BODY, OVERLOADED] {
            let body: AnthropicErrorBody = serde_json::from_str(fixture).unwrap();
            assert_eq!(serde_json::to_string(&body).unwrap(), fixture);
        }
    }

    #[test]
    fn constructors_match_the_real_bodies() {
        let too_long = AnthropicErrorBody::prompt_too_long(214_850, 200_000);
        assert_eq!(too_long, without_request_id(PROMPT_TOO_LONG_BODY));
        assert!(too_long.is_prompt_too_long());
        assert_eq!(AnthropicErrorBody::overloaded(), without_request_id(OVERLOADED));

        let invalid = without_request_id(INVALID_REQUEST);
        assert!(!invalid.is_prompt_too_long());
        assert_eq!(AnthropicErrorBody::invalid_request(invalid.error.message.clone()), invalid);
    }

    #[test]
    fn other_constructors() {
        assert_eq!(
            serde_json::to_string(&AnthropicErrorBody::rate_limited("slow down")).unwrap(),
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#
        );
        let api = AnthropicErrorBody::api_error("Internal server error");
        assert_eq!(api.error.kind, "api_error");
        assert!(!api.is_prompt_too_long());
        assert!(!AnthropicErrorBody::overloaded().is_prompt_too_long());
        assert!(matches!(
            api.error.to_wire_error(),
            WireError::Provider { kind, message } if kind == "api_error" && message == "Internal server error"
        ));
    }
}
