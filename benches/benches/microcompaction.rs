//! Layer 0 microcompaction with 100, 1,000 and 10,000 messages of history,
//! for each strategy that masks at Layer 0: Roku (every tool result older
//! than the newest three), OpenCode (pruning past its protected tokens, in
//! batches of at least 20,000 freeable tokens) and observation masking (all
//! but the newest ten). Timed: the strategy's plan after a new tool round
//! and the view's masking of what it chose, until it has nothing more to
//! mask; the round entering the transcript and the rest of the step are
//! not timed (the `bookkeeping` bench times a whole step). A plan that
//! looked at the whole history would grow with it; these should not.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use reloop_agent::context::StrategyName;

#[path = "shared/bookkeeping_loop.rs"]
mod bookkeeping_loop;
#[path = "shared/layer0_timing.rs"]
mod layer0_timing;

use layer0_timing::time_layer0;

fn microcompaction(c: &mut Criterion) {
    let mut group = c.benchmark_group("microcompaction");
    for strategy in [StrategyName::Roku, StrategyName::Opencode, StrategyName::Masking] {
        for messages in [100, 1_000, 10_000] {
            group.bench_with_input(BenchmarkId::new(strategy.as_str(), messages), &messages, |b, &messages| {
                b.iter_custom(|iters| time_layer0(iters, messages, &strategy.into()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, microcompaction);
criterion_main!(benches);
