//! Everything the loop tells the outside world, as one enum.
//!
//! The variants are Roku's `LoopEvent` list, plus the ones its peers need
//! (doom loops, retries, the step budget's last turn, scripted replies). Some
//! belong to later parts of the context economy and provider client; they
//! exist now so that reports and consumers have one stable vocabulary.

use serde::Serialize;

use reloop_wire::FinishReason;

/// One loop event. Field names carry their meaning; token counts are the
/// loop's own (estimates, or the provider's usage where named so).
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
    /// Layer 0 cleared old tool results.
    MicrocompactRan { cleared: usize, estimated_tokens_freed: u64 },
    /// Layer 1 deterministic collapse ran.
    MidCompactLayer1Ran { tokens_before: u64, tokens_after: u64 },
    /// Layer 2 session-memory summary ran.
    MidCompactLayer2Ran { tokens_before: u64, tokens_after: u64 },
    /// Layer 3 high-water compaction starts.
    CompactTriggered { estimated_tokens: u64, threshold: u64 },
    /// Layer 3 finished.
    CompactComplete { tokens_before: u64, tokens_after: u64, used_fallback: bool },
    /// Layer 4 reactive compaction after a context-window error.
    ReactiveCompactTriggered { tokens_before: u64 },
    /// The prompt-cache fingerprint changed.
    CacheBreakDetected { changed: Vec<&'static str> },
    /// The output slot was raised after a `length` finish.
    OutputSlotEscalated { from: u32, to: u32 },
    /// Compaction failed too often; mechanical compaction from now on.
    AutoCompactCircuitBreakerTripped { consecutive_failures: u32 },
    /// The estimator's scale was recalibrated from real usage.
    EstimatorCalibrated { scale: f64 },
    /// A doom loop was detected.
    DoomLoopDetected { detector: &'static str, tool: String, repeats: usize, reaction: crate::DoomLoopReaction },
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
}

impl LoopEvent {
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
            Self::StepBudgetFinalTurn { .. } => "step_budget_final_turn",
            Self::LlmRetry { .. } => "llm_retry",
            Self::LlmError { .. } => "llm_error",
            Self::UserReplied { .. } => "user_replied",
            Self::ToolDenied { .. } => "tool_denied",
            Self::SteeringQueued { .. } => "steering_queued",
            Self::FollowUpQueued { .. } => "follow_up_queued",
            Self::LoopFinished { .. } => "loop_finished",
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
