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

#[test]
fn a_cancelled_batch_keeps_the_runs_that_finished() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use reloop_eval::plan::{Plan, PlannedFile};
    use reloop_eval::sweep::RunVariant;

    let path = crate::bundled("read-and-edit");
    let wire = Scenario::load(&path).unwrap().wire;
    let files = (0..5).map(|i| PlannedFile { path: path.clone(), runs: vec![(format!("run-{i}"), wire)] }).collect();
    let plan = Plan { files, variants: vec![RunVariant::Label("default".to_owned())], skipped: Vec::new(), trials: 1, finished: Default::default() };
    let cancel = Arc::new(AtomicBool::new(false));
    let options = reloop_eval::RunOptions { jobs: 1, cancel: Arc::clone(&cancel), live: None };
    let reports = Mutex::new(Vec::new());
    // Ctrl-C arrives while the second run is under way.
    reloop_eval::run_all(&plan, &options, &|_, report| {
        if report.scenario == "run-1" {
            cancel.store(true, Ordering::SeqCst);
        }
        reports.lock().unwrap().push(report);
    })
    .unwrap();
    let reports = reports.into_inner().unwrap();
    let names: Vec<&str> = reports.iter().map(|r| r.scenario.as_str()).collect();
    assert_eq!(names, ["run-0", "run-1"], "finished runs are kept, no new run starts");
    let dir = tempfile::tempdir().unwrap();
    reloop_eval::report::write_reports(dir.path(), &reports).unwrap();
    assert!(dir.path().join("runs.parquet").exists());
}
