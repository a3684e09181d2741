//! A plug-in's edit checked against the view it was sent and turned into
//! the loop's [`Edit`], with the layer the built-in strategies give it: a
//! mask is Layer 0 and a summary Layer 3 when planned, both Layer 4 when
//! reactive; collapse and memory are Layers 1 and 2. A plug-in cannot name
//! a message that does not exist or cut a tool call from its results.

use std::ops::Range;

use super::protocol::PluginEdit;
use crate::context::{Edit, StrategyContext, ViewItem};
use crate::message::Message;

/// `edit` as the loop's, or what is wrong with it.
pub fn checked(edit: PluginEdit, context: &StrategyContext<'_>, reactive: bool) -> Result<Edit, String> {
    let check = Check { context, boundaries: context.view.boundaries(context.transcript) };
    match edit {
        PluginEdit::Mask { results } => {
            let results = results.into_iter().map(|mask| check.tool_result(mask.id).map(|id| (id, mask.placeholder))).collect::<Result<_, _>>()?;
            Ok(Edit::Mask { layer: if reactive { 4 } else { 0 }, results })
        }
        PluginEdit::Collapse { rounds } => {
            let rounds: Vec<Range<usize>> = rounds.into_iter().map(|round| check.range(round)).collect::<Result<_, _>>()?;
            if let Some(pair) = rounds.windows(2).find(|pair| pair[1].start < pair[0].end) {
                return Err(format!("collapse rounds {:?} and {:?} overlap or are out of order", pair[0], pair[1]));
            }
            Ok(Edit::Collapse { rounds })
        }
        PluginEdit::Memory { range } => Ok(Edit::Memory { range: check.range(range)? }),
        PluginEdit::Summarize { range, keep_users } => {
            let range = check.range(range)?;
            for &id in &keep_users {
                check.user_in(id, &range)?;
            }
            Ok(Edit::Summarize { layer: if reactive { 4 } else { 3 }, range, keep_users })
        }
    }
}

/// What an edit is checked against.
struct Check<'c, 'a> {
    context: &'c StrategyContext<'a>,
    /// View positions a range may start or end at (and the view's end).
    boundaries: Vec<usize>,
}

impl Check<'_, '_> {
    /// `id` if it is a tool result the view shows.
    fn tool_result(&self, id: usize) -> Result<usize, String> {
        let transcript = self.context.transcript;
        match transcript.get(id) {
            None => Err(format!("mask names message {id}, which does not exist (the transcript has {})", transcript.len())),
            Some(Message::ToolResult { .. }) if self.context.view.shows(id) => Ok(id),
            Some(Message::ToolResult { .. }) => Err(format!("mask names message {id}, which the view no longer shows")),
            Some(_) => Err(format!("mask names message {id}, which is not a tool result")),
        }
    }

    /// `[start, end)` as a non-empty view range between boundaries.
    fn range(&self, [start, end]: [usize; 2]) -> Result<Range<usize>, String> {
        let len = self.context.view.items().len();
        if start >= end || end > len {
            return Err(format!("range [{start}, {end}) is not a non-empty range of the view's {len} items"));
        }
        let cut = |at: usize| at == len || self.boundaries.binary_search(&at).is_ok();
        match [start, end].into_iter().find(|&at| !cut(at)) {
            Some(at) => Err(format!("range [{start}, {end}) cuts the view at item {at}, between a tool call and its results")),
            None => Ok(start..end),
        }
    }

    /// Whether `id` is a user message shown within view `range`.
    fn user_in(&self, id: usize, range: &Range<usize>) -> Result<(), String> {
        let shown = self.context.view.items()[range.clone()].contains(&ViewItem::Message(id));
        match self.context.transcript.get(id) {
            Some(Message::User { .. }) if shown => Ok(()),
            _ => Err(format!("keep_users names message {id}, which is not a user message of the range [{}, {})", range.start, range.end)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ContextView;
    use crate::context::plugin::protocol::MaskLine;
    use reloop_wire::ToolCall;

    fn transcript() -> Vec<Message> {
        let call = ToolCall { id: "c1".into(), name: "read".into(), arguments: "{}".into() };
        vec![
            Message::user("task"),
            Message::assistant(String::new(), vec![call]),
            Message::ToolResult { call_id: "c1".into(), tool_name: "read".into(), content: "a\nb".into(), is_error: false },
            Message::assistant("done", vec![]),
        ]
    }

    fn with_context<T>(reactive: bool, edit: PluginEdit, then: impl FnOnce(Result<Edit, String>) -> T) -> T {
        let transcript = transcript();
        let mut view = ContextView::new();
        view.sync(&transcript);
        let context = StrategyContext { transcript: &transcript, view: &view, estimated_tokens: 0, window: 1_000, max_output_tokens: 10, step: 2 };
        then(checked(edit, &context, reactive))
    }

    fn mask(id: usize) -> PluginEdit {
        PluginEdit::Mask { results: vec![MaskLine { id, placeholder: "[gone]".into() }] }
    }

    #[test]
    fn a_valid_edit_gets_the_builtin_layer() {
        with_context(false, mask(2), |edit| assert_eq!(edit, Ok(Edit::Mask { layer: 0, results: vec![(2, "[gone]".into())] })));
        with_context(true, mask(2), |edit| assert_eq!(edit.unwrap().layer(), 4));
        let summary = PluginEdit::Summarize { range: [0, 3], keep_users: vec![0] };
        with_context(false, summary, |edit| assert_eq!(edit, Ok(Edit::Summarize { layer: 3, range: 0..3, keep_users: vec![0] })));
    }

    #[test]
    fn an_edit_of_what_does_not_exist_is_refused_with_the_reason() {
        with_context(false, mask(9), |edit| assert_eq!(edit.unwrap_err(), "mask names message 9, which does not exist (the transcript has 4)"));
        with_context(false, mask(1), |edit| assert_eq!(edit.unwrap_err(), "mask names message 1, which is not a tool result"));
        let past_the_end = PluginEdit::Memory { range: [1, 7] };
        with_context(false, past_the_end, |edit| assert_eq!(edit.unwrap_err(), "range [1, 7) is not a non-empty range of the view's 4 items"));
        let splitting = PluginEdit::Memory { range: [0, 2] };
        with_context(false, splitting, |edit| assert_eq!(edit.unwrap_err(), "range [0, 2) cuts the view at item 2, between a tool call and its results"));
        let overlapping = PluginEdit::Collapse { rounds: vec![[1, 3], [1, 3]] };
        with_context(false, overlapping, |edit| assert!(edit.unwrap_err().contains("overlap"), "refused"));
        let not_a_user = PluginEdit::Summarize { range: [0, 3], keep_users: vec![1] };
        with_context(false, not_a_user, |edit| assert!(edit.unwrap_err().starts_with("keep_users names message 1"), "refused"));
    }
}
