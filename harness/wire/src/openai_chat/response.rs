//! Non-streamed Chat Completions responses (`"stream": false`): the whole answer in one JSON body.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::ChatToolCall;
use super::stream::ChatUsage;
use crate::{FinishReason, ModelTurn, WireError};

/// A complete (non-streamed) response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletion {
    /// Completion id.
    pub id: String,
    /// `"chat.completion"`.
    pub object: String,
    /// Unix time the completion was created.
    pub created: u64,
    /// The model that answered.
    pub model: String,
    /// One entry per requested choice (`n`).
    pub choices: Vec<CompletionChoice>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ChatUsage>,
    /// Backend configuration fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
}

/// One choice of a complete response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionChoice {
    /// Which choice (of `n`) this is.
    pub index: u32,
    /// The generated message.
    pub message: CompletionMessage,
    /// Token log-probabilities; always serialized (`null` when none).
    pub logprobs: Option<Value>,
    /// Why generation stopped, as the API spells it.
    pub finish_reason: String,
}

/// The message of a complete choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionMessage {
    /// `"assistant"`.
    pub role: String,
    /// The answer text; `null` when the model only called tools.
    pub content: Option<String>,
    /// Tool calls the model made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ChatToolCall>,
    /// A refusal message; always serialized (`null` when none).
    pub refusal: Option<String>,
}

impl ChatCompletion {
    /// The turn of choice 0 (a refusal message is not part of the turn).
    ///
    /// # Errors
    ///
    /// [`WireError::Protocol`] if the response has no choice 0.
    pub fn to_turn(&self) -> Result<ModelTurn, WireError> {
        let choice = self.choices.iter().find(|choice| choice.index == 0).ok_or_else(|| WireError::Protocol("chat completion has no choice 0".to_owned()))?;
        Ok(ModelTurn {
            text: choice.message.content.clone().unwrap_or_default(),
            tool_calls: choice.message.tool_calls.iter().map(ChatToolCall::to_tool_call).collect(),
            reasoning: Vec::new(),
            finish_reason: FinishReason::from_openai_str(&choice.finish_reason),
            usage: self.usage.as_ref().map(ChatUsage::to_usage),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::body_of_turn;
    use crate::{Format, ToolCall, Usage};
    use serde_json::json;

    fn tool_turn() -> ModelTurn {
        ModelTurn {
            text: String::new(),
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "ls".into(), arguments: "{}".into() }],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: Some(Usage { input_tokens: 20, output_tokens: 7, cache_read_tokens: 16, cache_write_tokens: 0 }),
        }
    }

    /// `turn` as the codec writes its whole body.
    fn completion_of(turn: &ModelTurn) -> ChatCompletion {
        serde_json::from_str(&body_of_turn(Format::OpenaiChat, turn)).unwrap()
    }

    #[test]
    fn turns_round_trip() {
        let text_turn = ModelTurn { text: "Done.".into(), ..ModelTurn::default() };
        for turn in [tool_turn(), text_turn, ModelTurn::default()] {
            let completion = completion_of(&turn);
            assert_eq!(completion.to_turn().unwrap(), turn);
            let reparsed: ChatCompletion = serde_json::from_str(&serde_json::to_string(&completion).unwrap()).unwrap();
            assert_eq!(reparsed, completion);
        }
    }

    #[test]
    fn reads_a_real_shaped_response_with_unknown_fields() {
        let body = json!({
            "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
            "object": "chat.completion",
            "created": 1741569952,
            "model": "gpt-4.1-2025-04-14",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": "Hello! How can I assist you today?", "refusal": null, "annotations": []},
                "logprobs": null,
                "finish_reason": "stop"
            }],
            "usage": {
                "prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
                "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}
            },
            "service_tier": "default"
        });
        let turn = serde_json::from_value::<ChatCompletion>(body).unwrap().to_turn().unwrap();
        assert_eq!(turn.text, "Hello! How can I assist you today?");
        assert_eq!(turn.finish_reason, FinishReason::Stop);
        assert_eq!(turn.usage, Some(Usage { input_tokens: 19, output_tokens: 10, ..Usage::default() }));
    }

    #[test]
    fn no_choice_zero_is_a_protocol_error() {
        let mut completion = completion_of(&ModelTurn::default());
        completion.choices.clear();
        assert!(matches!(completion.to_turn(), Err(WireError::Protocol(_))));
    }
}
