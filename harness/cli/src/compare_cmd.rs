//! `reloop compare BASE NEW`: read two reports, judge the gates, print the
//! verdict (table or JSON), and write the PR comment, GitHub annotations and
//! JUnit when asked. `reloop run --baseline` ends here too.

use std::io::Write as _;
use std::path::Path;

use reloop_eval::InputError;
use reloop_eval::report::write_atomically;
use reloop_report::gates::{self, DEFAULT_GATES, GateResult, GateSet};
use reloop_report::render::{self, Verdict};
use reloop_report::compare::Comparison;
use reloop_report::{Runs, compare};

use crate::app::{CompareArgs, DecideArgs, OutputFormat};
use crate::exit_code;
use crate::stdout::print_stdout;

/// Runs the command; returns the exit code.
pub fn run(args: CompareArgs) -> anyhow::Result<i32> {
    let (code, gates) = decide(&args.base, &args.new, &args.decide)?;
    if let Some(path) = args.junit.as_deref().filter(|_| code != exit_code::BAD_INPUT) {
        write_atomically(path, |file| file.write_all(crate::junit::render(&[], &gates).as_bytes()))?;
    }
    Ok(code)
}

/// Compares `new` with `base` under the gates of `args`: prints, writes
/// the outputs asked for, and returns the exit code with the gate results
/// (empty on bad input).
pub fn decide(base: &Path, new: &Path, args: &DecideArgs) -> anyhow::Result<(i32, Vec<GateResult>)> {
    let (comparison, results) = match judge(base, new, args.gates.as_deref(), args.allow_empty) {
        Ok(judged) => judged,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok((exit_code::BAD_INPUT, Vec::new()));
        }
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

/// Reads both reports and the gates and judges them; `Err` is the message
/// for bad input (a missing report, a report without runs unless
/// `allow_empty`, a bad or rule-less gate file).
pub fn judge(base: &Path, new: &Path, gates: Option<&Path>, allow_empty: bool) -> Result<(Comparison, Vec<GateResult>), String> {
    let base_runs = Runs::load(base).map_err(|e| e.to_string())?;
    let new_runs = Runs::load(new).map_err(|e| e.to_string())?;
    if let Some(empty) = [&base_runs, &new_runs].into_iter().find(|runs| runs.is_empty() && !allow_empty) {
        return Err(format!("{}: the report holds no runs, so no gate can judge it (--allow-empty to accept)", empty.path.display()));
    }
    let (gate_file, gate_set) = load_gates(gates).map_err(|e| e.to_string())?;
    gates::check_set(&gate_set).map_err(|problem| format!("{}: {problem}", gate_file.display()))?;
    let comparison = compare::compare(base_runs, new_runs);
    let results = gates::evaluate(&gate_set, &comparison).map_err(|gates::UnknownMetric(metric)| unknown_metric(&gate_file, &metric).to_string())?;
    Ok((comparison, results))
}

/// The gate file and its rules; the documented defaults without one.
fn load_gates(path: Option<&Path>) -> Result<(std::path::PathBuf, GateSet), InputError> {
    match path {
        Some(path) => Ok((path.to_owned(), reloop_eval::yaml::load(path)?)),
        None => {
            let name = Path::new("<default gates>");
            Ok((name.to_owned(), reloop_eval::yaml::parse(name, DEFAULT_GATES)?))
        }
    }
}

/// The error for a gate on a column neither report has, at its line.
fn unknown_metric(file: &Path, metric: &str) -> InputError {
    let line = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.lines().position(|l| l.trim_start_matches(['"', '\'']).starts_with(metric)))
        .map(|index| index as u64 + 1);
    let message = "no such column in either report's runs.parquet (see docs/metrics.md)";
    InputError { line, ..InputError::field(file, metric, message) }
}
