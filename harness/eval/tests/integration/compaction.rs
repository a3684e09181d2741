//! Compaction layers, the circuit breaker, the reactive path and the named
//! strategies, each on a small generated session whose pressure is tuned to
//! reach exactly the behaviour under test.

use reloop_agent::Outcome;
use reloop_eval::RunReport;

use crate::loop_behaviour::run_inline;

/// `rounds` tool rounds, each with chatty assistant text and a 2 KB result,
/// then a final answer; `compaction` adds compaction exchanges.
fn session(rounds: usize, compaction: &str) -> String {
    let text = "I am checking the next module for the failing invariant; the previous one looked consistent with the spec. ".repeat(5);
    let mut exchanges: String =
        (0..rounds).map(|i| format!("  - text: \"{text}\"\n    tool_calls: [ {{ name: read_file, arguments: {{ path: src/m{i}.rs }} }} ]\n")).collect();
    exchanges.push_str("  - text: Found it in the last module.\n");
    exchanges.push_str(compaction);
    exchanges
}

fn tools() -> String {
    let body = "pub fn check(v: &[u32]) -> bool { v.windows(2).all(|w| w[0] <= w[1]) }\n".repeat(28);
    format!("tools:\n  read_file:\n    description: read\n    results: [ {{ output: {body:?} }} ]\n")
}

fn run(settings: &str, rounds: usize, compaction: &str) -> RunReport {
    run_exchanges(settings, &session(rounds, compaction))
}

fn run_exchanges(settings: &str, exchanges: &str) -> RunReport {
    run_inline(&format!("context_window: 20000\nloop:\n  step_budget: 40\n{settings}\n{}", tools()), exchanges)
}

fn kinds(report: &RunReport, kind: &str) -> usize {
    report.events.iter().filter(|e| e.kind == kind).count()
}

const SUMMARY: &str = "  - purpose: compaction\n    reusable: true\n    text: The agent read modules m0 onwards; all were consistent so far.\n";

#[test]
fn layer1_collapses_old_rounds_above_mid_water() {
    let report = run("  strategies: { roku: { microcompact_retain: 100, mid_water_ratio: 0.10, high_water_ratio: 0.99, keep_recent_rounds: 2 } }", 8, "");
    assert_eq!(report.outcome, Outcome::FinalAnswer, "{:?}", report.failed_expectations);
    assert!(report.metrics.compactions[1] >= 1, "{:?}", report.metrics.compactions);
    let event = report.events.iter().find(|e| e.kind == "mid_compact_layer1_ran").unwrap();
    assert!(event.tokens_after.unwrap() < event.tokens_before.unwrap());
    assert_eq!(event.strategy.as_deref(), Some("roku"));
}

#[test]
fn layer2_replaces_older_history_with_session_memory() {
    let report = run("  strategies: { roku: { microcompact_retain: 100, mid_water_ratio: 0.02, high_water_ratio: 0.99, keep_recent_rounds: 2 } }", 8, "");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert!(report.metrics.compactions[2] >= 1, "{:?}", report.metrics.compactions);
    assert!(report.metrics.tokens_saved_total > 0);
}

#[test]
fn layer3_asks_the_model_for_a_summary_from_the_recording() {
    // The last main request must carry the summary, or the server diverges.
    let exchanges =
        session(8, SUMMARY).replace("  - text: Found it", "  - expect: { message_contains: [\"The agent read modules m0 onwards\"] }\n    text: Found it");
    let report =
        run_exchanges("  strategies: { roku: { microcompact_retain: 100, mid_water_ratio: 0.04, high_water_ratio: 0.05, keep_recent_rounds: 2 } }", &exchanges);
    assert_eq!(report.outcome, Outcome::FinalAnswer, "{:?} {:?}", report.failed_expectations, report.metrics.first_divergence);
    assert!(report.metrics.compactions[3] >= 1, "{:?}", report.metrics.compactions);
    assert!(report.metrics.compaction_calls >= 1);
    let complete = report.events.iter().find(|e| e.kind == "compact_complete").unwrap();
    assert!(complete.payload.contains("\"used_fallback\":false"), "{}", complete.payload);
    assert_eq!(report.steps.iter().filter(|s| s.purpose == "compaction").count() as u64, report.metrics.compaction_calls);
    assert_eq!(report.metrics.steps_used, 9, "summaries are not steps");
}

/// Issue 30: the summary calls were left out of the input, output and cost
/// totals, so a strategy paying for summaries looked cheaper than it was.
#[test]
fn totals_count_the_summary_calls_and_break_down_by_purpose() {
    let exchanges =
        session(8, SUMMARY).replace("  - text: Found it", "  - expect: { message_contains: [\"The agent read modules m0 onwards\"] }\n    text: Found it");
    let report =
        run_exchanges("  strategies: { roku: { microcompact_retain: 100, mid_water_ratio: 0.04, high_water_ratio: 0.05, keep_recent_rounds: 2 } }", &exchanges);
    assert!(report.metrics.compaction_calls >= 1);
    let answered: Vec<_> = report.steps.iter().filter(|s| s.output_tokens.is_some()).collect();
    let summaries: Vec<_> = answered.iter().filter(|s| s.purpose == "compaction").collect();
    let m = &report.metrics;
    assert_eq!(m.input_tokens_total, answered.iter().map(|s| s.input_tokens.unwrap()).sum::<u64>());
    assert_eq!(m.output_tokens_total, answered.iter().map(|s| s.output_tokens.unwrap()).sum::<u64>());
    let compaction = m.by_share[reloop_eval::call_shares::Share::COMPACTION.index()];
    assert_eq!(compaction.input_tokens, summaries.iter().map(|s| s.input_tokens.unwrap()).sum::<u64>());
    assert!(compaction.input_tokens > 0 && compaction.estimated_cost_usd.unwrap() > 0.0);
    assert_eq!(m.by_share.iter().map(|s| s.input_tokens).sum::<u64>(), m.input_tokens_total);
    let share_cost: f64 = m.by_share.iter().map(|s| s.estimated_cost_usd.unwrap()).sum();
    assert!((share_cost - m.estimated_cost_usd.unwrap()).abs() < 1e-9, "{share_cost} against {:?}", m.estimated_cost_usd);
}

#[test]
fn a_failing_summary_falls_back_and_three_trip_the_breaker() {
    // Every summary stalls past the 300 s limit. Default retries: nothing may
    // run past the deadline (a regression once sent 5 retries per summary).
    let compaction_exchange = 9;
    let report = run(
        &format!(
            "  strategies: {{ roku: {{ microcompact_retain: 100, mid_water_ratio: 0.04, high_water_ratio: 0.05, keep_recent_rounds: 2 }} }}\nfaults:\n  - {{ exchange: {compaction_exchange}, times: 100, stall: {{ after_events: 1, seconds: 400 }} }}"
        ),
        8,
        SUMMARY,
    );
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert!(report.metrics.breaker_tripped);
    assert_eq!(kinds(&report, "auto_compact_circuit_breaker_tripped"), 1);
    assert_eq!(report.metrics.compaction_calls, 3, "after the breaker trips, no more summary calls");
    assert_eq!(report.metrics.llm_retries, 0, "a timed-out summary is not retried past its deadline");
    let completes: Vec<_> = report.events.iter().filter(|e| e.kind == "compact_complete").collect();
    assert!(completes.len() > 3, "compaction went on mechanically: {}", completes.len());
    assert!(completes.iter().all(|e| e.payload.contains("\"used_fallback\":true")));
    // Issue 30: layer 3 counted these fallbacks as model-written summaries.
    assert_eq!(report.metrics.compactions[3], 0, "no summary was written by the model");
    assert_eq!(report.metrics.compaction_fallbacks, completes.len() as u64);
}

#[test]
fn a_context_error_compacts_reactively_and_retries_once() {
    let report = run("  strategy: roku\nfaults:\n  - { exchange: 6, context_length_exceeded: true }", 8, SUMMARY);
    assert_eq!(report.outcome, Outcome::FinalAnswer, "{:?}", report.error);
    assert_eq!(kinds(&report, "reactive_compact_triggered"), 1);
    assert_eq!(report.metrics.compactions[4], 1);
}

#[test]
fn a_second_context_error_ends_the_run() {
    let report = run("  strategy: roku\nfaults:\n  - { exchange: 6, times: 2, context_length_exceeded: true }", 8, SUMMARY);
    assert_eq!(report.outcome, Outcome::ContextExceeded);
    assert_eq!(kinds(&report, "reactive_compact_triggered"), 1);
}

#[test]
fn without_a_strategy_nothing_is_compacted() {
    let report = run("  strategy: none", 8, "");
    assert_eq!(report.metrics.compactions, [0; 5]);
    assert_eq!(report.metrics.tokens_saved_total, 0);
    let none = run("  strategy: none\nfaults:\n  - { exchange: 3, context_length_exceeded: true }", 8, "");
    assert_eq!(none.outcome, Outcome::ContextExceeded, "no reactive path either");
}

#[test]
fn masking_keeps_the_last_observations() {
    let report = run("  strategy: masking\n  strategies: { masking: { keep: 3 } }", 8, "");
    assert!(report.metrics.compactions[0] >= 1);
    assert!(report.metrics.tokens_saved_total > 0);
    let batched = run("  strategy: masking\n  strategies: { masking: { keep: 3, batch: 3 } }", 8, "");
    assert!(batched.metrics.compactions[0] < report.metrics.compactions[0], "batches mask less often");
}

#[test]
fn codex_summarizes_at_its_threshold() {
    let report = run("  strategy: codex\n  strategies: { codex: { auto_compact_ratio: 0.1 } }", 8, SUMMARY);
    assert_eq!(report.outcome, Outcome::FinalAnswer, "{:?}", report.metrics.first_divergence);
    assert!(report.metrics.compactions[3] >= 1);
}

#[test]
fn opencode_prunes_beyond_its_protected_tokens() {
    let report =
        run("  strategy: opencode\n  strategies: { opencode: { prune_protect_tokens: 1000, prune_minimum_tokens: 500, protected_user_turns: 0 } }", 8, "");
    assert!(report.metrics.compactions[0] >= 1, "{:?}", report.metrics.compactions);
    let strict = run("  strategy: opencode", 8, "");
    assert_eq!(strict.metrics.compactions, [0; 5], "default protection: nothing to prune in a short session");
}

/// The main request of `step` (summaries aside): its server count.
fn sent_at(report: &RunReport, step: u64) -> Option<u64> {
    report.steps.iter().find(|s| s.step == step && s.purpose != "compaction").and_then(|s| s.input_tokens)
}

#[test]
fn a_compactions_figures_are_the_server_counts_of_the_requests_around_it() {
    // The first mask: before it, the view is what a run without compaction
    // sends at that step; after it, what this run sends.
    let masked = run("  strategy: masking\n  strategies: { masking: { keep: 3 } }", 8, "");
    let plain = run("  strategy: none", 8, "");
    let first = masked.events.iter().find(|e| e.kind == "microcompact_ran").unwrap();
    let same_step: Vec<_> = masked.events.iter().filter(|e| e.step == first.step && e.tokens_after.is_some()).collect();
    assert_eq!(first.tokens_before, sent_at(&plain, first.step));
    assert_eq!(same_step.last().unwrap().tokens_after, sent_at(&masked, first.step));
    assert!(first.tokens_after < first.tokens_before);

    // Reactive: before is the request the server rejected, after its retry.
    let reactive = run("  strategy: roku\nfaults:\n  - { exchange: 6, context_length_exceeded: true }", 8, SUMMARY);
    let rejected = reactive.steps.iter().find(|s| s.server_result.as_deref() == Some("fault:context_length_exceeded")).unwrap();
    let retry = reactive.steps.iter().find(|s| s.call_index > rejected.call_index && s.purpose != "compaction").unwrap();
    let triggered = reactive.events.iter().find(|e| e.kind == "reactive_compact_triggered").unwrap();
    assert!(triggered.payload.contains(&format!("\"tokens_before\":{}}}", rejected.input_tokens.unwrap())), "{}", triggered.payload);
    let complete = reactive.events.iter().find(|e| e.kind == "compact_complete" && e.layer == Some(4)).unwrap();
    assert_eq!((complete.tokens_before, complete.tokens_after), (rejected.input_tokens, retry.input_tokens));
}
