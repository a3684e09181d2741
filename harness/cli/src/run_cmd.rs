//! `reloop run`: load, run with a progress bar, print the table, write the
//! reports, map the result to an exit code.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use reloop_eval::report::{write_atomically, write_reports};
use reloop_eval::{InputError, Outcome, RunOptions, RunReport, Scenario, discover, run_all};

use crate::app::RunArgs;
use crate::exit_code;
use crate::{junit, summary};

/// How often, at most, finished runs are saved while a long batch goes on,
/// so that a crash loses at most this much work.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// Runs the command; returns the exit code.
pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    let scenarios = match load(&args.paths) {
        Ok(scenarios) => scenarios,
        Err(errors) => {
            for error in errors {
                eprintln!("error: {error}");
            }
            return Ok(exit_code::BAD_INPUT);
        }
    };
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = ProgressBar::new(scenarios.len() as u64)
        .with_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("static template"));
    let options = RunOptions { jobs, variant: args.variant.clone(), cancel: Arc::clone(&cancel) };
    let checkpoint = Checkpoint::new(&args.out);
    let runs = run_all(&scenarios, &options, &|report| {
        bar.set_message(report.scenario.clone());
        bar.inc(1);
        checkpoint.add(report);
    })?;
    bar.finish_and_clear();

    write_reports(&args.out, &runs)?;
    if let Some(path) = &args.junit {
        write_atomically(path, |file| file.write_all(junit::render(&runs).as_bytes()))?;
    }
    print_stdout(&format!("{}reports: {}\n", summary::render(&runs), args.out.display()))?;

    if cancel.load(Ordering::SeqCst) {
        eprintln!("interrupted: {} of {} scenarios ran", runs.len(), scenarios.len());
        return Ok(exit_code::INTERRUPTED);
    }
    if runs.iter().any(|r| r.outcome == Outcome::HarnessError) {
        return Ok(exit_code::INTERNAL);
    }
    Ok(if runs.iter().all(|r| r.passed) { exit_code::SUCCESS } else { exit_code::EXPECTATIONS_FAILED })
}

/// Prints to stdout; a closed pipe (`reloop run … | head`) is not an error.
pub(crate) fn print_stdout(text: &str) -> std::io::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Loads every scenario, collecting all errors rather than stopping at the first.
fn load(paths: &[std::path::PathBuf]) -> Result<Vec<Scenario>, Vec<InputError>> {
    let files = discover(paths).map_err(|e| vec![e])?;
    if files.is_empty() {
        return Err(vec![InputError::file(&paths[0], "no scenario files (*.yaml) found")]);
    }
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for file in &files {
        match Scenario::load(file) {
            Ok(scenario) => scenarios.push(scenario),
            Err(error) => errors.push(error),
        }
    }
    let mut seen = std::collections::HashMap::new();
    for scenario in &scenarios {
        if let Some(first) = seen.insert(scenario.name.clone(), scenario.file.clone()) {
            let message = format!("scenario name `{}` is already used by {}", scenario.name, first.display());
            errors.push(InputError::field(&scenario.file, "name", message));
        }
    }
    if errors.is_empty() { Ok(scenarios) } else { Err(errors) }
}

/// Saves the finished runs now and then while a batch is under way.
struct Checkpoint<'a> {
    out: &'a Path,
    state: Mutex<(Vec<RunReport>, Instant)>,
}

impl<'a> Checkpoint<'a> {
    fn new(out: &'a Path) -> Self {
        Self { out, state: Mutex::new((Vec::new(), Instant::now())) }
    }

    fn add(&self, report: &RunReport) {
        let mut state = self.state.lock().expect("checkpoint poisoned");
        state.0.push(report.clone());
        if state.1.elapsed() >= CHECKPOINT_EVERY {
            // Best effort: the final write reports any persistent I/O error.
            let _ = write_reports(self.out, &state.0);
            state.1 = Instant::now();
        }
    }
}
