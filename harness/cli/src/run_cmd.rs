//! `reloop run`: validate, run with a progress bar, print the table, publish
//! the reports, map the result to an exit code, and with `--baseline`
//! compare against an earlier report. The batch itself lives in
//! [`crate::batch`], shared with `reloop sweep`.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use reloop_eval::RunSummary;
use reloop_eval::report::write_atomically;
use reloop_eval::sweep::RunVariant;

use crate::app::RunArgs;
use crate::batch::{Prepared, execute, prepare};
use crate::compare_cmd::{Allowed, bad_input, preflight, stopped};
use crate::stdout::print_stdout;
use crate::{exit_code, junit, summary};

/// Runs the command; returns the exit code. With `--baseline`, the
/// baseline and the gates are checked before the first run, and the PR
/// comment (`--markdown`) is written on every way out: the verdict, or why
/// there is none.
pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    let markdown = args.decide.markdown.as_deref().filter(|_| args.baseline.is_some());
    if let Some(baseline) = &args.baseline
        && let Err(message) = preflight(baseline, &args.decide)
    {
        return bad_input(&message, markdown);
    }
    let result = run_batch(&args, cancel, markdown);
    match &result {
        Err(error) => stopped(markdown, &format!("reloop run failed before the comparison: {error:#}"))?,
        Ok(code) if *code > exit_code::EXPECTATIONS_FAILED && *code != exit_code::BAD_INPUT => {
            stopped(markdown, &format!("reloop run ended with exit code {code} ({}) before the comparison", exit_code::meaning(*code)))?
        }
        Ok(_) => {}
    }
    result
}

/// The batch, then the comparison when it finished.
fn run_batch(args: &RunArgs, cancel: Arc<AtomicBool>, markdown: Option<&Path>) -> anyhow::Result<i32> {
    let Prepared { mut plan, report, live } = match prepare(&args.batch, vec![RunVariant::Label(args.variant.clone())], None, &args.out, &cancel) {
        Ok(prepared) => prepared,
        Err(code) => {
            stopped(markdown, "reloop run found bad input before the first run (the errors are in the job's log)")?;
            return Ok(code);
        }
    };
    if let Some(shard) = args.shard {
        plan.files.retain(|file| shard.contains(&file.path));
    }
    let executed = execute(&plan, &args.batch, report, live, &cancel)?;
    print_stdout(&format!("{}{}", summary::render(&executed.runs), executed.reports_line(&args.out)))?;
    let code = executed.exit_code(plan.runs(), &cancel);
    match &args.baseline {
        Some(baseline) if code <= exit_code::EXPECTATIONS_FAILED => compare_with_baseline(args, baseline, &executed.runs, executed.wall, code),
        _ => Ok(code),
    }
}

/// `run --baseline`: the comparison after the run; the worse of the two
/// exit codes (bad input beats failed gates), JUnit rewritten with the gates.
/// A shard's report lacks the other shards' runs by design: they are not
/// judged as removed (the merged report's comparison judges them).
fn compare_with_baseline(args: &RunArgs, baseline: &Path, runs: &[RunSummary], wall: Duration, run_code: i32) -> anyhow::Result<i32> {
    let allowed = Allowed { removed: args.decide.allow_removed || args.shard.is_some(), ..(&args.decide).into() };
    let (gates_code, gates) = crate::compare_cmd::decide(baseline, &args.out, &args.decide, allowed)?;
    if let Some(path) = &args.batch.junit {
        write_atomically(path, |file| file.write_all(junit::render(runs, &gates, wall).as_bytes()))?;
    }
    Ok(run_code.max(gates_code))
}
