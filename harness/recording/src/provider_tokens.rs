//! Counting in a provider's own tokens: a linear map from the server's
//! o200k counts, `provider = per_o200k × o200k + hidden_per_call`, the
//! provider-token fit that a replayed recording with usage reports
//! (`provider_tokens_per_o200k`, `provider_hidden_tokens_per_call`).
//!
//! The mock applies it to every counted part before admission and the
//! cache model (`reloop_mock`'s `replay::provider_tokens`), so
//! the context window, the per-model minimum cacheable length and the split
//! into cache reads and writes are judged in the provider's tokens. The
//! hidden tokens (an agent's system prompt and tool schemas that the
//! scenario does not hold) join the front segment, the tool declarations,
//! where an agent sends them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
}
