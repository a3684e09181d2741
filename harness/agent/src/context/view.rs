//! The context view: what of the transcript the provider sees. The
//! transcript only grows; compaction edits the view, so the original stays
//! available (for later layers, for reports pricing the uncompacted
//! counterfactual).
//!
//! The view is a list of items, each a transcript message (shown whole or,
//! for a masked tool result, as a one-line placeholder) or a synthetic note
//! (a collapsed tool round, a summary). Edits keep tool calls and their
//! results together, so every rendered view is a valid conversation.

use std::collections::HashMap;
use std::ops::Range;

use crate::message::Message;

/// One entry of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewItem {
    /// The transcript message at this index.
    Message(usize),
    /// A synthetic user note standing for messages no longer shown.
    Note(String),
}

/// What the provider sees, as edits over the transcript.
#[derive(Debug, Clone, Default)]
pub struct ContextView {
    items: Vec<ViewItem>,
    /// Tool results shown as a placeholder, by transcript index.
    masked: HashMap<usize, String>,
    /// Transcript messages already added to the view.
    synced: usize,
}

impl ContextView {
    /// An empty view.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the transcript messages appended since the last call.
    pub fn sync(&mut self, transcript: &[Message]) {
        self.items.extend((self.synced..transcript.len()).map(ViewItem::Message));
        self.synced = transcript.len();
    }

    /// The items, in order.
    pub fn items(&self) -> &[ViewItem] {
        &self.items
    }

    /// Shows the tool result at `index` as `placeholder`; `false` if it
    /// already was masked.
    pub fn mask(&mut self, index: usize, placeholder: impl Into<String>) -> bool {
        self.masked.insert(index, placeholder.into()).is_none()
    }

    /// Whether the tool result at `index` is masked.
    pub fn is_masked(&self, index: usize) -> bool {
        self.masked.contains_key(&index)
    }

    /// Replaces the items in `range` by `items`.
    pub fn replace(&mut self, range: Range<usize>, items: Vec<ViewItem>) {
        self.items.splice(range, items);
    }

    /// Positions where the view may be cut without separating a tool call
    /// from its results: before every user or assistant message and every
    /// note, never before a tool result.
    pub fn boundaries(&self, transcript: &[Message]) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&at| match &self.items[at] {
                ViewItem::Message(index) => !matches!(transcript[*index], Message::ToolResult { .. }),
                ViewItem::Note(_) => true,
            })
            .collect()
    }

    /// Transcript indices of the tool results shown in full, oldest first.
    pub fn live_tool_results(&self, transcript: &[Message]) -> Vec<usize> {
        self.items
            .iter()
            .filter_map(|item| match item {
                ViewItem::Message(index)
                    if matches!(transcript[*index], Message::ToolResult { .. }) && !self.is_masked(*index) =>
                {
                    Some(*index)
                }
                _ => None,
            })
            .collect()
    }

    /// The view as messages.
    pub fn render(&self, transcript: &[Message]) -> Vec<Message> {
        self.render_range(transcript, 0..self.items.len())
    }

    /// Items `range` as messages.
    pub fn render_range(&self, transcript: &[Message], range: Range<usize>) -> Vec<Message> {
        self.items[range]
            .iter()
            .map(|item| match item {
                ViewItem::Note(text) => Message::user(text.clone()),
                ViewItem::Message(index) => match (&transcript[*index], self.masked.get(index)) {
                    (Message::ToolResult { call_id, tool_name, is_error, .. }, Some(placeholder)) => Message::ToolResult {
                        call_id: call_id.clone(),
                        tool_name: tool_name.clone(),
                        content: placeholder.clone(),
                        is_error: *is_error,
                    },
                    (message, _) => message.clone(),
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    fn transcript() -> Vec<Message> {
        let call = ToolCall { id: "c1".into(), name: "read".into(), arguments: "{}".into() };
        vec![
            Message::user("task"),
            Message::Assistant { text: String::new(), tool_calls: vec![call] },
            Message::ToolResult { call_id: "c1".into(), tool_name: "read".into(), content: "long output".into(), is_error: false },
            Message::Assistant { text: "done".into(), tool_calls: vec![] },
        ]
    }

    #[test]
    fn masks_and_notes_render_in_place() {
        let t = transcript();
        let mut view = ContextView::new();
        view.sync(&t);
        assert_eq!(view.render(&t), t);
        assert!(view.mask(2, "[cleared]"));
        assert!(!view.mask(2, "[cleared]"));
        assert_eq!(view.live_tool_results(&t), Vec::<usize>::new());
        view.replace(1..3, vec![ViewItem::Note("note".into())]);
        let rendered = view.render(&t);
        assert_eq!(rendered.len(), 3);
        assert_eq!(rendered[1], Message::user("note"));
    }

    #[test]
    fn boundaries_never_split_a_tool_round() {
        let t = transcript();
        let mut view = ContextView::new();
        view.sync(&t);
        assert_eq!(view.boundaries(&t), vec![0, 1, 3]);
    }
}
