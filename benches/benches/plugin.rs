//! A plug-in strategy's cost per step beside the built-in it re-implements:
//! `examples/strategies/masking.py` (Python, over the JSON-lines protocol,
//! `docs/strategies.md`) against the built-in `masking`, with 100 and 1,000
//! messages of history. Timed as in the `microcompaction` bench: the
//! strategy's plans after a new tool round and the view's masking of what
//! they chose, until it has nothing more to mask. For the plug-in that is
//! the `plan` lines written (the new messages, the whole view), Python
//! parsing them and deciding, and its answers read and checked: the
//! protocol's cost, what a strategy pays for leaving Rust.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use reloop_agent::context::{StrategyName, StrategySpec};

#[path = "shared/bookkeeping_loop.rs"]
mod bookkeeping_loop;

use bookkeeping_loop::{Loop, STEPS_PER_HISTORY};

fn plugin(c: &mut Criterion) {
    let script = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/strategies/masking.py"));
    let strategies = [("masking", StrategySpec::Builtin(StrategyName::Masking)), ("masking.py", StrategySpec::File(script))];
    let mut group = c.benchmark_group("plugin");
    for (label, strategy) in &strategies {
        for messages in [100, 1_000] {
            group.bench_with_input(BenchmarkId::new(*label, messages), &messages, |b, &messages| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut done = 0;
                    while done < iters {
                        let steps = STEPS_PER_HISTORY.min(iters - done);
                        let mut run = Loop::with_history(messages, strategy.clone());
                        for _ in 0..steps {
                            run.grow();
                            let start = Instant::now();
                            run.layer0();
                            total += start.elapsed();
                            black_box(run.finish());
                        }
                        done += steps;
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, plugin);
criterion_main!(benches);
