//! Counting in a provider's own tokens: a linear map from the server's
//! o200k counts, `provider = per_o200k × o200k + hidden_per_call`, the
//! provider-token fit that a replayed recording with usage reports
//! (`provider_tokens_per_o200k`, `provider_hidden_tokens_per_call`).
//!
//! Applied to every counted part before admission and the cache model, so
//! the context window, the per-model minimum cacheable length and the split
//! into cache reads and writes are judged in the provider's tokens. The
//! hidden tokens (an agent's system prompt and tool schemas that the
//! scenario does not hold) join the front segment, the tool declarations,
//! where an agent sends them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tokens::PromptCount;

/// The scenario's `provider_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderTokens {
    /// Provider tokens per o200k token (the fit's slope).
    pub per_o200k: f64,
    /// Tokens each request carries that the scenario does not hold (the
    /// fit's intercept).
    #[serde(default)]
    pub hidden_per_call: u64,
}

impl ProviderTokens {
    /// `tokens` o200k tokens in the provider's tokens.
    pub fn tokens(&self, tokens: u64) -> u64 {
        (tokens as f64 * self.per_o200k).round() as u64
    }

    /// `count` in the provider's tokens: every part scaled, the hidden
    /// tokens added to the tool declarations, the total their sum plus the
    /// scaled priming.
    pub fn scale(&self, count: &PromptCount) -> PromptCount {
        let parts = count.tools + count.messages.iter().sum::<u64>();
        let tools = self.tokens(count.tools) + self.hidden_per_call;
        let messages: Vec<u64> = count.messages.iter().map(|tokens| self.tokens(*tokens)).collect();
        let priming = self.tokens(count.total.saturating_sub(parts));
        let total = tools + messages.iter().sum::<u64>() + priming;
        PromptCount { tools, messages, total, ..count.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_scale_and_the_hidden_tokens_lead() {
        let count = PromptCount { tools: 100, messages: vec![10, 20], total: 133, ..PromptCount::default() };
        let scaled = ProviderTokens { per_o200k: 1.5, hidden_per_call: 1_000 }.scale(&count);
        assert_eq!(scaled.tools, 1_150);
        assert_eq!(scaled.messages, [15, 30]);
        assert_eq!(scaled.total, 1_150 + 45 + 5, "priming 3 → 4.5, rounded");
    }
}
