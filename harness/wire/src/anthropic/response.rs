//! The Anthropic `message` object: the whole body of a non-streamed answer and the payload of
//! the stream's `message_start` event, with the usage conversion both share.
//!
//! Anthropic counts prompt tokens differently from the neutral [`Usage`]: its `input_tokens`
//! are only the tokens after the last cache breakpoint, while `cache_read_input_tokens` and
//! `cache_creation_input_tokens` count the cached ones separately. [`Usage::input_tokens`]
//! means all prompt tokens (as OpenAI's `prompt_tokens` does), so the conversion adds the three
//! and subtracts them back.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::request::{ContentBlock, Role, blocks_text};
use crate::{FinishReason, ModelTurn, Usage, WireError};

/// A `message` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Message id (`msg_...`).
    pub id: String,
    /// `"message"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `assistant`.
    pub role: Role,
    /// The model that answered.
    pub model: String,
    /// The answer's blocks (empty in `message_start`).
    pub content: Vec<ContentBlock>,
    /// Why generation stopped; always serialized (`null` in `message_start`).
    pub stop_reason: Option<String>,
    /// The stop sequence that ended generation; always serialized (`null` when none).
    pub stop_sequence: Option<String>,
    /// Token usage.
    pub usage: AnthropicUsage,
    /// Every other field (e.g. `stop_details`, `container`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Token usage as Anthropic reports it: on the message, and cumulatively in `message_delta`
/// (where only `output_tokens` is sure to be present).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AnthropicUsage {
    /// Prompt tokens after the last cache breakpoint (cached tokens excluded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Prompt tokens written to the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Prompt tokens read from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Every other field (`cache_creation`, `service_tier`, `server_tool_use`, ...), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AnthropicUsage {
    /// The wire form of neutral usage: `input_tokens` is the neutral count minus cache reads
    /// and writes (never below zero), the cache counts are the neutral ones.
    pub fn from_usage(usage: &Usage) -> Self {
        let cached = usage.cache_read_tokens.saturating_add(usage.cache_write_tokens);
        Self {
            input_tokens: Some(usage.input_tokens.saturating_sub(cached)),
            cache_creation_input_tokens: Some(usage.cache_write_tokens),
            cache_read_input_tokens: Some(usage.cache_read_tokens),
            output_tokens: usage.output_tokens,
            extra: Map::new(),
        }
    }

    /// The neutral form: `input_tokens` plus cache reads plus cache writes is the neutral
    /// `input_tokens`; absent counts are 0.
    pub fn to_usage(&self) -> Usage {
        let read = self.cache_read_input_tokens.unwrap_or(0);
        let write = self.cache_creation_input_tokens.unwrap_or(0);
        Usage {
            // Counts come from the network: saturate rather than overflow.
            input_tokens: self.input_tokens.unwrap_or(0).saturating_add(read).saturating_add(write),
            output_tokens: self.output_tokens,
            cache_read_tokens: read,
            cache_write_tokens: write,
        }
    }

    /// Applies a later (cumulative) report, as `message_delta` sends: its counts replace these,
    /// counts it omits stay.
    pub fn update(&mut self, later: &Self) {
        self.input_tokens = later.input_tokens.or(self.input_tokens);
        self.cache_creation_input_tokens = later.cache_creation_input_tokens.or(self.cache_creation_input_tokens);
        self.cache_read_input_tokens = later.cache_read_input_tokens.or(self.cache_read_input_tokens);
        self.output_tokens = later.output_tokens;
    }
}

/// What the encoders need beyond the turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MessageMeta {
    /// Message id (`msg_...`).
    pub id: String,
    /// Model name to report.
    pub model: String,
}

impl MessageMeta {
    /// A message with this id and model.
    pub(super) fn message(&self, content: Vec<ContentBlock>, stop_reason: Option<&FinishReason>, usage: AnthropicUsage) -> Message {
        Message {
            id: self.id.clone(),
            kind: "message".to_owned(),
            role: Role::Assistant,
            model: self.model.clone(),
            content,
            stop_reason: stop_reason.map(|reason| reason.as_anthropic_str().to_owned()),
            stop_sequence: None,
            usage,
            extra: Map::new(),
        }
    }
}

impl Message {
    /// The turn: text blocks concatenated, `tool_use` blocks as tool calls (input as compact
    /// JSON), other blocks (thinking, server tools) ignored.
    ///
    /// # Errors
    ///
    /// [`WireError::MissingFinish`] if the message has no `stop_reason`.
    pub fn to_turn(&self) -> Result<ModelTurn, WireError> {
        let stop_reason = self.stop_reason.as_deref().ok_or(WireError::MissingFinish)?;
        let tool_calls = self
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse(call) => Some(call.to_tool_call()),
                _ => None,
            })
            .collect();
        Ok(ModelTurn {
            text: blocks_text(&self.content),
            tool_calls,
            reasoning: self.content.iter().filter_map(super::request::block_reasoning).collect(),
            finish_reason: FinishReason::from_anthropic_str(stop_reason),
            usage: Some(self.usage.to_usage()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::body_of_turn;
    use crate::{Format, ToolCall};
    use serde_json::json;

    /// Found by the `anthropic_body` fuzz target: `input_tokens` plus the
    /// cache counts overflowed `u64` and panicked.
    #[test]
    fn usage_sums_saturate_instead_of_overflowing() {
        let usage = AnthropicUsage {
            input_tokens: Some(u64::MAX),
            cache_creation_input_tokens: Some(1),
            cache_read_input_tokens: Some(u64::MAX),
            output_tokens: 1,
            extra: serde_json::Map::new(),
        };
        assert_eq!(usage.to_usage().input_tokens, u64::MAX);
        let neutral = Usage { input_tokens: 5, output_tokens: 0, cache_read_tokens: u64::MAX, cache_write_tokens: u64::MAX };
        assert_eq!(AnthropicUsage::from_usage(&neutral).input_tokens, Some(0));
    }

    fn tool_turn() -> ModelTurn {
        ModelTurn {
            text: "Checking.".into(),
            tool_calls: vec![ToolCall { id: "toolu_1".into(), name: "get_weather".into(), arguments: r#"{"city":"Paris"}"#.into() }],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: Some(Usage { input_tokens: 100, output_tokens: 12, cache_read_tokens: 60, cache_write_tokens: 30 }),
        }
    }

    /// `turn` as the codec writes its whole body.
    fn message_of(turn: &ModelTurn) -> Message {
        serde_json::from_str(&body_of_turn(Format::Anthropic, turn)).unwrap()
    }

    #[test]
    fn turns_round_trip() {
        let refusal = ModelTurn { finish_reason: FinishReason::Other("refusal".into()), usage: Some(Usage::default()), ..ModelTurn::default() };
        let length = ModelTurn { text: "partial".into(), finish_reason: FinishReason::Length, ..tool_turn() };
        for turn in [tool_turn(), refusal, length] {
            let message = message_of(&turn);
            assert_eq!(message.to_turn().unwrap(), turn);
            let reparsed: Message = serde_json::from_str(&serde_json::to_string(&message).unwrap()).unwrap();
            assert_eq!(reparsed, message);
        }
        assert_eq!(message_of(&ModelTurn::default()).to_turn().unwrap().usage, Some(Usage::default()));
    }

    #[test]
    fn reads_a_documented_message_body() {
        // The API reference's example response.
        let body = json!({
            "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "Hi! My name is Claude."}],
            "stop_reason": "end_turn",
            "stop_sequence": null,
            "usage": {"input_tokens": 2095, "output_tokens": 503, "cache_creation_input_tokens": 2051, "cache_read_input_tokens": 0}
        });
        let message: Message = serde_json::from_value(body.clone()).unwrap();
        assert_eq!(serde_json::to_value(&message).unwrap(), body);
        assert_eq!(
            message.to_turn().unwrap(),
            ModelTurn {
                text: "Hi! My name is Claude.".into(),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: Some(Usage { input_tokens: 2095 + 2051, output_tokens: 503, cache_read_tokens: 0, cache_write_tokens: 2051 }),
            }
        );
    }

    #[test]
    fn usage_counts_cached_tokens_into_the_neutral_input() {
        let usage = tool_turn().usage.unwrap();
        let wire = AnthropicUsage::from_usage(&usage);
        assert_eq!(wire.input_tokens, Some(10));
        assert_eq!(wire.to_usage(), usage);

        let mut start = AnthropicUsage {
            input_tokens: Some(2),
            cache_creation_input_tokens: Some(3068),
            cache_read_input_tokens: Some(0),
            output_tokens: 69,
            extra: Map::new(),
        };
        start.update(&AnthropicUsage { input_tokens: None, cache_read_input_tokens: Some(6289), output_tokens: 198, ..AnthropicUsage::default() });
        assert_eq!(start.to_usage(), Usage { input_tokens: 2 + 3068 + 6289, output_tokens: 198, cache_read_tokens: 6289, cache_write_tokens: 3068 });
    }

    #[test]
    fn a_message_without_stop_reason_has_no_turn() {
        let mut message = message_of(&ModelTurn::default());
        message.stop_reason = None;
        assert!(matches!(message.to_turn(), Err(WireError::MissingFinish)));
    }
}
