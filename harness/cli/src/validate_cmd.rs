//! `reloop validate PATH...`: check scenarios, recordings and gate files
//! without running them: each parses against its format (file:line:field on
//! error), and scenarios' references hold (the recording exists and parses,
//! faults aim at real exchanges, recorded tool calls have fixtures).

use std::path::{Path, PathBuf};

use reloop_eval::references;
use reloop_eval::{InputError, Scenario};
use reloop_files::kind::is_recording;
use reloop_recording::Recording;
use reloop_report::gates::GateSet;

use crate::app::ValidateArgs;
use crate::exit_code;

/// What a file is, by its content or name.
enum Kind {
    Scenario,
    Recording,
    Gates,
}

fn kind_of(path: &Path) -> Kind {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if is_recording(path) {
        Kind::Recording
    } else if name.ends_with("gates.yaml") || name.ends_with("gates.yml") {
        Kind::Gates
    } else {
        Kind::Scenario
    }
}

/// Runs the command; returns the exit code.
pub fn run(args: ValidateArgs) -> anyhow::Result<i32> {
    let mut errors = Vec::new();
    let mut files = Vec::new();
    for path in &args.paths {
        collect(path, &mut files, &mut errors);
    }
    let mut counts = [0usize; 3];
    for file in &files {
        let (index, found) = match kind_of(file) {
            Kind::Scenario => (0, check_scenario(file)),
            Kind::Recording => (1, reloop_eval::yaml::load::<Recording>(file).err().into_iter().collect()),
            Kind::Gates => (2, check_gates(file)),
        };
        counts[index] += 1;
        errors.extend(found);
    }
    for error in &errors {
        eprintln!("error: {error}");
    }
    if errors.is_empty() {
        println!("ok: {} scenarios, {} recordings, {} gate files", counts[0], counts[1], counts[2]);
        Ok(exit_code::SUCCESS)
    } else {
        Ok(exit_code::BAD_INPUT)
    }
}

/// Parses a scenario and its recording, then checks its references.
fn check_scenario(file: &Path) -> Vec<InputError> {
    match Scenario::load_all(file) {
        Ok(scenarios) => scenarios.first().map(references::check).unwrap_or_default(),
        Err(error) => vec![error],
    }
}

/// Parses a gate file and checks it as `compare` does, against the runs
/// table `run` writes.
fn check_gates(file: &Path) -> Vec<InputError> {
    let checked =
        reloop_eval::yaml::load::<GateSet>(file).and_then(|gates| crate::compare_cmd::check_gates(file, &gates, &[&crate::compare_cmd::runs_schema()]));
    checked.err().into_iter().collect()
}

/// Files under `path`: the file itself, or every `*.yaml`/`*.yml` below a directory.
fn collect(path: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<InputError>) {
    if path.is_file() {
        files.push(path.to_owned());
        return;
    }
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(error) => return errors.push(InputError::file(path, format!("cannot read: {error}"))),
    };
    let mut found: Vec<PathBuf> = entries.filter_map(|entry| entry.ok().map(|e| e.path())).collect();
    found.sort();
    for entry in found {
        if entry.is_dir() {
            collect(&entry, files, errors);
        } else if entry.extension().is_some_and(|ext| ext == "yaml" || ext == "yml") {
            files.push(entry);
        }
    }
}
