//! The Anthropic Messages request body (`POST /v1/messages`) and the content blocks messages
//! are made of.
//!
//! Messages alternate strictly between `user` and `assistant`, and tool results are content
//! blocks inside a user message rather than messages of their own, so converting from a
//! [`Prompt`] regroups them. Only what the harness acts on is typed; every other field is kept
//! in `extra`, and block types this crate does not know are kept whole in
//! [`ContentBlock::Other`], so a request survives a parse/serialize round trip.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};

use crate::ToolCall;
use crate::context_management::extra_field;
use crate::message::{Message, Reasoning, name_tool_results};
use crate::prompt::{Prompt, ToolChoice, ToolSpec, join_system};
use crate::tagged::tagged_union;
use crate::text_or_list::{TextOrList, text_or_list};

/// A Messages request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    /// Model name.
    pub model: String,
    /// System prompt: a string or text blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemPrompt>,
    /// The conversation, alternating user and assistant.
    pub messages: Vec<AnthropicMessage>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<AnthropicTool>,
    /// `{"type": "auto" | "any" | "none"}` or `{"type": "tool", "name": ...}`, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Output-token limit (required by the API).
    pub max_tokens: u32,
    /// Whether to stream the answer as SSE events.
    #[serde(default)]
    pub stream: bool,
    /// Every other field (`thinking`, `temperature`, `metadata`, ...), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `system` field (read in one pass, `text_or_list`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    /// Plain text.
    Text(String),
    /// Text blocks (which may carry `cache_control`).
    Blocks(Vec<ContentBlock>),
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnthropicMessage {
    /// Who speaks.
    pub role: Role,
    /// What they say.
    pub content: AnthropicContent,
}

/// The role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user (also the carrier of tool results).
    User,
    /// The model.
    Assistant,
}

/// Message (or tool result) content: a plain string or a list of blocks (read in one pass,
/// `text_or_list`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AnthropicContent {
    /// Plain text (shared, as a message's text is).
    Text(crate::Text),
    /// Typed blocks.
    Blocks(Vec<ContentBlock>),
}

impl<'de> Deserialize<'de> for SystemPrompt {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match text_or_list(deserializer, "a string or a list of text blocks")? {
            TextOrList::Text(text) => Self::Text(text.into()),
            TextOrList::List(blocks) => Self::Blocks(blocks),
        })
    }
}

impl<'de> Deserialize<'de> for AnthropicContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match text_or_list(deserializer, "a string or a list of content blocks")? {
            TextOrList::Text(text) => Self::Text(text),
            TextOrList::List(blocks) => Self::Blocks(blocks),
        })
    }
}

impl AnthropicContent {
    /// The text of the content: the string itself, or all text blocks concatenated.
    pub fn to_text(&self) -> crate::Text {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks_text(blocks).into(),
        }
    }
}

/// The text blocks among `blocks`, concatenated.
pub(super) fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

/// One content block, tagged by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `text`.
    Text(TextBlock),
    /// `tool_use`: the model calls a tool.
    ToolUse(ToolUseBlock),
    /// `tool_result`: the answer to a tool call (in a user message).
    ToolResult(ToolResultBlock),
    /// `thinking`: the model's extended thinking, with the signature that lets it be sent back.
    Thinking(ThinkingBlock),
    /// Any other block (`image`, `document`, `redacted_thinking`, `server_tool_use`, ...),
    /// verbatim.
    Other(Value),
}

tagged_union!(ContentBlock {
    "text" => Text,
    "tool_use" => ToolUse,
    "tool_result" => ToolResult,
    "thinking" => Thinking,
});

/// A `text` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// Prompt-caching breakpoint, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    /// Every other field (e.g. `citations`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A `tool_use` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    /// Call id (`toolu_...`).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// The arguments as a JSON object.
    pub input: Value,
    /// Every other field (e.g. `caller`, `cache_control`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A `tool_result` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// The call this answers.
    pub tool_use_id: String,
    /// The tool's output: a string or blocks (may be omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<AnthropicContent>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Every other field (e.g. `cache_control`), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A `thinking` block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinkingBlock {
    /// The thinking text (possibly summarized).
    pub thinking: String,
    /// The signature that authenticates the block when it is sent back.
    pub signature: String,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool offered to the model. Client tools have no `type` (or `"custom"`); server tools
/// (`web_search_20250305`, `bash_20250124`, ...) parse too, with their own fields in `extra`,
/// but are not converted to a [`Prompt`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnthropicTool {
    /// Tool type: absent or `"custom"` for client tools.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the input (`null` when absent, and then not serialized).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub input_schema: Value,
    /// Prompt-caching breakpoint, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `max_tokens` of a request made from a [`Prompt`] without an output limit (the API requires
/// one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

impl MessagesRequest {
    /// The request for `prompt`: the system text as a string `system`; user text as string
    /// content; tool results as `tool_result` blocks (`is_error` only when true), consecutive
    /// ones and the user text right after them merged into one user message, since roles must
    /// alternate; an assistant turn as string content, or as an optional text block followed by
    /// `tool_use` blocks when it called tools (see [`tool_input`] for the arguments); tools
    /// with their description; `tool_choice` only when not auto (`none`, `any` for
    /// [`ToolChoice::Required`], or `tool`); and [`DEFAULT_MAX_TOKENS`] when the prompt has no
    /// limit.
    pub fn from_prompt(prompt: &Prompt) -> Self {
        let mut messages: Vec<AnthropicMessage> = Vec::new();
        for message in &prompt.messages {
            match message {
                Message::User { text } => match open_tool_results(&mut messages) {
                    Some(blocks) => blocks.push(ContentBlock::text(text)),
                    None => messages.push(AnthropicMessage { role: Role::User, content: AnthropicContent::Text(text.clone()) }),
                },
                Message::Assistant { text, tool_calls, reasoning } => {
                    messages.push(assistant_message(text, tool_calls, reasoning));
                }
                Message::ToolResult { call_id, content, is_error, .. } => {
                    let block = ContentBlock::ToolResult(ToolResultBlock {
                        tool_use_id: call_id.to_string(),
                        content: Some(AnthropicContent::Text(content.clone())),
                        is_error: is_error.then_some(true),
                        extra: Map::new(),
                    });
                    match open_tool_results(&mut messages) {
                        Some(blocks) => blocks.push(block),
                        None => messages.push(AnthropicMessage { role: Role::User, content: AnthropicContent::Blocks(vec![block]) }),
                    }
                }
            }
        }
        Self {
            model: prompt.model.clone(),
            system: prompt.system.clone().map(SystemPrompt::Text),
            messages,
            tools: prompt.tools.iter().map(AnthropicTool::from_spec).collect(),
            tool_choice: match &prompt.tool_choice {
                ToolChoice::Auto => None,
                ToolChoice::None => Some(json!({"type": "none"})),
                ToolChoice::Required => Some(json!({"type": "any"})),
                ToolChoice::Named(name) => Some(json!({"type": "tool", "name": name})),
            },
            max_tokens: prompt.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            stream: prompt.stream,
            extra: prompt.context_management.iter().map(|management| (CONTEXT_MANAGEMENT.to_owned(), json!(management))).collect(),
        }
    }

    /// The neutral form of this request. Lossy: system text blocks are joined with `"\n\n"`;
    /// blocks other than text, `tool_use` and `tool_result` (images, documents, thinking, server
    /// tool blocks) are dropped; text blocks of one message are concatenated, and a user
    /// message's text after its tool results becomes a user message after them; `tool_use`
    /// input becomes compact JSON text (see [`tool_arguments`]); server tools, a `tool_choice`
    /// other than `auto`/`any`/`none`/`tool`, its `disable_parallel_tool_use`, and every field
    /// in `extra` but `context_management` are dropped (a `context_management` that does not
    /// parse too: refusing it is the provider's part). `max_tokens` becomes `Some`; `include_usage` is `true`, since the
    /// API always reports usage.
    pub fn to_prompt(&self) -> Prompt {
        let system = match &self.system {
            None => Vec::new(),
            Some(SystemPrompt::Text(text)) => vec![text.clone()],
            Some(SystemPrompt::Blocks(blocks)) => blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(text) => Some(text.text.clone()),
                    _ => None,
                })
                .collect(),
        };
        let mut messages = Vec::new();
        for message in &self.messages {
            match message.role {
                Role::User => push_user_messages(&message.content, &mut messages),
                Role::Assistant => messages.push(assistant_prompt_message(&message.content)),
            }
        }
        name_tool_results(&mut messages);
        Prompt {
            model: self.model.clone(),
            system: join_system(system),
            messages,
            tools: self.tools.iter().filter(|tool| matches!(tool.kind.as_deref(), None | Some("custom"))).map(AnthropicTool::to_spec).collect(),
            tool_choice: self.tool_choice.as_ref().map_or(ToolChoice::Auto, tool_choice),
            max_output_tokens: Some(self.max_tokens),
            stream: self.stream,
            include_usage: true,
            context_management: extra_field(&self.extra, CONTEXT_MANAGEMENT).ok().flatten(),
        }
    }
}

/// The request member of the context edits.
const CONTEXT_MANAGEMENT: &str = "context_management";

/// The blocks of the last message if it is a user message that tool results are being
/// gathered in: its content ends with a `tool_result` (a text block closes it).
fn open_tool_results(messages: &mut [AnthropicMessage]) -> Option<&mut Vec<ContentBlock>> {
    match messages.last_mut()? {
        AnthropicMessage { role: Role::User, content: AnthropicContent::Blocks(blocks) } if matches!(blocks.last(), Some(ContentBlock::ToolResult(_))) => {
            Some(blocks)
        }
        _ => None,
    }
}

/// An assistant message: string content, or blocks when it called tools.
fn assistant_message(text: &crate::Text, tool_calls: &[ToolCall], reasoning: &[Reasoning]) -> AnthropicMessage {
    let thinking: Vec<ContentBlock> = reasoning.iter().filter_map(reasoning_block).collect();
    let content = if tool_calls.is_empty() && thinking.is_empty() {
        AnthropicContent::Text(text.clone())
    } else {
        // The API requires the turn's thinking, signatures intact, ahead of its tool_use.
        let text = (!text.is_empty()).then(|| ContentBlock::text(text));
        let calls = tool_calls.iter().map(ToolUseBlock::from_tool_call);
        AnthropicContent::Blocks(thinking.into_iter().chain(text).chain(calls.map(ContentBlock::ToolUse)).collect())
    };
    AnthropicMessage { role: Role::Assistant, content }
}

/// The neutral messages of one user message: its tool results, and its text (blocks
/// concatenated) wherever it stood among them. A message with neither (e.g. only an image)
/// becomes an empty user message, so the turn is not lost.
pub(super) fn push_user_messages(content: &AnthropicContent, messages: &mut Vec<Message>) {
    let blocks = match content {
        AnthropicContent::Text(text) => {
            messages.push(Message::User { text: text.clone() });
            return;
        }
        AnthropicContent::Blocks(blocks) => blocks,
    };
    let first = messages.len();
    let mut text: Option<String> = None;
    for block in blocks {
        match block {
            ContentBlock::Text(block) => text.get_or_insert_default().push_str(&block.text),
            ContentBlock::ToolResult(result) => {
                if let Some(text) = text.take() {
                    messages.push(Message::User { text: text.into() });
                }
                messages.push(Message::ToolResult {
                    call_id: result.tool_use_id.as_str().into(),
                    tool_name: crate::Text::default(),
                    content: result.content.as_ref().map(AnthropicContent::to_text).unwrap_or_default(),
                    is_error: result.is_error.unwrap_or(false),
                });
            }
            _ => {}
        }
    }
    if text.is_some() || messages.len() == first {
        messages.push(Message::User { text: text.unwrap_or_default().into() });
    }
}

/// The neutral form of an assistant message: its text blocks concatenated and its tool calls.
fn assistant_prompt_message(content: &AnthropicContent) -> Message {
    let blocks: &[ContentBlock] = match content {
        AnthropicContent::Text(_) => &[],
        AnthropicContent::Blocks(blocks) => blocks,
    };
    let tool_calls = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolUse(call) => Some(call.to_tool_call()),
            _ => None,
        })
        .collect();
    Message::Assistant { text: content.to_text(), tool_calls, reasoning: blocks.iter().filter_map(block_reasoning).collect() }
}

/// The block an Anthropic assistant message carries for `reasoning`: thinking with its
/// signature, or redacted thinking; other APIs' reasoning has no Anthropic form.
pub(super) fn reasoning_block(reasoning: &Reasoning) -> Option<ContentBlock> {
    match reasoning {
        Reasoning::Thinking { thinking, signature } => {
            Some(ContentBlock::Thinking(ThinkingBlock { thinking: thinking.clone(), signature: signature.clone().unwrap_or_default(), extra: Map::new() }))
        }
        Reasoning::RedactedThinking { data } => Some(ContentBlock::Other(json!({"type": "redacted_thinking", "data": data}))),
        Reasoning::ResponsesItem { .. } | Reasoning::ResponsesCompaction { .. } | Reasoning::ReasoningContent { .. } => None,
    }
}

/// The reasoning a block carries: thinking (with its signature) or redacted thinking.
pub(super) fn block_reasoning(block: &ContentBlock) -> Option<Reasoning> {
    match block {
        ContentBlock::Thinking(block) => {
            Some(Reasoning::Thinking { thinking: block.thinking.clone(), signature: Some(block.signature.clone()).filter(|s| !s.is_empty()) })
        }
        ContentBlock::Other(value) if value.get("type").and_then(Value::as_str) == Some("redacted_thinking") => {
            Some(Reasoning::RedactedThinking { data: value.get("data").and_then(Value::as_str).unwrap_or_default().to_owned() })
        }
        _ => None,
    }
}

/// The neutral tool choice of an Anthropic `tool_choice`; unknown types count as auto.
fn tool_choice(value: &Value) -> ToolChoice {
    match value.get("type").and_then(Value::as_str) {
        Some("none") => ToolChoice::None,
        Some("any") => ToolChoice::Required,
        Some("tool") => value.get("name").and_then(Value::as_str).map_or(ToolChoice::Auto, |name| ToolChoice::Named(name.to_owned())),
        _ => ToolChoice::Auto,
    }
}

/// The `input` object for tool-call arguments (JSON text). Arguments that are not a JSON object
/// (the API requires one) are kept as `{"_raw": "<arguments>"}`, except empty arguments, which
/// mean no arguments: `{}`.
pub fn tool_input(arguments: &str) -> Value {
    if arguments.is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(input @ Value::Object(_)) => input,
        _ => json!({ "_raw": arguments }),
    }
}

/// The arguments text of a `tool_use` input: compact JSON. (So arguments that were not compact,
/// or not a JSON object, do not survive a trip through [`tool_input`] byte for byte.)
pub fn tool_arguments(input: &Value) -> String {
    input.to_string()
}

impl ContentBlock {
    /// A text block without cache control.
    pub(super) fn text(text: &str) -> Self {
        Self::Text(TextBlock { text: text.to_owned(), cache_control: None, extra: Map::new() })
    }
}

impl ToolUseBlock {
    /// The block for a neutral tool call (see [`tool_input`]).
    pub fn from_tool_call(call: &ToolCall) -> Self {
        Self { id: call.id.to_string(), name: call.name.to_string(), input: tool_input(&call.arguments), extra: Map::new() }
    }

    /// The neutral form (see [`tool_arguments`]).
    pub fn to_tool_call(&self) -> ToolCall {
        ToolCall { id: self.id.as_str().into(), name: self.name.as_str().into(), arguments: tool_arguments(&self.input).into() }
    }
}

impl AnthropicTool {
    /// The client tool for a neutral declaration.
    fn from_spec(spec: &ToolSpec) -> Self {
        Self {
            kind: None,
            name: spec.name.clone(),
            description: Some(spec.description.clone()),
            input_schema: spec.parameters.clone(),
            cache_control: None,
            extra: Map::new(),
        }
    }

    /// The neutral form (a missing description becomes empty; cache control is dropped).
    fn to_spec(&self) -> ToolSpec {
        ToolSpec { name: self.name.clone(), description: self.description.clone().unwrap_or_default(), parameters: self.input_schema.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::tests::rich_prompt;

    /// A third-turn request shaped like the API reference's tool-use and prompt-caching
    /// examples: cached system blocks and tools, a thinking block sent back, parallel tool
    /// results (one failed) next to the user's next words, an image.
    fn api_request() -> Value {
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": [
                {"type": "text", "text": "You are a travel assistant."},
                {"type": "text", "text": "Today is Monday.", "cache_control": {"type": "ephemeral"}}
            ],
            "tools": [
                {"name": "get_weather", "description": "Get the current weather in a given location",
                 "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}},
                {"name": "get_time", "description": "Get the current time",
                 "input_schema": {"type": "object", "properties": {}}, "cache_control": {"type": "ephemeral"}},
                {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
            ],
            "tool_choice": {"type": "auto", "disable_parallel_tool_use": false},
            "messages": [
                {"role": "user", "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                    {"type": "text", "text": "Where is this, and what's the weather there?"}
                ]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Looks like Paris.", "signature": "EqQBCgIYAhIM"},
                    {"type": "text", "text": "That is Paris. Let me check."},
                    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"location": "Paris, France"}},
                    {"type": "tool_use", "id": "toolu_01B", "name": "get_time", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "15 degrees"},
                    {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [{"type": "text", "text": "clock unavailable"}], "is_error": true},
                    {"type": "text", "text": "Thanks!"}
                ]}
            ],
            "stream": true,
            "thinking": {"type": "enabled", "budget_tokens": 2048},
            "metadata": {"user_id": "user-123"}
        })
    }

    #[test]
    fn a_realistic_request_round_trips() {
        let wire = api_request();
        let request: MessagesRequest = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(request.tools[2].kind.as_deref(), Some("web_search_20250305"));
        let AnthropicContent::Blocks(blocks) = &request.messages[0].content else { panic!("expected blocks") };
        assert!(matches!(blocks[0], ContentBlock::Other(_)));
        assert_eq!(serde_json::to_value(&request).unwrap(), wire);
    }

    #[test]
    fn to_prompt_of_a_realistic_request() {
        let request: MessagesRequest = serde_json::from_value(api_request()).unwrap();
        let call = |id: &str, name: &str, arguments: &str| ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() };
        assert_eq!(
            request.to_prompt(),
            Prompt {
                model: "claude-sonnet-4-5".into(),
                system: Some("You are a travel assistant.\n\nToday is Monday.".into()),
                messages: vec![
                    Message::User { text: "Where is this, and what's the weather there?".into() },
                    Message::Assistant {
                        text: "That is Paris. Let me check.".into(),
                        tool_calls: vec![
                            call("toolu_01A09q90qw90lq917835lq9", "get_weather", r#"{"location":"Paris, France"}"#),
                            call("toolu_01B", "get_time", "{}"),
                        ],
                        reasoning: vec![Reasoning::Thinking { thinking: "Looks like Paris.".into(), signature: Some("EqQBCgIYAhIM".into()) }],
                    },
                    Message::ToolResult {
                        call_id: "toolu_01A09q90qw90lq917835lq9".into(),
                        tool_name: "get_weather".into(),
                        content: "15 degrees".into(),
                        is_error: false,
                    },
                    Message::ToolResult { call_id: "toolu_01B".into(), tool_name: "get_time".into(), content: "clock unavailable".into(), is_error: true },
                    Message::User { text: "Thanks!".into() },
                ],
                tools: vec![
                    ToolSpec {
                        name: "get_weather".into(),
                        description: "Get the current weather in a given location".into(),
                        parameters: json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
                    },
                    ToolSpec { name: "get_time".into(), description: "Get the current time".into(), parameters: json!({"type": "object", "properties": {}}) },
                ],
                tool_choice: ToolChoice::Auto,
                max_output_tokens: Some(1024),
                stream: true,
                include_usage: true,
                context_management: None,
            }
        );
    }

    #[test]
    fn prompt_round_trips() {
        let prompt = rich_prompt();
        let request = MessagesRequest::from_prompt(&prompt);
        assert_eq!(request.to_prompt(), prompt);
        let wire = serde_json::to_value(&request).unwrap();
        assert_eq!(wire["system"], json!("You are a coding agent.\n\nBe brief."));
        assert_eq!(wire["tool_choice"], json!({"type": "tool", "name": "read_file"}));
        let roles: Vec<&str> = wire["messages"].as_array().unwrap().iter().map(|message| message["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user"], "roles alternate");
        assert_eq!(
            wire["messages"][1]["content"][2],
            json!({"type": "tool_use", "id": "call_2", "name": "read_file", "input": {"path": "src/lib.rs", "limit": 40}})
        );
        assert_eq!(
            wire["messages"][2]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "call_1", "content": "lib.rs\nmain.rs"},
                {"type": "tool_result", "tool_use_id": "call_2", "content": "error: permission denied", "is_error": true},
                {"type": "text", "text": "Try again with sudo."}
            ])
        );
        let reparsed: MessagesRequest = serde_json::from_value(wire).unwrap();
        assert_eq!(reparsed, request);
    }

    #[test]
    fn tool_results_after_user_text_start_a_new_message() {
        let result = |id: &str| Message::ToolResult { call_id: id.into(), tool_name: crate::Text::default(), content: "ok".into(), is_error: false };
        let user = |text: &str| Message::User { text: text.into() };
        let prompt = Prompt { messages: vec![result("a"), user("x"), result("b"), user("y"), user("z")], ..Prompt::default() };
        let request = MessagesRequest::from_prompt(&prompt);
        assert_eq!(request.messages.len(), 3);
        assert_eq!(request.max_tokens, DEFAULT_MAX_TOKENS);
        assert_eq!(request.messages[2].content, AnthropicContent::Text("z".into()));
        assert_eq!(request.to_prompt(), Prompt { max_output_tokens: Some(DEFAULT_MAX_TOKENS), include_usage: true, ..prompt });
    }

    #[test]
    fn tool_choices_convert_both_ways() {
        for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required, ToolChoice::Named("f".into())] {
            let prompt = Prompt { tool_choice: choice.clone(), ..Prompt::default() };
            assert_eq!(MessagesRequest::from_prompt(&prompt).to_prompt().tool_choice, choice);
        }
    }

    #[test]
    fn arguments_become_an_input_object() {
        assert_eq!(tool_input(r#"{"a": [1, 2]}"#), json!({"a": [1, 2]}));
        assert_eq!(tool_input(""), json!({}));
        assert_eq!(tool_input(r#"{"a": "#), json!({"_raw": r#"{"a": "#}));
        assert_eq!(tool_input("[1]"), json!({"_raw": "[1]"}));
        assert_eq!(tool_arguments(&json!({"a": [1, 2]})), r#"{"a":[1,2]}"#);
    }

    #[test]
    fn an_image_only_user_message_is_kept_as_empty_text() {
        let request: MessagesRequest = serde_json::from_value(json!({
            "model": "m", "max_tokens": 10,
            "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]}]
        }))
        .unwrap();
        assert_eq!(request.to_prompt().messages, [Message::User { text: crate::Text::default() }]);
    }
}
