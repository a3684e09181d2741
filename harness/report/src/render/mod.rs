//! The verdict for people and machines: a terminal table, JSON, a
//! pull-request comment, GitHub Actions annotations. Each renderer reads the
//! same [`Verdict`].

pub mod annotations;
pub mod json;
pub mod markdown;
pub mod text;

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

    /// The metrics that moved, largest relative change first (a change from
    /// zero counts as largest).
    pub fn top_changes(&self) -> Vec<&MetricDelta> {
        let mut moved: Vec<&MetricDelta> = self.comparison.metrics.iter().filter(|m| m.delta.is_some_and(|d| d != 0.0)).collect();
        moved.sort_by(|a, b| magnitude(b).total_cmp(&magnitude(a)).then_with(|| a.metric.cmp(&b.metric)));
        moved
    }
}

fn magnitude(metric: &MetricDelta) -> f64 {
    metric.relative.map_or(f64::INFINITY, f64::abs)
}

/// A figure for people: integers plainly, others with up to four
/// significant decimals, without trailing zeros.
pub fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        return format!("{value:.0}");
    }
    let text = if value.abs() >= 100.0 { format!("{value:.1}") } else { format!("{value:.4}") };
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// An optional figure, `-` when absent.
pub fn maybe(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), number)
}

/// A signed relative change in percent, `-` when undefined.
pub fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:+.1}%", v * 100.0))
}

/// A delta with its sign.
pub fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| if v > 0.0 { format!("+{}", number(v)) } else { number(v) })
}

/// A 95 % interval, `-` when runs did not repeat.
pub fn interval(value: Option<(f64, f64)>) -> String {
    value.map_or_else(|| "-".to_owned(), |(low, high)| format!("[{}, {}]", number(low), number(high)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_plainly() {
        assert_eq!(number(1200.0), "1200");
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(0.123456), "0.1235");
        assert_eq!(number(1234.56), "1234.6");
        assert_eq!(percent(Some(0.0812)), "+8.1%");
        assert_eq!(signed(Some(-3.0)), "-3");
        assert_eq!(interval(Some((1.0, 2.5))), "[1, 2.5]");
    }
}
