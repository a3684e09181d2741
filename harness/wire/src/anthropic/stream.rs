//! Streamed Anthropic Messages: the event types, the encoder the mock server uses and the
//! decoder the agent uses, kept together so both sides share one definition of the stream.
//!
//! A stream opens with `message_start` (the message without content), then streams each
//! content block (`content_block_start`, `content_block_delta`s, `content_block_stop`), then
//! `message_delta` with the stop reason and cumulative usage, and ends with `message_stop`.
//! `ping` events may come anywhere; `error` reports a failure (e.g. `overloaded_error`) inside
//! an HTTP 200 stream. Each frame's `event:` line repeats the data's `type`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::error_body::AnthropicError;
use super::request::{ContentBlock, ToolUseBlock, block_reasoning, tool_arguments};
use super::response::{AnthropicUsage, Message, MessageMeta};
use crate::split::{split_argument_fragments, split_text_pieces};
use crate::tagged::tagged_union;
use crate::{FinishReason, ModelTurn, Reasoning, SseFrame, StreamDecoder, StreamDelta, ToolCall, WireError, sse};

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

/// Renders a turn as the SSE frames of a real streamed message, in the API's order:
///
/// 1. `message_start`: the message with empty content, `stop_reason: null` and usage
///    `{input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens: 1}`
///    (see [`AnthropicUsage::from_usage`]; zeros when the turn has no usage);
/// 2. one `ping`, as the API sends right after it;
/// 3. per block (the text if any, then one `tool_use` per tool call), `content_block_start`
///    (text `""` / input `{}`), the deltas (`text_delta` per [`split_text_pieces`] piece /
///    an empty `input_json_delta`, as the API starts with, then one per
///    [`split_argument_fragments`] piece of the raw arguments), `content_block_stop`;
/// 4. `message_delta` with the stop reason (see [`FinishReason::as_anthropic_str`]),
///    `stop_sequence: null` and usage `{output_tokens}`;
/// 5. `message_stop`.
///
/// Each element is one complete frame (`event: <type>` + `data:`).
pub fn encode_stream(turn: &ModelTurn, meta: &MessageMeta) -> Vec<String> {
    let usage = AnthropicUsage::from_usage(&turn.usage.unwrap_or_default());
    let start_usage = AnthropicUsage { output_tokens: 1, ..usage.clone() };
    let mut events = vec![
        AnthropicEvent::MessageStart(MessageStartEvent { message: meta.message(Vec::new(), None, start_usage), extra: Map::new() }),
        AnthropicEvent::Ping(EmptyEvent::default()),
    ];
    let thinking = turn.reasoning.iter().filter_map(thinking_block);
    let text = (!turn.text.is_empty()).then(|| text_block(&turn.text));
    let blocks = thinking.chain(text).chain(turn.tool_calls.iter().map(tool_use_block));
    for (index, (start, deltas)) in (0..).zip(blocks) {
        events.extend(block_events(index, start, deltas));
    }
    events.push(AnthropicEvent::MessageDelta(MessageDeltaEvent {
        delta: MessageDeltaBody { stop_reason: Some(turn.finish_reason.as_anthropic_str().to_owned()), stop_sequence: None, extra: Map::new() },
        usage: AnthropicUsage { output_tokens: usage.output_tokens, ..AnthropicUsage::default() },
        extra: Map::new(),
    }));
    events.push(AnthropicEvent::MessageStop(EmptyEvent::default()));
    events
        .iter()
        .map(|event| {
            let value = serde_json::to_value(event).expect("events have string keys only");
            sse::encode_typed_frame(&value)
        })
        .collect()
}

/// The start of a thinking block (empty) and its deltas, the signature last; a redacted
/// thinking block starts whole.
fn thinking_block(reasoning: &Reasoning) -> Option<(ContentBlock, Vec<BlockDelta>)> {
    match reasoning {
        Reasoning::Thinking { thinking, signature } => {
            let pieces = split_text_pieces(thinking).into_iter().map(|piece| json!({"type": "thinking_delta", "thinking": piece}));
            let signature = signature.iter().map(|signature| json!({"type": "signature_delta", "signature": signature}));
            let start = json!({"type": "thinking", "thinking": "", "signature": ""});
            let start = serde_json::from_value(start).expect("a thinking block");
            Some((start, pieces.chain(signature).map(BlockDelta::Other).collect()))
        }
        other => super::request::reasoning_block(other).map(|block| (block, Vec::new())),
    }
}

/// The start of a text block and its deltas.
fn text_block(text: &str) -> (ContentBlock, Vec<BlockDelta>) {
    let deltas = split_text_pieces(text).into_iter().map(|piece| BlockDelta::TextDelta(TextDelta { text: piece.to_owned(), extra: Map::new() })).collect();
    (ContentBlock::text(""), deltas)
}

/// The start of a `tool_use` block (input `{}`) and its deltas: an empty fragment, then the
/// raw arguments, so they arrive exactly as the turn has them.
fn tool_use_block(call: &ToolCall) -> (ContentBlock, Vec<BlockDelta>) {
    let start = ToolUseBlock { input: json!({}), ..ToolUseBlock::from_tool_call(call) };
    let deltas = std::iter::once("")
        .chain(split_argument_fragments(&call.arguments))
        .map(|fragment| BlockDelta::InputJsonDelta(InputJsonDelta { partial_json: fragment.to_owned(), extra: Map::new() }))
        .collect();
    (ContentBlock::ToolUse(start), deltas)
}

/// The events of block `index`: start, deltas, stop.
fn block_events(index: u32, start: ContentBlock, deltas: Vec<BlockDelta>) -> Vec<AnthropicEvent> {
    let start = AnthropicEvent::ContentBlockStart(BlockStartEvent { index, content_block: start, extra: Map::new() });
    let deltas = deltas.into_iter().map(|delta| AnthropicEvent::ContentBlockDelta(BlockDeltaEvent { index, delta, extra: Map::new() }));
    let stop = AnthropicEvent::ContentBlockStop(BlockStopEvent { index, extra: Map::new() });
    std::iter::once(start).chain(deltas).chain([stop]).collect()
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
    /// Answer text so far.
    text: String,
    /// Tool calls so far, in block order.
    tool_calls: Vec<ToolCall>,
    /// Thinking and redacted thinking so far, in block order, signatures included.
    reasoning: Vec<Reasoning>,
    /// Content blocks seen so far.
    blocks: BTreeMap<u32, BlockState>,
    /// The stop reason, from `message_delta`.
    finish_reason: Option<FinishReason>,
    /// The usage so far.
    usage: Option<AnthropicUsage>,
    /// Whether `message_stop` was seen.
    done: bool,
    /// The error the provider reported, as kind and message.
    failure: Option<(String, String)>,
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
                let index = u32::try_from(self.tool_calls.len()).unwrap_or(u32::MAX);
                deltas.push(StreamDelta::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() });
                self.tool_calls.push(ToolCall { id: call.id, name: call.name, arguments: String::new() });
                BlockState::ToolUse(index, call.input)
            }
            block => match block_reasoning(&block) {
                Some(reasoning) => {
                    self.reasoning.push(reasoning);
                    BlockState::Reasoning(self.reasoning.len() - 1)
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
            self.text.push_str(&text);
            deltas.push(StreamDelta::Text(text));
        }
    }

    /// Appends a fragment of tool call `index`'s arguments.
    fn push_arguments(&mut self, index: u32, fragment: String, deltas: &mut Vec<StreamDelta>) {
        if !fragment.is_empty() {
            self.tool_calls[index as usize].arguments.push_str(&fragment);
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
        if let Some(Reasoning::Thinking { thinking, signature }) = self.reasoning.get_mut(at) {
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
            && self.tool_calls[call as usize].arguments.is_empty()
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
        if self.done {
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
                    self.finish_reason = Some(reason.clone());
                    deltas.push(StreamDelta::Finished(reason));
                }
                let usage = self.usage.get_or_insert_default();
                usage.update(&event.usage);
                deltas.push(StreamDelta::Usage(usage.to_usage()));
            }
            AnthropicEvent::MessageStop(_) => {
                self.done = true;
                deltas.push(StreamDelta::Done);
            }
            AnthropicEvent::Error(event) => {
                let error = &event.error;
                self.failure = Some((error.kind.clone(), error.message.clone()));
                return Err(error.to_wire_error());
            }
            AnthropicEvent::Ping(_) | AnthropicEvent::Other(_) => {}
        }
        Ok(deltas)
    }

    /// Whether `message_stop` arrived.
    fn is_done(&self) -> bool {
        self.done
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
        if let Some((kind, message)) = decoder.failure {
            return Err(WireError::Provider { kind, message });
        }
        if !decoder.done {
            return Err(WireError::StreamEndedEarly);
        }
        Ok(ModelTurn {
            text: decoder.text,
            tool_calls: decoder.tool_calls,
            reasoning: decoder.reasoning,
            finish_reason: decoder.finish_reason.ok_or(WireError::MissingFinish)?,
            usage: decoder.usage.as_ref().map(AnthropicUsage::to_usage),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Usage;
    use crate::testing::{decode_stream, small_tool_turn, small_tool_turn_deltas};

    fn meta() -> MessageMeta {
        MessageMeta { id: "msg_x".into(), model: "claude-sonnet-4-5".into() }
    }

    fn small_turn() -> ModelTurn {
        small_tool_turn("toolu_1", Usage { input_tokens: 120, output_tokens: 9, cache_read_tokens: 100, cache_write_tokens: 0 })
    }

    fn decode(frames: &[String]) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
        decode_stream(&frames.concat(), &mut AnthropicStreamDecoder::new())
    }

    #[test]
    fn encode_stream_snapshot() {
        let expected = concat!(
            "event: message_start\n",
            r#"data: {"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":1}}}"#,
            "\n\nevent: ping\n",
            r#"data: {"type":"ping"}"#,
            "\n\nevent: content_block_start\n",
            r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            "\n\nevent: content_block_delta\n",
            r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            "\n\nevent: content_block_delta\n",
            r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}"#,
            "\n\nevent: content_block_stop\n",
            r#"data: {"type":"content_block_stop","index":0}"#,
            "\n\nevent: content_block_start\n",
            r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#,
            "\n\nevent: content_block_delta\n",
            r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            "\n\nevent: content_block_delta\n",
            r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\","}}"#,
            "\n\nevent: content_block_delta\n",
            r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"units\":\"c\"}"}}"#,
            "\n\nevent: content_block_stop\n",
            r#"data: {"type":"content_block_stop","index":1}"#,
            "\n\nevent: message_delta\n",
            r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}"#,
            "\n\nevent: message_stop\n",
            r#"data: {"type":"message_stop"}"#,
            "\n\n",
        );
        assert_eq!(encode_stream(&small_turn(), &meta()).concat(), expected);
    }

    #[test]
    fn encoded_stream_decodes_to_the_same_turn_and_deltas() {
        let (deltas, turn) = decode(&encode_stream(&small_turn(), &meta()));
        assert_eq!(turn.unwrap(), small_turn());
        assert_eq!(deltas, small_tool_turn_deltas(&small_turn()));
    }

    #[test]
    fn arguments_stream_raw_and_a_turn_without_usage_reports_zeros() {
        let turn = ModelTurn {
            text: String::new(),
            tool_calls: vec![ToolCall { id: "toolu_2".into(), name: "f".into(), arguments: r#"{"a": 1, "#.into() }],
            reasoning: Vec::new(),
            finish_reason: FinishReason::Length,
            usage: None,
        };
        let decoded = decode(&encode_stream(&turn, &meta())).1.unwrap();
        assert_eq!(decoded, ModelTurn { usage: Some(Usage::default()), ..turn });
    }

    #[test]
    fn a_stream_without_message_stop_ended_early() {
        let frames = encode_stream(&small_turn(), &meta());
        let (_, turn) = decode(&frames[..frames.len() - 1]);
        assert!(matches!(turn, Err(WireError::StreamEndedEarly)), "{turn:?}");
        let (_, turn) = decode(&[frames.concat(), frames[1].clone()]);
        assert!(matches!(turn, Err(WireError::Protocol(_))), "{turn:?}");
    }

    #[test]
    fn blocks_must_start_once_and_get_matching_deltas() {
        let frames = encode_stream(&small_turn(), &meta());
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
        let frames = encode_stream(&ModelTurn::default(), &meta());
        let patched: Vec<String> = frames.iter().map(|frame| frame.replace(r#""stop_reason":"end_turn""#, r#""stop_reason":null"#)).collect();
        assert!(matches!(decode(&patched).1, Err(WireError::MissingFinish)));
    }
}
