//! The neutral response model: everything a real response carries between
//! its first and last event, as ordered parts. Every format's codec encodes
//! these (whole or streamed, cut into the recorded delta sizes) and decodes
//! them back off the wire; recordings (v2) store them as they are. Each part
//! keeps the ids it was recorded with; absent ids are generated in the shape
//! of the API that renders it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ModelTurn, Usage};

/// Fields a provider sent that reloop does not model, by name, in the
/// order sent: kept in a recording where they were (on the part, or in
/// [`ExtraFields`] for the response) so a replay sends them back there.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// What a response carried around its parts that reloop does not model:
/// sent back only to a client of the API it was recorded from (a Responses
/// envelope means nothing to a Chat client).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtraFields {
    /// The API they came from: `openai_chat`, `openai_responses`, `anthropic` or `gemini`.
    pub api: String,
    /// Fields of the response object: Chat's completion (every chunk of a
    /// stream), the Responses `response` (in each `response.*` event),
    /// Anthropic's `message` (in `message_start` and the `message_delta`'s
    /// delta), every Gemini chunk.
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub response: Extra,
    /// A stream's fields that change from event to event, by event position
    /// (a Gemini chunk, counting from 0): its `usageMetadata` as it grew.
    /// Each is laid over the event rendered at that position; empty where
    /// an event had none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Extra>,
    /// Gemini: the candidate's fields besides its content and finish reason
    /// (`index`, `safetyRatings`, …); a candidate sent back carries exactly
    /// these (none: no `index`, as some models send it).
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub candidate: Extra,
    /// Chat: the choice's fields besides its index, message and finish
    /// reason (OpenRouter's `native_finish_reason`), laid over the choice
    /// of a whole completion sent back (a stream's are its chunks').
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub choice: Extra,
    /// Chat: the message's fields besides those reloop models (OpenRouter's
    /// `reasoning` and `reasoning_details`, Groq's `executed_tools`), laid
    /// over the message of a whole completion sent back (a stream's ride in
    /// its chunks' deltas, [`ChunkLayout`](crate::openai_chat::ChunkLayout)).
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub message: Extra,
    /// A Chat stream whose chunks an SDK would not accumulate as it does
    /// OpenAI's (a gateway repeating `role` or a call's id in every chunk):
    /// each recorded chunk's layout, in order, which the replay follows
    /// ([`ChunkLayout`](crate::openai_chat::ChunkLayout)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<crate::openai_chat::ChunkLayout>,
}

impl ExtraFields {
    /// Whether there is nothing to send back.
    pub fn is_empty(&self) -> bool {
        self.response.is_empty()
            && self.events.is_empty()
            && self.candidate.is_empty()
            && self.choice.is_empty()
            && self.message.is_empty()
            && self.chunks.is_empty()
    }
}

/// The fields of `object` (a JSON object) not named in `modelled`.
pub fn unmodelled(object: &serde_json::Value, modelled: &[&str]) -> Extra {
    object.as_object().into_iter().flatten().filter(|(key, _)| !modelled.contains(&key.as_str())).map(|(key, value)| (key.clone(), value.clone())).collect()
}

/// `extra` laid over `object`: each field set as recorded.
pub fn lay_over(object: &mut serde_json::Value, extra: &Extra) {
    if let Some(object) = object.as_object_mut() {
        object.extend(extra.iter().map(|(key, value)| (key.clone(), value.clone())));
    }
}

/// Whether `value` is its type's default: written files leave defaults out.
fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// One piece of a model response, in the order the model produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Part {
    /// Assistant text (one Anthropic text block, one Responses
    /// `output_text`, Chat `content`).
    Text {
        /// The text.
        text: String,
        /// The item id (Responses `msg_…`), if recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Citations and annotations, as the provider sent them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        annotations: Vec<serde_json::Value>,
        /// Recorded delta sizes in characters; empty: word-sized deltas.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<usize>,
        /// Fields of its block or item reloop does not model (Responses'
        /// `phase`), sent back to a client of the API they came from.
        #[serde(default, skip_serializing_if = "Extra::is_empty")]
        extra: Extra,
    },
    /// OpenAI reasoning: a Responses `reasoning` item, or Chat-compatible
    /// `reasoning_content`.
    Reasoning {
        /// The item id (`rs_…`), if recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The reasoning summary paragraphs.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        /// Raw reasoning text (Chat-compatible `reasoning_content`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// The opaque `encrypted_content` a stateless client sends back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
        /// Recorded delta sizes in characters; empty: word-sized deltas.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<usize>,
    },
    /// An Anthropic `thinking` block.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature the client must send back with the block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Recorded delta sizes in characters; empty: word-sized deltas.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<usize>,
    },
    /// An Anthropic `redacted_thinking` block: opaque, sent back as is.
    RedactedThinking {
        /// The encrypted thinking.
        data: String,
    },
    /// A call of a client-side tool.
    ToolCall(ToolCallPart),
    /// A provider-side tool call (Anthropic `server_tool_use`, e.g. web search).
    ServerToolUse {
        /// The call id (`srvtoolu_…`), if recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The server tool's name.
        name: String,
        /// Its input: a mapping, or the JSON text exactly as streamed.
        #[serde(default, skip_serializing_if = "is_default")]
        input: Arguments,
        /// Recorded delta sizes of the input JSON in characters; empty: one delta.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        chunks: Vec<usize>,
    },
    /// The provider-side result of a server tool (e.g. `web_search_tool_result`).
    ServerToolResult {
        /// The id of the [`Part::ServerToolUse`] it answers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_use_id: Option<String>,
        /// The block type as the provider names it.
        kind: String,
        /// The result content, as sent.
        #[serde(default)]
        content: serde_json::Value,
    },
    /// The model declined (Responses `refusal`, Chat `refusal`).
    Refusal {
        /// The refusal text.
        refusal: String,
    },
}

impl Part {
    /// The part's unmodelled fields, for the kinds that keep them.
    pub fn extra(&self) -> Option<&Extra> {
        match self {
            Self::Text { extra, .. } | Self::ToolCall(ToolCallPart { extra, .. }) => Some(extra).filter(|extra| !extra.is_empty()),
            _ => None,
        }
    }

    /// A text part with nothing but its text.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into(), id: None, annotations: Vec::new(), chunks: Vec::new(), extra: Extra::new() }
    }
}

/// A call of a client-side tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallPart {
    /// The call id the tool result refers to (`call_…`, `toolu_…`);
    /// generated deterministically when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The Responses item id (`fc_…`), distinct from the call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments: a mapping (serialized compactly in key order) or a
    /// string sent byte for byte (for malformed or exotic JSON).
    #[serde(default, skip_serializing_if = "is_default")]
    pub arguments: Arguments,
    /// Recorded delta sizes of the arguments in characters; empty: one delta.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<usize>,
    /// Fields of its block, item or call reloop does not model (Anthropic's
    /// `caller`), sent back to a client of the API they came from.
    #[serde(default, skip_serializing_if = "Extra::is_empty")]
    pub extra: Extra,
}

impl ToolCallPart {
    /// A call with its id, name and arguments, streamed in default fragments.
    pub fn new(id: Option<String>, name: String, arguments: Arguments) -> Self {
        Self { id, item_id: None, name, arguments, chunks: Vec::new(), extra: Extra::new() }
    }
}

/// Tool-call arguments as written in a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Arguments {
    /// Sent exactly as written.
    Raw(String),
    /// Serialized to compact JSON.
    Json(serde_json::Value),
}

impl Default for Arguments {
    fn default() -> Self {
        Self::Json(serde_json::Value::Object(serde_json::Map::new()))
    }
}

impl Arguments {
    /// The arguments as the wire carries them.
    pub fn to_wire(&self) -> String {
        match self {
            Self::Raw(text) => text.clone(),
            Self::Json(value) => crate::compact_json::compact_json(value),
        }
    }
}

/// The parts of a turn with no recorded exchange behind it: its text, then
/// its calls (arguments sent as they are).
pub fn of_turn(turn: &ModelTurn) -> Vec<Part> {
    let text = (!turn.text.is_empty()).then(|| Part::text(turn.text.clone()));
    let calls = turn
        .tool_calls
        .iter()
        .map(|call| Part::ToolCall(ToolCallPart::new(Some(call.id.to_string()), call.name.to_string(), Arguments::Raw(call.arguments.to_string()))));
    text.into_iter().chain(calls).collect()
}

/// Usage as the provider reported it when the exchange was recorded.
/// The counts are neutral (input includes cached tokens, as OpenAI counts);
/// `wire` keeps the provider's own object, every field included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedUsage {
    /// All prompt tokens, cached ones (read or written) included.
    pub input_tokens: u64,
    /// Generated tokens, reasoning included.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    #[serde(default, skip_serializing_if = "is_default")]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    #[serde(default, skip_serializing_if = "is_default")]
    pub cache_write_tokens: u64,
    /// Output tokens spent reasoning, where the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// The provider's usage object exactly as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<serde_json::Value>,
}

impl RecordedUsage {
    /// The neutral counts.
    pub fn tokens(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cache_write_tokens: self.cache_write_tokens,
        }
    }

    /// Of the cache writes, those with a 1-hour lifetime (priced at twice
    /// the input price, 5-minute ones at 1.25 times): Anthropic's
    /// `cache_creation.ephemeral_1h_input_tokens` in the provider's object.
    pub fn cache_write_1h_tokens(&self) -> u64 {
        let written = self.wire.as_ref().and_then(|wire| wire.pointer("/cache_creation/ephemeral_1h_input_tokens")).and_then(serde_json::Value::as_u64);
        written.unwrap_or(0).min(self.cache_write_tokens)
    }
}

impl From<Usage> for RecordedUsage {
    fn from(usage: Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            ..Self::default()
        }
    }
}

/// The ids a response carried as a whole; absent ones are generated in the
/// rendering API's shape (`chatcmpl-…`, `resp_…`, `msg_…`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseIds {
    /// The response id (`chatcmpl-…`, `resp_…`, `msg_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The `created`/`created_at` time, seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<u64>,
    /// Chat's `system_fingerprint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
}
