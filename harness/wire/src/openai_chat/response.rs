//! Non-streamed Chat Completions responses (`"stream": false`): the whole answer in one JSON body.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::ChatToolCall;
use super::stream::{ChatUsage, ChunkMeta, content_is_null};
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
    /// The response body the API would send for this turn (one choice; `meta.include_usage` is
    /// irrelevant here: usage is included whenever the turn has it).
    pub fn from_turn(turn: &ModelTurn, meta: &ChunkMeta) -> Self {
        let message = CompletionMessage {
            role: "assistant".to_owned(),
            content: (!content_is_null(turn)).then(|| turn.text.clone()),
            tool_calls: turn.tool_calls.iter().map(ChatToolCall::from_tool_call).collect(),
            refusal: None,
        };
        Self {
            id: meta.id.clone(),
            object: "chat.completion".to_owned(),
            created: meta.created,
            model: meta.model.clone(),
            choices: vec![CompletionChoice { index: 0, message, logprobs: None, finish_reason: turn.finish_reason.as_openai_str().to_owned() }],
            usage: turn.usage.as_ref().map(ChatUsage::from_usage),
            system_fingerprint: None,
        }
    }

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
    use crate::{ToolCall, Usage};
    use serde_json::json;

    fn meta() -> ChunkMeta {
        ChunkMeta { id: "chatcmpl-1".into(), model: "gpt-4o".into(), created: 1_700_000_000, include_usage: false }
    }

    fn tool_turn() -> ModelTurn {
        ModelTurn {
            text: String::new(),
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "ls".into(), arguments: "{}".into() }],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: Some(Usage { input_tokens: 20, output_tokens: 7, cache_read_tokens: 16, cache_write_tokens: 0 }),
        }
    }

    #[test]
    fn from_turn_renders_the_api_shape() {
        assert_eq!(
            serde_json::to_string(&ChatCompletion::from_turn(&tool_turn(), &meta())).unwrap(),
            concat!(
                r#"{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-4o","#,
                r#""choices":[{"index":0,"message":{"role":"assistant","content":null,"#,
                r#""tool_calls":[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{}"}}],"#,
                r#""refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],"#,
                r#""usage":{"prompt_tokens":20,"completion_tokens":7,"total_tokens":27,"#,
                r#""prompt_tokens_details":{"cached_tokens":16}}}"#,
            )
        );
    }

    #[test]
    fn turns_round_trip() {
        let text_turn = ModelTurn { text: "Done.".into(), ..ModelTurn::default() };
        for turn in [tool_turn(), text_turn, ModelTurn::default()] {
            let completion = ChatCompletion::from_turn(&turn, &meta());
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
        let mut completion = ChatCompletion::from_turn(&ModelTurn::default(), &meta());
        completion.choices.clear();
        assert!(matches!(completion.to_turn(), Err(WireError::Protocol(_))));
    }
}
