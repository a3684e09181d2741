//! The figures a batch keeps of each finished run: the few its readers use,
//! copied out of the run's [`RunMetrics`] (a kilobyte) when the run ends.

use crate::call_shares::Share;
use crate::result::RunMetrics;

/// One run's figures that the batch reads once every run has ended, and no
/// others: the terminal table's (steps, doom loop, cache breaks, tokens,
/// savings), JUnit's (virtual and wall time), the sweep's totals (tokens,
/// steps, compactions, summary calls, cache breaks, cost, references) and
/// the note on calls answered live. It exists because the batch holds one
/// per run for its whole length (12,900 on a large sweep), where a whole
/// [`RunMetrics`] per run was most of the memory a sweep grew by. Every
/// other figure is in the report's rows. Fields mean what the `docs/metrics.md`
/// column of the same name means, but where said.
///
/// Counts of steps, calls, compactions and references are `u32`: a run's
/// steps are (its budget is a `u32`), and nothing else it counts reaches
/// four billion in a run that fits in memory (a count beyond saturates).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)] // the columns of the same name
pub struct RunFigures {
    pub steps_used: u32,
    pub step_budget: u32,
    pub doom_loop_first_step: Option<u32>,
    /// Completed compactions per layer.
    pub compactions: [u32; 5],
    pub compaction_calls: u32,
    pub cache_breaks: u32,
    pub cache_breaks_simulated: u32,
    pub cache_breaks_matched: u32,
    pub references_needed: u32,
    pub references_lost: u32,
    pub live_steps: u32,
    pub input_tokens_total: u64,
    pub input_tokens_uncompacted_total: u64,
    pub output_tokens_total: u64,
    pub tokens_saved_total: i64,
    pub compaction_savings_ratio: f64,
    /// `estimated_cost_usd`, 0 for a model the price table lacks: it is
    /// only summed.
    pub cost_usd: f64,
    /// What the run's summary calls cost (`by_share`), 0 when unpriced.
    pub compaction_cost_usd: f64,
    pub virtual_ms: u64,
    pub wall_ms: u64,
}

impl From<&RunMetrics> for RunFigures {
    fn from(m: &RunMetrics) -> Self {
        Self {
            steps_used: narrow(m.steps_used),
            step_budget: narrow(m.step_budget),
            doom_loop_first_step: m.doom_loop_first_step.map(narrow),
            compactions: m.compactions.map(narrow),
            compaction_calls: narrow(m.compaction_calls),
            cache_breaks: narrow(m.cache_breaks),
            cache_breaks_simulated: narrow(m.cache_breaks_simulated),
            cache_breaks_matched: narrow(m.cache_breaks_matched),
            references_needed: narrow(m.references_needed),
            references_lost: narrow(m.references_lost),
            live_steps: narrow(m.live_steps),
            input_tokens_total: m.input_tokens_total,
            input_tokens_uncompacted_total: m.input_tokens_uncompacted_total,
            output_tokens_total: m.output_tokens_total,
            tokens_saved_total: m.tokens_saved_total,
            compaction_savings_ratio: m.compaction_savings_ratio,
            cost_usd: m.estimated_cost_usd.unwrap_or(0.0),
            compaction_cost_usd: m.by_share[Share::COMPACTION.index()].estimated_cost_usd.unwrap_or(0.0),
            virtual_ms: m.virtual_ms,
            wall_ms: m.wall_ms,
        }
    }
}

/// A run's count as kept (see [`RunFigures`]), saturating.
fn narrow(count: u64) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_kept_exactly_and_saturate_past_u32() {
        let metrics = RunMetrics { steps_used: 558, compactions: [1, 2, 3, 4, u64::MAX], estimated_cost_usd: None, ..RunMetrics::default() };
        let figures = RunFigures::from(&metrics);
        assert_eq!((figures.steps_used, figures.compactions), (558, [1, 2, 3, 4, u32::MAX]));
        assert_eq!(figures.cost_usd, 0.0, "unpriced sums as nothing, as the sweep always summed it");
    }
}
