//! Joining two runs tables on (scenario, variant): which runs were added,
//! removed or changed, and per metric the base and new means over the runs
//! that ended alike on both sides (like with like), their delta, relative delta and,
//! when runs were repeated, a 95 % confidence interval of the delta.
//! Every list is sorted by scenario and variant, so the outputs do not
//! follow the order in which a parallel batch finished its runs.

use std::collections::HashMap;

use serde::Serialize;

use crate::first_named::first_named;
use crate::runs::{Metric, RunKey, Runs};
use crate::stats;

/// The runs of one key on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The key.
    pub key: RunKey,
    /// Its rows in the base table.
    pub base_rows: Vec<usize>,
    /// Its rows in the new table.
    pub new_rows: Vec<usize>,
}

/// One metric across the matched runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricDelta {
    /// The column name.
    pub metric: String,
    /// Mean per run in the base (over matched runs).
    pub base: Option<f64>,
    /// Mean per run in the new report.
    pub new: Option<f64>,
    /// `new − base`.
    pub delta: Option<f64>,
    /// `(new − base) / |base|`.
    pub relative: Option<f64>,
    /// 95 % interval of the delta, when both sides repeat runs.
    pub interval: Option<(f64, f64)>,
}

/// A matched run whose figures or outcome moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The run.
    pub key: RunKey,
    /// Outcome before and after, when it changed.
    pub outcome: Option<(String, String)>,
    /// Metrics that moved: name, base, new (means over repeats).
    pub metrics: Vec<(String, Option<f64>, Option<f64>)>,
}

/// A matched run the means leave out: it ended differently on the two
/// sides, and not both completed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOut {
    /// The run.
    pub key: RunKey,
    /// How its base run ended (the first row's outcome when repeated).
    pub base: String,
    /// How its new run ended.
    pub new: String,
}

/// Two reports side by side.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The base table.
    pub base: Runs,
    /// The new table.
    pub new: Runs,
    /// Keys on both sides, sorted.
    pub pairs: Vec<Pair>,
    /// Keys only in the new table, with their rows, sorted.
    pub added: Vec<(RunKey, Vec<usize>)>,
    /// Keys only in the base, sorted.
    pub removed: Vec<RunKey>,
    /// Matched runs that moved, sorted.
    pub changed: Vec<Change>,
    /// Matched runs that ended differently on the two sides (a final answer
    /// against a context overflow), sorted: the means leave them out, the
    /// gates judge them.
    pub left_out: Vec<LeftOut>,
    /// Every metric of either table, base order first, as means over the
    /// matched runs not left out.
    pub metrics: Vec<MetricDelta>,
}

impl Comparison {
    /// Leaves the runs an upstream answered live on either side (a
    /// `live_steps` above 0, `run --upstream`) out of what the gates
    /// judge: they are not deterministic. Their keys, sorted.
    pub fn leave_out_live(&mut self) -> Vec<RunKey> {
        let live = |runs: &Runs, rows: &[usize]| runs.metric("live_steps").is_some_and(|m| rows.iter().any(|&row| m.values[row].is_some_and(|n| n > 0.0)));
        let mut left: Vec<RunKey> =
            self.pairs.iter().filter(|p| live(&self.base, &p.base_rows) || live(&self.new, &p.new_rows)).map(|p| p.key.clone()).collect();
        left.extend(self.added.iter().filter(|(_, rows)| live(&self.new, rows)).map(|(key, _)| key.clone()));
        self.pairs.retain(|p| !left.contains(&p.key));
        self.added.retain(|(key, _)| !left.contains(key));
        left.sort();
        left
    }

    /// `like for like: 4 of 5 matched runs ended alike on both sides; left out of the means: a (final_answer → context_exceeded)`,
    /// naming the first few ([`crate::first_named`]).
    pub fn like_for_like(&self) -> String {
        let alike = self.pairs.len() - self.left_out.len();
        let mut text = format!("like for like: {alike} of {} matched runs ended alike on both sides", self.pairs.len());
        if !self.left_out.is_empty() {
            let names = first_named(&self.left_out, |l| format!("{} ({} → {})", l.key, l.base, l.new));
            text.push_str(&format!("; left out of the means: {names}"));
        }
        text
    }
}

/// Outcomes that end a run where its scenario ends: a final answer, or the
/// stop or submit an imported session's `ending` states (the same set as
/// the sweep's like-for-like totals, `reloop_agent::Outcome::completed`;
/// this crate reads outcomes as text, and a test in the CLI keeps the two
/// equal).
pub const COMPLETED_OUTCOMES: [&str; 3] = ["final_answer", "stopped", "submitted"];

/// Compares `base` with `new`.
pub fn compare(base: Runs, new: Runs) -> Comparison {
    let (base_order, base_rows) = base.rows_by_key();
    let (mut new_order, mut new_rows) = new.rows_by_key();
    new_order.sort();
    let mut pairs = Vec::new();
    let mut added = Vec::new();
    for key in new_order {
        let rows = new_rows.remove(&key).unwrap_or_default();
        match base_rows.get(&key) {
            Some(base_rows) => pairs.push(Pair { base_rows: base_rows.clone(), new_rows: rows, key }),
            None => added.push((key, rows)),
        }
    }
    let matched: std::collections::HashSet<&RunKey> = pairs.iter().map(|p| &p.key).collect();
    let mut removed: Vec<RunKey> = base_order.into_iter().filter(|key| !matched.contains(key)).collect();
    removed.sort();
    // Alike: the same outcome on every row of both sides (a fault scenario
    // that overflows by design does so on both), or completed on both. A
    // table without an `outcome` column (empty text) cannot tell: its runs
    // count as completed.
    let completed =
        |runs: &Runs, rows: &[usize]| rows.iter().all(|&row| runs.outcome[row].is_empty() || COMPLETED_OUTCOMES.contains(&runs.outcome[row].as_str()));
    let same = |p: &Pair| {
        let first = &base.outcome[p.base_rows[0]];
        p.base_rows.iter().map(|&row| &base.outcome[row]).chain(p.new_rows.iter().map(|&row| &new.outcome[row])).all(|o| o == first)
    };
    let (like, unlike): (Vec<Pair>, Vec<Pair>) =
        pairs.iter().cloned().partition(|p| same(p) || (completed(&base, &p.base_rows) && completed(&new, &p.new_rows)));
    let left_out =
        unlike.into_iter().map(|p| LeftOut { base: base.outcome[p.base_rows[0]].clone(), new: new.outcome[p.new_rows[0]].clone(), key: p.key }).collect();
    let names = metric_names(&base, &new);
    let metrics = names.iter().map(|name| metric_delta(name, base.metric(name), new.metric(name), &like)).collect();
    let changed = changes(&base, &new, &names, &pairs);
    Comparison { base, new, pairs, added, removed, changed, left_out, metrics }
}

fn metric_names(base: &Runs, new: &Runs) -> Vec<String> {
    let mut names: Vec<String> = base.metrics.iter().map(|m| m.name.clone()).collect();
    names.extend(new.metrics.iter().map(|m| m.name.clone()).filter(|n| base.metric(n).is_none()));
    names
}

/// The mean of `metric` over `rows`, ignoring nulls.
pub fn mean_of(metric: Option<&Metric>, rows: &[usize]) -> Option<f64> {
    let metric = metric?;
    stats::mean(rows.iter().filter_map(|&row| metric.values[row]))
}

fn values(metric: Option<&Metric>, rows: impl Iterator<Item = usize>) -> Vec<f64> {
    metric.map(|m| rows.filter_map(|row| m.values[row]).collect()).unwrap_or_default()
}

fn metric_delta(name: &str, base: Option<&Metric>, new: Option<&Metric>, pairs: &[Pair]) -> MetricDelta {
    let per_key = |metric, rows: fn(&Pair) -> &[usize]| -> Vec<f64> { pairs.iter().filter_map(|pair| mean_of(metric, rows(pair))).collect() };
    let base_mean = stats::mean(per_key(base, |p| &p.base_rows));
    let new_mean = stats::mean(per_key(new, |p| &p.new_rows));
    let delta = base_mean.zip(new_mean).map(|(b, n)| n - b);
    let relative = base_mean.zip(new_mean).and_then(|(b, n)| stats::relative(b, n));
    let repeated = pairs.iter().any(|p| p.base_rows.len() > 1 && p.new_rows.len() > 1);
    let interval = repeated
        .then(|| {
            let base_values = values(base, pairs.iter().flat_map(|p| p.base_rows.iter().copied()));
            let new_values = values(new, pairs.iter().flat_map(|p| p.new_rows.iter().copied()));
            stats::welch_interval(&base_values, &new_values)
        })
        .flatten();
    MetricDelta { metric: name.to_owned(), base: base_mean, new: new_mean, delta, relative, interval }
}

fn changes(base: &Runs, new: &Runs, names: &[String], pairs: &[Pair]) -> Vec<Change> {
    let base_metrics: HashMap<&str, &Metric> = base.metrics.iter().map(|m| (m.name.as_str(), m)).collect();
    let new_metrics: HashMap<&str, &Metric> = new.metrics.iter().map(|m| (m.name.as_str(), m)).collect();
    pairs
        .iter()
        .filter_map(|pair| {
            let metrics: Vec<_> = names
                .iter()
                .filter_map(|name| {
                    let b = mean_of(base_metrics.get(name.as_str()).copied(), &pair.base_rows);
                    let n = mean_of(new_metrics.get(name.as_str()).copied(), &pair.new_rows);
                    (b != n).then(|| (name.clone(), b, n))
                })
                .collect();
            let (b, n) = (&base.outcome[pair.base_rows[0]], &new.outcome[pair.new_rows[0]]);
            let outcome = (b != n).then(|| (b.clone(), n.clone()));
            (outcome.is_some() || !metrics.is_empty()).then(|| Change { key: pair.key.clone(), outcome, metrics })
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A test row: scenario, variant, (metric, value) pairs.
    pub(crate) type Row<'a> = (&'a str, &'a str, &'a [(&'a str, f64)]);

    /// A runs table from test rows.
    pub(crate) fn runs(rows: &[Row<'_>]) -> Runs {
        let mut metrics: Vec<Metric> = Vec::new();
        for (row, (_, _, values)) in rows.iter().enumerate() {
            for (name, value) in values.iter() {
                if !metrics.iter().any(|m| m.name == *name) {
                    metrics.push(Metric { name: (*name).to_owned(), values: vec![None; rows.len()] });
                }
                let metric = metrics.iter_mut().find(|m| m.name == *name).unwrap();
                metric.values[row] = Some(*value);
            }
        }
        let mut fields: Vec<arrow_schema::Field> = ["scenario", "variant", "scenario_file", "outcome"]
            .iter()
            .map(|name| arrow_schema::Field::new(*name, arrow_schema::DataType::Utf8, false))
            .collect();
        fields.extend(metrics.iter().map(|m| arrow_schema::Field::new(&m.name, arrow_schema::DataType::Float64, true)));
        Runs {
            schema: std::sync::Arc::new(arrow_schema::Schema::new(fields)),
            path: "test".into(),
            scenario: rows.iter().map(|r| r.0.to_owned()).collect(),
            variant: rows.iter().map(|r| r.1.to_owned()).collect(),
            scenario_file: rows.iter().map(|r| format!("scenarios/{}.yaml", r.0)).collect(),
            outcome: rows.iter().map(|_| "final_answer".to_owned()).collect(),
            metrics,
        }
    }

    #[test]
    fn joins_on_scenario_and_variant_and_lists_what_moved() {
        let base = runs(&[("a", "default", &[("tokens", 100.0)]), ("b", "default", &[("tokens", 50.0)]), ("gone", "default", &[])]);
        let new = runs(&[("a", "default", &[("tokens", 110.0)]), ("b", "default", &[("tokens", 50.0)]), ("fresh", "default", &[])]);
        let comparison = compare(base, new);
        assert_eq!(comparison.pairs.len(), 2);
        assert_eq!(comparison.added[0].0.scenario, "fresh");
        assert_eq!(comparison.removed[0].scenario, "gone");
        assert_eq!(comparison.changed.len(), 1);
        assert_eq!(comparison.changed[0].metrics, vec![("tokens".to_owned(), Some(100.0), Some(110.0))]);
        let tokens = &comparison.metrics[0];
        assert_eq!((tokens.base, tokens.new, tokens.delta), (Some(75.0), Some(80.0), Some(5.0)));
        assert!((tokens.relative.unwrap() - 5.0 / 75.0).abs() < 1e-12);
        assert_eq!(tokens.interval, None, "no repeats, no interval");
    }

    #[test]
    fn repeated_runs_get_an_interval() {
        let base = runs(&[("a", "default", &[("x", 1.0)]), ("a", "default", &[("x", 3.0)])]);
        let new = runs(&[("a", "default", &[("x", 5.0)]), ("a", "default", &[("x", 7.0)])]);
        let comparison = compare(base, new);
        let (low, high) = comparison.metrics[0].interval.unwrap();
        assert!(low < 4.0 && 4.0 < high, "{low}..{high}");
        assert_eq!(comparison.metrics[0].delta, Some(4.0));
    }

    /// Issue 30: compare's means took every matched run, so a new run that
    /// stopped at a context overflow halfway looked like a saving. A run
    /// that overflows on both sides (a fault scenario) stays in.
    #[test]
    fn means_are_taken_over_the_runs_that_ended_alike_and_lists_are_sorted() {
        let base = runs(&[("b", "default", &[("tokens", 100.0)]), ("a", "default", &[("tokens", 100.0)]), ("z", "default", &[])]);
        let mut new = runs(&[("b", "default", &[("tokens", 40.0)]), ("a", "default", &[("tokens", 110.0)]), ("c", "default", &[])]);
        new.outcome[0] = "context_exceeded".to_owned();
        let comparison = compare(base.clone(), new.clone());
        assert_eq!((comparison.metrics[0].base, comparison.metrics[0].new), (Some(100.0), Some(110.0)), "b is left out of the means");
        assert_eq!(
            comparison.like_for_like(),
            "like for like: 1 of 2 matched runs ended alike on both sides; left out of the means: b (final_answer → context_exceeded)"
        );
        let keys: Vec<&str> = comparison.pairs.iter().map(|p| p.key.scenario.as_str()).collect();
        assert_eq!(keys, ["a", "b"], "sorted by scenario, not table order");
        let changed: Vec<&str> = comparison.changed.iter().map(|c| c.key.scenario.as_str()).collect();
        assert_eq!(changed, ["a", "b"]);
        let mut both = base;
        both.outcome[0] = "context_exceeded".to_owned();
        assert!(compare(both, new).left_out.is_empty(), "ended alike: compared");
    }
}
