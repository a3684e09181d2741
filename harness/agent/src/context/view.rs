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
//! uncompacted counterfactual. The same way, the view keeps each item's
//! content hash and their chained prefix hashes, so the cache-break detector
//! tells a grown history from a rewritten one in one lookup.

use std::collections::HashMap;
use std::ops::Range;

use crate::cache_break::{chain_hash, message_hash};
use crate::estimate::{framed_message_tokens, message_text_tokens};
use crate::message::Message;

/// One entry of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewItem {
    /// The transcript message at this index.
    Message(usize),
    /// A synthetic user note standing for messages no longer shown.
    Note(String),
}

/// An item as the provider sees it, for reports that price a compaction
/// with the server's counts: a transcript message shown whole is named by
/// its index (the transcript has its text), anything rewritten (a masked
/// result, a note) is carried as the message shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShownItem {
    /// The transcript message at this index, shown whole.
    Transcript(usize),
    /// A message the view shows in place of transcript messages.
    Rewritten(Message),
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

/// Per-item estimates and their running sums (unrounded text tokens,
/// framing excluded, as [`message_text_tokens`] gives them), and per-item
/// content hashes and their chained prefixes. The view's sum is kept as
/// prefix sums added in item order, exactly as a fresh scan adds them, so
/// the rounded estimate never differs from a rescan; an edit recomputes the
/// prefix sums and hashes from the first item it touched (Layer 0 edits the
/// newest few items only).
#[derive(Debug, Clone, Default)]
struct ViewFigures {
    /// Each transcript message unmasked: its estimate and its hash.
    message: Vec<(f64, u64)>,
    /// Each item as shown (placeholder when masked), in view order.
    item: Vec<f64>,
    /// `prefix[i]`: the sum of `item[..=i]`, added in order.
    prefix: Vec<f64>,
    /// Each item's [`message_hash`] as shown, in view order.
    item_hash: Vec<u64>,
    /// `prefix_hash[i]`: the chained hash of `item_hash[..=i]`.
    prefix_hash: Vec<u64>,
    /// Each transcript message's position in the view, if shown.
    position: Vec<Option<usize>>,
    /// Sum over the whole transcript, unmasked.
    transcript_total: f64,
}

impl ViewFigures {
    /// Recomputes the prefix sums and hashes from item `from` on.
    fn resum_from(&mut self, from: usize) {
        self.prefix.truncate(from);
        self.prefix_hash.truncate(from);
        let before = from.checked_sub(1);
        let mut total = before.map_or(0.0, |last| self.prefix[last]);
        let mut chained = before.map_or(0, |last| self.prefix_hash[last]);
        for (cost, hash) in self.item[from..].iter().zip(&self.item_hash[from..]) {
            total += cost;
            chained = chain_hash(chained, *hash);
            self.prefix.push(total);
            self.prefix_hash.push(chained);
        }
    }
}

impl ContextView {
    /// An empty view.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the transcript messages appended since the last call, estimating
    /// each once.
    pub fn sync(&mut self, transcript: &[Message]) {
        let figures = &mut self.figures;
        for message in &transcript[self.synced..] {
            let tokens = message_text_tokens(message);
            let hash = message_hash(message);
            figures.message.push((tokens, hash));
            figures.position.push(Some(self.items.len()));
            figures.item.push(tokens);
            figures.item_hash.push(hash);
            figures.transcript_total += tokens;
            self.items.push(ViewItem::Message(self.synced));
            self.synced += 1;
        }
        figures.resum_from(figures.prefix.len());
    }

    /// The items, in order.
    pub fn items(&self) -> &[ViewItem] {
        &self.items
    }

    /// Shows the tool result at `index` as `placeholder`; `false` if it
    /// already was masked.
    pub fn mask(&mut self, transcript: &[Message], index: usize, placeholder: &str) -> bool {
        self.mask_all(transcript, &[(index, placeholder.to_owned())]) == 1
    }

    /// Shows each tool result `(index, placeholder)` masked; returns how
    /// many were not masked already. The sums are redone once, from the
    /// first item touched.
    pub fn mask_all(&mut self, transcript: &[Message], results: &[(usize, String)]) -> usize {
        let mut first_touched = self.items.len();
        let mut newly = 0;
        for (index, placeholder) in results {
            if self.masked.contains_key(index) {
                continue;
            }
            newly += 1;
            self.masked.insert(*index, placeholder.clone());
            if let Some(position) = self.figures.position[*index] {
                (self.figures.item[position], self.figures.item_hash[position]) = self.shown_figures(&ViewItem::Message(*index), transcript);
                first_touched = first_touched.min(position);
            }
        }
        self.figures.resum_from(first_touched);
        newly
    }

    /// Whether the transcript message at `index` is in the view.
    pub fn shows(&self, index: usize) -> bool {
        self.figures.position.get(index).is_some_and(Option::is_some)
    }

    /// `item` as the provider would see it in this view.
    pub fn shown(&self, item: &ViewItem, transcript: &[Message]) -> ShownItem {
        match item {
            ViewItem::Note(text) => ShownItem::Rewritten(Message::user(text.clone())),
            ViewItem::Message(index) => match self.masked.get(index).and_then(|p| masked_result(&transcript[*index], p)) {
                Some(masked) => ShownItem::Rewritten(masked),
                None => ShownItem::Transcript(*index),
            },
        }
    }

    /// Whether the tool result at `index` is masked.
    pub fn is_masked(&self, index: usize) -> bool {
        self.masked.contains_key(&index)
    }

    /// Replaces the items in `range` by `items`.
    pub fn replace(&mut self, range: Range<usize>, items: Vec<ViewItem>, transcript: &[Message]) {
        let (costs, hashes): (Vec<f64>, Vec<u64>) = items.iter().map(|item| self.shown_figures(item, transcript)).unzip();
        let start = range.start;
        self.figures.item.splice(range.clone(), costs);
        self.figures.item_hash.splice(range.clone(), hashes);
        for removed in self.items.splice(range, items) {
            if let ViewItem::Message(index) = removed {
                self.figures.position[index] = None;
            }
        }
        for (position, item) in self.items.iter().enumerate().skip(start) {
            if let ViewItem::Message(index) = item {
                self.figures.position[*index] = Some(position);
            }
        }
        self.figures.resum_from(start);
    }

    /// The text tokens and the [`message_hash`] of `item` as the view
    /// would show it.
    fn shown_figures(&self, item: &ViewItem, transcript: &[Message]) -> (f64, u64) {
        match self.shown(item, transcript) {
            ShownItem::Transcript(index) => self.figures.message[index],
            ShownItem::Rewritten(message) => (message_text_tokens(&message), message_hash(&message)),
        }
    }

    /// The estimated text tokens of everything the view shows, unrounded
    /// and without framing (see [`crate::estimate::prompt_tokens`]).
    pub fn text_tokens(&self) -> f64 {
        self.figures.prefix.last().copied().unwrap_or(0.0)
    }

    /// The [`crate::cache_break::prefix_hashes`] of the rendered view, kept
    /// up to date by every edit: what the cache-break detector compares.
    pub fn prefix_hashes(&self) -> &[u64] {
        &self.figures.prefix_hash
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
        framed_message_tokens(self.figures.item[position])
    }

    /// The estimate of transcript message `index` shown whole, framing
    /// included (kept from when it was synced).
    pub fn message_tokens(&self, index: usize) -> u64 {
        framed_message_tokens(self.figures.message[index].0)
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
                ViewItem::Message(index) if matches!(transcript[*index], Message::ToolResult { .. }) && !self.is_masked(*index) => Some(*index),
                _ => None,
            })
            .collect()
    }

    /// The view as messages.
    pub fn render(&self, transcript: &[Message]) -> Vec<Message> {
        self.render_range(transcript, 0..self.items.len())
    }

    /// [`Self::render`] into `previous`, an earlier rendering given back:
    /// the leading messages it holds that the view still shows (compared,
    /// not assumed) are kept, and only the rest is copied from the
    /// transcript. Each step sends the whole history, and copying it anew
    /// each time was the loop's one cost that grew with it.
    pub fn render_reusing(&self, transcript: &[Message], mut previous: Vec<Message>) -> Vec<Message> {
        let kept = self
            .items
            .iter()
            .zip(&previous)
            .take_while(|(item, rendered)| match self.shown(item, transcript) {
                ShownItem::Transcript(index) => transcript[index] == **rendered,
                ShownItem::Rewritten(message) => message == **rendered,
            })
            .count();
        previous.truncate(kept);
        previous.extend(self.render_range(transcript, kept..self.items.len()));
        previous
    }

    /// Items `range` as messages.
    pub fn render_range(&self, transcript: &[Message], range: Range<usize>) -> Vec<Message> {
        self.items[range]
            .iter()
            .map(|item| match self.shown(item, transcript) {
                ShownItem::Transcript(index) => transcript[index].clone(),
                ShownItem::Rewritten(message) => message,
            })
            .collect()
    }
}

/// A tool result shown as `placeholder`; `None` for other messages, which
/// are never masked.
fn masked_result(message: &Message, placeholder: &str) -> Option<Message> {
    match message {
        Message::ToolResult { call_id, tool_name, is_error, .. } => {
            Some(Message::ToolResult { call_id: call_id.clone(), tool_name: tool_name.clone(), content: placeholder.into(), is_error: *is_error })
        }
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
            Message::assistant(String::new(), vec![call]),
            Message::ToolResult { call_id: "c1".into(), tool_name: "read".into(), content: "long output".into(), is_error: false },
            Message::assistant("done", vec![]),
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
        view.replace(1..3, vec![ViewItem::Note("note".into())], &t);
        let rendered = view.render(&t);
        assert_eq!(rendered.len(), 3);
        assert_eq!(rendered[1], Message::user("note"));
    }

    /// Rendering into the previous step's messages gives what a fresh
    /// rendering gives, after every kind of edit and from any earlier
    /// rendering, even one of another conversation.
    #[test]
    fn a_reused_rendering_equals_a_fresh_one() {
        let t = transcript();
        let mut view = ContextView::new();
        let mut previous = vec![Message::user("another conversation"), t[1].clone()];
        let mut check = |view: &ContextView| {
            previous = view.render_reusing(&t, std::mem::take(&mut previous));
            assert_eq!(previous, view.render(&t));
        };
        view.sync(&t[..2]);
        check(&view);
        view.sync(&t);
        check(&view);
        view.mask(&t, 2, "[cleared]");
        check(&view);
        view.replace(1..3, vec![ViewItem::Note("note".into())], &t);
        check(&view);
        view.replace(0..1, Vec::new(), &t);
        check(&view);
    }

    #[test]
    fn boundaries_never_split_a_tool_round() {
        let t = transcript();
        let mut view = ContextView::new();
        view.sync(&t);
        assert_eq!(view.boundaries(&t), vec![0, 1, 3]);
    }

    /// The running sums and prefix hashes equal a fresh scan of the
    /// rendered view after every kind of edit.
    #[test]
    fn running_sums_match_a_full_rescan() {
        use crate::cache_break::prefix_hashes;
        use crate::estimate::{estimate_prompt, prompt_tokens};
        let t = transcript();
        let mut view = ContextView::new();
        let rescan = |view: &ContextView| {
            assert_eq!(view.prefix_hashes(), prefix_hashes(&view.render(&t)), "hashes kept as a rescan gives them");
            estimate_prompt("", &view.render(&t), "")
        };
        let running = |view: &ContextView| prompt_tokens(view.items().len(), view.text_tokens());
        let exact = |view: &ContextView| {
            let rendered: f64 = view.render(&t).iter().map(message_text_tokens).sum();
            assert_eq!(view.text_tokens().to_bits(), rendered.to_bits(), "the same additions in the same order");
        };
        view.sync(&t[..2]);
        assert_eq!(running(&view), rescan(&view));
        view.sync(&t);
        assert_eq!(running(&view), rescan(&view));
        let full = view.text_tokens();
        view.mask(&t, 2, "-");
        assert_eq!(running(&view), rescan(&view));
        exact(&view);
        assert!(view.text_tokens() < full);
        view.replace(1..3, vec![ViewItem::Note("a collapsed round".into())], &t);
        assert_eq!(running(&view), rescan(&view));
        view.replace(0..2, vec![ViewItem::Message(0), ViewItem::Note("summary".into())], &t);
        assert_eq!(running(&view), rescan(&view));
        exact(&view);
        assert_eq!(view.item_tokens(1), crate::estimate::estimate_message(&Message::user("summary")));
        assert!((view.uncompacted_text_tokens() - full).abs() < 1e-9, "the counterfactual ignores edits");
    }
}
