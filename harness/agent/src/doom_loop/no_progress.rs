//! ZeroClaw's calls without progress: the calls vary (the next page, a
//! slightly different search) but the results stop changing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{DoomCall, DoomLoop, DoomLoopKind};

/// Settings of the no-progress detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NoProgressConfig {
    /// Consecutive distinct calls with one result that make a loop (at least 2).
    pub window: usize,
}

impl Default for NoProgressConfig {
    fn default() -> Self {
        Self { window: 4 }
    }
}

/// Checks whether the newest result of `history` completes a window of
/// `window` calls, no two alike, that all got the same result. Calls without
/// a result hash (a write's acknowledgement, a call still running) break the
/// window: "ok" after each of four edits is progress, not a loop. Fires again
/// each further `window` such calls.
pub fn check(config: &NoProgressConfig, history: &[DoomCall]) -> Option<DoomLoop> {
    let last = history.last()?;
    let hash = last.result_hash?;
    let run = history.iter().rev().take_while(|call| call.result_hash == Some(hash)).count();
    let window = config.window.max(2);
    if run < window || !(run - window).is_multiple_of(window) {
        return None;
    }
    let tail = &history[history.len() - window..];
    let all_distinct = tail.iter().enumerate().all(|(i, call)| tail[..i].iter().all(|earlier| !earlier.same_call(call)));
    DoomLoop::of_run(DoomLoopKind::NoProgress, history, run).filter(|_| all_distinct)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doom_loop::DoomCall;

    fn call(args: &str, result: Option<u64>) -> DoomCall {
        DoomCall { tool: "read".into(), arguments: args.into(), result_hash: result }
    }

    #[test]
    fn varying_calls_with_one_result_fire_at_the_window() {
        let history: Vec<DoomCall> = (0..8).map(|page| call(&page.to_string(), Some(7))).collect();
        let fired: Vec<usize> = (1..=history.len()).filter(|&n| check(&NoProgressConfig::default(), &history[..n]).is_some()).collect();
        assert_eq!(fired, vec![4, 8]);
    }

    #[test]
    fn changing_results_are_progress() {
        let history: Vec<DoomCall> = (0..6).map(|page| call(&page.to_string(), Some(page))).collect();
        assert_eq!(check(&NoProgressConfig::default(), &history), None);
    }

    #[test]
    fn repeated_calls_are_left_to_the_other_detectors() {
        let history = vec![call("a", Some(1)), call("b", Some(1)), call("a", Some(1)), call("b", Some(1))];
        assert_eq!(check(&NoProgressConfig::default(), &history), None);
    }

    #[test]
    fn acknowledgements_without_a_hash_break_the_window() {
        let history = vec![call("a", Some(1)), call("b", Some(1)), call("c", None), call("d", Some(1))];
        assert_eq!(check(&NoProgressConfig { window: 2 }, &history[..3]), None);
        assert_eq!(check(&NoProgressConfig::default(), &history), None);
    }
}
