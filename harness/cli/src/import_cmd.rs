//! `reloop import FILE... --out DIR`: each session file becomes a scenario,
//! a recording and an import report (`reloop-import`); the report's summary
//! is printed. Bad input (an unreadable file, an unknown format, a bad
//! `--tools` file) is named with its file and exits 2.

use std::path::Path;

use reloop_import::{ConvertOptions, Format, ImportError, convert, read_session, read_tools, recording_file_name, scenario_name, write_files};

use crate::app::{ImportArgs, ImportFormat};
use crate::exit_code;
use crate::stdout::print_stdout;

/// Runs the command.
pub fn run(args: &ImportArgs) -> anyhow::Result<i32> {
    match import_all(args) {
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

fn import_all(args: &ImportArgs) -> Result<String, ImportError> {
    let format = match args.format {
        ImportFormat::Auto => None,
        ImportFormat::Pi => Some(Format::Pi),
        ImportFormat::Codex => Some(Format::Codex),
        ImportFormat::ClaudeCode => Some(Format::ClaudeCode),
        ImportFormat::OpenaiMessages => Some(Format::OpenaiMessages),
    };
    let system = args.system.as_deref().map(read_text).transpose()?;
    let tools = args.tools.as_deref().map(read_tools).transpose()?;
    let mut summary = String::new();
    for file in &args.files {
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

fn read_text(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|source| ImportError::Io { path: path.to_owned(), source })
}
