//! One reply ready for any format's encoder: the ordered parts, the finish
//! reason, the usage to report, the response ids, and the ids generated in
//! each API's real shape where none were recorded. Each format's `reply`
//! module encodes it whole or streamed, cut into the recorded piece sizes;
//! its `read_reply` module reads a real response back into a
//! [`DecodedReply`] (a stream first accumulated into the whole-response
//! shape, with the size of each delta kept as the part's `chunks`).

use serde_json::Value;

use crate::context_management::AppliedContext;
use crate::parts::{ExtraFields, Part, RecordedUsage, ResponseIds, ToolCallPart};
use crate::{FinishReason, Format, ModelTurn, ToolSpec, Usage};

/// A fixed creation time: replies must be the same bytes run after run.
pub const CREATED: u64 = 1_767_225_600;

/// One neutral reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The parts in the order the model produced them; every tool call has
    /// its id and its (possibly fault-truncated) arguments.
    pub parts: Vec<Part>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// The counts to report (the server's, or the recorded ones).
    pub usage: Usage,
    /// The provider's own usage object as recorded, sent as is by the API
    /// it was recorded from (every field kept); other APIs convert `usage`.
    pub wire_usage: Option<Value>,
    /// The recorded usage is asked for and the recorded response carried
    /// none: no usage is sent where the API allows it (Chat, Responses,
    /// Gemini); Anthropic's events always carry it and get `usage`.
    pub no_usage: bool,
    /// The recorded response ids; absent ones are generated.
    pub ids: ResponseIds,
    /// Per tool call, in order: its id was generated, none recorded.
    /// Gemini, whose call ids are optional, leaves those out; the other
    /// APIs send them. Empty: every id was recorded.
    pub generated_call_ids: Vec<bool>,
    /// What the recorded response carried that reloop does not model; its
    /// fields, and those of the parts, go back to a client of its API only.
    pub extra: Option<ExtraFields>,
    /// What the provider's context management did, which the wires that have it report:
    /// Anthropic its applied edits and compaction block, Responses its compaction item.
    /// Written over what `extra` lays on, as the provider's own report of this request.
    pub context: AppliedContext,
}

/// What identifies one reply besides its content.
#[derive(Debug, Clone)]
pub struct ReplyMeta {
    /// The request's index in its session, for generated ids.
    pub request_index: usize,
    /// The model named.
    pub model: String,
    /// Whether the client asked for usage in a Chat stream.
    pub include_usage: bool,
    /// The request's tools, which the Responses API echoes.
    pub tools: Vec<ToolSpec>,
}

impl Reply {
    /// The reply of `turn` alone, with no recorded exchange behind it: its text, then its
    /// calls ([`crate::parts::of_turn`]), its finish reason and its usage (zeros when it has
    /// none), nothing the provider's context management did.
    pub fn of_turn(turn: &ModelTurn) -> Self {
        Self {
            parts: crate::parts::of_turn(turn),
            finish_reason: turn.finish_reason.clone(),
            usage: turn.usage.unwrap_or_default(),
            wire_usage: None,
            no_usage: false,
            ids: Default::default(),
            generated_call_ids: Vec::new(),
            extra: None,
            context: Default::default(),
        }
    }

    /// The joined text of every text part (what Chat's `content` carries).
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(|part| if let Part::Text { text, .. } = part { Some(text.as_str()) } else { None }).collect()
    }

    /// The recorded usage object when it is in `format`'s shape (Chat names
    /// `prompt_tokens`, Gemini `promptTokenCount`; Responses, unlike
    /// Anthropic, adds `total_tokens`).
    pub fn wire_usage_in(&self, format: Format) -> Option<&Value> {
        let wire = self.wire_usage.as_ref()?;
        let shape = if wire.get("promptTokenCount").is_some() {
            Format::Gemini
        } else if wire.get("prompt_tokens").is_some() {
            Format::OpenaiChat
        } else if wire.get("total_tokens").is_some() || wire.get("input_tokens_details").is_some() {
            Format::OpenaiResponses
        } else {
            Format::Anthropic
        };
        (shape == format).then_some(wire)
    }

    /// The unmodelled fields to send a client of `format`: those recorded
    /// from that API, if any.
    pub fn extra_for(&self, format: Format) -> Option<&ExtraFields> {
        self.extra.as_ref().filter(|extra| extra.api == format.recorded_name())
    }

    /// Whether the `index`-th tool call's id was generated, not recorded.
    pub fn call_id_generated(&self, index: usize) -> bool {
        self.generated_call_ids.get(index).copied().unwrap_or(false)
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallPart> {
        self.parts.iter().filter_map(|part| if let Part::ToolCall(call) = part { Some(call) } else { None })
    }
}

/// A response read off the wire: what a recording keeps of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecodedReply {
    /// The parts, with the streamed delta sizes as their `chunks`.
    pub parts: Vec<Part>,
    /// Why the model stopped, if the response said.
    pub finish_reason: Option<FinishReason>,
    /// The model the provider named.
    pub model: Option<String>,
    /// The response's own ids.
    pub ids: ResponseIds,
    /// The usage the provider reported, its wire object kept.
    pub usage: Option<RecordedUsage>,
    /// What it carried that reloop does not model.
    pub extra: Option<ExtraFields>,
    /// What the provider's context management did, as the response reported it. Anthropic's
    /// `context_management` stays in `extra` too, which a recording keeps and replays.
    pub context: AppliedContext,
}

/// Why a response cannot be read into parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromWireError {
    /// A body or event that is not the JSON the API sends.
    NotJson(String),
    /// JSON of the wrong shape: what was expected where.
    Shape(String),
    /// A kind of output this reader does not know.
    Unsupported(String),
}

impl std::fmt::Display for FromWireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotJson(what) => write!(f, "not JSON: {what}"),
            Self::Shape(what) => write!(f, "unexpected shape: {what}"),
            Self::Unsupported(what) => write!(f, "unsupported output: {what}"),
        }
    }
}

impl std::error::Error for FromWireError {}

/// What the readers of every format share.
pub(crate) mod read {
    use std::collections::BTreeMap;

    use serde_json::Value;

    pub use super::FromWireError;
    use crate::Format;
    use crate::parts::{Extra, ExtraFields, Part, RecordedUsage};

    /// Delta sizes per output slot, as a stream sent them.
    pub type Chunks = BTreeMap<String, Vec<usize>>;

    /// A string field of `value`, or empty.
    pub fn str_of<'v>(value: &'v Value, key: &str) -> &'v str {
        value.get(key).and_then(Value::as_str).unwrap_or_default()
    }

    /// Where an OpenAI API keeps its usage figures: Chat names them
    /// `prompt`/`completion`, Responses `input`/`output`.
    pub struct UsageFields {
        pub input: &'static str,
        pub output: &'static str,
        pub cached: &'static str,
        pub reasoning: &'static str,
    }

    /// An OpenAI usage object as recorded (OpenAI reports no cache writes).
    pub fn openai_usage(wire: &Value, fields: &UsageFields) -> RecordedUsage {
        RecordedUsage {
            input_tokens: count(wire, fields.input),
            output_tokens: count(wire, fields.output),
            cache_read_tokens: count(wire, fields.cached),
            cache_write_tokens: 0,
            reasoning_tokens: wire.pointer(fields.reasoning).and_then(Value::as_u64),
            wire: Some(wire.clone()),
        }
    }

    /// A count field of `value`, or 0.
    pub fn count(value: &Value, pointer: &str) -> u64 {
        value.pointer(pointer).and_then(Value::as_u64).unwrap_or_default()
    }

    /// The unmodelled fields of a response read from `api`, named as its:
    /// `fields`, and whether `parts` keep any (their API is named here too).
    /// None when there are none at all.
    pub fn extra_fields(api: Format, parts: &[Part], fields: ExtraFields) -> Option<ExtraFields> {
        let events = if fields.events.iter().all(Extra::is_empty) { Vec::new() } else { fields.events };
        let extra = ExtraFields { api: api.recorded_name().to_owned(), events, ..fields };
        (!extra.is_empty() || parts.iter().any(|part| part.extra().is_some())).then_some(extra)
    }

    /// Fields of the response object only.
    pub fn of_response(response: Extra) -> ExtraFields {
        ExtraFields { response, ..ExtraFields::default() }
    }

    /// An optional string field of `value`.
    pub fn opt_str(value: &Value, key: &str) -> Option<String> {
        value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
    }
}

/// The alphabet of Anthropic's, Chat's and Gemini's ids.
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// The alphabet of Responses' ids.
const HEX: &[u8] = b"0123456789abcdef";

/// An id in a provider's real shape (`prefix` then `len` characters of
/// `alphabet`), the same for the same request index and slot run after run.
fn generated(prefix: &str, alphabet: &[u8], len: usize, request_index: usize, slot: &str) -> String {
    use std::hash::BuildHasher;
    let mut state = foldhash::quality::FixedState::with_seed(0).hash_one((request_index, slot)) | 1;
    let mut id = String::with_capacity(prefix.len() + len);
    id.push_str(prefix);
    for _ in 0..len {
        // xorshift64: cheap, deterministic, spreads the hash over every character.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        id.push(char::from(alphabet[(state % alphabet.len() as u64) as usize]));
    }
    id
}

/// Generated ids, one shape per API and kind.
#[derive(Debug, Clone, Copy)]
pub enum IdShape {
    /// Chat: `chatcmpl-` + 29 base62.
    ChatCompletion,
    /// Responses: `resp_` + 50 hex.
    Response,
    /// Responses output items: `msg_`, `rs_`, `fc_`, `ws_` + 50 hex.
    Item(&'static str),
    /// Anthropic: `msg_01` + 22 base62.
    Message,
    /// Anthropic server tool calls: `srvtoolu_01` + 22 base62.
    ServerToolUse,
    /// Gemini: a `responseId` of 23 base62.
    GeminiResponse,
}

impl IdShape {
    /// The id of this kind for request `request_index`, at `slot` (the part's position).
    pub fn id(self, request_index: usize, slot: usize) -> String {
        let slot_name = format!("{self:?}{slot}");
        match self {
            Self::ChatCompletion => generated("chatcmpl-", BASE62, 29, request_index, &slot_name),
            Self::Response => generated("resp_", HEX, 50, request_index, &slot_name),
            Self::Item(prefix) => generated(prefix, HEX, 50, request_index, &slot_name),
            Self::Message => generated("msg_01", BASE62, 22, request_index, &slot_name),
            Self::ServerToolUse => generated("srvtoolu_01", BASE62, 22, request_index, &slot_name),
            Self::GeminiResponse => generated("", BASE62, 23, request_index, &slot_name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_have_the_real_shapes_and_repeat() {
        let id = IdShape::Message.id(3, 0);
        assert!(id.starts_with("msg_01") && id.len() == 28, "{id}");
        assert_eq!(id, IdShape::Message.id(3, 0));
        assert_ne!(id, IdShape::Message.id(4, 0));
        let resp = IdShape::Response.id(0, 0);
        assert!(resp.len() == 55 && resp[5..].bytes().all(|b| b.is_ascii_hexdigit()), "{resp}");
        assert_eq!(IdShape::ChatCompletion.id(1, 0).len(), 38);
    }
}

#[cfg(test)]
#[path = "reply/extra_tests.rs"]
mod extra_tests;

#[cfg(test)]
#[path = "reply/context_tests.rs"]
mod context_tests;
