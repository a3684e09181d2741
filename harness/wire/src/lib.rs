//! Provider wire formats for reloop.
//!
//! This crate owns the exact bytes that travel between the agent loop and a model provider.
//! The agent's client decodes with it and the mock provider server encodes with it, so every
//! format here round-trips by construction: whatever the mock sends, the agent reads back as
//! the same [`ModelTurn`].
//!
//! - [`sse`]: Server-Sent-Events framing, shared by every streaming format.
//! - [`delta`]: the streaming deltas and the [`StreamDecoder`] trait every format implements.
//! - [`split`]: how encoders cut text and tool arguments into streamed pieces.
//! - [`turn`]: the provider-neutral result of one model call.
//! - [`text`]: a message's text, shared by reference count instead of copied.
//! - [`message`]: one message of a conversation, shared by the loop's transcript and every
//!   request.
//! - [`parts`]: the provider-neutral response, as the ordered parts every format encodes from
//!   and decodes into.
//! - [`prompt`]: the provider-neutral request, the pivot every format's request converts through.
//! - [`reply`]: one reply ready for any format's encoder (the parts, finish reason, usage and
//!   recorded ids), the ids generated in each API's shape, and a response read back
//!   ([`reply::DecodedReply`]); each format's `reply` and `read_reply` modules do the bytes.
//! - [`error_reply`]: the errors a server answers with, which each format's error body writes.
//! - [`sse_events`]: an SSE body cut at its real event boundaries, bytes kept, for raw replay.
//! - [`openai_chat`]: the OpenAI Chat Completions API (requests, streamed chunks, non-streamed
//!   responses, error bodies).
//! - [`openai_responses`]: the OpenAI Responses API (requests and items, typed stream events,
//!   the `response` object).
//! - [`anthropic`]: the Anthropic Messages API (requests and content blocks, typed stream
//!   events, the `message` object, error bodies).
//! - [`gemini`]: the Google Gemini API (requests and parts, responses encoded from and decoded
//!   into the neutral parts, the streamed turn, Google's error envelope).
//! - [`compact_json`]: a JSON value's compact text without going through `Display`.
//! - [`codec`]: what callers ask of any format (auth headers, requests to and from the
//!   prompt, replies encoded and read, error bodies written and read, fault frames), one arm
//!   per format.
//! - [`history_prefix`]: a request's history parsed only past what it shares with the previous
//!   request of its conversation (the mock no longer parses a conversation's first message once
//!   per request).
//! - [`context_management`]: provider-side context management as requests ask for it
//!   (Anthropic context edits and compaction, Responses compaction).
//! - [`redirect`]: the error every reloop HTTP client gives for a 3xx it does not follow.
//! - [`format`](mod@format): the formats as a value, to pick an endpoint and a stream decoder
//!   at run time.

pub mod anthropic;
pub mod codec;
pub mod compact_json;
pub mod context_management;
pub mod delta;
pub mod error;
pub mod error_reply;
pub mod format;
pub mod gemini;
pub mod history_prefix;
pub mod message;
pub mod openai_chat;
pub mod openai_responses;
pub mod parts;
pub mod prompt;
pub mod redirect;
pub mod reply;
pub mod split;
pub mod sse;
pub mod sse_events;
pub mod text;
pub mod turn;

mod history_bytes;
mod nullable;
mod tagged;
#[cfg(test)]
mod testing;
mod text_or_list;

pub use delta::{StreamDecoder, StreamDelta};
pub use error::WireError;
pub use format::{Format, decoder_for};
pub use message::{Message, Reasoning};
pub use prompt::{Prompt, ToolChoice, ToolSpec};
pub use sse::{SseDecoder, SseFrame};
pub use text::Text;
pub use turn::{FinishReason, ModelTurn, ToolCall, Usage};
