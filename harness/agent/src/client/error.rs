//! Failure classes of a model call. The class decides what the loop does:
//! rate limits, overload, server errors and broken streams are retried; a
//! context overflow never is (it goes to compaction); an invalid request
//! would fail the same way again.

use std::time::Duration;

use thiserror::Error;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LlmError {
    /// 429, or a rate-limit error in the stream.
    #[error("rate limited: {message}")]
    RateLimited {
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// 529, or an `overloaded_error` in the stream.
    #[error("overloaded: {message}")]
    Overloaded {
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// A 5xx, or a server error in the stream.
    #[error("server error {status}: {message}")]
    Server {
        /// The status (0 when the error came inside a stream).
        status: u16,
        /// The provider's message.
        message: String,
        /// How long the provider asked to wait, if it said.
        retry_after: Option<Duration>,
    },
    /// The provider said the prompt does not fit the context window.
    #[error("context window exceeded: {message}")]
    ContextWindowExceeded {
        /// The provider's message.
        message: String,
    },
    /// Any other 4xx: retrying would fail the same way.
    #[error("invalid request ({status}): {message}")]
    InvalidRequest {
        /// The status.
        status: u16,
        /// The provider's message, or the raw body.
        message: String,
    },
    /// The stream closed before its final event.
    #[error("the stream ended before its final event")]
    StreamEndedEarly,
    /// No data arrived for too long.
    #[error("the stream was idle for {after_ms} ms")]
    StreamIdle {
        /// The idle limit that passed, in the run's clock.
        after_ms: u64,
    },
    /// The connection failed or broke.
    #[error("transport: {0}")]
    Transport(String),
    /// The response did not follow the wire format (a garbled line).
    #[error("protocol: {0}")]
    Protocol(String),
}

impl LlmError {
    /// A short stable name for reports.
    pub fn class(&self) -> &'static str {
        match self {
            Self::RateLimited { .. } => "rate_limited",
            Self::Overloaded { .. } => "overloaded",
            Self::Server { .. } => "server_error",
            Self::ContextWindowExceeded { .. } => "context_window_exceeded",
            Self::InvalidRequest { .. } => "invalid_request",
            Self::StreamEndedEarly => "stream_ended_early",
            Self::StreamIdle { .. } => "stream_idle",
            Self::Transport(_) => "transport",
            Self::Protocol(_) => "protocol",
        }
    }

    /// Whether trying again may succeed.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, Self::ContextWindowExceeded { .. } | Self::InvalidRequest { .. })
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Overloaded { retry_after, .. } | Self::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Classifies an HTTP error response.
    pub fn from_status(status: u16, error_type: Option<&str>, message: String, retry_after: Option<Duration>) -> Self {
        match (status, error_type) {
            (_, Some("overloaded_error")) | (529, _) => Self::Overloaded { message, retry_after },
            (429, _) | (_, Some("rate_limit_error")) => Self::RateLimited { message, retry_after },
            (500..=599, _) => Self::Server { status, message, retry_after },
            _ => Self::InvalidRequest { status, message },
        }
    }

    /// Classifies an error the provider sent inside a stream, by its type.
    pub fn from_stream_error(kind: &str, message: String) -> Self {
        match kind {
            "overloaded_error" => Self::Overloaded { message, retry_after: None },
            kind if kind.starts_with("rate_limit") => Self::RateLimited { message, retry_after: None },
            "server_error" | "api_error" | "internal_error" => Self::Server { status: 0, message, retry_after: None },
            "context_length_exceeded" => Self::ContextWindowExceeded { message },
            _ => Self::InvalidRequest { status: 0, message: format!("{kind}: {message}") },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_types_map_to_classes() {
        let m = || "m".to_owned();
        assert_eq!(LlmError::from_status(429, None, m(), None).class(), "rate_limited");
        assert_eq!(LlmError::from_status(529, None, m(), None).class(), "overloaded");
        assert_eq!(LlmError::from_status(500, Some("overloaded_error"), m(), None).class(), "overloaded");
        assert_eq!(LlmError::from_status(503, None, m(), None).class(), "server_error");
        assert_eq!(LlmError::from_status(401, None, m(), None).class(), "invalid_request");
        assert!(!LlmError::from_status(400, None, m(), None).is_retryable());
        assert!(LlmError::StreamEndedEarly.is_retryable());
        assert_eq!(LlmError::from_stream_error("overloaded_error", m()).class(), "overloaded");
        assert_eq!(LlmError::from_stream_error("insufficient_quota", m()).class(), "invalid_request");
    }
}
