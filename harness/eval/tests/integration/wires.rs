//! One recording replays over all three wire formats with the same result.

use reloop_agent::WireFormat;
use reloop_eval::{RunReport, Scenario, run_scenario};

fn tool_sequence(report: &RunReport) -> Vec<String> {
    report.events.iter().filter(|e| e.kind == "tool_start").map(|e| e.payload.clone()).collect()
}

#[test]
fn the_same_scenario_gives_the_same_run_over_every_format() {
    for name in ["read-and-edit", "ask-user", "doom-loop-warn", "long-session-microcompaction"] {
        let base = Scenario::load(&crate::bundled(name)).unwrap();
        let runs: Vec<RunReport> = WireFormat::ALL.iter().map(|wire| run_scenario(&Scenario { wire: *wire, ..base.clone() })).collect();
        for (run, wire) in runs.iter().zip(WireFormat::ALL) {
            assert_eq!(run.wire, wire.as_str(), "the report says which wire ran");
            assert!(run.passed, "{name} over {}: {:?}", run.wire, run.failed_expectations);
        }
        let first = &runs[0];
        for other in &runs[1..] {
            assert_eq!(other.outcome, first.outcome, "{name} over {}", other.wire);
            assert_eq!(other.metrics.steps_used, first.metrics.steps_used, "{name} over {}", other.wire);
            assert_eq!(tool_sequence(other), tool_sequence(first), "{name} over {}", other.wire);
            assert_eq!(other.final_answer, first.final_answer, "{name} over {}", other.wire);
            assert_eq!(other.metrics.input_tokens_total, first.metrics.input_tokens_total, "{name} over {}: counted on the same neutral prompt", other.wire);
        }
    }
}
