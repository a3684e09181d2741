//! The price table: what reloop knows about each model, its list prices (for
//! `estimated_cost_usd`) and the largest output slot (for output-slot
//! escalation). From the providers' public model and price pages (2025).
//! Unknown models get no cost rather than a wrong one.

use reloop_wire::Usage;

/// Prices of one model, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Input served from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache (Anthropic charges a premium).
    pub cache_write: f64,
}

/// One model's facts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelFacts {
    /// List prices.
    pub price: Price,
    /// The largest output slot.
    pub max_output_tokens: u32,
}

/// Output slot of models not in the table.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 16_384;

const fn facts(input: f64, output: f64, cache_read: f64, cache_write: f64, max_output_tokens: u32) -> ModelFacts {
    ModelFacts { price: Price { input, output, cache_read, cache_write }, max_output_tokens }
}

const MODELS: &[(&str, ModelFacts)] = &[
    ("gpt-4o-mini", facts(0.15, 0.60, 0.075, 0.15, 16_384)),
    ("gpt-4o", facts(2.50, 10.0, 1.25, 2.50, 16_384)),
    ("gpt-4.1-mini", facts(0.40, 1.60, 0.10, 0.40, 32_768)),
    ("gpt-4.1", facts(2.00, 8.00, 0.50, 2.00, 32_768)),
    ("gpt-5-mini", facts(0.25, 2.00, 0.025, 0.25, 128_000)),
    ("gpt-5", facts(1.25, 10.0, 0.125, 1.25, 128_000)),
    ("claude-haiku-4-5", facts(1.00, 5.00, 0.10, 1.25, 64_000)),
    ("claude-sonnet-4-5", facts(3.00, 15.0, 0.30, 3.75, 64_000)),
    ("claude-opus-4-1", facts(15.0, 75.0, 1.50, 18.75, 32_000)),
];

/// The facts of `model`, matching the longest known prefix (so dated
/// snapshots like `gpt-4o-2024-08-06` find `gpt-4o`).
pub fn model_facts(model: &str) -> Option<ModelFacts> {
    MODELS
        .iter()
        .filter(|(name, _)| model.starts_with(name))
        .max_by_key(|(name, _)| name.len())
        .map(|(_, facts)| *facts)
}

/// The largest output slot of `model`.
pub fn max_output_tokens(model: &str) -> u32 {
    model_facts(model).map_or(DEFAULT_MAX_OUTPUT_TOKENS, |f| f.max_output_tokens)
}

/// The cost of `usage` on `model`; `input_tokens` includes cached tokens.
pub fn estimated_cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    let price = model_facts(model)?.price;
    let uncached = usage.input_tokens.saturating_sub(usage.cache_read_tokens + usage.cache_write_tokens);
    let dollars = uncached as f64 * price.input
        + usage.cache_read_tokens as f64 * price.cache_read
        + usage.cache_write_tokens as f64 * price.cache_write
        + usage.output_tokens as f64 * price.output;
    Some(dollars / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dated_snapshots_use_the_family_entry() {
        assert_eq!(model_facts("gpt-4o-2024-08-06"), model_facts("gpt-4o"));
        assert_eq!(model_facts("gpt-4o-mini-2024-07-18").unwrap().price.input, 0.15);
        assert_eq!(model_facts("llama-3"), None);
        assert_eq!(max_output_tokens("llama-3"), DEFAULT_MAX_OUTPUT_TOKENS);
        assert_eq!(max_output_tokens("gpt-4.1-2025-04-14"), 32_768);
    }

    #[test]
    fn cached_input_is_cheaper() {
        let plain = Usage { input_tokens: 1_000_000, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
        let cached = Usage { cache_read_tokens: 1_000_000, ..plain };
        assert_eq!(estimated_cost_usd("gpt-4o", &plain), Some(2.5));
        assert_eq!(estimated_cost_usd("gpt-4o", &cached), Some(1.25));
    }
}
