//! `strategy: native`: the provider manages the context, the loop edits
//! nothing (its strategy is [`super::NoCompaction`]). Each request asks for the wire's own mechanism
//! ([`ContextManagement`], rendered by the client), and the loop sends its
//! whole view as it stands:
//!
//! - Anthropic Messages: context editing (`context_management.edits` with
//!   `clear_tool_uses_20250919`, beta `context-management-2025-06-27`). The
//!   server clears old tool results before the prompt reaches the model; the
//!   client keeps its full history, as the provider documents.
//! - OpenAI Responses: server-side compaction (`context_management:
//!   [{type: compaction, compact_threshold}]`). A response that compacted
//!   carries a `compaction` item, which the loop keeps on the assistant turn
//!   (`Reasoning::ResponsesCompaction`) and sends back; the items before the
//!   latest one are dropped from the request, as the provider allows.
//! - Chat Completions and Gemini have no such mechanism: a scenario naming
//!   `native` on them is refused by validation, and a sweep skips them.
//!
//! The default policy (`docs/native-context.md` says why): Anthropic clears
//! tool uses once the prompt passes half the window (the API's own 100K of a
//! 200K window, scaled), keeps the last 3 (the API's default) and clears at
//! least a tenth of the window each time (so each cache break buys a real
//! cut); Responses compacts at 75 % of the window, where `roku` asks for its
//! summary.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::client::WireFormat;

/// Native's constants: the policy each request asks the provider for, as
/// shares of the scenario's context window (so one policy fits every window).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NativeConfig {
    /// Anthropic: clear tool uses once the prompt passes this share of the window.
    pub trigger_ratio: f64,
    /// Anthropic: the most recent tool uses kept whole.
    pub keep_tool_uses: u32,
    /// Anthropic: clear at least this share of the window each time (0: no minimum).
    pub clear_at_least_ratio: f64,
    /// Anthropic: tools whose uses are never cleared.
    pub exclude_tools: Vec<String>,
    /// Anthropic: clear the calls' inputs too, not only their results.
    pub clear_tool_inputs: bool,
    /// Responses: compact once the rendered prompt passes this share of the window.
    pub compact_threshold_ratio: f64,
}

impl Default for NativeConfig {
    fn default() -> Self {
        Self {
            trigger_ratio: 0.5,
            keep_tool_uses: 3,
            clear_at_least_ratio: 0.1,
            exclude_tools: Vec::new(),
            clear_tool_inputs: false,
            compact_threshold_ratio: 0.75,
        }
    }
}

impl NativeConfig {
    /// The mechanism to ask of `wire` for a context `window`; `None` for a
    /// wire that has none.
    pub fn request(&self, wire: WireFormat, window: u64) -> Option<ContextManagement> {
        let share = |ratio: f64| (window as f64 * ratio).round() as u64;
        match wire {
            WireFormat::Anthropic => Some(ContextManagement::ClearToolUses {
                trigger_tokens: share(self.trigger_ratio),
                keep_tool_uses: self.keep_tool_uses,
                clear_at_least_tokens: share(self.clear_at_least_ratio),
                exclude_tools: self.exclude_tools.clone(),
                clear_tool_inputs: self.clear_tool_inputs,
            }),
            WireFormat::OpenaiResponses => Some(ContextManagement::Compaction { compact_threshold: share(self.compact_threshold_ratio) }),
            WireFormat::OpenaiChat | WireFormat::Gemini => None,
        }
    }
}

/// The wires with a provider-side mechanism, as named in messages.
pub const NATIVE_WIRES: &str = "openai-responses, anthropic";

/// Whether `wire` has a provider-side mechanism `native` can ask for.
pub fn has_native(wire: WireFormat) -> bool {
    NativeConfig::default().request(wire, 1).is_some()
}

/// The provider-side context management each request asks for, in absolute
/// tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextManagement {
    /// Anthropic's `clear_tool_uses_20250919` edit.
    ClearToolUses {
        /// `trigger`: input tokens.
        trigger_tokens: u64,
        /// `keep`: tool uses.
        keep_tool_uses: u32,
        /// `clear_at_least`: input tokens (0: not sent).
        clear_at_least_tokens: u64,
        /// `exclude_tools` (empty: not sent).
        exclude_tools: Vec<String>,
        /// `clear_tool_inputs`.
        clear_tool_inputs: bool,
    },
    /// OpenAI Responses server-side compaction.
    Compaction {
        /// `compact_threshold`: rendered tokens.
        compact_threshold: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_scales_with_the_window_and_exists_on_two_wires() {
        let config = NativeConfig::default();
        let anthropic = config.request(WireFormat::Anthropic, 200_000).unwrap();
        let expected = ContextManagement::ClearToolUses {
            trigger_tokens: 100_000,
            keep_tool_uses: 3,
            clear_at_least_tokens: 20_000,
            exclude_tools: Vec::new(),
            clear_tool_inputs: false,
        };
        assert_eq!(anthropic, expected, "the API's own trigger on its own window");
        assert_eq!(config.request(WireFormat::OpenaiResponses, 128_000), Some(ContextManagement::Compaction { compact_threshold: 96_000 }));
        assert_eq!(config.request(WireFormat::OpenaiChat, 128_000), None);
        assert_eq!(config.request(WireFormat::Gemini, 128_000), None);
        let wires: Vec<&str> = WireFormat::ALL.into_iter().filter(|w| has_native(*w)).map(|w| w.as_str()).collect();
        assert_eq!(wires.join(", "), NATIVE_WIRES);
    }
}
