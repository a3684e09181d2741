//! The cost of one Layer 0 pass per step (a new tool result noted, then the
//! pass) with 100, 1,000 and 10,000 messages of history. The pass keeps one
//! boundary index, so its cost must not grow with the history.
//!
//! Steps are timed in runs of [`STEPS_PER_HISTORY`] on a history built
//! untimed, as the loop grows it: cloning a history instead would hand every
//! step a vector at full capacity, and time its reallocation.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use reloop_agent::microcompact::{Microcompactor, RETAIN_RECENT};

/// Steps timed on one history before it is rebuilt.
const STEPS_PER_HISTORY: u64 = 64;

/// A compactor after `messages` messages, every other one a tool result,
/// all passes run.
fn history(messages: usize) -> Microcompactor {
    let mut micro = Microcompactor::new(RETAIN_RECENT);
    for index in (1..messages).step_by(2) {
        micro.note_tool_result(index);
        micro.run();
    }
    micro
}

fn microcompact(c: &mut Criterion) {
    let mut group = c.benchmark_group("microcompact");
    for messages in [100, 1_000, 10_000] {
        group.bench_with_input(BenchmarkId::new("step", messages), &messages, |b, &messages| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0;
                while done < iters {
                    let steps = STEPS_PER_HISTORY.min(iters - done);
                    let mut micro = history(messages);
                    let start = Instant::now();
                    for step in 0..steps as usize {
                        micro.note_tool_result(messages + 2 * step + 1);
                        black_box(micro.run());
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

criterion_group!(benches, microcompact);
criterion_main!(benches);
