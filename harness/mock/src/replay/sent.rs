//! What each request of a session sent, message by message, and the reply
//! it got: the report's trajectory viewer shows a run's history as the
//! provider saw it, masked and compacted messages included. The history
//! repeats in every request, so each request keeps only the content hashes
//! the counter already computed ([`crate::replay::tokens::PromptCount`]), and each
//! body is kept once per session, when first seen.

use std::collections::hash_map::Entry;

use reloop_wire::{Message, ModelTurn, Prompt};

use crate::replay::tokens::{ByHash, message_hash};

/// A part of a request as sent: the system prompt or a message.
#[derive(Debug, Clone, PartialEq)]
pub enum SentPart {
    /// The system prompt (all system text of the request, joined).
    System(String),
    /// A conversation message.
    Message(Message),
}

/// The session's requests as hashes into one store of bodies.
#[derive(Debug, Clone, Default)]
pub struct SentLog {
    /// Per request, in log order, the hash of each part it sent: the system
    /// prompt first when there is one.
    pub requests: Vec<Vec<u64>>,
    /// Per request, the hash of the reply the server gave (the model turn
    /// as an assistant message); `None` when it refused the request.
    pub replies: Vec<Option<u64>>,
    /// Each part by hash.
    pub bodies: ByHash<SentPart>,
}

impl SentLog {
    /// Notes a request; `hashes` are its parts' content hashes, as counted.
    ///
    /// A part is copied only when its hash is new: the history repeats in
    /// every request, and copying each part before looking it up cloned the
    /// whole history per request (quadratic in the run's length: 67 M of a
    /// 20 × 50-turn replay's 3,169 M instructions, benches/README.md).
    pub(crate) fn request(&mut self, request: &Prompt, hashes: &[u64]) {
        let offset = usize::from(request.system.is_some());
        for (index, hash) in hashes.iter().enumerate() {
            let Entry::Vacant(entry) = self.bodies.entry(*hash) else { continue };
            let part = match index.checked_sub(offset) {
                None => request.system.clone().map(SentPart::System),
                Some(index) => request.messages.get(index).cloned().map(SentPart::Message),
            };
            if let Some(part) = part {
                entry.insert(part);
            }
        }
        self.requests.push(hashes.to_vec());
        self.replies.push(None);
    }

    /// Notes the reply to the latest request.
    pub(crate) fn reply(&mut self, turn: &ModelTurn) {
        let message = Message::Assistant { text: turn.text.as_str().into(), tool_calls: turn.tool_calls.clone(), reasoning: turn.reasoning.clone() };
        // Hashed as a request's message is, so the turn sent back later is the same entry.
        let hash = message_hash(&message);
        self.bodies.entry(hash).or_insert(SentPart::Message(message));
        if let Some(last) = self.replies.last_mut() {
            *last = Some(hash);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_sent_back_is_the_same_entry() {
        let mut log = SentLog::default();
        let counter = crate::replay::tokens::TokenCounter::new();
        let turn = ModelTurn { text: "done".into(), ..ModelTurn::default() };
        let first = Prompt { messages: vec![Message::user("task")], ..Prompt::default() };
        log.request(&first, &counter.count_prompt(&first).message_hashes);
        log.reply(&turn);
        let reply = Message::Assistant { text: "done".into(), tool_calls: vec![], reasoning: vec![] };
        let second = Prompt { messages: vec![Message::user("task"), reply], ..Prompt::default() };
        let hashes = counter.count_prompt(&second).message_hashes;
        log.request(&second, &hashes);
        assert_eq!(log.replies[0], Some(hashes[1]));
        assert_eq!(log.bodies.len(), 2);
    }

    #[test]
    fn a_repeated_history_is_kept_once_and_each_request_as_its_hashes() {
        let mut log = SentLog::default();
        let first = Prompt { system: Some("sys".into()), messages: vec![Message::user("task")], ..Prompt::default() };
        log.request(&first, &[1, 2]);
        log.reply(&ModelTurn { text: "done".into(), ..ModelTurn::default() });
        let second = Prompt { messages: vec![Message::user("task"), Message::user("more")], ..first };
        log.request(&second, &[1, 2, 3]);
        assert_eq!(log.requests, vec![vec![1, 2], vec![1, 2, 3]]);
        assert_eq!(log.bodies.len(), 4, "system, two messages, one reply");
        assert_eq!(log.bodies[&1], SentPart::System("sys".into()));
        assert_eq!(log.bodies[&3], SentPart::Message(Message::user("more")));
        let reply = log.replies[0].expect("the first request was answered");
        assert!(matches!(&log.bodies[&reply], SentPart::Message(Message::Assistant { text, .. }) if text == "done"));
        assert_eq!(log.replies[1], None);
    }
}
