//! Phase 2: the model call. Streams the answer, retries what may succeed on
//! a second try (waiting what the provider asked, else backing off),
//! escalates the output slot after a `length` finish, and records every
//! HTTP call for the report.

use reloop_wire::{FinishReason, ModelTurn};

use super::AgentLoop;
use super::prepare::Prepared;
use crate::cache_break::SentRequest;
use crate::client::{LlmError, LlmRequest};
use crate::context::StrategyName;
use crate::event::{LoopEvent, TimedEvent};
use crate::outcome::Outcome;
use crate::price_table::max_output_tokens;
use crate::state::{CallPurpose, CallRecord, LoopState};

/// The error class of a call a deadline abandoned mid-flight.
pub(super) const ABANDONED: &str = "abandoned";

/// What a call record needs to know of the request.
pub(super) struct CallMeta<'a> {
    /// The request's messages as prefix hashes, for the cache-break detector.
    pub history: &'a [u64],
    /// Index of the system prompt in the state (`usize::MAX`: not the loop's).
    pub system_index: usize,
    /// The loop's estimate of the request, as it acts on it.
    pub estimated_input_tokens: u64,
    /// The uncalibrated estimate of the request uncompacted (0 for summaries).
    pub estimated_uncompacted_input_tokens: u64,
    /// The uncalibrated estimate, which calibration learns from; `None` for
    /// requests that are not the loop's context (summaries).
    pub raw_estimated_input_tokens: Option<u64>,
}

impl<'a> CallMeta<'a> {
    fn of(prepared: &'a Prepared) -> Self {
        Self {
            history: &prepared.history,
            system_index: prepared.system_index,
            estimated_input_tokens: prepared.estimated_input_tokens,
            estimated_uncompacted_input_tokens: prepared.raw_uncompacted_input_tokens,
            raw_estimated_input_tokens: Some(prepared.raw_estimated_input_tokens),
        }
    }
}

impl AgentLoop<'_> {
    /// Calls the model; after a context-window error compacts reactively
    /// (Layer 4) and tries once more. On a final failure ends the run and
    /// returns `None`.
    pub(super) async fn call(&mut self, state: &mut LoopState, prepared: &mut Prepared) -> Option<ModelTurn> {
        let purpose = if prepared.final_turn { CallPurpose::FinalTurn } else { CallPurpose::Main };
        let mut reacted = false;
        let turn = loop {
            let request = main_request(prepared, self.deps.settings.max_output_tokens);
            let meta = CallMeta::of(prepared);
            match self.call_with_retries(state, &meta, &request, purpose).await {
                Ok(turn) => break turn,
                Err(error @ LlmError::ContextWindowExceeded { .. }) if !reacted => match self.compact_reactive(state).await {
                    Ok(true) => {
                        reacted = true;
                        self.render(state, prepared);
                    }
                    Ok(false) => {
                        self.fail_call(state, error);
                        return None;
                    }
                    Err(failed) => {
                        self.fail_strategy(state, failed);
                        return None;
                    }
                },
                Err(error) => {
                    self.fail_call(state, error);
                    return None;
                }
            }
        };
        let mut request = main_request(prepared, self.deps.settings.max_output_tokens);
        if !self.should_escalate(&turn, request.max_output_tokens) {
            return Some(turn);
        }
        let from = request.max_output_tokens;
        request.max_output_tokens = max_output_tokens(self.deps.client.model());
        request.stream = false;
        self.emit(state, LoopEvent::OutputSlotEscalated { from, to: request.max_output_tokens });
        match self.call_with_retries(state, &CallMeta::of(prepared), &request, CallPurpose::Escalation).await {
            Ok(escalated) => Some(escalated),
            // The truncated answer is still an answer.
            Err(_) => Some(turn),
        }
    }

    fn should_escalate(&self, turn: &ModelTurn, slot: u32) -> bool {
        turn.finish_reason == FinishReason::Length
            && self.deps.settings.output_slot_escalation
            && self.deps.client.supports_output_slot_cap()
            && slot < max_output_tokens(self.deps.client.model())
    }

    /// One logical call: the first try and its retries.
    pub(super) async fn call_with_retries(
        &mut self,
        state: &mut LoopState,
        meta: &CallMeta<'_>,
        request: &LlmRequest<'_>,
        purpose: CallPurpose,
    ) -> Result<ModelTurn, LlmError> {
        let mut attempt = 0;
        loop {
            let result = self.call_once(state, meta, request, purpose, attempt).await;
            let error = match result {
                Ok(turn) => return Ok(turn),
                Err(error) => error,
            };
            let Some(wait) = self.deps.settings.retry.wait_before(attempt, &error) else { return Err(error) };
            attempt += 1;
            state.llm_retries += 1;
            self.emit(state, LoopEvent::LlmRetry { attempt, wait_ms: wait.as_millis() as u64, reason: error.to_string() });
            self.deps.clock.sleep(wait).await;
        }
    }

    /// One HTTP call, recorded.
    async fn call_once(
        &mut self,
        state: &mut LoopState,
        meta: &CallMeta<'_>,
        request: &LlmRequest<'_>,
        purpose: CallPurpose,
        attempt: u32,
    ) -> Result<ModelTurn, LlmError> {
        let started_ms = self.deps.clock.now_ms();
        let events = self.deps.events.clone();
        let clock = self.deps.clock.clone();
        let step = state.step_index;
        let mut on_text = |text: &str| {
            let _ = events.send(TimedEvent { step, at_ms: clock.now_ms(), event: LoopEvent::LlmTextDelta { text: text.to_owned() } });
        };
        let sent = SentRequest {
            system: request.system,
            tools_hash: request.tools.hash(),
            model: self.deps.client.model(),
            history: meta.history,
            estimated_tokens: meta.estimated_input_tokens,
        };
        let cache_break = self.cache.observe(sent).map(|change| change.changed);
        if let Some(changed) = &cache_break {
            state.cache_breaks += 1;
            self.emit(state, LoopEvent::CacheBreakDetected { changed: changed.clone() });
        }
        // Recorded before the call, as abandoned: if a deadline drops this
        // future mid-flight, the request still happened and stays counted.
        let index = state.calls.len();
        let tool_set = state.intern_tool_set(request.tools.specs());
        state.calls.push(CallRecord {
            step,
            purpose,
            attempt,
            error: Some(ABANDONED),
            transcript_len: state.transcript.len(),
            system_prompt: meta.system_index,
            tool_set,
            estimated_input_tokens: meta.estimated_input_tokens,
            estimated_uncompacted_input_tokens: meta.estimated_uncompacted_input_tokens,
            usage: None,
            finish_reason: None,
            tool_calls: Vec::new(),
            cache_break,
            started_ms,
            finished_ms: started_ms,
            sub_agent: None,
        });
        let result = self.deps.client.stream_turn(request, self.deps.settings.stream_idle_timeout(), &mut on_text).await;
        let record = &mut state.calls[index];
        record.finished_ms = self.deps.clock.now_ms();
        match &result {
            Ok(turn) => {
                let usage = turn.usage.unwrap_or_default();
                record.error = None;
                record.usage = turn.usage;
                record.finish_reason = Some(turn.finish_reason.clone());
                record.tool_calls = turn.tool_calls.iter().map(|c| c.name.to_string()).collect();
                state.add_usage(&usage);
                // Under `native` the provider counts the prompt it edited, not the view the loop
                // estimated: nothing to learn from.
                let estimated = meta.raw_estimated_input_tokens.filter(|_| !self.deps.settings.strategy.is(StrategyName::Native));
                let calibrated = estimated.and_then(|raw| self.calibration.observe(raw, usage.input_tokens));
                if let Some(scale) = calibrated {
                    self.emit(state, LoopEvent::EstimatorCalibrated { scale });
                }
                self.emit(
                    state,
                    LoopEvent::LlmDecisionComplete {
                        finish_reason: turn.finish_reason.clone(),
                        tool_calls: turn.tool_calls.len(),
                        text_chars: turn.text.chars().count(),
                        input_tokens: usage.input_tokens,
                        output_tokens: usage.output_tokens,
                    },
                );
            }
            Err(error) => record.error = Some(error.class()),
        }
        result
    }

    fn fail_call(&mut self, state: &mut LoopState, error: LlmError) {
        self.emit(state, LoopEvent::LlmError { class: error.class(), message: error.to_string() });
        state.error = Some(error.to_string());
        state.finish(match error {
            LlmError::ContextWindowExceeded { .. } => Outcome::ContextExceeded,
            _ => Outcome::LlmError,
        });
    }
}

/// The main-loop request for `prepared`.
fn main_request(prepared: &Prepared, max_output_tokens: u32) -> LlmRequest<'_> {
    LlmRequest {
        system: &prepared.system,
        messages: &prepared.view,
        tools: &prepared.tools,
        // With no tools declared (text tool calling) there is nothing to forbid.
        forbid_tools: prepared.final_turn && !prepared.tools.specs().is_empty(),
        max_output_tokens,
        stream: true,
    }
}
