//! Streamed Anthropic Messages: the event types and the decoder the agent uses. The stream a
//! server sends is written from a neutral reply by [`super::reply`] (`codec::encode_reply_stream`);
//! these types read it, and a capture's every event, back.
//!
//! A stream opens with `message_start` (the message without content), then streams each
//! content block (`content_block_start`, `content_block_delta`s, `content_block_stop`), then
//! `message_delta` with the stop reason and cumulative usage, and ends with `message_stop`.
//! `ping` events may come anywhere; `error` reports a failure (e.g. `overloaded_error`) inside
//! an HTTP 200 stream. Each frame's `event:` line repeats the data's `type`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error_body::AnthropicError;
use super::request::{ContentBlock, block_reasoning, tool_arguments};
use super::response::{AnthropicUsage, Message};
use crate::tagged::tagged_union;
use crate::turn::{StreamedCall, StreamedTurn};
use crate::{FinishReason, ModelTurn, Reasoning, SseFrame, StreamDecoder, StreamDelta, WireError};

/// One event of a streamed message, tagged by its `type`. A known type that does not parse is
/// an error, not [`AnthropicEvent::Other`].
#[derive(Debug, Clone, PartialEq)]
pub enum AnthropicEvent {
    /// `message_start`: the message, without content, with the prompt's usage.
    MessageStart(MessageStartEvent),
    /// `ping`: keep-alive.
    Ping(EmptyEvent),
    /// `content_block_start`: a block begins (text empty, `tool_use` input `{}`).
    ContentBlockStart(BlockStartEvent),
    /// `content_block_delta`: a piece of a block.
    ContentBlockDelta(BlockDeltaEvent),
    /// `content_block_stop`: a block is complete.
    ContentBlockStop(BlockStopEvent),
    /// `message_delta`: the stop reason and cumulative usage.
    MessageDelta(MessageDeltaEvent),
    /// `message_stop`: the terminal event.
    MessageStop(EmptyEvent),
    /// `error`: the provider reports an error mid-stream.
    Error(ErrorEvent),
    /// Any other event, verbatim.
    Other(Value),
}

tagged_union!(AnthropicEvent {
    "message_start" => MessageStart,
    "ping" => Ping,
    "content_block_start" => ContentBlockStart,
    "content_block_delta" => ContentBlockDelta,
    "content_block_stop" => ContentBlockStop,
    "message_delta" => MessageDelta,
    "message_stop" => MessageStop,
    "error" => Error,
});

/// An event with no fields of its own (`ping`, `message_stop`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmptyEvent {
    /// Any fields it has anyway, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `message_start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageStartEvent {
    /// The message so far.
    pub message: Message,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `content_block_start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockStartEvent {
    /// Position of the block in the message's content.
    pub index: u32,
    /// The block as it starts.
    pub content_block: ContentBlock,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `content_block_delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockDeltaEvent {
    /// Position of the block in the message's content.
    pub index: u32,
    /// The piece.
    pub delta: BlockDelta,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `content_block_stop`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockStopEvent {
    /// Position of the block in the message's content.
    pub index: u32,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The piece a `content_block_delta` carries, tagged by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockDelta {
    /// `text_delta`: a piece of a text block.
    TextDelta(TextDelta),
    /// `input_json_delta`: a fragment of a `tool_use` block's input JSON.
    InputJsonDelta(InputJsonDelta),
    /// Any other delta (`thinking_delta`, `signature_delta`, `citations_delta`, ...), verbatim.
    Other(Value),
}

tagged_union!(BlockDelta {
    "text_delta" => TextDelta,
    "input_json_delta" => InputJsonDelta,
});

/// `text_delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextDelta {
    /// The piece of text.
    pub text: String,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `input_json_delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputJsonDelta {
    /// The fragment of JSON text (the first one is usually empty).
    pub partial_json: String,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `message_delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageDeltaEvent {
    /// The message-level changes.
    pub delta: MessageDeltaBody,
    /// Cumulative usage (always `output_tokens`; newer responses repeat the input counts).
    pub usage: AnthropicUsage,
    /// Every other field (e.g. `context_management`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `delta` of a `message_delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageDeltaBody {
    /// Why generation stopped; always serialized.
    pub stop_reason: Option<String>,
    /// The stop sequence that ended generation; always serialized (`null` when none).
    pub stop_sequence: Option<String>,
    /// Every other field (e.g. `stop_details`, `container`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `error` event: `{"type": "error", "error": {...}}`, the body of an HTTP error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorEvent {
    /// The error.
    pub error: AnthropicError,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What the decoder knows about one content block, by `index`.
#[derive(Debug, Clone, PartialEq)]
enum BlockState {
    /// A text block.
    Text,
    /// A `tool_use` block: its position among the turn's tool calls and its starting input
    /// (used as the arguments if no input JSON streams).
    ToolUse(u32, Value),
    /// A thinking or redacted-thinking block, at this position in the turn's reasoning.
    Reasoning(usize),
    /// Any other block (server tools, ...), ignored.
    Ignored,
}

/// Incremental decoder of a streamed message (see [`StreamDecoder`]).
///
/// Text is the concatenated text blocks; tool calls are the `tool_use` blocks in order, their
/// arguments the concatenated `partial_json` exactly as streamed (or the start's input, `{}`,
/// if none streamed by the block's stop). Thinking and server-tool blocks, thinking and
/// signature deltas, and `ping`s are ignored. The finish reason comes from `message_delta`
/// (see [`FinishReason::from_anthropic_str`]); the usage is `message_start`'s, updated by
/// `message_delta`'s, converted as [`AnthropicUsage::to_usage`] explains. The SSE event name
/// is not checked; the data's `type` decides.
#[derive(Debug, Default)]
pub struct AnthropicStreamDecoder {
    /// The turn so far: tool calls in block order, thinking and redacted
    /// thinking in block order (signatures included), the stop reason from
    /// `message_delta`, done at `message_stop`, the `error` event's failure.
    turn: StreamedTurn,
    /// Content blocks seen so far.
    blocks: BTreeMap<u32, BlockState>,
    /// The usage so far.
    usage: Option<AnthropicUsage>,
}

impl AnthropicStreamDecoder {
    /// Creates a decoder for one message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a content block.
    fn start_block(&mut self, event: BlockStartEvent, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        if self.blocks.contains_key(&event.index) {
            return Err(WireError::Protocol(format!("content block {} started twice", event.index)));
        }
        let state = match event.content_block {
            ContentBlock::Text(block) => {
                self.push_text(block.text, deltas);
                BlockState::Text
            }
            ContentBlock::ToolUse(call) => {
                let index = u32::try_from(self.turn.tool_calls.len()).unwrap_or(u32::MAX);
                deltas.push(StreamDelta::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() });
                self.turn.tool_calls.push(StreamedCall::started(call.id, call.name));
                BlockState::ToolUse(index, call.input)
            }
            block => match block_reasoning(&block) {
                Some(reasoning) => {
                    self.turn.reasoning.push(reasoning);
                    BlockState::Reasoning(self.turn.reasoning.len() - 1)
                }
                None => BlockState::Ignored,
            },
        };
        self.blocks.insert(event.index, state);
        Ok(())
    }

    /// Appends answer text.
    fn push_text(&mut self, text: String, deltas: &mut Vec<StreamDelta>) {
        if !text.is_empty() {
            self.turn.text.push_str(&text);
            deltas.push(StreamDelta::Text(text));
        }
    }

    /// Appends a fragment of tool call `index`'s arguments.
    fn push_arguments(&mut self, index: u32, fragment: String, deltas: &mut Vec<StreamDelta>) {
        if !fragment.is_empty() {
            self.turn.tool_calls[index as usize].arguments.push_str(&fragment);
            deltas.push(StreamDelta::ToolCallArguments { index, fragment });
        }
    }

    /// The state of block `index`, which must have started.
    fn block(&self, index: u32) -> Result<&BlockState, WireError> {
        self.blocks.get(&index).ok_or_else(|| WireError::Protocol(format!("content block {index} was never started")))
    }

    /// Applies a `content_block_delta`.
    fn apply_delta(&mut self, event: BlockDeltaEvent, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        match (self.block(event.index)?, event.delta) {
            (BlockState::Text, BlockDelta::TextDelta(delta)) => self.push_text(delta.text, deltas),
            (&BlockState::ToolUse(index, _), BlockDelta::InputJsonDelta(delta)) => {
                self.push_arguments(index, delta.partial_json, deltas);
            }
            (BlockState::ToolUse(..), BlockDelta::TextDelta(_)) | (BlockState::Text, BlockDelta::InputJsonDelta(_)) => {
                return Err(WireError::Protocol(format!("content block {} got a delta of the wrong type", event.index)));
            }
            (&BlockState::Reasoning(at), BlockDelta::Other(delta)) => self.push_thinking(at, &delta),
            (BlockState::Ignored | BlockState::Reasoning(_), _) | (_, BlockDelta::Other(_)) => {}
        }
        Ok(())
    }

    /// Appends a `thinking_delta` or `signature_delta` to reasoning block `at`.
    fn push_thinking(&mut self, at: usize, delta: &Value) {
        let piece = |field| delta.get(field).and_then(Value::as_str).unwrap_or_default();
        if let Some(Reasoning::Thinking { thinking, signature }) = self.turn.reasoning.get_mut(at) {
            match delta.get("type").and_then(Value::as_str) {
                Some("thinking_delta") => thinking.push_str(piece("thinking")),
                Some("signature_delta") => signature.get_or_insert_default().push_str(piece("signature")),
                _ => {}
            }
        }
    }

    /// Applies a `content_block_stop`: a tool call whose input never streamed gets its start
    /// input as arguments.
    fn stop_block(&mut self, index: u32, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        if let BlockState::ToolUse(call, input) = self.block(index)?.clone()
            && self.turn.tool_calls[call as usize].arguments.is_empty()
        {
            self.push_arguments(call, tool_arguments(&input), deltas);
        }
        Ok(())
    }
}

impl StreamDecoder for AnthropicStreamDecoder {
    /// Applies one event.
    ///
    /// # Errors
    ///
    /// [`WireError::Json`] for data that is not an event, [`WireError::Provider`] for an
    /// `error` event, and [`WireError::Protocol`] for a block started twice, a delta or stop for
    /// a block never started, a delta of the wrong type for its block, or an event after
    /// `message_stop`.
    fn push_frame(&mut self, frame: &SseFrame) -> Result<Vec<StreamDelta>, WireError> {
        if self.turn.done {
            return Err(WireError::Protocol(format!("event after message_stop: {}", frame.data)));
        }
        let event: AnthropicEvent = serde_json::from_str(&frame.data).map_err(|source| WireError::Json { context: "anthropic stream event", source })?;
        let mut deltas = Vec::new();
        match event {
            AnthropicEvent::MessageStart(event) => self.usage = Some(event.message.usage),
            AnthropicEvent::ContentBlockStart(event) => self.start_block(event, &mut deltas)?,
            AnthropicEvent::ContentBlockDelta(event) => self.apply_delta(event, &mut deltas)?,
            AnthropicEvent::ContentBlockStop(event) => self.stop_block(event.index, &mut deltas)?,
            AnthropicEvent::MessageDelta(event) => {
                if let Some(reason) = &event.delta.stop_reason {
                    let reason = FinishReason::from_anthropic_str(reason);
                    self.turn.finish_reason = Some(reason.clone());
                    deltas.push(StreamDelta::Finished(reason));
                }
                let usage = self.usage.get_or_insert_default();
                usage.update(&event.usage);
                deltas.push(StreamDelta::Usage(usage.to_usage()));
            }
            AnthropicEvent::MessageStop(_) => {
                self.turn.done = true;
                deltas.push(StreamDelta::Done);
            }
            AnthropicEvent::Error(event) => {
                let error = &event.error;
                self.turn.failure = Some((error.kind.clone(), error.message.clone()));
                return Err(error.to_wire_error());
            }
            AnthropicEvent::Ping(_) | AnthropicEvent::Other(_) => {}
        }
        Ok(deltas)
    }

    /// Whether `message_stop` arrived.
    fn is_done(&self) -> bool {
        self.turn.done
    }

    /// The turn; the decoder is reset.
    ///
    /// # Errors
    ///
    /// [`WireError::Provider`] if the stream carried an `error` event, otherwise
    /// [`WireError::StreamEndedEarly`] without `message_stop` and [`WireError::MissingFinish`]
    /// without a stop reason.
    fn finish(&mut self) -> Result<ModelTurn, WireError> {
        let decoder = std::mem::take(self);
        decoder.turn.finish(decoder.usage.as_ref().map(AnthropicUsage::to_usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{decode_stream, small_tool_turn, small_tool_turn_deltas, stream_of_turn};
    use crate::{Format, Usage};

    fn small_turn() -> ModelTurn {
        small_tool_turn("toolu_1", Usage { input_tokens: 120, output_tokens: 9, cache_read_tokens: 100, cache_write_tokens: 0 })
    }

    fn encode(turn: &ModelTurn) -> Vec<String> {
        stream_of_turn(Format::Anthropic, turn)
    }

    fn decode(frames: &[String]) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
        decode_stream(&frames.concat(), &mut AnthropicStreamDecoder::new())
    }

    #[test]
    fn encoded_stream_decodes_to_the_same_turn_and_deltas() {
        let (deltas, turn) = decode(&encode(&small_turn()));
        assert_eq!(turn.unwrap(), small_turn());
        assert_eq!(deltas, small_tool_turn_deltas(&small_turn()));
    }

    #[test]
    fn arguments_stream_raw_and_a_turn_without_usage_reports_zeros() {
        let turn = ModelTurn {
            text: String::new(),
            tool_calls: vec![crate::ToolCall { id: "toolu_2".into(), name: "f".into(), arguments: r#"{"a": 1, "#.into() }],
            reasoning: Vec::new(),
            finish_reason: FinishReason::Length,
            usage: None,
        };
        let decoded = decode(&encode(&turn)).1.unwrap();
        assert_eq!(decoded, ModelTurn { usage: Some(Usage::default()), ..turn });
    }

    #[test]
    fn a_stream_without_message_stop_ended_early() {
        let frames = encode(&small_turn());
        let (_, turn) = decode(&frames[..frames.len() - 1]);
        assert!(matches!(turn, Err(WireError::StreamEndedEarly)), "{turn:?}");
        let (_, turn) = decode(&[frames.concat(), frames[1].clone()]);
        assert!(matches!(turn, Err(WireError::Protocol(_))), "{turn:?}");
    }

    #[test]
    fn blocks_must_start_once_and_get_matching_deltas() {
        let frames = encode(&small_turn());
        // Without the tool block's start, its deltas refer to a block never started.
        let mut broken = frames.clone();
        broken.remove(6);
        assert!(matches!(decode(&broken).1, Err(WireError::Protocol(_))));
        // A repeated start.
        let mut broken = frames.clone();
        broken.insert(3, frames[2].clone());
        assert!(matches!(decode(&broken).1, Err(WireError::Protocol(_))));
        // A text delta for the tool block.
        let mut broken = frames.clone();
        broken.insert(7, frames[3].replace(r#""index":0"#, r#""index":1"#));
        assert!(matches!(decode(&broken).1, Err(WireError::Protocol(_))));
    }

    #[test]
    fn message_delta_without_stop_reason_is_missing_finish() {
        let frames = encode(&ModelTurn::default());
        let patched: Vec<String> = frames.iter().map(|frame| frame.replace(r#""stop_reason":"end_turn""#, r#""stop_reason":null"#)).collect();
        assert!(matches!(decode(&patched).1, Err(WireError::MissingFinish)));
    }
}
