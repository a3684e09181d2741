//! Anthropic prompt caching end to end: the loop places breakpoints, the
//! mock's breakpoint cache answers with writes and reads in the usage, and
//! the reports and the cost follow.

use reloop_agent::price_table::{PriceTable, PricedUsage};
use reloop_eval::{RunReport, Scenario, StepRow, run_scenario};

fn run(name: &str) -> RunReport {
    let report = run_scenario(&Scenario::load(&crate::bundled(name)).unwrap());
    assert!(report.passed, "{name}: {:?}", report.failed_expectations);
    report
}

fn main_steps(report: &RunReport) -> Vec<&StepRow> {
    report.steps.iter().filter(|s| s.server_result.as_deref() == Some("ok")).collect()
}

fn reads_and_writes(report: &RunReport) -> Vec<(u64, u64)> {
    main_steps(report).iter().map(|s| (s.cache_read_tokens.unwrap(), s.cache_write_tokens.unwrap())).collect()
}

#[test]
fn each_request_reads_what_the_previous_one_wrote() {
    let report = run("anthropic-prompt-cache");
    let steps = main_steps(&report);
    let cached = reads_and_writes(&report);
    assert!(cached[0].0 == 0 && cached[0].1 > 1_400, "the first request writes tools and system: {cached:?}");
    for (index, pair) in cached.windows(2).enumerate() {
        let ((read, written), (next_read, _)) = (pair[0], pair[1]);
        if !steps[index + 1].cache_break_simulated {
            assert_eq!(next_read, read + written, "request {} reads the whole previous prefix: {cached:?}", index + 1);
        }
    }
    assert_eq!(report.metrics.cache_write_tokens, cached.iter().map(|c| c.1).sum::<u64>());
    assert!(report.metrics.cache_write_tokens > 0, "no longer always 0");
    for step in &steps {
        assert!(step.cache_read_tokens.unwrap() + step.cache_write_tokens.unwrap() <= step.input_tokens.unwrap());
    }
}

#[test]
fn placement_model_minimum_and_ttl_change_what_is_cached() {
    let cached = run("anthropic-prompt-cache");
    let off = run("anthropic-prompt-cache-off");
    let opus = run("anthropic-prompt-cache-opus-minimum");
    for nothing in [&off, &opus] {
        assert!(reads_and_writes(nothing).iter().all(|c| *c == (0, 0)), "{}", nothing.scenario);
    }
    assert!(cached.metrics.estimated_cost_usd.unwrap() < off.metrics.estimated_cost_usd.unwrap(), "caching pays off");

    let five = run("anthropic-prompt-cache-ttl-5m");
    let hour = run("anthropic-prompt-cache-ttl-1h");
    let (five_last, hour_last) = (*reads_and_writes(&five).last().unwrap(), *reads_and_writes(&hour).last().unwrap());
    assert_eq!(five_last.0, 0, "6 minutes later the 5-minute entries are gone");
    assert!(main_steps(&five).last().unwrap().cache_break_simulated);
    assert!(hour_last.0 > 0, "the 1-hour entries survive");
    let hour_steps = main_steps(&hour);
    assert!(hour_steps.iter().all(|s| s.cache_write_1h_tokens == s.cache_write_tokens), "all writes are 1-hour writes");
    // The run's cost prices 1-hour writes at 2x input.
    let usage = reloop_wire::Usage {
        input_tokens: hour.metrics.input_tokens_total,
        output_tokens: hour.metrics.output_tokens_total,
        cache_read_tokens: hour.metrics.cache_read_tokens,
        cache_write_tokens: hour.metrics.cache_write_tokens,
    };
    let expected = PriceTable::embedded().cost("claude-sonnet-4-5", &PricedUsage { usage, cache_write_1h_tokens: usage.cache_write_tokens });
    assert_eq!(hour.metrics.estimated_cost_usd, expected);
}
