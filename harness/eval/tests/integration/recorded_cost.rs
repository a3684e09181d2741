//! Issue 14's cost checks on a real recorded Anthropic session: pi on
//! claude-opus-4-5, 32 calls, every one with the provider's usage and pi's
//! own cost. Replaying the recorded usage must price within 10 % of what
//! pi recorded as paid; simulating it (usage removed, so the server's own
//! counts and Anthropic cache model are priced) within 25 %.

use std::sync::Arc;

use reloop_agent::client::cache_breakpoints::{BreakpointPlace, CacheBreakpointSettings};
use reloop_agent::context::StrategyName;
use reloop_eval::result::CostSource;
use reloop_eval::{RunReport, Scenario, run_scenario};
use reloop_mock::provider_tokens::ProviderTokens;
use reloop_wire::anthropic::CacheTtl;

use super::bundled;

const SESSION: &str = "imported/pi-mono-compact-2638daee-first-65-lines";

/// What pi recorded as paid for the session (its import report).
fn recorded_cost() -> f64 {
    let report_file = bundled(SESSION).with_extension("import.json");
    let import: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(report_file).unwrap()).unwrap();
    import["cost_recorded_usd"].as_f64().unwrap()
}

/// The session as pi ran it: no compaction (it never compacted), and
/// `cache_control` where pi puts it, on the system prompt and the last
/// message, with the 5-minute lifetime.
fn as_pi_ran_it() -> Scenario {
    let mut scenario = Scenario::load(&bundled(SESSION)).unwrap();
    scenario.loop_settings.strategy = StrategyName::None;
    scenario.loop_settings.cache_breakpoints =
        CacheBreakpointSettings { at: vec![BreakpointPlace::System, BreakpointPlace::LastMessage], ttl: CacheTtl::FiveMinutes };
    scenario
}

fn priced(report: &RunReport, source: CostSource) -> f64 {
    assert!(report.passed, "{:?}", report.failed_expectations);
    assert_eq!(report.metrics.cost_source, source);
    report.metrics.estimated_cost_usd.unwrap()
}

fn off_by(priced: f64, recorded: f64) -> f64 {
    (priced - recorded).abs() / recorded
}

#[test]
fn a_recorded_anthropic_session_replayed_prices_within_10_percent_of_its_recorded_cost() {
    let report = run_scenario(&Scenario::load(&bundled(SESSION)).unwrap());
    let (priced, recorded) = (priced(&report, CostSource::Recorded), recorded_cost());
    assert!(off_by(priced, recorded) <= 0.10, "priced ${priced:.4} against ${recorded:.4} recorded");
}

/// The simulation counts in the provider's tokens through the fit of the
/// replay (recorded input tokens per call against the server's o200k
/// count): the fit matches the sizes of the calls, never their cost; the
/// split into cache reads, writes and uncached input is the simulation's.
#[test]
fn a_recorded_anthropic_session_simulated_prices_within_25_percent_of_its_recorded_cost() {
    let replayed = run_scenario(&as_pi_ran_it());
    let fit = replayed.metrics.provider_token_fit.expect("32 calls of several sizes give a fit");
    let mut simulated = as_pi_ran_it();
    let mut spec = (*simulated.spec).clone();
    spec.provider_tokens = Some(ProviderTokens { per_o200k: fit.slope, hidden_per_call: fit.intercept.max(0.0).round() as u64 });
    simulated.spec = Arc::new(spec);
    let mut recording = (*simulated.recording).clone();
    recording.exchanges.iter_mut().for_each(|exchange| exchange.usage = None);
    simulated.recording = Arc::new(recording);
    let report = run_scenario(&simulated);
    let (priced, recorded) = (priced(&report, CostSource::Simulated), recorded_cost());
    let error = off_by(priced, recorded);
    assert!(error <= 0.25, "simulated ${priced:.4} against ${recorded:.4} recorded: {:.1} % off", error * 100.0);
}
