//! What a batch with `--upstream` will ask of the upstream, said before the
//! first run: each trial of a run is answered live past its fork (every
//! call with `--record-mode all`, from `--fork-at STEP` or from the first
//! divergence otherwise), so `--repeat 20` multiplies the calls, and the
//! cost, by twenty. The count is the recordings' exchanges past the fork,
//! the calls a run makes when it follows its recording; a loop that wanders
//! makes more, which the mock's budget cannot know. `--max-live-calls`
//! refuses a batch whose count is above it.

use reloop_eval::{Plan, ScenarioFile};

use crate::app::{LiveArgs, RecordModeArg};

/// The live calls the batch is expected to make, or the message refusing
/// it (a scenario that no longer loads, or more calls than allowed).
pub fn check(plan: &Plan, args: &LiveArgs) -> Result<u64, String> {
    let mut calls = 0;
    for file in &plan.files {
        let exchanges = ScenarioFile::load(&file.path).map_err(|e| e.to_string())?.recording.exchanges.len() as u64;
        let live = match (args.record_mode, args.fork_at) {
            (RecordModeArg::All, _) => exchanges,
            (_, Some(step)) => exchanges.saturating_sub(step as u64),
            // `new` goes live at the first divergence: at most every exchange.
            (_, None) => exchanges,
        };
        calls += live * plan.runs_of(file).len() as u64 * plan.trials;
    }
    eprintln!(
        "note: --upstream: {} runs ({} × {} trials) will make about {calls} upstream calls (the recordings' exchanges past the fork; a run that strays makes more)",
        plan.runs(),
        plan.distinct_runs(),
        plan.trials
    );
    match args.max_live_calls {
        Some(max) if calls > max => {
            Err(format!("--max-live-calls {max}: the batch would make about {calls} upstream calls; lower --repeat, narrow the batch or raise the bound"))
        }
        _ => Ok(calls),
    }
}
