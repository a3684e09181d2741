//! Phase 1: the context for this step. Freeze the tool schema, run Layer 0,
//! rebuild the system prompt, check the cache fingerprint, build the view.

use super::AgentLoop;
use crate::cache_break::{CacheFingerprint, FrozenToolSchema};
use crate::config::MAX_STEPS_MESSAGE;
use crate::estimate::{estimate_prompt, estimate_text};
use crate::event::LoopEvent;
use crate::message::Message;
use crate::microcompact::CLEARED_PLACEHOLDER;
use crate::state::LoopState;
use crate::tools::{ToolSpec, pseudo_tool_specs};

/// The request material of one step.
pub(super) struct Prepared {
    pub system: String,
    pub system_index: usize,
    pub view: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub final_turn: bool,
    /// The estimate before calibration, which calibration learns from.
    pub raw_estimated_input_tokens: u64,
    /// The estimate the loop acts on: calibrated.
    pub estimated_input_tokens: u64,
}

impl AgentLoop<'_> {
    pub(super) fn prepare(&mut self, state: &mut LoopState) -> Prepared {
        let tools = self.visible_tools();
        let final_turn = state.remaining_step_budget <= 1;
        if final_turn {
            state.transcript.push(Message::user(MAX_STEPS_MESSAGE));
            self.emit(state, LoopEvent::StepBudgetFinalTurn { step_budget: self.deps.settings.step_budget });
        }
        self.microcompact(state);

        let system = self.deps.system_prompt.system_prompt(state.step_index);
        let system_index = state.intern_system_prompt(system.clone());
        let schema = self.schema.as_ref().expect("visible_tools froze the schema");
        if let Some(change) = self.cache.observe(CacheFingerprint::new(&system, schema, self.deps.client.model())) {
            state.cache_breaks += 1;
            self.emit(state, LoopEvent::CacheBreakDetected { changed: change.changed });
        }

        let view = self.view(&state.transcript);
        let raw_estimated_input_tokens = estimate_prompt(&system, &view, schema.json());
        let estimated_input_tokens = self.calibration.apply(raw_estimated_input_tokens);
        Prepared { system, system_index, view, tools, final_turn, raw_estimated_input_tokens, estimated_input_tokens }
    }

    /// The tools to declare, frozen to byte-identical JSON across steps.
    fn visible_tools(&mut self) -> Vec<ToolSpec> {
        let mut specs = self.deps.tools.specs();
        if self.deps.settings.pseudo_tools {
            specs.extend(pseudo_tool_specs());
        }
        let frozen = match self.schema.take() {
            Some(previous) => previous.freeze_or_reuse(&specs),
            None => FrozenToolSchema::freeze(&specs),
        };
        let specs = frozen.specs();
        self.schema = Some(frozen);
        specs
    }

    fn microcompact(&mut self, state: &LoopState) {
        let pass = self.micro.run();
        let replaced: Vec<u64> = pass
            .newly_cleared
            .iter()
            .filter_map(|&index| match &state.transcript[index] {
                Message::ToolResult { content, .. } if worth_clearing(content) => {
                    Some(estimate_text(content).saturating_sub(estimate_text(CLEARED_PLACEHOLDER)))
                }
                _ => None,
            })
            .collect();
        if !replaced.is_empty() {
            let estimated_tokens_freed = replaced.iter().sum();
            self.emit(state, LoopEvent::MicrocompactRan { cleared: replaced.len(), estimated_tokens_freed });
        }
    }

    /// The transcript as sent: cleared tool results replaced by the placeholder.
    fn view(&self, transcript: &[Message]) -> Vec<Message> {
        transcript
            .iter()
            .enumerate()
            .map(|(index, message)| match message {
                Message::ToolResult { call_id, tool_name, is_error, content }
                    if self.micro.is_cleared(index) && worth_clearing(content) =>
                {
                    Message::ToolResult {
                        call_id: call_id.clone(),
                        tool_name: tool_name.clone(),
                        content: CLEARED_PLACEHOLDER.to_owned(),
                        is_error: *is_error,
                    }
                }
                other => other.clone(),
            })
            .collect()
    }
}

/// A result no longer than the placeholder stays: replacing it would grow
/// the prompt and still rewrite the cached prefix.
fn worth_clearing(content: &str) -> bool {
    content.len() > CLEARED_PLACEHOLDER.len()
}
