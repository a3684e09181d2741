//! `strategy: native`: the provider manages the context, the loop edits
//! nothing (its strategy is [`super::NoCompaction`]). Each request asks for the wire's own mechanism
//! (a neutral [`ContextManagement`] on the prompt, which the wire's codec writes), and the loop
//! sends its whole view as it stands:
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

use reloop_wire::context_management::{Amount, ClearInputs, ClearToolUses, Compact, ContextEdit, ContextManagement, INPUT_TOKENS};
use reloop_wire::{Format, codec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// The mechanism to ask of `wire` for a context `window`: the provider's clearing of
    /// old tool uses where it has one (Anthropic), else its compaction (Responses); `None` for
    /// a wire that manages nothing ([`codec::manages`]).
    pub fn request(&self, wire: Format, window: u64) -> Option<ContextManagement> {
        let share = |ratio: f64| (window as f64 * ratio).round() as u64;
        let clear_at_least = share(self.clear_at_least_ratio);
        let clear = ContextEdit::ClearToolUses(ClearToolUses {
            trigger: Some(Amount::new(INPUT_TOKENS, share(self.trigger_ratio))),
            keep: Some(Amount::new("tool_uses", u64::from(self.keep_tool_uses))),
            clear_at_least: (clear_at_least > 0).then(|| Amount::new(INPUT_TOKENS, clear_at_least)),
            exclude_tools: self.exclude_tools.clone(),
            clear_tool_inputs: Some(ClearInputs::All(self.clear_tool_inputs)),
        });
        let compact = ContextEdit::Compact(Compact { trigger: Some(Amount::new(INPUT_TOKENS, share(self.compact_threshold_ratio))), ..Compact::default() });
        let edit = [clear, compact].into_iter().find(|edit| codec::manages(wire, edit))?;
        Some(ContextManagement { edits: vec![edit] })
    }
}

/// The wires with a provider-side mechanism, as named in messages.
pub const NATIVE_WIRES: &str = "openai-responses, anthropic";

/// Whether `wire` has a provider-side mechanism `native` can ask for.
pub fn has_native(wire: Format) -> bool {
    NativeConfig::default().request(wire, 1).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_scales_with_the_window_and_exists_on_two_wires() {
        let config = NativeConfig::default();
        let anthropic = config.request(Format::Anthropic, 200_000).unwrap();
        let expected = ContextEdit::ClearToolUses(ClearToolUses {
            trigger: Some(Amount::new(INPUT_TOKENS, 100_000)),
            keep: Some(Amount::new("tool_uses", 3)),
            clear_at_least: Some(Amount::new(INPUT_TOKENS, 20_000)),
            exclude_tools: Vec::new(),
            clear_tool_inputs: Some(ClearInputs::All(false)),
        });
        assert_eq!(anthropic.edits, [expected], "the API's own trigger on its own window");
        let compact = ContextEdit::Compact(Compact { trigger: Some(Amount::new(INPUT_TOKENS, 96_000)), ..Compact::default() });
        assert_eq!(config.request(Format::OpenaiResponses, 128_000), Some(ContextManagement { edits: vec![compact] }));
        assert_eq!(config.request(Format::OpenaiChat, 128_000), None);
        assert_eq!(config.request(Format::Gemini, 128_000), None);
        let wires: Vec<&str> = Format::ALL.into_iter().filter(|w| has_native(*w)).map(|w| w.as_str()).collect();
        assert_eq!(wires.join(", "), NATIVE_WIRES);
    }
}
