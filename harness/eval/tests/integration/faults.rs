//! Injected provider faults end to end: what the loop does with each, how
//! often it retries, and that its waits run in virtual time.

use reloop_agent::Outcome;
use reloop_eval::RunReport;

use crate::loop_behaviour::run_inline;

const TWO_TURNS: &str = "  - tool_calls: [ { name: read_file, arguments: { path: a } } ]\n    timing: { first_byte_ms: 100, chunk_ms: 1 }\n  - text: The file says hello, and that is all it says.\n";
const READ: &str = "tools:\n  read_file: { description: read, results: [ { output: hello } ] }\n";

fn with_faults(faults: &str) -> RunReport {
    run_inline(&format!("{READ}faults:\n{faults}"), TWO_TURNS)
}

fn retry_waits(report: &RunReport) -> Vec<u64> {
    report
        .events
        .iter()
        .filter(|e| e.kind == "llm_retry")
        .map(|e| serde_json::from_str::<serde_json::Value>(&e.payload).unwrap()["wait_ms"].as_u64().unwrap())
        .collect()
}

fn call_errors(report: &RunReport) -> Vec<&str> {
    report.steps.iter().filter_map(|s| s.error.as_deref()).collect()
}

#[test]
fn rate_limit_waits_what_the_provider_asks() {
    let report = with_faults("  - { exchange: 1, http: { status: 429, headers: { retry-after: \"3\" } } }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.metrics.llm_retries, 1);
    assert_eq!(retry_waits(&report), [3_000]);
    assert_eq!(call_errors(&report), ["rate_limited"]);
    assert!(report.metrics.wall_ms < 3_000, "the wait was virtual");
    assert_eq!(report.metrics.steps_used, 2, "a retry is not a step");
    assert_eq!(report.metrics.llm_calls, 3);
}

#[test]
fn retry_after_as_an_http_date_is_measured_on_the_runs_clock() {
    // The run's clock starts at 2026-01-01T00:00:00Z; the first call takes 100 ms.
    let report = with_faults("  - { exchange: 1, http: { status: 429, headers: { retry-after: \"Thu, 01 Jan 2026 00:00:10 GMT\" } } }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    let wait = retry_waits(&report)[0];
    assert!((9_800..=10_000).contains(&wait), "{wait}");
}

#[test]
fn overload_backs_off_exponentially_until_retries_run_out() {
    let report = with_faults("  - { exchange: 0, times: 6, http: { status: 529 } }\n");
    assert_eq!(report.outcome, Outcome::LlmError);
    assert_eq!(report.metrics.llm_retries, 5);
    assert_eq!(retry_waits(&report), [2_000, 4_000, 8_000, 16_000, 30_000]);
    assert!(report.metrics.virtual_ms >= 60_000, "{}", report.metrics.virtual_ms);
    assert_eq!(call_errors(&report), ["overloaded"; 6]);
}

#[test]
fn server_errors_are_retried() {
    let report = with_faults("  - { exchange: 0, http: { status: 500 } }\n  - { exchange: 1, http: { status: 503 } }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(call_errors(&report), ["server_error", "server_error"]);
}

#[test]
fn a_cut_stream_is_retried() {
    let report = with_faults("  - { exchange: 1, cut_after_events: 2 }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(call_errors(&report), ["stream_ended_early"]);
}

#[test]
fn a_long_stall_times_out_in_virtual_time() {
    let report = with_faults("  - { exchange: 1, stall: { after_events: 2, seconds: 400 } }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(call_errors(&report), ["stream_idle"]);
    assert!(report.metrics.virtual_ms >= 300_000, "waited the 300 s idle limit: {}", report.metrics.virtual_ms);
    assert!(report.metrics.virtual_ms < 400_000, "but not the whole stall: {}", report.metrics.virtual_ms);
}

#[test]
fn a_short_stall_is_only_slow() {
    let report = with_faults("  - { exchange: 1, stall: { after_events: 2, seconds: 20 } }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.metrics.llm_retries, 0);
    assert!(report.metrics.virtual_ms >= 20_000);
}

#[test]
fn a_garbled_line_is_retried() {
    let report = with_faults("  - { exchange: 1, garble_after_events: 1 }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(call_errors(&report), ["protocol"]);
}

#[test]
fn an_in_stream_overload_is_retried() {
    let report = with_faults("  - { exchange: 1, stream_error: overloaded }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.metrics.llm_retries, 1);
}

#[test]
fn truncated_arguments_reach_the_model_as_a_tool_error() {
    let report = with_faults("  - { exchange: 0, truncate_arguments: true }\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.metrics.llm_retries, 0);
    assert_eq!(report.metrics.tool_errors, 1);
    let end = report.events.iter().find(|e| e.kind == "tool_end").unwrap();
    assert!(end.payload.contains("not valid JSON"), "{}", end.payload);
}

#[test]
fn a_context_length_error_is_never_retried() {
    let report = with_faults("  - { exchange: 1, context_length_exceeded: true }\n");
    assert_eq!(report.outcome, Outcome::ContextExceeded);
    assert_eq!(report.metrics.llm_retries, 0);
}

#[test]
fn a_length_finish_escalates_the_output_slot() {
    let report = run_inline(
        "loop: { max_output_tokens: 50 }\n",
        "  - { text: \"The migration plan has three\", finish_reason: length }\n  - text: The migration plan has three phases, each reversible.\n",
    );
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.final_answer.as_deref(), Some("The migration plan has three phases, each reversible."));
    let escalation = report.events.iter().find(|e| e.kind == "output_slot_escalated").unwrap();
    assert!(escalation.payload.contains("\"from\":50,\"to\":16384"), "{}", escalation.payload);
    assert_eq!(report.steps[1].purpose, "escalation");
    assert_eq!(report.metrics.steps_used, 1);
}

#[test]
fn a_failed_request_check_is_a_divergence_with_a_diff() {
    let report =
        run_inline(READ, "  - tool_calls: [ { name: read_file, arguments: { path: a } } ]\n  - expect: { tool_result_contains: [goodbye] }\n    text: done\n");
    assert_eq!(report.outcome, Outcome::Divergence);
    let divergence = report.metrics.first_divergence.as_deref().unwrap();
    assert_eq!(
        divergence,
        "divergence at request 1 (expect.tool_result_contains):\n  expected: a tool result containing \"goodbye\"\n  actual:   1 tool results, none containing it: [\"hello\"]"
    );
}
