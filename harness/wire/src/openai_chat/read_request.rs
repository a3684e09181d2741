//! Reading a Chat Completions request in one pass.
//!
//! The derived parse of a struct with a `#[serde(flatten)]` field buffers the whole object
//! into serde's private `Content` tree first and reads every field a second time from it: on
//! the mock, which reads each request's new messages and its tools, that buffering was a third
//! of the parse. Here each known field is read straight into its type and every other field
//! into `extra`, as the derived parse would keep it.

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, Error, MapAccess, Visitor};
use serde_json::Map;

use super::request::ChatRequest;

impl<'de> Deserialize<'de> for ChatRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RequestVisitor)
    }
}

/// The visitor of [`ChatRequest`]'s parse.
struct RequestVisitor;

/// Puts `value` in `slot`, or fails when the field came before.
fn once<T, E: Error>(slot: &mut Option<T>, value: T, field: &'static str) -> Result<(), E> {
    match slot.replace(value) {
        Some(_) => Err(E::duplicate_field(field)),
        None => Ok(()),
    }
}

impl<'de> Visitor<'de> for RequestVisitor {
    type Value = ChatRequest;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct ChatRequest")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ChatRequest, A::Error> {
        let (mut model, mut messages, mut tools, mut tool_choice) = (None, None, None, None);
        let (mut stream, mut stream_options, mut max_tokens, mut max_completion_tokens) = (None, None, None, None);
        let mut extra = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "model" => once(&mut model, map.next_value()?, "model")?,
                "messages" => once(&mut messages, map.next_value()?, "messages")?,
                "tools" => once(&mut tools, map.next_value()?, "tools")?,
                "tool_choice" => once(&mut tool_choice, map.next_value()?, "tool_choice")?,
                "stream" => once(&mut stream, map.next_value()?, "stream")?,
                "stream_options" => once(&mut stream_options, map.next_value()?, "stream_options")?,
                "max_tokens" => once(&mut max_tokens, map.next_value()?, "max_tokens")?,
                "max_completion_tokens" => once(&mut max_completion_tokens, map.next_value()?, "max_completion_tokens")?,
                _ => {
                    let value = map.next_value()?;
                    extra.insert(key, value);
                }
            }
        }
        Ok(ChatRequest {
            model: model.ok_or_else(|| Error::missing_field("model"))?,
            messages: messages.ok_or_else(|| Error::missing_field("messages"))?,
            tools: tools.unwrap_or_default(),
            tool_choice: tool_choice.flatten(),
            stream: stream.unwrap_or_default(),
            stream_options: stream_options.flatten(),
            max_tokens: max_tokens.flatten(),
            max_completion_tokens: max_completion_tokens.flatten(),
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The derived parse this one replaces, for comparison.
    #[derive(Debug, Deserialize)]
    struct Derived {
        model: String,
        messages: Vec<Value>,
        #[serde(default)]
        tools: Vec<Value>,
        #[serde(default)]
        tool_choice: Option<Value>,
        #[serde(default)]
        stream: bool,
        #[serde(default)]
        stream_options: Option<Value>,
        #[serde(default)]
        max_tokens: Option<u32>,
        #[serde(default)]
        max_completion_tokens: Option<u32>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[test]
    fn every_field_lands_where_the_derived_parse_puts_it() {
        let body = json!({
            "temperature": 0.2,
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}],
            "tool_choice": "required",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": null,
            "max_completion_tokens": 64,
            "metadata": {"run": "a"},
        });
        let ours: ChatRequest = serde_json::from_value(body.clone()).unwrap();
        let derived: Derived = serde_json::from_value(body).unwrap();
        assert_eq!((ours.model.as_str(), ours.messages.len(), ours.tools.len()), (derived.model.as_str(), derived.messages.len(), derived.tools.len()));
        assert_eq!(
            (ours.tool_choice, ours.stream, ours.max_tokens, ours.max_completion_tokens),
            (derived.tool_choice, derived.stream, derived.max_tokens, derived.max_completion_tokens)
        );
        assert_eq!(ours.stream_options.map(|options| options.include_usage), derived.stream_options.map(|options| options["include_usage"] == true));
        assert_eq!(ours.extra, derived.extra);
        assert_eq!(ours.extra.keys().collect::<Vec<_>>(), ["temperature", "metadata"]);
    }

    #[test]
    fn defaults_missing_and_repeated_fields() {
        let least: ChatRequest = serde_json::from_str(r#"{"model": "m", "messages": []}"#).unwrap();
        assert!(least.tools.is_empty() && !least.stream && least.tool_choice.is_none() && least.extra.is_empty());
        let error = |body: &str| serde_json::from_str::<ChatRequest>(body).unwrap_err().to_string();
        assert!(error(r#"{"messages": []}"#).starts_with("missing field `model`"));
        assert!(error(r#"{"model": "m"}"#).starts_with("missing field `messages`"));
        assert!(error(r#"{"model": "m", "messages": [], "model": "n"}"#).starts_with("duplicate field `model`"));
        assert!(error(r#"{"model": "m", "messages": [], "stream": "yes"}"#).starts_with("invalid type: string \"yes\", expected a boolean"));
        assert!(error(r#"[]"#).starts_with("invalid type: sequence, expected struct ChatRequest"));
    }
}
