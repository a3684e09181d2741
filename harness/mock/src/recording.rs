//! Recording format v1 (`docs/recording-format.md`): the model's side of
//! each exchange, provider-neutral, rendered into whichever wire format the
//! client speaks.

use reloop_wire::{FinishReason, ModelTurn, ToolCall, Usage};
use schemars::JsonSchema;
use serde::Deserialize;

/// The format tag every v1 recording carries.
pub const FORMAT_V1: &str = "reloop.recording/v1";

/// A whole recording.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// Must be [`FORMAT_V1`].
    pub format: FormatTag,
    /// The model name to report in responses; defaults to the request's.
    #[serde(default)]
    pub model: Option<String>,
    /// The exchanges, answered in order.
    pub exchanges: Vec<Exchange>,
}

/// The format tag, checked while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatTag;

impl<'de> Deserialize<'de> for FormatTag {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tag = String::deserialize(deserializer)?;
        if tag == FORMAT_V1 {
            Ok(Self)
        } else {
            Err(serde::de::Error::custom(format!("unsupported recording format `{tag}`, expected `{FORMAT_V1}`")))
        }
    }
}

/// The schema of the tag: exactly [`FORMAT_V1`], as the parser checks.
impl JsonSchema for FormatTag {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FormatTag".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "description": "The recording format and version.", "const": FORMAT_V1 })
    }
}

/// One recorded model response.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    /// Which requests it answers: `main` (default) or `compaction`.
    #[serde(default)]
    pub purpose: Purpose,
    /// For a compaction exchange: it also answers every later compaction
    /// request once the others are used up (strategies differ in how often
    /// they compact, while the main trajectory stays the same).
    #[serde(default)]
    pub reusable: bool,
    /// What the request must carry for this answer to apply.
    #[serde(default)]
    pub expect: RequestExpectations,
    /// Text the model produced.
    #[serde(default)]
    pub text: String,
    /// Tool calls the model made.
    #[serde(default)]
    pub tool_calls: Vec<RecordedToolCall>,
    /// Why the model stopped; by default `tool_calls` when there are calls,
    /// else `stop`.
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
    /// Usage as originally recorded, kept beside the server's own count.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Simulated latency.
    #[serde(default)]
    pub timing: Timing,
}

/// The kind of request an exchange answers. Each purpose replays in its
/// own order: a compaction request (one declaring no tools, once the
/// recording has compaction exchanges) takes the next compaction exchange
/// whenever it comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The agent loop's own decisions.
    #[default]
    Main,
    /// Summaries for context compaction.
    Compaction,
}

impl Purpose {
    /// The purpose's slot in per-purpose tables.
    pub fn index(self) -> usize {
        match self {
            Self::Main => 0,
            Self::Compaction => 1,
        }
    }
}

/// Checks on the request an exchange answers; a failed one is a divergence
/// naming the check. Every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestExpectations {
    /// The model the request must ask for.
    #[serde(default)]
    pub model: Option<String>,
    /// Tools the request must declare.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Texts that must each appear in some message (system included).
    #[serde(default)]
    pub message_contains: Vec<String>,
    /// Texts that must each appear in some tool result.
    #[serde(default)]
    pub tool_result_contains: Vec<String>,
}

/// A recorded tool call.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedToolCall {
    /// The call id; generated deterministically when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments: a mapping (serialized compactly in key order) or a
    /// string sent byte for byte (for malformed or exotic JSON).
    #[serde(default)]
    pub arguments: Arguments,
}

/// Tool-call arguments as written in a recording.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
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
    fn to_wire(&self) -> String {
        match self {
            Self::Raw(text) => text.clone(),
            Self::Json(value) => value.to_string(),
        }
    }
}

/// Simulated latency of one exchange.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Timing {
    /// Wait before the first byte, ms.
    pub first_byte_ms: u64,
    /// Wait between chunks, ms.
    pub chunk_ms: u64,
}

impl Recording {
    /// Indices of the exchanges of each purpose, in order.
    pub fn by_purpose(&self) -> [Vec<usize>; 2] {
        let mut lists = [Vec::new(), Vec::new()];
        for (index, exchange) in self.exchanges.iter().enumerate() {
            lists[exchange.purpose.index()].push(index);
        }
        lists
    }
}

impl Exchange {
    /// The turn to render; `index` makes generated call ids unique.
    pub fn to_turn(&self, index: usize) -> ModelTurn {
        let tool_calls: Vec<ToolCall> = self
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call)| ToolCall {
                id: call.id.clone().unwrap_or_else(|| format!("call_{index:03}_{i}")),
                name: call.name.clone(),
                arguments: call.arguments.to_wire(),
            })
            .collect();
        let finish_reason = self.finish_reason.clone().unwrap_or(if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        ModelTurn { text: self.text.clone(), tool_calls, finish_reason, usage: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(json: serde_json::Value) -> Exchange {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn finish_reason_follows_the_content() {
        let text = exchange(serde_json::json!({ "text": "hi" }));
        assert_eq!(text.to_turn(0).finish_reason, FinishReason::Stop);
        let call = exchange(serde_json::json!({ "tool_calls": [{ "name": "read", "arguments": { "path": "a" } }] }));
        let turn = call.to_turn(4);
        assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
        assert_eq!(turn.tool_calls[0].id, "call_004_0");
        assert_eq!(turn.tool_calls[0].arguments, r#"{"path":"a"}"#);
    }

    #[test]
    fn raw_arguments_are_sent_verbatim() {
        let call = exchange(serde_json::json!({ "tool_calls": [{ "name": "x", "arguments": "{\"a\": 1" }] }));
        assert_eq!(call.to_turn(0).tool_calls[0].arguments, "{\"a\": 1");
    }
}
