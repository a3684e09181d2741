//! Full-loop replay speed: a generated 1,000-step scenario (one tool call
//! per step with a 1,000-character result, then an answer, strategy `none`)
//! through `reloop_eval::run_scenario`: the agent loop over loopback HTTP
//! and SSE against the mock server, token counting,
//! cache simulation and the report. Throughput is steps per second; a
//! 250-step run beside it shows whether a step's cost grows with the run.

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use reloop_benches::workload::Workload;
use reloop_eval::{Scenario, run_scenario};

/// Model decisions in the generated runs (the last one answers).
const RUNS: [u32; 2] = [250, 1_000];

/// Writes a `steps`-step scenario and its recording into `dir` (the floor
/// bench's workload, one scenario of it); returns the scenario.
fn generate(dir: &Path, steps: u32) -> Scenario {
    let files = Workload { scenarios: 1, steps, result_chars: 1_000, context_window: Workload::UNBOUNDED }.write(dir).expect("the workload is written");
    Scenario::load(&files[0]).expect("the generated scenario loads")
}

fn replay(c: &mut Criterion) {
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    for steps in RUNS {
        let dir = tempfile::tempdir().unwrap();
        let scenario = generate(dir.path(), steps);
        let first = run_scenario(&scenario);
        assert!(first.passed, "the generated run passes: {:?} {:?}", first.outcome, first.failed_expectations);
        assert_eq!(first.metrics.steps_used, u64::from(steps));
        group.throughput(Throughput::Elements(u64::from(steps)));
        group.bench_function(BenchmarkId::new("steps", steps), |b| b.iter(|| black_box(run_scenario(&scenario))));
    }
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
