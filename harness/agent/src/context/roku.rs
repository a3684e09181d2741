//! Roku's layered compaction (seeds: agent loop and token economy).
//!
//! Every step Layer 0 clears tool results older than the newest 3. Above
//! the mid-water mark (60 % of the window) Layer 1 collapses old tool rounds
//! to one line per call, then, if still above, Layer 2 replaces the older
//! history with the session memory. Above the high-water mark (75 %) Layer 3
//! asks the model for a summary of the older history. After a context
//! window error, Layer 4 does the same at once, keeping only the last round.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ContextStrategy, Edit, Planned, StrategyContext};
use crate::context::microcompact::{CLEARED_PLACEHOLDER, Microcompactor, RETAIN_RECENT};

/// Roku's constants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RokuConfig {
    /// Tool results Layer 0 keeps intact (`MICROCOMPACT_RETAIN_RECENT`).
    pub microcompact_retain: usize,
    /// Mid-water mark (`MID_WATER_TRIGGER_RATIO`).
    pub mid_water_ratio: f64,
    /// High-water mark (`compact_threshold_ratio`, default 0.75).
    pub high_water_ratio: f64,
    /// Recent rounds Layers 1–3 leave alone.
    pub keep_recent_rounds: usize,
}

impl Default for RokuConfig {
    fn default() -> Self {
        Self { microcompact_retain: RETAIN_RECENT, mid_water_ratio: 0.60, high_water_ratio: 0.75, keep_recent_rounds: 4 }
    }
}

/// The strategy.
#[derive(Debug)]
pub struct Roku {
    config: RokuConfig,
    micro: Microcompactor,
    /// The step being planned and the layers already run in it.
    step: Option<u32>,
    ran: [bool; 4],
}

impl Roku {
    /// Roku with `config`.
    pub fn new(config: RokuConfig) -> Self {
        Self { config, micro: Microcompactor::new(config.microcompact_retain), step: None, ran: [false; 4] }
    }

    /// Marks `layer` as run this step; `false` if it already ran.
    fn first_run(&mut self, layer: usize) -> bool {
        !std::mem::replace(&mut self.ran[layer], true)
    }
}

impl ContextStrategy for Roku {
    fn name(&self) -> &str {
        "roku"
    }

    fn on_tool_result(&mut self, index: usize) {
        self.micro.note_tool_result(index);
    }

    fn plan(&mut self, context: &StrategyContext<'_>) -> Planned {
        Ok(self.next_edit(context))
    }

    fn plan_reactive(&mut self, context: &StrategyContext<'_>) -> Planned {
        Ok(self.reactive_edit(context))
    }
}

impl Roku {
    /// The planned edit, if any.
    fn next_edit(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        if self.step != Some(context.step) {
            self.step = Some(context.step);
            self.ran = [false; 4];
        }
        if self.first_run(0) {
            let results = layer0_masks(&mut self.micro, context);
            if !results.is_empty() {
                return Some(Edit::Mask { layer: 0, results });
            }
        }
        let window = context.window as f64;
        let pressure = context.estimated_tokens as f64;
        let keep = self.config.keep_recent_rounds;
        if pressure >= self.config.high_water_ratio * window && self.first_run(3) {
            self.ran = [true; 4];
            return context.rounds().older_than(keep).map(|range| Edit::Summarize { layer: 3, range, keep_users: Vec::new() });
        }
        if pressure < self.config.mid_water_ratio * window {
            return None;
        }
        // Cutting the view into rounds scans it: only under pressure.
        let rounds = context.rounds();
        if self.first_run(1) {
            let old = rounds.old_tool_rounds(keep);
            if !old.is_empty() {
                return Some(Edit::Collapse { rounds: old });
            }
        }
        if self.first_run(2) {
            return rounds.older_than(keep).map(|range| Edit::Memory { range });
        }
        None
    }

    /// The reactive edit (Layer 4), if any.
    fn reactive_edit(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        let range = context.rounds().older_than(1)?;
        Some(Edit::Summarize { layer: 4, range, keep_users: Vec::new() })
    }
}

/// Layer 0: results newly older than the newest `retain`, where clearing
/// shrinks them (a result shorter than the placeholder stays).
pub(super) fn layer0_masks(micro: &mut Microcompactor, context: &StrategyContext<'_>) -> Vec<(usize, String)> {
    micro
        .run()
        .newly_cleared
        .into_iter()
        .filter(|&index| match &context.transcript[index] {
            crate::message::Message::ToolResult { content, .. } => content.len() > CLEARED_PLACEHOLDER.len(),
            _ => false,
        })
        .map(|index| (index, CLEARED_PLACEHOLDER.to_owned()))
        .collect()
}
