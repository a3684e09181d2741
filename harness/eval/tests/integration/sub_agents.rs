//! `Agent` sub-agents end to end: the child's requests reach the same
//! session and land in the report as children of the parent's step.

use reloop_agent::Outcome;
use reloop_eval::{Scenario, run_scenario};

use super::bundled;
use super::loop_behaviour::run_inline;

#[test]
fn a_sub_agents_calls_are_children_of_the_parent_step() {
    let report = run_scenario(&Scenario::load(&bundled("sub-agent")).unwrap());
    assert!(report.passed, "{:?}", report.failed_expectations);
    let depths: Vec<u64> = report.steps.iter().map(|s| s.agent_depth).collect();
    assert_eq!(depths, [0, 1, 1, 1, 0]);
    let child = &report.steps[1];
    assert_eq!((child.parent_step, child.parent_call_id.as_deref()), (Some(0), Some("call_000_0")));
    assert_eq!(child.step, 0, "the child counts its own steps");
    assert_eq!(report.steps[4].parent_step, None);
    assert_eq!(report.metrics.steps_used, 2, "the child's decisions are not the parent's steps");
    assert!(report.steps.iter().all(|s| s.input_tokens_uncompacted == s.input_tokens), "nothing compacted, so the counterfactual is what was sent");
    let kinds: Vec<&str> = report.events.iter().map(|e| e.kind.as_str()).collect();
    let started = kinds.iter().position(|k| *k == "sub_agent_started").unwrap();
    let finished = kinds.iter().position(|k| *k == "sub_agent_finished").unwrap();
    assert!(kinds[started..finished].contains(&"tool_start"), "the child's events sit between its start and end");
    assert_eq!(kinds.iter().filter(|k| **k == "loop_finished").count(), 1, "only the parent's end is reported");
}

#[test]
fn a_sub_agent_past_its_timeout_is_stopped_at_the_timeout() {
    let report = run_scenario(&Scenario::load(&bundled("sub-agent-timeout")).unwrap());
    assert!(report.passed, "{:?}", report.failed_expectations);
    let finished = report.events.iter().find(|e| e.kind == "sub_agent_finished").unwrap();
    assert!(finished.payload.contains("\"timed_out\":true") && finished.payload.contains("\"elapsed_ms\":120000"), "{}", finished.payload);
    assert_eq!(report.steps.iter().filter(|s| s.agent_depth == 1).count(), 1, "the child's one request stays in the report");
}

#[test]
fn a_sub_agent_cannot_start_another() {
    let scenario = "loop: { sub_agent: { enabled: true } }\ntools:\n  read_file:\n    description: read\n    results: [ { output: contents } ]\n";
    let exchanges = "  - tool_calls: [ { name: Agent, arguments: { prompt: go deeper } } ]\n\
                     \x20 - { sub_agent: true, tool_calls: [ { name: Agent, arguments: { prompt: deeper still } } ] }\n\
                     \x20 - { sub_agent: true, expect: { tool_result_contains: [\"depth limit 1\"] }, text: cannot }\n\
                     \x20 - { expect: { tool_result_contains: [cannot] }, text: done }\n";
    let report = run_inline(scenario, exchanges);
    assert_eq!(report.outcome, Outcome::FinalAnswer, "{:?} {:?}", report.failed_expectations, report.metrics.first_divergence);
}

#[test]
fn a_sub_agents_compactions_are_priced_from_its_own_requests() {
    let body = "pub fn check(v: &[u32]) -> bool { v.windows(2).all(|w| w[0] <= w[1]) }\n".repeat(28);
    let scenario = format!(
        "loop: {{ sub_agent: {{ enabled: true }}, strategy: masking, strategies: {{ masking: {{ keep: 1 }} }} }}\n\
         tools:\n  read_file:\n    description: read\n    results: [ {{ output: {body:?} }} ]\n"
    );
    let reads: String =
        (0..4).map(|i| format!("  - {{ sub_agent: true, tool_calls: [ {{ name: read_file, arguments: {{ path: src/m{i}.rs }} }} ] }}\n")).collect();
    let exchanges = format!(
        "  - tool_calls: [ {{ name: Agent, arguments: {{ prompt: read them all }} }} ]\n{reads}  - {{ sub_agent: true, text: all consistent }}\n  - text: done\n"
    );
    let report = run_inline(&scenario, &exchanges);
    assert_eq!(report.outcome, Outcome::FinalAnswer, "{:?} {:?}", report.failed_expectations, report.metrics.first_divergence);
    // Before the child's first mask its view is its whole transcript: the
    // call that follows, uncompacted; after it, that call as sent.
    let first = report.events.iter().find(|e| e.kind == "microcompact_ran").expect("the child masks");
    let masked_call = report.steps.iter().find(|s| s.input_tokens != s.input_tokens_uncompacted).unwrap();
    assert_eq!(masked_call.agent_depth, 1);
    assert_eq!((first.tokens_before, first.tokens_after), (masked_call.input_tokens_uncompacted, masked_call.input_tokens));
}
