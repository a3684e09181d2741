//! Streamed Responses: the event types and the decoder the agent uses. The stream a server
//! sends is written from a neutral reply by [`super::reply`] (`codec::encode_reply_stream`);
//! these types read it, and a capture's every event, back.
//!
//! Unlike Chat Completions, a Responses stream is a sequence of typed semantic events
//! (`"type": "response.output_text.delta"`, ...), each also named by its SSE `event:` line and
//! numbered by `sequence_number`. Output arrives item by item: an item is added, its content
//! streams, and it is marked done; the stream ends with `response.completed` (or
//! `response.incomplete`) carrying the whole response. Event types this crate does not interpret
//! (reasoning summaries, custom tool input, refusals, ...) parse as [`ResponsesEvent::Other`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::request::{FunctionCallItem, InputItem};
use super::response::{Response, ResponsesError, ResponsesUsage, assistant_text, completed_reason, incomplete_reason};
use crate::openai_chat::ContentPart;
use crate::tagged::tagged_union;
use crate::turn::{StreamedCall, StreamedTurn};
use crate::{FinishReason, ModelTurn, SseFrame, StreamDecoder, StreamDelta, Usage, WireError};

/// One event of a streamed response, tagged by its `type`. A known type that does not parse is
/// an error, not [`ResponsesEvent::Other`].
#[derive(Debug, Clone, PartialEq)]
pub enum ResponsesEvent {
    /// `response.created`: the response exists (status `in_progress`, no output yet).
    Created(ResponseEvent),
    /// `response.in_progress`: generation started.
    InProgress(ResponseEvent),
    /// `response.output_item.added`: a new output item (message, function call, ...) begins.
    OutputItemAdded(OutputItemEvent),
    /// `response.content_part.added`: a message gets a new content part.
    ContentPartAdded(ContentPartEvent),
    /// `response.output_text.delta`: a piece of a message's text.
    OutputTextDelta(TextDeltaEvent),
    /// `response.output_text.done`: a text part is complete.
    OutputTextDone(TextDoneEvent),
    /// `response.content_part.done`: a content part is complete.
    ContentPartDone(ContentPartEvent),
    /// `response.function_call_arguments.delta`: a fragment of a function call's arguments.
    FunctionCallArgumentsDelta(ArgumentsDeltaEvent),
    /// `response.function_call_arguments.done`: a function call's arguments are complete.
    FunctionCallArgumentsDone(ArgumentsDoneEvent),
    /// `response.output_item.done`: an output item is complete.
    OutputItemDone(OutputItemEvent),
    /// `response.completed`: the terminal event of a finished response.
    Completed(ResponseEvent),
    /// `response.incomplete`: the terminal event of a response cut short.
    Incomplete(ResponseEvent),
    /// `response.failed`: the terminal event of a failed response.
    Failed(ResponseEvent),
    /// `error`: the provider reports an error mid-stream.
    Error(ErrorEvent),
    /// Any other event, verbatim.
    Other(Value),
}

tagged_union!(ResponsesEvent {
    "response.created" => Created,
    "response.in_progress" => InProgress,
    "response.output_item.added" => OutputItemAdded,
    "response.content_part.added" => ContentPartAdded,
    "response.output_text.delta" => OutputTextDelta,
    "response.output_text.done" => OutputTextDone,
    "response.content_part.done" => ContentPartDone,
    "response.function_call_arguments.delta" => FunctionCallArgumentsDelta,
    "response.function_call_arguments.done" => FunctionCallArgumentsDone,
    "response.output_item.done" => OutputItemDone,
    "response.completed" => Completed,
    "response.incomplete" => Incomplete,
    "response.failed" => Failed,
    "error" => Error,
});

/// An event carrying the whole response object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseEvent {
    /// The response as of this event.
    pub response: Response,
    /// Position of the event in the stream (absent in some hand-written streams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `response.output_item.added` / `.done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputItemEvent {
    /// Position of the item in the response's output. The real API always sends it; minimal
    /// hand-written streams (Codex's test fixtures) omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_index: Option<u32>,
    /// The item as of this event.
    pub item: InputItem,
    /// Position of the event in the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `response.content_part.added` / `.done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentPartEvent {
    /// The message item's id.
    pub item_id: String,
    /// Position of the item in the response's output.
    pub output_index: u32,
    /// Position of the part in the message's content.
    pub content_index: u32,
    /// The part as of this event.
    pub part: ContentPart,
    /// Position of the event in the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `response.output_text.delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextDeltaEvent {
    /// The message item's id.
    pub item_id: String,
    /// Position of the item in the response's output.
    pub output_index: u32,
    /// Position of the part in the message's content.
    pub content_index: u32,
    /// The piece of text.
    pub delta: String,
    /// Token log-probabilities (`[]` unless requested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<Value>>,
    /// Position of the event in the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field (e.g. `obfuscation`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `response.output_text.done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextDoneEvent {
    /// The message item's id.
    pub item_id: String,
    /// Position of the item in the response's output.
    pub output_index: u32,
    /// Position of the part in the message's content.
    pub content_index: u32,
    /// The part's whole text.
    pub text: String,
    /// Token log-probabilities (`[]` unless requested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<Value>>,
    /// Position of the event in the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `response.function_call_arguments.delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgumentsDeltaEvent {
    /// The function call item's id.
    pub item_id: String,
    /// Position of the item in the response's output.
    pub output_index: u32,
    /// The fragment of JSON text.
    pub delta: String,
    /// Position of the event in the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field (e.g. `obfuscation`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `response.function_call_arguments.done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgumentsDoneEvent {
    /// The function call item's id.
    pub item_id: String,
    /// Position of the item in the response's output.
    pub output_index: u32,
    /// The whole arguments text.
    pub arguments: String,
    /// Position of the event in the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `error` event. Real streams nest the error (`{"type":"error","error":{...}}`); the API
/// reference documents flat `code` / `message` fields, which are kept in `extra` and read too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorEvent {
    /// The error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ResponsesError>,
    /// Position of the event in the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ErrorEvent {
    /// The [`WireError::Provider`] this event reports (nested error first, then flat fields).
    pub fn to_wire_error(&self) -> WireError {
        if let Some(error) = &self.error {
            return error.to_wire_error();
        }
        let field = |name: &str| self.extra.get(name).and_then(Value::as_str);
        WireError::Provider {
            kind: field("code").or_else(|| field("type")).unwrap_or("error").to_owned(),
            message: field("message").unwrap_or_default().to_owned(),
        }
    }
}

/// What the decoder knows about one output item, by `output_index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemState {
    /// A message; `streamed` once a text delta arrived (then its done event adds nothing).
    Message {
        /// Whether text deltas arrived for it.
        streamed: bool,
    },
    /// A function call, at this position among the turn's tool calls.
    FunctionCall(u32),
    /// Any other item (reasoning, custom tool call, ...), ignored.
    Ignored,
}

/// Incremental decoder of a streamed response (see [`StreamDecoder`]).
///
/// Text is the concatenated `output_text` of all message items, tool calls are the function
/// call items in output order (their `call_id` becomes [`ToolCall::id`]). A message or call that
/// arrives only as `response.output_item.done`, without deltas, is taken from that event.
/// The finish reason comes from the terminal event: `response.completed` gives
/// [`FinishReason::ToolCalls`] if there were function calls, else [`FinishReason::Stop`];
/// `response.incomplete` gives [`FinishReason::Length`] for `max_output_tokens`. The SSE event
/// name is not checked; the data's `type` decides.
#[derive(Debug, Default)]
pub struct ResponsesStreamDecoder {
    /// The turn so far: tool calls and reasoning items in output order
    /// (reasoning from their `output_item.done`), the finish reason from
    /// the terminal event, the failure of `error` or `response.failed`.
    turn: StreamedTurn,
    /// Output items seen so far.
    items: BTreeMap<u32, ItemState>,
    /// The usage, from the terminal event.
    usage: Option<Usage>,
}

impl ResponsesStreamDecoder {
    /// Creates a decoder for one response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a provider error and returns it.
    fn fail(&mut self, error: WireError) -> WireError {
        if let WireError::Provider { kind, message } = &error {
            self.turn.failure = Some((kind.clone(), message.clone()));
        }
        error
    }

    /// Starts tracking the item at `output_index` (once; a repeated start is ignored).
    fn start_item(&mut self, output_index: u32, item: &InputItem, deltas: &mut Vec<StreamDelta>) {
        if self.items.contains_key(&output_index) {
            return;
        }
        let state = match item {
            InputItem::Message(_) => ItemState::Message { streamed: false },
            InputItem::FunctionCall(call) => {
                let index = u32::try_from(self.turn.tool_calls.len()).unwrap_or(u32::MAX);
                deltas.push(StreamDelta::ToolCallStarted { index, id: call.call_id.clone(), name: call.name.clone() });
                self.turn.tool_calls.push(StreamedCall::started(call.call_id.as_str(), call.name.as_str()));
                ItemState::FunctionCall(index)
            }
            InputItem::FunctionCallOutput(_) | InputItem::Other(_) => ItemState::Ignored,
        };
        self.items.insert(output_index, state);
    }

    /// Appends an arguments fragment to the function call at `output_index`.
    fn push_arguments(&mut self, output_index: u32, fragment: &str, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        let Some(ItemState::FunctionCall(index)) = self.items.get(&output_index).copied() else {
            return Err(WireError::UnknownToolCallIndex(output_index));
        };
        if !fragment.is_empty() {
            self.turn.tool_calls[index as usize].arguments.push_str(fragment);
            deltas.push(StreamDelta::ToolCallArguments { index, fragment: fragment.to_owned() });
        }
        Ok(())
    }

    /// Checks a function call's final arguments against what streamed; if nothing streamed,
    /// they are taken as one fragment.
    fn complete_arguments(&mut self, output_index: u32, arguments: &str, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        let Some(ItemState::FunctionCall(index)) = self.items.get(&output_index).copied() else {
            return Err(WireError::UnknownToolCallIndex(output_index));
        };
        let streamed = &self.turn.tool_calls[index as usize].arguments;
        if streamed.is_empty() {
            return self.push_arguments(output_index, arguments, deltas);
        }
        if streamed != arguments {
            return Err(WireError::Protocol(format!("function call {output_index} streamed arguments {streamed:?} but finished with {arguments:?}")));
        }
        Ok(())
    }

    /// Appends text of the message at `output_index`.
    fn push_text(&mut self, output_index: u32, text: &str, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        let Some(ItemState::Message { streamed }) = self.items.get_mut(&output_index) else {
            return Err(WireError::Protocol(format!("text for output item {output_index}, which is not a started message")));
        };
        *streamed = true;
        if !text.is_empty() {
            self.turn.text.push_str(text);
            deltas.push(StreamDelta::Text(text.to_owned()));
        }
        Ok(())
    }

    /// The output index of an item event; an event without one (only hand-written streams omit
    /// it) is taken as a new item after all seen so far.
    fn output_index(&self, event: &OutputItemEvent) -> u32 {
        event.output_index.unwrap_or_else(|| self.items.last_key_value().map_or(0, |(last, _)| last.saturating_add(1)))
    }

    /// Applies `response.output_item.done`: completes a call, or takes a message's text if none
    /// streamed.
    fn finish_item(&mut self, event: &OutputItemEvent, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        let output_index = self.output_index(event);
        self.start_item(output_index, &event.item, deltas);
        match &event.item {
            InputItem::FunctionCall(FunctionCallItem { arguments, .. }) => self.complete_arguments(output_index, arguments, deltas),
            InputItem::Message(message) => {
                let streamed = matches!(self.items.get(&output_index), Some(ItemState::Message { streamed: true }));
                match assistant_text(message) {
                    Some(text) if !streamed => self.push_text(output_index, &text, deltas),
                    _ => Ok(()),
                }
            }
            InputItem::Other(item) => {
                self.turn.reasoning.extend(super::request::item_reasoning(item));
                Ok(())
            }
            InputItem::FunctionCallOutput(_) => Ok(()),
        }
    }

    /// Applies a terminal event.
    fn terminate(&mut self, response: &Response, reason: FinishReason) -> Vec<StreamDelta> {
        self.turn.done = true;
        self.turn.finish_reason = Some(reason.clone());
        self.usage = response.usage.as_ref().and_then(Option::as_ref).map(ResponsesUsage::to_usage);
        let usage = self.usage.map(StreamDelta::Usage);
        std::iter::once(StreamDelta::Finished(reason)).chain(usage).chain([StreamDelta::Done]).collect()
    }
}

impl StreamDecoder for ResponsesStreamDecoder {
    /// Applies one event.
    ///
    /// # Errors
    ///
    /// [`WireError::Json`] for data that is not an event, [`WireError::Provider`] for `error`
    /// and `response.failed`, [`WireError::UnknownToolCallIndex`] for arguments of an item that
    /// is not a started function call, and [`WireError::Protocol`] for text of an item that is
    /// not a started message, final arguments that differ from the streamed ones, or an event
    /// after the terminal one.
    fn push_frame(&mut self, frame: &SseFrame) -> Result<Vec<StreamDelta>, WireError> {
        if self.turn.done {
            return Err(WireError::Protocol(format!("event after the terminal event: {}", frame.data)));
        }
        let event: ResponsesEvent = serde_json::from_str(&frame.data).map_err(|source| WireError::Json { context: "responses stream event", source })?;
        let mut deltas = Vec::new();
        match event {
            ResponsesEvent::OutputItemAdded(event) => {
                let output_index = self.output_index(&event);
                self.start_item(output_index, &event.item, &mut deltas);
                if let InputItem::FunctionCall(call) = &event.item {
                    self.push_arguments(output_index, &call.arguments, &mut deltas)?;
                }
            }
            ResponsesEvent::OutputTextDelta(event) => {
                self.push_text(event.output_index, &event.delta, &mut deltas)?;
            }
            ResponsesEvent::FunctionCallArgumentsDelta(event) => {
                self.push_arguments(event.output_index, &event.delta, &mut deltas)?;
            }
            ResponsesEvent::FunctionCallArgumentsDone(event) => {
                self.complete_arguments(event.output_index, &event.arguments, &mut deltas)?;
            }
            ResponsesEvent::OutputItemDone(event) => self.finish_item(&event, &mut deltas)?,
            ResponsesEvent::Completed(event) => {
                let reason = completed_reason(!self.turn.tool_calls.is_empty());
                deltas = self.terminate(&event.response, reason);
            }
            ResponsesEvent::Incomplete(event) => {
                let details = event.response.incomplete_details.as_ref();
                let reason = incomplete_reason(details.and_then(Option::as_ref));
                deltas = self.terminate(&event.response, reason);
            }
            ResponsesEvent::Failed(event) => {
                self.turn.done = true;
                return Err(self.fail(event.response.failure()));
            }
            ResponsesEvent::Error(event) => return Err(self.fail(event.to_wire_error())),
            ResponsesEvent::Created(_)
            | ResponsesEvent::InProgress(_)
            | ResponsesEvent::ContentPartAdded(_)
            | ResponsesEvent::OutputTextDone(_)
            | ResponsesEvent::ContentPartDone(_)
            | ResponsesEvent::Other(_) => {}
        }
        Ok(deltas)
    }

    /// Whether `response.completed`, `response.incomplete` or `response.failed` arrived.
    fn is_done(&self) -> bool {
        self.turn.done
    }

    /// The turn; the decoder is reset.
    ///
    /// # Errors
    ///
    /// [`WireError::Provider`] if the provider reported an error, otherwise
    /// [`WireError::StreamEndedEarly`] if no terminal event came.
    fn finish(&mut self) -> Result<ModelTurn, WireError> {
        let decoder = std::mem::take(self);
        decoder.turn.finish(decoder.usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;
    use crate::testing::{decode_stream, small_tool_turn, small_tool_turn_deltas, stream_of_turn};

    fn encode(turn: &ModelTurn) -> Vec<String> {
        stream_of_turn(Format::OpenaiResponses, turn)
    }

    fn small_turn() -> ModelTurn {
        small_tool_turn("call_1", Usage { input_tokens: 12, output_tokens: 9, cache_read_tokens: 4, cache_write_tokens: 0 })
    }

    /// Decodes encoded frames with a fresh decoder.
    fn decode(frames: &[String]) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
        decode_stream(&frames.concat(), &mut ResponsesStreamDecoder::new())
    }

    /// The `data` of an encoded frame, as JSON.
    fn data(frame: &str) -> Value {
        let data = frame.lines().find_map(|line| line.strip_prefix("data: "));
        serde_json::from_str(data.unwrap()).unwrap()
    }

    #[test]
    fn the_stream_follows_the_api_sequence() {
        let frames = encode(&small_turn());
        let types: Vec<String> = frames.iter().map(|frame| data(frame)["type"].as_str().unwrap().to_owned()).collect();
        assert_eq!(
            types,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        for (n, frame) in frames.iter().enumerate() {
            let data = data(frame);
            assert!(frame.starts_with(&format!("event: {}\n", data["type"].as_str().unwrap())));
            assert_eq!(data["sequence_number"], n);
        }
    }

    #[test]
    fn encoded_stream_decodes_to_the_same_turn_and_deltas() {
        let (deltas, turn) = decode(&encode(&small_turn()));
        assert_eq!(turn.unwrap(), small_turn());
        assert_eq!(deltas, small_tool_turn_deltas(&small_turn()));
    }

    #[test]
    fn length_ends_with_response_incomplete() {
        let turn = ModelTurn { text: "{\"".into(), finish_reason: FinishReason::Length, usage: None, ..small_turn() };
        let frames = encode(&turn);
        let last = data(frames.last().unwrap());
        assert_eq!(last["type"], "response.incomplete");
        assert_eq!(last["response"]["incomplete_details"], serde_json::json!({"reason": "max_output_tokens"}));
        assert_eq!(last["response"]["usage"], Value::Null);
        assert_eq!(decode(&frames).1.unwrap(), turn);
    }

    #[test]
    fn an_empty_turn_has_no_items() {
        let frames = encode(&ModelTurn::default());
        assert_eq!(frames.len(), 3);
        assert_eq!(decode(&frames).1.unwrap(), ModelTurn::default());
    }

    #[test]
    fn a_stream_without_its_terminal_event_ended_early() {
        let frames = encode(&small_turn());
        let (_, turn) = decode(&frames[..frames.len() - 1]);
        assert!(matches!(turn, Err(WireError::StreamEndedEarly)), "{turn:?}");
        let (_, turn) = decode(&[frames.concat(), frames[0].clone()]);
        assert!(matches!(turn, Err(WireError::Protocol(_))), "{turn:?}");
    }

    #[test]
    fn deltas_for_unknown_items_are_rejected() {
        let frames = encode(&small_turn());
        // Drop the function call's `output_item.added`: its argument deltas have no call.
        let mut broken = frames.clone();
        broken.remove(9);
        let (_, turn) = decode(&broken);
        assert!(matches!(turn, Err(WireError::UnknownToolCallIndex(1))), "{turn:?}");
        // Drop the message's `output_item.added`: its text deltas have no message.
        let mut broken = frames;
        broken.remove(2);
        let (_, turn) = decode(&broken);
        assert!(matches!(turn, Err(WireError::Protocol(_))), "{turn:?}");
    }

    #[test]
    fn final_arguments_must_match_the_streamed_ones() {
        let mut decoder = ResponsesStreamDecoder::new();
        let frame = |data: Value| SseFrame { event: None, data: data.to_string() };
        let item = serde_json::json!({"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": ""});
        decoder.push_frame(&frame(serde_json::json!({"type": "response.output_item.added", "output_index": 0, "item": item}))).unwrap();
        decoder
            .push_frame(&frame(serde_json::json!({"type": "response.function_call_arguments.delta", "item_id": "fc", "output_index": 0, "delta": "{}"})))
            .unwrap();
        let mismatch = decoder.push_frame(&frame(
            serde_json::json!({"type": "response.function_call_arguments.done", "item_id": "fc", "output_index": 0, "arguments": "{\"a\":1}"}),
        ));
        assert!(matches!(mismatch, Err(WireError::Protocol(_))), "{mismatch:?}");
    }

    #[test]
    fn flat_error_events_are_read_too() {
        let event: ResponsesEvent = serde_json::from_value(serde_json::json!({
            "type": "error", "code": "ERR_SOMETHING", "message": "Something went wrong", "param": null, "sequence_number": 1
        }))
        .unwrap();
        let ResponsesEvent::Error(event) = event else { panic!("not an error event: {event:?}") };
        assert!(matches!(
            event.to_wire_error(),
            WireError::Provider { kind, message } if kind == "ERR_SOMETHING" && message == "Something went wrong"
        ));
    }
}
