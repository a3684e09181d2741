//! Reading a Chat Completions message in one pass.
//!
//! The derived parse of a `role`-tagged enum buffers every message into serde's private
//! `Content` tree and parses that a second time (and the untagged `content` a third): on the
//! mock server, which parses every request of a growing conversation, this was the largest cost
//! beyond the floor. Every SDK writes `role` first, so the message's remaining fields are read
//! straight into the role's fields; a message whose `role` comes later is buffered as before.

use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, Error, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::request::{ChatMessage, ChatToolCall, MessageContent};
use crate::text_or_list::{TextOrList, text_or_list};

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match text_or_list(deserializer, "a string or a list of content parts")? {
            TextOrList::Text(text) => Self::Text(text),
            TextOrList::List(parts) => Self::Parts(parts),
        })
    }
}

impl<'de> Deserialize<'de> for ChatMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MessageVisitor)
    }
}

/// The `role` tag.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

/// The fields of a `system`, `developer` or `user` message (as [`ChatMessage::User`]).
#[derive(Deserialize)]
struct SpeakerFields {
    content: MessageContent,
    #[serde(default)]
    name: Option<String>,
}

/// The fields of an `assistant` message (as [`ChatMessage::Assistant`]).
#[derive(Deserialize)]
struct AssistantFields {
    #[serde(default)]
    content: Option<MessageContent>,
    #[serde(default)]
    tool_calls: Vec<ChatToolCall>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

/// The fields of a `tool` message (as [`ChatMessage::Tool`]).
#[derive(Deserialize)]
struct ToolFields {
    tool_call_id: String,
    content: MessageContent,
}

/// The message `role` says, read from the message's other fields (unknown ones are ignored,
/// as the derived parse ignored them).
fn with_role<'de, D: Deserializer<'de>>(role: Role, fields: D) -> Result<ChatMessage, D::Error> {
    let speaker = |fields| SpeakerFields::deserialize(fields);
    Ok(match role {
        Role::System => {
            let SpeakerFields { content, name } = speaker(fields)?;
            ChatMessage::System { content, name }
        }
        Role::Developer => {
            let SpeakerFields { content, name } = speaker(fields)?;
            ChatMessage::Developer { content, name }
        }
        Role::User => {
            let SpeakerFields { content, name } = speaker(fields)?;
            ChatMessage::User { content, name }
        }
        Role::Assistant => {
            let AssistantFields { content, tool_calls, refusal, name } = AssistantFields::deserialize(fields)?;
            ChatMessage::Assistant { content, tool_calls, refusal, name }
        }
        Role::Tool => {
            let ToolFields { tool_call_id, content } = ToolFields::deserialize(fields)?;
            ChatMessage::Tool { tool_call_id: tool_call_id.into(), content }
        }
    })
}

/// Reads a message object: straight through when `role` is its first key, buffered otherwise.
struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = ChatMessage;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a chat message (an object with a `role`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ChatMessage, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Err(Error::missing_field("role"));
        };
        if first == "role" {
            let role = map.next_value()?;
            return with_role(role, MapAccessDeserializer::new(map));
        }
        let mut object = Map::new();
        object.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        let role = object.remove("role").ok_or_else(|| Error::missing_field("role"))?;
        let role = Role::deserialize(role).map_err(Error::custom)?;
        with_role(role, Value::Object(object)).map_err(Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai_chat::ContentPart;
    use serde_json::json;

    fn parse(message: &str) -> Result<ChatMessage, serde_json::Error> {
        serde_json::from_str(message)
    }

    fn text(text: &str) -> MessageContent {
        MessageContent::Text(text.into())
    }

    #[test]
    fn role_first_or_last_reads_the_same_message() {
        let expected = ChatMessage::User { content: text("hi"), name: Some("alice".to_owned()) };
        for message in [
            r#"{"role": "user", "content": "hi", "name": "alice"}"#,
            r#"{"content": "hi", "name": "alice", "role": "user"}"#,
            r#"{"name": "alice", "role": "user", "content": "hi", "audio": {"id": "a"}}"#,
        ] {
            assert_eq!(parse(message).unwrap(), expected, "{message}");
        }
        let tool = ChatMessage::Tool { tool_call_id: "call_1".into(), content: text("# reloop") };
        assert_eq!(parse(r##"{"tool_call_id": "call_1", "content": "# reloop", "role": "tool"}"##).unwrap(), tool);
        assert_eq!(parse(r##"{"role": "tool", "content": "# reloop", "tool_call_id": "call_1"}"##).unwrap(), tool);
    }

    #[test]
    fn content_is_a_string_parts_or_null_for_the_assistant() {
        let parts = parse(r#"{"role": "developer", "content": [{"type": "text", "text": "be brief", "cache": 1}]}"#).unwrap();
        let mut extra = Map::new();
        extra.insert("cache".to_owned(), json!(1));
        assert_eq!(
            parts,
            ChatMessage::Developer {
                content: MessageContent::Parts(vec![ContentPart { kind: "text".to_owned(), text: Some("be brief".to_owned()), extra }]),
                name: None,
            }
        );
        for message in [
            r#"{"role": "assistant", "content": null, "tool_calls": []}"#,
            r#"{"role": "assistant"}"#,
            r#"{"tool_calls": [], "content": null, "role": "assistant"}"#,
        ] {
            assert_eq!(parse(message).unwrap(), ChatMessage::Assistant { content: None, tool_calls: Vec::new(), refusal: None, name: None }, "{message}");
        }
    }

    #[test]
    fn malformed_messages_say_what_is_wrong() {
        for (message, error) in [
            (r#"{"content": "hi"}"#, "missing field `role`"),
            ("{}", "missing field `role`"),
            (r#"{"role": "user"}"#, "missing field `content`"),
            (r#"{"content": "hi", "role": "user", "name": 1}"#, "invalid type: integer `1`, expected a string"),
            (r#"{"role": "robot", "content": "hi"}"#, "unknown variant `robot`"),
            (r#"{"content": "hi", "role": "robot"}"#, "unknown variant `robot`"),
            (r#"{"role": "user", "content": 7}"#, "expected a string or a list of content parts"),
            (r#""hi""#, "expected a chat message"),
        ] {
            let found = parse(message).unwrap_err().to_string();
            assert!(found.contains(error), "{message}: {found}");
        }
    }
}
