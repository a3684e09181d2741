//! The Responses API `response` object: the whole body of a non-streamed answer, and the payload
//! of the stream's lifecycle events (`response.created`, `response.completed`, ...).
//!
//! Most fields are optional because the same object appears half-filled while streaming and
//! because minimal hand-written streams (e.g. Codex's test fixtures) omit them; fields the real
//! API sends as `null` are tri-state (see `crate::nullable`) so captures re-serialize unchanged.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::request::{InputItem, MessageItem, Role};
use crate::{FinishReason, ModelTurn, Usage, WireError};

/// A `response` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Response id (`resp_...`).
    pub id: String,
    /// `"response"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Unix time the response was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<u64>,
    /// `in_progress`, `completed`, `incomplete`, `failed`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why the response failed: absent, `null` or the error.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub error: Option<Option<ResponsesError>>,
    /// Why the response is incomplete: absent, `null` or the details.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub incomplete_details: Option<Option<IncompleteDetails>>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The output items (messages, function calls, reasoning, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Vec<InputItem>>,
    /// Token usage: absent, `null` (while in progress) or the counts.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub usage: Option<Option<ResponsesUsage>>,
    /// Every other field (`tools`, `reasoning`, `store`, ...), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An error the Responses API reports: a failed response's `error`, or the `error` of an
/// `error` stream event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesError {
    /// Error class, e.g. `server_error` (stream `error` events only).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Machine-readable code, e.g. `rate_limit_exceeded`: absent, `null` or a value.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub code: Option<Option<String>>,
    /// Human-readable message.
    pub message: String,
    /// Every other field (e.g. `param`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `incomplete_details` of a response that stopped early.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncompleteDetails {
    /// `max_output_tokens` or `content_filter`.
    pub reason: String,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Token usage as the Responses API reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesUsage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Breakdown of the prompt tokens: absent, `null` or the details.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub input_tokens_details: Option<Option<InputTokensDetails>>,
    /// Generated tokens, reasoning included.
    pub output_tokens: u64,
    /// Breakdown of the generated tokens (`reasoning_tokens`): absent, `null` or verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "crate::nullable")]
    pub output_tokens_details: Option<Option<Value>>,
    /// The sum of the two.
    pub total_tokens: u64,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage.input_tokens_details`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct InputTokensDetails {
    /// Prompt tokens served from the prompt cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Prompt tokens written to the prompt cache (newer responses send it, usually 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResponsesUsage {
    /// The wire form of neutral usage: `cached_tokens` and `cache_write_tokens` always (the
    /// SDKs' types require both), and `reasoning_tokens: 0` (the neutral usage does not split
    /// reasoning out).
    pub fn from_usage(usage: &Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            input_tokens_details: Some(Some(InputTokensDetails {
                cached_tokens: usage.cache_read_tokens,
                cache_write_tokens: Some(usage.cache_write_tokens),
                extra: Map::new(),
            })),
            output_tokens: usage.output_tokens,
            output_tokens_details: Some(Some(json!({"reasoning_tokens": 0}))),
            total_tokens: usage.input_tokens.saturating_add(usage.output_tokens),
            extra: Map::new(),
        }
    }

    /// The neutral form: `input_tokens` already includes cached tokens, as the neutral count does.
    pub fn to_usage(&self) -> Usage {
        let details = self.input_tokens_details.clone().flatten().unwrap_or_default();
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: details.cached_tokens,
            cache_write_tokens: details.cache_write_tokens.unwrap_or(0),
        }
    }
}

/// What the encoders need beyond the turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponseMeta {
    /// Response id (`resp_...`); item ids are derived from it.
    pub id: String,
    /// Model name to report.
    pub model: String,
    /// Unix creation time to report.
    pub created_at: u64,
    /// The request's tool declarations, echoed as the API does.
    pub tools: Vec<Value>,
}

/// `status` of a finished response.
pub(super) const COMPLETED: &str = "completed";
/// `status` of a response cut short (token limit, content filter).
pub(super) const INCOMPLETE: &str = "incomplete";

impl ResponseMeta {
    /// A response with this id, model and time, the given status and output, no error.
    pub(super) fn response(
        &self,
        status: &str,
        incomplete_details: Option<IncompleteDetails>,
        output: Vec<InputItem>,
        usage: Option<ResponsesUsage>,
    ) -> Response {
        Response {
            id: self.id.clone(),
            object: Some("response".to_owned()),
            created_at: Some(self.created_at),
            status: Some(status.to_owned()),
            error: Some(None),
            incomplete_details: Some(incomplete_details),
            model: Some(self.model.clone()),
            output: Some(output),
            usage: Some(usage),
            extra: self.echoed_settings(),
        }
    }

    /// The request settings the API echoes on every response object, which
    /// the SDKs' types require.
    fn echoed_settings(&self) -> Map<String, Value> {
        [
            ("instructions", Value::Null),
            ("metadata", json!({})),
            ("parallel_tool_calls", json!(true)),
            ("temperature", json!(1.0)),
            ("tool_choice", json!("auto")),
            ("tools", Value::Array(self.tools.clone())),
            ("top_p", json!(1.0)),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
    }
}

/// The status and `incomplete_details` that express a finish reason: `completed` for
/// [`FinishReason::Stop`] and [`FinishReason::ToolCalls`] (the API has no separate reason for
/// tool calls), otherwise `incomplete` with `incomplete_details.reason` `max_output_tokens`
/// ([`FinishReason::Length`]), `content_filter`, or an unknown reason verbatim.
pub(super) fn status_for(reason: &FinishReason) -> (&'static str, Option<IncompleteDetails>) {
    let incomplete = |reason: &str| {
        let details = IncompleteDetails { reason: reason.to_owned(), extra: Map::new() };
        (INCOMPLETE, Some(details))
    };
    match reason {
        FinishReason::Stop | FinishReason::ToolCalls => (COMPLETED, None),
        FinishReason::Length => incomplete("max_output_tokens"),
        FinishReason::ContentFilter => incomplete("content_filter"),
        FinishReason::Other(other) => incomplete(other),
    }
}

/// The finish reason of a completed response: tool calls if it made any, else a natural stop.
pub(super) fn completed_reason(has_tool_calls: bool) -> FinishReason {
    if has_tool_calls { FinishReason::ToolCalls } else { FinishReason::Stop }
}

/// The finish reason of an incomplete response (the inverse of [`status_for`]).
pub(super) fn incomplete_reason(details: Option<&IncompleteDetails>) -> FinishReason {
    match details.map(|details| details.reason.as_str()) {
        Some("max_output_tokens") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
        None => FinishReason::Other(INCOMPLETE.to_owned()),
    }
}

impl ResponsesError {
    /// The [`WireError::Provider`] for this error: its `code`, else its `type`, as the kind.
    pub fn to_wire_error(&self) -> WireError {
        let kind = self.code.clone().flatten().or_else(|| self.kind.clone());
        WireError::Provider { kind: kind.unwrap_or_else(|| "error".to_owned()), message: self.message.clone() }
    }
}

/// The text of an assistant message item: its parts' text (`output_text`) concatenated.
/// `None` for other roles.
pub(super) fn assistant_text(message: &MessageItem) -> Option<String> {
    (message.role == Role::Assistant).then(|| message.content.to_text().into())
}

impl Response {
    /// The turn: assistant text of all message items, function calls in output order, and the
    /// finish reason from the status (a completed response with function calls finished with
    /// [`FinishReason::ToolCalls`]). Other output items (reasoning, custom tool calls, ...) are
    /// ignored.
    ///
    /// # Errors
    ///
    /// [`WireError::Provider`] for a `failed` response, [`WireError::Protocol`] for a response
    /// that has not finished (`in_progress`, `queued`, ...).
    pub fn to_turn(&self) -> Result<ModelTurn, WireError> {
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        for item in self.output.iter().flatten() {
            match item {
                InputItem::Message(message) => text.extend(assistant_text(message)),
                InputItem::FunctionCall(call) => tool_calls.push(call.to_tool_call()),
                InputItem::Other(item) => reasoning.extend(super::request::item_reasoning(item)),
                InputItem::FunctionCallOutput(_) => {}
            }
        }
        let finish_reason = match self.status.as_deref() {
            None | Some(COMPLETED) => completed_reason(!tool_calls.is_empty()),
            Some(INCOMPLETE) => incomplete_reason(self.incomplete_details.as_ref().and_then(Option::as_ref)),
            Some("failed") => return Err(self.failure()),
            Some(other) => {
                return Err(WireError::Protocol(format!("response {} is {other}, not finished", self.id)));
            }
        };
        Ok(ModelTurn { text, tool_calls, reasoning, finish_reason, usage: self.usage.as_ref().and_then(Option::as_ref).map(ResponsesUsage::to_usage) })
    }

    /// The error of a failed response (a generic one if it carries none).
    pub(super) fn failure(&self) -> WireError {
        match self.error.as_ref().and_then(Option::as_ref) {
            Some(error) => error.to_wire_error(),
            None => WireError::Provider { kind: "failed".to_owned(), message: format!("response {} failed", self.id) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::body_of_turn;
    use crate::{Format, ToolCall};

    /// `turn` as the codec writes its whole body.
    fn response_of(turn: &ModelTurn) -> Response {
        serde_json::from_str(&body_of_turn(Format::OpenaiResponses, turn)).unwrap()
    }

    fn tool_turn() -> ModelTurn {
        ModelTurn {
            text: "Checking.".into(),
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "get_weather".into(), arguments: r#"{"city":"Paris"}"#.into() }],
            reasoning: Vec::new(),
            finish_reason: FinishReason::ToolCalls,
            usage: Some(Usage { input_tokens: 40, output_tokens: 12, cache_read_tokens: 32, cache_write_tokens: 0 }),
        }
    }

    #[test]
    fn turns_round_trip() {
        let length = ModelTurn { text: "partial".into(), finish_reason: FinishReason::Length, ..ModelTurn::default() };
        let filtered = ModelTurn { finish_reason: FinishReason::ContentFilter, ..ModelTurn::default() };
        let writes = ModelTurn { usage: Some(Usage { cache_write_tokens: 9, ..tool_turn().usage.unwrap() }), ..tool_turn() };
        for turn in [tool_turn(), length, filtered, writes, ModelTurn::default()] {
            let response = response_of(&turn);
            assert_eq!(response.to_turn().unwrap(), turn);
            let reparsed: Response = serde_json::from_str(&serde_json::to_string(&response).unwrap()).unwrap();
            assert_eq!(reparsed, response);
        }
        let incomplete = response_of(&ModelTurn { finish_reason: FinishReason::Length, ..ModelTurn::default() });
        assert_eq!(serde_json::to_value(&incomplete).unwrap()["incomplete_details"], json!({"reason": "max_output_tokens"}));
    }

    #[test]
    fn reads_a_documented_response_body() {
        // The API reference's example response, abridged.
        let body = json!({
            "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41",
            "object": "response", "created_at": 1741476777, "status": "completed",
            "error": null, "incomplete_details": null, "instructions": null, "max_output_tokens": null,
            "model": "gpt-4o-2024-08-06",
            "output": [{
                "type": "message", "id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c45c1d41",
                "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "The image depicts a scenic landscape.", "annotations": []}]
            }],
            "parallel_tool_calls": true, "previous_response_id": null,
            "reasoning": {"effort": null, "summary": null}, "store": true, "temperature": 1.0,
            "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [], "top_p": 1.0,
            "truncation": "disabled",
            "usage": {"input_tokens": 328, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 52, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 380},
            "user": null, "metadata": {}
        });
        let response: Response = serde_json::from_value(body.clone()).unwrap();
        assert_eq!(serde_json::to_value(&response).unwrap(), body);
        assert_eq!(
            response.to_turn().unwrap(),
            ModelTurn {
                text: "The image depicts a scenic landscape.".into(),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: Some(Usage { input_tokens: 328, output_tokens: 52, ..Usage::default() }),
            }
        );
    }

    #[test]
    fn failed_and_unfinished_responses_have_no_turn() {
        let mut response = response_of(&ModelTurn::default());
        response.status = Some("failed".into());
        response.error =
            Some(Some(ResponsesError { kind: None, code: Some(Some("rate_limit_exceeded".into())), message: "slow down".into(), extra: Map::new() }));
        let error = response.to_turn().unwrap_err();
        assert!(matches!(&error, WireError::Provider { kind, message } if kind == "rate_limit_exceeded" && message == "slow down"), "{error:?}");
        response.status = Some("in_progress".into());
        assert!(matches!(response.to_turn(), Err(WireError::Protocol(_))));
    }
}
