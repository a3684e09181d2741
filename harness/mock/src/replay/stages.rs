//! The session's request path as small named stages, in the order
//! [`crate::replay::session::Session::handle`] runs them: **admit** (the context
//! window), **match** (the recorded exchange, or a divergence), **fault**
//! (the planned fault, which may replace the reply), **render** (the
//! recorded turn) and **account** (usage and the prompt-cache simulation).
//! Each is a function of its inputs, testable alone; a stage that ends the
//! request early returns a [`Rejection`].

use reloop_wire::anthropic::{CacheBreakpoint, MAX_CACHE_BREAKPOINTS};
use reloop_wire::{Format, ModelTurn, Usage};

use crate::replay::anthropic_cache::{BreakpointCache, TooManyBreakpoints, min_cacheable_tokens};
use crate::replay::cache_sim::{CacheResult, Granularity, PrefixCache, Segment};
use crate::replay::divergence::Divergence;
use crate::replay::tokens::{PromptCount, content_hash, count_text};
use reloop_recording::fault::Fault;
use reloop_recording::{Exchange, Timing};

/// The answer to a request, before it is put on the wire.
#[derive(Debug)]
pub enum Reply {
    /// A recorded turn (usage filled in) with its latency.
    Turn {
        /// What to render: the recorded parts (usage filled in).
        answer: Box<reloop_wire::reply::Reply>,
        /// A fault to apply to the stream, if any.
        fault: Option<Fault>,
        /// Its simulated latency.
        timing: Timing,
        /// The model name to report.
        model: String,
        /// The request's index in the session, for response ids.
        request_index: usize,
        /// The recorded bytes, when the exchange replays raw (boxed: rare and large).
        raw: Option<Box<reloop_recording::RawResponse>>,
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
    Http(reloop_recording::fault::HttpFault),
    /// A request the provider refuses as malformed (400
    /// `invalid_request_error`), with its message.
    InvalidRequest(String),
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
        Some(window) => {
            Err(Rejection { status: 400, result: "context_length_exceeded", reply: Box::new(Reply::ContextExceeded { window, requested: tokens }) })
        }
        None => Ok(()),
    }
}

/// How the provider caches prompts, decided by the wire format a request
/// came in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Caching {
    /// OpenAI: every long prefix, automatically.
    #[default]
    Automatic,
    /// Anthropic: only the prefixes the request marks with these
    /// `cache_control` breakpoints.
    Breakpoints(Vec<CacheBreakpoint>),
    /// Gemini's implicit caching: every long prefix, past the model's minimum.
    Implicit(Granularity),
}

impl Caching {
    /// The cache model of a request in `format` for `model`: its own
    /// breakpoints when it marked any (Anthropic), else the format's.
    pub fn of(format: Format, model: &str, breakpoints: Option<Vec<CacheBreakpoint>>) -> Self {
        match (breakpoints, format) {
            (Some(marks), _) => Self::Breakpoints(marks),
            (None, Format::Gemini) => Self::Implicit(Granularity::gemini(model)),
            (None, _) => Self::Automatic,
        }
    }
}

/// Admit, breakpoints: more `cache_control` blocks than the API allows get
/// its 400 error.
pub fn admit_breakpoints(caching: &Caching) -> Result<(), Rejection> {
    match caching {
        Caching::Breakpoints(marks) if marks.len() > MAX_CACHE_BREAKPOINTS => {
            Err(Rejection { status: 400, result: "invalid_request", reply: Box::new(Reply::InvalidRequest(TooManyBreakpoints(marks.len()).to_string())) })
        }
        _ => Ok(()),
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
                call.arguments = call.arguments[..keep].into();
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

/// The output tokens of one piece of reasoning: its readable text (opaque
/// signatures, encrypted and redacted content are not text the model wrote).
fn reasoning_tokens(reasoning: &reloop_wire::Reasoning) -> u64 {
    match reasoning {
        reloop_wire::Reasoning::Thinking { thinking, .. } => count_text(thinking),
        reloop_wire::Reasoning::ResponsesItem { summary, .. } => summary.iter().map(|text| count_text(text)).sum(),
        reloop_wire::Reasoning::ReasoningContent { text } => count_text(text),
        // A compaction item is the server's, not text the model wrote.
        reloop_wire::Reasoning::RedactedThinking { .. } | reloop_wire::Reasoning::ResponsesCompaction { .. } => 0,
    }
}

/// What accounting found for an answered request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accounted {
    /// The usage reported to the client.
    pub usage: Usage,
    /// What the prompt cache did.
    pub cache: CacheResult,
    /// Of `usage.cache_write_tokens`, those written with a 1-hour lifetime
    /// (priced at 2x input rather than 1.25x).
    pub cache_write_1h_tokens: u64,
}

/// The session's two cache models; a request uses the one its wire format
/// implies.
#[derive(Debug, Default)]
pub struct Caches {
    /// OpenAI's automatic prefix cache.
    pub automatic: PrefixCache,
    /// Anthropic's breakpoint cache.
    pub breakpoints: BreakpointCache,
}

/// What account needs to know of the request besides its counts.
#[derive(Debug, Clone, Copy)]
pub struct AccountInput<'a> {
    /// The cache model and its breakpoints.
    pub caching: &'a Caching,
    /// The model asked for (Anthropic's minimum cacheable length depends on it).
    pub model: &'a str,
    /// Whether the request has a system prompt (the first counted message).
    pub has_system: bool,
    /// The session's clock, for cache lifetimes.
    pub now_ms: u64,
}

/// Account: prices the reply with the reference tokenizer and runs the
/// request through the session's prompt cache. OpenAI and Gemini report
/// reads only (writes cost nothing extra there); Anthropic reports reads and
/// writes.
pub fn account(caches: &mut Caches, count: &PromptCount, turn: &ModelTurn, input: AccountInput<'_>) -> Accounted {
    let output_tokens = count_text(&turn.text)
        + turn.tool_calls.iter().map(|c| count_text(&c.name) + count_text(&c.arguments)).sum::<u64>()
        + turn.reasoning.iter().map(reasoning_tokens).sum::<u64>();
    let usage = Usage { input_tokens: count.total, output_tokens, cache_read_tokens: 0, cache_write_tokens: 0 };
    match input.caching {
        Caching::Automatic | Caching::Implicit(_) => {
            let granularity = if let Caching::Implicit(granularity) = input.caching { *granularity } else { Granularity::OPENAI };
            let cache = caches.automatic.observe_with(&segments(count), granularity);
            Accounted { usage: Usage { cache_read_tokens: cache.cached_tokens, ..usage }, cache, cache_write_1h_tokens: 0 }
        }
        Caching::Breakpoints(marks) => {
            let min = min_cacheable_tokens(input.model);
            // Refused earlier by `admit_breakpoints`; an empty result here is only a safeguard.
            let result = caches.breakpoints.observe(&segments(count), input.has_system, marks, min, input.now_ms).unwrap_or_default();
            let cache = CacheResult {
                cached_tokens: result.read_tokens,
                written_tokens: result.written_tokens(),
                broke: result.broke,
                lost_tokens: result.lost_tokens,
                expired: result.expired,
                below_minimum: result.below_minimum,
            };
            let usage = Usage { cache_read_tokens: result.read_tokens, cache_write_tokens: result.written_tokens(), ..usage };
            Accounted { usage, cache, cache_write_1h_tokens: result.written_1h_tokens }
        }
    }
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
    use reloop_recording::fault::HttpFault;
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
        let mut caches = Caches::default();
        let count = PromptCount { messages: vec![2_000], message_hashes: vec![7], total: 2_003, ..PromptCount::default() };
        let input = AccountInput { caching: &Caching::Automatic, model: "gpt-4o", has_system: false, now_ms: 0 };
        let first = account(&mut caches, &count, &turn(), input);
        assert_eq!(first.usage.input_tokens, 2_003);
        assert_eq!(first.usage.output_tokens, count_text("read") + count_text("{\"path\":\"a.rs\"}"));
        assert_eq!(first.usage.cache_read_tokens, 0);
        let second = account(&mut caches, &count, &turn(), input);
        assert_eq!(second.usage.cache_read_tokens, 1_920, "whole 128-token blocks of the repeated prefix");
        assert_eq!(second.usage.cache_write_tokens, 0, "OpenAI reports no writes");
    }

    #[test]
    fn anthropic_accounting_reports_writes_then_reads_at_the_breakpoints() {
        use reloop_wire::anthropic::{CachePoint, CacheTtl};
        let mut caches = Caches::default();
        let count = PromptCount { messages: vec![1_500, 600], message_hashes: vec![7, 8], total: 2_103, ..PromptCount::default() };
        let marks = Caching::Breakpoints(vec![
            CacheBreakpoint { at: CachePoint::System, ttl: CacheTtl::OneHour },
            CacheBreakpoint { at: CachePoint::Message(0), ttl: CacheTtl::FiveMinutes },
        ]);
        let input = AccountInput { caching: &marks, model: "claude-sonnet-4-5", has_system: true, now_ms: 0 };
        let first = account(&mut caches, &count, &turn(), input);
        assert_eq!((first.usage.cache_read_tokens, first.usage.cache_write_tokens, first.cache_write_1h_tokens), (0, 2_100, 1_500));
        let second = account(&mut caches, &count, &turn(), AccountInput { now_ms: 1_000, ..input });
        assert_eq!((second.usage.cache_read_tokens, second.usage.cache_write_tokens), (2_100, 0));
        let too_many = Caching::Breakpoints(vec![CacheBreakpoint { at: CachePoint::System, ttl: CacheTtl::FiveMinutes }; 5]);
        let refused = admit_breakpoints(&too_many).unwrap_err();
        assert!(matches!(*refused.reply, Reply::InvalidRequest(ref m) if m.contains("Found 5")));
        assert!(admit_breakpoints(&marks).is_ok());
    }
}
