//! The OpenAI Chat Completions API (`POST /v1/chat/completions`): what the agent sends, what
//! comes back streamed or whole, and the error envelope.

pub mod error_body;
pub mod layout;
mod read_message;
pub mod read_reply;
mod read_request;
pub mod reply;
pub mod request;
pub mod response;
pub mod stream;

#[cfg(test)]
mod fixtures;

pub use error_body::{ApiError, ApiErrorBody};
pub use layout::{ChunkField, ChunkLayout};
pub use request::{ChatMessage, ChatRequest, ChatTool, ChatToolCall, ContentPart, FunctionCall, FunctionDef, MessageContent, StreamOptions};
pub use response::{ChatCompletion, CompletionChoice, CompletionMessage};
pub use stream::{ChatChunk, ChatStreamAccumulator, ChatUsage, ChunkChoice, ChunkDelta, FunctionDelta, PromptTokensDetails, ToolCallDelta};
