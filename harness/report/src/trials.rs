//! Verdicts over repeated trials (`run --repeat N`): the trials of one
//! scenario × variant grouped, their pass rate with its interval, pass^k
//! and pass@k, and whether the scenario passes: every counted trial passes
//! (pass^N), unless a minimum pass rate says how many may fail. Trials
//! that failed for the harness's own reasons (`harness_error`, `skipped`:
//! the agent not installed) say nothing of the agent: they are left out of
//! the rates and counted apart, as tau2-bench does. Every renderer of a
//! run's own verdict (the terminal table, JUnit, the PR comment, GitHub
//! annotations) reads these.

use std::collections::HashMap;

use crate::runs::RunKey;
use crate::trial_stats::{pass_at_k, pass_hat_k, wilson};

/// The confidence of the interval shown on a pass rate.
pub const CONFIDENCE: f64 = 0.95;

/// Outcomes of trials the harness, not the agent, failed.
pub const HARNESS_OUTCOMES: [&str; 2] = ["harness_error", "skipped"];

/// One trial as the verdict needs it.
#[derive(Debug, Clone, Copy)]
pub struct Trial<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// Variant label.
    pub variant: &'a str,
    /// Scenario file.
    pub file: &'a str,
    /// How it ended (`docs/metrics.md` `outcome`).
    pub outcome: &'a str,
    /// Every expectation held.
    pub passed: bool,
    /// The expectations that did not hold.
    pub failures: &'a [String],
    /// The lowest pass rate that passes the scenario (`--min-pass-rate`
    /// or the scenario's `expect.min_pass_rate`); `None`: every trial.
    pub min_pass_rate: Option<f64>,
}

/// The trials of one scenario × variant, judged together.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialVerdict {
    /// The run's key.
    pub key: RunKey,
    /// Its scenario file.
    pub file: String,
    /// Trials run.
    pub trials: u64,
    /// Trials counted in the rates (`n`): all but the harness's failures.
    pub counted: u64,
    /// Counted trials that passed (`c`).
    pub passed: u64,
    /// Trials the harness failed (`harness_error`, `skipped`), left out.
    pub harness: u64,
    /// The lowest pass rate that passes; `None`: every counted trial must.
    pub min_pass_rate: Option<f64>,
    /// Outcomes and how many trials ended so, most first.
    pub outcomes: Vec<(String, u64)>,
    /// Each distinct failed expectation and how many trials failed it.
    pub failures: Vec<(String, u64)>,
}

impl TrialVerdict {
    /// The verdicts of `trials`, one per scenario × variant, in first-seen
    /// order.
    pub fn of<'a>(trials: impl IntoIterator<Item = Trial<'a>>) -> Vec<Self> {
        let mut verdicts: Vec<Self> = Vec::new();
        // Keyed by the trials' own names: a copied key per verdict was, in a
        // sweep of distinct scenarios, a copy of every run's two names.
        let mut index: HashMap<(&str, &str), usize> = HashMap::new();
        for trial in trials {
            let at = *index.entry((trial.scenario, trial.variant)).or_insert_with(|| {
                let key = RunKey { scenario: trial.scenario.to_owned(), variant: trial.variant.to_owned() };
                verdicts.push(Self::empty(key, trial.file));
                verdicts.len() - 1
            });
            verdicts[at].add(&trial);
        }
        for verdict in &mut verdicts {
            verdict.outcomes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        }
        verdicts
    }

    fn empty(key: RunKey, file: &str) -> Self {
        Self { key, file: file.to_owned(), trials: 0, counted: 0, passed: 0, harness: 0, min_pass_rate: None, outcomes: Vec::new(), failures: Vec::new() }
    }

    fn add(&mut self, trial: &Trial<'_>) {
        self.trials += 1;
        self.min_pass_rate = self.min_pass_rate.or(trial.min_pass_rate);
        bump(&mut self.outcomes, trial.outcome);
        if HARNESS_OUTCOMES.contains(&trial.outcome) {
            self.harness += 1;
            return;
        }
        self.counted += 1;
        if trial.passed {
            self.passed += 1;
        }
        for failure in trial.failures {
            bump(&mut self.failures, failure);
        }
    }

    /// The pass rate c / n over the counted trials.
    pub fn rate(&self) -> Option<f64> {
        (self.counted > 0).then(|| self.passed as f64 / self.counted as f64)
    }

    /// The Wilson interval on the pass rate at [`CONFIDENCE`].
    pub fn interval(&self) -> Option<(f64, f64)> {
        wilson(self.passed, self.counted, CONFIDENCE)
    }

    /// pass^k over the counted trials.
    pub fn pass_hat(&self, k: u64) -> Option<f64> {
        pass_hat_k(self.counted, self.passed, k)
    }

    /// pass@k over the counted trials.
    pub fn pass_at(&self, k: u64) -> Option<f64> {
        pass_at_k(self.counted, self.passed, k)
    }

    /// Counted trials disagree: some passed, some failed.
    pub fn flaky(&self) -> bool {
        self.passed > 0 && self.passed < self.counted
    }

    /// Whether the scenario passes: its pass rate reaches the minimum, or
    /// without one every counted trial passed. With no trial counted (all
    /// the harness's), nothing failed: the harness's failures are judged
    /// apart (a harness error is exit code 3, a skipped agent no failure).
    pub fn holds(&self) -> bool {
        match (self.rate(), self.min_pass_rate) {
            (None, _) => true,
            (Some(rate), Some(min)) => rate >= min - 1e-12,
            (Some(_), None) => self.passed == self.counted,
        }
    }

    /// `passed 12/20`, with the trials the harness failed when there are.
    pub fn passed_label(&self) -> String {
        let mut text = format!("passed {}/{}", self.passed, self.counted);
        if self.harness > 0 {
            text.push_str(&format!(" ({} left out: harness)", self.harness));
        }
        text
    }

    /// `ok`, `FAIL`, `flaky ok` (passed on its minimum rate), `flaky FAIL`.
    pub fn mark(&self) -> &'static str {
        match (self.flaky(), self.holds()) {
            (false, true) => "ok",
            (false, false) => "FAIL",
            (true, true) => "flaky ok",
            (true, false) => "flaky FAIL",
        }
    }

    /// What the rule was: `pass^N` or `pass rate ≥ R`.
    pub fn rule(&self) -> String {
        match self.min_pass_rate {
            Some(min) => format!("pass rate ≥ {}", crate::figures::number(min)),
            None => format!("pass^{}", self.counted),
        }
    }
}

/// Adds one to `text`'s count.
fn bump(counts: &mut Vec<(String, u64)>, text: &str) {
    match counts.iter_mut().find(|(seen, _)| seen == text) {
        Some((_, count)) => *count += 1,
        None => {
            // Most verdicts see one outcome: room for one, not the four a
            // first push makes; later pushes grow as usual.
            if counts.is_empty() {
                counts.reserve_exact(1);
            }
            counts.push((text.to_owned(), 1));
        }
    }
}

/// A rate as a figure with two decimals, `-` when undefined.
pub fn rate(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

/// An interval on a rate, `[0.27, 0.69]`.
pub fn rate_interval(value: Option<(f64, f64)>) -> String {
    value.map_or_else(|| "-".to_owned(), |(low, high)| format!("[{low:.2}, {high:.2}]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(outcome: &'static str, passed: bool, min: Option<f64>) -> Trial<'static> {
        Trial { scenario: "s", variant: "default", file: "s.yaml", outcome, passed, failures: &[], min_pass_rate: min }
    }

    #[test]
    fn trials_that_disagree_are_flaky_and_fail_pass_hat_n_unless_a_rate_allows() {
        let mixed = || [trial("final_answer", true, None), trial("agent_error", false, None), trial("final_answer", true, None)];
        let verdict = &TrialVerdict::of(mixed())[0];
        assert_eq!((verdict.counted, verdict.passed, verdict.flaky(), verdict.holds()), (3, 2, true, false));
        assert_eq!((verdict.mark(), verdict.rule().as_str()), ("flaky FAIL", "pass^3"));
        assert_eq!(verdict.outcomes, [("final_answer".to_owned(), 2), ("agent_error".to_owned(), 1)]);
        let allowed = &TrialVerdict::of(mixed().map(|t| Trial { min_pass_rate: Some(0.5), ..t }))[0];
        assert_eq!((allowed.holds(), allowed.mark()), (true, "flaky ok"));
        let strict = &TrialVerdict::of(mixed().map(|t| Trial { min_pass_rate: Some(0.7), ..t }))[0];
        assert!(!strict.holds(), "2/3 is below 0.7");
    }

    #[test]
    fn the_harnesss_own_failures_are_left_out_of_the_rates_and_counted_apart() {
        let verdict = &TrialVerdict::of([trial("final_answer", true, None), trial("harness_error", false, None), trial("skipped", true, None)])[0];
        assert_eq!((verdict.trials, verdict.counted, verdict.harness), (3, 1, 2));
        assert_eq!((verdict.rate(), verdict.flaky(), verdict.holds()), (Some(1.0), false, true));
        assert_eq!(verdict.passed_label(), "passed 1/1 (2 left out: harness)");
        let none_counted = &TrialVerdict::of([trial("skipped", true, None)])[0];
        assert_eq!((none_counted.rate(), none_counted.interval(), none_counted.holds()), (None, None, true));
    }

    #[test]
    fn a_verdict_of_one_outcome_holds_room_for_one() {
        // A sweep of distinct scenarios keeps a verdict per run to its end;
        // the first push's room for four was most of what one held.
        let verdicts = TrialVerdict::of([trial("final_answer", true, None), Trial { scenario: "t", ..trial("agent_error", false, None) }]);
        assert_eq!(verdicts.len(), 2);
        assert!(verdicts.iter().all(|verdict| verdict.outcomes.capacity() == 1), "{:?}", verdicts.iter().map(|v| v.outcomes.capacity()).collect::<Vec<_>>());
    }
}
