//! The Responses API request body (`POST /v1/responses`) and the items it is made of.
//!
//! A Responses conversation is a flat list of items rather than role-tagged messages: a message,
//! a function call and its output are siblings. The same item shapes come back in a response's
//! `output`, and clients send them back verbatim as the next request's `input`, so [`InputItem`]
//! serves both directions. Only what the harness acts on is typed; every other field is kept in
//! `extra` (and unknown item types whole, in [`InputItem::Other`]), so a request survives a
//! parse/serialize round trip.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value, json};

use crate::ToolCall;
use crate::context_management::{COMPACTION_ITEM, ContextEdit, ContextManagement, ResponsesContextManagement, compaction_item_content, extra_field};
use crate::message::{Message, Reasoning, name_tool_results};
use crate::openai_chat::MessageContent;
use crate::prompt::{Prompt, ToolChoice, ToolSpec, join_system, push_tool_call};
use crate::tagged::{payload, serialize_tagged};
use crate::text_or_list::{TextOrList, text_or_list};

/// A Responses request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesRequest {
    /// Model name.
    pub model: String,
    /// System-level instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The conversation. A plain string is accepted too, and read as one user message (it
    /// re-serializes as that message, which the API treats the same).
    #[serde(deserialize_with = "input_items")]
    pub input: Vec<InputItem>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ResponsesTool>,
    /// `"auto"`, `"none"`, `"required"` or `{"type": "function", "name": ...}`, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Whether to stream the answer as SSE events.
    #[serde(default)]
    pub stream: bool,
    /// Output-token limit (including reasoning tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Whether the provider may store the response for later reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Every other field (`reasoning`, `include`, `previous_response_id`, ...), verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One item of a conversation: request `input` or response `output`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputItem {
    /// A message (`"type": "message"`, which input may omit).
    Message(MessageItem),
    /// A function call the model made (`"type": "function_call"`).
    FunctionCall(FunctionCallItem),
    /// The result of a function call (`"type": "function_call_output"`).
    FunctionCallOutput(FunctionCallOutputItem),
    /// Any other item (reasoning, custom tool calls, item references, ...), verbatim.
    Other(Value),
}

/// A message item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageItem {
    /// `Some("message")` when the item carried its type; input messages may omit it.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Item id (output messages have one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Who speaks.
    pub role: Role,
    /// A plain string, or typed parts (`input_text`, `output_text`, `input_image`, ...).
    pub content: MessageContent,
    /// `in_progress` / `completed` / `incomplete` (output messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The role of a [`MessageItem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
    /// System instructions.
    System,
    /// Developer instructions (the newer name for system).
    Developer,
}

/// A function call item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallItem {
    /// Item id (`fc_...`); output items have one, input may omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The call id (`call_...`) that the function's output refers to.
    pub call_id: String,
    /// Function name.
    pub name: String,
    /// Arguments as raw JSON text.
    pub arguments: String,
    /// `in_progress` / `completed` (output items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A function call output item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallOutputItem {
    /// The call this answers.
    pub call_id: String,
    /// The function's output: a string, or typed parts.
    pub output: MessageContent,
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A tool offered to the model. Only function tools are converted to a [`Prompt`]; built-in
/// tools (`web_search`, `custom`, ...) parse too, with their own fields in `extra` (and an empty
/// `name` when they have none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesTool {
    /// Tool type; `"function"` for function tools.
    #[serde(rename = "type")]
    pub kind: String,
    /// Function name (empty, and not serialized, for built-in tools without one).
    #[serde(default, skip_serializing_if = "String::is_empty")]
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
    /// Every other field, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResponsesRequest {
    /// The request for `prompt`: the system text as `instructions`; each message as an item
    /// (user and assistant text as `"type": "message"` with string content, an assistant turn's
    /// tool calls as `function_call` items after its text, which is omitted when empty, tool
    /// results as `function_call_output`); function tools; `tool_choice` only when not auto; and
    /// `store: false`, since the prompt carries the whole conversation each time.
    pub fn from_prompt(prompt: &Prompt) -> Self {
        Self {
            model: prompt.model.clone(),
            instructions: prompt.system.clone(),
            input: prompt.messages.iter().flat_map(prompt_items).collect(),
            tools: prompt.tools.iter().map(ResponsesTool::from_spec).collect(),
            tool_choice: match &prompt.tool_choice {
                ToolChoice::Auto => None,
                ToolChoice::Named(name) => Some(serde_json::json!({"type": "function", "name": name})),
                mode => mode.openai_mode().map(Value::from),
            },
            stream: prompt.stream,
            max_output_tokens: prompt.max_output_tokens,
            store: Some(false),
            extra: compaction(prompt).into_iter().map(|entries| (CONTEXT_MANAGEMENT.to_owned(), json!(entries))).collect(),
        }
    }

    /// The neutral form of this request. Lossy: `instructions` and `system` / `developer`
    /// messages all become [`Prompt::system`] (in that order); content parts other than text
    /// are dropped; function calls join the assistant message before them (so an assistant
    /// message followed by a tool-only one merges into one); tool results get `is_error: false`
    /// (the API cannot say a function failed); items other than messages, function calls and
    /// their outputs (reasoning, custom tool calls, ...), non-function tools, a `tool_choice`
    /// other than a mode or a named function, and every field in `extra` but
    /// `context_management` are dropped (its compaction entries are read as compaction edits;
    /// one that does not parse is dropped too: refusing it is the provider's part).
    /// `include_usage` is `true`: the API always reports usage.
    pub fn to_prompt(&self) -> Prompt {
        let mut system: Vec<String> = self.instructions.iter().cloned().collect();
        let mut messages = Vec::new();
        for item in &self.input {
            match item {
                InputItem::Message(message) => {
                    let text = message.content.to_text();
                    match message.role {
                        Role::System | Role::Developer => system.push(text.to_string()),
                        Role::User => messages.push(Message::User { text }),
                        Role::Assistant => match reasoning_only(&mut messages) {
                            Some(open) => *open = text,
                            None => messages.push(Message::assistant(text, Vec::new())),
                        },
                    }
                }
                InputItem::Other(item) if item_reasoning(item).is_some() => {
                    let reasoning = item_reasoning(item).into_iter();
                    match reasoning_only(&mut messages) {
                        Some(_) => {
                            if let Some(Message::Assistant { reasoning: open, .. }) = messages.last_mut() {
                                open.extend(reasoning);
                            }
                        }
                        None => messages.push(Message::Assistant { text: crate::Text::default(), tool_calls: Vec::new(), reasoning: reasoning.collect() }),
                    }
                }
                InputItem::FunctionCall(call) => push_tool_call(&mut messages, call.to_tool_call()),
                InputItem::FunctionCallOutput(output) => {
                    messages.push(Message::ToolResult {
                        call_id: output.call_id.as_str().into(),
                        tool_name: crate::Text::default(),
                        content: output.output.to_text(),
                        is_error: false,
                    });
                }
                InputItem::Other(_) => {}
            }
        }
        name_tool_results(&mut messages);
        Prompt {
            model: self.model.clone(),
            system: join_system(system),
            messages,
            tools: self.tools.iter().filter(|tool| tool.kind == "function").map(ResponsesTool::to_spec).collect(),
            tool_choice: ToolChoice::from_openai_value(self.tool_choice.as_ref(), "/name"),
            max_output_tokens: self.max_output_tokens,
            stream: self.stream,
            include_usage: true,
            context_management: extra_field::<Vec<ResponsesContextManagement>>(&self.extra, CONTEXT_MANAGEMENT).ok().flatten().map(|entries| {
                ContextManagement { edits: entries.iter().filter_map(ResponsesContextManagement::to_compact).map(ContextEdit::Compact).collect() }
            }),
        }
    }
}

/// The request member of the compaction settings.
const CONTEXT_MANAGEMENT: &str = "context_management";

/// The `context_management` entries of `prompt`: its compaction edits, the one kind the API
/// documents. `None` when it asks for none, or only for edits the API lacks.
fn compaction(prompt: &Prompt) -> Option<Vec<ResponsesContextManagement>> {
    let edits = &prompt.context_management.as_ref()?.edits;
    let entries: Vec<ResponsesContextManagement> = edits
        .iter()
        .filter_map(|edit| if let ContextEdit::Compact(compact) = edit { Some(ResponsesContextManagement::of_compact(compact)) } else { None })
        .collect();
    (!entries.is_empty() || edits.is_empty()).then_some(entries)
}

/// The text of the last message when it is an assistant message holding only reasoning so
/// far: the message and calls after a reasoning item belong to the same turn.
fn reasoning_only(messages: &mut [Message]) -> Option<&mut crate::Text> {
    match messages.last_mut()? {
        Message::Assistant { text, tool_calls, reasoning } if text.is_empty() && tool_calls.is_empty() && !reasoning.is_empty() => Some(text),
        _ => None,
    }
}

/// The `reasoning` (or `compaction`) input item of `reasoning`; reasoning of other APIs has no
/// Responses form.
pub(super) fn reasoning_item(reasoning: &Reasoning) -> Option<InputItem> {
    if let Reasoning::ResponsesCompaction { id, encrypted_content } = reasoning {
        let mut item = Map::new();
        item.insert("type".into(), COMPACTION_ITEM.into());
        if let Some(id) = id {
            item.insert("id".into(), id.clone().into());
        }
        item.insert("encrypted_content".into(), encrypted_content.clone().into());
        return Some(InputItem::Other(Value::Object(item)));
    }
    let Reasoning::ResponsesItem { id, summary, encrypted_content } = reasoning else { return None };
    let mut item = Map::new();
    item.insert("type".into(), "reasoning".into());
    if let Some(id) = id {
        item.insert("id".into(), id.clone().into());
    }
    let summary: Vec<Value> = summary.iter().map(|text| serde_json::json!({"type": "summary_text", "text": text})).collect();
    item.insert("summary".into(), summary.into());
    if let Some(encrypted) = encrypted_content {
        item.insert("encrypted_content".into(), encrypted.clone().into());
    }
    Some(InputItem::Other(Value::Object(item)))
}

/// The reasoning a `reasoning` or `compaction` item (input or output) carries.
pub(super) fn item_reasoning(item: &Value) -> Option<Reasoning> {
    let text = |field: &str| item.get(field).and_then(Value::as_str).map(str::to_owned);
    if let Some(content) = compaction_item_content(item) {
        return Some(Reasoning::ResponsesCompaction { id: text("id"), encrypted_content: content.to_owned() });
    }
    (item.get("type").and_then(Value::as_str) == Some("reasoning")).then(|| Reasoning::ResponsesItem {
        id: item.get("id").and_then(Value::as_str).map(str::to_owned),
        summary: item
            .get("summary")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|part| part.get("text").and_then(Value::as_str).map(str::to_owned))
            .collect(),
        encrypted_content: item.get("encrypted_content").and_then(Value::as_str).map(str::to_owned),
    })
}

/// The items of one neutral message (see [`ResponsesRequest::from_prompt`]).
pub(crate) fn prompt_items(message: &Message) -> Vec<InputItem> {
    match message {
        Message::User { text } => vec![InputItem::message(Role::User, text)],
        Message::Assistant { text, tool_calls, reasoning } => {
            // Reasoning items go back first, by id and with their encrypted content.
            let reasoning = reasoning.iter().filter_map(reasoning_item);
            let text = (!text.is_empty() || tool_calls.is_empty()).then(|| InputItem::message(Role::Assistant, text));
            let calls = tool_calls.iter().map(|call| InputItem::FunctionCall(FunctionCallItem::from_tool_call(call, None, None)));
            reasoning.chain(text).chain(calls).collect()
        }
        Message::ToolResult { call_id, content, .. } => vec![InputItem::FunctionCallOutput(FunctionCallOutputItem {
            call_id: call_id.to_string(),
            output: MessageContent::Text(content.clone()),
            extra: Map::new(),
        })],
    }
}

impl InputItem {
    /// A `"type": "message"` item with plain-string content.
    fn message(role: Role, text: &crate::Text) -> Self {
        Self::Message(MessageItem {
            kind: Some("message".to_owned()),
            id: None,
            role,
            content: MessageContent::Text(text.clone()),
            status: None,
            extra: Map::new(),
        })
    }
}

impl FunctionCallItem {
    /// The item for a neutral tool call, with the given item id and status (output items have
    /// both, input items neither).
    pub fn from_tool_call(call: &ToolCall, id: Option<String>, status: Option<&str>) -> Self {
        Self {
            id,
            call_id: call.id.to_string(),
            name: call.name.to_string(),
            arguments: call.arguments.to_string(),
            status: status.map(str::to_owned),
            extra: Map::new(),
        }
    }

    /// The neutral form: the call id (not the item id) becomes [`ToolCall::id`].
    pub fn to_tool_call(&self) -> ToolCall {
        ToolCall { id: self.call_id.as_str().into(), name: self.name.as_str().into(), arguments: self.arguments.as_str().into() }
    }
}

impl ResponsesTool {
    /// The function tool for a neutral declaration (with its description, not strict).
    fn from_spec(spec: &ToolSpec) -> Self {
        Self {
            kind: "function".to_owned(),
            name: spec.name.clone(),
            description: Some(spec.description.clone()),
            parameters: spec.parameters.clone(),
            strict: None,
            extra: Map::new(),
        }
    }

    /// The neutral form (a missing description becomes empty; `strict` is dropped).
    fn to_spec(&self) -> ToolSpec {
        ToolSpec { name: self.name.clone(), description: self.description.clone().unwrap_or_default(), parameters: self.parameters.clone() }
    }
}

/// Reads `input`: a list of items, or a string meaning one user message.
fn input_items<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<InputItem>, D::Error> {
    Ok(match text_or_list(deserializer, "a string or a list of input items")? {
        TextOrList::Text(text) => vec![InputItem::Message(MessageItem {
            kind: None,
            id: None,
            role: Role::User,
            content: MessageContent::Text(text),
            status: None,
            extra: Map::new(),
        })],
        TextOrList::List(items) => items,
    })
}

/// `type` of function call items.
const FUNCTION_CALL: &str = "function_call";
/// `type` of function call output items.
const FUNCTION_CALL_OUTPUT: &str = "function_call_output";

impl Serialize for InputItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Message(message) => message.serialize(serializer),
            Self::FunctionCall(call) => serialize_tagged(FUNCTION_CALL, call, serializer),
            Self::FunctionCallOutput(output) => serialize_tagged(FUNCTION_CALL_OUTPUT, output, serializer),
            Self::Other(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for InputItem {
    /// Dispatches on `type` like the crate's other tagged unions: items of the known types
    /// must be well formed, others are kept whole. An item without a `type` is a message if it
    /// has a `role` (a message keeps its `type`, if any, in [`MessageItem::kind`]).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let kind = match value.get("type") {
            Some(kind) => kind.as_str().map(str::to_owned),
            None if value.get("role").is_some() => Some("message".to_owned()),
            None => None,
        };
        let item = match kind.as_deref() {
            Some("message") => serde_json::from_value(value).map(Self::Message),
            Some(FUNCTION_CALL) => payload(value).map(Self::FunctionCall),
            Some(FUNCTION_CALL_OUTPUT) => payload(value).map(Self::FunctionCallOutput),
            _ => Ok(Self::Other(value)),
        };
        item.map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::tests::{rich_prompt, without_error_flags};
    use serde_json::json;

    /// A second-turn request shaped like the API reference's function-calling example, with the
    /// extras real clients send (Codex-style typed messages, a reasoning item, a built-in tool).
    fn api_request() -> Value {
        json!({
            "model": "gpt-5.1",
            "instructions": "You are a helpful assistant.",
            "input": [
                {"role": "developer", "content": "Answer in Celsius."},
                {"role": "user", "content": [
                    {"type": "input_text", "text": "What's the weather like in Paris today?"},
                    {"type": "input_image", "image_url": "https://example.com/paris.jpg", "detail": "auto"}
                ]},
                {"type": "reasoning", "id": "rs_123", "summary": [], "encrypted_content": "gAAAAA..."},
                {"type": "function_call", "id": "fc_123", "call_id": "call_12345xyz", "name": "get_weather",
                 "arguments": "{\"location\":\"Paris, France\"}", "status": "completed"},
                {"type": "function_call_output", "call_id": "call_12345xyz", "output": "{\"temperature\": 14}"},
                {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                 "content": [{"type": "output_text", "text": "It is 14°C in Paris.", "annotations": []}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]}
            ],
            "tools": [
                {"type": "function", "name": "get_weather", "description": "Get current temperature for a given location.",
                 "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"], "additionalProperties": false},
                 "strict": true},
                {"type": "web_search"}
            ],
            "tool_choice": "auto",
            "stream": true,
            "max_output_tokens": 4096,
            "store": false,
            "reasoning": {"effort": "low", "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
            "parallel_tool_calls": true
        })
    }

    #[test]
    fn a_realistic_request_round_trips() {
        let wire = api_request();
        let request: ResponsesRequest = serde_json::from_value(wire.clone()).unwrap();
        assert!(matches!(request.input[2], InputItem::Other(_)));
        assert!(matches!(&request.input[3], InputItem::FunctionCall(call) if call.id.as_deref() == Some("fc_123")));
        assert_eq!(request.tools[1].name, "");
        assert_eq!(request.extra.get("parallel_tool_calls"), Some(&json!(true)));
        assert_eq!(serde_json::to_value(&request).unwrap(), wire);
    }

    #[test]
    fn to_prompt_of_a_realistic_request() {
        let request: ResponsesRequest = serde_json::from_value(api_request()).unwrap();
        assert_eq!(
            request.to_prompt(),
            Prompt {
                model: "gpt-5.1".into(),
                system: Some("You are a helpful assistant.\n\nAnswer in Celsius.".into()),
                messages: vec![
                    Message::User { text: "What's the weather like in Paris today?".into() },
                    Message::Assistant {
                        text: crate::Text::default(),
                        tool_calls: vec![ToolCall {
                            id: "call_12345xyz".into(),
                            name: "get_weather".into(),
                            arguments: r#"{"location":"Paris, France"}"#.into(),
                        }],
                        reasoning: vec![Reasoning::ResponsesItem {
                            id: Some("rs_123".into()),
                            summary: Vec::new(),
                            encrypted_content: Some("gAAAAA...".into())
                        }],
                    },
                    Message::ToolResult {
                        call_id: "call_12345xyz".into(),
                        tool_name: "get_weather".into(),
                        content: r#"{"temperature": 14}"#.into(),
                        is_error: false,
                    },
                    Message::Assistant { text: "It is 14°C in Paris.".into(), tool_calls: Vec::new(), reasoning: Vec::new() },
                    Message::User { text: "And tomorrow?".into() },
                ],
                tools: vec![ToolSpec {
                    name: "get_weather".into(),
                    description: "Get current temperature for a given location.".into(),
                    parameters: json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"], "additionalProperties": false}),
                }],
                tool_choice: ToolChoice::Auto,
                max_output_tokens: Some(4096),
                stream: true,
                include_usage: true,
                context_management: None,
            }
        );
    }

    #[test]
    fn a_string_input_is_one_user_message() {
        let request: ResponsesRequest = serde_json::from_value(json!({
            "model": "gpt-4.1", "input": "Tell me a three sentence bedtime story about a unicorn."
        }))
        .unwrap();
        assert_eq!(request.to_prompt().messages, [Message::User { text: "Tell me a three sentence bedtime story about a unicorn.".into() }]);
        assert_eq!(
            serde_json::to_value(&request).unwrap()["input"],
            json!([{"role": "user", "content": "Tell me a three sentence bedtime story about a unicorn."}])
        );
    }

    /// Server-side compaction: the `compaction` output item reads into the turn (whole and
    /// streamed), goes back as an input item in the documented shape, and a request that
    /// starts with it reads back into the same turn.
    #[test]
    fn a_compaction_item_reads_into_the_turn_and_goes_back_as_input() {
        use crate::{Format, SseFrame, codec};
        let item = json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA-opaque"});
        let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{}", "status": "completed"});
        let body = json!({"id": "resp_1", "object": "response", "status": "completed", "model": "m", "output": [item, call]});
        let turn = codec::decode_response(Format::OpenaiResponses, body.to_string().as_bytes()).unwrap();
        let compaction = Reasoning::ResponsesCompaction { id: Some("cmp_1".into()), encrypted_content: "gAAA-opaque".into() };
        assert_eq!(turn.reasoning, std::slice::from_ref(&compaction));
        let mut decoder = crate::format::decoder_for(Format::OpenaiResponses);
        for event in [
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": call}),
            json!({"type": "response.output_item.done", "output_index": 1, "item": call}),
            json!({"type": "response.completed", "response": body}),
        ] {
            decoder.push_frame(&SseFrame { event: None, data: event.to_string() }).unwrap();
        }
        assert_eq!(decoder.finish().unwrap().reasoning, std::slice::from_ref(&compaction), "streamed");
        let message = Message::Assistant { text: crate::Text::default(), tool_calls: turn.tool_calls.clone(), reasoning: turn.reasoning.clone() };
        let prompt = Prompt { model: "m".into(), messages: vec![message.clone()], ..Prompt::default() };
        let sent: Value = serde_json::from_slice(&codec::encode_request(Format::OpenaiResponses, prompt, |_| Vec::new()).unwrap()).unwrap();
        assert_eq!(sent["input"][0], item, "first, in the documented shape");
        assert_eq!(sent["input"][1]["type"], "function_call");
        let read: ResponsesRequest = serde_json::from_value(sent).unwrap();
        assert_eq!(read.to_prompt().messages, [message]);
    }

    #[test]
    fn malformed_known_items_are_errors_and_unknown_ones_are_kept() {
        let missing_name = json!({"type": "function_call", "call_id": "c", "arguments": "{}"});
        assert!(serde_json::from_value::<InputItem>(missing_name).is_err());
        let reference = json!({"type": "item_reference", "id": "msg_1"});
        assert_eq!(serde_json::from_value::<InputItem>(reference.clone()).unwrap(), InputItem::Other(reference));
    }

    #[test]
    fn prompt_round_trips_except_error_flags() {
        let prompt = rich_prompt();
        let request = ResponsesRequest::from_prompt(&prompt);
        let wire = serde_json::to_value(&request).unwrap();
        assert_eq!(wire["tool_choice"], json!({"type": "function", "name": "read_file"}));
        assert_eq!(wire["input"][2], json!({"type": "function_call", "call_id": "call_1", "name": "list_dir", "arguments": "{\"path\":\"src\"}"}));
        assert_eq!(wire["input"][4], json!({"type": "function_call_output", "call_id": "call_1", "output": "lib.rs\nmain.rs"}));
        assert_eq!(wire["store"], json!(false));
        assert_eq!(request.to_prompt(), without_error_flags(prompt));
        let reparsed: ResponsesRequest = serde_json::from_value(wire).unwrap();
        assert_eq!(reparsed, request);
    }
}
