//! Recovery requests: what an agent sends right after the server refused
//! its request for the context window. Most agents then ask for a summary
//! of the conversation (Claude Code's compaction request declares all its
//! tools), and only after it resend the main request, shortened. The
//! summary request is recognized by its shape: it holds every message of
//! the refused request and ends with a user message the refused request
//! did not hold (the summary instruction), where a resent main request
//! either ends with messages the refused one had (the task, or the tool
//! results it answers) or no longer holds them all (the history it
//! replaced with a summary). It is answered as an auxiliary request
//! (`crate::replay::auxiliary`) and never consumes the exchange the resent request
//! is waiting for. Once the agent got its summary, the resent request may
//! have replaced the calls it had to answer with it: calls no longer in the
//! request need no results ([`Recovery::summarized_away`]).

use std::collections::HashSet;

use reloop_wire::{Message, Prompt};

use crate::replay::divergence::ExpectedCall;
use crate::replay::tokens::PromptCount;

/// The messages of the last request refused for its size, until a request
/// other than a recovery one is answered.
#[derive(Debug, Default)]
pub struct Recovery {
    refused: Option<HashSet<u64>>,
    /// A side request was answered since the refusal.
    summarized: bool,
}

impl Recovery {
    /// Notes how a request ended (its log `result`): a context-length
    /// refusal opens a recovery, an auxiliary answer keeps it open,
    /// anything else closes it.
    pub fn observe(&mut self, result: &str, count: &PromptCount) {
        if result.ends_with("context_length_exceeded") {
            self.refused = Some(count.message_hashes.iter().copied().collect());
            self.summarized = false;
        } else if result == crate::replay::auxiliary::AUXILIARY_RESULT {
            self.summarized |= self.refused.is_some();
        } else {
            *self = Self::default();
        }
    }

    /// Whether `request` is a recovery's side request: one comes after a
    /// refusal, holds all its messages and ends with a user message the
    /// refused request did not have.
    pub fn is_side_request(&self, request: &Prompt, count: &PromptCount) -> bool {
        let Some(refused) = &self.refused else { return false };
        let new_instruction = count.message_hashes.last().is_some_and(|last| !refused.contains(last));
        let sent: HashSet<u64> = count.message_hashes.iter().copied().collect();
        matches!(request.messages.last(), Some(Message::User { .. })) && new_instruction && refused.is_subset(&sent)
    }
}

impl Recovery {
    /// Notes an auxiliary answer to `request` when it asked for a summary
    /// of a conversation with tool results (it ends with an instruction
    /// after them): a compaction the agent chose before any refusal (Codex's
    /// local one past its auto-compact limit). The next main request may
    /// then have replaced the calls with the summary, as after a refusal.
    /// Returns whether it was such a summary.
    pub fn answered_auxiliary(&mut self, request: &Prompt) -> bool {
        let results = request.messages.iter().any(|message| matches!(message, Message::ToolResult { .. }));
        let summary = results && matches!(request.messages.last(), Some(Message::User { .. }));
        self.summarized |= summary;
        summary
    }

    /// Whether the agent, given a summary after a refusal (or a compaction of its own), left the calls
    /// `expected` out of `request` altogether (neither the calls nor their
    /// results are in it): its history was summarized, and the calls need
    /// no results.
    pub fn summarized_away(&self, request: &Prompt, expected: &[ExpectedCall]) -> bool {
        self.summarized
            && !request.messages.iter().any(|message| match message {
                Message::Assistant { tool_calls, .. } => tool_calls.iter().any(|call| expected.iter().any(|e| e.id == call.id)),
                Message::ToolResult { call_id, .. } => expected.iter().any(|e| e.id == *call_id || e.aliases.iter().any(|alias| alias == call_id)),
                Message::User { .. } => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::tokens::TokenCounter;

    fn prompt(messages: Vec<Message>) -> Prompt {
        Prompt { system: Some("s".into()), messages, ..Prompt::default() }
    }

    #[test]
    fn only_a_new_user_message_after_a_refusal_is_a_recovery_side_request() {
        let counter = TokenCounter::new();
        let task = Message::User { text: "task".into() };
        let result = Message::ToolResult { call_id: "c".into(), tool_name: reloop_wire::Text::default(), content: "x".into(), is_error: false };
        let refused = prompt(vec![task.clone(), result.clone()]);
        let summary = prompt(vec![task.clone(), result.clone(), Message::User { text: "Summarize the conversation".into() }]);
        let resent = prompt(vec![Message::User { text: "task".into() }, result]);
        let mut recovery = Recovery::default();
        assert!(!recovery.is_side_request(&summary, &counter.count_prompt(&summary)), "no refusal yet");
        recovery.observe("fault:context_length_exceeded", &counter.count_prompt(&refused));
        assert!(recovery.is_side_request(&summary, &counter.count_prompt(&summary)));
        assert!(!recovery.is_side_request(&resent, &counter.count_prompt(&resent)), "the resent request ends as the refused one did");
        let compacted = prompt(vec![Message::User { text: "Summary: the task so far".into() }]);
        assert!(!recovery.is_side_request(&compacted, &counter.count_prompt(&compacted)), "a resent request with a summary for its history");
        let first = prompt(vec![task]);
        let mut after_first = Recovery::default();
        after_first.observe("context_length_exceeded", &counter.count_prompt(&first));
        assert!(!after_first.is_side_request(&first, &counter.count_prompt(&first)), "a resent first request is the task again");
        let expected = [ExpectedCall { id: "c".into(), aliases: Vec::new() }];
        assert!(!recovery.summarized_away(&compacted, &expected), "no summary given yet");
        recovery.observe(crate::replay::auxiliary::AUXILIARY_RESULT, &counter.count_prompt(&summary));
        assert!(recovery.is_side_request(&summary, &counter.count_prompt(&summary)), "still open after the summary");
        assert!(recovery.summarized_away(&compacted, &expected));
        assert!(!recovery.summarized_away(&resent, &expected), "the result is still there: it is checked");
        recovery.observe("ok", &counter.count_prompt(&resent));
        assert!(!recovery.is_side_request(&summary, &counter.count_prompt(&summary)), "closed by the resent request");
        // A compaction the agent chose itself, with no refusal before it.
        let mut chosen = Recovery::default();
        assert!(!chosen.answered_auxiliary(&prompt(vec![Message::User { text: "Write a title".into() }])));
        chosen.observe(crate::replay::auxiliary::AUXILIARY_RESULT, &counter.count_prompt(&summary));
        assert!(!chosen.summarized_away(&compacted, &expected), "a title request summarizes nothing");
        assert!(chosen.answered_auxiliary(&summary));
        chosen.observe(crate::replay::auxiliary::AUXILIARY_RESULT, &counter.count_prompt(&summary));
        assert!(chosen.summarized_away(&compacted, &expected));
    }
}
