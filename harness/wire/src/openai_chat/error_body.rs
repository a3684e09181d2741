//! The error envelope Chat Completions returns with 4xx/5xx statuses, so the mock server can
//! fail exactly like the real API and the agent can recognise specific failures.

use serde::{Deserialize, Serialize};

use crate::error_reply::{DIVERGENCE_ERROR_TYPE, ErrorReply};

/// An error response body: `{"error": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    /// The error.
    pub error: ApiError,
}

/// The error inside an [`ApiErrorBody`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    /// Human-readable message.
    pub message: String,
    /// Error class, e.g. `invalid_request_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The request parameter at fault; always serialized (`null` when none).
    pub param: Option<String>,
    /// Machine-readable code, e.g. `context_length_exceeded`; always serialized (`null` when none).
    pub code: Option<String>,
}

/// `code` of the error the API returns when the prompt does not fit the model's context window.
const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";

/// `type` of errors caused by the request.
const INVALID_REQUEST_ERROR: &str = "invalid_request_error";

/// The `type` of the server's own refusal with `status`.
fn server_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        500..=599 => "server_error",
        _ => INVALID_REQUEST_ERROR,
    }
}

impl ApiErrorBody {
    /// A body of `kind` with `message` and an optional `code`.
    pub fn new(message: &str, kind: &str, code: Option<&str>) -> Self {
        Self { error: ApiError { message: message.to_owned(), kind: kind.to_owned(), param: None, code: code.map(str::to_owned) } }
    }

    /// The body of `error`, shared by Chat Completions and Responses.
    pub fn of_reply(error: ErrorReply<'_>) -> Self {
        match error {
            ErrorReply::Status(429) => Self::new("Rate limit reached for requests. Please try again in 2s.", "requests", Some("rate_limit_exceeded")),
            ErrorReply::Status(503) => Self::new("The engine is currently overloaded, please try again later.", "server_error", None),
            ErrorReply::Status(529) => Self::new("Overloaded", "overloaded_error", None),
            ErrorReply::Status(500..=599) => Self::new("The server had an error while processing your request. Sorry about that!", "server_error", None),
            ErrorReply::Status(_) => Self::new("Invalid request.", INVALID_REQUEST_ERROR, None),
            ErrorReply::ContextExceeded { window, requested } => Self::context_length_exceeded(window, requested),
            ErrorReply::InvalidRequest(message) => Self::invalid_request(message, None),
            ErrorReply::Divergence { message, check } => Self::new(message, DIVERGENCE_ERROR_TYPE, Some(check)),
            ErrorReply::Server { status, message } => Self::new(message, server_type(status), None),
        }
    }

    /// The 400 body the API returns when the messages exceed the model's context window.
    pub fn context_length_exceeded(max_tokens: u64, requested: u64) -> Self {
        let mut body = Self::invalid_request(
            format!(
                "This model's maximum context length is {max_tokens} tokens. However, your messages \
                 resulted in {requested} tokens. Please reduce the length of the messages."
            ),
            Some("messages"),
        );
        body.error.code = Some(CONTEXT_LENGTH_EXCEEDED.to_owned());
        body
    }

    /// A generic 400 `invalid_request_error` body without a code.
    pub fn invalid_request(message: impl Into<String>, param: Option<&str>) -> Self {
        Self { error: ApiError { message: message.into(), kind: INVALID_REQUEST_ERROR.to_owned(), param: param.map(str::to_owned), code: None } }
    }

    /// Whether this is the context-window error.
    pub fn is_context_length_exceeded(&self) -> bool {
        self.error.code.as_deref() == Some(CONTEXT_LENGTH_EXCEEDED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const CONTEXT_LENGTH: &str = include_str!("../../tests/data/errors/openai-400-context-length-exceeded.shape.json");
    const UNSUPPORTED_PARAMETER: &str = include_str!("../../tests/data/errors/openai-400-unsupported-parameter.vercel-ai.json");
    const NULL_CODE: &str = include_str!("../../tests/data/errors/openai-400-null-code.vercel-ai.json");
    const RATE_LIMIT: &str = include_str!("../../tests/data/errors/openai-429-rate-limit.shape.json");

    #[test]
    fn every_fixture_parses_and_round_trips() {
        for fixture in [CONTEXT_LENGTH, UNSUPPORTED_PARAMETER, NULL_CODE, RATE_LIMIT] {
            let body: ApiErrorBody = serde_json::from_str(fixture).unwrap();
            let expected: Value = serde_json::from_str(fixture).unwrap();
            assert_eq!(serde_json::to_value(&body).unwrap(), expected);
        }
        let unsupported: ApiErrorBody = serde_json::from_str(UNSUPPORTED_PARAMETER).unwrap();
        assert_eq!(unsupported.error.param.as_deref(), Some("max_tokens"));
        assert_eq!(unsupported.error.code.as_deref(), Some("unsupported_parameter"));
        assert!(!unsupported.is_context_length_exceeded());
        let null_code: ApiErrorBody = serde_json::from_str(NULL_CODE).unwrap();
        assert_eq!(null_code.error.code, None);
    }

    #[test]
    fn context_length_exceeded_matches_the_fixture_exactly() {
        let body = ApiErrorBody::context_length_exceeded(128_000, 131_072);
        assert!(body.is_context_length_exceeded());
        assert_eq!(serde_json::to_string(&body).unwrap(), CONTEXT_LENGTH.trim_end());
        let fixture: ApiErrorBody = serde_json::from_str(CONTEXT_LENGTH).unwrap();
        assert!(fixture.is_context_length_exceeded());
        assert_eq!(fixture, body);
    }

    #[test]
    fn invalid_request_has_no_code() {
        let body = ApiErrorBody::invalid_request("bad tools", Some("tools"));
        assert_eq!(serde_json::to_string(&body).unwrap(), r#"{"error":{"message":"bad tools","type":"invalid_request_error","param":"tools","code":null}}"#);
        assert!(!body.is_context_length_exceeded());
    }
}
