//! Full-loop replay speed: a generated 1,000-step scenario (one tool call
//! per step, then an answer) through `reloop_eval::run_scenario`: the agent
//! loop over loopback HTTP and SSE against the mock server, token counting,
//! cache simulation and the report. Throughput is steps per second; a
//! 250-step run beside it shows whether a step's cost grows with the run.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use reloop_eval::{Scenario, run_scenario};

/// Model decisions in the generated runs (the last one answers).
const RUNS: [u32; 2] = [250, 1_000];

/// Writes a `steps`-step scenario and its recording into `dir`; returns the scenario.
fn generate(dir: &Path, steps: u32) -> Scenario {
    let mut recording = String::from("format: reloop.recording/v1\nexchanges:\n");
    for step in 1..steps {
        // Different arguments each step, so that no doom-loop detector fires.
        writeln!(recording, "  - tool_calls: [ {{ name: read_file, arguments: {{ path: src/module_{step}.rs }} }} ]").unwrap();
    }
    recording.push_str("  - text: Every module is read; nothing to change.\n");
    std::fs::write(dir.join("recording.yaml"), recording).unwrap();

    let output = "pub fn handle(request: &Request) -> Result<Response, Error> {\\n    let user = authenticate(request)?;\\n    Ok(Response::ok(render(&user)))\\n}\\n".repeat(8);
    let scenario = format!(
        "name: replay-bench\nmodel: gpt-4o\ncontext_window: 1000000\nsystem: You are a coding agent.\ntask: Read every module.\n\
         recording: recording.yaml\nloop: {{ step_budget: {budget} }}\n\
         tools:\n  read_file:\n    description: Read a file\n    results: [ {{ output: \"{output}\" }} ]\n\
         expect: {{ outcome: final_answer }}\n",
        budget = steps + 1,
    );
    let file = dir.join("scenario.yaml");
    std::fs::write(&file, scenario).unwrap();
    Scenario::load(&file).expect("the generated scenario loads")
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
