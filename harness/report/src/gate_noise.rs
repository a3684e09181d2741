//! The gates over repeated runs (`run --repeat N`), which judge a figure by
//! its interval, not its mean, so noise alone neither fails nor passes a
//! change (`docs/gates.md`, "Repeated runs"):
//!
//! - `max_increase`: the interval of the difference of the sums (Welch,
//!   each scenario's mean over its trials) must not lie wholly past the
//!   limit: it fails only when its lower bound is.
//! - `min_pass_rate`: fails only when the Wilson interval's upper bound on
//!   the new pass rate is below the limit.
//! - `max_pass_rate_drop`: fails only when Newcombe's interval on
//!   base rate − new rate lies wholly past the limit.
//!
//! Without repeats (a run once on either side) there is no spread: the
//! interval is `None` and the gates judge the figure itself.

use crate::compare::Comparison;
use crate::gate_result::{GateResult, Group, Verdict};
use crate::runs::{Metric, RunKey};
use crate::stats::{mean, t_quantile, variance};
use crate::trial_stats::{rate_difference, wilson};

/// The `confidence` interval of Σ over `pairs` of (new mean − base mean)
/// of `metric`, by Welch's method over the sum of independent differences;
/// `None` unless every pair has two values or more on both sides.
pub(crate) fn sum_difference(base: Option<&Metric>, new: Option<&Metric>, pairs: &[(&RunKey, &[usize], &[usize])], confidence: f64) -> Option<(f64, f64)> {
    let values =
        |metric: Option<&Metric>, rows: &[usize]| -> Vec<f64> { metric.map(|m| rows.iter().filter_map(|&row| m.values[row]).collect()).unwrap_or_default() };
    let (mut delta, mut se2, mut df_denominator) = (0.0, 0.0, 0.0);
    if pairs.is_empty() {
        return None;
    }
    for (_, base_rows, new_rows) in pairs {
        for (sign, sample) in [(-1.0, values(base, base_rows)), (1.0, values(new, new_rows))] {
            let n = sample.len() as f64;
            let share = variance(&sample)? / n;
            delta += sign * mean(sample.iter().copied())?;
            se2 += share;
            df_denominator += share * share / (n - 1.0);
        }
    }
    if se2 == 0.0 {
        return Some((delta, delta));
    }
    let half = t_quantile(se2 * se2 / df_denominator, confidence) * se2.sqrt();
    Some((delta - half, delta + half))
}

/// Passes and runs of a flag metric over `rows` (a null cell counts as a
/// failure: the run was made and did not pass).
fn passes(metric: Option<&Metric>, rows: &[usize]) -> (u64, u64) {
    let passed = metric.map_or(0, |m| rows.iter().filter(|&&row| m.values[row].is_some_and(|v| v > 0.0)).count());
    (passed as u64, rows.len() as u64)
}

/// Whether any run of the group was made more than once in the new report.
fn repeated(group: &Group<'_>) -> bool {
    group.pairs.iter().any(|p| p.2.len() > 1) || group.added.iter().any(|a| a.1.len() > 1)
}

/// `min_pass_rate R`: the group's pass rate over every new trial is at
/// least `limit`, or (repeated) its interval reaches it.
pub(crate) fn min_pass_rate(comparison: &Comparison, metric: &str, group: &Group<'_>, limit: f64, confidence: f64) -> GateResult {
    let flag = comparison.new.metric(metric);
    let rows = group.pairs.iter().map(|p| (p.0, p.2)).chain(group.added.iter().map(|a| (a.0, a.1)));
    let mut per_key: Vec<(&RunKey, f64)> = Vec::new();
    let (mut passed, mut runs) = (0, 0);
    for (key, rows) in rows {
        let (c, n) = passes(flag, rows);
        (passed, runs) = (passed + c, runs + n);
        per_key.push((key, c as f64 / n.max(1) as f64));
    }
    let rate = passed as f64 / runs.max(1) as f64;
    let interval = repeated(group).then(|| wilson(passed, runs, confidence)).flatten();
    let held = match interval {
        Some((_, high)) => high >= limit - 1e-12,
        None => rate >= limit - 1e-12,
    };
    let mut offenders: Vec<(&RunKey, f64)> = per_key.into_iter().filter(|(_, rate)| *rate < limit).collect();
    offenders.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(b.0)));
    let check = format!("min_pass_rate {}", crate::figures::number(limit));
    Verdict { check, base: None, new: rate, limit, held, interval, offenders: keys(offenders) }.into_result(comparison, metric, group)
}

/// `max_pass_rate_drop D`: base rate − new rate over the matched runs is at
/// most `limit`, or (repeated) its interval reaches it.
pub(crate) fn max_pass_rate_drop(comparison: &Comparison, metric: &str, group: &Group<'_>, limit: f64, confidence: f64) -> GateResult {
    let (base_flag, new_flag) = (comparison.base.metric(metric), comparison.new.metric(metric));
    let (mut base, mut new) = ((0, 0), (0, 0));
    let mut per_key: Vec<(&RunKey, f64)> = Vec::new();
    for (key, base_rows, new_rows) in &group.pairs {
        let (b, n) = (passes(base_flag, base_rows), passes(new_flag, new_rows));
        base = (base.0 + b.0, base.1 + b.1);
        new = (new.0 + n.0, new.1 + n.1);
        per_key.push((key, b.0 as f64 / b.1.max(1) as f64 - n.0 as f64 / n.1.max(1) as f64));
    }
    let (base_rate, new_rate) = (base.0 as f64 / base.1.max(1) as f64, new.0 as f64 / new.1.max(1) as f64);
    let interval = repeated(group).then(|| rate_difference(base.0, base.1, new.0, new.1, confidence)).flatten();
    let held = match interval {
        Some((low, _)) => low <= limit + 1e-12,
        None => base_rate - new_rate <= limit + 1e-12,
    };
    let mut offenders: Vec<(&RunKey, f64)> = per_key.into_iter().filter(|(_, drop)| *drop > 0.0).collect();
    offenders.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let check = format!("max_pass_rate_drop {}%", crate::figures::number(limit * 100.0));
    Verdict { check, base: Some(base_rate), new: new_rate, limit, held, interval, offenders: keys(offenders) }.into_result(comparison, metric, group)
}

/// The keys of ranked offenders, in their order.
fn keys(ranked: Vec<(&RunKey, f64)>) -> Vec<RunKey> {
    ranked.into_iter().map(|(key, _)| key.clone()).collect()
}

#[cfg(test)]
mod tests {
    use crate::compare::compare;
    use crate::compare::tests::{Row, runs};
    use crate::gates::{GateResult, GateSet, evaluate};

    /// Trials of scenario `a`, one row each, of `metric`.
    fn trials(metric: &'static str, values: &[f64]) -> crate::Runs {
        let rows: Vec<Row<'static>> = values.iter().map(|v| ("a", "default", &*Box::leak(vec![(metric, *v)].into_boxed_slice()))).collect();
        runs(&rows)
    }

    fn judged(gates: &str, base: crate::Runs, new: crate::Runs) -> GateResult {
        let gates: GateSet = serde_saphyr::from_str(gates).unwrap();
        evaluate(&gates, &compare(base, new)).unwrap().remove(0)
    }

    #[test]
    fn max_increase_over_repeats_fails_on_an_interval_past_its_limit_and_holds_on_a_mean_past_it_whose_interval_is_not() {
        let tight =
            judged("tok: { max_increase: 5% }", trials("tok", &[100.0, 101.0, 99.0, 100.0, 100.0]), trials("tok", &[120.0, 121.0, 119.0, 120.0, 120.0]));
        let (low, high) = tight.interval.unwrap();
        assert!(!tight.held && low > 0.05 && high < 0.25, "{}", tight.describe());
        assert_eq!(tight.describe(), "tok max_increase 5% (all runs): 100 → 120 (+20.0%), interval [+19.0%, +21.0%]: a");
        // Welch: variances 0.5 and 0.5 over 5 trials, 8 degrees of freedom, t = 2.306.
        // +10 % on the means, but the trials spread from −50 % to +70 %.
        let (base, new) = ([100.0, 60.0, 140.0, 100.0, 100.0], [110.0, 50.0, 170.0, 90.0, 130.0]);
        let noisy = judged("tok: { max_increase: 5% }", trials("tok", &base), trials("tok", &new));
        let (low, _) = noisy.interval.unwrap();
        assert!(noisy.held && low < 0.05, "{}", noisy.describe());
        // The same means from single runs: no interval, judged as before.
        let once = judged("tok: { max_increase: 5% }", trials("tok", &[100.0]), trials("tok", &[110.0]));
        assert!(!once.held && once.interval.is_none(), "{}", once.describe());
        // A narrower confidence narrows the interval: at 50 % the noisy change fails.
        let half = judged("tok: { max_increase: 5%, confidence: 50% }", trials("tok", &base), trials("tok", &new));
        assert!(half.interval.unwrap().0 > low, "{} vs {low}", half.describe());
    }

    #[test]
    fn pass_rate_gates_compare_rates_with_their_intervals() {
        let flags = |passed: usize, of: usize| trials("passed", &(0..of).map(|i| if i < passed { 1.0 } else { 0.0 }).collect::<Vec<_>>());
        // 17/20 is under 0.9, but its interval [0.64, 0.95] reaches it.
        let near = judged("passed: { min_pass_rate: 0.9 }", flags(20, 20), flags(17, 20));
        assert!(near.held && near.new == 0.85, "{}", near.describe());
        assert_eq!(near.describe(), "passed min_pass_rate 0.9 (all runs): 0.85, interval [0.64, 0.95]");
        let far = judged("passed: { min_pass_rate: 0.9 }", flags(20, 20), flags(10, 20));
        assert!(!far.held, "{}", far.describe());
        assert_eq!(far.reason(), "passed 0.5 < 0.9 (interval [0.30, 0.70]) in a");
        // A drop of 15 points whose interval reaches below 10, and one of 60.
        let small = judged("passed: { max_pass_rate_drop: 10% }", flags(20, 20), flags(17, 20));
        assert!(small.held && small.interval.unwrap().0 < 0.10, "{}", small.describe());
        let large = judged("passed: { max_pass_rate_drop: 10% }", flags(20, 20), flags(8, 20));
        assert!(!large.held && large.interval.unwrap().0 > 0.10, "{}", large.describe());
        // Once each, the rate itself is judged.
        assert!(!judged("passed: { min_pass_rate: 0.9 }", flags(1, 1), flags(0, 1)).held);
    }

    #[test]
    fn a_confidence_outside_zero_to_one_is_refused() {
        let gates: GateSet = serde_saphyr::from_str("tok: { max_increase: 5%, confidence: 1.5 }").unwrap();
        assert!(crate::gates::check_set(&gates).unwrap_err().contains("confidence must be above 0 and below 1"));
    }
}
