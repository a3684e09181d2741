//! The provider-neutral request: what one model call asks for, whatever the wire format.
//!
//! [`Prompt`] is the pivot between formats. Every format's request type converts from it
//! (`from_prompt`, used by the agent to write a request) and back to it (`to_prompt`, used by
//! the mock server to read one), so a scenario recorded against one provider API can be
//! replayed against another and requests can be compared across formats. Each `to_prompt`
//! documents what its format carries that a [`Prompt`] cannot (images, reasoning items, ...).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context_management::ContextManagement;
use crate::{Message, ToolCall};

/// One model call's request, provider-neutral.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Prompt {
    /// Model name.
    pub model: String,
    /// All system / developer / instructions text, joined with `"\n\n"`; `None` when the request
    /// has none.
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Whether and which tools the model must call.
    pub tool_choice: ToolChoice,
    /// Output-token limit.
    pub max_output_tokens: Option<u32>,
    /// Whether to stream the answer.
    pub stream: bool,
    /// Whether the answer reports token usage. Chat Completions only does when streaming with
    /// `stream_options.include_usage`; Responses and Anthropic always do, so their `to_prompt`
    /// sets it.
    pub include_usage: bool,
    /// What the request asks of the provider's context management, the edits in order; `None`
    /// when it asks for none. Each wire carries the edits its provider applies
    /// ([`crate::codec::manages`]) and drops the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_management: Option<ContextManagement>,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (`null` when the request declared none).
    pub parameters: Value,
}

/// Whether and which tools the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides (every API's default).
    #[default]
    Auto,
    /// The model must not call tools.
    None,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Named(String),
}

impl ToolChoice {
    /// The string both OpenAI APIs use for the mode (`"auto"`, `"none"`, `"required"`); `None`
    /// for [`ToolChoice::Named`], which each API spells as its own object.
    pub(crate) fn openai_mode(&self) -> Option<&'static str> {
        match self {
            Self::Auto => Some("auto"),
            Self::None => Some("none"),
            Self::Required => Some("required"),
            Self::Named(_) => None,
        }
    }

    /// Reads an OpenAI `tool_choice`: a mode string, or an object whose function name is at
    /// `name_pointer` (a JSON pointer). Anything else (absent, unknown modes, `allowed_tools`,
    /// built-in tool choices) counts as [`ToolChoice::Auto`].
    pub(crate) fn from_openai_value(value: Option<&Value>, name_pointer: &str) -> Self {
        match value {
            Some(Value::String(mode)) => match mode.as_str() {
                "none" => Self::None,
                "required" => Self::Required,
                _ => Self::Auto,
            },
            Some(object) => object.pointer(name_pointer).and_then(Value::as_str).map_or(Self::Auto, |name| Self::Named(name.to_owned())),
            None => Self::Auto,
        }
    }
}

/// The [`Prompt::system`] of a request whose system texts are `parts`: joined with `"\n\n"`,
/// `None` if there are none.
pub(crate) fn join_system<S: std::borrow::Borrow<str>>(parts: Vec<S>) -> Option<String> {
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Appends a tool call to the conversation: to the assistant message it ends with, or to a new
/// assistant message without text. Formats that send tool calls as items or blocks separate from
/// the assistant's text use this to fold them back into one message.
pub(crate) fn push_tool_call(messages: &mut Vec<Message>, call: ToolCall) {
    if let Some(Message::Assistant { tool_calls, .. }) = messages.last_mut() {
        tool_calls.push(call);
    } else {
        messages.push(Message::assistant(String::new(), vec![call]));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A prompt exercising everything a [`Prompt`] can say: system text, user text, an assistant
    /// turn with text and two tool calls, two tool results (one failed), a final user message,
    /// a named tool choice, limits and streaming with usage.
    pub(crate) fn rich_prompt() -> Prompt {
        let call = |id: &str, name: &str, arguments: &str| ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() };
        Prompt {
            model: "test-model".into(),
            system: Some("You are a coding agent.\n\nBe brief.".into()),
            messages: vec![
                Message::User { text: "What is in src/?".into() },
                Message::assistant(
                    "Let me look.",
                    vec![call("call_1", "list_dir", r#"{"path":"src"}"#), call("call_2", "read_file", r#"{"path":"src/lib.rs","limit":40}"#)],
                ),
                Message::ToolResult { call_id: "call_1".into(), tool_name: "list_dir".into(), content: "lib.rs\nmain.rs".into(), is_error: false },
                Message::ToolResult { call_id: "call_2".into(), tool_name: "read_file".into(), content: "error: permission denied".into(), is_error: true },
                Message::User { text: "Try again with sudo.".into() },
            ],
            tools: vec![
                ToolSpec {
                    name: "list_dir".into(),
                    description: "List a directory".into(),
                    parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                },
                ToolSpec {
                    name: "read_file".into(),
                    description: "Read a file".into(),
                    parameters: json!({"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}),
                },
            ],
            tool_choice: ToolChoice::Named("read_file".into()),
            max_output_tokens: Some(2048),
            stream: true,
            include_usage: true,
            context_management: None,
        }
    }

    /// `prompt` with every tool result's `is_error` cleared, for formats that cannot carry it.
    pub(crate) fn without_error_flags(mut prompt: Prompt) -> Prompt {
        for message in &mut prompt.messages {
            if let Message::ToolResult { is_error, .. } = message {
                *is_error = false;
            }
        }
        prompt
    }

    #[test]
    fn serde_shape_is_role_tagged() {
        let value = serde_json::to_value(rich_prompt()).unwrap();
        assert_eq!(value["messages"][0], json!({"role": "user", "text": "What is in src/?"}));
        assert_eq!(value["messages"][3]["role"], json!("tool_result"));
        assert_eq!(value["tool_choice"], json!({"named": "read_file"}));
        let back: Prompt = serde_json::from_value(value).unwrap();
        assert_eq!(back, rich_prompt());
        assert_eq!(Prompt::default().tool_choice, ToolChoice::Auto);
    }

    #[test]
    fn openai_tool_choice_values() {
        for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required] {
            let mode = choice.openai_mode().unwrap();
            assert_eq!(ToolChoice::from_openai_value(Some(&json!(mode)), "/name"), choice);
        }
        assert_eq!(ToolChoice::Named("f".into()).openai_mode(), None);
        assert_eq!(
            ToolChoice::from_openai_value(Some(&json!({"type": "function", "function": {"name": "f"}})), "/function/name"),
            ToolChoice::Named("f".into())
        );
        for other in [None, Some(json!({"type": "allowed_tools"})), Some(json!("any"))] {
            assert_eq!(ToolChoice::from_openai_value(other.as_ref(), "/name"), ToolChoice::Auto);
        }
    }

    #[test]
    fn system_parts_join_with_a_blank_line() {
        assert_eq!(join_system(Vec::<String>::new()), None);
        assert_eq!(join_system(vec!["a", "b"]).as_deref(), Some("a\n\nb"));
    }

    #[test]
    fn tool_calls_fold_into_the_last_assistant_message() {
        let call = ToolCall { id: "c".into(), name: "f".into(), arguments: "{}".into() };
        let mut messages = vec![Message::User { text: "u".into() }];
        push_tool_call(&mut messages, call.clone());
        push_tool_call(&mut messages, call.clone());
        assert_eq!(messages[1], Message::assistant(String::new(), vec![call.clone(), call]));
        assert_eq!(messages.len(), 2);
    }
}
