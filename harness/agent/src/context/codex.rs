//! Codex's auto-compaction (`codex-rs/core`, `compact.rs`): when the
//! prompt reaches 90 % of the window, the model summarizes the history, and
//! the history is rebuilt as the most recent user messages (up to 20,000
//! tokens) followed by the summary.
//!
//! One deviation, for a valid conversation: the round in flight (the last
//! assistant message and its tool results) stays after the summary, since
//! the next request must still answer its calls.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::view::ViewItem;
use super::{ContextStrategy, Edit, Planned, StrategyContext};
use crate::message::Message;

/// Codex's constants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CodexConfig {
    /// Share of the window that triggers compaction (auto-compact limit).
    pub auto_compact_ratio: f64,
    /// Tokens of recent user messages kept (`COMPACT_USER_MESSAGE_MAX_TOKENS`).
    pub user_message_max_tokens: u64,
}

impl Default for CodexConfig {
    fn default() -> Self {
        Self { auto_compact_ratio: 0.90, user_message_max_tokens: 20_000 }
    }
}

/// The strategy.
#[derive(Debug)]
pub struct Codex {
    config: CodexConfig,
}

impl Codex {
    /// Codex with `config`.
    pub fn new(config: CodexConfig) -> Self {
        Self { config }
    }

    fn compact(&self, context: &StrategyContext<'_>, layer: u8) -> Option<Edit> {
        let range = context.rounds().older_than(1)?;
        let mut budget = self.config.user_message_max_tokens;
        let mut keep_users: Vec<usize> = Vec::new();
        for position in range.clone().rev() {
            let ViewItem::Message(index) = context.view.items()[position] else { continue };
            if !matches!(context.transcript[index], Message::User { .. }) {
                continue;
            }
            let tokens = context.item_tokens(position);
            if tokens > budget {
                break;
            }
            budget -= tokens;
            keep_users.push(index);
        }
        keep_users.reverse();
        Some(Edit::Summarize { layer, range, keep_users })
    }
}

impl ContextStrategy for Codex {
    fn name(&self) -> &str {
        "codex"
    }

    fn plan(&mut self, context: &StrategyContext<'_>) -> Planned {
        Ok(self.next_edit(context))
    }

    fn plan_reactive(&mut self, context: &StrategyContext<'_>) -> Planned {
        Ok(self.reactive_edit(context))
    }
}

impl Codex {
    /// The planned edit, if any.
    fn next_edit(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        let limit = self.config.auto_compact_ratio * context.window as f64;
        if (context.estimated_tokens as f64) < limit {
            return None;
        }
        self.compact(context, 3)
    }

    /// The reactive edit (Layer 4), if any.
    fn reactive_edit(&mut self, context: &StrategyContext<'_>) -> Option<Edit> {
        self.compact(context, 4)
    }
}
