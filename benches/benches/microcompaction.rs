//! Layer 0 microcompaction with 100, 1,000 and 10,000 messages of history,
//! for each strategy that masks at Layer 0: Roku (every tool result older
//! than the newest three), OpenCode (pruning past its protected tokens, in
//! batches of at least 20,000 freeable tokens) and observation masking (all
//! but the newest ten). Timed: the strategy's plan after a new tool round
//! and the view's masking of what it chose, until it has nothing more to
//! mask; the round entering the transcript and the rest of the step are
//! not timed (the `bookkeeping` bench times a whole step). A plan that
//! looked at the whole history would grow with it; these should not.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use reloop_agent::context::StrategyName;

#[path = "shared/bookkeeping_loop.rs"]
mod bookkeeping_loop;

use bookkeeping_loop::{Loop, STEPS_PER_HISTORY};

fn microcompaction(c: &mut Criterion) {
    let mut group = c.benchmark_group("microcompaction");
    for strategy in [StrategyName::Roku, StrategyName::Opencode, StrategyName::Masking] {
        for messages in [100, 1_000, 10_000] {
            group.bench_with_input(BenchmarkId::new(strategy.as_str(), messages), &messages, |b, &messages| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut done = 0;
                    while done < iters {
                        let steps = STEPS_PER_HISTORY.min(iters - done);
                        let mut run = Loop::with_history(messages, strategy);
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

criterion_group!(benches, microcompaction);
criterion_main!(benches);
