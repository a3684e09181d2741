//! `reloop run`: validate, run with a progress bar, print the table, publish
//! the reports, map the result to an exit code. The batch itself lives in
//! [`crate::batch`], shared with `reloop sweep`.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use reloop_eval::sweep::RunVariant;

use crate::app::RunArgs;
use crate::batch::{execute, exit_code_of, prepare};
use crate::summary;

/// Runs the command; returns the exit code.
pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    let (plan, report) = match prepare(&args.batch.paths, vec![RunVariant::Label(args.variant.clone())], &args.out) {
        Ok(prepared) => prepared,
        Err(code) => return Ok(code),
    };
    let runs = execute(&plan, &args.batch, report, &cancel)?;
    print_stdout(&format!("{}reports: {}\n", summary::render(&runs), args.out.display()))?;
    Ok(exit_code_of(&runs, plan.runs(), &cancel, |runs| runs.iter().all(|r| r.passed)))
}

/// Prints to stdout; a closed pipe (`reloop run … | head`) is not an error.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
