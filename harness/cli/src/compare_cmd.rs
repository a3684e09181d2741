//! `reloop compare BASE NEW`: read two reports, judge the gates, print the
//! verdict (table or JSON), and write the PR comment, GitHub annotations and
//! JUnit when asked. `reloop run --baseline` ends here too.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use arrow_schema::{Schema, SchemaRef};
use reloop_eval::InputError;
use reloop_eval::report::{table_schemas, write_atomically};
use reloop_report::compare::Comparison;
use reloop_report::gates::{self, ColumnProblem, DEFAULT_GATES, GateResult, GateSet};
use reloop_report::render::{self, Verdict};
use reloop_report::{Runs, compare};

use crate::app::{CompareArgs, DecideArgs, OutputFormat};
use crate::exit_code;
use crate::stdout::print_stdout;

/// Runs the command; returns the exit code.
pub fn run(args: CompareArgs) -> anyhow::Result<i32> {
    let started = std::time::Instant::now();
    let (code, gates) = decide(&args.base, &args.new, &args.decide, (&args.decide).into())?;
    if let Some(path) = args.junit.as_deref().filter(|_| code != exit_code::BAD_INPUT) {
        write_atomically(path, |file| file.write_all(crate::junit::render(&[], &[], &gates, started.elapsed()).as_bytes()))?;
    }
    Ok(code)
}

/// What a comparison may accept that it refuses by default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Allowed {
    /// A report without runs.
    pub empty: bool,
    /// Runs of the base missing from the new report.
    pub removed: bool,
    /// Gating runs an upstream answered live (`live_steps` > 0 on either
    /// side), which are not deterministic and left out by default.
    pub live: bool,
}

impl From<&DecideArgs> for Allowed {
    fn from(args: &DecideArgs) -> Self {
        Self { empty: args.allow_empty, removed: args.allow_removed, live: args.gate_live }
    }
}

/// Compares `new` with `base` under the gates of `args`, accepting what
/// `allowed` says: prints, writes the outputs asked for, and returns the
/// exit code with the gate results (empty on bad input, which is also the
/// PR comment then).
pub fn decide(base: &Path, new: &Path, args: &DecideArgs, allowed: Allowed) -> anyhow::Result<(i32, Vec<GateResult>)> {
    let (comparison, results) = match judge(base, new, args.gates.as_deref(), allowed) {
        Ok(judged) => judged,
        Err(message) => return Ok((bad_input(&message, args.markdown.as_deref())?, Vec::new())),
    };
    let verdict = Verdict { comparison: &comparison, gates: &results };
    let printed = match args.format {
        OutputFormat::Table => render::text::render(&verdict),
        OutputFormat::Json => format!("{:#}\n", render::json::render(&verdict)),
    };
    print_stdout(&printed)?;
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        print_stdout(&render::annotations::render(&verdict, Path::new(".")))?;
    }
    if let Some(path) = &args.markdown {
        write_atomically(path, |file| file.write_all(render::markdown::render(&verdict).as_bytes()))?;
    }
    let code = if verdict.passed() { exit_code::SUCCESS } else { exit_code::EXPECTATIONS_FAILED };
    Ok((code, results))
}

/// Prints `message` as an error and, when a PR comment was asked for,
/// writes it there, so a workflow that posts the comment has the cause to
/// post; returns the exit code of bad input.
pub fn bad_input(message: &str, markdown: Option<&Path>) -> anyhow::Result<i32> {
    eprintln!("error: {message}");
    stopped(markdown, message)?;
    Ok(exit_code::BAD_INPUT)
}

/// Writes the PR comment of a comparison that could not be made, when one
/// was asked for.
pub fn stopped(markdown: Option<&Path>, why: &str) -> anyhow::Result<()> {
    if let Some(path) = markdown {
        write_atomically(path, |file| file.write_all(render::markdown::render_error(why).as_bytes()))?;
    }
    Ok(())
}

/// The columns of the `runs.parquet` reloop writes, with their types.
pub fn runs_schema() -> SchemaRef {
    let [runs, _, _] = table_schemas();
    runs
}

/// Reads both reports and the gates and judges them; `Err` is the message
/// for bad input (a missing report, a report column of the wrong type, a
/// report without runs unless allowed, a bad or rule-less gate file, a gate
/// on a column that is not a number). Runs removed since the base fail
/// unless allowed.
pub fn judge(base: &Path, new: &Path, gates: Option<&Path>, allowed: Allowed) -> Result<(Comparison, Vec<GateResult>), String> {
    let base_runs = load_runs(base, allowed)?;
    let new_runs = load_runs(new, allowed)?;
    let (gate_file, gate_set) = load_gates(gates)?;
    check_gates(&gate_file, &gate_set, &[&base_runs.schema, &new_runs.schema]).map_err(|e| e.to_string())?;
    let mut comparison = compare::compare(base_runs, new_runs);
    if !allowed.live {
        let live = comparison.leave_out_live();
        if !live.is_empty() {
            let names = reloop_report::first_named::first_named(&live, ToString::to_string);
            eprintln!("note: not gated, as runs an upstream answered live are not deterministic (--gate-live judges them): {names}");
        }
    }
    let mut results = gates::evaluate(&gate_set, &comparison).map_err(|problem| gate_error(&gate_file, &problem).to_string())?;
    if !allowed.removed {
        results.push(gates::no_removed(&comparison));
    }
    Ok((comparison, results))
}

/// `run --baseline`, before the first run: the baseline reads as a report
/// of runs and the gates as a file `compare` will accept against it and the
/// table the run is about to write, so a typo costs seconds, not a suite.
pub fn preflight(baseline: &Path, args: &DecideArgs) -> Result<(), String> {
    let base = load_runs(baseline, args.into())?;
    let (gate_file, gate_set) = load_gates(args.gates.as_deref())?;
    check_gates(&gate_file, &gate_set, &[&base.schema, &runs_schema()]).map_err(|e| e.to_string())
}

/// A report's runs, every column reloop writes checked against its type;
/// one without runs is refused unless allowed.
fn load_runs(path: &Path, allowed: Allowed) -> Result<Runs, String> {
    let runs = Runs::load_checked(path, &runs_schema()).map_err(|e| e.to_string())?;
    if runs.is_empty() && !allowed.empty {
        return Err(format!("{}: the report holds no runs, so no gate can judge it (--allow-empty to accept)", runs.path.display()));
    }
    Ok(runs)
}

/// The gate file and its rules; the documented defaults without one.
fn load_gates(path: Option<&Path>) -> Result<(PathBuf, GateSet), String> {
    let loaded = match path {
        Some(path) => reloop_eval::yaml::load(path).map(|gates| (path.to_owned(), gates)),
        None => {
            let name = Path::new("<default gates>");
            reloop_eval::yaml::parse(name, DEFAULT_GATES).map(|gates| (name.to_owned(), gates))
        }
    };
    loaded.map_err(|e| e.to_string())
}

/// What `compare` and `validate` both check of a gate file: it has rules,
/// each with a check, each on a number column of one of `schemas`.
pub fn check_gates(file: &Path, gates: &GateSet, schemas: &[&Schema]) -> Result<(), InputError> {
    gates::check_set(gates).map_err(|problem| InputError::file(file, problem))?;
    gates::check_columns(gates, schemas).map_err(|problem| gate_error(file, &problem))
}

/// The error for a gate on a column it cannot judge, at its line.
fn gate_error(file: &Path, problem: &ColumnProblem) -> InputError {
    let line = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.lines().position(|l| l.trim_start_matches(['"', '\'']).starts_with(problem.metric.as_str())))
        .map(|index| index as u64 + 1);
    InputError { line, ..InputError::field(file, &problem.metric, &problem.problem) }
}

#[cfg(test)]
mod tests {
    /// compare's means and the sweep's totals leave out the same runs: the
    /// report crate reads outcomes as text, the loop knows them as a type.
    #[test]
    fn compare_and_sweep_agree_on_what_completed_means() {
        let completed: Vec<&str> = reloop_agent::Outcome::ALL.iter().filter(|o| o.completed()).map(|o| o.as_str()).collect();
        assert_eq!(completed, reloop_report::compare::COMPLETED_OUTCOMES);
    }
}
