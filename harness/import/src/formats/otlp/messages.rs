//! A chat span's messages, in whichever form its instrumentation wrote them,
//! as one neutral list:
//!
//! - the current GenAI conventions: `gen_ai.input.messages`,
//!   `gen_ai.output.messages` and `gen_ai.system_instructions`, JSON (a
//!   string, or structured attributes) of `{role, parts: [{type: text |
//!   reasoning | tool_call | tool_call_response, ...}], finish_reason}`;
//!   messages in the OpenAI shape (`content`, `tool_calls`,
//!   `tool_call_id`), as some instrumentations put in the same attributes,
//!   are read too;
//! - the event form of semantic-conventions v1.28 to v1.36: span events
//!   `gen_ai.system.message`, `gen_ai.user.message`,
//!   `gen_ai.assistant.message`, `gen_ai.tool.message` and `gen_ai.choice`,
//!   their body as the event's attributes or as JSON in `gen_ai.event.content`;
//! - OpenLLMetry (Traceloop) attributes `gen_ai.prompt.N.*` and
//!   `gen_ai.completion.N.*` (`role`, `content`, `finish_reason`,
//!   `tool_call_id`, `tool_calls.M.{id,name,arguments}`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::spans::{Event, Span};
use crate::formats::{content_text, str_at};
use crate::session::{Arguments, ToolCall};

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message {
    /// `system`, `user`, `assistant`, `tool`.
    pub role: String,
    /// Its parts in order.
    pub parts: Vec<Part>,
    /// Why the model stopped (output messages).
    pub finish_reason: Option<String>,
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// The model's reasoning.
    Reasoning(String),
    /// A tool call the model made.
    ToolCall(ToolCall),
    /// A tool's answer, by call id when the source gives one.
    ToolResult {
        /// The call it answers.
        id: Option<String>,
        /// Its text.
        output: String,
    },
    /// A part of another type (an image, a file): its type, for the warning.
    Other(String),
}

impl Message {
    /// The text parts joined by blank lines.
    pub fn text(&self) -> String {
        self.parts.iter().filter_map(|part| if let Part::Text(text) = part { Some(text.as_str()) } else { None }).collect::<Vec<_>>().join("\n\n")
    }
}

/// The messages a span sent and received, and its system instructions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Exchange {
    /// The prompt's messages (system messages included when the source put them there).
    pub input: Vec<Message>,
    /// The model's answer.
    pub output: Vec<Message>,
    /// `gen_ai.system_instructions`, when given apart from the messages.
    pub system: Option<String>,
    /// The form the messages were in, for the report.
    pub form: Form,
}

/// Which of the forms held a span's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// No messages at all (content capture off).
    #[default]
    None,
    /// `gen_ai.input.messages` / `gen_ai.output.messages`.
    Attributes,
    /// Span events.
    Events,
    /// `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`.
    Indexed,
}

/// The messages of `span`, from the first form it holds.
pub fn exchange(span: &Span) -> Result<Exchange, String> {
    let system = span.attributes.get("gen_ai.system_instructions").map(|value| parts_text(&json_of(value)));
    if span.attributes.contains_key("gen_ai.input.messages") || span.attributes.contains_key("gen_ai.output.messages") {
        let list = |key: &str| -> Result<Vec<Message>, String> {
            match span.attributes.get(key).map(json_of) {
                None => Ok(Vec::new()),
                Some(Value::Array(messages)) => Ok(messages.iter().map(message).collect()),
                Some(other) => Err(format!("`{key}` is not a JSON list of messages: {}", excerpt(&other))),
            }
        };
        return Ok(Exchange { input: list("gen_ai.input.messages")?, output: list("gen_ai.output.messages")?, system, form: Form::Attributes });
    }
    if span.events.iter().any(|event| role_of_event(&event.name).is_some()) {
        let (mut input, mut output) = (Vec::new(), Vec::new());
        for event in &span.events {
            match role_of_event(&event.name) {
                Some("choice") => output.push(choice(event)),
                Some(role) => input.push(event_message(role, &event_body(event))),
                None => {}
            }
        }
        return Ok(Exchange { input, output, system, form: Form::Events });
    }
    let input = indexed(span, "gen_ai.prompt.");
    let output = indexed(span, "gen_ai.completion.");
    let form = if input.is_empty() && output.is_empty() { Form::None } else { Form::Indexed };
    Ok(Exchange { input, output, system, form })
}

/// An attribute that holds JSON: parsed when it is a string of JSON, as is otherwise.
fn json_of(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

fn excerpt(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 { format!("{}…", text.chars().take(80).collect::<String>()) } else { text }
}

/// The text of system instructions: a string, or a list of text parts.
fn parts_text(value: &Value) -> String {
    match value {
        Value::Array(parts) => parts.iter().filter_map(part_text).collect::<Vec<_>>().join("\n\n"),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A part's text (`content`, or `text` as some instrumentations write it).
fn part_text(part: &Value) -> Option<String> {
    match part {
        Value::String(text) => Some(text.clone()),
        _ => str_at(part, "content").or_else(|| str_at(part, "text")).map(str::to_owned),
    }
}

/// One message of `gen_ai.input.messages` or `gen_ai.output.messages`.
fn message(value: &Value) -> Message {
    let role = str_at(value, "role").unwrap_or("user").to_owned();
    let finish_reason = str_at(value, "finish_reason").map(str::to_owned);
    let Some(parts) = value.get("parts").and_then(Value::as_array) else {
        return Message { finish_reason, ..event_message(&role, value) };
    };
    Message { role, parts: parts.iter().map(part).collect(), finish_reason }
}

fn part(value: &Value) -> Part {
    match str_at(value, "type") {
        Some("text") | None => Part::Text(part_text(value).unwrap_or_default()),
        Some("reasoning" | "thinking") => Part::Reasoning(part_text(value).unwrap_or_default()),
        Some("tool_call") => Part::ToolCall(tool_call(value, value.get("arguments"))),
        Some("tool_call_response") => {
            Part::ToolResult { id: str_at(value, "id").map(str::to_owned), output: output_text(value.get("response").or_else(|| value.get("result"))) }
        }
        Some(other) => Part::Other(other.to_owned()),
    }
}

fn tool_call(value: &Value, arguments: Option<&Value>) -> ToolCall {
    let arguments = match arguments {
        Some(Value::String(text)) => Arguments::from_text(text),
        Some(Value::Null) | None => Arguments::Json(Value::Object(Default::default())),
        Some(json) => Arguments::Json(json.clone()),
    };
    ToolCall { id: str_at(value, "id").unwrap_or_default().to_owned(), name: str_at(value, "name").unwrap_or_default().to_owned(), arguments }
}

/// A tool's output as text: a string as is, anything else as JSON.
pub fn output_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The role of a message event (`gen_ai.user.message` → `user`), or `choice`.
fn role_of_event(name: &str) -> Option<&str> {
    match name {
        "gen_ai.choice" => Some("choice"),
        _ => name.strip_prefix("gen_ai.")?.strip_suffix(".message").filter(|role| ["system", "user", "assistant", "tool"].contains(role)),
    }
}

/// An event's body: JSON in `gen_ai.event.content`, or its attributes.
fn event_body(event: &Event) -> Value {
    match event.attributes.get("gen_ai.event.content") {
        Some(content) => json_of(content),
        None => Value::Object(event.attributes.iter().map(|(key, value)| (key.clone(), json_of(value))).collect()),
    }
}

/// A `gen_ai.choice` event: its `message`, `finish_reason`.
fn choice(event: &Event) -> Message {
    let body = event_body(event);
    let inner = body.get("message").map(json_of).unwrap_or(Value::Null);
    Message { finish_reason: str_at(&body, "finish_reason").map(str::to_owned), ..event_message("assistant", &inner) }
}

/// A message in the OpenAI shape: `content` (text or blocks), `tool_calls`
/// (`{id, function: {name, arguments}}` or `{id, name, arguments}`),
/// `tool_call_id` (or `id`) on a tool message.
fn event_message(role: &str, body: &Value) -> Message {
    let role = str_at(body, "role").unwrap_or(role).to_owned();
    let content = body.get("content").map(json_of).unwrap_or(Value::Null);
    let text = match &content {
        Value::Array(_) | Value::String(_) => content_text(&content),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut parts = Vec::new();
    if role == "tool" {
        let id = str_at(body, "tool_call_id").or_else(|| str_at(body, "id")).map(str::to_owned);
        parts.push(Part::ToolResult { id, output: text });
    } else if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    let calls = body.get("tool_calls").map(json_of).unwrap_or(Value::Null);
    for call in calls.as_array().into_iter().flatten() {
        let function = call.get("function").filter(|f| f.is_object());
        let named = function.map_or(call.clone(), |function| {
            let mut named = function.clone();
            named["id"] = call.get("id").cloned().unwrap_or(Value::Null);
            named
        });
        parts.push(Part::ToolCall(tool_call(&named, named.get("arguments"))));
    }
    Message { role, parts, finish_reason: None }
}

/// OpenLLMetry's `PREFIX.N.FIELD` attributes as messages, by `N`.
fn indexed(span: &Span, prefix: &str) -> Vec<Message> {
    let mut bodies: BTreeMap<usize, serde_json::Map<String, Value>> = BTreeMap::new();
    for (key, value) in &span.attributes {
        let Some((index, field)) = key.strip_prefix(prefix).and_then(|rest| rest.split_once('.')) else { continue };
        let Ok(index) = index.parse::<usize>() else { continue };
        let body = bodies.entry(index).or_default();
        match field.strip_prefix("tool_calls.").and_then(|rest| rest.split_once('.')) {
            Some((call, call_field)) => {
                let Ok(call) = call.parse::<usize>() else { continue };
                let calls = body.entry("tool_calls").or_insert_with(|| Value::Array(Vec::new())).as_array_mut().expect("a list");
                while calls.len() <= call {
                    calls.push(Value::Object(Default::default()));
                }
                calls[call][call_field] = value.clone();
            }
            None => {
                body.insert(field.to_owned(), value.clone());
            }
        }
    }
    bodies
        .into_values()
        .map(|body| {
            let body = Value::Object(body);
            let message = event_message(str_at(&body, "role").unwrap_or("assistant"), &body);
            Message { finish_reason: str_at(&body, "finish_reason").map(str::to_owned), ..message }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn span(attributes: Value, events: Vec<Event>) -> Span {
        Span {
            unit: 1,
            trace_id: "t".into(),
            span_id: "s".into(),
            parent: None,
            name: "chat".into(),
            start: 0,
            attributes: serde_json::from_value(attributes).unwrap(),
            events,
            error: None,
        }
    }

    #[test]
    fn current_conventions_parts_are_read_with_their_tool_calls_and_results() {
        let input = json!([
            {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Paris"}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "rainy"}]}
        ]);
        let output =
            json!([{"role": "assistant", "parts": [{"type": "reasoning", "content": "easy"}, {"type": "text", "content": "Rainy."}], "finish_reason": "stop"}]);
        let span = span(
            json!({"gen_ai.input.messages": input.to_string(), "gen_ai.output.messages": output.to_string(), "gen_ai.system_instructions": "[{\"type\":\"text\",\"content\":\"Be brief.\"}]"}),
            vec![],
        );
        let exchange = exchange(&span).unwrap();
        assert_eq!(exchange.form, Form::Attributes);
        assert_eq!(exchange.system.as_deref(), Some("Be brief."));
        assert_eq!(
            exchange.input[1].parts[0],
            Part::ToolCall(ToolCall { id: "c1".into(), name: "weather".into(), arguments: Arguments::Json(json!({"city": "Paris"})) })
        );
        assert_eq!(exchange.input[2].parts[0], Part::ToolResult { id: Some("c1".into()), output: "rainy".into() });
        assert_eq!(exchange.output[0].parts, [Part::Reasoning("easy".into()), Part::Text("Rainy.".into())]);
        assert_eq!(exchange.output[0].finish_reason.as_deref(), Some("stop"));
    }

    #[test]
    fn a_messages_attribute_that_is_not_a_list_is_an_error() {
        let error = exchange(&span(json!({"gen_ai.input.messages": "hello?"}), vec![])).unwrap_err();
        assert!(error.contains("gen_ai.input.messages") && error.contains("hello?"), "{error}");
    }

    #[test]
    fn events_and_indexed_attributes_give_the_same_messages() {
        let events = vec![
            Event { name: "gen_ai.user.message".into(), attributes: serde_json::from_value(json!({"content": "Hi"})).unwrap() },
            Event {
                name: "gen_ai.choice".into(),
                attributes: serde_json::from_value(json!({"finish_reason": "tool_calls", "message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"path\":\".\"}"}}]}})).unwrap(),
            },
        ];
        let from_events = exchange(&span(json!({}), events)).unwrap();
        let from_indexed = exchange(&span(
            json!({"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi", "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.finish_reason": "tool_calls",
                   "gen_ai.completion.0.tool_calls.0.id": "c1", "gen_ai.completion.0.tool_calls.0.name": "ls", "gen_ai.completion.0.tool_calls.0.arguments": "{\"path\":\".\"}"}),
            vec![],
        ))
        .unwrap();
        assert_eq!((from_events.form, from_indexed.form), (Form::Events, Form::Indexed));
        assert_eq!(from_events.input, from_indexed.input);
        assert_eq!(from_events.output, from_indexed.output);
        assert_eq!(from_events.output[0].finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            from_events.output[0].parts[0],
            Part::ToolCall(ToolCall { id: "c1".into(), name: "ls".into(), arguments: Arguments::Json(json!({"path": "."})) })
        );
    }
}
