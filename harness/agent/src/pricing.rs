//! List prices per model, to turn token counts into `estimated_cost_usd`.
//!
//! USD per million tokens, from the providers' public price pages (2025);
//! cache reads and writes are priced with their own rates. Unknown models
//! get no cost rather than a wrong one.

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

const PRICES: &[(&str, Price)] = &[
    ("gpt-4o-mini", Price { input: 0.15, output: 0.60, cache_read: 0.075, cache_write: 0.15 }),
    ("gpt-4o", Price { input: 2.50, output: 10.0, cache_read: 1.25, cache_write: 2.50 }),
    ("gpt-4.1-mini", Price { input: 0.40, output: 1.60, cache_read: 0.10, cache_write: 0.40 }),
    ("gpt-4.1", Price { input: 2.00, output: 8.00, cache_read: 0.50, cache_write: 2.00 }),
    ("gpt-5-mini", Price { input: 0.25, output: 2.00, cache_read: 0.025, cache_write: 0.25 }),
    ("gpt-5", Price { input: 1.25, output: 10.0, cache_read: 0.125, cache_write: 1.25 }),
    ("claude-haiku-4-5", Price { input: 1.00, output: 5.00, cache_read: 0.10, cache_write: 1.25 }),
    ("claude-sonnet-4-5", Price { input: 3.00, output: 15.0, cache_read: 0.30, cache_write: 3.75 }),
    ("claude-opus-4-1", Price { input: 15.0, output: 75.0, cache_read: 1.50, cache_write: 18.75 }),
];

/// The price of `model`, matching the longest known prefix (so dated
/// snapshots like `gpt-4o-2024-08-06` find `gpt-4o`).
pub fn price_of(model: &str) -> Option<Price> {
    PRICES
        .iter()
        .filter(|(name, _)| model.starts_with(name))
        .max_by_key(|(name, _)| name.len())
        .map(|(_, price)| *price)
}

/// The cost of `usage` on `model`; `input_tokens` includes cached tokens.
pub fn estimated_cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    let price = price_of(model)?;
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
    fn dated_snapshots_use_the_family_price() {
        assert_eq!(price_of("gpt-4o-2024-08-06"), price_of("gpt-4o"));
        assert_eq!(price_of("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(price_of("llama-3"), None);
    }

    #[test]
    fn cached_input_is_cheaper() {
        let plain = Usage { input_tokens: 1_000_000, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
        let cached = Usage { cache_read_tokens: 1_000_000, ..plain };
        assert_eq!(estimated_cost_usd("gpt-4o", &plain), Some(2.5));
        assert_eq!(estimated_cost_usd("gpt-4o", &cached), Some(1.25));
    }
}
