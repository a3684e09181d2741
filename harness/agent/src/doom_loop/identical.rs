//! OpenCode's rule: the same tool with identical arguments `threshold` times
//! in a row; unlike OpenCode, a call whose result changed (a poll that moves
//! on) ends the run.

use super::{DoomCall, DoomLoop, DoomLoopKind};

/// Checks whether the newest call of `history` completes a run of
/// `threshold` identical calls. Fires at `threshold` and again each further
/// `threshold` repeats, so a warned model that keeps going is warned again.
pub fn check(threshold: usize, history: &[DoomCall]) -> Option<DoomLoop> {
    let run = 1 + history.windows(2).rev().take_while(|pair| pair[1].repeats(&pair[0])).count();
    DoomLoop::of_run(DoomLoopKind::IdenticalCalls, history, run).filter(|_| run.is_multiple_of(threshold.max(2)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doom_loop::tests::calls;

    #[test]
    fn fires_on_the_third_identical_call_and_every_third_after() {
        let history = calls(&["a", "a", "a", "a", "a", "a"]);
        let fired: Vec<usize> = (1..=history.len()).filter(|&n| check(3, &history[..n]).is_some()).collect();
        assert_eq!(fired, vec![3, 6]);
        let hit = check(3, &history[..3]).expect("third call");
        assert_eq!((hit.repeats, hit.started_at), (3, 0));
    }

    #[test]
    fn a_poll_whose_answer_changes_is_not_a_loop() {
        let mut history = calls(&["poll", "poll", "poll"]);
        history[0].result_hash = Some(1);
        history[1].result_hash = Some(2);
        assert_eq!(check(3, &history), None);
        history[1].result_hash = Some(1);
        assert!(check(3, &history).is_some());
    }

    #[test]
    fn an_interruption_resets_the_count() {
        let history = calls(&["a", "a", "b", "a"]);
        assert_eq!(check(3, &history), None);
    }
}
