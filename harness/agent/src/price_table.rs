//! The price table: what reloop knows about each model, its list prices (for
//! `estimated_cost_usd`) and the largest output slot (for output-slot
//! escalation). The table is data, `prices.yaml` at the repository root,
//! embedded at build time; a user's file of the same shape replaces it for a
//! whole process ([`install`]), so the loop's per-call cost events and the
//! harness's run cost price with the same table. Unknown models get no cost
//! rather than a wrong one.

use std::sync::OnceLock;

use reloop_wire::Usage;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The table reloop ships with.
pub const EMBEDDED_PRICES: &str = include_str!("../../../prices.yaml");

/// Output slot of models not in the table.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 16_384;

/// A price table file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    /// Format version (1).
    pub version: u32,
    /// One row per model family.
    pub models: Vec<ModelPrice>,
}

/// One model's list prices, USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// The model name, or the prefix of its dated snapshots.
    pub model: String,
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Input served from the prompt cache.
    pub cache_read: f64,
    /// Input written to the cache with a 5-minute lifetime (Anthropic:
    /// 1.25x input); plain input when absent.
    #[serde(default)]
    pub cache_write_5m: Option<f64>,
    /// Input written with a 1-hour lifetime (Anthropic: 2x input); plain
    /// input when absent.
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
    /// The largest output slot.
    pub max_output_tokens: u32,
    /// When these prices were checked (YYYY-MM-DD).
    pub date: String,
    /// Where they come from.
    pub source: String,
}

/// Token counts to price: neutral usage plus the part of its cache writes
/// made with a 1-hour lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PricedUsage {
    /// The usage; `input_tokens` includes cached and written tokens.
    pub usage: Usage,
    /// Of `usage.cache_write_tokens`, those written for 1 hour.
    pub cache_write_1h_tokens: u64,
}

impl PriceTable {
    /// The embedded table.
    pub fn embedded() -> &'static Self {
        static EMBEDDED: OnceLock<PriceTable> = OnceLock::new();
        EMBEDDED.get_or_init(|| serde_saphyr::from_str(EMBEDDED_PRICES).expect("the embedded prices.yaml parses (tested)"))
    }

    /// The row of `model`: the longest row name that prefixes it.
    pub fn model(&self, model: &str) -> Option<&ModelPrice> {
        self.models.iter().filter(|row| model.starts_with(&row.model)).max_by_key(|row| row.model.len())
    }

    /// The cost of `priced` on `model`, `None` when the model has no row.
    pub fn cost(&self, model: &str, priced: &PricedUsage) -> Option<f64> {
        let row = self.model(model)?;
        let usage = &priced.usage;
        let write_1h = priced.cache_write_1h_tokens.min(usage.cache_write_tokens);
        let write_5m = usage.cache_write_tokens - write_1h;
        let uncached = usage.input_tokens.saturating_sub(usage.cache_read_tokens + usage.cache_write_tokens);
        let dollars = uncached as f64 * row.input
            + usage.cache_read_tokens as f64 * row.cache_read
            + write_5m as f64 * row.cache_write_5m.unwrap_or(row.input)
            + write_1h as f64 * row.cache_write_1h.unwrap_or(row.input)
            + usage.output_tokens as f64 * row.output;
        Some(dollars / 1e6)
    }
}

static ACTIVE: OnceLock<PriceTable> = OnceLock::new();

/// Replaces the embedded table for the rest of the process (`--prices`);
/// `Err` gives the table back when one was already installed.
pub fn install(table: PriceTable) -> Result<(), PriceTable> {
    ACTIVE.set(table)
}

/// The table in use: the installed one, else the embedded one.
pub fn active() -> &'static PriceTable {
    ACTIVE.get().unwrap_or_else(PriceTable::embedded)
}

/// Whether the table in use prices `model`.
pub fn is_priced(model: &str) -> bool {
    active().model(model).is_some()
}

/// The largest output slot of `model`.
pub fn max_output_tokens(model: &str) -> u32 {
    active().model(model).map_or(DEFAULT_MAX_OUTPUT_TOKENS, |row| row.max_output_tokens)
}

/// The cost of `usage` on `model`, all cache writes at the 5-minute price.
pub fn estimated_cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    active().cost(model, &PricedUsage { usage: *usage, cache_write_1h_tokens: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, read: u64, write: u64, output: u64) -> Usage {
        Usage { input_tokens: input, output_tokens: output, cache_read_tokens: read, cache_write_tokens: write }
    }

    #[test]
    fn the_embedded_table_parses_and_every_row_is_dated_and_sourced() {
        let table = PriceTable::embedded();
        assert_eq!(table.version, 1);
        assert!(table.models.len() >= 20);
        for row in &table.models {
            assert!(row.date.len() == 10 && row.date.starts_with("20"), "{}: date {}", row.model, row.date);
            assert!(row.source.starts_with("https://"), "{}: source {}", row.model, row.source);
            assert!(row.cache_read <= row.input && row.input > 0.0, "{}", row.model);
        }
        let names: std::collections::HashSet<&str> = table.models.iter().map(|r| r.model.as_str()).collect();
        assert_eq!(names.len(), table.models.len(), "one row per model");
        for model in ["claude-opus-4-5", "claude-opus-4-6", "claude-sonnet-4-5", "claude-haiku-4-5", "gpt-5", "gpt-5.1", "gpt-5.2", "gpt-5.4"] {
            assert!(is_priced(model), "{model}");
        }
    }

    #[test]
    fn dated_snapshots_use_the_family_row() {
        let table = PriceTable::embedded();
        assert_eq!(table.model("gpt-4o-2024-08-06").unwrap().model, "gpt-4o");
        assert_eq!(table.model("gpt-4o-mini-2024-07-18").unwrap().input, 0.15);
        assert_eq!(table.model("gpt-5.2-pro-2025-12-11").unwrap().model, "gpt-5.2-pro");
        assert_eq!(table.model("claude-sonnet-4-5-20250929").unwrap().model, "claude-sonnet-4-5");
        assert_eq!(table.model("llama-3"), None);
        assert_eq!(max_output_tokens("llama-3"), DEFAULT_MAX_OUTPUT_TOKENS);
        assert_eq!(max_output_tokens("gpt-4.1-2025-04-14"), 32_768);
    }

    #[test]
    fn cached_input_is_cheaper_and_writes_cost_by_lifetime() {
        assert_eq!(estimated_cost_usd("gpt-4o", &usage(1_000_000, 0, 0, 0)), Some(2.5));
        assert_eq!(estimated_cost_usd("gpt-4o", &usage(1_000_000, 1_000_000, 0, 0)), Some(1.25));
        assert_eq!(estimated_cost_usd("llama-3", &usage(1, 0, 0, 0)), None);
        let table = PriceTable::embedded();
        let written = usage(1_000_000, 0, 1_000_000, 0);
        let five = table.cost("claude-sonnet-4-5", &PricedUsage { usage: written, cache_write_1h_tokens: 0 }).unwrap();
        let hour = table.cost("claude-sonnet-4-5", &PricedUsage { usage: written, cache_write_1h_tokens: 1_000_000 }).unwrap();
        let read = table.cost("claude-sonnet-4-5", &PricedUsage { usage: usage(1_000_000, 1_000_000, 0, 0), ..PricedUsage::default() }).unwrap();
        assert!((five - 3.0 * 1.25).abs() < 1e-9 && (hour - 3.0 * 2.0).abs() < 1e-9 && (read - 0.3).abs() < 1e-9);
        // OpenAI has no write premium.
        assert_eq!(estimated_cost_usd("gpt-4o", &written), Some(2.5));
    }

    /// Real Anthropic sessions' recorded usage, priced by the table, against
    /// the cost the agent recorded for it (see `testdata/README.md`).
    #[test]
    fn recorded_anthropic_sessions_price_within_ten_percent_of_their_recorded_cost() {
        #[derive(Deserialize)]
        struct Line {
            session: String,
            model: String,
            usage: PiUsage,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct PiUsage {
            input: u64,
            output: u64,
            cache_read: u64,
            cache_write: u64,
            cost: PiCost,
        }
        #[derive(Deserialize)]
        struct PiCost {
            total: f64,
        }
        let text = include_str!("../testdata/pi-mono-opus-4-5-usage.jsonl");
        let mut sessions: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
        for line in text.lines() {
            let line: Line = serde_json::from_str(line).unwrap();
            let u = &line.usage;
            // Anthropic's input excludes cached tokens; the neutral usage includes them.
            let usage = Usage {
                input_tokens: u.input + u.cache_read + u.cache_write,
                output_tokens: u.output,
                cache_read_tokens: u.cache_read,
                cache_write_tokens: u.cache_write,
            };
            let ours = PriceTable::embedded().cost(&line.model, &PricedUsage { usage, cache_write_1h_tokens: 0 }).unwrap();
            let entry = sessions.entry(line.session).or_default();
            entry.0 += ours;
            entry.1 += u.cost.total;
        }
        assert_eq!(sessions.len(), 2);
        for (session, (ours, recorded)) in sessions {
            assert!((ours - recorded).abs() <= 0.10 * recorded, "{session}: priced ${ours:.4}, recorded ${recorded:.4}");
        }
    }
}
