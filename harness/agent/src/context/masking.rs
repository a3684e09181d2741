//! Observation masking (Lindenbauer et al., "The Complexity Trap", 2025):
//! keep the last M tool results (observations) whole and replace older ones
//! by a one-line placeholder; no model call. With batching, masking waits
//! until `batch` more results have aged out, so the cached prefix changes
//! once per batch instead of every step.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ContextStrategy, Edit, Planned, StrategyContext};
use crate::message::Message;

/// Masking's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MaskingConfig {
    /// Observations kept whole (M = 10 in the paper).
    pub keep: usize,
    /// Aged-out observations gathered before masking them together (1 = at once).
    pub batch: usize,
}

impl Default for MaskingConfig {
    fn default() -> Self {
        Self { keep: 10, batch: 1 }
    }
}

/// The strategy.
#[derive(Debug)]
pub struct Masking {
    config: MaskingConfig,
}

impl Masking {
    /// Masking with `config`.
    pub fn new(config: MaskingConfig) -> Self {
        Self { config }
    }

    fn masks(context: &StrategyContext<'_>, keep: usize) -> Vec<(usize, String)> {
        let live = context.view.live_tool_results(context.transcript);
        let old = live.len().saturating_sub(keep);
        live[..old].iter().map(|&index| (index, placeholder(&context.transcript[index]))).collect()
    }
}

/// "[Observation omitted: read_file returned 120 lines]".
fn placeholder(message: &Message) -> String {
    match message {
        Message::ToolResult { tool_name, content, is_error, .. } => {
            let verb = if *is_error { "failed with" } else { "returned" };
            format!("[Observation omitted: {tool_name} {verb} {} lines]", content.lines().count())
        }
        _ => String::from("[Observation omitted]"),
    }
}

impl ContextStrategy for Masking {
    fn name(&self) -> &str {
        "masking"
    }

    fn plan(&mut self, context: &StrategyContext<'_>) -> Planned {
        Ok(self.next_edit(context))
    }

    fn plan_reactive(&mut self, context: &StrategyContext<'_>) -> Planned {
        Ok(self.reactive_edit(context))
    }
}

impl Masking {
    /// The planned edit, if any.
    fn next_edit(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        let live = context.view.live_tool_results(context.transcript).len();
        if live < self.config.keep + self.config.batch.max(1) {
            return None;
        }
        let results = Self::masks(context, self.config.keep);
        (!results.is_empty()).then_some(Edit::Mask { layer: 0, results })
    }

    /// The reactive edit (Layer 4), if any.
    fn reactive_edit(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        let results = Self::masks(context, 1);
        (!results.is_empty()).then_some(Edit::Mask { layer: 4, results })
    }
}
