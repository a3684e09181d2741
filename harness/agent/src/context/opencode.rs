//! OpenCode's context management (`session/compaction.ts`): prune old tool
//! outputs, and summarize when the context overflows.
//!
//! Pruning walks the history from the newest message back, never touching
//! the last 2 user turns; tool outputs beyond the first 40,000 tokens of
//! outputs met are cleared, but only when that frees more than 20,000
//! tokens. Overflow is a prompt larger than the window less the output slot;
//! then the history is summarized by the model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::view::ViewItem;
use super::{ContextStrategy, Edit, StrategyContext};
use crate::context::microcompact::CLEARED_PLACEHOLDER;
use crate::message::Message;

/// OpenCode's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OpencodeConfig {
    /// Tool-output tokens protected from pruning (`PRUNE_PROTECT`).
    pub prune_protect_tokens: u64,
    /// Least tokens a prune must free to happen (`PRUNE_MINIMUM`).
    pub prune_minimum_tokens: u64,
    /// Recent user turns never pruned.
    pub protected_user_turns: usize,
}

impl Default for OpencodeConfig {
    fn default() -> Self {
        Self { prune_protect_tokens: 40_000, prune_minimum_tokens: 20_000, protected_user_turns: 2 }
    }
}

/// The strategy.
#[derive(Debug)]
pub struct Opencode {
    config: OpencodeConfig,
    pruned_at: Option<u32>,
}

impl Opencode {
    /// OpenCode with `config`.
    pub fn new(config: OpencodeConfig) -> Self {
        Self { config, pruned_at: None }
    }

    fn prune(&self, context: &StrategyContext<'_>) -> Vec<(usize, String)> {
        let mut user_turns = 0;
        let mut protected = 0;
        let mut candidates = Vec::new();
        let mut freeable = 0;
        for (position, item) in context.view.items().iter().enumerate().rev() {
            let ViewItem::Message(index) = item else { continue };
            match &context.transcript[*index] {
                Message::User { .. } => user_turns += 1,
                Message::ToolResult { .. } if user_turns >= self.config.protected_user_turns && !context.view.is_masked(*index) => {
                    let tokens = context.item_tokens(position);
                    if protected < self.config.prune_protect_tokens {
                        protected += tokens;
                    } else {
                        freeable += tokens;
                        candidates.push((*index, CLEARED_PLACEHOLDER.to_owned()));
                    }
                }
                _ => {}
            }
        }
        if freeable > self.config.prune_minimum_tokens { candidates } else { Vec::new() }
    }
}

impl ContextStrategy for Opencode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn plan(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        if self.pruned_at != Some(context.step) {
            self.pruned_at = Some(context.step);
            let results = self.prune(context);
            if !results.is_empty() {
                return Some(Edit::Mask { layer: 0, results });
            }
        }
        let usable = context.window.saturating_sub(u64::from(context.max_output_tokens));
        if context.estimated_tokens <= usable {
            return None;
        }
        let range = context.rounds().older_than(1)?;
        Some(Edit::Summarize { layer: 3, range, keep_users: Vec::new() })
    }

    fn plan_reactive(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        let range = context.rounds().older_than(1)?;
        Some(Edit::Summarize { layer: 4, range, keep_users: Vec::new() })
    }
}
