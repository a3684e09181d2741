//! When a run's recorded usage says what it cost. The usage a recording
//! keeps was measured on the prompts the recorded session sent; it prices a
//! run only where the run sent the same: the session's own behaviour, no
//! compaction the source did not do. Any other run sent other prompts, and
//! only the server's counts of them tell what it would have cost.

use reloop_agent::price_table::{self, PricedUsage};
use reloop_recording::{Exchange, Purpose};
use reloop_wire::Usage;

use crate::result::{CostSource, StepRow};
use crate::scenario::Scenario;
use crate::token_fit::TokenFit;

/// A run's recorded usage, its price, the cost source and the
/// provider-token fit (the `RunMetrics` fields of the same names).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedPricing {
    /// The recorded usage of `steps`' answered calls, when it describes the run.
    pub usage_recorded: Option<Usage>,
    /// Of its cache writes, those with a 1-hour lifetime.
    pub cache_write_1h_tokens_recorded: Option<u64>,
    /// `usage_recorded` priced.
    pub estimated_cost_usd_recorded: Option<f64>,
    /// Which usage the run's cost was priced from.
    pub cost_source: CostSource,
    /// Recorded input tokens against the server's count of what was sent.
    pub provider_token_fit: Option<TokenFit>,
}

/// Prices `steps` (the calls that stand for the recorded session's) from
/// their recorded usage; the built-in loop and black-box runs alike.
pub fn price_recorded_usage(scenario: &Scenario, steps: &[StepRow], compacted: bool) -> RecordedPricing {
    // Fitted on what the session sent (the uncompacted request), so every strategy gets the same line.
    let pairs: Vec<(u64, u64)> = steps.iter().filter_map(|s| Some((s.input_tokens_uncompacted?, s.usage_recorded?.input_tokens))).collect();
    let usage_recorded = faithful_recorded_usage(scenario, steps, compacted);
    // 1-hour writes where the recording says (Anthropic's `cache_creation`), the rest as 5-minute writes.
    let cache_write_1h_tokens_recorded =
        usage_recorded.map(|_| steps.iter().filter(|s| s.output_tokens.is_some()).filter_map(|s| s.cache_write_1h_tokens_recorded).sum());
    let cache_write_1h_tokens = cache_write_1h_tokens_recorded.unwrap_or(0);
    RecordedPricing {
        usage_recorded,
        cache_write_1h_tokens_recorded,
        estimated_cost_usd_recorded: usage_recorded
            .and_then(|usage| price_table::active().cost(&scenario.spec.model, &PricedUsage { usage, cache_write_1h_tokens })),
        cost_source: if usage_recorded.is_some() { CostSource::Recorded } else { CostSource::Simulated },
        provider_token_fit: crate::token_fit::fit(&pairs),
    }
}

/// The recorded usage of a run's answered calls, summed, when the run sent
/// what the recorded session sent; `None` otherwise.
///
/// That holds when the run compacted nothing (`compacted`: no layer ran,
/// shrinking the prompt or not, and no summary was asked for), the source
/// made no summary call the run skipped (no compaction exchange with usage)
/// and no compaction of its own (no `recorded_compactions`), and every
/// answered call was answered
/// by an exchange with usage. The one exception is the closing answer
/// `reloop import` adds when a session ends mid-task
/// ([`reloop_files::recording_file::SESSION_END_TEXT`]): the source never made that
/// call, so it has no usage and adds nothing.
pub fn faithful_recorded_usage(scenario: &Scenario, steps: &[StepRow], compacted: bool) -> Option<Usage> {
    let exchanges = &scenario.recording.exchanges;
    // The agent's own compactions (`recorded_compactions`) sent prompts no strategy of the loop sends.
    let source_summarized = exchanges.iter().any(|e| e.purpose == Purpose::Compaction && e.usage.is_some()) || !scenario.spec.recorded_compactions.is_empty();
    if compacted || source_summarized {
        return None;
    }
    let mut total: Option<Usage> = None;
    for step in steps.iter().filter(|s| s.output_tokens.is_some()) {
        match step.usage_recorded {
            Some(usage) => total = Some(plus(total.unwrap_or_default(), usage)),
            None if step.exchange.and_then(|index| exchanges.get(usize::try_from(index).ok()?)).is_some_and(added_by_import) => {}
            None => return None,
        }
    }
    total
}

/// The closing answer `reloop import` adds to a session that ends without one.
fn added_by_import(exchange: &Exchange) -> bool {
    exchange.usage.is_none() && exchange.text() == reloop_files::recording_file::SESSION_END_TEXT
}

fn plus(sum: Usage, usage: Usage) -> Usage {
    Usage {
        input_tokens: sum.input_tokens.saturating_add(usage.input_tokens),
        output_tokens: sum.output_tokens.saturating_add(usage.output_tokens),
        cache_read_tokens: sum.cache_read_tokens.saturating_add(usage.cache_read_tokens),
        cache_write_tokens: sum.cache_write_tokens.saturating_add(usage.cache_write_tokens),
    }
}
