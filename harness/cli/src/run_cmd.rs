//! `reloop run`: load, run with a progress bar, print the table, write the
//! reports, map the result to an exit code. The batch pieces here serve
//! `reloop sweep` too.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use reloop_eval::report::{write_atomically, write_reports};
use reloop_eval::{InputError, Outcome, RunOptions, RunReport, Scenario, discover, run_all};

use crate::app::{BatchArgs, RunArgs};
use crate::exit_code;
use crate::{junit, summary};

/// How often, at most, finished runs are saved while a long batch goes on,
/// so that a crash loses at most this much work.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// Runs the command; returns the exit code.
pub fn run(args: RunArgs, cancel: Arc<AtomicBool>) -> anyhow::Result<i32> {
    let mut scenarios = match load(&args.batch.paths) {
        Ok(scenarios) => scenarios,
        Err(code) => return Ok(code),
    };
    if let Some(shard) = args.shard {
        scenarios.retain(|scenario| shard.contains(&scenario.file));
    }
    for scenario in &mut scenarios {
        scenario.variant = args.variant.clone();
    }
    let runs = execute(&scenarios, &args.batch, &args.out, &cancel)?;
    print_stdout(&format!("{}reports: {}\n", summary::render(&runs), args.out.display()))?;
    let code = exit_code_of(&runs, scenarios.len(), &cancel, |runs| runs.iter().all(|r| r.passed));
    match &args.baseline {
        Some(baseline) if code <= exit_code::EXPECTATIONS_FAILED => compare_with_baseline(&args, baseline, &runs, code),
        _ => Ok(code),
    }
}

/// `run --baseline`: the comparison after the run; the worse of the two
/// exit codes (bad input beats failed gates), JUnit rewritten with the gates.
fn compare_with_baseline(args: &RunArgs, baseline: &Path, runs: &[RunReport], run_code: i32) -> anyhow::Result<i32> {
    let (gates_code, gates) = crate::compare_cmd::decide(baseline, &args.out, &args.decide)?;
    if let Some(path) = &args.batch.junit {
        write_atomically(path, |file| file.write_all(junit::render(runs, &gates).as_bytes()))?;
    }
    Ok(run_code.max(gates_code))
}

/// The exit code of a finished batch: interrupted, harness error, or what
/// `success` says of the runs.
pub fn exit_code_of(runs: &[RunReport], planned: usize, cancel: &AtomicBool, success: impl Fn(&[RunReport]) -> bool) -> i32 {
    if cancel.load(Ordering::SeqCst) {
        eprintln!("interrupted: {} of {planned} runs finished", runs.len());
        return exit_code::INTERRUPTED;
    }
    if runs.iter().any(|r| r.outcome == Outcome::HarnessError) {
        return exit_code::INTERNAL;
    }
    if success(runs) { exit_code::SUCCESS } else { exit_code::EXPECTATIONS_FAILED }
}

/// Runs `scenarios` with a progress bar and periodic checkpoints, then
/// writes the reports (and JUnit when asked).
pub fn execute(scenarios: &[Scenario], batch: &BatchArgs, out: &Path, cancel: &Arc<AtomicBool>) -> anyhow::Result<Vec<RunReport>> {
    let jobs = batch.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = ProgressBar::new(scenarios.len() as u64)
        .with_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("static template"));
    let options = RunOptions { jobs, cancel: Arc::clone(cancel) };
    let checkpoint = Checkpoint::new(out);
    let runs = run_all(scenarios, &options, &|report| {
        bar.set_message(report.scenario.clone());
        bar.inc(1);
        checkpoint.add(report);
    })?;
    bar.finish_and_clear();
    write_reports(out, &runs)?;
    if let Some(path) = &batch.junit {
        write_atomically(path, |file| file.write_all(junit::render(&runs, &[]).as_bytes()))?;
    }
    Ok(runs)
}

/// Prints to stdout; a closed pipe (`reloop run … | head`) is not an error.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Loads every scenario, reporting all errors rather than stopping at the
/// first; `Err` is the exit code for bad input.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Scenario>, i32> {
    load_scenarios(paths).map_err(|errors| {
        for error in errors {
            eprintln!("error: {error}");
        }
        exit_code::BAD_INPUT
    })
}

fn load_scenarios(paths: &[PathBuf]) -> Result<Vec<Scenario>, Vec<InputError>> {
    let files = discover(paths).map_err(|e| vec![e])?;
    if files.is_empty() {
        return Err(vec![InputError::file(&paths[0], "no scenario files (*.yaml) found")]);
    }
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for file in &files {
        match Scenario::load_all(file) {
            Ok(loaded) => scenarios.extend(loaded),
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
