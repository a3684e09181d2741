//! ZeroClaw's cycles: a pattern of 2..=`max_period` calls (A, B, A, B or
//! A, B, C, A, B, C) repeated `repeats` times in a row, each call with the
//! result it had a period before (where known): an edit-and-test round
//! whose test output changes is work, not a cycle.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{DoomCall, DoomLoop, DoomLoopKind};

/// Settings of the cycle detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CycleConfig {
    /// The longest pattern looked for (at least 2).
    pub max_period: usize,
    /// Full repetitions of the pattern that make a loop (at least 2).
    pub repeats: usize,
}

impl Default for CycleConfig {
    fn default() -> Self {
        Self { max_period: 3, repeats: 3 }
    }
}

/// Checks whether the newest call of `history` completes a cycle: for the
/// shortest period `p` in 2..=`max_period` whose pattern is not one call
/// repeated (that is the identical detector's), the tail that repeats with
/// period `p` holds `repeats` full patterns, or a further whole pattern.
pub fn check(config: &CycleConfig, history: &[DoomCall]) -> Option<DoomLoop> {
    (2..=config.max_period).find_map(|period| {
        let run = periodic_tail(history, period);
        let pattern = &history[history.len().saturating_sub(period)..];
        let one_call_repeated = pattern.iter().all(|call| call.same_call(&pattern[0]));
        let needed = period * config.repeats.max(2);
        (run >= needed && (run - needed).is_multiple_of(period) && !one_call_repeated).then(|| DoomLoop {
            kind: DoomLoopKind::Cycle,
            tool: pattern[0].tool.clone(),
            repeats: run / period,
            period,
            started_at: history.len() - run,
        })
    })
}

/// The length of the longest tail in which every call equals the one
/// `period` before it (the first `period` calls count as the seed).
fn periodic_tail(history: &[DoomCall], period: usize) -> usize {
    if history.len() < period {
        return 0;
    }
    let matching = (period..history.len()).rev().take_while(|&i| history[i].repeats(&history[i - period])).count();
    matching + period
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doom_loop::tests::calls;

    fn fired_at(config: &CycleConfig, names: &[&str]) -> Vec<usize> {
        let history = calls(names);
        (1..=history.len()).filter(|&n| check(config, &history[..n]).is_some()).collect()
    }

    #[test]
    fn an_a_b_cycle_fires_at_three_patterns_then_each_further_pattern() {
        let fired = fired_at(&CycleConfig::default(), &["x", "a", "b", "a", "b", "a", "b", "a", "b"]);
        assert_eq!(fired, vec![7, 9]);
        let history = calls(&["x", "a", "b", "a", "b", "a", "b"]);
        let hit = check(&CycleConfig::default(), &history).expect("cycle");
        assert_eq!((hit.period, hit.repeats, hit.started_at, hit.tool.as_str()), (2, 3, 1, "a"));
    }

    #[test]
    fn a_round_whose_results_change_is_not_a_cycle() {
        let mut history = calls(&["a", "b", "a", "b", "a", "b"]);
        for (i, call) in history.iter_mut().enumerate() {
            call.result_hash = Some(i as u64);
        }
        assert_eq!(check(&CycleConfig::default(), &history), None);
    }

    #[test]
    fn a_period_three_cycle_is_found() {
        assert_eq!(fired_at(&CycleConfig::default(), &["a", "b", "c", "a", "b", "c", "a", "b", "c"]), vec![9]);
    }

    #[test]
    fn identical_calls_are_not_a_cycle() {
        assert!(fired_at(&CycleConfig::default(), &["a"; 12]).is_empty());
    }

    #[test]
    fn two_patterns_are_not_enough_and_a_break_resets() {
        assert!(fired_at(&CycleConfig::default(), &["a", "b", "a", "b", "c", "a", "b", "a", "b"]).is_empty());
    }

    #[test]
    fn a_period_longer_than_the_setting_is_ignored() {
        let names = ["a", "b", "c", "d", "a", "b", "c", "d", "a", "b", "c", "d"];
        assert!(fired_at(&CycleConfig::default(), &names).is_empty());
        assert_eq!(fired_at(&CycleConfig { max_period: 4, ..Default::default() }, &names), vec![12]);
    }
}
