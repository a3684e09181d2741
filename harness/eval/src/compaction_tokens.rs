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

use reloop_agent::context::ShownItem;
use reloop_agent::{CallPurpose, CallRecord, LoopState, Message, TimedEvent, ViewChange, WireFormat};
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
pub(crate) struct Anchor {
    pub(crate) context: usize,
    pub(crate) before: Option<usize>,
    pub(crate) after: Option<usize>,
}

/// The compaction events of `events` (by index, in order) grouped by the
/// requests around them.
pub(crate) fn chains(events: &[TimedEvent], state: &LoopState) -> BTreeMap<Anchor, Vec<usize>> {
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
    /// `None` when no request around it was logged, or the records do not
    /// fit together (an item or a request its context does not hold).
    fn chain(&self, anchor: Anchor, changes: &[&ViewChange]) -> Option<Vec<(u64, u64)>> {
        let transcript = self.transcript(anchor.context);
        let deltas: Vec<i64> = changes.iter().map(|change| self.delta(transcript, change)).collect::<Option<_>>()?;
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

    /// How many tokens `change` added to the view (negative: took away);
    /// `None` when it names a message its transcript does not hold.
    fn delta(&self, transcript: &[Message], change: &ViewChange) -> Option<i64> {
        let shown = |items: &[ShownItem]| -> Option<i64> {
            let messages: Option<Vec<&Message>> = items
                .iter()
                .map(|item| match item {
                    ShownItem::Transcript(index) => transcript.get(*index),
                    ShownItem::Rewritten(message) => Some(message),
                })
                .collect();
            Some(self.count(messages?.into_iter()))
        };
        Some(shown(&change.added)? - shown(&change.removed)?)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use reloop_agent::LoopEvent;
    use reloop_mock::{NoPacer, SessionConfig};
    use reloop_wire::{Prompt, ToolCall};

    use super::*;

    const WIRE: WireFormat = WireFormat::Anthropic;
    const SYSTEM: &str = "You are a careful engineer.";

    fn session() -> Session {
        let recording = "format: reloop.recording/v1\nexchanges:\n  - text: one\n  - text: two\n";
        let recording = Arc::new(crate::yaml::parse(std::path::Path::new("r.yaml"), recording).unwrap());
        Session::new(SessionConfig { recording, context_window: None, pacer: Arc::new(NoPacer), faults: vec![], provider_tokens: None }).unwrap()
    }

    /// A run whose transcript holds two tool rounds with long results.
    fn state() -> LoopState {
        let mut state = LoopState::new("Find the failing invariant.", 10);
        for (id, body) in [("c1", "fn a() {}\n"), ("c2", "let x = [1, 2, 3];\n")] {
            let call = ToolCall { id: id.into(), name: "read".into(), arguments: format!("{{\"path\":\"{id}.rs\"}}").into() };
            state.transcript.push(Message::assistant("Reading the next file.", vec![call]));
            state.transcript.push(Message::ToolResult { call_id: id.into(), tool_name: "read".into(), content: body.repeat(40).into(), is_error: false });
        }
        state
    }

    fn masked(state: &LoopState, index: usize) -> Message {
        let Message::ToolResult { call_id, tool_name, is_error, .. } = &state.transcript[index] else { unreachable!() };
        Message::ToolResult { call_id: call_id.clone(), tool_name: tool_name.clone(), content: "[cleared]".into(), is_error: *is_error }
    }

    /// What the server counts for `messages` under the system prompt: the
    /// whole request, as the meter once priced it.
    fn request_tokens(session: &Session, messages: &[Message]) -> u64 {
        let prompt = Prompt { system: Some(SYSTEM.into()), messages: messages.to_vec(), ..Prompt::default() };
        session.counter().count_prompt(&reloop_wire::format::through(WIRE, &prompt)).total
    }

    /// Sends `messages` as the loop's call, logged by the server.
    fn send(state: &mut LoopState, session: &Session, messages: &[Message]) {
        session.handle(reloop_mock::ReplayRequest::new(&Prompt {
            system: Some(SYSTEM.into()),
            messages: messages.to_vec(),
            model: "m".into(),
            ..Prompt::default()
        }));
        state.calls.push(CallRecord {
            step: state.calls.len() as u32,
            purpose: CallPurpose::Main,
            attempt: 0,
            error: None,
            transcript_len: messages.len(),
            system_prompt: 0,
            tool_set: 0,
            estimated_input_tokens: 0,
            estimated_uncompacted_input_tokens: 0,
            usage: None,
            finish_reason: None,
            tool_calls: Vec::new(),
            cache_break: None,
            started_ms: 0,
            finished_ms: 0,
            sub_agent: None,
        });
    }

    /// `(tokens_before, tokens_after)`.
    type Sides = (u64, u64);

    fn event(change: ViewChange, layer: u8) -> TimedEvent {
        let event = LoopEvent::CompactComplete { strategy: "roku".into(), layer, tokens_before: 1, tokens_after: 1, used_fallback: false, change };
        TimedEvent { step: 1, at_ms: 0, event }
    }

    /// Two edits before the second call: the first result masked, then the
    /// first round (call and masked result) replaced by a note.
    fn edits(state: &LoopState, note: &Message) -> Vec<TimedEvent> {
        let change = |removed, added| ViewChange { sub_agent: None, calls_before: 1, transcript_len: 5, removed, added };
        vec![
            event(change(vec![ShownItem::Transcript(2)], vec![ShownItem::Rewritten(masked(state, 2))]), 0),
            event(change(vec![ShownItem::Transcript(1), ShownItem::Rewritten(masked(state, 2))], vec![ShownItem::Rewritten(note.clone())]), 2),
        ]
    }

    fn figures(events: &[TimedEvent]) -> Vec<Sides> {
        events.iter().map(|e| e.event.compaction().map(|f| (f.tokens_before, f.tokens_after)).unwrap()).collect()
    }

    /// The three views of the chain, as whole requests.
    fn expected(state: &LoopState, session: &Session, note: &Message) -> Vec<Sides> {
        let t = &state.transcript;
        let whole = request_tokens(session, t);
        let masked_view = [t[0].clone(), t[1].clone(), masked(state, 2), t[3].clone(), t[4].clone()];
        let noted_view = [t[0].clone(), note.clone(), t[3].clone(), t[4].clone()];
        let (masked_tokens, noted_tokens) = (request_tokens(session, &masked_view), request_tokens(session, &noted_view));
        assert!(whole > masked_tokens && masked_tokens > noted_tokens, "{whole} {masked_tokens} {noted_tokens}");
        vec![(whole, masked_tokens), (masked_tokens, noted_tokens)]
    }

    /// A run that sent its first round, grew by a second and made the two
    /// edits; with `sent_after`, the request that sends their result too.
    /// Returns the priced figures, the expected ones and the server's log.
    fn priced_run(sent_after: bool) -> (Vec<Sides>, Vec<Sides>, Vec<RequestRecord>) {
        let (session, mut state) = (session(), state());
        let note = Message::user("[Session memory] read c1.rs: a stub.");
        let first = state.transcript[..3].to_vec();
        send(&mut state, &session, &first);
        if sent_after {
            let t = &state.transcript;
            let sent = [t[0].clone(), note.clone(), t[3].clone(), t[4].clone()];
            send(&mut state, &session, &sent);
        }
        let mut events = edits(&state, &note);
        price_compactions(&mut events, &state, &session.log(), &session, WIRE);
        (figures(&events), expected(&state, &session, &note), session.log())
    }

    #[test]
    fn a_chain_of_edits_is_priced_back_from_the_request_that_sent_it() {
        let (priced, expected, log) = priced_run(true);
        assert_eq!(priced, expected);
        assert_eq!(priced[1].1, log[1].input_tokens, "the last side is the server's own count");
    }

    #[test]
    fn with_no_request_after_the_chain_runs_forward_from_the_last_one_before() {
        let (priced, expected, log) = priced_run(false);
        assert_eq!(priced, expected);
        assert_eq!(log.len(), 1);
    }

    #[test]
    fn with_no_request_logged_the_loops_estimates_stay() {
        let (session, state) = (session(), state());
        let note = Message::user("note");
        let mut events = edits(&state, &note);
        price_compactions(&mut events, &state, &session.log(), &session, WIRE);
        assert_eq!(figures(&events), [(1, 1), (1, 1)]);
    }
}
