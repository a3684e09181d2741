//! Deferred tools behind `tool_search`, end to end.

use reloop_eval::{Scenario, run_scenario};

use super::bundled;

#[test]
fn a_discovered_tool_is_declared_next_and_the_break_is_the_schemas() {
    let report = run_scenario(&Scenario::load(&bundled("deferred-tools")).unwrap());
    assert!(report.passed, "{:?} {:?}", report.failed_expectations, report.metrics.first_divergence);
    let causes: Vec<Option<&str>> = report.steps.iter().map(|s| s.cache_break_causes.as_deref()).collect();
    assert_eq!(causes, [None, Some("tools"), None]);
    assert!(report.steps[1].cache_break_simulated, "the server's cache saw the same break");
    let discovered = report.events.iter().find(|e| e.kind == "tools_discovered").unwrap();
    assert!(discovered.payload.contains("\"tools\":[\"query_sql\"]"), "{}", discovered.payload);
    assert_eq!(report.steps[1].input_tokens_uncompacted, report.steps[1].input_tokens, "priced with the tools it declared");
}
