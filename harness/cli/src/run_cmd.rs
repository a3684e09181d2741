//! `reloop run`: validate, run with a progress bar, print the table, publish
//! the reports, map the result to an exit code, and with `--baseline`
//! compare against an earlier report. The batch itself lives in
//! [`crate::batch`], shared with `reloop sweep`.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use reloop_eval::RunSummary;
use reloop_eval::report::write_atomically;
use reloop_eval::sweep::RunVariant;

use crate::app::RunArgs;
use crate::batch::{execute, exit_code_of, prepare};
use crate::stdout::print_stdout;
use crate::{exit_code, junit, summary};

/// Runs the command; returns the exit code.
pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    let (mut plan, report) = match prepare(&args.batch, vec![RunVariant::Label(args.variant.clone())], &args.out) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    if let Some(shard) = args.shard {
        plan.files.retain(|file| shard.contains(&file.path));
    }
    let runs = execute(&plan, &args.batch, report, &cancel)?;
    print_stdout(&format!("{}reports: {}\n", summary::render(&runs), args.out.display()))?;
    let code = exit_code_of(&runs, plan.runs(), &cancel);
    match &args.baseline {
        Some(baseline) if code <= exit_code::EXPECTATIONS_FAILED => compare_with_baseline(&args, baseline, &runs, code),
        _ => Ok(code),
    }
}

/// `run --baseline`: the comparison after the run; the worse of the two
/// exit codes (bad input beats failed gates), JUnit rewritten with the gates.
fn compare_with_baseline(args: &RunArgs, baseline: &Path, runs: &[RunSummary], run_code: i32) -> anyhow::Result<i32> {
    let (gates_code, gates) = crate::compare_cmd::decide(baseline, &args.out, &args.decide)?;
    if let Some(path) = &args.batch.junit {
        write_atomically(path, |file| file.write_all(junit::render(runs, &gates).as_bytes()))?;
    }
    Ok(run_code.max(gates_code))
}
