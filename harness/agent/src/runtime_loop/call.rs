//! Phase 2: one streamed model call, usage accounting, and the step record.

use reloop_wire::ModelTurn;

use super::AgentLoop;
use super::prepare::Prepared;
use crate::client::{LlmError, LlmRequest};
use crate::event::LoopEvent;
use crate::outcome::Outcome;
use crate::state::{LoopState, StepRecord};

impl AgentLoop<'_> {
    /// Calls the model; on failure ends the run and returns `None`.
    pub(super) async fn call(&mut self, state: &mut LoopState, prepared: &Prepared) -> Option<ModelTurn> {
        let request = LlmRequest {
            system: &prepared.system,
            messages: &prepared.view,
            tools: &prepared.tools,
            forbid_tools: prepared.final_turn,
            max_output_tokens: self.deps.settings.max_output_tokens,
        };
        let started_ms = self.deps.clock.now_ms();
        let events = self.deps.events.clone();
        let clock = self.deps.clock.clone();
        let step = state.step_index;
        let mut on_text = |text: &str| {
            let _ = events.send(crate::event::TimedEvent {
                step,
                at_ms: clock.now_ms(),
                event: LoopEvent::LlmTextDelta { text: text.to_owned() },
            });
        };
        let result = self
            .deps
            .client
            .stream_turn(&request, self.deps.settings.stream_timeout(), &mut on_text)
            .await;

        let mut record = StepRecord {
            step: state.step_index,
            final_turn: prepared.final_turn,
            transcript_len: state.transcript.len(),
            system_prompt: prepared.system_index,
            estimated_input_tokens: prepared.estimated_input_tokens,
            usage: None,
            finish_reason: None,
            tool_calls: Vec::new(),
            started_ms,
            finished_ms: self.deps.clock.now_ms(),
        };
        match result {
            Ok(turn) => {
                let usage = turn.usage.unwrap_or_default();
                state.add_usage(&usage);
                record.usage = turn.usage;
                record.finish_reason = Some(turn.finish_reason.clone());
                record.tool_calls = turn.tool_calls.iter().map(|c| c.name.clone()).collect();
                state.history.push(record);
                self.emit(state, LoopEvent::LlmDecisionComplete {
                    finish_reason: turn.finish_reason.clone(),
                    tool_calls: turn.tool_calls.len(),
                    text_chars: turn.text.chars().count(),
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                });
                Some(turn)
            }
            Err(error) => {
                state.history.push(record);
                self.emit(state, LoopEvent::LlmError { class: error.class(), message: error.to_string() });
                state.error = Some(error.to_string());
                state.finish(match error {
                    LlmError::ContextWindowExceeded { .. } => Outcome::ContextExceeded,
                    _ => Outcome::LlmError,
                });
                None
            }
        }
    }
}
