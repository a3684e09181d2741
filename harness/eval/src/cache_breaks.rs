//! Each simulated cache break explained: the server's [`BreakSite`] (where
//! the request first differs from the one whose cache it lost, and the kind
//! of change) joined with the loop's own events, which say what made the
//! change: the compaction layer, masking pass or strategy whose edit the
//! request was the first to carry, or the summary request that declared
//! other tools. The lost tokens are priced at the model's list prices: what
//! reading them from the cache would have saved.

use reloop_agent::context::ShownItem;
use reloop_agent::price_table;
use reloop_agent::{CallPurpose, LoopEvent, LoopState, Message, TimedEvent};
use reloop_mock::RequestRecord;
use reloop_mock::cache_explain::{BreakSite, CAUSES};
use serde::Serialize;

use crate::compaction_tokens::{chains, context_index};

/// One simulated break, explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedBreak {
    /// Where the request first differs and the kind of change (`docs/cache-breaks.md`).
    #[serde(flatten)]
    pub site: BreakSite,
    /// What made the change, from the loop's events: `masking layer 0 at
    /// step 12: masked message 7 (tool_result of read, first sent at step
    /// 3)`; `None` when no event of the loop accounts for it.
    pub by: Option<String>,
    /// The lost tokens at the model's prices: input instead of cache reads.
    pub lost_usd: Option<f64>,
}

/// Breaks and lost tokens per cause, in [`CAUSES`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ByCause {
    /// Breaks of each cause.
    pub breaks: [u64; CAUSES.len()],
    /// Cached tokens they lost.
    pub lost_tokens: [u64; CAUSES.len()],
}

impl ByCause {
    /// The tally of `breaks`.
    pub fn of<'a>(breaks: impl IntoIterator<Item = &'a ExplainedBreak>) -> Self {
        let mut tally = Self::default();
        for explained in breaks {
            let index = CAUSES.iter().position(|cause| *cause == explained.site.cause).unwrap_or(CAUSES.len() - 1);
            tally.breaks[index] += 1;
            tally.lost_tokens[index] += explained.site.lost_tokens;
        }
        tally
    }
}

/// The explanation of each call's break, by call index.
pub(crate) fn explain(model: &str, state: &LoopState, events: &[TimedEvent], log: &[RequestRecord]) -> Vec<Option<ExplainedBreak>> {
    let edits = chains(events, state);
    let price = price_table::active().model(model).map(|row| (row.input - row.cache_read) / 1e6);
    log.iter()
        .enumerate()
        .map(|(index, record)| {
            let site = record.cache_break_site.clone()?;
            let call = state.calls.get(index);
            let by = match call {
                Some(call) if call.purpose == CallPurpose::Compaction => Some(summary_request(events, call.step)),
                Some(_) if matches!(site.cause, "edited" | "inserted" | "removed") => {
                    let sent_here = edits.iter().filter(|(anchor, _)| anchor.after == Some(index)).flat_map(|(_, members)| members);
                    let named: Vec<String> = sent_here.map(|&event| describe(&events[event], state, index)).collect();
                    (!named.is_empty()).then(|| named.join("; "))
                }
                Some(call) if site.cause == "tools" => discovered(events, call.step),
                _ => None,
            };
            // The provider's own context management (`strategy: native`) edits what the loop sent.
            let by = by.or_else(|| record.server_edit.as_ref().map(|edit| format!("the provider: {edit}")));
            Some(ExplainedBreak { lost_usd: price.map(|per_token| site.lost_tokens as f64 * per_token), site, by })
        })
        .collect()
}

/// `the summary request of roku layer 3 at step 14`: the last summary
/// triggered by the summary call's step.
fn summary_request(events: &[TimedEvent], step: u32) -> String {
    let trigger = events.iter().rev().filter(|timed| timed.step <= step).find_map(|timed| match &timed.event {
        LoopEvent::CompactTriggered { strategy, layer, .. } => Some(format!(" of {strategy} layer {layer} at step {}", timed.step)),
        _ => None,
    });
    format!("the summary request{}", trigger.unwrap_or_default())
}

/// `tool_search discovered a, b at step 3`: the last discovery before `step`,
/// which made the tools of the next request grow.
fn discovered(events: &[TimedEvent], step: u32) -> Option<String> {
    events.iter().rev().filter(|timed| timed.step < step).find_map(|timed| match &timed.event {
        LoopEvent::ToolsDiscovered { tools, .. } => Some(format!("tool_search discovered {} at step {}", tools.join(", "), timed.step)),
        _ => None,
    })
}

/// A compaction event as its break explanation names it.
fn describe(timed: &TimedEvent, state: &LoopState, call: usize) -> String {
    let (layer, strategy) = match (&timed.event, timed.event.compaction()) {
        (_, Some(figures)) => (figures.layer, figures.strategy),
        (LoopEvent::ReactiveCompactTriggered { strategy, .. }, None) => (4, strategy.as_str()),
        _ => (4, "unknown"),
    };
    let mut text = format!("{strategy} layer {layer} at step {}", timed.step);
    if let LoopEvent::MicrocompactRan { change, .. } = &timed.event {
        let masked: Vec<String> = change.removed.iter().filter_map(|item| masked_message(item, state, call)).collect();
        if !masked.is_empty() {
            text.push_str(&format!(": masked {}", masked.join(", ")));
        }
    }
    text
}

/// `message 7 (tool_result of read, first sent at step 3)` for a masked
/// transcript message of the context `call` was made in.
fn masked_message(item: &ShownItem, state: &LoopState, call: usize) -> Option<String> {
    let ShownItem::Transcript(index) = item else { return None };
    let sender = state.calls.get(call)?;
    let (transcript, _, _) = state.context_of(sender);
    let tool = match transcript.get(*index)? {
        Message::ToolResult { tool_name, .. } => format!("tool_result of {tool_name}"),
        Message::User { .. } => "user".to_owned(),
        Message::Assistant { .. } => "assistant".to_owned(),
    };
    let context = context_index(sender);
    let first_sent = state.calls.iter().find(|c| context_index(c) == context && c.transcript_len > *index).map(|c| c.step);
    Some(match first_sent {
        Some(step) => format!("message {index} ({tool}, first sent at step {step})"),
        None => format!("message {index} ({tool})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explained(cause: &'static str, lost_tokens: u64) -> ExplainedBreak {
        let site = BreakSite { cause, message: None, role: "", block: String::new(), byte_offset: None, span: None, lost_tokens };
        ExplainedBreak { site, by: None, lost_usd: None }
    }

    #[test]
    fn breaks_are_tallied_by_cause() {
        let breaks = [explained("system", 2_000), explained("edited", 500), explained("edited", 700)];
        let tally = ByCause::of(&breaks);
        assert_eq!((tally.breaks[1], tally.lost_tokens[1]), (1, 2_000));
        assert_eq!((tally.breaks[3], tally.lost_tokens[3]), (2, 1_200));
        assert_eq!(tally.breaks.iter().sum::<u64>(), 3);
    }
}
