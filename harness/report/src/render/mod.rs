//! The verdict for people and machines: a terminal table, JSON, a
//! pull-request comment, GitHub Actions annotations. Each renderer reads the
//! same [`Verdict`].

pub mod annotations;
pub mod json;
pub mod markdown;
pub mod paired;
pub mod run_comment;
pub mod text;

pub use crate::figures::{interval, maybe, number, percent, signed};

use crate::compare::{Comparison, MetricDelta};
use crate::gates::GateResult;

/// A comparison and the gates judged on it.
pub struct Verdict<'a> {
    /// What changed.
    pub comparison: &'a Comparison,
    /// Every check, held or not.
    pub gates: &'a [GateResult],
}

impl Verdict<'_> {
    /// Every gate held.
    pub fn passed(&self) -> bool {
        self.gates.iter().all(|g| g.held)
    }

    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &GateResult> {
        self.gates.iter().filter(|g| !g.held)
    }

    /// One line: `PASS: all 5 gates hold` or `FAIL: 2 of 5 gates failed`.
    pub fn headline(&self) -> String {
        let failed = self.failures().count();
        if failed == 0 {
            format!("PASS: all {} gate checks hold", self.gates.len())
        } else {
            format!("FAIL: {failed} of {} gate checks failed", self.gates.len())
        }
    }

    /// The metrics that moved: those of a failed gate first (so a capped
    /// list never leaves out what failed), then largest relative change
    /// first (a change from zero counts as largest).
    pub fn top_changes(&self) -> Vec<&MetricDelta> {
        let failed = |m: &MetricDelta| self.failures().any(|g| g.metric == m.metric);
        let mut moved: Vec<&MetricDelta> = self.comparison.metrics.iter().filter(|m| m.delta.is_some_and(|d| d != 0.0) || failed(m)).collect();
        moved.sort_by(|a, b| failed(b).cmp(&failed(a)).then_with(|| magnitude(b).total_cmp(&magnitude(a))).then_with(|| a.metric.cmp(&b.metric)));
        moved
    }
}

fn magnitude(metric: &MetricDelta) -> f64 {
    metric.relative.map_or(f64::INFINITY, f64::abs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::compare::tests::runs;

    /// Issue 30: "Top changes" is cut at 10 and could leave out the metric
    /// whose gate failed; failed metrics come first.
    #[test]
    fn a_failed_gates_metric_leads_the_top_changes() {
        let moved: Vec<(String, f64, f64)> = (0..12).map(|i| (format!("m{i:02}"), 1.0, 10.0)).chain([("tok".to_owned(), 100.0, 106.0)]).collect();
        let table = |new: bool| {
            let values: Vec<(&str, f64)> = moved.iter().map(|(name, base, grown)| (name.as_str(), if new { *grown } else { *base })).collect();
            runs(&[("a", "default", &values)])
        };
        let comparison = compare(table(false), table(true));
        let gates: crate::gates::GateSet = serde_saphyr::from_str("tok: { max_increase: 5% }").unwrap();
        let results = crate::gates::evaluate(&gates, &comparison).unwrap();
        let verdict = Verdict { comparison: &comparison, gates: &results };
        assert_eq!(verdict.top_changes()[0].metric, "tok");
        assert!(markdown::render(&verdict).contains("| `tok` max\\_increase 5% | all runs | 100 | 106 | +6.0% | `a` |"), "{}", markdown::render(&verdict));
    }
}
