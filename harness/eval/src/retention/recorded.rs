//! What an imported session's own compactions lost (`docs/metrics.md`,
//! "Retention"): `references_lost_recorded` and `refetches_recorded`, from
//! the session as the run replayed it (its transcript: the recorded model
//! calls in order, with the fixtures' answers), the scenario's
//! `recorded_compactions` and the summaries the recording keeps.
//!
//! The recorded session's k-th model call is the transcript's k-th
//! assistant turn, so a compaction after `after_calls` calls sits just
//! before that turn. After it the agent's context is taken to hold the
//! summary, the system prompt and the user's messages (every source keeps
//! or restates these; none of the bundled formats is read for more), and
//! whatever came after it.

use std::collections::{HashMap, HashSet};

use reloop_agent::LoopState;
use reloop_agent::doom_loop::canonical_arguments;
use reloop_files::scenario::spec::{MECHANICAL_SUMMARY_PREFIX, RecordedCompaction};
use reloop_recording::{Exchange, Purpose};
use reloop_wire::Message;

use super::spans::{SpanTable, action_spans, part_texts};
use crate::scenario::Scenario;

/// The recorded figures; `None` when the session did not compact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordedLoss {
    /// References the summaries dropped that a later call used; also
    /// `None` when a summary is not readable (Codex's remote compaction
    /// keeps it encrypted), as what it held is unknown.
    pub references_lost: Option<u64>,
    /// Calls after a compaction repeating a call made before it.
    pub refetches: Option<u64>,
}

/// The recorded session as the run replayed it.
#[derive(Debug, Clone, Copy)]
pub struct RecordedSession<'a> {
    /// The run's transcript (the main loop's).
    pub transcript: &'a [Message],
    /// Every system prompt the run sent.
    pub system_prompts: &'a [String],
    /// The agent's compactions, in order.
    pub compactions: &'a [RecordedCompaction],
    /// Their summaries, one per compaction, when all are readable.
    pub summaries: Option<&'a [String]>,
}

/// The recorded figures of a built-in run of `scenario` that ended in
/// `state` (the same on every variant that replays the whole session).
pub fn of_run(scenario: &Scenario, state: &LoopState) -> RecordedLoss {
    let compactions = &scenario.spec.recorded_compactions;
    let summaries = readable_summaries(&scenario.recording.exchanges, compactions.len());
    measure(RecordedSession { transcript: &state.transcript, system_prompts: &state.system_prompts, compactions, summaries: summaries.as_deref() })
}

/// The agent's own summaries, in order, when the recording keeps one for
/// each of its `compactions` (the importer writes them as compaction
/// exchanges; a mechanical one is reloop's, written when none was readable).
fn readable_summaries(exchanges: &[Exchange], compactions: usize) -> Option<Vec<String>> {
    let summaries: Vec<String> = exchanges
        .iter()
        .filter(|exchange| exchange.purpose == Purpose::Compaction)
        .map(Exchange::text)
        .filter(|text| !text.starts_with(MECHANICAL_SUMMARY_PREFIX))
        .collect();
    (summaries.len() == compactions).then_some(summaries)
}

/// Measures `session`.
pub fn measure(session: RecordedSession<'_>) -> RecordedLoss {
    if session.compactions.is_empty() {
        return RecordedLoss::default();
    }
    // Where each compaction sits: the transcript index of the turn after it.
    let turns: Vec<usize> = session.transcript.iter().enumerate().filter(|(_, m)| matches!(m, Message::Assistant { .. })).map(|(at, _)| at).collect();
    let boundaries: Vec<usize> = session.compactions.iter().map(|c| turns.get(c.after_calls as usize).copied().unwrap_or(usize::MAX)).collect();
    RecordedLoss {
        references_lost: session.summaries.map(|summaries| references_lost(session, &boundaries, summaries)),
        refetches: Some(refetches(session.transcript, &boundaries)),
    }
}

/// The index of the latest compaction at or before transcript index `at`.
fn latest(boundaries: &[usize], at: usize) -> Option<usize> {
    boundaries.iter().rposition(|boundary| *boundary <= at)
}

/// Calls after a compaction whose tool and arguments (canonical JSON) were
/// called before it.
fn refetches(transcript: &[Message], boundaries: &[usize]) -> u64 {
    let calls = transcript.iter().enumerate().flat_map(|(at, message)| match message {
        Message::Assistant { tool_calls, .. } => tool_calls.iter().map(|call| (at, (call.name.as_str(), canonical_arguments(&call.arguments)))).collect(),
        _ => Vec::new(),
    });
    let calls: Vec<(usize, (&str, String))> = calls.collect();
    let mut first_made: HashMap<&(&str, String), usize> = HashMap::new();
    for (at, key) in &calls {
        first_made.entry(key).or_insert(*at);
    }
    let refetch = |(at, key): &(usize, (&str, String))| latest(boundaries, *at).is_some_and(|m| first_made[&key] < boundaries[m]);
    calls.iter().filter(|call| refetch(call)).count() as u64
}

/// References introduced by a tool result before a compaction, used by a
/// call after it, and held by neither its summary, the system prompt, the
/// user's messages, nor anything after it up to that call.
fn references_lost(session: RecordedSession<'_>, boundaries: &[usize], summaries: &[String]) -> u64 {
    let mut table = SpanTable::default();
    let actions: Vec<Option<Vec<u32>>> = session
        .transcript
        .iter()
        .enumerate()
        .map(|(at, message)| latest(boundaries, at).map(|_| action_spans(message).iter().map(|span| table.intern(span)).collect()))
        .collect();
    let summary_spans: Vec<Vec<u32>> = summaries.iter().map(|summary| table.find_in_all([summary.as_str()])).collect();
    // Per span, the transcript index of the tool result that introduced it
    // (`Some`), or `None` when something else held it first.
    let mut origins: Vec<Option<Option<usize>>> = vec![None; table.len()];
    let mut kept: HashSet<u32> = HashSet::new();
    for prompt in session.system_prompts {
        for span in table.find_in_all([prompt.as_str()]) {
            origins[span as usize].get_or_insert(None);
            kept.insert(span);
        }
    }
    let mut results_seen: HashSet<&str> = HashSet::new();
    let mut held: HashSet<u32> = HashSet::new();
    let mut lost = 0;
    for (at, message) in session.transcript.iter().enumerate() {
        let compaction = latest(boundaries, at);
        if let Some(m) = compaction.filter(|m| boundaries[*m] == at) {
            held = kept.iter().chain(&summary_spans[m]).copied().collect();
        }
        if let (Some(m), Some(spans)) = (compaction, &actions[at]) {
            let dropped = |span: &u32| matches!(origins[*span as usize], Some(Some(intro)) if intro < boundaries[m]) && !held.contains(span);
            lost += spans.iter().filter(|span| dropped(span)).count() as u64;
        }
        let found = table.find_in_all(part_texts(message).iter().map(|text| text.as_ref()));
        let introduces = matches!(message, Message::ToolResult { call_id, .. } if results_seen.insert(call_id));
        for span in found {
            origins[span as usize].get_or_insert(introduces.then_some(at));
            held.insert(span);
            if matches!(message, Message::User { .. }) {
                kept.insert(span);
            }
        }
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_wire::ToolCall;

    fn call(id: &str, name: &str, arguments: &str) -> Message {
        Message::assistant("", vec![ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }])
    }

    fn result(id: &str, content: &str) -> Message {
        Message::ToolResult { call_id: id.into(), tool_name: "read".into(), content: content.into(), is_error: false }
    }

    fn compaction(after_calls: u32) -> RecordedCompaction {
        RecordedCompaction { after_calls, line: 1, ..RecordedCompaction::default() }
    }

    /// Read a listing naming two files, compact, then read both and the listing again.
    fn session() -> Vec<Message> {
        vec![
            Message::user("Tidy the project."),
            call("c1", "sh", r#"{"command": "ls"}"#),
            result("c1", "src/kept.rs src/dropped.rs"),
            call("c2", "read", r#"{"path": "src/kept.rs"}"#),
            result("c2", "fn kept() {}"),
            // The compaction: after two calls.
            call("c3", "read", r#"{"path": "src/dropped.rs"}"#),
            result("c3", "fn dropped() {}"),
            call("c4", "sh", r#"{"command": "ls"}"#),
            result("c4", "src/kept.rs src/dropped.rs"),
            Message::assistant("Done: src/dropped.rs", vec![]),
        ]
    }

    fn measured(summaries: Option<&[String]>) -> RecordedLoss {
        let transcript = session();
        let compactions = [compaction(2)];
        measure(RecordedSession { transcript: &transcript, system_prompts: &[], compactions: &compactions, summaries })
    }

    #[test]
    fn a_reference_the_summary_dropped_is_lost_once_and_a_repeated_call_is_a_refetch() {
        let summary = ["The user wants the project tidied; src/kept.rs was read.".to_owned()];
        assert_eq!(measured(Some(&summary)), RecordedLoss { references_lost: Some(1), refetches: Some(1) });
    }

    #[test]
    fn a_summary_that_holds_the_span_keeps_it() {
        let summary = ["Listed src/kept.rs and src/dropped.rs.".to_owned()];
        assert_eq!(measured(Some(&summary)).references_lost, Some(0));
    }

    #[test]
    fn an_unreadable_summary_leaves_the_loss_unknown_and_no_compaction_leaves_both() {
        assert_eq!(measured(None), RecordedLoss { references_lost: None, refetches: Some(1) });
        let transcript = session();
        assert_eq!(measure(RecordedSession { transcript: &transcript, system_prompts: &[], compactions: &[], summaries: None }), RecordedLoss::default());
    }

    #[test]
    fn what_the_user_said_is_kept_through_a_compaction() {
        let mut transcript = session();
        transcript.insert(5, Message::user("Start with src/dropped.rs"));
        let compactions = [compaction(2)];
        let summary = [String::new()];
        let loss = measure(RecordedSession { transcript: &transcript, system_prompts: &[], compactions: &compactions, summaries: Some(&summary) });
        assert_eq!(loss.references_lost, Some(0));
    }
}
