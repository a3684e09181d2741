//! Issue 14's cost check on a real recorded Anthropic session: pi on
//! claude-opus-4-5, 32 calls, every one with the provider's usage and pi's
//! own cost. Replaying the recorded usage must price within 10 % of what
//! pi recorded as paid (it prices to the cent: both use the same rates).

use reloop_eval::result::CostSource;
use reloop_eval::{Scenario, run_scenario};

use super::bundled;

const SESSION: &str = "imported/pi-mono-compact-2638daee-first-65-lines";

#[test]
fn a_recorded_anthropic_session_replayed_prices_within_10_percent_of_its_recorded_cost() {
    let report_file = bundled(SESSION).with_extension("import.json");
    let import: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(report_file).unwrap()).unwrap();
    let recorded = import["cost_recorded_usd"].as_f64().unwrap();
    let report = run_scenario(&Scenario::load(&bundled(SESSION)).unwrap());
    assert!(report.passed, "{:?}", report.failed_expectations);
    assert_eq!(report.metrics.cost_source, CostSource::Recorded);
    let priced = report.metrics.estimated_cost_usd.unwrap();
    let error = (priced - recorded).abs() / recorded;
    assert!(error <= 0.10, "priced ${priced:.4} against ${recorded:.4} recorded: {:.1} % off", error * 100.0);
}
