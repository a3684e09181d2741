//! `reloop run`: validate, run with a progress bar, print the table, publish
//! the reports, map the result to an exit code, and with `--baseline`
//! compare against an earlier report. The batch itself lives in
//! [`crate::batch`], shared with `reloop sweep`.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use reloop_eval::report::write_atomically;
use reloop_eval::sweep::RunVariant;

use crate::app::RunArgs;
use crate::batch::{Finished, execute, prepare};
use crate::compare_cmd::{Allowed, bad_input, preflight, stopped};
use crate::stdout::print_stdout;
use crate::{exit_code, junit, summary, trials_table};

/// Runs the command; returns the exit code. With `--baseline`, the
/// baseline and the gates are checked before the first run. The PR
/// comment (`--markdown`) is written on every way out: the comparison with
/// a baseline, the run's own verdicts without one, or why there is none.
pub fn run(mut args: RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    args.out = args.batch.resume.clone().unwrap_or(args.out);
    let markdown = args.decide.markdown.as_deref();
    if let Some(baseline) = &args.baseline
        && let Err(message) = preflight(baseline, &args.decide)
    {
        return bad_input(&message, markdown);
    }
    let result = run_batch(&args, cancel, markdown);
    match &result {
        Err(error) => stopped(markdown, &format!("reloop run failed before its verdict: {error:#}"))?,
        Ok(code) if *code > exit_code::EXPECTATIONS_FAILED && *code != exit_code::BAD_INPUT => {
            stopped(markdown, &format!("reloop run ended with exit code {code} ({}) before its verdict", exit_code::meaning(*code)))?
        }
        Ok(_) => {}
    }
    result
}

/// The batch, then the comparison when it finished.
fn run_batch(args: &RunArgs, cancel: Arc<AtomicBool>, markdown: Option<&Path>) -> anyhow::Result<i32> {
    let prepared = match prepare(&args.batch, vec![RunVariant::Label(args.variant.clone())], None, &args.out, &cancel) {
        Ok(prepared) => prepared,
        Err(code) => {
            stopped(markdown, "reloop run found bad input before the first run (the errors are in the job's log)")?;
            return Ok(code);
        }
    };
    let (plan, finished) = execute(prepared, &args.batch, &cancel)?;
    let table = if plan.trials > 1 { trials_table::render(&finished.runs, &finished.verdicts, plan.trials) } else { summary::render(&finished.runs) };
    print_stdout(&format!("{table}{}", finished.reports_line(&args.out)))?;
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        print_stdout(&reloop_report::render::annotations::flaky(&finished.verdicts, Path::new(".")))?;
    }
    let code = finished.exit_code(plan.runs(), &cancel);
    match &args.baseline {
        Some(baseline) if code <= exit_code::EXPECTATIONS_FAILED => compare_with_baseline(args, baseline, &finished, code),
        None if code <= exit_code::EXPECTATIONS_FAILED => {
            if let Some(path) = markdown {
                let comment = reloop_report::render::run_comment::render(&finished.verdicts, plan.trials);
                write_atomically(path, |file| file.write_all(comment.as_bytes()))?;
            }
            Ok(code)
        }
        _ => Ok(code),
    }
}

/// `run --baseline`: the comparison after the run; the worse of the two
/// exit codes (bad input beats failed gates), JUnit rewritten with the gates.
/// A shard's report lacks the other shards' runs by design: they are not
/// judged as removed (the merged report's comparison judges them).
fn compare_with_baseline(args: &RunArgs, baseline: &Path, finished: &Finished, run_code: i32) -> anyhow::Result<i32> {
    let allowed = Allowed { removed: args.decide.allow_removed || args.batch.shard.is_some(), ..(&args.decide).into() };
    let (gates_code, gates) = crate::compare_cmd::decide(baseline, &args.out, &args.decide, allowed)?;
    if let Some(path) = &args.batch.junit {
        write_atomically(path, |file| file.write_all(junit::render(&finished.runs, &finished.verdicts, &gates, finished.wall).as_bytes()))?;
    }
    Ok(run_code.max(gates_code))
}
