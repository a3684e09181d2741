//! Cache-break causes a change introduced, for the pull-request comment.
//!
//! `runs.parquet` counts the simulated breaks of each run per cause
//! (`cache_breaks_by_cause.<cause>`, `docs/cache-breaks.md`); gates judge
//! them like any metric (`cache_breaks_by_cause.system: { max: 0 }`). A gate
//! says that a count went wrong; this says which cause is new and where, so
//! the comment names it: a run that had no break of a cause and now has.
//! A base written before the columns existed names nothing: every cause
//! would look new.

use std::fmt::Write as _;

use crate::compare::{Comparison, mean_of};
use crate::escape::code_span;

/// The column prefix of the per-cause counts.
pub const PREFIX: &str = "cache_breaks_by_cause.";

/// Runs listed per cause.
const RUNS_SHOWN: usize = 3;

/// A cause some runs have now and did not before.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCause {
    /// The cause (`system`, `edited`, …).
    pub cause: String,
    /// The runs that gained it, with their new count (mean over repeats).
    pub runs: Vec<(String, f64)>,
}

/// The causes runs gained, in column order: matched runs whose count went
/// from 0 to more, and added runs with any.
pub fn new_causes(comparison: &Comparison) -> Vec<NewCause> {
    let (base, new) = (&comparison.base, &comparison.new);
    new.metrics
        .iter()
        .filter_map(|metric| {
            let cause = metric.name.strip_prefix(PREFIX)?;
            let before = base.metric(&metric.name)?;
            let matched = comparison.pairs.iter().filter_map(|pair| {
                let was = mean_of(Some(before), &pair.base_rows).unwrap_or(0.0);
                let now = mean_of(Some(metric), &pair.new_rows).unwrap_or(0.0);
                (was == 0.0 && now > 0.0).then(|| (pair.key.to_string(), now))
            });
            let added = comparison.added.iter().filter_map(|(key, rows)| {
                let now = mean_of(Some(metric), rows).unwrap_or(0.0);
                (now > 0.0).then(|| (format!("{key} (added)"), now))
            });
            let runs: Vec<(String, f64)> = matched.chain(added).collect();
            (!runs.is_empty()).then(|| NewCause { cause: cause.to_owned(), runs })
        })
        .collect()
}

/// The comment's section: one line per new cause, empty when there is none.
pub fn markdown(comparison: &Comparison) -> String {
    let causes = new_causes(comparison);
    if causes.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n**New cache-break causes** (`docs/cache-breaks.md`)\n\n");
    for NewCause { cause, runs } in &causes {
        let listed: Vec<String> = runs.iter().take(RUNS_SHOWN).map(|(run, count)| format!("{} ({})", code_span(run), crate::figures::number(*count))).collect();
        let more = if runs.len() > RUNS_SHOWN { format!(" and {} more", runs.len() - RUNS_SHOWN) } else { String::new() };
        let _ = writeln!(out, "- {}: {}{more}", code_span(cause), listed.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;
    use crate::gates::{GateSet, evaluate};
    use crate::render::{Verdict, markdown};
    use crate::runs::Runs;

    fn runs(system: [f64; 2], edited: [f64; 2]) -> Runs {
        let row = |i: usize| [("cache_breaks_by_cause.system", system[i]), ("cache_breaks_by_cause.edited", edited[i])];
        let (first, second) = (row(0), row(1));
        crate::compare::tests::runs(&[("system-prompt-drift", "default", &first), ("long-session", "default", &second)])
    }

    #[test]
    fn a_new_cause_fails_its_gate_and_the_comment_names_it() {
        let comparison = compare(runs([0.0, 0.0], [0.0, 12.0]), runs([1.0, 0.0], [0.0, 12.0]));
        let gates: GateSet = serde_saphyr::from_str("cache_breaks_by_cause.system: { max: 0 }\n").unwrap();
        let results = evaluate(&gates, &comparison).unwrap();
        let verdict = Verdict { comparison: &comparison, gates: &results };
        assert!(!verdict.passed());
        let causes = new_causes(&comparison);
        assert_eq!(causes, vec![NewCause { cause: "system".into(), runs: vec![("system-prompt-drift".into(), 1.0)] }]);
        insta::assert_snapshot!(markdown::render(&verdict));
    }

    #[test]
    fn a_base_without_the_columns_names_nothing() {
        let mut base = runs([0.0, 0.0], [0.0, 0.0]);
        base.metrics.clear();
        assert!(new_causes(&compare(base, runs([1.0, 0.0], [0.0, 12.0]))).is_empty());
    }
}
