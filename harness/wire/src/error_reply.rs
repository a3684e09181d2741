//! The errors a server answers with, before any format writes them: each
//! format's error body builds its envelope from an [`ErrorReply`], and
//! [`crate::codec`] picks the format (re-exported there).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The error type of a reloop divergence, in every format's error body.
pub const DIVERGENCE_ERROR_TYPE: &str = "reloop_divergence";

/// An error a server answers with, written in each format's envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorReply<'a> {
    /// An injected HTTP status, with the provider's own message for it.
    Status(u16),
    /// The prompt does not fit the context window (status 400).
    ContextExceeded {
        /// The model's window, in tokens.
        window: u64,
        /// The tokens the request asked for.
        requested: u64,
    },
    /// A request the provider rejects as invalid.
    InvalidRequest(&'a str),
    /// A reloop divergence, typed [`DIVERGENCE_ERROR_TYPE`], naming its check.
    Divergence {
        /// The whole message.
        message: &'a str,
        /// The failed check.
        check: &'a str,
    },
    /// The server's own refusal (no route, wrong method, headers too large),
    /// typed after its status.
    Server {
        /// The HTTP status.
        status: u16,
        /// The message.
        message: &'a str,
    },
}

/// The kind of an in-stream provider error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StreamErrorKind {
    /// `overloaded_error`.
    Overloaded,
    /// A server error.
    ServerError,
    /// A rate-limit error.
    RateLimited,
}
