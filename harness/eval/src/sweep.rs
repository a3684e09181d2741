//! Sweeps: the same scenarios under several compaction strategies (or tuned
//! variants of them), one dataset with a `variant` column, and the figures
//! that compare them.

use std::path::Path;

pub use reloop_agent::context::{StrategyName, StrategyTuning};
use serde::Deserialize;

use crate::result::RunReport;
use crate::scenario::Scenario;
use crate::yaml::{self, InputError};

/// One variant: a strategy, optionally with tuned constants.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// The label written to the `variant` column.
    pub name: String,
    /// The strategy.
    pub strategy: StrategyName,
    /// Tuned constants; absent keeps each scenario's own.
    #[serde(default)]
    pub strategies: Option<StrategyTuning>,
}

impl Variant {
    /// The variant running `strategy` as each scenario tunes it.
    pub fn of_strategy(strategy: StrategyName) -> Self {
        Self { name: strategy.as_str().to_owned(), strategy, strategies: None }
    }

    /// `scenario` under this variant.
    pub fn apply(&self, scenario: &Scenario) -> Scenario {
        let mut run = scenario.clone();
        run.variant = self.name.clone();
        run.spec.loop_settings.strategy = self.strategy;
        if let Some(tuning) = &self.strategies {
            run.spec.loop_settings.strategies = tuning.clone();
        }
        run
    }
}

/// A variants file: `variants: [ { name, strategy, strategies } ]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantsFile {
    /// The variants, in order.
    pub variants: Vec<Variant>,
}

/// Reads a variants file, rejecting duplicate names.
pub fn load_variants(path: &Path) -> Result<Vec<Variant>, InputError> {
    let file: VariantsFile = yaml::load(path)?;
    for (i, variant) in file.variants.iter().enumerate() {
        if file.variants[..i].iter().any(|v| v.name == variant.name) {
            return Err(InputError::field(path, format!("variants[{i}].name"), format!("`{}` is used twice", variant.name)));
        }
    }
    Ok(file.variants)
}

/// Every scenario under every variant, variants outermost.
pub fn expand(scenarios: &[Scenario], variants: &[Variant]) -> Vec<Scenario> {
    variants.iter().flat_map(|variant| scenarios.iter().map(|s| variant.apply(s))).collect()
}

/// What one variant achieved over all its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantSummary {
    /// The variant.
    pub variant: String,
    /// Runs.
    pub runs: usize,
    /// Runs whose expectations held.
    pub passed: usize,
    /// Σ input tokens sent (main calls, server count).
    pub input_tokens: u64,
    /// Σ what the same calls would have sent uncompacted.
    pub input_tokens_uncompacted: u64,
    /// 1 − input / uncompacted, over all runs.
    pub savings_ratio: f64,
    /// Σ steps used.
    pub steps: u64,
    /// Σ compactions per layer.
    pub compactions: [u64; 5],
    /// Σ summary calls.
    pub compaction_calls: u64,
    /// Σ cache breaks the server's cache simulation saw.
    pub cache_breaks_simulated: u64,
    /// Σ estimated cost.
    pub cost_usd: f64,
}

/// One summary per variant, in first-seen order.
pub fn summarize(runs: &[RunReport]) -> Vec<VariantSummary> {
    let mut order: Vec<&str> = Vec::new();
    for run in runs {
        if !order.contains(&run.variant.as_str()) {
            order.push(&run.variant);
        }
    }
    order
        .into_iter()
        .map(|variant| {
            let mine: Vec<&RunReport> = runs.iter().filter(|r| r.variant == variant).collect();
            let sum = |f: fn(&RunReport) -> u64| mine.iter().map(|r| f(r)).sum::<u64>();
            let input_tokens = sum(|r| r.metrics.input_tokens_total);
            let input_tokens_uncompacted = sum(|r| r.metrics.input_tokens_uncompacted_total);
            let mut compactions = [0; 5];
            for run in &mine {
                for (total, count) in compactions.iter_mut().zip(run.metrics.compactions) {
                    *total += count;
                }
            }
            VariantSummary {
                variant: variant.to_owned(),
                runs: mine.len(),
                passed: mine.iter().filter(|r| r.passed).count(),
                input_tokens,
                input_tokens_uncompacted,
                savings_ratio: if input_tokens_uncompacted == 0 { 0.0 } else { 1.0 - input_tokens as f64 / input_tokens_uncompacted as f64 },
                steps: sum(|r| r.metrics.steps_used),
                compactions,
                compaction_calls: sum(|r| r.metrics.compaction_calls),
                cache_breaks_simulated: sum(|r| r.metrics.cache_breaks_simulated),
                cost_usd: mine.iter().filter_map(|r| r.metrics.estimated_cost_usd).sum(),
            }
        })
        .collect()
}
