//! Phase 1: the context for this step. Take the frozen tool schema, let the
//! compaction strategy edit the view, rebuild the system prompt, check the
//! cache fingerprint, render the view.

use std::sync::Arc;

use super::AgentLoop;
use crate::estimate::{prompt_tokens, text_tokens};
use crate::event::LoopEvent;
use crate::message::Message;
use crate::prompts::MAX_STEPS_MESSAGE;
use crate::state::LoopState;
use crate::text_tools;
use crate::tool_schema::FrozenToolSchema;
use crate::tool_set::visible_tools;

/// The request material of one step.
pub(super) struct Prepared {
    pub system: String,
    pub system_index: usize,
    pub view: Vec<Message>,
    /// The view's prefix hashes, for the cache-break detector.
    pub history: Vec<u64>,
    pub tools: Arc<FrozenToolSchema>,
    pub final_turn: bool,
    /// The estimate before calibration, which calibration learns from.
    pub raw_estimated_input_tokens: u64,
    /// The estimate the loop acts on: calibrated.
    pub estimated_input_tokens: u64,
    /// The uncalibrated estimate of the uncompacted counterfactual.
    pub raw_uncompacted_input_tokens: u64,
}

impl AgentLoop<'_> {
    pub(super) async fn prepare(&mut self, state: &mut LoopState) -> Prepared {
        let tools = self.tools.current(|| visible_tools(self.deps.tools, &self.deps.settings, &state.discovered_tools));
        let final_turn = state.remaining_step_budget <= 1;
        if final_turn {
            state.transcript.push(Message::user(MAX_STEPS_MESSAGE));
            self.emit(state, LoopEvent::StepBudgetFinalTurn { step_budget: self.deps.settings.step_budget });
        }
        let mut system = self.deps.system_prompt.system_prompt(state.step_index);
        let tools = if self.deps.settings.text_tool_calling() {
            system = text_tools::system_with_protocol(&system, tools.specs());
            Arc::new(FrozenToolSchema::none())
        } else {
            tools
        };
        let system_index = state.intern_system_prompt(system.clone());
        if self.system_estimate.0 != system_index {
            self.system_estimate = (system_index, text_tokens(&system));
        }
        self.view.sync(&state.transcript);
        self.compact_planned(state).await;

        let mut prepared = Prepared {
            system,
            system_index,
            // The previous step's rendering, which `render` reuses.
            view: std::mem::take(&mut self.last_view),
            history: Vec::new(),
            tools,
            final_turn,
            raw_estimated_input_tokens: 0,
            estimated_input_tokens: 0,
            raw_uncompacted_input_tokens: 0,
        };
        self.render(state, &mut prepared);
        prepared
    }

    /// Renders the view into `prepared` (reusing what its `view` already
    /// holds), with the loop's estimate of it, raw and calibrated.
    pub(super) fn render(&self, state: &LoopState, prepared: &mut Prepared) {
        prepared.view = self.view.render_reusing(&state.transcript, std::mem::take(&mut prepared.view));
        if self.deps.settings.text_tool_calling() {
            prepared.view = text_tools::render_view(std::mem::take(&mut prepared.view));
        }
        prepared.history.clear();
        prepared.history.extend_from_slice(self.view.prefix_hashes());
        prepared.raw_estimated_input_tokens = self.raw_estimate();
        prepared.estimated_input_tokens = self.calibration.apply(prepared.raw_estimated_input_tokens);
        prepared.raw_uncompacted_input_tokens = self.raw_uncompacted_estimate();
    }

    /// The loop's uncalibrated estimate of the request as the view stands:
    /// a sum of figures kept beside the system prompt, the frozen schema and
    /// each view item, never a scan of the prompt.
    pub(super) fn raw_estimate(&self) -> u64 {
        prompt_tokens(self.view.items().len(), self.system_estimate.1 + self.schema_estimate() + self.view.text_tokens())
    }

    /// The estimate of the declared schema: none when the tools are
    /// described in the system prompt instead (its estimate has them).
    fn schema_estimate(&self) -> f64 {
        match self.tools.frozen() {
            Some(schema) if !self.deps.settings.text_tool_calling() => schema.text_tokens(),
            _ => 0.0,
        }
    }

    /// The same for the uncompacted counterfactual: the whole transcript
    /// with nothing masked or replaced.
    pub(super) fn raw_uncompacted_estimate(&self) -> u64 {
        prompt_tokens(self.view.synced(), self.system_estimate.1 + self.schema_estimate() + self.view.uncompacted_text_tokens())
    }
}
