//! Prompt-cache break detection, as Roku's `CacheBreakDetector`, with the
//! cause of each break.
//!
//! Providers cache the longest stable prefix of a request: tools, then the
//! system prompt, then messages. Any change to the tool schema bytes, the
//! system prompt or the model invalidates it, and so does rewriting the
//! history (compaction, masking of old results): Roku fingerprints the first
//! three only, and so reports no break where compaction broke the cache.

use std::hash::BuildHasher;

use serde::Serialize;

use crate::message::Message;

/// 64-bit FNV-1a: stable across Rust versions and platforms, which std's
/// `DefaultHasher` does not promise; collisions only blur a report.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

/// A message's content hash, for telling a grown history from a rewritten
/// one without keeping or comparing the messages. Only compared within one
/// process, so foldhash with a fixed seed: std's SipHash over every new
/// message was 0.6 % of a replay's instructions.
pub fn message_hash(message: &Message) -> u64 {
    foldhash::quality::FixedState::with_seed(0).hash_one(message)
}

/// The hash of a message prefix extended by one message whose
/// [`message_hash`] is `item`; `prefix` is `0` before the first message.
pub fn chain_hash(prefix: u64, item: u64) -> u64 {
    (prefix.rotate_left(23) ^ item).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ item.rotate_right(17)
}

/// `result[i]`: the chained hash of `messages[..=i]`. The context view keeps
/// this array for what it shows, redone only from the first item an edit
/// touches; other requests (summaries) compute it here.
pub fn prefix_hashes(messages: &[Message]) -> Vec<u64> {
    let mut prefix = 0;
    messages
        .iter()
        .map(|message| {
            prefix = chain_hash(prefix, message_hash(message));
            prefix
        })
        .collect()
}

/// Prompts shorter than this are not cached at all (OpenAI's minimum), so a
/// change after one breaks nothing.
pub const MIN_CACHEABLE_TOKENS: u64 = 1_024;

/// What a request's cache depends on, as the loop sent it.
#[derive(Debug, Clone, Copy)]
pub struct SentRequest<'a> {
    /// The system prompt.
    pub system: &'a str,
    /// The declared tools' [`crate::tool_schema::FrozenToolSchema::hash`].
    pub tools_hash: u64,
    /// The model.
    pub model: &'a str,
    /// The messages, as their [`prefix_hashes`]: one per message, so a
    /// prefix is compared in one lookup whatever the history's length.
    pub history: &'a [u64],
    /// The loop's estimate of the request, for the minimum cacheable length.
    pub estimated_tokens: u64,
}

/// A break and what caused it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheBreak {
    /// The causes, in prefix order: `tools`, `system`, `model`, `history`
    /// (an earlier message was rewritten or dropped: compaction, masking).
    pub changed: Vec<&'static str>,
}

/// The previous request's cache fingerprint: the system prompt, tool schema
/// and model hashed (Roku's), plus the length and chained hash of its
/// messages, so a rewritten history is caught (Roku's fingerprint misses
/// compaction).
#[derive(Debug)]
struct Fingerprint {
    system_hash: u64,
    tools_hash: u64,
    model_hash: u64,
    history_len: usize,
    history_hash: u64,
    cacheable: bool,
}

impl Fingerprint {
    /// Whether `history` (prefix hashes) starts with this request's messages.
    fn is_prefix_of(&self, history: &[u64]) -> bool {
        match self.history_len.checked_sub(1) {
            None => true,
            Some(last) => history.get(last) == Some(&self.history_hash),
        }
    }
}

/// Compares each request with the one sent before it (every request of the
/// session: main calls, summaries, escalations; a retry sends the same
/// request and so never breaks) and reports what changed.
#[derive(Debug, Default)]
pub struct CacheBreakDetector {
    previous: Option<Fingerprint>,
}

impl CacheBreakDetector {
    /// Records `sent`; returns the break with its causes when the previous
    /// request's prefix, if long enough to be cached, is not reused whole.
    pub fn observe(&mut self, sent: SentRequest<'_>) -> Option<CacheBreak> {
        let system_hash = fnv1a(sent.system.as_bytes());
        let model_hash = fnv1a(sent.model.as_bytes());
        let change = self.previous.as_ref().filter(|p| p.cacheable).and_then(|p| {
            let changed: Vec<&'static str> = [
                ("tools", p.tools_hash != sent.tools_hash),
                ("system", p.system_hash != system_hash),
                ("model", p.model_hash != model_hash),
                ("history", !p.is_prefix_of(sent.history)),
            ]
            .into_iter()
            .filter_map(|(part, differs)| differs.then_some(part))
            .collect();
            (!changed.is_empty()).then_some(CacheBreak { changed })
        });
        self.previous = Some(Fingerprint {
            system_hash,
            tools_hash: sent.tools_hash,
            model_hash,
            history_len: sent.history.len(),
            history_hash: sent.history.last().copied().unwrap_or(0),
            cacheable: sent.estimated_tokens >= MIN_CACHEABLE_TOKENS,
        });
        change
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent<'a>(system: &'a str, tools_hash: u64, history: &'a [u64]) -> SentRequest<'a> {
        SentRequest { system, tools_hash, model: "m", history, estimated_tokens: 2_000 }
    }

    #[test]
    fn a_growing_history_never_breaks() {
        let tools = 1;
        let history = prefix_hashes(&[Message::user("one"), Message::user("two")]);
        let mut detector = CacheBreakDetector::default();
        assert_eq!(detector.observe(sent("s", tools, &history[..1])), None);
        assert_eq!(detector.observe(sent("s", tools, &history[..1])), None, "a retry");
        assert_eq!(detector.observe(sent("s", tools, &history)), None);
    }

    #[test]
    fn each_cause_is_named() {
        let (tools, other_tools) = (1, 2);
        let history = prefix_hashes(&[Message::user("one"), Message::user("two")]);
        let rewritten = prefix_hashes(&[Message::user("summary"), Message::user("two")]);
        let mut detector = CacheBreakDetector::default();
        detector.observe(sent("s", tools, &history));
        let change = detector.observe(sent("s2", other_tools, &history));
        assert_eq!(change, Some(CacheBreak { changed: vec!["tools", "system"] }));
        let change = detector.observe(sent("s2", other_tools, &rewritten));
        assert_eq!(change, Some(CacheBreak { changed: vec!["history"] }));
        let change = detector.observe(SentRequest { model: "m2", ..sent("s2", other_tools, &rewritten) });
        assert_eq!(change, Some(CacheBreak { changed: vec!["model"] }));
    }

    #[test]
    fn a_prompt_too_short_to_cache_breaks_nothing() {
        let tools = 1;
        let mut detector = CacheBreakDetector::default();
        detector.observe(SentRequest { estimated_tokens: 500, ..sent("s", tools, &[]) });
        assert_eq!(detector.observe(sent("other", tools, &[])), None);
        assert!(detector.observe(sent("third", tools, &[])).is_some());
    }

    #[test]
    fn a_rewritten_or_dropped_message_breaks_even_when_the_history_grows() {
        let tools = 1;
        let history = [Message::user("one"), Message::user("two")];
        let rewritten = [Message::user("one"), Message::user("TWO"), Message::user("three")];
        let mut detector = CacheBreakDetector::default();
        detector.observe(sent("s", tools, &prefix_hashes(&history)));
        let change = detector.observe(sent("s", tools, &prefix_hashes(&rewritten)));
        assert_eq!(change, Some(CacheBreak { changed: vec!["history"] }));
        let dropped = detector.observe(sent("s", tools, &prefix_hashes(&rewritten[..1])));
        assert_eq!(dropped, Some(CacheBreak { changed: vec!["history"] }));
        assert_eq!(prefix_hashes(&rewritten)[..1], prefix_hashes(&history)[..1]);
    }
}
