//! What every streaming format shares above the SSE framing: the [`StreamDelta`]s a decoder
//! reports while a turn streams in, and the [`StreamDecoder`] trait, so a client can pick the
//! decoder for a provider's format at run time and treat all of them alike.

use crate::{FinishReason, ModelTurn, SseFrame, Usage, WireError};

/// What one SSE frame contributed to the turn, for callers that react while streaming.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    /// A piece of answer text.
    Text(String),
    /// A new tool call began.
    ToolCallStarted {
        /// The call's position among the turn's tool calls.
        index: u32,
        /// Call id.
        id: String,
        /// Function name.
        name: String,
    },
    /// A fragment of a tool call's arguments.
    ToolCallArguments {
        /// The call's position among the turn's tool calls.
        index: u32,
        /// The fragment of JSON text.
        fragment: String,
    },
    /// The turn's finish reason arrived.
    Finished(FinishReason),
    /// The usage arrived.
    Usage(Usage),
    /// The terminal event arrived: the stream is complete.
    Done,
}

/// An incremental decoder of one streamed response, whatever its wire format.
pub trait StreamDecoder: Send {
    /// Feeds one SSE frame (event name + data).
    ///
    /// # Errors
    ///
    /// A [`WireError`] when the frame breaks the format's rules, or
    /// [`WireError::Provider`] when the provider reports an error inside the stream.
    fn push_frame(&mut self, frame: &SseFrame) -> Result<Vec<StreamDelta>, WireError>;

    /// Whether the terminal event (chat `[DONE]`, Responses `response.completed` /
    /// `response.incomplete`, Anthropic `message_stop`) was seen.
    fn is_done(&self) -> bool;

    /// The whole turn.
    ///
    /// # Errors
    ///
    /// [`WireError::StreamEndedEarly`] if the terminal event never came; format-specific errors
    /// (e.g. [`WireError::MissingFinish`]) otherwise.
    fn finish(&mut self) -> Result<ModelTurn, WireError>;
}
