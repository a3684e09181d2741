//! The context view: what of the transcript the provider sees. The
//! transcript only grows; compaction edits the view, so the original stays
//! available (for later layers, for reports pricing the uncompacted
//! counterfactual).
//!
//! The view is a list of items, each a transcript message (shown whole or,
//! for a masked tool result, as a one-line placeholder) or a synthetic note
//! (a collapsed tool round, a summary). Edits keep tool calls and their
//! results together, so every rendered view is a valid conversation.
//!
//! The view also keeps the loop's token estimate of everything it shows:
//! each message is estimated once, when it enters the view, and the view's
//! total is a running sum that edits adjust. Only what an edit rewrites is
//! estimated again, so a step's estimate costs the same at 100 messages as
//! at 10,000. A second running sum over the whole transcript prices the
//! uncompacted counterfactual.

use std::collections::HashMap;
use std::ops::Range;

use crate::estimate::{framed_message_tokens, message_text_tokens, text_tokens};
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
    /// The running estimates.
    figures: ViewFigures,
}

/// Per-message estimates and their running sums (unrounded text tokens,
/// framing excluded, as [`message_text_tokens`] gives them).
#[derive(Debug, Clone, Default)]
struct ViewFigures {
    /// Each transcript message as shown (placeholder when masked).
    shown: Vec<f64>,
    /// Whether each transcript message is an item of the view.
    in_view: Vec<bool>,
    /// Sum over the view's items.
    view_total: f64,
    /// Sum over the whole transcript, unmasked.
    transcript_total: f64,
}

impl ContextView {
    /// An empty view.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the transcript messages appended since the last call, estimating
    /// each once.
    pub fn sync(&mut self, transcript: &[Message]) {
        for message in &transcript[self.synced..] {
            let tokens = message_text_tokens(message);
            self.figures.shown.push(tokens);
            self.figures.in_view.push(true);
            self.figures.view_total += tokens;
            self.figures.transcript_total += tokens;
        }
        self.items.extend((self.synced..transcript.len()).map(ViewItem::Message));
        self.synced = transcript.len();
    }

    /// The items, in order.
    pub fn items(&self) -> &[ViewItem] {
        &self.items
    }

    /// Shows the tool result at `index` as `placeholder`; `false` if it
    /// already was masked.
    pub fn mask(&mut self, transcript: &[Message], index: usize, placeholder: &str) -> bool {
        if self.masked.contains_key(&index) {
            return false;
        }
        let tokens = masked_result(&transcript[index], placeholder).map_or(0.0, |m| message_text_tokens(&m));
        let figures = &mut self.figures;
        if figures.in_view[index] {
            figures.view_total += tokens - figures.shown[index];
        }
        figures.shown[index] = tokens;
        self.masked.insert(index, placeholder.to_owned());
        true
    }

    /// Whether the tool result at `index` is masked.
    pub fn is_masked(&self, index: usize) -> bool {
        self.masked.contains_key(&index)
    }

    /// Replaces the items in `range` by `items`.
    pub fn replace(&mut self, range: Range<usize>, items: Vec<ViewItem>) {
        for item in &items {
            let tokens = self.add_item(item);
            self.figures.view_total += tokens;
        }
        for removed in self.items.splice(range, items).collect::<Vec<_>>() {
            let tokens = match &removed {
                ViewItem::Message(index) => {
                    self.figures.in_view[*index] = false;
                    self.figures.shown[*index]
                }
                ViewItem::Note(text) => text_tokens(text),
            };
            self.figures.view_total -= tokens;
        }
        // A message both removed and re-added (a kept user message) is shown.
        for item in &self.items {
            if let ViewItem::Message(index) = item {
                self.figures.in_view[*index] = true;
            }
        }
    }

    fn add_item(&mut self, item: &ViewItem) -> f64 {
        match item {
            ViewItem::Message(index) => self.figures.shown[*index],
            ViewItem::Note(text) => text_tokens(text),
        }
    }

    /// The estimated text tokens of everything the view shows, unrounded
    /// and without framing (see [`crate::estimate::prompt_tokens`]).
    pub fn text_tokens(&self) -> f64 {
        self.figures.view_total
    }

    /// The same over the whole transcript synced so far, nothing masked or
    /// replaced: the uncompacted counterfactual.
    pub fn uncompacted_text_tokens(&self) -> f64 {
        self.figures.transcript_total
    }

    /// Transcript messages synced so far.
    pub fn synced(&self) -> usize {
        self.synced
    }

    /// The estimate of item `position`, framing included.
    pub fn item_tokens(&self, position: usize) -> u64 {
        framed_message_tokens(match &self.items[position] {
            ViewItem::Message(index) => self.figures.shown[*index],
            ViewItem::Note(text) => text_tokens(text),
        })
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
                ViewItem::Message(index) => match self.masked.get(index).and_then(|p| masked_result(&transcript[*index], p)) {
                    Some(masked) => masked,
                    None => transcript[*index].clone(),
                },
            })
            .collect()
    }
}

/// A tool result shown as `placeholder`; `None` for other messages, which
/// are never masked.
fn masked_result(message: &Message, placeholder: &str) -> Option<Message> {
    match message {
        Message::ToolResult { call_id, tool_name, is_error, .. } => Some(Message::ToolResult {
            call_id: call_id.clone(),
            tool_name: tool_name.clone(),
            content: placeholder.to_owned(),
            is_error: *is_error,
        }),
        _ => None,
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
        assert!(view.mask(&t, 2, "[cleared]"));
        assert!(!view.mask(&t, 2, "[cleared]"));
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

    /// The running sums equal a fresh estimate of the rendered view after
    /// every kind of edit.
    #[test]
    fn running_sums_match_a_full_rescan() {
        use crate::estimate::{estimate_prompt, prompt_tokens};
        let t = transcript();
        let mut view = ContextView::new();
        let rescan = |view: &ContextView| estimate_prompt("", &view.render(&t), "");
        let running = |view: &ContextView| prompt_tokens(view.items().len(), view.text_tokens());
        view.sync(&t[..2]);
        assert_eq!(running(&view), rescan(&view));
        view.sync(&t);
        assert_eq!(running(&view), rescan(&view));
        let full = view.text_tokens();
        view.mask(&t, 2, "-");
        assert_eq!(running(&view), rescan(&view));
        assert!(view.text_tokens() < full);
        view.replace(1..3, vec![ViewItem::Note("a collapsed round".into())]);
        assert_eq!(running(&view), rescan(&view));
        view.replace(0..2, vec![ViewItem::Message(0), ViewItem::Note("summary".into())]);
        assert_eq!(running(&view), rescan(&view));
        assert_eq!(view.item_tokens(1), crate::estimate::estimate_message(&Message::user("summary")));
        assert!((view.uncompacted_text_tokens() - full).abs() < 1e-9, "the counterfactual ignores edits");
    }
}
