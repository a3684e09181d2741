//! Google's error envelope, `{"error": {"code", "message", "status"}}`, sent
//! with 4xx/5xx statuses and as an in-stream chunk, so the mock fails the way
//! the Gemini API does and the agent classifies what it reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error_reply::{DIVERGENCE_ERROR_TYPE, ErrorReply};

/// An error response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoogleErrorBody {
    /// The error.
    pub error: GoogleError,
}

/// The error inside a [`GoogleErrorBody`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoogleError {
    /// The HTTP status.
    pub code: u16,
    /// Human-readable message.
    pub message: String,
    /// The canonical status name, e.g. `RESOURCE_EXHAUSTED`.
    pub status: String,
    /// `google.rpc` details (`RetryInfo`, `ErrorInfo`…), as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Value>,
}

/// How the oversized-prompt message starts.
const TOKEN_COUNT: &str = "The input token count";

impl GoogleErrorBody {
    /// The body of `error`; Google types an error by an `ErrorInfo`
    /// detail's `reason`, which carries a divergence's type.
    pub fn of_reply(error: ErrorReply<'_>) -> Self {
        match error {
            ErrorReply::Status(status) => Self::for_status(status),
            ErrorReply::ContextExceeded { window, requested } => Self::prompt_too_long(requested, window),
            ErrorReply::InvalidRequest(message) => Self::invalid_argument(message),
            ErrorReply::Divergence { message, check } => {
                let mut body = Self::new(400, "FAILED_PRECONDITION", message);
                let info = serde_json::json!({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": DIVERGENCE_ERROR_TYPE, "domain": "reloop", "metadata": { "check": check } });
                body.error.details.push(info);
                body
            }
            ErrorReply::Server { status, message } => Self::with_code(status, message),
        }
    }

    /// A body of this status code, name and message.
    pub fn new(code: u16, status: &str, message: impl Into<String>) -> Self {
        Self { error: GoogleError { code, message: message.into(), status: status.to_owned(), details: Vec::new() } }
    }

    /// A body of HTTP status `code` named as Google names it, with `message`.
    pub fn with_code(code: u16, message: impl Into<String>) -> Self {
        let status = match code {
            400 | 413 => "INVALID_ARGUMENT",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "NOT_FOUND",
            405 | 501 => "UNIMPLEMENTED",
            429 => "RESOURCE_EXHAUSTED",
            503 | 529 => "UNAVAILABLE",
            504 => "DEADLINE_EXCEEDED",
            500..=599 => "INTERNAL",
            _ => "FAILED_PRECONDITION",
        };
        Self::new(code, status, message)
    }

    /// The body Google sends for `status`, as the mock injects it.
    pub fn for_status(status: u16) -> Self {
        match status {
            429 => Self::rate_limited(),
            503 | 529 => Self::new(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
            504 => Self::new(504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
            500..=599 => Self::new(
                500,
                "INTERNAL",
                "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
            ),
            401 | 403 => Self::new(
                403,
                "PERMISSION_DENIED",
                "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
            ),
            404 => Self::new(404, "NOT_FOUND", "Requested entity was not found."),
            _ => Self::invalid_argument("Request contains an invalid argument."),
        }
    }

    /// HTTP 429, with the `RetryInfo` detail Google adds.
    pub fn rate_limited() -> Self {
        let mut body = Self::new(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details.");
        body.error.details.push(serde_json::json!({ "@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s" }));
        body
    }

    /// HTTP 400 `INVALID_ARGUMENT`.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(400, "INVALID_ARGUMENT", message)
    }

    /// The 400 body of a prompt longer than the model's window.
    pub fn prompt_too_long(requested: u64, max: u64) -> Self {
        Self::invalid_argument(format!("{TOKEN_COUNT} ({requested}) exceeds the maximum number of tokens allowed ({max})."))
    }

    /// Whether this is the oversized-prompt error.
    pub fn is_prompt_too_long(&self) -> bool {
        self.error.status == "INVALID_ARGUMENT" && self.error.message.starts_with(TOKEN_COUNT)
    }

    /// The error type the other APIs would give this error.
    pub fn neutral_kind(&self) -> &'static str {
        neutral_kind(&self.error.status, &self.error.message)
    }
}

/// The error type the other APIs give an error of this status and message,
/// so a client classifies every API's errors alike.
pub(crate) fn neutral_kind(status: &str, message: &str) -> &'static str {
    match status {
        "RESOURCE_EXHAUSTED" => "rate_limit_error",
        "UNAVAILABLE" => "overloaded_error",
        "INTERNAL" | "DEADLINE_EXCEEDED" => "api_error",
        "INVALID_ARGUMENT" if message.starts_with(TOKEN_COUNT) => "context_length_exceeded",
        _ => "invalid_request_error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_have_googles_shape_and_classify() {
        let body = serde_json::to_value(GoogleErrorBody::rate_limited()).unwrap();
        assert_eq!((body["error"]["code"].as_u64(), body["error"]["status"].as_str()), (Some(429), Some("RESOURCE_EXHAUSTED")));
        assert_eq!(GoogleErrorBody::for_status(503).neutral_kind(), "overloaded_error");
        let long = GoogleErrorBody::prompt_too_long(1_048_577, 1_048_576);
        assert!(long.is_prompt_too_long());
        assert_eq!(long.error.message, "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).");
        assert!(!GoogleErrorBody::invalid_argument("bad").is_prompt_too_long());
    }
}
