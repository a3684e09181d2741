//! The request body the agent sends and the mock server reads.
//!
//! Only the fields the harness acts on are typed; everything else (`temperature`, `n`,
//! `parallel_tool_calls`, ...) is kept verbatim in `extra`, so a request survives a
//! parse/serialize round trip unchanged. [`ChatRequest::from_prompt`] and
//! [`ChatRequest::to_prompt`] convert to and from the provider-neutral [`Prompt`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ToolCall;
use crate::message::{Message, name_tool_results};
use crate::prompt::{Prompt, ToolChoice, ToolSpec, join_system};

/// A Chat Completions request body (read in one pass by `read_request`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatRequest {
    /// Model name.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ChatTool>,
    /// `"auto"`, `"none"`, `"required"` or a specific function, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Whether to stream the answer as SSE.
    #[serde(default)]
    pub stream: bool,
    /// Streaming options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Legacy output-token limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Output-token limit (including reasoning tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    /// The request the agent sends for `prompt`: the system text as a first `system` message,
    /// assistant `content: null` when a turn only called tools, tools with their description,
    /// `tool_choice` only when not auto (`"none"`, `"required"` or a named function),
    /// `stream_options.include_usage` when streaming, and the limit as `max_completion_tokens`.
    pub fn from_prompt(prompt: &Prompt) -> Self {
        Self::from_owned_prompt(prompt.clone())
    }

    /// [`Self::from_prompt`], moving the texts instead of copying them (the agent's send path,
    /// which builds the prompt only to send it).
    pub fn from_owned_prompt(prompt: Prompt) -> Self {
        let system = prompt.system.map(|system| ChatMessage::System { content: MessageContent::Text(system.into()), name: None });
        Self {
            model: prompt.model,
            messages: system.into_iter().chain(prompt.messages.into_iter().map(ChatMessage::from_prompt_message)).collect(),
            tools: prompt.tools.into_iter().map(ChatTool::from_spec).collect(),
            tool_choice: chat_tool_choice(&prompt.tool_choice),
            stream: prompt.stream,
            stream_options: prompt.stream.then_some(StreamOptions { include_usage: prompt.include_usage }),
            max_tokens: None,
            max_completion_tokens: prompt.max_output_tokens,
            extra: Map::new(),
        }
    }

    /// The neutral form of this request. Lossy: `system` and `developer` messages anywhere in
    /// the conversation become [`Prompt::system`] (in order); content parts other than text
    /// (images, audio, files) and refusals are dropped; tool results get `is_error: false` (Chat
    /// Completions cannot say a tool failed); `max_tokens` counts when `max_completion_tokens`
    /// is absent; a `tool_choice` other than a mode or a named function counts as auto; and
    /// every field kept in `extra` is dropped.
    pub fn to_prompt(&self) -> Prompt {
        self.clone().into_prompt()
    }

    /// [`Self::to_prompt`], moving the texts instead of copying them (the mock server's
    /// request path).
    pub fn into_prompt(self) -> Prompt {
        let mut system = Vec::new();
        let mut messages = Vec::with_capacity(self.messages.len());
        for message in self.messages {
            match message {
                ChatMessage::System { content, .. } | ChatMessage::Developer { content, .. } => {
                    system.push(content.into_text());
                }
                ChatMessage::User { content, .. } => messages.push(Message::User { text: content.into_text() }),
                ChatMessage::Assistant { content, tool_calls, .. } => messages.push(Message::assistant(
                    content.map(MessageContent::into_text).unwrap_or_default(),
                    tool_calls.into_iter().map(ChatToolCall::into_tool_call).collect(),
                )),
                ChatMessage::Tool { tool_call_id, content } => messages.push(Message::ToolResult {
                    call_id: tool_call_id,
                    tool_name: crate::Text::default(),
                    content: content.into_text(),
                    is_error: false,
                }),
            }
        }
        name_tool_results(&mut messages);
        Prompt {
            model: self.model,
            system: join_system(system),
            messages,
            tools: self.tools.into_iter().map(ChatTool::into_spec).collect(),
            tool_choice: ToolChoice::from_openai_value(self.tool_choice.as_ref(), "/function/name"),
            max_output_tokens: self.max_completion_tokens.or(self.max_tokens),
            stream: self.stream,
            include_usage: self.stream_options.as_ref().is_some_and(|options| options.include_usage),
            context_management: None,
        }
    }
}

/// The Chat Completions `tool_choice` for a neutral choice; absent for auto (the default).
fn chat_tool_choice(choice: &ToolChoice) -> Option<Value> {
    match choice {
        ToolChoice::Auto => None,
        ToolChoice::Named(name) => Some(serde_json::json!({"type": "function", "function": {"name": name}})),
        mode => mode.openai_mode().map(Value::from),
    }
}

/// `stream_options` of a request.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StreamOptions {
    /// Ask for a final `choices: []` chunk carrying the usage.
    #[serde(default)]
    pub include_usage: bool,
}

/// One conversation message, tagged by its `role`. Read in one pass when `role` comes first
/// (`read_message`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// System instructions.
    System {
        /// The instructions.
        content: MessageContent,
        /// Optional participant name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// Developer instructions (the newer name for system messages).
    Developer {
        /// The instructions.
        content: MessageContent,
        /// Optional participant name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// A user message.
    User {
        /// What the user said.
        content: MessageContent,
        /// Optional participant name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// An earlier assistant turn.
    Assistant {
        /// The assistant's text; `null` when it only called tools.
        #[serde(default)]
        content: Option<MessageContent>,
        /// Tool calls the assistant made.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ChatToolCall>,
        /// A refusal message, if the model refused.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refusal: Option<String>,
        /// Optional participant name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// The result of a tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: crate::Text,
        /// The tool's output.
        content: MessageContent,
    },
}

impl ChatMessage {
    /// The wire form of a neutral message (see [`ChatRequest::from_prompt`]).
    pub(crate) fn from_prompt_message(message: Message) -> Self {
        match message {
            Message::User { text } => Self::User { content: MessageContent::Text(text), name: None },
            Message::Assistant { text, tool_calls, .. } => Self::Assistant {
                content: (!text.is_empty() || tool_calls.is_empty()).then_some(MessageContent::Text(text)),
                tool_calls: tool_calls.into_iter().map(ChatToolCall::from_owned_tool_call).collect(),
                refusal: None,
                name: None,
            },
            Message::ToolResult { call_id, content, .. } => Self::Tool { tool_call_id: call_id, content: MessageContent::Text(content) },
        }
    }
}

/// Message content: a plain string or a list of typed parts (read in one pass, `read_message`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// Plain text (shared: the mock's parse of a resent history clones it by count).
    Text(crate::Text),
    /// Typed parts (text, images, ...).
    Parts(Vec<ContentPart>),
}

impl MessageContent {
    /// The text of the content: the string itself, or all parts' `text` concatenated.
    pub fn to_text(&self) -> crate::Text {
        match self {
            Self::Text(text) => text.clone(),
            Self::Parts(parts) => parts.iter().filter_map(|part| part.text.as_deref()).collect::<String>().into(),
        }
    }

    /// [`Self::to_text`], moving a plain string instead of copying it.
    pub fn into_text(self) -> crate::Text {
        match self {
            Self::Text(text) => text,
            parts @ Self::Parts(_) => parts.to_text(),
        }
    }
}

/// One typed part of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentPart {
    /// The part type, e.g. `"text"` or `"image_url"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text of a text part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The type-specific payload of other parts, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatTool {
    /// Tool type; `"function"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The function definition.
    pub function: FunctionDef,
}

impl ChatTool {
    /// The wire form of a neutral tool declaration (always with its description, never strict).
    fn from_spec(spec: ToolSpec) -> Self {
        Self {
            kind: "function".to_owned(),
            function: FunctionDef { name: spec.name, description: Some(spec.description), parameters: spec.parameters, strict: None },
        }
    }

    /// The neutral form (a missing description becomes empty; `strict` is dropped).
    fn into_spec(self) -> ToolSpec {
        ToolSpec { name: self.function.name, description: self.function.description.unwrap_or_default(), parameters: self.function.parameters }
    }
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDef {
    /// Function name.
    pub name: String,
    /// What the function does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments (`null` when absent, and then not serialized).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub parameters: Value,
    /// Whether the arguments must match the schema exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatToolCall {
    /// Call id.
    pub id: crate::Text,
    /// Call type; `"function"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The called function.
    pub function: FunctionCall,
}

/// The function part of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Function name.
    pub name: crate::Text,
    /// Arguments as raw JSON text.
    pub arguments: crate::Text,
}

impl ChatToolCall {
    /// The wire form of a neutral tool call (type `"function"`).
    pub fn from_tool_call(c: &ToolCall) -> Self {
        Self::from_owned_tool_call(c.clone())
    }

    /// [`Self::from_tool_call`], moving the strings.
    pub fn from_owned_tool_call(c: ToolCall) -> Self {
        Self { id: c.id, kind: "function".to_owned(), function: FunctionCall { name: c.name, arguments: c.arguments } }
    }

    /// The neutral form of this tool call.
    pub fn to_tool_call(&self) -> ToolCall {
        self.clone().into_tool_call()
    }

    /// [`Self::to_tool_call`], moving the strings.
    pub fn into_tool_call(self) -> ToolCall {
        ToolCall { id: self.id, name: self.function.name, arguments: self.function.arguments }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::tests::{rich_prompt, without_error_flags};
    use serde_json::json;

    /// A realistic second-turn agent request: the model called a tool and gets its result back.
    fn agent_request() -> Value {
        json!({
            "model": "gpt-4o-2024-08-06",
            "messages": [
                {"role": "system", "content": "You are a coding agent."},
                {"role": "user", "content": [
                    {"type": "text", "text": "What's in "},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
                    {"type": "text", "text": "README.md?"}
                ], "name": "alice"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"README.md\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "# reloop"},
                {"role": "developer", "content": "Answer briefly."}
            ],
            "tools": [
                {"type": "function", "function": {
                    "name": "read_file",
                    "description": "Read a file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                    "strict": true
                }},
                {"type": "function", "function": {"name": "list_dir"}}
            ],
            "tool_choice": "auto",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_completion_tokens": 1024,
            "temperature": 0.2,
            "parallel_tool_calls": false
        })
    }

    #[test]
    fn a_realistic_request_round_trips() {
        let wire = agent_request();
        let request: ChatRequest = serde_json::from_value(wire.clone()).unwrap();
        assert!(request.stream);
        assert_eq!(request.stream_options, Some(StreamOptions { include_usage: true }));
        assert_eq!(request.max_completion_tokens, Some(1024));
        assert_eq!(request.extra.get("temperature"), Some(&json!(0.2)));
        assert_eq!(request.tools[1].function.parameters, Value::Null);
        let ChatMessage::Assistant { content: None, tool_calls, .. } = &request.messages[2] else {
            panic!("expected an assistant tool-call message, got {:?}", request.messages[2]);
        };
        assert_eq!(tool_calls[0].to_tool_call().arguments, r#"{"path":"README.md"}"#);
        assert_eq!(serde_json::to_value(&request).unwrap(), wire);
    }

    #[test]
    fn minimal_request_serializes_stream_false() {
        let request: ChatRequest = serde_json::from_value(json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})).unwrap();
        assert_eq!(serde_json::to_string(&request).unwrap(), r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}"#);
    }

    #[test]
    fn content_to_text_concatenates_text_parts() {
        let request: ChatRequest = serde_json::from_value(agent_request()).unwrap();
        let ChatMessage::User { content, .. } = &request.messages[1] else { panic!("expected a user message") };
        assert_eq!(content.to_text(), "What's in README.md?");
        assert_eq!(MessageContent::Text("plain".into()).to_text(), "plain");
    }

    #[test]
    fn from_prompt_matches_what_the_agent_sends() {
        // The agent's `to_chat_request` for: system "s", a user turn, a tool-only assistant
        // turn, its result, the last step (tools forbidden) with a 10-token slot.
        let prompt = Prompt {
            model: "m".into(),
            system: Some("s".into()),
            messages: vec![
                Message::User { text: "go".into() },
                Message::Assistant {
                    text: crate::Text::default(),
                    tool_calls: vec![ToolCall { id: "call_1".into(), name: "read".into(), arguments: "{}".into() }],
                    reasoning: Vec::new(),
                },
                Message::ToolResult { call_id: "call_1".into(), tool_name: "read".into(), content: "ok".into(), is_error: true },
                Message::Assistant { text: crate::Text::default(), tool_calls: Vec::new(), reasoning: Vec::new() },
            ],
            tools: vec![ToolSpec { name: "read".into(), description: "r".into(), parameters: json!({"type": "object"}) }],
            tool_choice: ToolChoice::None,
            max_output_tokens: Some(10),
            stream: true,
            include_usage: true,
            context_management: None,
        };
        assert_eq!(
            serde_json::to_string(&ChatRequest::from_prompt(&prompt)).unwrap(),
            concat!(
                r#"{"model":"m","messages":[{"role":"system","content":"s"},"#,
                r#"{"role":"user","content":"go"},"#,
                r#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{}"}}]},"#,
                r#"{"role":"tool","tool_call_id":"call_1","content":"ok"},"#,
                r#"{"role":"assistant","content":""}],"#,
                r#""tools":[{"type":"function","function":{"name":"read","description":"r","parameters":{"type":"object"}}}],"#,
                r#""tool_choice":"none","stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":10}"#,
            )
        );
        let quiet = Prompt { stream: false, tool_choice: ToolChoice::Auto, ..prompt };
        let request = ChatRequest::from_prompt(&quiet);
        assert_eq!((request.stream_options, request.tool_choice), (None, None));
    }

    #[test]
    fn prompt_round_trips_except_error_flags() {
        let prompt = rich_prompt();
        let request = ChatRequest::from_prompt(&prompt);
        assert_eq!(request.tool_choice, Some(json!({"type": "function", "function": {"name": "read_file"}})));
        assert_eq!(request.to_prompt(), without_error_flags(prompt));
        for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required] {
            let prompt = Prompt { tool_choice: choice, ..Prompt::default() };
            assert_eq!(ChatRequest::from_prompt(&prompt).to_prompt(), prompt);
        }
    }

    #[test]
    fn to_prompt_of_a_realistic_request() {
        let request: ChatRequest = serde_json::from_value(agent_request()).unwrap();
        assert_eq!(
            request.to_prompt(),
            Prompt {
                model: "gpt-4o-2024-08-06".into(),
                system: Some("You are a coding agent.\n\nAnswer briefly.".into()),
                messages: vec![
                    Message::User { text: "What's in README.md?".into() },
                    Message::Assistant {
                        text: crate::Text::default(),
                        tool_calls: vec![ToolCall { id: "call_1".into(), name: "read_file".into(), arguments: r#"{"path":"README.md"}"#.into() }],
                        reasoning: Vec::new(),
                    },
                    Message::ToolResult { call_id: "call_1".into(), tool_name: "read_file".into(), content: "# reloop".into(), is_error: false },
                ],
                tools: vec![
                    ToolSpec {
                        name: "read_file".into(),
                        description: "Read a file".into(),
                        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                    },
                    ToolSpec { name: "list_dir".into(), description: String::new(), parameters: Value::Null },
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
    fn tool_calls_convert_both_ways() {
        let call = ToolCall { id: "call_9".into(), name: "grep".into(), arguments: r#"{"q":"x"}"#.into() };
        let wire = ChatToolCall::from_tool_call(&call);
        assert_eq!(
            serde_json::to_value(&wire).unwrap(),
            json!({"id": "call_9", "type": "function", "function": {"name": "grep", "arguments": "{\"q\":\"x\"}"}})
        );
        assert_eq!(wire.to_tool_call(), call);
    }
}
