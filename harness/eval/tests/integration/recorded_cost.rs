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
use reloop_recording::provider_tokens::ProviderTokens;
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
    scenario.loop_settings.strategy = StrategyName::None.into();
    scenario.loop_settings.cache_breakpoints =
        CacheBreakpointSettings { at: vec![BreakpointPlace::System, BreakpointPlace::LastMessage], ttl: CacheTtl::FiveMinutes };
    scenario
}

fn priced(report: &RunReport, source: CostSource) -> f64 {
    assert!(report.passed, "{:?}", report.failed_expectations);
    assert_eq!(report.metrics.cost_source, source);
    match source {
        CostSource::Recorded => report.metrics.estimated_cost_usd_recorded.unwrap(),
        CostSource::Simulated => report.metrics.estimated_cost_usd.unwrap(),
    }
}

fn off_by(priced: f64, recorded: f64) -> f64 {
    (priced - recorded).abs() / recorded
}

#[test]
fn a_recorded_anthropic_session_replayed_prices_within_10_percent_of_its_recorded_cost() {
    let report = run_scenario(&as_pi_ran_it());
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

/// Issue 30: the recorded usage priced every strategy's run alike, though
/// a compacting run sent other prompts than the session did. Only the run
/// that sent what pi sent is priced from the recording; every run keeps
/// its own simulated cost beside it.
#[test]
fn recorded_usage_prices_only_the_run_that_sent_what_the_session_sent() {
    let faithful = run_scenario(&as_pi_ran_it());
    let mut masking = as_pi_ran_it();
    masking.loop_settings.strategy = StrategyName::Masking.into();
    masking.loop_settings.strategies.masking.keep = 1;
    let masked = run_scenario(&masking);
    assert!(masked.metrics.compactions[0] > 0, "masking must mask for this test to mean anything: {:?}", masked.metrics.compactions);
    assert_eq!(masked.metrics.cost_source, CostSource::Simulated);
    assert_eq!(masked.metrics.estimated_cost_usd_recorded, None);
    assert_eq!(masked.metrics.usage_recorded, None);
    assert_eq!(faithful.metrics.cost_source, CostSource::Recorded);
    assert!(faithful.metrics.estimated_cost_usd_recorded.is_some() && faithful.metrics.estimated_cost_usd.is_some());
    // Masking sends fewer tokens but breaks the prompt cache: the cost follows what it sent, either way.
    assert_ne!(masked.metrics.estimated_cost_usd, faithful.metrics.estimated_cost_usd);
    assert_ne!(masked.metrics.input_tokens_total, faithful.metrics.input_tokens_total);
}

/// Issue 30: the closing answer `reloop import` added to a session that
/// ended mid-task had no usage (the source never made that call), and it
/// switched recorded pricing off for the whole session. Since import
/// endings, the importer replays such a session to its real end; either
/// way the session's own calls price the faithful run.
#[test]
fn a_session_ending_mid_task_keeps_recorded_pricing_on() {
    let mut scenario = Scenario::load(&bundled("imported/codemie-code-rollout-2026-01-02t18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52")).unwrap();
    scenario.loop_settings.strategy = StrategyName::None.into();
    let report = run_scenario(&scenario);
    assert_eq!(report.metrics.cost_source, CostSource::Recorded, "{:?}", report.outcome);
    let recorded = report.metrics.usage_recorded.expect("the three recorded calls price the run");
    assert_eq!((recorded.input_tokens, recorded.output_tokens, recorded.cache_read_tokens), (22_474, 300, 14_848), "the import report's sums");
}

/// Issue 30: the provider-token fit was drawn through each strategy's
/// compacted prompts, so one session got 1.38 under `none` and 2.00 under
/// masking. It is drawn once through what the session sent.
#[test]
fn every_strategy_shares_the_sessions_provider_token_fit() {
    let none = run_scenario(&as_pi_ran_it());
    let mut masking = as_pi_ran_it();
    masking.loop_settings.strategy = StrategyName::Masking.into();
    masking.loop_settings.strategies.masking.keep = 1;
    let masked = run_scenario(&masking);
    assert!(masked.metrics.tokens_saved_total > 0, "masking changed the prompts");
    let fit = none.metrics.provider_token_fit.expect("32 calls fit a line");
    assert_eq!(masked.metrics.provider_token_fit, Some(fit));
    assert!(fit.calls >= 3 && fit.r_squared > 0.9 && fit.refusal().is_none(), "{fit:?}");
}
