//! `reloop import FILE... --out DIR`: each session file becomes a scenario,
//! a recording and an import report (`reloop-import`); the report's summary
//! is printed. Bad input (an unreadable file, an unknown format, a bad
//! `--tools` file) is named with its file and exits 2.

use std::path::Path;

use reloop_import::vcr::{import_cassette, is_cassette};
use reloop_import::{ConvertOptions, Format, ImportError, convert, read_session, read_tools, recording_file_name, scenario_name, skeleton_scenario, write_files, write_yaml};
use reloop_mock::record::Redaction;
use reloop_mock::recording::ReplayMode;

use crate::app::{ImportArgs, ImportFormat};
use crate::exit_code;
use crate::stdout::print_stdout;

/// Runs the command.
pub fn run(args: &ImportArgs) -> anyhow::Result<i32> {
    let redaction = match Redaction::new(&args.redact.redact_header, &args.redact.redact_body) {
        Ok(redaction) => redaction,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    match import_all(args, &redaction) {
        Ok(summary) => {
            print_stdout(&summary)?;
            Ok(exit_code::SUCCESS)
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(exit_code::BAD_INPUT)
        }
    }
}

fn import_all(args: &ImportArgs, redaction: &Redaction) -> Result<String, ImportError> {
    let format = match args.format {
        ImportFormat::Auto => None,
        ImportFormat::Pi => Some(Format::Pi),
        ImportFormat::Codex => Some(Format::Codex),
        ImportFormat::ClaudeCode => Some(Format::ClaudeCode),
        ImportFormat::OpenaiMessages => Some(Format::OpenaiMessages),
        ImportFormat::Vcr => None,
    };
    let system = args.system.as_deref().map(read_text).transpose()?;
    let tools = args.tools.as_deref().map(read_tools).transpose()?;
    let mut summary = String::new();
    for file in &args.files {
        if args.format == ImportFormat::Vcr || (args.format == ImportFormat::Auto && is_yaml_cassette(file)) {
            summary.push_str(&cassette(file, &args.out, redaction)?);
            continue;
        }
        let session = read_session(file, format)?;
        let name = scenario_name(file);
        let options = ConvertOptions {
            source: format!("{}:{}", session.format, file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()),
            recording_path: recording_file_name(&name),
            name,
            system: system.clone(),
            tools: tools.clone(),
            workspace_root: args.workspace_root.clone(),
        };
        let converted = convert(session, options);
        let written = write_files(&args.out, &converted)?;
        summary.push_str(&converted.report.summary());
        summary.push_str(&format!("  wrote {}\n", written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")));
    }
    Ok(summary)
}

fn is_yaml_cassette(file: &Path) -> bool {
    file.extension().is_some_and(|e| e == "yaml" || e == "yml") && std::fs::read_to_string(file).is_ok_and(|text| is_cassette(&text))
}

/// A cassette: `NAME.recording.yaml` (neutral replay), `NAME.raw.recording.yaml`
/// (byte-for-byte replay) and the scenario skeleton `NAME.yaml`, with what
/// `redaction` strips gone and listed under `redacted:`.
fn cassette(file: &Path, out: &Path, redaction: &Redaction) -> Result<String, ImportError> {
    let text = read_text(file)?;
    let bad = |message: String| ImportError::Cassette { path: file.to_owned(), message };
    let name = scenario_name(file);
    std::fs::create_dir_all(out).map_err(|source| ImportError::Io { path: out.to_owned(), source })?;
    let mut neutral = import_cassette(&text, redaction).map_err(bad)?;
    let mut raw = neutral.clone();
    raw.recording.exchanges.iter_mut().for_each(|exchange| exchange.replay = ReplayMode::Raw);
    for recording in [&mut neutral.recording, &mut raw.recording] {
        recording.redacted = redaction.describe();
        let dropped = recording.exchanges.iter().enumerate().filter(|(_, exchange)| exchange.raw.is_none());
        recording.redacted.extend(dropped.map(|(index, _)| Redaction::raw_dropped(index + 1)).collect::<Vec<_>>());
        // The last line: a pattern that still matches is never written.
        if redaction.finds(&reloop_eval::recording_file::to_yaml(recording)) {
            return Err(bad("a --redact-body pattern still matched the recording to be written".into()));
        }
    }
    let exchanges = neutral.recording.exchanges.len();
    write_yaml(&out.join(recording_file_name(&name)), &neutral.recording)?;
    write_yaml(&out.join(format!("{name}.raw.recording.yaml")), &raw.recording)?;
    write_yaml(&out.join(format!("{name}.yaml")), &skeleton_scenario(&neutral.skeleton, &name, &recording_file_name(&name), &neutral.recording))?;
    let mut summary = format!("{name} (vcr:{}): {exchanges} exchanges over {}, neutral and raw recordings and a scenario skeleton written to {}\n", file.display(), neutral.skeleton.wire, out.display());
    for skipped in &neutral.skipped {
        summary.push_str(&format!("  skipped {skipped}\n"));
    }
    Ok(summary)
}

fn read_text(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|source| ImportError::Io { path: path.to_owned(), source })
}
