//! `reloop compare` on reports of 10,000 runs: both runs tables read, joined
//! on (scenario, variant), every metric's means, deltas and changed runs,
//! the default gates judged and the terminal table rendered. The baseline
//! measured beside it is reading the two Parquet files alone.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use reloop_eval::report::{runs_batch, write_parquet};
use reloop_eval::{Outcome, RunMetrics, RunReport};
use reloop_report::gates::{DEFAULT_GATES, GateSet, evaluate};
use reloop_report::render::{Verdict, text};
use reloop_report::{Runs, compare, table};

/// Runs per report.
const RUNS: u64 = 10_000;

/// A run with figures that vary with `i`; `drift` raises input tokens.
fn run(i: u64, drift: f64) -> RunReport {
    let input = 5_000 + (i * 37) % 20_000;
    let metrics = RunMetrics {
        steps_used: 3 + i % 20,
        step_budget: 25,
        step_budget_used_ratio: (3 + i % 20) as f64 / 25.0,
        doom_loop_detected: i.is_multiple_of(97),
        input_tokens_total: (input as f64 * (1.0 + drift * ((i % 3) as f64))) as u64,
        input_tokens_uncompacted_total: input * 2,
        output_tokens_total: 200 + i % 300,
        cache_breaks_simulated: i % 4,
        estimated_cost_usd: Some(input as f64 * 2.5e-6),
        llm_calls: 4 + i % 20,
        ..RunMetrics::default()
    };
    RunReport {
        scenario: format!("scenario-{i:05}"),
        scenario_file: format!("scenarios/generated/scenario-{i:05}.yaml"),
        variant: "default".to_owned(),
        trial: 0,
        min_pass_rate: None,
        strategy: "roku".to_owned(),
        wire: "openai-chat".to_owned(),
        model: "gpt-4o".to_owned(),
        system_under_test: "reloop".to_owned(),
        agent_exit_code: None,
        source: None,
        outcome: Outcome::FinalAnswer,
        passed: !i.is_multiple_of(50),
        failed_expectations: Vec::new(),
        final_answer: None,
        error: None,
        metrics,
        steps: Vec::new(),
        events: Vec::new(),
        divergences: Vec::new(),
    }
}

fn write_report(path: &Path, drift: f64) {
    let runs: Vec<RunReport> = (0..RUNS).map(|i| run(i, drift)).collect();
    write_parquet(path, &runs_batch(&runs).unwrap()).unwrap();
}

fn compare_reports(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (base, new) = (dir.path().join("base.parquet"), dir.path().join("new.parquet"));
    write_report(&base, 0.0);
    write_report(&new, 0.02);
    let gates: GateSet = reloop_eval::yaml::parse(Path::new("default gates"), DEFAULT_GATES).unwrap();
    let mut group = c.benchmark_group("compare_10000_runs");
    group.sample_size(10);
    group.bench_function("read both runs.parquet (baseline)", |b| b.iter(|| black_box((table::read_batch(&base).unwrap(), table::read_batch(&new).unwrap()))));
    group.bench_function("compare + default gates + table", |b| {
        b.iter(|| {
            let comparison = compare::compare(Runs::load(&base).unwrap(), Runs::load(&new).unwrap());
            let results = evaluate(&gates, &comparison).unwrap();
            assert_eq!(comparison.pairs.len(), RUNS as usize);
            black_box(text::render(&Verdict { comparison: &comparison, gates: &results }))
        })
    });
    group.finish();
}

criterion_group!(benches, compare_reports);
criterion_main!(benches);
