//! A sweep's figures per strategy, overall and per scenario: what it saved,
//! what it cost with the prompt cache priced, the cache breaks it caused and
//! what it kept of what the session needed (retention), and which strategies
//! are on the cost–retention frontier. The HTML report draws these
//! ([`crate::html`]); they are sums of the runs table's own columns, so a
//! query over `runs.parquet` gives the same figures (`docs/html-report.md`).

use crate::compare::COMPLETED_OUTCOMES;
use crate::runs::Runs;

/// The variant cost is measured against: `--strategies none`.
pub const UNCOMPACTED_VARIANT: &str = "none";

/// One strategy's runs summed, over one scenario or over several.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StrategyTotals {
    /// The variant label.
    pub variant: String,
    /// Runs summed.
    pub runs: usize,
    /// Outcomes of those runs that did not complete (`context_exceeded`, …),
    /// in row order; empty when every run completed.
    pub incomplete: Vec<String>,
    /// Σ `input_tokens_total`.
    pub input_tokens: f64,
    /// Σ `input_tokens_uncompacted_total`.
    pub input_tokens_uncompacted: f64,
    /// Σ `estimated_cost_usd`: cache reads and writes at their prices.
    pub cost_usd: f64,
    /// Σ `cache_breaks_simulated`.
    pub cache_breaks_simulated: f64,
    /// Σ `cache_read_tokens`.
    pub cache_read_tokens: f64,
    /// Σ `cache_tokens_lost`.
    pub cache_tokens_lost: f64,
    /// Σ `references_needed` and Σ `references_lost`; `None` when the report
    /// has no such columns (written before reloop measured retention).
    pub references: Option<(f64, f64)>,
}

impl StrategyTotals {
    /// 1 − input / uncompacted; `None` when nothing was sent.
    pub fn savings(&self) -> Option<f64> {
        (self.input_tokens_uncompacted > 0.0).then(|| 1.0 - self.input_tokens / self.input_tokens_uncompacted)
    }

    /// 1 − Σ lost / Σ needed; `None` when not measured or nothing was needed.
    pub fn retention(&self) -> Option<f64> {
        self.references.filter(|(needed, _)| *needed > 0.0).map(|(needed, lost)| 1.0 - lost / needed)
    }

    /// Cache reads over input tokens sent.
    pub fn cache_hit_ratio(&self) -> Option<f64> {
        (self.input_tokens > 0.0).then(|| self.cache_read_tokens / self.input_tokens)
    }

    /// Whether every run summed ended where its scenario ends.
    pub fn completed(&self) -> bool {
        self.incomplete.is_empty()
    }

    /// The cost relative to `base`'s: `+0.12` is 12 % dearer.
    pub fn cost_against(&self, base: &StrategyTotals) -> Option<f64> {
        (base.cost_usd > 0.0).then(|| self.cost_usd / base.cost_usd - 1.0)
    }

    fn add(&mut self, runs: &Runs, columns: &Columns<'_>, row: usize) {
        let value = |column: Option<&crate::runs::Metric>| column.and_then(|c| c.values[row]).unwrap_or(0.0);
        self.runs += 1;
        if !completed(&runs.outcome[row]) {
            self.incomplete.push(runs.outcome[row].clone());
        }
        self.input_tokens += value(columns.input);
        self.input_tokens_uncompacted += value(columns.uncompacted);
        self.cost_usd += value(columns.cost);
        self.cache_breaks_simulated += value(columns.breaks);
        self.cache_read_tokens += value(columns.cache_read);
        self.cache_tokens_lost += value(columns.cache_lost);
        if let (Some(needed), Some(lost)) = (columns.needed, columns.lost) {
            let (sum_needed, sum_lost) = self.references.get_or_insert((0.0, 0.0));
            *sum_needed += needed.values[row].unwrap_or(0.0);
            *sum_lost += lost.values[row].unwrap_or(0.0);
        }
    }
}

/// Whether an outcome is where a scenario ends (a table without outcomes
/// cannot tell: its runs count as completed, as in `compare`).
fn completed(outcome: &str) -> bool {
    outcome.is_empty() || COMPLETED_OUTCOMES.contains(&outcome)
}

/// The runs table's columns the totals sum; absent ones read as `None`.
struct Columns<'a> {
    input: Option<&'a crate::runs::Metric>,
    uncompacted: Option<&'a crate::runs::Metric>,
    cost: Option<&'a crate::runs::Metric>,
    breaks: Option<&'a crate::runs::Metric>,
    cache_read: Option<&'a crate::runs::Metric>,
    cache_lost: Option<&'a crate::runs::Metric>,
    needed: Option<&'a crate::runs::Metric>,
    lost: Option<&'a crate::runs::Metric>,
}

impl<'a> Columns<'a> {
    fn of(runs: &'a Runs) -> Self {
        Self {
            input: runs.metric("input_tokens_total"),
            uncompacted: runs.metric("input_tokens_uncompacted_total"),
            cost: runs.metric("estimated_cost_usd"),
            breaks: runs.metric("cache_breaks_simulated"),
            cache_read: runs.metric("cache_read_tokens"),
            cache_lost: runs.metric("cache_tokens_lost"),
            needed: runs.metric("references_needed"),
            lost: runs.metric("references_lost"),
        }
    }
}

/// One scenario's strategies.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioTotals {
    /// The scenario name.
    pub scenario: String,
    /// Per variant that ran it, in the sweep's variant order.
    pub strategies: Vec<StrategyTotals>,
}

/// A sweep's strategies, overall and per scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTotals {
    /// Variants in order of first appearance.
    pub variants: Vec<String>,
    /// Per variant, over [`SweepTotals::common`] only: like with like.
    pub overall: Vec<StrategyTotals>,
    /// The scenarios every variant completed, leaving out variants that
    /// completed none (they would leave nothing to compare; their runs over
    /// these scenarios are summed all the same, marked incomplete).
    pub common: Vec<String>,
    /// Per scenario, in order of first appearance.
    pub scenarios: Vec<ScenarioTotals>,
}

impl SweepTotals {
    /// The totals of `runs`.
    pub fn of(runs: &Runs) -> Self {
        let columns = Columns::of(runs);
        let (keys, rows) = runs.rows_by_key();
        let mut variants: Vec<String> = Vec::new();
        let mut scenarios: Vec<ScenarioTotals> = Vec::new();
        // Seen scenarios in a set: a 10,000-scenario sweep's page is not
        // built in quadratic time.
        let mut seen = std::collections::HashSet::new();
        for key in &keys {
            if !variants.contains(&key.variant) {
                variants.push(key.variant.clone());
            }
            if seen.insert(key.scenario.as_str()) {
                scenarios.push(ScenarioTotals { scenario: key.scenario.clone(), strategies: Vec::new() });
            }
        }
        for scenario in &mut scenarios {
            for variant in &variants {
                let key = crate::runs::RunKey { scenario: scenario.scenario.clone(), variant: variant.clone() };
                let Some(rows) = rows.get(&key) else { continue };
                let mut totals = StrategyTotals { variant: variant.clone(), ..StrategyTotals::default() };
                rows.iter().for_each(|&row| totals.add(runs, &columns, row));
                scenario.strategies.push(totals);
            }
        }
        let completes_any = |variant: &String| scenarios.iter().flat_map(|s| &s.strategies).any(|t| &t.variant == variant && t.completed());
        let judged: Vec<&String> = variants.iter().filter(|v| completes_any(v)).collect();
        let common: Vec<String> = scenarios
            .iter()
            .filter(|s| judged.iter().all(|v| s.strategies.iter().any(|t| &t.variant == *v && t.completed())))
            .map(|s| s.scenario.clone())
            .collect();
        let mut overall: Vec<StrategyTotals> = variants.iter().map(|v| StrategyTotals { variant: v.clone(), ..StrategyTotals::default() }).collect();
        for key in keys.iter().filter(|k| common.contains(&k.scenario)) {
            let totals = overall.iter_mut().find(|t| t.variant == key.variant).expect("every variant has totals");
            rows[key].iter().for_each(|&row| totals.add(runs, &columns, row));
        }
        Self { variants, overall, common, scenarios }
    }

    /// The position of `variant` in the sweep's order (its colour on every chart).
    pub fn index_of(&self, variant: &str) -> usize {
        self.variants.iter().position(|v| v == variant).unwrap_or(0)
    }
}

/// Which of `strategies` are Pareto-optimal for cost against retention: no
/// other is at least as cheap and retains at least as much while better in
/// one of the two. Only completed strategies with a retention figure are
/// judged, and only against each other; the others are never optimal (a run
/// that stopped early looks cheap for having done less).
pub fn pareto_optimal(strategies: &[StrategyTotals]) -> Vec<bool> {
    let judged = |t: &StrategyTotals| t.completed().then(|| t.retention()).flatten().map(|retention| (t.cost_usd, retention));
    let points: Vec<Option<(f64, f64)>> = strategies.iter().map(judged).collect();
    points
        .iter()
        .map(|point| {
            point.is_some_and(|(cost, retention)| {
                !points.iter().flatten().any(|&(other_cost, other_retention)| {
                    other_cost <= cost && other_retention >= retention && (other_cost < cost || other_retention > retention)
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strategy(variant: &str, cost_usd: f64, references: Option<(f64, f64)>) -> StrategyTotals {
        StrategyTotals { variant: variant.to_owned(), runs: 1, cost_usd, references, ..StrategyTotals::default() }
    }

    #[test]
    fn the_frontier_keeps_the_cheapest_strategy_at_each_retention() {
        let strategies = [
            strategy("none", 12.0, Some((10.0, 0.0))),
            strategy("masking", 60.0, Some((10.0, 3.0))),
            strategy("roku", 50.0, Some((10.0, 1.0))),
            strategy("cheap-lossy", 5.0, Some((10.0, 5.0))),
            strategy("tie-of-none", 12.0, Some((10.0, 0.0))),
            strategy("unmeasured", 1.0, None),
        ];
        let optimal = pareto_optimal(&strategies);
        // masking and roku are dearer than none and lose more; the cheapest
        // strategy is optimal at its lower retention; identical points both are.
        assert_eq!(optimal, [true, false, false, true, true, false]);
    }

    #[test]
    fn a_run_that_did_not_complete_is_never_on_the_frontier_nor_dominates() {
        let mut stopped_early = strategy("none", 1.0, Some((4.0, 0.0)));
        stopped_early.incomplete.push("context_exceeded".to_owned());
        let strategies = [stopped_early, strategy("roku", 50.0, Some((10.0, 1.0)))];
        assert_eq!(pareto_optimal(&strategies), [false, true]);
    }

    fn runs(rows: &[(&str, &str, &str, f64)], references: Option<[(f64, f64); 6]>) -> Runs {
        let metric = |name: &str, values: Vec<Option<f64>>| crate::runs::Metric { name: name.to_owned(), values };
        let mut metrics = vec![
            metric("estimated_cost_usd", rows.iter().map(|r| Some(r.3)).collect()),
            metric("input_tokens_total", rows.iter().map(|r| Some(r.3 * 100.0)).collect()),
        ];
        if let Some(references) = references {
            metrics.push(metric("references_needed", references.iter().map(|r| Some(r.0)).collect()));
            metrics.push(metric("references_lost", references.iter().map(|r| Some(r.1)).collect()));
        }
        Runs {
            path: "runs.parquet".into(),
            scenario: rows.iter().map(|r| r.0.to_owned()).collect(),
            variant: rows.iter().map(|r| r.1.to_owned()).collect(),
            scenario_file: vec![String::new(); rows.len()],
            outcome: rows.iter().map(|r| r.2.to_owned()).collect(),
            metrics,
            schema: std::sync::Arc::new(arrow_schema::Schema::empty()),
        }
    }

    const SWEEP: [(&str, &str, &str, f64); 6] = [
        ("a", "roku", "final_answer", 5.0),
        ("a", "masking", "final_answer", 6.0),
        ("a", "none", "context_exceeded", 1.0),
        ("b", "roku", "final_answer", 7.0),
        ("b", "masking", "context_exceeded", 2.0),
        ("b", "none", "context_exceeded", 1.5),
    ];

    /// Like with like: `b` is left out (masking did not complete it), but
    /// `none`, which completed nothing, does not empty the comparison: it is
    /// summed over `a` and marked incomplete.
    #[test]
    fn overall_totals_cover_the_scenarios_every_strategy_that_completed_any_completed() {
        let references = [(4.0, 0.0), (4.0, 1.0), (1.0, 0.0), (6.0, 0.0), (2.0, 2.0), (1.0, 0.0)];
        let totals = SweepTotals::of(&runs(&SWEEP, Some(references)));
        assert_eq!(totals.variants, ["roku", "masking", "none"]);
        assert_eq!(totals.common, ["a"]);
        let overall: Vec<(&str, f64, Option<f64>, bool)> =
            totals.overall.iter().map(|t| (t.variant.as_str(), t.cost_usd, t.retention(), t.completed())).collect();
        assert_eq!(overall, [("roku", 5.0, Some(1.0), true), ("masking", 6.0, Some(0.75), true), ("none", 1.0, Some(1.0), false)]);
        assert_eq!(pareto_optimal(&totals.overall), [true, false, false]);
        let b = &totals.scenarios[1];
        assert_eq!((b.scenario.as_str(), b.strategies[1].incomplete.as_slice()), ("b", &["context_exceeded".to_owned()][..]));
    }

    /// Reports written before retention was measured have no such columns:
    /// every figure but retention is there, and no strategy is judged.
    #[test]
    fn a_report_without_retention_columns_has_every_other_figure() {
        let totals = SweepTotals::of(&runs(&SWEEP, None));
        assert!(totals.overall.iter().all(|t| t.references.is_none() && t.retention().is_none()));
        assert_eq!(totals.overall[0].input_tokens, 500.0);
        assert_eq!(pareto_optimal(&totals.overall), [false, false, false]);
    }

    #[test]
    fn retention_is_one_minus_lost_over_needed_and_undefined_when_nothing_was_needed() {
        assert_eq!(strategy("a", 0.0, Some((8.0, 2.0))).retention(), Some(0.75));
        assert_eq!(strategy("a", 0.0, Some((0.0, 0.0))).retention(), None);
        assert_eq!(strategy("a", 0.0, None).retention(), None);
        let base = strategy("none", 10.0, None);
        assert_eq!(strategy("masking", 15.0, None).cost_against(&base), Some(0.5));
    }
}
