//! The Anthropic Messages API (`POST /v1/messages`): the request and its content blocks, the
//! typed streaming events, the `message` object of non-streamed answers, and the error envelope.

pub mod cache_control;
pub mod error_body;
pub mod read_reply;
pub mod reply;
pub mod request;
pub mod response;
pub mod stream;

#[cfg(test)]
mod fixtures;

pub use cache_control::{CacheBreakpoint, CachePoint, CacheTtl, MAX_CACHE_BREAKPOINTS};
pub use error_body::{AnthropicError, AnthropicErrorBody};
pub use request::{
    AnthropicContent, AnthropicMessage, AnthropicTool, ContentBlock, DEFAULT_MAX_TOKENS, MessagesRequest, Role, SystemPrompt, TextBlock, ThinkingBlock,
    ToolResultBlock, ToolUseBlock, tool_arguments, tool_input,
};
pub use response::{AnthropicUsage, Message, MessageMeta};
pub use stream::{
    AnthropicEvent, AnthropicStreamDecoder, BlockDelta, BlockDeltaEvent, BlockStartEvent, BlockStopEvent, EmptyEvent, ErrorEvent, InputJsonDelta,
    MessageDeltaBody, MessageDeltaEvent, MessageStartEvent, TextDelta,
};
