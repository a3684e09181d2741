//! Turning a finished run into a [`RunReport`]: the loop's state and events
//! joined with what the server saw, plus the uncompacted counterfactual and
//! the compactions' figures counted by the same reference tokenizer.

use reloop_agent::price_table::{self, PricedUsage};
use reloop_agent::{CallPurpose, CallRecord, DoomLoopKind, LoopEvent, LoopState, Message, Outcome, TimedEvent};
use reloop_files::scenario::spec::RecordedCompaction;
use reloop_mock::tokens::REPLY_PRIMING_TOKENS;
use reloop_mock::{RequestRecord, Session};
use reloop_wire::Usage;

use crate::cache_breaks::{self, ByCause};
use crate::compaction_tokens::{context_index, price_compactions};
use crate::expect::{RunFacts, check};
use crate::recorded_pricing::price_recorded_usage;
use crate::result::{EventRow, RunReport, StepRow};
use crate::retention::{self, run::Editor};
use crate::run_metrics::{self, KindFacts, MetricFacts};
use crate::scenario::Scenario;

/// Everything a finished run left behind.
pub struct Finished<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// The loop's final state.
    pub state: LoopState,
    /// The loop's events, in order.
    pub events: Vec<TimedEvent>,
    /// The server session.
    pub session: &'a Session,
    /// The run's clock at the end, ms.
    pub virtual_ms: u64,
    /// Real time taken, ms.
    pub wall_ms: u64,
}

/// Builds the report of a finished run.
pub fn collect(finished: Finished<'_>) -> RunReport {
    let Finished { scenario, state, mut events, session, virtual_ms, wall_ms } = finished;
    let log = session.log();
    price_compactions(&mut events, &state, &log, session, scenario.wire);
    let divergences = session.divergences();
    let outcome = if divergences.is_empty() { state.outcome().unwrap_or(Outcome::HarnessError) } else { Outcome::Divergence };
    let explained = cache_breaks::explain(&scenario.spec.model, &state, &events, &log);
    let mut steps = step_rows(scenario, &state, &log, session);
    for (step, explained) in steps.iter_mut().zip(explained) {
        step.cache_break_explained = explained;
    }
    let sent = session.sent();
    crate::sent_messages::fill(&mut steps, &sent, Some((&state, scenario.wire)));
    let retention = retention::run::measure(&mut steps, &sent, &log, Editor::Loop(&events));
    let kind = kind_facts(scenario, &state, &steps, &events);
    let metrics =
        run_metrics::build(MetricFacts { scenario, steps: &steps, log: &log, divergences: &divergences, retention: &retention, virtual_ms, wall_ms, kind });

    let tool_sequence: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.event {
            LoopEvent::ToolStart { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    let failed_expectations = check(
        &scenario.spec.expect,
        &RunFacts {
            outcome,
            steps_used: metrics.steps_used,
            final_answer: state.final_answer.as_deref(),
            tool_calls: tool_sequence,
            doom_loop_detected: metrics.doom_loop_detected,
            doom_loop_kinds: state.doom_loop_first_steps.iter().map(|(kind, _)| *kind).collect(),
            cache_breaks: metrics.cache_breaks,
            llm_retries: metrics.llm_retries,
            cache_read_tokens: metrics.cache_read_tokens,
            cache_write_tokens: metrics.cache_write_tokens,
            exit_code: None,
        },
    );
    RunReport {
        passed: failed_expectations.is_empty(),
        failed_expectations,
        final_answer: state.final_answer.clone(),
        error: state.error.clone().or_else(|| state.pending_question.clone()),
        // The name the strategy gave itself: a plug-in's from its handshake.
        strategy: state.strategy.clone(),
        metrics,
        events: event_rows(&events, &steps, &scenario.spec.recorded_compactions, retention.events),
        steps,
        divergences,
        ..RunReport::of(scenario, outcome)
    }
}

fn step_rows(scenario: &Scenario, state: &LoopState, log: &[RequestRecord], session: &Session) -> Vec<StepRow> {
    let uncompacted = UncompactedCounts::new(scenario, state, session);
    state
        .calls
        .iter()
        .enumerate()
        .map(|(call_index, record)| {
            let server = log.get(call_index);
            let answered = server.is_some_and(|s| s.status == 200);
            let main = record.purpose != CallPurpose::Compaction;
            let uncompacted = server.filter(|_| answered && main).map(|server| uncompacted.tokens(server, record));
            StepRow {
                step: u64::from(record.step),
                call_index: call_index as u64,
                purpose: record.purpose.as_str().to_owned(),
                attempt: u64::from(record.attempt),
                error: record.error.map(str::to_owned),
                server_result: server.map(|s| s.result.to_owned()),
                request_messages: server.map(|s| s.messages as u64),
                input_tokens: server.map(|s| s.input_tokens),
                input_tokens_uncompacted: uncompacted,
                estimated_input_tokens: record.estimated_input_tokens,
                output_tokens: server.filter(|_| answered).map(|s| s.output_tokens),
                cache_read_tokens: server.filter(|_| answered).map(|s| s.cached_tokens),
                estimated_cost_usd: server.filter(|_| answered).and_then(|s| call_cost(&scenario.spec.model, s)),
                usage_recorded: server.filter(|_| answered).and_then(|s| s.recorded_usage),
                cache_write_1h_tokens_recorded: server.filter(|_| answered).and_then(|s| s.recorded_cache_write_1h_tokens),
                exchange: server.and_then(|s| s.exchange).map(|e| e as u64),
                live: server.is_some_and(|s| s.live),
                cache_break_simulated: server.is_some_and(|s| s.cache_break),
                cache_write_tokens: server.filter(|_| answered).map(|s| s.cache_write_tokens),
                cache_write_1h_tokens: server.filter(|_| answered).map(|s| s.cache_write_1h_tokens),
                cache_break_detected: record.cache_break.is_some(),
                cache_break_causes: record.cache_break.as_ref().map(|causes| causes.join(",")),
                cache_break_explained: None,
                finish_reason: record.finish_reason.as_ref().map(|f| f.as_openai_str().to_owned()),
                tool_calls: record.tool_calls.clone(),
                started_ms: record.started_ms,
                finished_ms: record.finished_ms,
                agent_depth: u64::from(record.sub_agent.is_some()),
                parent_step: record.sub_agent.as_ref().map(|link| u64::from(link.parent_step)),
                parent_call_id: record.sub_agent.as_ref().map(|link| link.parent_call_id.clone()),
                // Filled from the server's log of what was sent (`crate::sent_messages`).
                ..StepRow::default()
            }
        })
        .collect()
}

/// What a call the server answered cost, priced from its usage.
fn call_cost(model: &str, server: &RequestRecord) -> Option<f64> {
    let usage = Usage {
        input_tokens: server.input_tokens,
        output_tokens: server.output_tokens,
        cache_read_tokens: server.cached_tokens,
        cache_write_tokens: server.cache_write_tokens,
    };
    price_table::active().cost(model, &PricedUsage { usage, cache_write_1h_tokens: server.cache_write_1h_tokens })
}

/// The server's count of each call's uncompacted counterfactual: the
/// transcript the call's view was made from (the run's, or its sub-agent's),
/// under the system prompt and tools the server logged for the call. Each
/// transcript's messages are counted once, by the session's own counter
/// (memo hits for all it already saw), and summed as prefixes.
struct UncompactedCounts<'a> {
    /// `prefix[k][n]`: the tokens of the first `n` messages of context `k`'s
    /// transcript (0: the run, `1 + i`: sub-agent `i`).
    prefix: Vec<Vec<u64>>,
    /// Text tool calling sends a rendered transcript (tool calls and results
    /// as text, results merged into user turns), which is no prefix of the
    /// transcript's messages: each call's rendering is counted on its own.
    text_tools: Option<(&'a LoopState, &'a Scenario, &'a Session)>,
}

impl<'a> UncompactedCounts<'a> {
    fn new(scenario: &'a Scenario, state: &'a LoopState, session: &'a Session) -> Self {
        if scenario.loop_settings.text_tool_calling() {
            return Self { prefix: Vec::new(), text_tools: Some((state, scenario, session)) };
        }
        let contexts = std::iter::once(state).chain(&state.sub_agents);
        let prefix = contexts
            .enumerate()
            .map(|(context, owner)| {
                let main = state.calls.iter().filter(|call| call.purpose != CallPurpose::Compaction && context_index(call) == context);
                let needed = main.map(|call| call.transcript_len).max().unwrap_or(0);
                let counts = session.counter().count_messages(scenario.wire, &owner.transcript[..needed]);
                std::iter::once(0)
                    .chain(counts.iter().scan(0, |sum, count| {
                        *sum += count;
                        Some(*sum)
                    }))
                    .collect()
            })
            .collect();
        Self { prefix, text_tools: None }
    }

    /// The counterfactual of `call`, which `server` logged.
    fn tokens(&self, server: &RequestRecord, call: &CallRecord) -> u64 {
        let messages = match self.text_tools {
            Some((state, scenario, session)) => {
                let (transcript, _, _) = state.context_of(call);
                let rendered: Vec<Message> = reloop_agent::text_tools::render_view(transcript[..call.transcript_len].to_vec());
                session.counter().count_messages(scenario.wire, &rendered).iter().sum()
            }
            None => self.prefix[context_index(call)][call.transcript_len],
        };
        server.system_tokens + server.tools_tokens + messages + REPLY_PRIMING_TOKENS
    }
}

/// What the built-in loop knows of its run, from its own state and events.
fn kind_facts(scenario: &Scenario, state: &LoopState, steps: &[StepRow], events: &[TimedEvent]) -> KindFacts {
    // The main-loop calls (sub-agents' included): the ones with an uncompacted counterfactual.
    let answered: Vec<&StepRow> = steps.iter().filter(|s| s.input_tokens_uncompacted.is_some()).collect();
    let (compactions, compaction_fallbacks) = compaction_counts(events);
    let recorded = retention::recorded::of_run(scenario, state);
    KindFacts {
        steps_used: u64::from(state.steps_used()),
        doom_loop_detected: state.doom_loop.is_some(),
        doom_loop_first_step: state.doom_loop.as_ref().map(|d| u64::from(d.step)),
        doom_loop_kind: state.doom_loop.as_ref().map(|d| d.detected.kind.as_str().to_owned()),
        doom_loop_first_steps: DoomLoopKind::ALL.map(|kind| state.doom_loop_first_steps.iter().find(|(k, _)| *k == kind).map(|(_, step)| u64::from(*step))),
        doom_loop_expected_kind: scenario.spec.expect.doom_loop.map(|label| match (label.detected, label.kind) {
            (false, _) => "none".to_owned(),
            (true, Some(kind)) => kind.as_str().to_owned(),
            (true, None) => "any".to_owned(),
        }),
        doom_loop_onset_step: scenario.spec.expect.doom_loop.and_then(|label| label.onset_step).map(u64::from),
        compactions,
        compaction_fallbacks,
        compaction_calls: steps.iter().filter(|s| s.purpose == CallPurpose::Compaction.as_str()).count() as u64,
        breaker_tripped: events.iter().any(|e| matches!(e.event, LoopEvent::AutoCompactCircuitBreakerTripped { .. })),
        tokens_saved_recorded: RecordedCompaction::saved_over(
            &scenario.spec.recorded_compactions,
            scenario.spec.ending.map_or(state.steps_used(), |e| e.steps),
        ),
        input_tokens_uncompacted_total: Some(answered.iter().filter_map(|s| s.input_tokens_uncompacted).sum()),
        references_lost_recorded: recorded.references_lost,
        refetches_recorded: recorded.refetches,
        cache_breaks: u64::from(state.cache_breaks),
        cache_breaks_by_cause: ByCause::of(steps.iter().filter_map(|s| s.cache_break_explained.as_ref())),
        cache_lost_cost_usd: price_table::is_priced(&scenario.spec.model)
            .then(|| steps.iter().filter_map(|s| s.cache_break_explained.as_ref()?.lost_usd).sum()),
        cache_breaks_matched: steps.iter().filter(|s| s.cache_break_detected && s.cache_break_simulated).count() as u64,
        cache_break_precision: agreement(steps, |s| s.cache_break_detected, |s| s.cache_break_simulated),
        cache_break_recall: agreement(steps, |s| s.cache_break_simulated, |s| s.cache_break_detected),
        recorded: price_recorded_usage(scenario, steps, compacted(events, steps)),
        estimator_mape: mape(&answered),
        llm_retries: u64::from(state.llm_retries),
        tool_calls: u64::from(state.tool_calls),
        tool_errors: u64::from(state.tool_errors),
        max_parallel_tools: u64::from(state.max_parallel_tools),
        // Its tools are the scenario's fixtures: no shell, so no shims.
        tool_side: None,
    }
}

/// Of the calls where `claimed` holds, the share where `confirmed` holds
/// too; `None` when nothing was claimed.
fn agreement(steps: &[StepRow], claimed: fn(&StepRow) -> bool, confirmed: fn(&StepRow) -> bool) -> Option<f64> {
    let claims = steps.iter().filter(|s| claimed(s)).count();
    let confirmed = steps.iter().filter(|s| claimed(s) && confirmed(s)).count();
    (claims > 0).then(|| confirmed as f64 / claims as f64)
}

/// Mean absolute percentage error of the loop's estimate vs the server count.
fn mape(steps: &[&StepRow]) -> Option<f64> {
    let errors: Vec<f64> = steps
        .iter()
        .filter_map(|s| {
            let real = s.input_tokens.filter(|t| *t > 0)? as f64;
            Some((s.estimated_input_tokens as f64 - real).abs() / real)
        })
        .collect();
    (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64)
}

/// Compactions per layer 0–4, and the summaries (layers 3 and 4) that fell
/// back to the mechanical summary, counted apart: a fallback is not a
/// model-written summary. A mechanical edit (layers 0–2) that did not
/// shrink the request, as the server counts it, is no compaction.
fn compaction_counts(events: &[TimedEvent]) -> ([u64; 5], u64) {
    let mut counts = [0; 5];
    let mut fallbacks = 0;
    for timed in events {
        let Some(figures) = timed.event.compaction() else { continue };
        if matches!(timed.event, LoopEvent::CompactComplete { used_fallback: true, .. }) {
            fallbacks += 1;
        } else if figures.layer > 2 || figures.tokens_after < figures.tokens_before {
            counts[usize::from(figures.layer.min(4))] += 1;
        }
    }
    (counts, fallbacks)
}

/// Whether the loop edited its view or asked for a summary at all, shrinking or not.
fn compacted(events: &[TimedEvent], steps: &[StepRow]) -> bool {
    let edited = events.iter().any(|e| e.event.compaction().is_some() || matches!(e.event, LoopEvent::ReactiveCompactTriggered { .. }));
    edited || steps.iter().any(|s| s.purpose == CallPurpose::Compaction.as_str())
}

/// The loop's events, each simulated break's explanation among them
/// (`cache_break_simulated`, at its call's start).
fn event_rows(events: &[TimedEvent], steps: &[StepRow], recorded: &[RecordedCompaction], losses: Vec<EventRow>) -> Vec<EventRow> {
    let loop_rows = events.iter().map(|timed| {
        let figures = timed.event.compaction();
        EventRow {
            step: u64::from(timed.step),
            at_ms: timed.at_ms,
            kind: timed.event.kind().to_owned(),
            layer: figures.map(|f| u64::from(f.layer)),
            strategy: figures.map(|f| f.strategy.to_owned()),
            tokens_before: figures.map(|f| f.tokens_before),
            tokens_after: figures.map(|f| f.tokens_after),
            payload: serde_json::to_string(&timed.event).unwrap_or_default(),
            ..EventRow::default()
        }
    });
    let break_rows = steps.iter().filter_map(|step| {
        let explained = step.cache_break_explained.as_ref()?;
        let mut payload = serde_json::to_value(explained).unwrap_or_default();
        payload["kind"] = "cache_break_simulated".into();
        payload["call_index"] = step.call_index.into();
        let row =
            EventRow { step: step.step, at_ms: step.started_ms, kind: "cache_break_simulated".to_owned(), payload: payload.to_string(), ..EventRow::default() };
        Some(row)
    });
    let mut rows: Vec<EventRow> = loop_rows.collect();
    for row in break_rows.collect::<Vec<_>>() {
        // After the events of earlier steps and those of its step stamped before the call began.
        let after = |e: &EventRow| e.step > row.step || e.step == row.step && (e.at_ms > row.at_ms || e.kind == "llm_decision_complete");
        let at = rows.iter().position(after).unwrap_or(rows.len());
        rows.insert(at, row);
    }
    for compaction in recorded {
        let row = agent_compaction_row(compaction, steps);
        // Before the events of the step whose request followed it.
        let at = rows.iter().position(|e| e.step >= row.step).unwrap_or(rows.len());
        rows.insert(at, row);
    }
    for row in losses {
        // After the events of its step.
        let at = rows.iter().position(|e| e.step > row.step).unwrap_or(rows.len());
        rows.insert(at, row);
    }
    for (seq, row) in rows.iter_mut().enumerate() {
        row.seq = seq as u64;
    }
    rows
}

/// A compaction the recorded agent did (an imported session's), at the step
/// whose request followed it, with its real sizes: the run's report shows
/// what the agent did beside what the run's strategy did.
fn agent_compaction_row(compaction: &RecordedCompaction, steps: &[StepRow]) -> EventRow {
    let step = u64::from(compaction.after_calls) + 1;
    let payload = serde_json::json!({
        "kind": "agent_compaction",
        "strategy": "recorded",
        "tokens_before": compaction.tokens_before,
        "tokens_after": compaction.tokens_after,
        "trigger": compaction.trigger,
        "source_line": compaction.line,
        "tokens_saved": compaction.saved(),
    });
    EventRow {
        step,
        at_ms: steps.iter().find(|s| s.step == step).map_or(0, |s| s.started_ms),
        kind: "agent_compaction".to_owned(),
        strategy: Some("recorded".to_owned()),
        tokens_before: compaction.tokens_before,
        tokens_after: compaction.tokens_after,
        payload: payload.to_string(),
        ..EventRow::default()
    }
}

#[cfg(test)]
mod tests {
    use reloop_agent::event::ViewChange;

    use super::*;

    fn at(event: LoopEvent) -> TimedEvent {
        TimedEvent { step: 0, at_ms: 0, event }
    }

    fn mask(tokens_before: u64, tokens_after: u64) -> TimedEvent {
        at(LoopEvent::MicrocompactRan { strategy: "masking".into(), cleared: 1, tokens_before, tokens_after, change: ViewChange::default() })
    }

    fn summary(used_fallback: bool) -> TimedEvent {
        at(LoopEvent::CompactComplete {
            strategy: "roku".into(),
            layer: 3,
            tokens_before: 9_000,
            tokens_after: 2_000,
            used_fallback,
            change: ViewChange::default(),
        })
    }

    /// Issue 30: layer 3 counted mechanical fallbacks as model summaries, and
    /// masking passes that grew the prompt counted as layer-0 compactions.
    #[test]
    fn fallbacks_are_counted_apart_and_edits_that_did_not_shrink_are_no_compactions() {
        let events = [mask(5_000, 3_000), mask(3_000, 3_004), mask(3_004, 3_004), summary(false), summary(true), summary(true)];
        assert_eq!(compaction_counts(&events), ([1, 0, 0, 1, 0], 2));
        assert!(compacted(&events[1..2], &[]), "a pass that grew the prompt still changed what was sent");
    }
}
