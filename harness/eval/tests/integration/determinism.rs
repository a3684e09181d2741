//! A run is a pure function of its inputs: two runs give the same report
//! except for wall-clock time.

use reloop_eval::{Scenario, run_scenario};

#[test]
fn two_runs_give_identical_reports_except_wall_time() {
    let scenario = Scenario::load(&crate::bundled("read-and-edit")).unwrap();
    let mut first = run_scenario(&scenario);
    let mut second = run_scenario(&scenario);
    assert!(first.passed, "{:?}", first.failed_expectations);
    first.metrics.wall_ms = 0;
    second.metrics.wall_ms = 0;
    assert_eq!(first, second);
}

#[test]
fn recorded_latency_shows_in_virtual_time_not_wall_time() {
    let scenario = Scenario::load(&crate::bundled("read-and-edit")).unwrap();
    let report = run_scenario(&scenario);
    // The recording's first-byte waits alone add up to about 3 s, and
    // `run_tests` takes 4.2 s; a replay takes a fraction of that for real.
    assert!(report.metrics.virtual_ms >= 7_000, "virtual {} ms", report.metrics.virtual_ms);
    assert!(report.metrics.wall_ms < report.metrics.virtual_ms, "wall {} ms", report.metrics.wall_ms);
}
