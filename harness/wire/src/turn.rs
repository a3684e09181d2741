//! The provider-neutral result of one model call.
//!
//! Each wire format decodes into a [`ModelTurn`] and encodes from one, so the agent loop, the
//! recordings and the mock server never depend on a particular provider's shapes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Text;

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned call id, echoed back with the tool result.
    pub id: Text,
    /// Name of the tool to call.
    pub name: Text,
    /// The arguments as raw JSON text, exactly as streamed (it may not even be valid JSON).
    pub arguments: Text,
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end of the answer (or a stop sequence).
    #[default]
    Stop,
    /// The model wants tool results before continuing.
    ToolCalls,
    /// The output hit the token limit.
    Length,
    /// Output was withheld by a content filter.
    ContentFilter,
    /// A reason this crate does not know, kept verbatim.
    #[serde(untagged)]
    Other(String),
}

impl FinishReason {
    /// The Chat Completions `finish_reason` string.
    pub fn as_openai_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::ToolCalls => "tool_calls",
            Self::Length => "length",
            Self::ContentFilter => "content_filter",
            Self::Other(other) => other,
        }
    }

    /// Parses a Chat Completions `finish_reason`; unknown values become [`FinishReason::Other`].
    pub fn from_openai_str(s: &str) -> Self {
        match s {
            "stop" => Self::Stop,
            "tool_calls" => Self::ToolCalls,
            "length" => Self::Length,
            "content_filter" => Self::ContentFilter,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl FinishReason {
    /// The Anthropic `stop_reason`: `end_turn`, `tool_use`, `max_tokens`, or the unknown reason
    /// verbatim. [`FinishReason::ContentFilter`] becomes `refusal`, Anthropic's nearest reason,
    /// which reads back as `Other("refusal")`.
    pub fn as_anthropic_str(&self) -> &str {
        match self {
            Self::Stop => "end_turn",
            Self::ToolCalls => "tool_use",
            Self::Length => "max_tokens",
            Self::ContentFilter => "refusal",
            Self::Other(other) => other,
        }
    }

    /// Parses an Anthropic `stop_reason`; anything but `end_turn`, `tool_use` and `max_tokens`
    /// (e.g. `refusal`, `stop_sequence`, `pause_turn`) becomes [`FinishReason::Other`].
    pub fn from_anthropic_str(s: &str) -> Self {
        match s {
            "end_turn" => Self::Stop,
            "tool_use" => Self::ToolCalls,
            "max_tokens" => Self::Length,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// Token counts of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// All prompt tokens, cached ones (read or written) included, as OpenAI counts them.
    /// Anthropic's `input_tokens` excludes cached tokens; its format converts.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// Everything one model call produced.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelTurn {
    /// The assistant's text (empty if it only called tools).
    pub text: String,
    /// Requested tool calls, in the order the provider numbered them.
    pub tool_calls: Vec<ToolCall>,
    /// The model's reasoning, in the order it came; the loop keeps it on the assistant
    /// [`crate::Message`] to send it back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<crate::Reasoning>,
    /// Why generation stopped.
    pub finish_reason: FinishReason,
    /// Token counts, if the provider reported them.
    pub usage: Option<Usage>,
}

/// What a streaming decoder has gathered of one turn so far, shared by the
/// wires whose streams end on a terminal event and may carry the
/// provider's error (Anthropic, Responses): the turn's parts, whether the
/// terminal event came, and the error.
#[derive(Debug, Default)]
pub(crate) struct StreamedTurn {
    /// Answer text so far.
    pub(crate) text: String,
    /// Tool calls so far, in the stream's order.
    pub(crate) tool_calls: Vec<StreamedCall>,
    /// Reasoning so far, in the stream's order.
    pub(crate) reasoning: Vec<crate::Reasoning>,
    /// Why generation stopped, once the stream said.
    pub(crate) finish_reason: Option<FinishReason>,
    /// Whether the terminal event came.
    pub(crate) done: bool,
    /// The error the provider reported in the stream, as kind and message.
    pub(crate) failure: Option<(String, String)>,
}

/// A tool call being streamed: its arguments grow fragment by fragment
/// until the stream ends, and only then become the call's shared text.
#[derive(Debug, Default, Clone)]
pub(crate) struct StreamedCall {
    /// The call id.
    pub(crate) id: Text,
    /// The tool's name.
    pub(crate) name: Text,
    /// The arguments so far.
    pub(crate) arguments: String,
}

impl StreamedCall {
    /// A call whose arguments have not started.
    pub(crate) fn started(id: impl Into<Text>, name: impl Into<Text>) -> Self {
        Self { id: id.into(), name: name.into(), arguments: String::new() }
    }

    /// The finished call.
    pub(crate) fn into_call(self) -> ToolCall {
        ToolCall { id: self.id, name: self.name, arguments: self.arguments.into() }
    }
}

impl StreamedTurn {
    /// The turn with `usage`, once the stream is over.
    ///
    /// # Errors
    ///
    /// [`WireError::Provider`] if the stream carried the provider's error,
    /// otherwise [`WireError::StreamEndedEarly`] without the terminal event
    /// and [`WireError::MissingFinish`] without a finish reason.
    pub(crate) fn finish(self, usage: Option<Usage>) -> Result<ModelTurn, crate::WireError> {
        if let Some((kind, message)) = self.failure {
            return Err(crate::WireError::Provider { kind, message });
        }
        if !self.done {
            return Err(crate::WireError::StreamEndedEarly);
        }
        Ok(ModelTurn {
            text: self.text,
            tool_calls: self.tool_calls.into_iter().map(StreamedCall::into_call).collect(),
            reasoning: self.reasoning,
            finish_reason: self.finish_reason.ok_or(crate::WireError::MissingFinish)?,
            usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KNOWN: [(FinishReason, &str); 4] = [
        (FinishReason::Stop, "stop"),
        (FinishReason::ToolCalls, "tool_calls"),
        (FinishReason::Length, "length"),
        (FinishReason::ContentFilter, "content_filter"),
    ];

    #[test]
    fn finish_reason_openai_strings_round_trip() {
        for (reason, wire) in KNOWN {
            assert_eq!(reason.as_openai_str(), wire);
            assert_eq!(FinishReason::from_openai_str(wire), reason);
        }
        let legacy = FinishReason::from_openai_str("function_call");
        assert_eq!(legacy, FinishReason::Other("function_call".into()));
        assert_eq!(legacy.as_openai_str(), "function_call");
    }

    #[test]
    fn finish_reason_anthropic_strings() {
        for (reason, wire) in [
            (FinishReason::Stop, "end_turn"),
            (FinishReason::ToolCalls, "tool_use"),
            (FinishReason::Length, "max_tokens"),
            (FinishReason::Other("pause_turn".into()), "pause_turn"),
        ] {
            assert_eq!(reason.as_anthropic_str(), wire);
            assert_eq!(FinishReason::from_anthropic_str(wire), reason);
        }
        assert_eq!(FinishReason::ContentFilter.as_anthropic_str(), "refusal");
        assert_eq!(FinishReason::from_anthropic_str("refusal"), FinishReason::Other("refusal".into()));
    }

    #[test]
    fn finish_reason_serde_is_the_bare_string() {
        for (reason, wire) in KNOWN {
            assert_eq!(serde_json::to_value(&reason).unwrap(), json!(wire));
            assert_eq!(serde_json::from_value::<FinishReason>(json!(wire)).unwrap(), reason);
        }
        let other: FinishReason = serde_json::from_value(json!("end_turn")).unwrap();
        assert_eq!(other, FinishReason::Other("end_turn".into()));
        assert_eq!(serde_json::to_value(&other).unwrap(), json!("end_turn"));
    }

    #[test]
    fn default_turn_is_an_empty_stop() {
        let turn = ModelTurn::default();
        assert_eq!(turn.finish_reason, FinishReason::Stop);
        assert!(turn.text.is_empty() && turn.tool_calls.is_empty() && turn.usage.is_none());
    }

    #[test]
    fn usage_cache_counts_default_to_zero() {
        let usage: Usage = serde_json::from_value(json!({"input_tokens": 3, "output_tokens": 4})).unwrap();
        assert_eq!(usage, Usage { input_tokens: 3, output_tokens: 4, ..Usage::default() });
    }
}
