//! Carrying out the strategy's edits: reporting each with the loop's own
//! estimates and the [`ViewChange`] a report prices with the server's counts,
//! asking the model for summaries (with the mechanical fallback), and the
//! circuit breaker that stops asking after repeated failures (Roku's
//! `MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES`).

use std::collections::BTreeSet;
use std::ops::Range;
use std::time::Duration;

use super::AgentLoop;
use crate::cache_break::prefix_hashes;
use crate::client::LlmRequest;
use crate::clock::with_timeout;
use crate::config::LoopSettings;
use crate::context::{ContextView, Edit, ShownItem, StrategyContext, ViewItem, notes};
use crate::estimate::{Calibration, estimate_prompt};
use crate::event::{LoopEvent, ViewChange};
use crate::message::Message;
use crate::state::{CallPurpose, LoopState};
use crate::tool_schema::FrozenToolSchema;

/// Consecutive failed summaries that trip the breaker.
pub const MAX_CONSECUTIVE_COMPACT_FAILURES: u32 = 3;
/// Edits one step may make, against a strategy that never settles.
const MAX_EDITS_PER_STEP: usize = 8;
/// The output slot of a summary request.
const SUMMARY_MAX_OUTPUT_TOKENS: u32 = 4_096;

/// Counts failed summaries; once tripped, summaries are mechanical.
#[derive(Debug, Default)]
pub(super) struct CircuitBreaker {
    consecutive_failures: u32,
    tripped: bool,
}

impl CircuitBreaker {
    /// Records a failure; `true` when this one trips the breaker.
    fn fail(&mut self) -> bool {
        self.consecutive_failures += 1;
        let trips = !self.tripped && self.consecutive_failures >= MAX_CONSECUTIVE_COMPACT_FAILURES;
        self.tripped |= trips;
        trips
    }

    fn succeed(&mut self) {
        self.consecutive_failures = 0;
    }
}

impl AgentLoop<'_> {
    /// Applies the strategy's planned edits until it has none.
    pub(super) async fn compact_planned(&mut self, state: &mut LoopState) {
        for _ in 0..MAX_EDITS_PER_STEP {
            let raw = self.raw_estimate();
            let context = strategy_context(&self.view, &self.deps.settings, &self.calibration, state, raw);
            let Some(edit) = self.strategy.plan(&context) else { return };
            self.apply(state, edit).await;
        }
    }

    /// Applies the strategy's reactive edit (Layer 4); `false` when it had none.
    pub(super) async fn compact_reactive(&mut self, state: &mut LoopState) -> bool {
        let (tokens_before, change) = (self.raw_estimate(), self.view_change(state));
        self.emit(state, LoopEvent::ReactiveCompactTriggered { strategy: self.strategy.name(), tokens_before, change });
        let raw = self.raw_estimate();
        let context = strategy_context(&self.view, &self.deps.settings, &self.calibration, state, raw);
        let Some(edit) = self.strategy.plan_reactive(&context) else { return false };
        self.apply(state, edit).await;
        true
    }

    /// Carries out `edit` and reports it with the loop's estimates before
    /// and after, and the [`ViewChange`] a report prices them from.
    async fn apply(&mut self, state: &mut LoopState, edit: Edit) {
        let strategy = self.strategy.name();
        let tokens_before = self.raw_estimate();
        let mut change = self.view_change(state);
        let event = match edit {
            Edit::Mask { layer, results } => {
                let newly: BTreeSet<usize> = results.iter().map(|(index, _)| *index).filter(|&i| self.view.shows(i) && !self.view.is_masked(i)).collect();
                change.removed = self.shown(state, newly.iter().map(|&i| ViewItem::Message(i)));
                let cleared = self.view.mask_all(&state.transcript, &results);
                change.added = self.shown(state, newly.iter().map(|&i| ViewItem::Message(i)));
                let tokens_after = self.raw_estimate();
                if layer == 0 {
                    LoopEvent::MicrocompactRan { strategy, cleared, tokens_before, tokens_after, change }
                } else {
                    LoopEvent::CompactComplete { strategy, layer, tokens_before, tokens_after, used_fallback: false, change }
                }
            }
            Edit::Collapse { rounds } => {
                for range in rounds.iter().rev() {
                    let messages = self.view.render_range(&state.transcript, range.clone());
                    self.replace(state, range.clone(), vec![ViewItem::Note(notes::collapsed_round(&messages))], &mut change);
                }
                LoopEvent::MidCompactLayer1Ran { strategy, rounds: rounds.len(), tokens_before, tokens_after: self.raw_estimate(), change }
            }
            Edit::Memory { range } => {
                let messages = self.view.render_range(&state.transcript, range.clone());
                self.replace(state, range, vec![ViewItem::Note(notes::session_memory(&messages))], &mut change);
                LoopEvent::MidCompactLayer2Ran { strategy, messages: messages.len(), tokens_before, tokens_after: self.raw_estimate(), change }
            }
            Edit::Summarize { layer, range, keep_users } => {
                let estimated_tokens = self.calibration.apply(self.raw_estimate());
                let window = self.deps.settings.context_window;
                self.emit(state, LoopEvent::CompactTriggered { strategy, layer, estimated_tokens, window });
                let messages = self.view.render_range(&state.transcript, range.clone());
                let summary = self.summarize(state, &messages).await;
                let used_fallback = summary.is_none();
                let note = summary.map_or_else(|| notes::session_memory(&messages), |s| notes::summary_note(&s));
                let mut replacement: Vec<ViewItem> = keep_users.into_iter().map(ViewItem::Message).collect();
                replacement.push(ViewItem::Note(note));
                self.replace(state, range, replacement, &mut change);
                LoopEvent::CompactComplete { strategy, layer, tokens_before, tokens_after: self.raw_estimate(), used_fallback, change }
            }
        };
        self.emit(state, event);
    }

    /// Replaces the view's items `range` by `replacement`, noting both in `change`.
    fn replace(&mut self, state: &LoopState, range: Range<usize>, replacement: Vec<ViewItem>, change: &mut ViewChange) {
        change.removed.extend(self.shown(state, self.view.items()[range.clone()].iter().cloned()));
        change.added.extend(self.shown(state, replacement.iter().cloned()));
        self.view.replace(range, replacement, &state.transcript);
    }

    /// `items` as the view shows them now.
    fn shown(&self, state: &LoopState, items: impl IntoIterator<Item = ViewItem>) -> Vec<ShownItem> {
        items.into_iter().map(|item| self.view.shown(&item, &state.transcript)).collect()
    }

    /// A change, yet empty, of the view as it stands after the calls made so far.
    fn view_change(&self, state: &LoopState) -> ViewChange {
        ViewChange { sub_agent: None, calls_before: state.calls.len(), transcript_len: self.view.synced(), removed: Vec::new(), added: Vec::new() }
    }

    /// Asks the model to summarize `messages` through the same provider;
    /// `None` when it failed, took too long, or the breaker has tripped.
    async fn summarize(&mut self, state: &mut LoopState, messages: &[Message]) -> Option<String> {
        if self.breaker.tripped {
            return None;
        }
        let request_messages = [Message::user(notes::summary_request(messages))];
        let no_tools = FrozenToolSchema::none();
        let request = LlmRequest {
            system: notes::SUMMARY_SYSTEM_PROMPT,
            messages: &request_messages,
            tools: &no_tools,
            forbid_tools: false,
            max_output_tokens: SUMMARY_MAX_OUTPUT_TOKENS,
            stream: true,
        };
        let history = prefix_hashes(&request_messages);
        let meta = super::call::CallMeta {
            history: &history,
            system_index: usize::MAX,
            estimated_input_tokens: estimate_prompt(notes::SUMMARY_SYSTEM_PROMPT, &request_messages, ""),
            estimated_uncompacted_input_tokens: 0,
            raw_estimated_input_tokens: None,
        };
        let limit = Duration::from_secs(self.deps.settings.summary_timeout_secs);
        let clock = self.deps.clock.clone();
        let outcome = with_timeout(clock.as_ref(), limit, self.call_with_retries(state, &meta, &request, CallPurpose::Compaction)).await;
        match outcome {
            Some(Ok(turn)) if !turn.text.trim().is_empty() => {
                self.breaker.succeed();
                Some(turn.text)
            }
            failed => {
                if failed.is_none() {
                    // The summary's deadline dropped the call in flight.
                    if let Some(last) = state.calls.last_mut().filter(|c| c.error == Some(super::call::ABANDONED)) {
                        last.finished_ms = self.deps.clock.now_ms();
                    }
                }
                if self.breaker.fail() {
                    let consecutive_failures = self.breaker.consecutive_failures;
                    self.emit(state, LoopEvent::AutoCompactCircuitBreakerTripped { consecutive_failures });
                }
                None
            }
        }
    }
}

/// What the strategy sees: the view with its running estimates; the
/// pressure is the calibrated estimate (Roku's `estimate_prompt_pressure`)
/// of `raw_estimate`, the whole request as it stands.
fn strategy_context<'s>(
    view: &'s ContextView,
    settings: &LoopSettings,
    calibration: &Calibration,
    state: &'s LoopState,
    raw_estimate: u64,
) -> StrategyContext<'s> {
    StrategyContext {
        transcript: &state.transcript,
        view,
        estimated_tokens: calibration.apply(raw_estimate),
        window: settings.context_window,
        max_output_tokens: settings.max_output_tokens,
        step: state.step_index,
    }
}
