//! The one builder of [`RunMetrics`], for the built-in loop
//! (`crate::collect`) and black-box agents (`crate::black_box`) alike.
//!
//! Why one builder: with a builder per run kind, each ending in
//! `..RunMetrics::default()`, a new metric that one kind forgot read 0 in
//! its reports, silently. Here the figures both kinds compute the same way
//! (from the steps table, the server's log, the retention measure) are
//! computed once, and the figures each kind finds its own way come in
//! [`KindFacts`], which each kind writes as one struct literal. [`build`]
//! destructures [`MetricFacts`] and [`KindFacts`] without `..` and writes
//! the [`RunMetrics`] literal once, without `..`: a new field of
//! `RunMetrics` is a compile error here until it is computed, and a new
//! field of `KindFacts` is a compile error in both kinds until each fills
//! it (a black-box agent saying explicitly what it cannot know).

use reloop_mock::{Divergence, RequestRecord};
use reloop_wire::Usage;

use crate::black_box::tool_side::ToolSideCounts;
use crate::cache_breaks::ByCause;
use crate::call_shares::RunCalls;
use crate::recorded_pricing::RecordedPricing;
use crate::result::{RunMetrics, StepRow};
use crate::retention::run::Retention;
use crate::scenario::Scenario;

/// Everything a run leaves for its figures.
pub(crate) struct MetricFacts<'a> {
    /// The scenario run.
    pub scenario: &'a Scenario,
    /// The steps table of the run, filled.
    pub steps: &'a [StepRow],
    /// The server's log of the run's requests.
    pub log: &'a [RequestRecord],
    /// What the server could not answer.
    pub divergences: &'a [Divergence],
    /// The references the run's actions used and lost.
    pub retention: &'a Retention,
    /// The run's clock at the end, ms.
    pub virtual_ms: u64,
    /// Real time taken, ms.
    pub wall_ms: u64,
    /// What the run kind knows its own way.
    pub kind: KindFacts,
}

/// The figures each run kind finds its own way: the built-in loop from its
/// state and events, a black-box agent from what the server saw (or not at
/// all: its own compaction and cache-break detection are out of sight).
/// Each field is the [`RunMetrics`] field of the same name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KindFacts {
    pub steps_used: u64,
    pub doom_loop_detected: bool,
    pub doom_loop_first_step: Option<u64>,
    pub doom_loop_kind: Option<String>,
    pub doom_loop_first_steps: [Option<u64>; 3],
    pub doom_loop_expected_kind: Option<String>,
    pub doom_loop_onset_step: Option<u64>,
    pub compactions: [u64; 5],
    pub compaction_fallbacks: u64,
    pub compaction_calls: u64,
    pub breaker_tripped: bool,
    pub tokens_saved_recorded: Option<i64>,
    /// The prompts' tokens had the run not compacted; `None` when nothing is
    /// known of the run's compaction, so its prompts are their own baseline.
    pub input_tokens_uncompacted_total: Option<u64>,
    pub references_lost_recorded: Option<u64>,
    pub refetches_recorded: Option<u64>,
    pub cache_breaks: u64,
    pub cache_breaks_by_cause: ByCause,
    pub cache_lost_cost_usd: Option<f64>,
    pub cache_breaks_matched: u64,
    pub cache_break_precision: Option<f64>,
    pub cache_break_recall: Option<f64>,
    /// The recorded usage, its price and the provider-token fit, over the
    /// calls that stand for the recorded session's.
    pub recorded: RecordedPricing,
    pub estimator_mape: Option<f64>,
    pub llm_retries: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    pub max_parallel_tools: u64,
    /// What the shell shims saw of a black-box agent's commands; `None`
    /// when none watched (the built-in loop runs no shell, and
    /// `agent.tools: live` installs no shims).
    pub tool_side: Option<ToolSideCounts>,
}

/// The run's figures.
pub(crate) fn build(facts: MetricFacts<'_>) -> RunMetrics {
    let MetricFacts { scenario, steps, log, divergences, retention, virtual_ms, wall_ms, kind } = facts;
    let KindFacts {
        steps_used,
        doom_loop_detected,
        doom_loop_first_step,
        doom_loop_kind,
        doom_loop_first_steps,
        doom_loop_expected_kind,
        doom_loop_onset_step,
        compactions,
        compaction_fallbacks,
        compaction_calls,
        breaker_tripped,
        tokens_saved_recorded,
        input_tokens_uncompacted_total,
        references_lost_recorded,
        refetches_recorded,
        cache_breaks,
        cache_breaks_by_cause,
        cache_lost_cost_usd,
        cache_breaks_matched,
        cache_break_precision,
        cache_break_recall,
        recorded,
        estimator_mape,
        llm_retries,
        tool_calls,
        tool_errors,
        max_parallel_tools,
        tool_side,
    } = kind;
    let RecordedPricing { provider_token_fit, usage_recorded, cache_write_1h_tokens_recorded, estimated_cost_usd_recorded, cost_source } = recorded;
    let calls = RunCalls::of(steps);
    let Usage { input_tokens: input_tokens_total, output_tokens: output_tokens_total, cache_read_tokens, cache_write_tokens } = calls.total.usage;
    let input_tokens_uncompacted_total = input_tokens_uncompacted_total.unwrap_or(input_tokens_total);
    let step_budget = u64::from(scenario.loop_settings.step_budget);
    let model = &scenario.spec.model;
    RunMetrics {
        steps_used,
        step_budget,
        step_budget_used_ratio: ratio(steps_used, step_budget),
        doom_loop_detected,
        doom_loop_first_step,
        doom_loop_kind,
        doom_loop_first_steps,
        doom_loop_expected_kind,
        doom_loop_onset_step,
        compactions,
        compaction_fallbacks,
        compaction_calls,
        breaker_tripped,
        tokens_saved_total: signed(input_tokens_uncompacted_total) - signed(input_tokens_total),
        tokens_saved_recorded,
        input_tokens_total,
        input_tokens_uncompacted_total,
        references_needed: retention.needed,
        references_lost: retention.lost,
        retention: retention.ratio(),
        references_first_lost_step: retention.first_lost_step,
        references_lost_recorded,
        refetches_recorded,
        compaction_savings_ratio: 1.0 - ratio(input_tokens_total, input_tokens_uncompacted_total),
        cache_breaks,
        cache_breaks_simulated: log.iter().filter(|r| r.cache_break).count() as u64,
        cache_breaks_by_cause,
        cache_lost_cost_usd,
        cache_breaks_matched,
        cache_break_precision,
        cache_break_recall,
        cache_read_tokens,
        cache_write_tokens,
        cache_hit_ratio: ratio(cache_read_tokens, input_tokens_total),
        output_tokens_total,
        estimated_cost_usd: calls.total.cost(model),
        by_share: calls.figures(model),
        estimated_cost_usd_recorded,
        cost_source,
        usage_recorded,
        cache_write_1h_tokens_recorded,
        provider_token_fit,
        estimator_mape,
        llm_calls: log.len() as u64,
        llm_retries,
        tool_calls,
        tool_errors,
        max_parallel_tools,
        virtual_ms,
        wall_ms,
        divergences: divergences.len() as u64,
        first_divergence: divergences.first().map(|d| d.render()),
        live_steps: steps.iter().filter(|step| step.live).count() as u64,
        tool_side_replayed: tool_side.map(|counts| counts.replayed),
        tool_side_divergences: tool_side.map(|counts| counts.divergences),
        commands_run_live: tool_side.map(|counts| counts.run_live),
        // The run compares its workspace once the agent has ended (`black_box::workspace`).
        workspace_diverged_at: None,
    }
}

fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// `part / whole`, 0 when `whole` is 0 (and 1 when both are).
fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 { if part == 0 { 1.0 } else { 0.0 } } else { part as f64 / whole as f64 }
}
