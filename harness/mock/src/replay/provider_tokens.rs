//! A prompt count in the provider's own tokens
//! ([`ProviderTokens`], the scenario's fit).

use reloop_recording::provider_tokens::ProviderTokens;

use crate::replay::tokens::PromptCount;

/// `count` in the provider's tokens: every part scaled, the hidden tokens
/// added to the tool declarations, the total their sum plus the scaled
/// priming.
pub(crate) fn scaled(provider: &ProviderTokens, count: &PromptCount) -> PromptCount {
    let parts = count.tools + count.messages.iter().sum::<u64>();
    let tools = provider.tokens(count.tools) + provider.hidden_per_call;
    let messages: Vec<u64> = count.messages.iter().map(|tokens| provider.tokens(*tokens)).collect();
    let priming = provider.tokens(count.total.saturating_sub(parts));
    let total = tools + messages.iter().sum::<u64>() + priming;
    PromptCount { tools, messages, total, ..count.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_scale_and_the_hidden_tokens_lead() {
        let count = PromptCount { tools: 100, messages: vec![10, 20], total: 133, ..PromptCount::default() };
        let scaled = scaled(&ProviderTokens { per_o200k: 1.5, hidden_per_call: 1_000 }, &count);
        assert_eq!(scaled.tools, 1_150);
        assert_eq!(scaled.messages, [15, 30]);
        assert_eq!(scaled.total, 1_150 + 45 + 5, "priming 3 → 4.5, rounded");
    }
}
