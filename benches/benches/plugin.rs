//! A plug-in strategy's cost per step beside the built-in it re-implements:
//! `examples/strategies/masking.py` (Python, over the JSON-lines protocol,
//! `docs/strategies.md`) against the built-in `masking`, with 100 and 1,000
//! messages of history. Timed as in the `microcompaction` bench: the
//! strategy's plans after a new tool round and the view's masking of what
//! they chose, until it has nothing more to mask. For the plug-in that is
//! the `plan` lines written (the new messages, the whole view), Python
//! parsing them and deciding, and its answers read and checked: the
//! protocol's cost, what a strategy pays for leaving Rust.

use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use reloop_agent::context::{StrategyName, StrategySpec};

#[path = "shared/bookkeeping_loop.rs"]
mod bookkeeping_loop;
#[path = "shared/layer0_timing.rs"]
mod layer0_timing;

use layer0_timing::time_layer0;

fn plugin(c: &mut Criterion) {
    let script = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/strategies/masking.py"));
    let strategies = [("masking", StrategySpec::Builtin(StrategyName::Masking)), ("masking.py", StrategySpec::File(script))];
    let mut group = c.benchmark_group("plugin");
    for (label, strategy) in &strategies {
        for messages in [100, 1_000] {
            group.bench_with_input(BenchmarkId::new(*label, messages), &messages, |b, &messages| b.iter_custom(|iters| time_layer0(iters, messages, strategy)));
        }
    }
    group.finish();
}

criterion_group!(benches, plugin);
criterion_main!(benches);
