//! Everything the loop tells the outside world, as one enum.
//!
//! The variants are Roku's `LoopEvent` list, plus the ones its peers need
//! (doom loops, retries, the step budget's last turn, scripted replies). Some
//! belong to later parts of the context economy and provider client; they
//! exist now so that reports and consumers have one stable vocabulary.

use serde::Serialize;

use reloop_wire::FinishReason;

use crate::context::ShownItem;

/// One loop event. Field names carry their meaning; token counts are the
/// loop's own (estimates, or the provider's usage where named so). A
/// compaction's `tokens_before`/`tokens_after` are the loop's estimates; its
/// [`ViewChange`] (not serialized) lets a report price both sides with the
/// server's counts instead ([`LoopEvent::set_tokens`]).
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LoopEvent {
    /// A tool call starts executing.
    ToolStart { call_id: String, tool: String, arguments: String },
    /// A tool call finished.
    ToolEnd { call_id: String, tool: String, is_error: bool, elapsed_ms: u64, result_summary: String },
    /// Streamed text from the model.
    LlmTextDelta { text: String },
    /// The model's decision for this step is complete.
    LlmDecisionComplete { finish_reason: FinishReason, tool_calls: usize, text_chars: usize, input_tokens: u64, output_tokens: u64 },
    /// A step (one model decision and its tools) finished.
    StepComplete { remaining_step_budget: u32 },
    /// Usage totals at the end of the run.
    TokenUsage { input_tokens: u64, output_tokens: u64, cache_read_tokens: u64, cache_write_tokens: u64, estimated_cost_usd: Option<f64> },
    /// Layer 0 masked old tool results.
    MicrocompactRan {
        strategy: String,
        cleared: usize,
        tokens_before: u64,
        tokens_after: u64,
        #[serde(skip)]
        change: ViewChange,
    },
    /// Layer 1 collapsed old tool rounds.
    MidCompactLayer1Ran {
        strategy: String,
        rounds: usize,
        tokens_before: u64,
        tokens_after: u64,
        #[serde(skip)]
        change: ViewChange,
    },
    /// Layer 2 replaced older history by the session memory.
    MidCompactLayer2Ran {
        strategy: String,
        messages: usize,
        tokens_before: u64,
        tokens_after: u64,
        #[serde(skip)]
        change: ViewChange,
    },
    /// A model-written summary (Layer 3, or 4 when reactive) starts.
    CompactTriggered { strategy: String, layer: u8, estimated_tokens: u64, window: u64 },
    /// A summary (or its mechanical fallback) replaced older history.
    CompactComplete {
        strategy: String,
        layer: u8,
        tokens_before: u64,
        tokens_after: u64,
        used_fallback: bool,
        #[serde(skip)]
        change: ViewChange,
    },
    /// The provider rejected the context; Layer 4 compacts and retries once.
    ReactiveCompactTriggered {
        strategy: String,
        tokens_before: u64,
        #[serde(skip)]
        change: ViewChange,
    },
    /// The prompt-cache fingerprint changed.
    CacheBreakDetected { changed: Vec<&'static str> },
    /// The output slot was raised after a `length` finish.
    OutputSlotEscalated { from: u32, to: u32 },
    /// Compaction failed too often; mechanical compaction from now on.
    AutoCompactCircuitBreakerTripped { consecutive_failures: u32 },
    /// The estimator's scale was recalibrated from real usage.
    EstimatorCalibrated { scale: f64 },
    /// The identical-calls detector found a doom loop.
    DoomLoopDetected { detector: &'static str, tool: String, repeats: usize, reaction: crate::DoomLoopReaction },
    /// The cycle detector found a pattern of `period` calls repeated.
    DoomLoopCycleDetected { tool: String, period: usize, repeats: usize, reaction: crate::DoomLoopReaction },
    /// The no-progress detector found `calls` varying calls with one result.
    DoomLoopNoProgressDetected { tool: String, calls: usize, reaction: crate::DoomLoopReaction },
    /// Credentials in a tool's output were masked before it entered the context.
    ToolOutputScrubbed { call_id: String, tool: String, redactions: usize },
    /// A tool's output was cut to its head and tail.
    ToolOutputTruncated { call_id: String, tool: String, omitted: u64, unit: &'static str },
    /// The step budget is down to its last turn; tools are disabled.
    StepBudgetFinalTurn { step_budget: u32 },
    /// A failed model call is retried after a wait.
    LlmRetry { attempt: u32, wait_ms: u64, reason: String },
    /// The model call failed for good.
    LlmError { class: &'static str, message: String },
    /// The model asked the user and a scripted reply was given.
    UserReplied { question: String, reply: String },
    /// The approval gate refused a call.
    ToolDenied { call_id: String, tool: String, reason: String },
    /// A steering message arrived; the batch's remaining calls are skipped.
    SteeringQueued { message: String, skipped_calls: usize },
    /// A follow-up arrived when the loop would have stopped; it goes on.
    FollowUpQueued { message: String },
    /// The loop ended.
    LoopFinished { outcome: crate::Outcome },
    /// A tool call written in the text (`tool_calling: text`) could not be
    /// read; the model gets the reason as a tool error.
    TextToolCallMalformed { call_id: String, reason: String },
    /// An `Agent` call started a sub-agent with this step budget; its
    /// events follow, stamped with the parent's step.
    SubAgentStarted { call_id: String, task: String, step_budget: u32 },
    /// The sub-agent ended (`outcome` null when it timed out).
    SubAgentFinished { call_id: String, outcome: Option<crate::Outcome>, steps: u32, timed_out: bool, elapsed_ms: u64 },
    /// `tool_search` made deferred tools visible from the next request on.
    ToolsDiscovered { call_id: String, query: String, tools: Vec<String> },
}

/// A compaction as the report tabulates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionFigures<'a> {
    /// The layer (0 mask, 1 collapse, 2 memory, 3 summary, 4 reactive).
    pub layer: u8,
    /// The strategy.
    pub strategy: &'a str,
    /// Request tokens before.
    pub tokens_before: u64,
    /// Request tokens after.
    pub tokens_after: u64,
}

/// Where a compaction sat among its loop's requests and what it rewrote:
/// what a report needs to price the view before and after it from the
/// requests the server logged, without the loop calling a tokenizer or the
/// report rebuilding a request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ViewChange {
    /// The sub-agent whose view it edited (its index among the run's
    /// sub-agents); `None` for the run's own. Set when a sub-agent's events
    /// are handed to its parent.
    pub sub_agent: Option<usize>,
    /// Calls its loop had made when it ran: the request the edited view is
    /// sent in is the first one from this index on that is not a summary.
    pub calls_before: usize,
    /// Transcript messages the view held when it ran.
    pub transcript_len: usize,
    /// The items it took out, as they were shown.
    pub removed: Vec<ShownItem>,
    /// The items it put in, as they are shown.
    pub added: Vec<ShownItem>,
}

/// The `change` of a compaction event, borrowed as the event is.
macro_rules! change_of {
    ($event:expr) => {
        match $event {
            LoopEvent::MicrocompactRan { change, .. }
            | LoopEvent::MidCompactLayer1Ran { change, .. }
            | LoopEvent::MidCompactLayer2Ran { change, .. }
            | LoopEvent::CompactComplete { change, .. }
            | LoopEvent::ReactiveCompactTriggered { change, .. } => Some(change),
            _ => None,
        }
    };
}

impl LoopEvent {
    /// The view change of a compaction event (the figures' events and
    /// [`LoopEvent::ReactiveCompactTriggered`], whose change is empty).
    pub fn view_change(&self) -> Option<&ViewChange> {
        change_of!(self)
    }

    /// The same, to edit (a parent names the sub-agent its events came from).
    pub fn view_change_mut(&mut self) -> Option<&mut ViewChange> {
        change_of!(self)
    }

    /// Puts a report's counts of the view before and after a compaction in
    /// place of the loop's estimates (`after` is unused by the reactive
    /// trigger, which has no after).
    pub fn set_tokens(&mut self, before: u64, after: u64) {
        match self {
            Self::MicrocompactRan { tokens_before, tokens_after, .. }
            | Self::MidCompactLayer1Ran { tokens_before, tokens_after, .. }
            | Self::MidCompactLayer2Ran { tokens_before, tokens_after, .. }
            | Self::CompactComplete { tokens_before, tokens_after, .. } => (*tokens_before, *tokens_after) = (before, after),
            Self::ReactiveCompactTriggered { tokens_before, .. } => *tokens_before = before,
            _ => {}
        }
    }

    /// The figures of a completed compaction; `None` for other events.
    pub fn compaction(&self) -> Option<CompactionFigures<'_>> {
        let (layer, strategy, tokens_before, tokens_after) = match self {
            Self::MicrocompactRan { strategy, tokens_before, tokens_after, .. } => (0, strategy, tokens_before, tokens_after),
            Self::MidCompactLayer1Ran { strategy, tokens_before, tokens_after, .. } => (1, strategy, tokens_before, tokens_after),
            Self::MidCompactLayer2Ran { strategy, tokens_before, tokens_after, .. } => (2, strategy, tokens_before, tokens_after),
            Self::CompactComplete { strategy, layer, tokens_before, tokens_after, .. } => (*layer, strategy, tokens_before, tokens_after),
            _ => return None,
        };
        Some(CompactionFigures { layer, strategy, tokens_before: *tokens_before, tokens_after: *tokens_after })
    }

    /// The variant name in snake case, as it appears in reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ToolStart { .. } => "tool_start",
            Self::ToolEnd { .. } => "tool_end",
            Self::LlmTextDelta { .. } => "llm_text_delta",
            Self::LlmDecisionComplete { .. } => "llm_decision_complete",
            Self::StepComplete { .. } => "step_complete",
            Self::TokenUsage { .. } => "token_usage",
            Self::MicrocompactRan { .. } => "microcompact_ran",
            Self::MidCompactLayer1Ran { .. } => "mid_compact_layer1_ran",
            Self::MidCompactLayer2Ran { .. } => "mid_compact_layer2_ran",
            Self::CompactTriggered { .. } => "compact_triggered",
            Self::CompactComplete { .. } => "compact_complete",
            Self::ReactiveCompactTriggered { .. } => "reactive_compact_triggered",
            Self::CacheBreakDetected { .. } => "cache_break_detected",
            Self::OutputSlotEscalated { .. } => "output_slot_escalated",
            Self::AutoCompactCircuitBreakerTripped { .. } => "auto_compact_circuit_breaker_tripped",
            Self::EstimatorCalibrated { .. } => "estimator_calibrated",
            Self::DoomLoopDetected { .. } => "doom_loop_detected",
            Self::DoomLoopCycleDetected { .. } => "doom_loop_cycle_detected",
            Self::DoomLoopNoProgressDetected { .. } => "doom_loop_no_progress_detected",
            Self::ToolOutputScrubbed { .. } => "tool_output_scrubbed",
            Self::ToolOutputTruncated { .. } => "tool_output_truncated",
            Self::StepBudgetFinalTurn { .. } => "step_budget_final_turn",
            Self::LlmRetry { .. } => "llm_retry",
            Self::LlmError { .. } => "llm_error",
            Self::UserReplied { .. } => "user_replied",
            Self::ToolDenied { .. } => "tool_denied",
            Self::SteeringQueued { .. } => "steering_queued",
            Self::FollowUpQueued { .. } => "follow_up_queued",
            Self::LoopFinished { .. } => "loop_finished",
            Self::TextToolCallMalformed { .. } => "text_tool_call_malformed",
            Self::SubAgentStarted { .. } => "sub_agent_started",
            Self::SubAgentFinished { .. } => "sub_agent_finished",
            Self::ToolsDiscovered { .. } => "tools_discovered",
        }
    }
}

/// An event stamped with where and when it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedEvent {
    /// The step index (0-based) the event belongs to.
    pub step: u32,
    /// The run's clock when it was emitted, in ms.
    pub at_ms: u64,
    /// The event.
    pub event: LoopEvent,
}

/// Where events go (Roku's `LoopEventSender`): an unbounded channel, so the
/// loop never waits on its observers.
pub type LoopEventSender = tokio::sync::mpsc::UnboundedSender<TimedEvent>;
