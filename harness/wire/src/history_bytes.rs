//! A client resends the whole conversation with every request, so
//! serializing each body escaped every earlier message's text again: a
//! fifth of a long replay's instructions, growing with the square of its
//! length. [`HistoryBytes`] keeps the previous request's messages beside
//! their JSON; a request that starts with the same messages serializes only
//! the ones after them. The body is, byte for byte, what the format's
//! request type serializes to. It serves the wires whose history array
//! holds each message's elements apart from its neighbours' (the OpenAI
//! ones; Anthropic and Gemini join consecutive tool results into one turn).

use crate::Prompt;
use crate::message::Message;
use crate::openai_chat::request::{ChatMessage, ChatRequest, MessageContent};
use crate::openai_responses::request::{ResponsesRequest, prompt_items};

/// A wire's history array: how a message is written into it, and the
/// request around it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum HistoryArray {
    /// Chat Completions' `messages`, the system text as its first message.
    ChatMessages,
    /// Responses' `input`, the system text apart (`instructions`).
    ResponsesInput,
}

impl HistoryArray {
    /// The array's member as a request with no history writes it: the
    /// first place it occurs in the body (what comes before it is the model
    /// and the system text, JSON strings, in which a quote is escaped).
    fn empty_member(self) -> &'static [u8] {
        match self {
            Self::ChatMessages => br#""messages":[]"#,
            Self::ResponsesInput => br#""input":[]"#,
        }
    }

    /// The body of `head` without history, and the elements the array
    /// starts with whatever the history (Chat's system message).
    fn frame(self, head: Prompt) -> Result<(Vec<u8>, Option<Vec<u8>>), serde_json::Error> {
        let mut head = Prompt { messages: Vec::new(), ..head };
        Ok(match self {
            Self::ChatMessages => {
                let system = head.system.take().map(|text| ChatMessage::System { content: MessageContent::Text(text.into()), name: None });
                let frame = serde_json::to_vec(&ChatRequest::from_owned_prompt(head))?;
                (frame, system.map(|system| serde_json::to_vec(&system)).transpose()?)
            }
            Self::ResponsesInput => (serde_json::to_vec(&ResponsesRequest::from_prompt(&head))?, None),
        })
    }

    /// Appends the elements `message` is written as, each after a comma.
    fn write(self, message: &Message, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        match self {
            Self::ChatMessages => {
                out.push(b',');
                serde_json::to_writer(&mut *out, &ChatMessage::from_prompt_message(message.clone()))
            }
            Self::ResponsesInput => prompt_items(message).iter().try_for_each(|item| {
                out.push(b',');
                serde_json::to_writer(&mut *out, item)
            }),
        }
    }
}

/// The messages of the latest request a client wrote, with their JSON.
pub(crate) struct HistoryBytes {
    array: HistoryArray,
    /// The messages, in order (the system text apart).
    messages: Vec<Message>,
    /// Their elements' JSON as the array holds it, each after a comma.
    json: Vec<u8>,
    /// Where each message's elements end in `json`.
    ends: Vec<usize>,
}

impl std::fmt::Debug for HistoryBytes {
    /// The sizes only: the messages are the conversation itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryBytes").field("array", &self.array).field("messages", &self.messages.len()).field("json_bytes", &self.json.len()).finish()
    }
}

impl HistoryBytes {
    /// Nothing written yet.
    pub(crate) fn new(array: HistoryArray) -> Self {
        Self { array, messages: Vec::new(), json: Vec::new(), ends: Vec::new() }
    }

    /// The body of `head` (its messages ignored) with `messages` as its
    /// conversation, written in `body`'s buffer (what it held is dropped),
    /// with `reserve` bytes of room left after it (for what the caller
    /// appends). Serializes only the messages that differ from
    /// the previous call's, from the first that does on.
    ///
    /// # Errors
    ///
    /// Serialization failed (it does not for plain prompts).
    pub(crate) fn body(&mut self, mut body: Vec<u8>, head: Prompt, messages: &[Message], reserve: usize) -> Result<Vec<u8>, serde_json::Error> {
        self.keep_shared_prefix(messages);
        for message in &messages[self.messages.len()..] {
            self.array.write(message, &mut self.json)?;
            self.ends.push(self.json.len());
            self.messages.push(message.clone());
        }
        let (frame, leading) = self.array.frame(head)?;
        let member = self.array.empty_member();
        let at = frame.windows(member.len()).position(|window| window == member).expect("a request writes its history array") + member.len() - 1;

        let history = match &leading {
            Some(_) => &self.json[..],
            // Nothing before the first element: its comma goes.
            None => self.json.get(1..).unwrap_or_default(),
        };
        body.clear();
        body.reserve(frame.len() + leading.as_ref().map_or(0, Vec::len) + history.len() + reserve);
        body.extend_from_slice(&frame[..at]);
        body.extend_from_slice(leading.as_deref().unwrap_or_default());
        body.extend_from_slice(history);
        body.extend_from_slice(&frame[at..]);
        Ok(body)
    }

    /// Drops what follows the longest prefix of the kept messages that
    /// `messages` starts with.
    fn keep_shared_prefix(&mut self, messages: &[Message]) {
        let shared = self.messages.iter().zip(messages).take_while(|(kept, new)| kept == new).count();
        self.messages.truncate(shared);
        self.ends.truncate(shared);
        self.json.truncate(self.ends.last().copied().unwrap_or(0));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::message::Reasoning;
    use crate::prompt::ToolChoice;
    use crate::{Format, ToolCall};

    const ARRAYS: [HistoryArray; 2] = [HistoryArray::ChatMessages, HistoryArray::ResponsesInput];

    /// The whole request as the format's request type serializes it.
    fn full_body(array: HistoryArray, head: &Prompt, messages: &[Message]) -> String {
        let prompt = Prompt { messages: messages.to_vec(), ..head.clone() };
        let format = match array {
            HistoryArray::ChatMessages => Format::OpenaiChat,
            HistoryArray::ResponsesInput => Format::OpenaiResponses,
        };
        String::from_utf8(crate::codec::encode_request(format, prompt, |_| Vec::new()).unwrap()).unwrap()
    }

    /// The body written in a buffer that held an earlier body, as a client's does.
    fn written(history: &mut HistoryBytes, head: &Prompt, messages: &[Message]) -> String {
        let used = br#"{"model":"earlier","messages":[]}"#.to_vec();
        String::from_utf8(history.body(used, head.clone(), messages, 0).unwrap()).unwrap()
    }

    fn head(system: Option<&str>) -> Prompt {
        Prompt {
            model: "gpt-4o".into(),
            system: system.map(str::to_owned),
            stream: true,
            include_usage: true,
            max_output_tokens: Some(512),
            ..Prompt::default()
        }
    }

    fn round(step: usize) -> [Message; 2] {
        let call = ToolCall { id: format!("call_{step}").into(), name: "read_file".into(), arguments: format!(r#"{{"path":"src/{step}.rs"}}"#).into() };
        let reasoning = vec![Reasoning::ResponsesItem { id: Some(format!("rs_{step}")), summary: vec!["look".into()], encrypted_content: None }];
        [
            Message::Assistant { text: crate::Text::default(), tool_calls: vec![call], reasoning },
            Message::ToolResult {
                call_id: format!("call_{step}").into(),
                tool_name: "read_file".into(),
                content: format!("line \"{step}\"\n\tend\u{e9}").into(),
                is_error: false,
            },
        ]
    }

    /// The loop's usual sequence: the history grows by a tool round each
    /// request; every body equals the whole request serialized.
    #[test]
    fn a_growing_history_writes_the_full_serialization() {
        for array in ARRAYS {
            let mut history = HistoryBytes::new(array);
            let mut messages = vec![Message::user("Fix the bug.")];
            for step in 0..5 {
                let head = head(Some("You are terse."));
                assert_eq!(written(&mut history, &head, &messages), full_body(array, &head, &messages), "{array:?}");
                messages.extend(round(step));
            }
            assert_eq!(history.messages.len(), 9, "the last request's messages are kept");
        }
    }

    /// Compaction rewrites the middle of the history: the messages after
    /// the first changed one are written again, not reused.
    #[test]
    fn a_changed_message_rewrites_from_there() {
        for array in ARRAYS {
            let mut history = HistoryBytes::new(array);
            let mut messages: Vec<Message> = std::iter::once(Message::user("task")).chain((0..4).flat_map(round)).collect();
            written(&mut history, &head(None), &messages);
            let Message::ToolResult { content, .. } = &mut messages[2] else { panic!("a tool result") };
            *content = "[cleared]".into();
            assert_eq!(written(&mut history, &head(None), &messages), full_body(array, &head(None), &messages));
            assert_eq!(written(&mut history, &head(None), &messages[..3]), full_body(array, &head(None), &messages[..3]), "a shorter history drops the rest");
            assert_eq!(written(&mut history, &head(None), &[]), full_body(array, &head(None), &[]), "an empty one too");
        }
    }

    /// The room asked for is there, so appending the tools does not move
    /// the body.
    #[test]
    fn the_reserve_is_left_free() {
        let mut history = HistoryBytes::new(HistoryArray::ChatMessages);
        let body = history.body(Vec::new(), head(Some("s")), &round(0), 4096).unwrap();
        assert!(body.capacity() - body.len() >= 4096);
    }

    fn message() -> impl Strategy<Value = Message> {
        let text = "[a-z\"\\\\\n é]{0,12}";
        let call = ("[a-z0-9_]{1,6}", "[a-z]{1,5}", "[{}a-z\":]{0,10}").prop_map(|(id, name, arguments)| ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        });
        let reasoning = proptest::option::of(text)
            .prop_map(|summary| summary.map(|summary| Reasoning::ResponsesItem { id: None, summary: vec![summary], encrypted_content: Some("e".into()) }));
        prop_oneof![
            text.prop_map(Message::user),
            (text, proptest::collection::vec(call, 0..3), reasoning).prop_map(|(text, tool_calls, reasoning)| Message::Assistant {
                text: text.into(),
                tool_calls,
                reasoning: reasoning.into_iter().collect(),
            }),
            (text, "[a-z0-9_]{1,6}", any::<bool>()).prop_map(|(content, call_id, is_error)| Message::ToolResult {
                call_id: call_id.into(),
                tool_name: crate::Text::default(),
                content: content.into(),
                is_error
            }),
        ]
    }

    fn any_head() -> impl Strategy<Value = Prompt> {
        (proptest::option::of("[a-z \"]{0,8}"), "[a-z0-9.\"-]{0,8}", any::<bool>(), proptest::option::of(1u32..9000), 0..3usize).prop_map(
            |(system, model, stream, max_output_tokens, choice)| Prompt {
                model,
                system,
                stream,
                include_usage: stream,
                max_output_tokens,
                tool_choice: [ToolChoice::Auto, ToolChoice::None, ToolChoice::Named("read".into())][choice].clone(),
                ..Prompt::default()
            },
        )
    }

    proptest! {
        /// Over any sequence of requests (histories that grow, shrink or
        /// change anywhere; any head), each body is the full serialization.
        #[test]
        fn every_body_is_the_full_serialization(
            requests in proptest::collection::vec((any_head(), proptest::collection::vec(message(), 0..6), 0..6usize), 1..8),
        ) {
            for array in ARRAYS {
                let mut history = HistoryBytes::new(array);
                let mut messages: Vec<Message> = Vec::new();
                for (head, added, keep) in &requests {
                    messages.truncate((*keep).min(messages.len()));
                    messages.extend(added.iter().cloned());
                    prop_assert_eq!(written(&mut history, head, &messages), full_body(array, head, &messages));
                }
            }
        }
    }
}
