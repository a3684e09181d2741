//! A black-box run's report, from the server's side only: what the agent
//! asked for and what the recording answered. Steps are the main requests
//! answered with a whole turn; the final answer and doom loops are read from
//! the turns served, and what the agent did with each call from the result
//! it sent back in a later request, since the agent's own state is out of
//! sight: a call whose result never came back was not made, and one whose
//! result is an error or a refusal (Codex's `unsupported call: NAME`) is a
//! tool error.

use reloop_agent::Outcome;
use reloop_agent::doom_loop::{DoomCall, DoomLoopDetectors, DoomLoopKind, canonical_arguments, result_hash};
use reloop_mock::tool_results::ToolResultSeen;
use reloop_mock::{RequestRecord, Session};
use reloop_wire::{ModelTurn, ToolCall};

use super::tool_side::ToolSideCounts;
use crate::cache_breaks::ByCause;
use crate::recorded_pricing::{RecordedPricing, price_recorded_usage};
use crate::result::StepRow;
use crate::retention::run::{Editor, Retention};
use crate::run_metrics::KindFacts;
use crate::scenario::Scenario;

/// What the server saw of a run, ready for the report.
#[derive(Debug, Clone)]
pub struct ServerView {
    /// One row per request.
    pub steps: Vec<StepRow>,
    /// The figures that the server can know (or says it cannot).
    pub kind: KindFacts,
    /// The calls the agent ran (a result came back that is not a refusal), in order.
    pub tool_calls: Vec<String>,
    /// The text of the last turn served, when it called no tool (or the
    /// agent's submission, [`final_answer`]).
    pub final_answer: Option<String>,
    /// The doom-loop detectors that fired.
    pub doom_loop_kinds: Vec<DoomLoopKind>,
    /// The references the agent's actions used and lost, with one
    /// `reference_lost` event per loss (`crate::retention`).
    pub retention: Retention,
}

use reloop_mock::auxiliary::AUXILIARY_RESULT as AUXILIARY;
use reloop_mock::session::COMPACTION_RESULT;

use crate::cache_breaks::ExplainedBreak;

/// The `result` of a request whose stream a fault played in.
const STREAM_FAULT: &str = "fault:stream";

/// What an agent writes back for a call it refuses to run (Codex: `unsupported call: shell`).
const REFUSAL: &str = "unsupported call";

/// The agent's words for a failed call, matched against the results it
/// sends back (`agent.tool_error_pattern`, checked when the scenario was
/// loaded): on the wires without an error flag, its only sign.
fn worded_error(scenario: &Scenario) -> Option<regex::Regex> {
    let pattern = scenario.spec.agent.as_ref()?.tool_error_pattern()?;
    regex::Regex::new(pattern).ok()
}

/// Reads `session`'s log into the report's rows and figures; `tool_side`
/// is what the shell shims saw, when any watched.
pub fn server_view(scenario: &Scenario, session: &Session, tool_side: Option<ToolSideCounts>) -> ServerView {
    let log = session.log();
    let launch = scenario.spec.agent.as_ref().and_then(|a| a.preset).map(|preset| preset.launch());
    let volatile = launch.map_or(&[][..], |launch| launch.volatile_result_lines);
    let submit_marker = launch.and_then(|launch| launch.submit_marker);
    let worded_error = worded_error(scenario);
    // The step of each call served, and the call as the detectors see it,
    // with the result the agent sent back for it (unknown if it never did).
    let mut calls: Vec<(u64, DoomCall)> = Vec::new();
    let (mut steps, mut tool_calls, mut answer): (Vec<StepRow>, Vec<String>, Option<String>) = (Vec::new(), Vec::new(), None);
    let (mut made, mut errors) = (0u64, 0u64);
    let mut steps_used = 0u64;
    // The exchange of the last turn delivered whole: an identical repeat is its retry.
    let mut delivered: Option<usize> = None;
    for (position, record) in log.iter().enumerate() {
        let turn = served_turn(session, record).filter(|_| !broken_stream(scenario, record));
        let step = match &turn {
            Some(turn) if !(record.retry && delivered == record.exchange) => {
                for call in &turn.tool_calls {
                    let result = result_of(&log[position + 1..], call);
                    let refused = result.is_some_and(|r| r.content.contains(REFUSAL));
                    made += u64::from(result.is_some());
                    errors += u64::from(result.is_some_and(|r| r.is_error || refused || worded_error.as_ref().is_some_and(|p| p.is_match(&r.content))));
                    if result.is_some() && !refused {
                        tool_calls.push(call.name.to_string());
                    }
                    let result_hash = result.map(|r| stable_hash(r, volatile));
                    calls.push((steps_used, DoomCall { tool: call.name.to_string(), arguments: canonical_arguments(&call.arguments), result_hash }));
                }
                answer = final_answer(turn, submit_marker);
                delivered = record.exchange;
                steps_used += 1;
                steps_used - 1
            }
            Some(_) => steps_used.saturating_sub(1),
            // A failed attempt at the step to come (an auxiliary request is part of it too).
            None => steps_used,
        };
        let attempt = steps.iter().filter(|row| row.step == step && row.purpose == "main").count() as u64;
        steps.push(step_row(record, turn.as_ref(), step, attempt));
    }
    let sent = session.sent();
    crate::sent_messages::fill(&mut steps, &sent, None);
    let retention = crate::retention::run::measure(&mut steps, &sent, &log, Editor::Agent);
    let only_calls: Vec<DoomCall> = calls.iter().map(|(_, call)| call.clone()).collect();
    let found = DoomLoopDetectors::scan(&scenario.loop_settings.doom_loop, &only_calls);
    let first_step = |kind: DoomLoopKind| found.iter().find(|(_, hit)| hit.kind == kind).map(|(index, _)| calls[*index].0);
    let first_loop = found.first().map(|(index, hit)| (calls[*index].0, hit.kind));
    let doom_loop_kinds = DoomLoopKind::ALL.into_iter().filter(|kind| first_step(*kind).is_some()).collect();
    // Only the turns delivered whole are the recorded session's calls.
    let turns: Vec<StepRow> = steps.iter().filter(|row| row.error.is_none() && row.purpose == "main").cloned().collect();
    let recorded: RecordedPricing = price_recorded_usage(scenario, &turns, false);
    let kind = KindFacts {
        steps_used,
        doom_loop_detected: first_loop.is_some(),
        doom_loop_first_step: first_loop.map(|(step, _)| step),
        doom_loop_kind: first_loop.map(|(_, kind)| kind.as_str().to_owned()),
        doom_loop_first_steps: DoomLoopKind::ALL.map(first_step),
        // The label is not reported for a black-box run (`docs/black-box.md` gives it no meaning there).
        doom_loop_expected_kind: None,
        doom_loop_onset_step: None,
        // Nothing is known of the agent's compaction: its prompts are the baseline.
        compactions: [0; 5],
        compaction_fallbacks: 0,
        compaction_calls: 0,
        breaker_tripped: false,
        tokens_saved_recorded: None,
        input_tokens_uncompacted_total: None,
        references_lost_recorded: None,
        refetches_recorded: None,
        // The agent's own cache-break detection is out of sight, and the
        // simulated breaks are not broken down by cause nor priced.
        cache_breaks: 0,
        cache_breaks_by_cause: ByCause::default(),
        cache_lost_cost_usd: None,
        cache_breaks_matched: 0,
        cache_break_precision: None,
        cache_break_recall: None,
        recorded,
        // The agent's estimate of its prompts is out of sight.
        estimator_mape: None,
        llm_retries: retries(&log),
        tool_calls: made,
        tool_errors: errors,
        max_parallel_tools: 0,
        tool_side,
    };
    ServerView { steps, kind, tool_calls, final_answer: answer, doom_loop_kinds, retention }
}

/// A turn's final answer: its text when it calls no tool, or the arguments
/// of its submission (the call carrying the preset's `submit_marker`, with
/// which mini-swe-agent ends).
fn final_answer(turn: &ModelTurn, submit_marker: Option<&str>) -> Option<String> {
    if turn.tool_calls.is_empty() {
        return (!turn.text.is_empty()).then(|| turn.text.clone());
    }
    let marker = submit_marker?;
    turn.tool_calls.iter().find(|call| call.arguments.contains(marker)).map(|call| call.arguments.to_string())
}

/// Whether the agent never got `record`'s turn whole: its stream was cut,
/// garbled or ended by an error event (a stall only delays it, and a
/// reply not streamed is sent whole whatever the fault). Such a request
/// is a failed attempt at its step, not a step.
fn broken_stream(scenario: &Scenario, record: &RequestRecord) -> bool {
    let breaks = |fault: &reloop_mock::FaultSpec| fault.cut_after_events.is_some() || fault.garble_after_events.is_some() || fault.stream_error.is_some();
    let at_exchange = |fault: &&reloop_mock::FaultSpec| Some(fault.exchange) == record.exchange;
    record.stream && record.result == STREAM_FAULT && scenario.spec.faults.iter().filter(at_exchange).any(breaks)
}

/// The result the agent sent back for `call`, in the first of the later
/// requests that carries one.
fn result_of<'a>(later: &'a [RequestRecord], call: &ToolCall) -> Option<&'a ToolResultSeen> {
    later.iter().flat_map(|record| &record.tool_results).find(|seen| seen.call_id == call.id)
}

/// The [`result_hash`] of a tool result with the agent's volatile lines
/// left out (Codex wraps every command's output in a fresh chunk id and
/// wall time, which would make no two results of one command equal).
fn stable_hash(seen: &ToolResultSeen, volatile: &[&str]) -> u64 {
    let stable: Vec<&str> = seen.content.lines().filter(|line| !volatile.iter().any(|prefix| line.starts_with(prefix))).collect();
    result_hash(seen.is_error, &stable.join("\n"))
}

/// Requests that retried: an identical repeat of an answered request, or
/// any request right after one the server failed with a fault (the agent
/// cannot be asked what it meant, so the next request is taken as its retry).
fn retries(log: &[RequestRecord]) -> u64 {
    let after_fault = log.windows(2).filter(|pair| !pair[1].retry && pair[0].status != 200 && pair[0].result.starts_with("fault:"));
    (log.iter().filter(|r| r.retry).count() + after_fault.count()) as u64
}

/// The turn the server sent for `record`, if it sent one.
fn served_turn(session: &Session, record: &RequestRecord) -> Option<ModelTurn> {
    let exchange = record.exchange.filter(|_| record.status == 200)?;
    Some(session.exchange(exchange)?.to_turn(exchange))
}

/// The row of one request: `turn` is what the agent got whole (none after
/// a fault, a divergence or a cut stream, which make the row's `error`).
fn step_row(record: &RequestRecord, turn: Option<&ModelTurn>, step: u64, attempt: u64) -> StepRow {
    let answered = record.status == 200;
    // A compaction the provider answered (`/responses/compact`) is a side
    // request like an auxiliary one: no exchange, no error.
    let auxiliary = record.result == AUXILIARY || record.result == COMPACTION_RESULT;
    StepRow {
        step,
        call_index: record.index as u64,
        purpose: if auxiliary { record.result } else { "main" }.to_owned(),
        attempt: if auxiliary { 0 } else { attempt },
        error: (turn.is_none() && !auxiliary).then(|| record.result.to_owned()),
        server_result: Some(record.result.to_owned()),
        request_messages: Some(record.messages as u64),
        input_tokens: Some(record.input_tokens),
        // The agent's prompts are their own baseline (no compaction of reloop's).
        input_tokens_uncompacted: Some(record.input_tokens),
        estimated_input_tokens: 0,
        output_tokens: answered.then_some(record.output_tokens),
        cache_read_tokens: answered.then_some(record.cached_tokens),
        cache_write_tokens: answered.then_some(record.cache_write_tokens),
        cache_write_1h_tokens: answered.then_some(record.cache_write_1h_tokens),
        usage_recorded: turn.and(record.recorded_usage),
        cache_write_1h_tokens_recorded: turn.and(record.recorded_cache_write_1h_tokens),
        exchange: record.exchange.map(|e| e as u64),
        live: record.live,
        cache_break_simulated: record.cache_break,
        // The agent's own cache-break detection is out of sight.
        cache_break_detected: false,
        cache_break_causes: None,
        // Where the prompt changed, and the provider's own edit when it made it.
        cache_break_explained: record.cache_break_site.clone().map(|site| ExplainedBreak { site, by: record.server_edit.clone(), lost_usd: None }),
        finish_reason: turn.map(|t| t.finish_reason.as_openai_str().to_owned()),
        tool_calls: turn.map(|t| t.tool_calls.iter().map(|c| c.name.to_string()).collect()).unwrap_or_default(),
        started_ms: record.at_ms,
        finished_ms: record.at_ms,
        // A black-box agent's sub-agents are out of sight too.
        ..StepRow::default()
    }
}

/// The run's outcome: a divergence or the agent's own ending first, then
/// how the conversation served ended.
pub fn outcome(ending: &super::process::Ending, divergences: usize, view: &ServerView) -> Outcome {
    use super::process::Ending;
    match ending {
        Ending::TimedOut => Outcome::AgentTimeout,
        Ending::Cancelled => Outcome::Cancelled,
        _ if divergences > 0 => Outcome::Divergence,
        Ending::Exited(Some(0)) if view.final_answer.is_some() => Outcome::FinalAnswer,
        Ending::Exited(Some(0)) => Outcome::LlmError,
        Ending::Exited(_) => Outcome::AgentError,
    }
}
