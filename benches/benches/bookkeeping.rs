//! The loop's per-step bookkeeping with 100, 1,000 and 10,000 messages of
//! history: a tool round enters the transcript and the view (each message
//! estimated once), the Roku strategy plans (Layer 0 masks the result that
//! fell out of the newest three), the prompt estimate is taken and
//! calibrated, the cache-break detector compares the request with the one
//! before (one lookup in the view's prefix hashes), and the step's event is
//! sent. Everything keeps running figures, so a step should cost about the
//! same whatever the history's length.
//!
//! Steps are timed in runs of [`STEPS_PER_HISTORY`] on a history built
//! untimed, as the loop grows it (cloning a history instead would hand every
//! step a vector at full capacity, and time its reallocation).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use reloop_agent::context::StrategyName;

#[path = "shared/bookkeeping_loop.rs"]
mod bookkeeping_loop;

use bookkeeping_loop::{Loop, STEPS_PER_HISTORY};

fn bookkeeping(c: &mut Criterion) {
    let mut group = c.benchmark_group("bookkeeping");
    for messages in [100, 1_000, 10_000] {
        group.bench_with_input(BenchmarkId::new("step", messages), &messages, |b, &messages| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0;
                while done < iters {
                    let steps = STEPS_PER_HISTORY.min(iters - done);
                    let mut run = Loop::with_history(messages, StrategyName::Roku);
                    let start = Instant::now();
                    for _ in 0..steps {
                        black_box(run.step());
                    }
                    total += start.elapsed();
                    done += steps;
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bookkeeping);
criterion_main!(benches);
