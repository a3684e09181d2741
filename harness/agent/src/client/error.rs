//! Failure classes of a model call. The class decides what the loop does:
//! a context overflow is never retried, a transport error may be.

use thiserror::Error;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LlmError {
    /// The provider said the prompt does not fit the context window.
    #[error("context window exceeded: {message}")]
    ContextWindowExceeded {
        /// The provider's message.
        message: String,
    },
    /// Any other non-success HTTP status.
    #[error("HTTP {status}: {message}")]
    Http {
        /// The status code.
        status: u16,
        /// The provider's error message, or the raw body.
        message: String,
    },
    /// The connection failed or broke.
    #[error("transport: {0}")]
    Transport(String),
    /// The response did not follow the wire format.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The call did not finish in time.
    #[error("no complete response after {after_ms} ms")]
    Timeout {
        /// The limit that passed, in the run's clock.
        after_ms: u64,
    },
}

impl LlmError {
    /// A short stable name for reports.
    pub fn class(&self) -> &'static str {
        match self {
            Self::ContextWindowExceeded { .. } => "context_window_exceeded",
            Self::Http { .. } => "http",
            Self::Transport(_) => "transport",
            Self::Protocol(_) => "protocol",
            Self::Timeout { .. } => "timeout",
        }
    }
}
