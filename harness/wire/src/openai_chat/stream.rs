//! Streamed Chat Completions: the chunk types, the encoder the mock server uses, and the
//! incremental decoder the agent uses, kept together so both sides share one definition of the
//! stream.
//!
//! A streamed response is a series of SSE `data:` payloads, each a [`ChatChunk`], ending with
//! the literal `[DONE]`. The chunk types keep every field they do not interpret in `extra` and
//! distinguish absent from `null` where real servers do, so a captured chunk re-serializes to
//! the same JSON.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::split::{split_argument_fragments, split_text_pieces};
use crate::{FinishReason, ModelTurn, Reasoning, SseFrame, StreamDecoder, StreamDelta, ToolCall, Usage, WireError, sse};

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

/// What the encoder needs beyond the turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChunkMeta {
    /// Completion id (`chatcmpl-...`).
    pub id: String,
    /// Model name to report.
    pub model: String,
    /// Unix creation time to report.
    pub created: u64,
    /// Whether the request asked for `stream_options.include_usage`.
    pub include_usage: bool,
}

impl ChunkMeta {
    /// A chunk of this response with the given choices and usage.
    fn chunk(&self, choices: Vec<ChunkChoice>, usage: Option<ChatUsage>) -> ChatChunk {
        ChatChunk {
            id: self.id.clone(),
            object: "chat.completion.chunk".to_owned(),
            created: self.created,
            model: self.model.clone(),
            system_fingerprint: None,
            choices,
            usage: usage.map(Some),
            extra: Map::new(),
        }
    }

    /// A chunk carrying one delta (and possibly the finish reason) for choice 0.
    fn delta_chunk(&self, delta: ChunkDelta, finish_reason: Option<&str>) -> ChatChunk {
        let choice = ChunkChoice { index: 0, delta, logprobs: None, finish_reason: finish_reason.map(str::to_owned), extra: Map::new() };
        self.chunk(vec![choice], None)
    }
}

/// Whether the API sends `"content": null` for this turn: it does when the turn only calls tools.
pub(super) fn content_is_null(turn: &ModelTurn) -> bool {
    turn.text.is_empty() && !turn.tool_calls.is_empty()
}

/// A delta carrying one tool-call piece.
fn tool_call_delta(index: u32, id: Option<&str>, name: Option<&str>, arguments: &str) -> ChunkDelta {
    ChunkDelta {
        tool_calls: Some(vec![ToolCallDelta {
            index,
            id: id.map(str::to_owned),
            kind: id.map(|_| "function".to_owned()),
            function: Some(FunctionDelta { name: name.map(str::to_owned), arguments: Some(arguments.to_owned()) }),
        }]),
        ..ChunkDelta::default()
    }
}

/// Renders a turn as the SSE frames of a real streamed response, in the order the API uses:
///
/// 1. a role chunk: delta `{"role":"assistant","content":""}`, or `"content":null` when the
///    turn has tool calls and no text;
/// 2. one content chunk per piece of [`split_text_pieces`];
/// 3. per tool call, in order (`index` = position): a chunk with index, id, `"type":"function"`,
///    name and `"arguments":""`, then one chunk per [`split_argument_fragments`] piece carrying
///    only index and arguments;
/// 4. a chunk with an empty delta and the finish reason;
/// 5. if `meta.include_usage` and the turn has usage, a `"choices":[]` chunk with the usage;
/// 6. `[DONE]`.
///
/// Each element is one complete frame (`"data: {...}\n\n"`), so a server can write them one by
/// one and the client sees true streaming.
pub fn encode_stream(turn: &ModelTurn, meta: &ChunkMeta) -> Vec<String> {
    let role = ChunkDelta { role: Some("assistant".to_owned()), content: Some((!content_is_null(turn)).then(String::new)), ..ChunkDelta::default() };
    let text = split_text_pieces(&turn.text).into_iter().map(|piece| ChunkDelta { content: Some(Some(piece.to_owned())), ..ChunkDelta::default() });
    let tool_calls = (0u32..).zip(&turn.tool_calls).flat_map(|(index, call)| {
        let start = tool_call_delta(index, Some(&call.id), Some(&call.name), "");
        let fragments = split_argument_fragments(&call.arguments).into_iter().map(move |fragment| tool_call_delta(index, None, None, fragment));
        std::iter::once(start).chain(fragments)
    });
    let mut chunks: Vec<ChatChunk> = std::iter::once(role).chain(text).chain(tool_calls).map(|delta| meta.delta_chunk(delta, None)).collect();
    chunks.push(meta.delta_chunk(ChunkDelta::default(), Some(turn.finish_reason.as_openai_str())));
    if meta.include_usage
        && let Some(usage) = &turn.usage
    {
        chunks.push(meta.chunk(Vec::new(), Some(ChatUsage::from_usage(usage))));
    }
    chunks
        .iter()
        .map(|chunk| serde_json::to_string(chunk).expect("chunks have string keys only"))
        .chain(std::iter::once("[DONE]".to_owned()))
        .map(|data| sse::encode_frame(None, &data))
        .collect()
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
    tool_calls: BTreeMap<u32, ToolCall>,
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
            tool_calls: self.tool_calls.into_values().collect(),
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
                slot.insert(ToolCall { id, name, arguments: String::new() })
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
    use crate::SseDecoder;
    use crate::testing::{small_tool_turn, small_tool_turn_deltas};

    fn meta(include_usage: bool) -> ChunkMeta {
        ChunkMeta { id: "chatcmpl-x".into(), model: "gpt-4o".into(), created: 1_700_000_000, include_usage }
    }

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
    fn encode_stream_snapshot() {
        let expected = concat!(
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
            "\n\n",
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}"#,
            "\n\n",
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" there"},"logprobs":null,"finish_reason":null}]}"#,
            "\n\n",
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}]}"#,
            "\n\n",
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Paris\","}}]},"logprobs":null,"finish_reason":null}]}"#,
            "\n\n",
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"units\":\"c\"}"}}]},"logprobs":null,"finish_reason":null}]}"#,
            "\n\n",
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}"#,
            "\n\n",
            r#"data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0}}}"#,
            "\n\n",
            "data: [DONE]\n\n",
        );
        let frames = encode_stream(&small_turn(), &meta(true));
        assert_eq!(frames.len(), 9);
        assert!(frames.iter().all(|frame| frame.starts_with("data: ") && frame.ends_with("}\n\n") || frame == "data: [DONE]\n\n"));
        assert_eq!(frames.concat(), expected);
    }

    #[test]
    fn encoded_stream_decodes_to_the_same_turn_and_deltas() {
        let (deltas, turn) = decode(&encode_stream(&small_turn(), &meta(true)));
        assert_eq!(turn.unwrap(), small_turn());
        assert_eq!(deltas, small_tool_turn_deltas(&small_turn()));
    }

    #[test]
    fn tool_only_turn_starts_with_null_content_and_usage_needs_both_flag_and_counts() {
        let turn = ModelTurn { text: String::new(), ..small_turn() };
        let frames = encode_stream(&turn, &meta(false));
        assert!(frames[0].contains(r#""delta":{"role":"assistant","content":null}"#), "{}", frames[0]);
        assert!(!frames.iter().any(|frame| frame.contains("\"usage\"")), "usage was not requested");
        assert_eq!(decode(&frames).1.unwrap(), ModelTurn { usage: None, ..turn.clone() });

        let no_usage = ModelTurn { usage: None, ..turn };
        assert!(!encode_stream(&no_usage, &meta(true)).iter().any(|frame| frame.contains("\"usage\"")));
    }

    #[test]
    fn cache_reads_survive_the_wire_but_cache_writes_do_not() {
        let usage = Usage { input_tokens: 100, output_tokens: 5, cache_read_tokens: 64, cache_write_tokens: 30 };
        assert_eq!(ChatUsage::from_usage(&usage).to_usage(), Usage { cache_write_tokens: 0, ..usage });
    }

    #[test]
    fn a_stream_without_done_ended_early() {
        let frames = encode_stream(&small_turn(), &meta(true));
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
