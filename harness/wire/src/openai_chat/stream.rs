//! Streamed Chat Completions: the chunk types and the incremental decoder the agent uses. The
//! stream a server sends is written from a neutral reply by [`super::reply`]
//! (`codec::encode_reply_stream`); these types read it, and a capture's every chunk, back.
//!
//! A streamed response is a series of SSE `data:` payloads, each a [`ChatChunk`], ending with
//! the literal `[DONE]`. The chunk types keep every field they do not interpret in `extra` and
//! distinguish absent from `null` where real servers do, so a captured chunk re-serializes to
//! the same JSON.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::turn::StreamedCall;
use crate::{FinishReason, ModelTurn, Reasoning, SseFrame, StreamDecoder, StreamDelta, Usage, WireError};

/// One `data:` payload of a streamed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatChunk {
    /// Completion id, the same on every chunk of a response.
    pub id: String,
    /// `"chat.completion.chunk"`.
    pub object: String,
    /// Unix time the completion was created.
    pub created: u64,
    /// The model that answered.
    pub model: String,
    /// Backend configuration fingerprint: absent (`None`), `null` (`Some(None)`, as Azure sends) or a value.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub system_fingerprint: Option<Option<String>>,
    /// Per-choice deltas; empty on the final usage chunk.
    pub choices: Vec<ChunkChoice>,
    /// Token usage: absent, `null` (Azure sends it on every chunk) or the final counts.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub usage: Option<Option<ChatUsage>>,
    /// Every other field (e.g. Azure's `obfuscation`, `prompt_filter_results`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The delta of one choice within a chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    /// Which choice (of `n`) this is.
    pub index: u32,
    /// What the choice adds.
    pub delta: ChunkDelta,
    /// Token log-probabilities; always serialized (`null` when none), like the real API.
    pub logprobs: Option<Value>,
    /// Set on the choice's last chunk; always serialized (`null` until then).
    pub finish_reason: Option<String>,
    /// Every other field (e.g. Azure's `content_filter_results`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a chunk adds to a choice's message.
///
/// `content` and `refusal` are tri-state because the real API sends `"content":null` in some
/// deltas and omits it in others: `None` = absent, `Some(None)` = `null`, `Some(Some(s))` = text.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChunkDelta {
    /// `"assistant"` on the first chunk of a choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// A piece of the answer text.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub content: Option<Option<String>>,
    /// Pieces of tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
    /// A piece of a refusal message.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub refusal: Option<Option<String>>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A piece of one tool call. Only the first piece of a call carries `id`, `type` and the name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// Which tool call (position in the message) this piece belongs to.
    pub index: u32,
    /// Call id, on the first piece only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `"function"`, on the first piece only.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The function name and/or an arguments fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDelta>,
}

/// The function part of a tool-call piece.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FunctionDelta {
    /// Function name, on the first piece only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A fragment of the arguments' JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}

/// Token usage as Chat Completions reports it (streamed or not).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChatUsage {
    /// Prompt tokens, cached ones included.
    pub prompt_tokens: u64,
    /// Generated tokens, reasoning included.
    pub completion_tokens: u64,
    /// The sum of the two.
    pub total_tokens: u64,
    /// Breakdown of the prompt tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    /// Breakdown of the completion tokens (reasoning, audio, predictions), verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<Value>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PromptTokensDetails {
    /// Prompt tokens served from the prompt cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Every other field (e.g. `audio_tokens`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatUsage {
    /// The wire form of neutral usage. Chat Completions has no cache-write counter, so
    /// `cache_write_tokens` is not represented.
    pub fn from_usage(u: &Usage) -> Self {
        Self {
            prompt_tokens: u.input_tokens,
            completion_tokens: u.output_tokens,
            total_tokens: u.input_tokens.saturating_add(u.output_tokens),
            prompt_tokens_details: Some(PromptTokensDetails { cached_tokens: u.cache_read_tokens, extra: Map::new() }),
            completion_tokens_details: None,
            extra: Map::new(),
        }
    }

    /// The neutral form: `cache_read_tokens` is `prompt_tokens_details.cached_tokens`, and
    /// `cache_write_tokens` is always 0.
    pub fn to_usage(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            cache_read_tokens: self.prompt_tokens_details.as_ref().map_or(0, |details| details.cached_tokens),
            cache_write_tokens: 0,
        }
    }
}

/// Incremental decoder used by the agent: feed it the `data` of each SSE frame, then call
/// [`finish`](Self::finish). Only choice 0 is accumulated; other choices (`n > 1`) are ignored.
#[derive(Debug, Default)]
pub struct ChatStreamAccumulator {
    /// Answer text so far.
    text: String,
    /// Refusal text so far (kept out of `text`).
    refusal: String,
    /// Chat-compatible `reasoning_content` received so far.
    reasoning: String,
    /// Tool calls by their `index`, so they come out in index order.
    tool_calls: BTreeMap<u32, StreamedCall>,
    /// The finish reason of choice 0, once seen.
    finish_reason: Option<FinishReason>,
    /// The usage, once seen.
    usage: Option<Usage>,
    /// Whether `[DONE]` was seen.
    done: bool,
}

impl ChatStreamAccumulator {
    /// Creates an accumulator for one response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies the `data` of one SSE frame and returns what it contributed.
    ///
    /// `[DONE]` yields [`StreamDelta::Done`]; anything else must be a [`ChatChunk`]. Tool-call
    /// pieces are keyed by `index`: the first piece of a call must carry its id and name, later
    /// pieces only add arguments.
    ///
    /// # Errors
    ///
    /// [`WireError::Json`] for a payload that is not a chunk,
    /// [`WireError::UnknownToolCallIndex`] for arguments of a call that never started, and
    /// [`WireError::Protocol`] for data after `[DONE]`, a call started without a name, or a call
    /// whose id changes.
    pub fn push_data(&mut self, data: &str) -> Result<Vec<StreamDelta>, WireError> {
        if self.done {
            return Err(WireError::Protocol(format!("data after [DONE]: {data}")));
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(vec![StreamDelta::Done]);
        }
        let chunk: ChatChunk = serde_json::from_str(data).map_err(|source| WireError::Json { context: "chat completion chunk", source })?;
        let mut deltas = Vec::new();
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            self.apply_choice(choice, &mut deltas)?;
        }
        if let Some(usage) = chunk.usage.flatten() {
            let usage = usage.to_usage();
            self.usage = Some(usage);
            deltas.push(StreamDelta::Usage(usage));
        }
        Ok(deltas)
    }

    /// The refusal text received so far (empty if the model did not refuse).
    pub fn refusal(&self) -> &str {
        &self.refusal
    }

    /// Whether `[DONE]` was received.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The complete turn, with tool calls in index order.
    ///
    /// # Errors
    ///
    /// [`WireError::StreamEndedEarly`] if `[DONE]` never came, [`WireError::MissingFinish`] if
    /// choice 0 never got a finish reason.
    pub fn finish(self) -> Result<ModelTurn, WireError> {
        if !self.done {
            return Err(WireError::StreamEndedEarly);
        }
        let finish_reason = self.finish_reason.ok_or(WireError::MissingFinish)?;
        // Chat-compatible providers' `reasoning_content`; it is not sent back (see the request).
        let reasoning = (!self.reasoning.is_empty()).then_some(Reasoning::ReasoningContent { text: self.reasoning });
        Ok(ModelTurn {
            text: self.text,
            tool_calls: self.tool_calls.into_values().map(StreamedCall::into_call).collect(),
            reasoning: reasoning.into_iter().collect(),
            finish_reason,
            usage: self.usage,
        })
    }

    /// Applies choice 0 of a chunk.
    fn apply_choice(&mut self, choice: ChunkChoice, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        let delta = choice.delta;
        if let Some(Some(text)) = delta.content
            && !text.is_empty()
        {
            self.text.push_str(&text);
            deltas.push(StreamDelta::Text(text));
        }
        if let Some(Some(refusal)) = delta.refusal {
            self.refusal.push_str(&refusal);
        }
        if let Some(reasoning) = delta.extra.get("reasoning_content").and_then(Value::as_str) {
            self.reasoning.push_str(reasoning);
        }
        for piece in delta.tool_calls.into_iter().flatten() {
            self.apply_tool_call(piece, deltas)?;
        }
        if let Some(reason) = choice.finish_reason {
            let reason = FinishReason::from_openai_str(&reason);
            self.finish_reason = Some(reason.clone());
            deltas.push(StreamDelta::Finished(reason));
        }
        Ok(())
    }

    /// Applies one tool-call piece: starts the call on its first piece, then appends arguments.
    /// Names on later pieces are ignored; a different id on a later piece is a protocol error.
    fn apply_tool_call(&mut self, piece: ToolCallDelta, deltas: &mut Vec<StreamDelta>) -> Result<(), WireError> {
        let ToolCallDelta { index, id, function, .. } = piece;
        let FunctionDelta { name, arguments } = function.unwrap_or_default();
        let call = match (self.tool_calls.entry(index), id) {
            (Entry::Vacant(slot), Some(id)) => {
                let name = name.ok_or_else(|| WireError::Protocol(format!("tool call {index} started without a name")))?;
                deltas.push(StreamDelta::ToolCallStarted { index, id: id.clone(), name: name.clone() });
                slot.insert(StreamedCall::started(id, name))
            }
            (Entry::Vacant(_), None) => return Err(WireError::UnknownToolCallIndex(index)),
            (Entry::Occupied(slot), id) => {
                let call = slot.into_mut();
                if let Some(id) = id
                    && id != call.id
                {
                    return Err(WireError::Protocol(format!("tool call {index} changed id from {} to {id}", call.id)));
                }
                call
            }
        };
        if let Some(fragment) = arguments
            && !fragment.is_empty()
        {
            call.arguments.push_str(&fragment);
            deltas.push(StreamDelta::ToolCallArguments { index, fragment });
        }
        Ok(())
    }
}

impl StreamDecoder for ChatStreamAccumulator {
    /// Applies the frame's `data` (see [`push_data`](ChatStreamAccumulator::push_data)); the
    /// event name is ignored, as Chat Completions sends none.
    fn push_frame(&mut self, frame: &SseFrame) -> Result<Vec<StreamDelta>, WireError> {
        self.push_data(&frame.data)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    /// The turn (see [`finish`](ChatStreamAccumulator::finish)); the accumulator is reset.
    fn finish(&mut self) -> Result<ModelTurn, WireError> {
        std::mem::take(self).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::encode_reply_stream;
    use crate::reply::{Reply, ReplyMeta};
    use crate::testing::{reply_meta, reply_of_turn, small_tool_turn, small_tool_turn_deltas, stream_of_turn};
    use crate::{Format, SseDecoder, sse};

    fn small_turn() -> ModelTurn {
        small_tool_turn("call_1", Usage { input_tokens: 12, output_tokens: 9, ..Usage::default() })
    }

    /// Feeds frames through the SSE decoder and the accumulator, returning every delta and the turn.
    fn decode(frames: &[String]) -> (Vec<StreamDelta>, Result<ModelTurn, WireError>) {
        let mut sse = SseDecoder::new();
        let mut accumulator = ChatStreamAccumulator::new();
        let mut deltas = Vec::new();
        for frame in frames {
            sse.push(frame.as_bytes());
            while let Some(frame) = sse.next_frame() {
                deltas.extend(accumulator.push_data(&frame.data).unwrap());
            }
        }
        (deltas, accumulator.finish())
    }

    fn data_lines(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|line| sse::encode_frame(None, line)).collect()
    }

    #[test]
    fn encoded_stream_decodes_to_the_same_turn_and_deltas() {
        let (deltas, turn) = decode(&stream_of_turn(Format::OpenaiChat, &small_turn()));
        assert_eq!(turn.unwrap(), small_turn());
        assert_eq!(deltas, small_tool_turn_deltas(&small_turn()));
    }

    #[test]
    fn tool_only_turn_starts_with_null_content_and_usage_comes_when_asked() {
        let reply = reply_of_turn(&ModelTurn { text: String::new(), ..small_turn() });
        let frames = encode_reply_stream(Format::OpenaiChat, &reply, &ReplyMeta { include_usage: false, ..reply_meta() });
        assert!(frames[0].contains(r#""delta":{"role":"assistant","content":null,"#), "{}", frames[0]);
        assert!(!frames.iter().any(|frame| frame.contains("\"usage\"")), "usage was not requested");
        assert_eq!(decode(&frames).1.unwrap(), ModelTurn { text: String::new(), usage: None, ..small_turn() });
        let unrecorded = Reply { no_usage: true, ..reply };
        assert!(!encode_reply_stream(Format::OpenaiChat, &unrecorded, &reply_meta()).iter().any(|frame| frame.contains("\"usage\"")));
    }

    #[test]
    fn cache_reads_survive_the_wire_but_cache_writes_do_not() {
        let usage = Usage { input_tokens: 100, output_tokens: 5, cache_read_tokens: 64, cache_write_tokens: 30 };
        assert_eq!(ChatUsage::from_usage(&usage).to_usage(), Usage { cache_write_tokens: 0, ..usage });
    }

    #[test]
    fn a_stream_without_done_ended_early() {
        let frames = stream_of_turn(Format::OpenaiChat, &small_turn());
        let (_, turn) = decode(&frames[..frames.len() - 1]);
        assert!(matches!(turn, Err(WireError::StreamEndedEarly)), "{turn:?}");
    }

    #[test]
    fn done_without_finish_reason_is_missing_finish() {
        let (_, turn) = decode(&data_lines(&[
            r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}"#,
            "[DONE]",
        ]));
        assert!(matches!(turn, Err(WireError::MissingFinish)), "{turn:?}");
    }

    #[test]
    fn arguments_for_an_unknown_index_are_rejected() {
        let mut accumulator = ChatStreamAccumulator::new();
        let result = accumulator.push_data(
            r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]},"logprobs":null,"finish_reason":null}]}"#,
        );
        assert!(matches!(result, Err(WireError::UnknownToolCallIndex(3))), "{result:?}");
    }

    #[test]
    fn a_tool_call_changing_its_id_is_a_protocol_error() {
        let mut accumulator = ChatStreamAccumulator::new();
        let start = |id: &str| {
            format!(
                r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":"f","arguments":""}}}}]}},"logprobs":null,"finish_reason":null}}]}}"#
            )
        };
        accumulator.push_data(&start("call_a")).unwrap();
        assert!(accumulator.push_data(&start("call_a")).unwrap().is_empty(), "a repeated id is harmless");
        assert!(matches!(accumulator.push_data(&start("call_b")), Err(WireError::Protocol(_))));
    }

    #[test]
    fn malformed_json_and_data_after_done_are_errors() {
        let mut accumulator = ChatStreamAccumulator::new();
        let error = accumulator.push_data("{not json").unwrap_err();
        assert!(matches!(error, WireError::Json { context: "chat completion chunk", .. }), "{error:?}");
        assert_eq!(accumulator.push_data("[DONE]").unwrap(), [StreamDelta::Done]);
        assert!(accumulator.is_done());
        assert!(matches!(accumulator.push_data("[DONE]"), Err(WireError::Protocol(_))));
    }
}
