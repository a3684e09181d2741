//! Which recorded exchange a request gets: the next of its purpose, the
//! same one again for a retry, or a divergence when the request does not
//! answer the calls of the exchange before it in its conversation, drops
//! the thinking it must send back, or misses what the exchange expects.

use reloop_recording::{Exchange, Purpose};
use reloop_wire::Prompt;

use super::{RequestRecord, Session, SessionState};
use crate::replay::divergence::{Divergence, ExpectedCall, check_expectations, check_thinking_returned, check_tool_results, recording_exhausted};
use crate::replay::stages::{Caching, Rejection, Reply};

impl Session {
    /// Match: an identical repeat of a request that was answered is its
    /// retry and gets the same exchange; otherwise the next of its purpose,
    /// or a divergence (kept for the report).
    pub(super) fn match_exchange(
        &self,
        state: &mut SessionState,
        record: &RequestRecord,
        request: &Prompt,
        caching: &Caching,
    ) -> Result<(Purpose, usize), Rejection> {
        if let Some((_, purpose, exchange)) = state.previous.filter(|_| record.retry) {
            return Ok((purpose, exchange));
        }
        self.check(state, record.index, request, matches!(caching, Caching::Breakpoints(_))).map_err(|divergence| {
            state.divergences.push(divergence.clone());
            Rejection { status: 400, result: "divergence", reply: Box::new(Reply::Divergence(divergence)) }
        })
    }

    /// Which purpose a request serves: a tool-less request is a compaction
    /// request, when the recording has compaction exchanges at all.
    pub(super) fn purpose_of(&self, request: &Prompt) -> Purpose {
        if request.tools.is_empty() && !self.by_purpose[Purpose::Compaction.index()].is_empty() { Purpose::Compaction } else { Purpose::Main }
    }

    /// The index of the exchange the next new request of `purpose` would
    /// get: the next in its list, or the last one again when it is reusable.
    pub(super) fn next_exchange(&self, state: &SessionState, purpose: Purpose) -> Option<usize> {
        let list = &self.by_purpose[purpose.index()];
        let exchanges = &self.config.recording.exchanges;
        list.get(state.next[purpose.index()]).or_else(|| list.last().filter(|last| exchanges[**last].reusable)).copied()
    }

    /// The exchange a new (not retried) request gets, or why it gets none.
    pub(super) fn check(&self, state: &SessionState, index: usize, request: &Prompt, anthropic: bool) -> Result<(Purpose, usize), Divergence> {
        let exchanges = &self.config.recording.exchanges;
        let purpose = self.purpose_of(request);
        let list = &self.by_purpose[purpose.index()];
        let position = state.next[purpose.index()];
        let Some(exchange) = self.next_exchange(state, purpose) else {
            return Err(recording_exhausted(index, purpose, list.len(), request));
        };
        if purpose == Purpose::Main
            && let Some(previous) = previous_in_conversation(exchanges, list, position)
        {
            let expected = expected_calls(&exchanges[previous], previous, &state.main_call_item_ids);
            let summarized = state.recovery.summarized_away(request, &expected);
            if let Some(divergence) = check_tool_results(index, &expected, request).filter(|_| !summarized) {
                return Err(divergence);
            }
            let call_ids: Vec<String> = expected.into_iter().map(|call| call.id).collect();
            let thinking = exchanges[previous].reasoning();
            if let Some(divergence) = check_thinking_returned(index, &thinking, &call_ids, request).filter(|_| anthropic) {
                return Err(divergence);
            }
        }
        match check_expectations(index, &exchanges[exchange].expect, request) {
            Some(divergence) => Err(divergence),
            None => Ok((purpose, exchange)),
        }
    }
}

/// The exchange whose calls the request taking `list[position]` must
/// answer: the one before it in the same conversation. A sub-agent's
/// exchanges sit between their parent's; a sub-agent's first request
/// answers nothing, and the parent's next request answers the parent's
/// last exchange.
fn previous_in_conversation(exchanges: &[Exchange], list: &[usize], position: usize) -> Option<usize> {
    let Some(&next) = list.get(position) else { return position.checked_sub(1).map(|p| list[p]) };
    let sub_agent = exchanges[next].sub_agent;
    for &earlier in list[..position].iter().rev() {
        match (exchanges[earlier].sub_agent, sub_agent) {
            (a, b) if a == b => return Some(earlier),
            // The parent's exchange before a delegation's first one.
            (false, true) => return None,
            _ => {}
        }
    }
    None
}

/// The calls of `exchange` (at `index`) a request must answer, each also by
/// its recorded item id and the item id it was rendered with.
fn expected_calls(exchange: &Exchange, index: usize, rendered_item_ids: &[String]) -> Vec<ExpectedCall> {
    let recorded = exchange.tool_calls().map(|call| call.item_id.clone());
    let turn = exchange.to_turn(index);
    turn.tool_calls
        .into_iter()
        .zip(recorded)
        .enumerate()
        .map(|(i, (call, recorded))| ExpectedCall { id: call.id.to_string(), aliases: recorded.into_iter().chain(rendered_item_ids.get(i).cloned()).collect() })
        .collect()
}
