//! The view cut into rounds: the pinned first item (the task), then
//! segments each starting at a safe cut point (a user message, a note, or an
//! assistant message with its tool results following it).

use std::ops::Range;

use super::view::{ContextView, ViewItem};
use crate::message::Message;

/// The rounds of a view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rounds {
    /// Item ranges of the rounds after the pinned first item, in order.
    pub ranges: Vec<Range<usize>>,
    /// Whether each round is a tool round: an assistant message that called tools.
    pub is_tool_round: Vec<bool>,
}

impl Rounds {
    /// The rounds of `view`.
    pub fn of(view: &ContextView, transcript: &[Message]) -> Self {
        let len = view.items().len();
        let starts: Vec<usize> = view.boundaries(transcript).into_iter().filter(|&b| b > 0).collect();
        let ranges: Vec<Range<usize>> = starts.iter().enumerate().map(|(i, &start)| start..starts.get(i + 1).copied().unwrap_or(len)).collect();
        let is_tool_round = ranges
            .iter()
            .map(|range| match &view.items()[range.start] {
                ViewItem::Message(index) => {
                    matches!(&transcript[*index], Message::Assistant { tool_calls, .. } if !tool_calls.is_empty())
                }
                ViewItem::Note(_) => false,
            })
            .collect();
        Self { ranges, is_tool_round }
    }

    /// The item range from after the pinned task up to the start of the
    /// `keep` most recent rounds; `None` when there is nothing before them.
    pub fn older_than(&self, keep: usize) -> Option<Range<usize>> {
        let cut = self.ranges.len().checked_sub(keep).filter(|&c| c > 0)?;
        Some(self.ranges[0].start..self.ranges[cut].start)
    }

    /// The tool rounds among all but the `keep` most recent rounds.
    pub fn old_tool_rounds(&self, keep: usize) -> Vec<Range<usize>> {
        let old = self.ranges.len().saturating_sub(keep);
        (0..old).filter(|&i| self.is_tool_round[i]).map(|i| self.ranges[i].clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    fn round(id: &str) -> [Message; 2] {
        [
            Message::assistant(String::new(), vec![ToolCall { id: id.into(), name: "t".into(), arguments: "{}".into() }]),
            Message::ToolResult { call_id: id.into(), tool_name: "t".into(), content: "x".into(), is_error: false },
        ]
    }

    #[test]
    fn rounds_keep_calls_with_their_results() {
        let mut transcript = vec![Message::user("task")];
        transcript.extend(round("a"));
        transcript.extend(round("b"));
        transcript.push(Message::user("steer"));
        transcript.extend(round("c"));
        let mut view = ContextView::new();
        view.sync(&transcript);
        let rounds = Rounds::of(&view, &transcript);
        assert_eq!(rounds.ranges, vec![1..3, 3..5, 5..6, 6..8]);
        assert_eq!(rounds.is_tool_round, vec![true, true, false, true]);
        assert_eq!(rounds.older_than(2), Some(1..5));
        assert_eq!(rounds.older_than(4), None);
        assert_eq!(rounds.old_tool_rounds(2), vec![1..3, 3..5]);
    }
}
