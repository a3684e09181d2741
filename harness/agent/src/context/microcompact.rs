//! Layer 0 microcompaction (Roku's `microcompact_old_tool_results`): every
//! tool result older than the newest `retain` becomes a short placeholder in
//! the view sent to the provider. The transcript itself keeps the original.
//!
//! The work per step is proportional to the results newly cleared, not to the
//! history: cleared results always form a prefix of all results, so one
//! boundary index describes the whole cleared set. The view shows them
//! masked ([`crate::context::ContextView`]).

/// The text that replaces a cleared tool result (Roku's constant).
pub const CLEARED_PLACEHOLDER: &str = "[Old tool result content cleared]";

/// How many of the newest tool results stay intact (Roku's
/// `MICROCOMPACT_RETAIN_RECENT`).
pub const RETAIN_RECENT: usize = 3;

/// Tracks which tool results the view shows cleared.
#[derive(Debug, Clone)]
pub struct Microcompactor {
    retain: usize,
    /// Transcript positions of all tool results, in order.
    results: Vec<usize>,
    /// How many of `results` are cleared.
    cleared: usize,
}

/// What one microcompaction pass cleared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MicrocompactPass {
    /// Transcript positions newly cleared by this pass.
    pub newly_cleared: Vec<usize>,
}

impl Microcompactor {
    /// Keeps the newest `retain` results.
    pub fn new(retain: usize) -> Self {
        Self { retain, results: Vec::new(), cleared: 0 }
    }

    /// Registers a tool result appended at transcript position `index`.
    pub fn note_tool_result(&mut self, index: usize) {
        debug_assert!(self.results.last().is_none_or(|last| *last < index));
        self.results.push(index);
    }

    /// Clears everything older than the newest `retain` results.
    pub fn run(&mut self) -> MicrocompactPass {
        let target = self.results.len().saturating_sub(self.retain);
        let newly_cleared = self.results[self.cleared.min(target)..target].to_vec();
        self.cleared = self.cleared.max(target);
        MicrocompactPass { newly_cleared }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_three() {
        let mut m = Microcompactor::new(3);
        for i in [1, 3, 5, 7, 9] {
            m.note_tool_result(i);
        }
        assert_eq!(m.run().newly_cleared, vec![1, 3]);
        assert_eq!(m.run().newly_cleared, Vec::<usize>::new(), "nothing cleared twice");
        m.note_tool_result(11);
        assert_eq!(m.run().newly_cleared, vec![5]);
    }

    #[test]
    fn nothing_is_cleared_below_the_retain_count() {
        let mut m = Microcompactor::new(3);
        m.note_tool_result(0);
        m.note_tool_result(1);
        assert!(m.run().newly_cleared.is_empty());
    }
}
