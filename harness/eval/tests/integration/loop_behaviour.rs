//! Loop behaviour end to end, each from a small inline scenario, each
//! pinning a bug once found (named after it) or a rule of the seeds.

use reloop_agent::Outcome;
use reloop_eval::{RunReport, Scenario, run_scenario};

/// Runs a scenario whose recording is `recording` (YAML exchanges).
pub fn run_inline(scenario: &str, exchanges: &str) -> RunReport {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.yaml"), format!("format: reloop.recording/v1\nexchanges:\n{exchanges}")).unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, format!("model: gpt-4o\nsystem: s\ntask: t\nrecording: r.yaml\n{scenario}")).unwrap();
    run_scenario(&Scenario::load(&file).unwrap())
}

const READ_TOOL: &str = "tools:\n  read_file:\n    description: read\n    results: [ { output: contents } ]\n";

#[test]
fn final_answer_on_the_last_budget_turn_is_an_answer() {
    let report = run_inline(
        &format!("loop: {{ step_budget: 2 }}\n{READ_TOOL}"),
        "  - tool_calls: [ { name: read_file, arguments: { path: src/main.rs } } ]\n  - tool_calls: [ { name: final_answer, arguments: { answer: main is empty } } ]\n",
    );
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.final_answer.as_deref(), Some("main is empty"));
}

#[test]
fn a_tool_call_on_the_last_budget_turn_exhausts_the_budget() {
    let report = run_inline(
        &format!("loop: {{ step_budget: 2 }}\n{READ_TOOL}"),
        "  - tool_calls: [ { name: read_file, arguments: { path: a } } ]\n  - tool_calls: [ { name: read_file, arguments: { path: b } } ]\n",
    );
    assert_eq!(report.outcome, Outcome::StepBudgetExhausted);
    assert_eq!(report.steps.last().unwrap().purpose, "final_turn");
    assert_eq!(report.metrics.tool_calls, 1, "the last turn's call is not executed");
}

#[test]
fn doom_loop_sees_through_path_spelling() {
    let report = run_inline(
        &format!("loop: {{ doom_loop: {{ reaction: stop }} }}\n{READ_TOOL}"),
        "  - tool_calls: [ { name: read_file, arguments: { path: ./src/a.rs } } ]\n  - tool_calls: [ { name: read_file, arguments: { path: src/a.rs } } ]\n  - tool_calls: [ { name: read_file, arguments: { path: src/./a.rs } } ]\n",
    );
    assert_eq!(report.outcome, Outcome::DoomLoopStopped);
    assert_eq!(report.metrics.doom_loop_first_step, Some(2));
}

#[test]
fn microcompaction_never_grows_the_prompt() {
    let exchanges: String = (0..4)
        .map(|i| format!("  - tool_calls: [ {{ name: grep, arguments: {{ pattern: p{i} }} }} ]\n"))
        .chain(std::iter::once("  - text: nothing found\n".to_owned()))
        .collect();
    let report = run_inline("tools:\n  grep:\n    description: grep\n    results: [ { output: \"\" } ]\n", &exchanges);
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.metrics.tokens_saved_total, 0, "{:?}", report.metrics);
    assert_eq!(report.metrics.input_tokens_total, report.metrics.input_tokens_uncompacted_total);
}

#[test]
fn microcompaction_saves_what_it_clears() {
    let big = "x".repeat(4000);
    let exchanges: String = (0..5)
        .map(|i| format!("  - tool_calls: [ {{ name: cat, arguments: {{ file: f{i} }} }} ]\n"))
        .chain(std::iter::once("  - text: done\n".to_owned()))
        .collect();
    let report = run_inline(&format!("tools:\n  cat:\n    description: cat\n    results: [ {{ output: {big} }} ]\n"), &exchanges);
    let m = &report.metrics;
    assert!(m.tokens_saved_total > 0, "{m:?}");
    assert_eq!(m.tokens_saved_total, m.input_tokens_uncompacted_total as i64 - m.input_tokens_total as i64);
    assert_eq!(m.compactions[0], 2, "results 1 and 2 are cleared when results 4 and 5 arrive");
}

#[test]
fn paths_outside_the_workspace_never_reach_the_tool() {
    let report = run_inline(
        "tools:\n  read_file:\n    description: read\n    results: [ { output: root:x:0:0 } ]\n",
        "  - tool_calls: [ { name: read_file, arguments: { path: ../../etc/passwd } } ]\n  - text: I cannot read that.\n",
    );
    assert_eq!(report.metrics.tool_errors, 1);
    let end = report.events.iter().find(|e| e.kind == "tool_end").unwrap();
    assert!(end.payload.contains("escapes the workspace"), "{}", end.payload);
}

#[test]
fn a_changed_system_prompt_is_a_cache_break_once_the_prompt_is_cacheable() {
    // Step 0's prompt is too short to cache (a change after it breaks
    // nothing, for the server as for the detector); step 1's carries a
    // 1,500-word result, so the system change at step 2 breaks it.
    let long_output = "word ".repeat(1_500);
    let report = run_inline(
        &format!(
            "system_changes: [ {{ from_step: 2, system: s2 }} ]\ntools:\n  read_file:\n    description: read\n    results: [ {{ output: \"{long_output}\" }} ]\n"
        ),
        "  - tool_calls: [ { name: read_file, arguments: { path: a } } ]\n  - tool_calls: [ { name: read_file, arguments: { path: b } } ]\n  - text: ok\n",
    );
    assert_eq!(report.metrics.cache_breaks, 1);
    assert_eq!((report.metrics.cache_break_precision, report.metrics.cache_break_recall), (Some(1.0), Some(1.0)));
    let event = report.events.iter().find(|e| e.kind == "cache_break_detected").unwrap();
    assert_eq!(event.step, 2);
    assert!(event.payload.contains("\"system\""), "{}", event.payload);
    assert_eq!(report.steps[2].cache_break_causes.as_deref(), Some("system"));
}

#[test]
fn a_scripted_reply_answers_ask_user() {
    let report =
        run_inline("user_replies: [ use tabs ]\n", "  - tool_calls: [ { name: ask_user, arguments: { question: tabs or spaces? } } ]\n  - text: Using tabs.\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert!(report.events.iter().any(|e| e.kind == "user_replied" && e.payload.contains("use tabs")));
}

#[test]
fn the_context_window_is_enforced_by_the_server() {
    let report = run_inline("context_window: 50\n", "  - text: never sent\n");
    assert_eq!(report.outcome, Outcome::ContextExceeded);
    assert_eq!(report.steps[0].server_result.as_deref(), Some("context_length_exceeded"));
    assert!(report.error.as_deref().unwrap().contains("maximum context length is 50 tokens"), "{:?}", report.error);
}

/// Three one-second reads in one batch, scheduled by `mode`.
fn three_reads(mode: &str, extra: &str) -> RunReport {
    run_inline(
        &format!(
            "loop: {{ tool_execution: {mode} }}\ntools:\n  read_file:\n    description: read\n    parallel_safe: true\n    latency_ms: 1000\n    results: [ {{ output: text }} ]\n  edit_file:\n    description: edit\n    risk: write\n    results: [ {{ output: edited }} ]\n{extra}"
        ),
        "  - tool_calls:\n      - { name: read_file, arguments: { path: a } }\n      - { name: read_file, arguments: { path: b } }\n      - { name: read_file, arguments: { path: c } }\n  - text: read all three\n",
    )
}

#[test]
fn parallel_safe_tools_overlap_in_virtual_time() {
    let serial = three_reads("serial", "");
    let parallel = three_reads("parallel", "");
    assert_eq!(serial.metrics.max_parallel_tools, 1);
    assert_eq!(parallel.metrics.max_parallel_tools, 3);
    assert_eq!(serial.metrics.virtual_ms - parallel.metrics.virtual_ms, 2_000, "3 s of reads become 1 s");
    let ends: Vec<&str> = parallel.events.iter().filter(|e| e.kind == "tool_end").map(|e| e.payload.as_str()).collect();
    assert!(ends[0].contains("call_000_0") && ends[1].contains("call_000_1") && ends[2].contains("call_000_2"), "results keep call order");
}

#[test]
fn auto_mode_is_serial_when_a_call_needs_approval() {
    let report = run_inline(
        "loop: { tool_execution: auto }\ntools:\n  read_file: { description: read, parallel_safe: true, results: [ { output: text } ] }\n  edit_file: { description: edit, parallel_safe: true, risk: write, results: [ { output: edited } ] }\n",
        "  - tool_calls:\n      - { name: read_file, arguments: { path: a } }\n      - { name: edit_file, arguments: { path: a } }\n  - text: done\n",
    );
    assert_eq!(report.metrics.max_parallel_tools, 1);
    assert_eq!(three_reads("auto", "").metrics.max_parallel_tools, 3, "no approval needed: parallel");
}

#[test]
fn a_denied_call_tells_the_model_and_the_loop_goes_on() {
    let report = run_inline(
        "approvals: { edit_file: deny }\ntools:\n  edit_file: { description: edit, risk: write, results: [ { output: edited } ] }\n",
        "  - tool_calls: [ { name: edit_file, arguments: { path: a } } ]\n  - text: I was not allowed to edit.\n",
    );
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.metrics.tool_errors, 1);
    assert!(report.events.iter().any(|e| e.kind == "tool_denied"));
    let end = report.events.iter().find(|e| e.kind == "tool_end").unwrap();
    assert!(end.payload.contains("denied by the user"), "{}", end.payload);
}

#[test]
fn steering_skips_the_rest_of_the_batch() {
    let report = three_reads("serial", "steering: [ { after_tool_calls: 1, message: stop reading and summarize } ]\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer, "{:?}", report.failed_expectations);
    assert_eq!(report.metrics.tool_calls, 1, "two calls were skipped");
    let steer = report.events.iter().find(|e| e.kind == "steering_queued").unwrap();
    assert!(steer.payload.contains("\"skipped_calls\":2"), "{}", steer.payload);
    // The second request answered every call (else: a divergence) and ends with the steering message.
    assert_eq!(report.steps[1].request_messages, Some(7), "system, task, assistant, 3 results, steering");
}

#[test]
fn a_follow_up_restarts_a_finished_loop() {
    let report = run_inline("follow_ups: [ now in French ]\n", "  - text: The answer is 42.\n  - text: La réponse est 42.\n");
    assert_eq!(report.outcome, Outcome::FinalAnswer);
    assert_eq!(report.metrics.steps_used, 2);
    assert_eq!(report.final_answer.as_deref(), Some("La réponse est 42."));
    assert!(report.events.iter().any(|e| e.kind == "follow_up_queued"));
}

#[test]
fn an_interrupted_tool_reports_aborted_and_the_run_is_cancelled() {
    let report = run_inline(
        "interrupt: { during_tool_call: 0, after_ms: 1500 }\ntools:\n  run_tests: { description: test, latency_ms: 60000, results: [ { output: ok } ] }\n",
        "  - tool_calls: [ { name: run_tests, arguments: {} } ]\n  - text: never reached\n",
    );
    assert_eq!(report.outcome, Outcome::Cancelled);
    let end = report.events.iter().find(|e| e.kind == "tool_end").unwrap();
    assert!(end.payload.contains("aborted by the user after 1.5s"), "{}", end.payload);
    assert!(report.metrics.virtual_ms < 60_000, "the run did not wait for the tool: {}", report.metrics.virtual_ms);
}

#[test]
fn the_estimate_is_calibrated_from_reported_usage() {
    let listing: String = (0..60).map(|i| format!("{{\"id\":{i},\"sha\":\"4f0c2d9b{i:04}\",\"size\":{}}}", i * 977)).collect();
    let exchanges: String = (0..6)
        .map(|i| format!("  - tool_calls: [ {{ name: ls, arguments: {{ dir: d{i} }} }} ]\n"))
        .chain(std::iter::once("  - text: done\n".to_owned()))
        .collect();
    let report = run_inline(&format!("tools:\n  ls:\n    description: ls\n    results: [ {{ output: '{listing}' }} ]\n"), &exchanges);
    let calibrated: Vec<&str> = report.events.iter().filter(|e| e.kind == "estimator_calibrated").map(|e| e.payload.as_str()).collect();
    assert!(!calibrated.is_empty() && calibrated[0].contains("\"scale\""), "{calibrated:?}");
    let last = report.steps.last().unwrap();
    let real = last.input_tokens.unwrap() as f64;
    let error = (last.estimated_input_tokens as f64 - real).abs() / real;
    assert!(error <= 0.05, "calibrated estimate {} vs {real}", last.estimated_input_tokens);
}
