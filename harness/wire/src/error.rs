//! The one error type of the crate, so callers can tell a malformed payload from a stream that
//! stopped too soon or broke the protocol's rules.

/// Why a provider payload could not be decoded into a turn.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// A JSON payload did not parse as the expected type.
    #[error("invalid JSON in {context}: {source}")]
    Json {
        /// What was being parsed, e.g. "chat completion chunk".
        context: &'static str,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// The stream ended without a finish reason for the turn.
    #[error("the stream ended without a finish_reason")]
    MissingFinish,
    /// The stream ended before its terminal event (`[DONE]` for Chat Completions).
    #[error("the stream ended before its terminal event")]
    StreamEndedEarly,
    /// A tool-call delta referred to an index whose first fragment (with id and name) was never seen.
    #[error("tool-call delta for index {0}, which was never started")]
    UnknownToolCallIndex(u32),
    /// The provider reported an error inside the stream (Anthropic `event: error`, Responses
    /// `error` or `response.failed`).
    #[error("provider error {kind}: {message}")]
    Provider {
        /// The provider's error type or code, e.g. `overloaded_error` or `insufficient_quota`.
        kind: String,
        /// The provider's message.
        message: String,
    },
    /// Any other violation of the wire protocol.
    #[error("protocol violation: {0}")]
    Protocol(String),
}
