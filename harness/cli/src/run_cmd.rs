//! `reloop run`: load, run with a progress bar, print the table, write the
//! reports, map the result to an exit code.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use reloop_eval::report::write_reports;
use reloop_eval::{RunOptions, Scenario, discover, run_all};

use crate::app::RunArgs;
use crate::exit_code;
use crate::summary;

/// Runs the command; returns the exit code.
pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    let scenarios = match load(&args) {
        Ok(scenarios) => scenarios,
        Err(errors) => {
            for error in errors {
                eprintln!("error: {error}");
            }
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = ProgressBar::new(scenarios.len() as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("static template"),
    );
    let options = RunOptions { jobs, variant: args.variant.clone(), cancel: Arc::clone(&cancel) };
    let runs = run_all(&scenarios, &options, &|report| {
        bar.set_message(report.scenario.clone());
        bar.inc(1);
    })?;
    bar.finish_and_clear();

    print!("{}", summary::render(&runs));
    write_reports(&args.out, &runs)?;
    println!("reports: {}", args.out.display());

    if cancel.load(Ordering::SeqCst) {
        eprintln!("interrupted: {} of {} scenarios ran", runs.len(), scenarios.len());
        return Ok(exit_code::INTERRUPTED);
    }
    if runs.iter().any(|r| r.outcome == reloop_eval::Outcome::HarnessError) {
        return Ok(exit_code::INTERNAL);
    }
    Ok(if runs.iter().all(|r| r.passed) { exit_code::SUCCESS } else { exit_code::EXPECTATIONS_FAILED })
}

/// Loads every scenario, collecting all errors rather than stopping at the first.
fn load(args: &RunArgs) -> Result<Vec<Scenario>, Vec<reloop_eval::InputError>> {
    let files = discover(&args.paths).map_err(|e| vec![e])?;
    if files.is_empty() {
        let error = reloop_eval::InputError::file(&args.paths[0], "no scenario files (*.yaml) found");
        return Err(vec![error]);
    }
    let (loaded, errors): (Vec<_>, Vec<_>) = files.iter().map(|f| Scenario::load(f)).partition(Result::is_ok);
    let mut errors: Vec<_> = errors.into_iter().filter_map(Result::err).collect();
    let scenarios: Vec<Scenario> = loaded.into_iter().filter_map(Result::ok).collect();
    let mut seen = std::collections::HashMap::new();
    for scenario in &scenarios {
        if let Some(first) = seen.insert(scenario.name.clone(), scenario.file.clone()) {
            errors.push(reloop_eval::InputError::field(
                &scenario.file,
                "name",
                format!("scenario name `{}` is already used by {}", scenario.name, first.display()),
            ));
        }
    }
    if errors.is_empty() { Ok(scenarios) } else { Err(errors) }
}
