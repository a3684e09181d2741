//! The session's request path as small named stages, in the order
//! [`crate::session::Session::handle`] runs them: **admit** (the context
//! window), **match** (the recorded exchange, or a divergence), **fault**
//! (the planned fault, which may replace the reply), **render** (the
//! recorded turn) and **account** (usage and the prompt-cache simulation).
//! Each is a function of its inputs, testable alone; a stage that ends the
//! request early returns a [`Rejection`].

use reloop_wire::{ModelTurn, Usage};

use crate::cache_sim::{CacheResult, PrefixCache, Segment};
use crate::divergence::Divergence;
use crate::fault::Fault;
use crate::recording::{Exchange, Timing};
use crate::tokens::{PromptCount, content_hash, count_text};

/// The answer to a request, before it is put on the wire.
#[derive(Debug)]
pub enum Reply {
    /// A recorded turn (usage filled in) with its latency.
    Turn {
        /// The turn to render.
        turn: ModelTurn,
        /// A fault to apply to the stream, if any.
        fault: Option<Fault>,
        /// Its simulated latency.
        timing: Timing,
        /// The model name to report.
        model: String,
        /// The request's index in the session, for response ids.
        request_index: usize,
        /// The recorded bytes, when the exchange replays raw (boxed: rare and large).
        raw: Option<Box<crate::recording::RawResponse>>,
    },
    /// The provider's context-length error.
    ContextExceeded {
        /// The window.
        window: u64,
        /// The prompt's tokens.
        requested: u64,
    },
    /// The recording cannot answer.
    Divergence(Divergence),
    /// An injected HTTP fault, sent as written.
    Http(crate::fault::HttpFault),
}

/// A request answered with an error instead of a turn: what to log and
/// what to send.
#[derive(Debug)]
pub struct Rejection {
    /// HTTP status logged.
    pub status: u16,
    /// The log's `result`.
    pub result: &'static str,
    /// The reply sent (boxed: a turn is large, and rejections are rare).
    pub reply: Box<Reply>,
}

/// Admit: a prompt over the context window gets the provider's
/// context-length error.
pub fn admit(window: Option<u64>, tokens: u64) -> Result<(), Rejection> {
    match window.filter(|window| tokens > *window) {
        Some(window) => Err(Rejection {
            status: 400,
            result: "context_length_exceeded",
            reply: Box::new(Reply::ContextExceeded { window, requested: tokens }),
        }),
        None => Ok(()),
    }
}

/// What a fault left of the request: the log's `result` and the fault the
/// stream still has to play.
#[derive(Debug, PartialEq)]
pub struct FaultEffect {
    /// The log's `result`.
    pub result: &'static str,
    /// A fault applied while streaming.
    pub stream_fault: Option<Fault>,
}

/// Fault: an HTTP or context-length fault replaces the reply (the exchange
/// stays next); truncated arguments edit `turn`; other faults play in the
/// stream.
pub fn apply_fault(fault: Option<Fault>, turn: &mut ModelTurn, window: Option<u64>, tokens: u64) -> Result<FaultEffect, Rejection> {
    let result = match &fault {
        None => "ok",
        Some(Fault::Http(http)) => {
            return Err(Rejection { status: http.status, result: "fault:http", reply: Box::new(Reply::Http(http.clone())) });
        }
        Some(Fault::ContextLengthExceeded) => {
            let window = window.unwrap_or(tokens.saturating_sub(1));
            return Err(Rejection {
                status: 400,
                result: "fault:context_length_exceeded",
                reply: Box::new(Reply::ContextExceeded { window, requested: tokens }),
            });
        }
        Some(Fault::TruncateArguments) => {
            for call in &mut turn.tool_calls {
                let keep = call.arguments.floor_char_boundary(call.arguments.len() / 2);
                call.arguments.truncate(keep);
            }
            "fault:truncate_arguments"
        }
        Some(_) => "fault:stream",
    };
    Ok(FaultEffect { result, stream_fault: fault.filter(|f| !matches!(f, Fault::TruncateArguments)) })
}

/// Render: the recorded turn of exchange `index`, usage still unset.
pub fn render(exchange: &Exchange, index: usize) -> ModelTurn {
    exchange.to_turn(index)
}

/// What accounting found for an answered request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accounted {
    /// The usage reported to the client.
    pub usage: Usage,
    /// What the prompt cache did.
    pub cache: CacheResult,
}

/// Account: prices the reply with the reference tokenizer and runs the
/// request through the session's prompt cache.
pub fn account(cache: &mut PrefixCache, count: &PromptCount, turn: &ModelTurn) -> Accounted {
    let cache = cache.observe(&segments(count));
    let output_tokens =
        count_text(&turn.text) + turn.tool_calls.iter().map(|c| count_text(&c.name) + count_text(&c.arguments)).sum::<u64>();
    let usage = Usage { input_tokens: count.total, output_tokens, cache_read_tokens: cache.cached_tokens, cache_write_tokens: 0 };
    Accounted { usage, cache }
}

/// The request's cacheable segments: tools first, then the system prompt
/// and each message, keyed by the hashes they were counted by.
fn segments(count: &PromptCount) -> Vec<Segment> {
    let mut segments = Vec::with_capacity(count.messages.len() + 1);
    segments.push(Segment { hash: content_hash(&count.tools_json), tokens: count.tools });
    segments.extend(count.message_hashes.iter().zip(&count.messages).map(|(hash, tokens)| Segment { hash: *hash, tokens: *tokens }));
    segments
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::HttpFault;
    use reloop_wire::{FinishReason, ToolCall};

    fn turn() -> ModelTurn {
        ModelTurn {
            tool_calls: vec![ToolCall { id: "c".into(), name: "read".into(), arguments: "{\"path\":\"a.rs\"}".into() }],
            finish_reason: FinishReason::ToolCalls,
            ..ModelTurn::default()
        }
    }

    #[test]
    fn admit_refuses_only_above_the_window() {
        assert!(admit(None, 1_000_000).is_ok());
        assert!(admit(Some(100), 100).is_ok());
        let rejected = admit(Some(100), 101).unwrap_err();
        assert_eq!((rejected.status, rejected.result), (400, "context_length_exceeded"));
        assert!(matches!(*rejected.reply, Reply::ContextExceeded { window: 100, requested: 101 }));
    }

    #[test]
    fn faults_replace_edit_or_stream() {
        let mut t = turn();
        assert_eq!(apply_fault(None, &mut t, None, 10).unwrap(), FaultEffect { result: "ok", stream_fault: None });
        let http = HttpFault { status: 429, headers: Default::default(), body: None };
        let rejected = apply_fault(Some(Fault::Http(http)), &mut t, None, 10).unwrap_err();
        assert_eq!((rejected.status, rejected.result), (429, "fault:http"));
        let rejected = apply_fault(Some(Fault::ContextLengthExceeded), &mut t, None, 10).unwrap_err();
        assert!(matches!(*rejected.reply, Reply::ContextExceeded { window: 9, requested: 10 }));
        let effect = apply_fault(Some(Fault::TruncateArguments), &mut t, None, 10).unwrap();
        assert_eq!(effect, FaultEffect { result: "fault:truncate_arguments", stream_fault: None });
        assert_eq!(t.tool_calls[0].arguments, "{\"path\"");
        let cut = Fault::Cut { after_events: 2 };
        assert_eq!(apply_fault(Some(cut.clone()), &mut t, None, 10).unwrap(), FaultEffect { result: "fault:stream", stream_fault: Some(cut) });
    }

    #[test]
    fn account_prices_output_and_reads_the_cache_on_a_repeat() {
        let mut cache = PrefixCache::default();
        let count = PromptCount { messages: vec![2_000], message_hashes: vec![7], total: 2_003, ..PromptCount::default() };
        let first = account(&mut cache, &count, &turn());
        assert_eq!(first.usage.input_tokens, 2_003);
        assert_eq!(first.usage.output_tokens, count_text("read") + count_text("{\"path\":\"a.rs\"}"));
        assert_eq!(first.usage.cache_read_tokens, 0);
        let second = account(&mut cache, &count, &turn());
        assert_eq!(second.usage.cache_read_tokens, 1_920, "whole 128-token blocks of the repeated prefix");
    }
}
