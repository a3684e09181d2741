//! Layer 0 timed step by step on a grown history, for the benches that
//! compare strategies' masking (`microcompaction`, `plugin`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use reloop_agent::context::StrategySpec;

use super::bookkeeping_loop::{Loop, STEPS_PER_HISTORY};

/// The time `iters` Layer 0 steps take on a history of `messages` under
/// `strategy`: each step a tool round enters untimed, then the strategy's
/// plans and the view's masking are timed. A history serves
/// [`STEPS_PER_HISTORY`] steps before a fresh one is built, so it stays
/// near its size; the `microcompaction` and `plugin` benches time this.
pub fn time_layer0(iters: u64, messages: usize, strategy: &StrategySpec) -> Duration {
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
}
