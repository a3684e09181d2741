//! One message of a conversation, provider-neutral: the loop's transcript and every request's
//! conversation are made of it, so nothing converts between the two.
//!
//! The loop keeps its transcript as [`Message`]s and sends a view of it; each format's request
//! type renders them (`from_prompt`) and reads them back (`to_prompt`). Conversion to a
//! provider's shapes happens at the wire edge only.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::{Text, ToolCall};

/// One entry of a conversation. `Hash` lets the mock key per-message figures by content.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// A user turn: the task, a scripted reply, a steering or harness notice.
    User {
        /// What the user said.
        text: Text,
    },
    /// A model turn.
    Assistant {
        /// Text the model produced (empty when it only called tools).
        text: Text,
        /// Tool calls in the order the model made them.
        tool_calls: Vec<ToolCall>,
        /// The model's reasoning, in the order it came, sent back as the provider requires.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
    },
    /// The answer to one tool call.
    ToolResult {
        /// The id of the call this answers.
        call_id: Text,
        /// The tool's name, for reports and doom-loop analysis. A request read off the wire
        /// takes it from the matching earlier call; empty when there is none.
        #[serde(default)]
        tool_name: Text,
        /// What the tool returned, or its error text.
        content: Text,
        /// Whether the tool failed.
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<Text>) -> Self {
        Self::User { text: text.into() }
    }

    /// An assistant message without reasoning.
    pub fn assistant(text: impl Into<Text>, tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant { text: text.into(), tool_calls, reasoning: Vec::new() }
    }

    /// The bytes of its texts (call ids, names and arguments included; reasoning left out): most
    /// of its size on the wire, for sizing a request body before it is written.
    pub(crate) fn text_len(&self) -> usize {
        match self {
            Self::User { text } => text.len(),
            Self::Assistant { text, tool_calls, .. } => {
                text.len() + tool_calls.iter().map(|call| call.id.len() + call.name.len() + call.arguments.len()).sum::<usize>()
            }
            Self::ToolResult { call_id, content, .. } => call_id.len() + content.len(),
        }
    }
}

/// One piece of a model's reasoning, in the shape its API sends it back.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reasoning {
    /// An OpenAI Responses `reasoning` item.
    ResponsesItem {
        /// The item id (`rs_…`), if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The summary paragraphs.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        /// The opaque `encrypted_content` a stateless client sends back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    /// An OpenAI Responses `compaction` item: the server's opaque summary of everything before
    /// it, returned by server-side compaction (`context_management`) or `/responses/compact`.
    /// A client sends it back, and may drop the items before the latest one.
    ResponsesCompaction {
        /// The item id (`cmp_…`), if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The opaque content.
        encrypted_content: String,
    },
    /// An Anthropic `thinking` block.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// The signature the client must send back with the block.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// An Anthropic `redacted_thinking` block: opaque, sent back as is.
    RedactedThinking {
        /// The encrypted thinking.
        data: String,
    },
    /// Chat-compatible `reasoning_content` (DeepSeek, OpenRouter and others).
    ReasoningContent {
        /// The reasoning text.
        text: String,
    },
}

/// Gives every tool result in `messages` the name of the earlier call it answers (empty when no
/// earlier call has its id). Formats name tool results only by call id; each `to_prompt` calls
/// this so a request read off the wire carries the same names the loop's transcript does.
pub(crate) fn name_tool_results(messages: &mut [Message]) {
    // The ids are borrowed while the calls are looked up, and a name is shared with its call, not
    // copied: the mock reads every request's whole history through here, and copying each call's
    // id and name into the map (with std's SipHash) was two thirds of a Chat request's
    // `into_prompt`.
    // Sized for a history of calls and their results, so neither grows as the history is read.
    let mut calls: HashMap<&str, &Text, foldhash::fast::RandomState> = HashMap::with_capacity_and_hasher(messages.len() / 2, Default::default());
    let mut names: Vec<(usize, Text)> = Vec::with_capacity(messages.len() / 2);
    for (index, message) in messages.iter().enumerate() {
        match message {
            Message::Assistant { tool_calls, .. } => {
                calls.extend(tool_calls.iter().map(|call| (call.id.as_str(), &call.name)));
            }
            Message::ToolResult { call_id, .. } => {
                let name = calls.get(call_id.as_str()).map_or_else(Text::default, |name| Text::clone(name));
                names.push((index, name));
            }
            Message::User { .. } => {}
        }
    }
    for (index, name) in names {
        if let Message::ToolResult { tool_name, .. } = &mut messages[index] {
            *tool_name = name;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: "{}".into() }
    }

    fn result(call_id: &str) -> Message {
        Message::ToolResult { call_id: call_id.into(), tool_name: "stale".into(), content: "ok".into(), is_error: false }
    }

    fn tool_name(message: &Message) -> &str {
        match message {
            Message::ToolResult { tool_name, .. } => tool_name,
            other => panic!("not a tool result: {other:?}"),
        }
    }

    #[test]
    fn tool_results_take_the_name_of_the_earlier_call() {
        let mut messages =
            vec![result("early"), Message::assistant("", vec![call("a", "read"), call("early", "grep")]), result("a"), result("early"), result("unknown")];
        name_tool_results(&mut messages);
        let names: Vec<&str> = [0, 2, 3, 4].map(|i| tool_name(&messages[i])).to_vec();
        assert_eq!(names, ["", "read", "grep", ""]);
        // A name is its call's text, shared, not a copy.
        let Message::Assistant { tool_calls, .. } = &messages[1] else { unreachable!() };
        assert!(std::ptr::eq(tool_name(&messages[2]), tool_calls[0].name.as_str()));
    }

    #[test]
    fn empty_reasoning_is_not_written_and_reads_back() {
        let plain = Message::assistant("hi", Vec::new());
        let value = serde_json::to_value(&plain).unwrap();
        assert_eq!(value, json!({"role": "assistant", "text": "hi", "tool_calls": []}));
        assert_eq!(serde_json::from_value::<Message>(value).unwrap(), plain);
    }

    #[test]
    fn every_reasoning_kind_round_trips_tagged() {
        let reasoning = vec![
            Reasoning::ResponsesItem { id: Some("rs_1".into()), summary: vec!["Look first.".into()], encrypted_content: Some("gAAA".into()) },
            Reasoning::Thinking { thinking: "hmm".into(), signature: Some("sig".into()) },
            Reasoning::RedactedThinking { data: "xyz".into() },
            Reasoning::ReasoningContent { text: "r".into() },
        ];
        let message = Message::Assistant { text: Text::default(), tool_calls: Vec::new(), reasoning };
        let value = serde_json::to_value(&message).unwrap();
        let kinds: Vec<&str> = value["reasoning"].as_array().unwrap().iter().map(|part| part["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["responses_item", "thinking", "redacted_thinking", "reasoning_content"]);
        assert_eq!(serde_json::from_value::<Message>(value).unwrap(), message);
    }
}
