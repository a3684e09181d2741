//! A client resends the whole conversation with every Chat Completions
//! request, so serializing each body escaped every earlier message's text
//! again: a fifth of a long replay's instructions, growing with the square
//! of its length. [`HistoryBytes`] keeps the previous request's messages
//! beside their JSON; a request that starts with the same messages
//! serializes only the ones after them. The body is, byte for byte, what
//! [`ChatRequest::from_owned_prompt`] serializes to.

use crate::Prompt;
use crate::message::Message;
use crate::openai_chat::request::{ChatMessage, ChatRequest, MessageContent};

/// The messages of the latest request a client wrote, with their JSON.
#[derive(Default)]
pub struct HistoryBytes {
    /// The messages, in order (the system text apart).
    messages: Vec<Message>,
    /// Their JSON as the `messages` array holds it, each one after a comma.
    json: Vec<u8>,
    /// Where each message's JSON ends in `json`.
    ends: Vec<usize>,
}

impl std::fmt::Debug for HistoryBytes {
    /// The sizes only: the messages are the conversation itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryBytes").field("messages", &self.messages.len()).field("json_bytes", &self.json.len()).finish()
    }
}

/// The start of every request body whose `model` is empty and whose
/// `messages` array is: the members the body writes ahead of the rest.
const EMPTY_HEAD: &[u8] = br#"{"model":"","messages":[]"#;

impl HistoryBytes {
    /// The body of `head` (its messages ignored) with `messages` as its
    /// conversation, with `reserve` bytes of room left after it (for what
    /// the caller appends). Serializes only the messages that differ from
    /// the previous call's, from the first that does on.
    ///
    /// # Errors
    ///
    /// Serialization failed (it does not for plain prompts).
    pub fn body(&mut self, head: Prompt, messages: &[Message], reserve: usize) -> Result<Vec<u8>, serde_json::Error> {
        self.keep_shared_prefix(messages);
        for message in &messages[self.messages.len()..] {
            self.json.push(b',');
            serde_json::to_writer(&mut self.json, &ChatMessage::from_prompt_message(message.clone()))?;
            self.ends.push(self.json.len());
            self.messages.push(message.clone());
        }
        let system = head.system.clone().map(|text| ChatMessage::System { content: MessageContent::Text(text), name: None });
        let model = serde_json::to_vec(&head.model)?;
        let rest = serde_json::to_vec(&ChatRequest::from_owned_prompt(Prompt { model: String::new(), system: None, messages: Vec::new(), ..head }))?;
        debug_assert!(rest.starts_with(EMPTY_HEAD), "a Chat request writes its model and messages first");
        let system = system.map(|system| serde_json::to_vec(&system)).transpose()?;

        let mut body = Vec::with_capacity(model.len() + system.as_ref().map_or(0, Vec::len) + self.json.len() + rest.len() + 16 + reserve);
        body.extend_from_slice(br#"{"model":"#);
        body.extend_from_slice(&model);
        body.extend_from_slice(br#","messages":["#);
        let history = match system {
            Some(system) => {
                body.extend_from_slice(&system);
                &self.json[..]
            }
            // No system message: the first message's comma goes.
            None => self.json.get(1..).unwrap_or_default(),
        };
        body.extend_from_slice(history);
        body.push(b']');
        body.extend_from_slice(&rest[EMPTY_HEAD.len()..]);
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
    use crate::ToolCall;
    use crate::prompt::ToolChoice;

    fn full_body(head: &Prompt, messages: &[Message]) -> Vec<u8> {
        serde_json::to_vec(&ChatRequest::from_prompt(&Prompt { messages: messages.to_vec(), ..head.clone() })).unwrap()
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
        let call = ToolCall { id: format!("call_{step}"), name: "read_file".into(), arguments: format!(r#"{{"path":"src/{step}.rs"}}"#) };
        [
            Message::assistant("", vec![call]),
            Message::ToolResult { call_id: format!("call_{step}"), tool_name: "read_file".into(), content: format!("line \"{step}\"\n\tend\u{e9}"), is_error: false },
        ]
    }

    /// The loop's usual sequence: the history grows by a tool round each
    /// request; every body equals the whole request serialized.
    #[test]
    fn a_growing_history_writes_the_full_serialization() {
        let mut writer = HistoryBytes::default();
        let mut messages = vec![Message::user("Fix the bug.")];
        for step in 0..5 {
            let body = writer.body(head(Some("You are terse.")), &messages, 0).unwrap();
            assert_eq!(String::from_utf8(body).unwrap(), String::from_utf8(full_body(&head(Some("You are terse.")), &messages)).unwrap());
            messages.extend(round(step));
        }
        assert_eq!(writer.messages.len(), 9, "the last request's messages are kept");
    }

    /// Compaction rewrites the middle of the history: the messages after
    /// the first changed one are written again, not reused.
    #[test]
    fn a_changed_message_rewrites_from_there() {
        let mut writer = HistoryBytes::default();
        let mut messages: Vec<Message> = std::iter::once(Message::user("task")).chain((0..4).flat_map(round)).collect();
        writer.body(head(None), &messages, 0).unwrap();
        let Message::ToolResult { content, .. } = &mut messages[2] else { panic!("a tool result") };
        *content = "[cleared]".into();
        let body = writer.body(head(None), &messages, 0).unwrap();
        assert_eq!(body, full_body(&head(None), &messages));
        let body = writer.body(head(None), &messages[..3], 0).unwrap();
        assert_eq!(body, full_body(&head(None), &messages[..3]), "a shorter history drops the rest");
        assert_eq!(writer.body(head(None), &[], 0).unwrap(), full_body(&head(None), &[]), "an empty one too");
    }

    /// The room asked for is there, so appending the tools does not move
    /// the body.
    #[test]
    fn the_reserve_is_left_free() {
        let mut writer = HistoryBytes::default();
        let body = writer.body(head(Some("s")), &round(0), 4096).unwrap();
        assert!(body.capacity() - body.len() >= 4096);
    }

    fn message() -> impl Strategy<Value = Message> {
        let text = "[a-z\"\\\\\n é]{0,12}";
        prop_oneof![
            text.prop_map(Message::user),
            (text, proptest::collection::vec(("[a-z0-9_]{1,6}", "[a-z]{1,5}", "[{}a-z\":]{0,10}"), 0..3)).prop_map(|(text, calls)| {
                Message::assistant(text, calls.into_iter().map(|(id, name, arguments)| ToolCall { id, name, arguments }).collect())
            }),
            (text, "[a-z0-9_]{1,6}", any::<bool>()).prop_map(|(content, call_id, is_error)| Message::ToolResult { call_id, tool_name: String::new(), content, is_error }),
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
            let mut writer = HistoryBytes::default();
            let mut history: Vec<Message> = Vec::new();
            for (head, added, keep) in requests {
                history.truncate(keep.min(history.len()));
                history.extend(added);
                let body = writer.body(head.clone(), &history, 0).unwrap();
                prop_assert_eq!(String::from_utf8(body).unwrap(), String::from_utf8(full_body(&head, &history)).unwrap());
            }
        }
    }
}
