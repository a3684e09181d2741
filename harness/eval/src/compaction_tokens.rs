//! The report's counts of the view on each side of a compaction, priced with
//! the server's own figures: the requests it logged and the per-message
//! counter it counts them with. Nothing here builds a request, and the loop
//! never calls the server's tokenizer: it reports its own estimates and a
//! [`ViewChange`] per compaction, which this module prices.
//!
//! The edits a loop makes before one request form a chain: the first edits
//! the view as it stood, each next one the view the last one left, and the
//! request sends what the last one left. So:
//!
//! - when the request that follows was logged, the last edit's `tokens_after`
//!   is its server count (`input_tokens`), and every earlier figure follows
//!   by undoing one edit: before = after − added + removed, each item counted
//!   by the session's counter through the same wire conversion;
//! - when none was (the run ended first: a deadline, a failed reactive
//!   compaction), the chain starts from the last request before it, plus the
//!   transcript messages added since, and runs forward;
//! - with neither, the loop's estimates stay.
//!
//! Per-message counts add up to a request's count when every message crosses
//! the wire as it is, which is so for native tool calling; text tool calling
//! merges results into user turns, so there the items are priced as they
//! are before that rendering.

use std::collections::BTreeMap;

use reloop_agent::{CallPurpose, CallRecord, LoopState, Message, TimedEvent, ViewChange, WireFormat};
use reloop_agent::context::ShownItem;
use reloop_mock::{RequestRecord, Session};

/// Puts the server's counts of each compaction's sides in place of the
/// loop's estimates in `events`.
pub(crate) fn price_compactions(events: &mut [TimedEvent], state: &LoopState, log: &[RequestRecord], session: &Session, wire: WireFormat) {
    let pricer = Pricer { state, log, session, wire };
    for (anchor, members) in chains(events, state) {
        let changes: Vec<&ViewChange> = members.iter().filter_map(|&i| events[i].event.view_change()).collect();
        let Some(figures) = pricer.chain(anchor, &changes) else { continue };
        for (&event, (before, after)) in members.iter().zip(figures) {
            events[event].event.set_tokens(before, after);
        }
    }
}

/// The requests around a chain of edits: the context they belong to (0 the
/// run, `1 + i` sub-agent `i`), and the global indices of the last request
/// before them and the first after, summaries aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Anchor {
    context: usize,
    before: Option<usize>,
    after: Option<usize>,
}

/// The compaction events of `events` (by index, in order) grouped by the
/// requests around them.
fn chains(events: &[TimedEvent], state: &LoopState) -> BTreeMap<Anchor, Vec<usize>> {
    let mut calls_of: Vec<Vec<(usize, &CallRecord)>> = vec![Vec::new(); 1 + state.sub_agents.len()];
    for (index, call) in state.calls.iter().enumerate() {
        calls_of[context_index(call)].push((index, call));
    }
    let mut chains: BTreeMap<Anchor, Vec<usize>> = BTreeMap::new();
    for (index, timed) in events.iter().enumerate() {
        let Some(change) = timed.event.view_change() else { continue };
        let context = change.sub_agent.map_or(0, |child| 1 + child);
        let Some(calls) = calls_of.get(context) else { continue };
        let (before, after) = calls.split_at(change.calls_before.min(calls.len()));
        let request = |&(index, call): &(usize, &CallRecord)| (call.purpose != CallPurpose::Compaction).then_some(index);
        let anchor = Anchor { context, before: before.iter().rev().find_map(request), after: after.iter().find_map(request) };
        chains.entry(anchor).or_default().push(index);
    }
    chains
}

/// Which context's transcript `call` was made from: 0 for the run, `1 + i`
/// for sub-agent `i`.
pub(crate) fn context_index(call: &CallRecord) -> usize {
    call.sub_agent.as_ref().map_or(0, |link| 1 + link.child)
}

/// What pricing reads: the run's records, the server's log and counter.
struct Pricer<'a> {
    state: &'a LoopState,
    log: &'a [RequestRecord],
    session: &'a Session,
    wire: WireFormat,
}

impl Pricer<'_> {
    /// `(tokens_before, tokens_after)` of each edit of one chain, in order;
    /// `None` when no request around it was logged.
    fn chain(&self, anchor: Anchor, changes: &[&ViewChange]) -> Option<Vec<(u64, u64)>> {
        let transcript = self.transcript(anchor.context);
        let deltas: Vec<i64> = changes.iter().map(|change| self.delta(transcript, change)).collect();
        if let Some(sent) = anchor.after.and_then(|index| self.log.get(index)) {
            let mut after = signed(sent.input_tokens);
            let mut figures: Vec<(u64, u64)> = deltas
                .iter()
                .rev()
                .map(|delta| {
                    let before = after - delta;
                    let sides = (unsigned(before), unsigned(after));
                    after = before;
                    sides
                })
                .collect();
            figures.reverse();
            return Some(figures);
        }
        let index = anchor.before?;
        let sent = self.log.get(index)?;
        let added_since = transcript.get(self.state.calls[index].transcript_len..changes.first()?.transcript_len)?;
        let mut before = signed(sent.input_tokens) + self.count(added_since.iter());
        Some(
            deltas
                .iter()
                .map(|delta| {
                    let after = before + delta;
                    let sides = (unsigned(before), unsigned(after));
                    before = after;
                    sides
                })
                .collect(),
        )
    }

    /// How many tokens `change` added to the view (negative: took away).
    fn delta(&self, transcript: &[Message], change: &ViewChange) -> i64 {
        let shown = |items: &[ShownItem]| self.count(items.iter().map(|item| item.message(transcript)));
        shown(&change.added) - shown(&change.removed)
    }

    /// The server's count of `messages`, framing included, as they cross the wire.
    fn count<'m>(&self, messages: impl Iterator<Item = &'m Message>) -> i64 {
        let counter = self.session.counter();
        messages.map(|message| counter.count_messages(self.wire, std::slice::from_ref(message))[0]).map(signed).sum()
    }

    /// The transcript of context `context`.
    fn transcript(&self, context: usize) -> &[Message] {
        match context.checked_sub(1) {
            None => &self.state.transcript,
            Some(child) => &self.state.sub_agents[child].transcript,
        }
    }
}

fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn unsigned(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}
