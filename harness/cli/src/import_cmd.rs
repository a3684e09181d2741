//! `reloop import FILE... --out DIR`: each session file becomes a scenario,
//! a recording and an import report (`reloop-import`); the report's summary
//! is printed. Bad input (an unreadable file, an unknown format, a bad
//! `--tools` file) is named with its file and exits 2. In a batch, a file
//! that cannot be imported is named with its reason and the others are
//! still written: one bad file among a hundred costs that file, not the
//! other ninety-nine.

use std::path::Path;

use reloop_files::scenario::agent::ToolSideMode;
use reloop_import::agent_world::{AgentReport, preset_of, scenario::agent_imports};
use reloop_import::vcr::{import_cassette, is_cassette};
use reloop_import::{
    ConvertOptions, Format, ImportError, NamedSession, PresetTool, convert, import_file_names, name_of, read_input, read_sessions, read_tools,
    recording_file_name, scenario_name, skeleton_scenario, write_agent_files, write_files, write_yaml,
};
use reloop_recording::ReplayMode;
use reloop_recording::capture::Redaction;

use crate::app::{AgentTools, ImportArgs, ImportFormat};
use crate::exit_code;
use crate::interrupt::Interrupt;
use crate::stdout::print_stdout;

/// Runs the command: the files, or what `--otlp-listen` receives.
pub fn run(args: &ImportArgs, interrupt: &Interrupt) -> anyhow::Result<i32> {
    if let Some(addr) = &args.otlp_listen {
        return write_what_was_received(args, addr, interrupt);
    }
    let redaction = match Redaction::new(&args.redact.redact_header, &args.redact.redact_body) {
        Ok(redaction) => redaction,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    match import_all(args, &redaction) {
        Ok(batch) => {
            print_stdout(&batch.summary)?;
            for error in &batch.failed {
                eprintln!("error: {error}");
            }
            if batch.failed.is_empty() {
                return Ok(exit_code::SUCCESS);
            }
            if batch.files > 1 {
                eprintln!("{} of {} files not imported (named above); the others were written", batch.failed.len(), batch.files);
            }
            Ok(exit_code::BAD_INPUT)
        }
        Err(error) => {
            eprintln!("error: {error}");
            Ok(exit_code::BAD_INPUT)
        }
    }
}

/// What a batch import did: the summary of the files written, and the
/// files that could not be imported, each with its reason.
pub(crate) struct Batch {
    pub(crate) summary: String,
    pub(crate) failed: Vec<ImportError>,
    files: usize,
}

/// Imports every file. `Err` only for what stops the whole batch before
/// anything is written (a bad `--system` or `--tools` file, names that
/// collide, files that would be replaced).
fn import_all(args: &ImportArgs, redaction: &Redaction) -> Result<Batch, ImportError> {
    let format = match args.format {
        ImportFormat::Auto => None,
        ImportFormat::Pi => Some(Format::Pi),
        ImportFormat::Codex => Some(Format::Codex),
        ImportFormat::ClaudeCode => Some(Format::ClaudeCode),
        ImportFormat::OpenaiMessages => Some(Format::OpenaiMessages),
        ImportFormat::Atif => Some(Format::Atif),
        ImportFormat::GeminiCli => Some(Format::GeminiCli),
        ImportFormat::Inspect => Some(Format::Inspect),
        ImportFormat::Opencode => Some(Format::OpenCode),
        ImportFormat::Goose => Some(Format::Goose),
        ImportFormat::Otlp => Some(Format::Otlp),
        ImportFormat::Vcr => None,
    };
    let system = args.system.as_deref().map(read_input).transpose()?;
    let tools = args.tools.as_deref().map(read_tools).transpose()?;
    let sources = plan(args)?;
    let mut batch = Batch { summary: String::new(), failed: Vec::new(), files: sources.len() };
    for source in sources {
        let imported = if source.cassette {
            vec![cassette(source.file, &source.name, &args.out, redaction)]
        } else {
            match read_sessions(source.file, format) {
                Ok(sessions) => {
                    sessions.into_iter().map(|read| read.and_then(|named| session(&source, named, system.as_deref(), tools.as_deref(), args))).collect()
                }
                Err(error) => vec![Err(error)],
            }
        };
        for result in imported {
            match result {
                Ok(summary) => batch.summary.push_str(&summary),
                Err(error) => batch.failed.push(error),
            }
        }
    }
    Ok(batch)
}

/// `--otlp-listen`: receives until the receiver stops, then writes the
/// traces; exit 0 when `--otlp-exit-after` stopped it, 130 at Ctrl-C, 2
/// when a trace could not be imported or none came.
fn write_what_was_received(args: &ImportArgs, addr: &str, interrupt: &Interrupt) -> anyhow::Result<i32> {
    let (traces, stopped_by_count) = match crate::import_otlp_listen::receive(args, addr, interrupt)? {
        crate::import_otlp_listen::Received::Traces(traces, stopped_by_count) => (traces, stopped_by_count),
        crate::import_otlp_listen::Received::Exit(code) => return Ok(code),
    };
    let batch = match write_received(args, traces) {
        Ok(batch) => batch,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(exit_code::BAD_INPUT);
        }
    };
    print_stdout(&batch.summary)?;
    for error in &batch.failed {
        eprintln!("error: {error}");
    }
    Ok(match (batch.failed.is_empty(), stopped_by_count) {
        (false, _) => exit_code::BAD_INPUT,
        (true, true) => exit_code::SUCCESS,
        (true, false) => exit_code::INTERRUPTED,
    })
}

/// Writes the sessions of the traces `--otlp-listen` received, each named
/// `otlp-TRACE_ID`, as a file's would be; the summary, and the traces that
/// could not be imported.
fn write_received(args: &ImportArgs, traces: Vec<Result<NamedSession, ImportError>>) -> Result<Batch, ImportError> {
    let system = args.system.as_deref().map(read_input).transpose()?;
    let tools = args.tools.as_deref().map(read_tools).transpose()?;
    let source = Source { file: Path::new("otlp-listen"), name: "otlp".into(), cassette: false };
    let mut batch = Batch { summary: String::new(), failed: Vec::new(), files: traces.len() };
    for read in traces {
        match read.and_then(|named| session(&source, named, system.as_deref(), tools.as_deref(), args)) {
            Ok(summary) => batch.summary.push_str(&summary),
            Err(error) => batch.failed.push(error),
        }
    }
    Ok(batch)
}

/// A session of a file: its scenario, recording and import report
/// written; the summary. One of several sessions of a file (an Inspect AI
/// sample) is named `NAME-PART`, which [`plan`] could not check before the
/// file was read: it is checked here, before its files are written.
fn session(source: &Source<'_>, named: NamedSession, system: Option<&str>, tools: Option<&[PresetTool]>, args: &ImportArgs) -> Result<String, ImportError> {
    let file = source.file;
    let NamedSession { part, session } = named;
    let file_name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (name, source_name) = match part {
        None => (source.name.clone(), file_name),
        Some(part) => {
            let name = format!("{}-{}", source.name, name_of(&part));
            if let Some(existing) = import_file_names(&name).iter().map(|name| args.out.join(name)).find(|path| !args.force && path.exists()) {
                let message = format!("would replace {}, which exists already; pass --force to replace it", existing.display());
                return Err(ImportError::Input { path: file.to_owned(), message });
            }
            (name, format!("{file_name}#{part}"))
        }
    };
    let options = ConvertOptions {
        source: format!("{}:{source_name}", session.format),
        recording_path: recording_file_name(&name),
        name,
        system: system.map(str::to_owned),
        tools: tools.map(<[PresetTool]>::to_vec),
        workspace_root: args.workspace_root.clone(),
    };
    let agents = args.agent.map(|tools| agent_of(file, &session, &options, tools, args)).transpose()?.unwrap_or_default();
    let mut converted = convert(session, options);
    converted.report.agent = agents.iter().map(|agent| AgentReport::of(&agent.name, agent.preset, &agent.world)).collect();
    let mut written = write_files(&args.out, &converted)?;
    for agent in &agents {
        written.extend(write_agent_files(&args.out, agent)?);
    }
    let mut summary = converted.report.summary();
    summary.push_str(&format!("  wrote {}\n", written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")));
    Ok(summary)
}

/// `--agent`: the black-box scenarios of the session's own agent, one per
/// user turn, refused (naming the file) for an agent reloop does not read
/// the tool side of, or, without `--force`, when their files exist already.
fn agent_of(
    file: &Path,
    session: &reloop_import::ImportedSession,
    options: &ConvertOptions,
    tools: AgentTools,
    args: &ImportArgs,
) -> Result<Vec<reloop_import::agent_world::scenario::AgentImport>, ImportError> {
    let refuse = |message: String| ImportError::Input { path: file.to_owned(), message };
    let preset = preset_of(session).map_err(refuse)?;
    let tools = match tools {
        AgentTools::Replay => ToolSideMode::Replay,
        AgentTools::ReplayOrLive => ToolSideMode::ReplayOrLive,
    };
    let agents = agent_imports(preset, session.clone(), options, tools).map_err(refuse)?;
    let names = agents.iter().flat_map(|agent| [format!("{}.yaml", agent.name), recording_file_name(&agent.name)]);
    if let Some(existing) = names.map(|n| args.out.join(n)).find(|path| !args.force && path.exists()) {
        return Err(refuse(format!("would replace {}, which exists already; pass --force to replace it", existing.display())));
    }
    Ok(agents)
}

/// One source file and what it becomes.
struct Source<'a> {
    file: &'a Path,
    /// The scenario name, the stem of every file written for it.
    name: String,
    /// A vcr cassette (else a session).
    cassette: bool,
}

/// Every source with its name, refused before anything is written when a
/// name cannot be made (it would be a hidden `.yaml`), when two sources
/// map to one name (`Session.jsonl` and `session.jsonl`: the second would
/// replace the first), or, without `--force`, when a file to be written
/// exists already (an earlier import, maybe edited since).
fn plan(args: &ImportArgs) -> Result<Vec<Source<'_>>, ImportError> {
    let refuse = |path: &Path, message: String| ImportError::Input { path: path.to_owned(), message };
    let mut sources: Vec<Source<'_>> = Vec::new();
    for file in &args.files {
        let name = scenario_name(file);
        if name.is_empty() {
            return Err(refuse(file, "no scenario name can be made from this file name (it needs a letter or a digit); rename the file".into()));
        }
        if let Some(first) = sources.iter().find(|source| source.name.eq_ignore_ascii_case(&name)) {
            return Err(refuse(
                file,
                format!("would become scenario `{name}`, as {} does; rename one of them or import them into different --out folders", first.file.display()),
            ));
        }
        let cassette = args.format == ImportFormat::Vcr || (args.format == ImportFormat::Auto && is_yaml_cassette(file));
        sources.push(Source { file, name, cassette });
    }
    if !args.force {
        for source in &sources {
            let names = if source.cassette { cassette_file_names(&source.name) } else { import_file_names(&source.name) };
            if let Some(existing) = names.iter().map(|name| args.out.join(name)).find(|path| path.exists()) {
                let message = format!("would replace {}, which exists already; pass --force to replace it", existing.display());
                return Err(refuse(source.file, message));
            }
        }
    }
    Ok(sources)
}

fn is_yaml_cassette(file: &Path) -> bool {
    file.extension().is_some_and(|e| e == "yaml" || e == "yml") && read_input(file).is_ok_and(|text| is_cassette(&text))
}

/// The files a cassette becomes: neutral recording, raw recording, scenario skeleton.
fn cassette_file_names(name: &str) -> [String; 3] {
    [recording_file_name(name), format!("{name}.raw.recording.yaml"), format!("{name}.yaml")]
}

/// A cassette: `NAME.recording.yaml` (neutral replay), `NAME.raw.recording.yaml`
/// (byte-for-byte replay) and the scenario skeleton `NAME.yaml`, with what
/// `redaction` strips gone and listed under `redacted:`.
fn cassette(file: &Path, name: &str, out: &Path, redaction: &Redaction) -> Result<String, ImportError> {
    let text = read_input(file)?;
    let bad = |message: String| ImportError::Cassette { path: file.to_owned(), message };
    std::fs::create_dir_all(out).map_err(|source| ImportError::Io { path: out.to_owned(), source })?;
    let mut neutral = import_cassette(&text, redaction).map_err(bad)?;
    let mut raw = neutral.clone();
    // The exchange standing for a call that failed for good has no bytes: its fault answers.
    raw.recording.exchanges.iter_mut().filter(|exchange| exchange.request.is_some()).for_each(|exchange| exchange.replay = ReplayMode::Raw);
    for recording in [&mut neutral.recording, &mut raw.recording] {
        recording.redacted = redaction.describe();
        let dropped = recording.exchanges.iter().enumerate().filter(|(_, exchange)| exchange.request.is_some() && exchange.raw.is_none());
        recording.redacted.extend(dropped.map(|(index, _)| Redaction::raw_dropped(index + 1)).collect::<Vec<_>>());
        // The last line: a pattern that still matches is never written.
        if redaction.finds(&reloop_eval::recording_file::to_yaml(recording)) {
            return Err(bad("a --redact-body pattern still matched the recording to be written".into()));
        }
    }
    let exchanges = neutral.recording.exchanges.len();
    let [neutral_file, raw_file, skeleton_file] = cassette_file_names(name);
    write_yaml(&out.join(&neutral_file), &neutral.recording)?;
    write_yaml(&out.join(raw_file), &raw.recording)?;
    let mut scenario = skeleton_scenario(&neutral.skeleton, name, &neutral_file, &neutral.recording);
    scenario.faults = neutral.faults.clone();
    write_yaml(&out.join(skeleton_file), &scenario)?;
    let mut summary = format!(
        "{name} (vcr:{}): {exchanges} exchanges over {}, neutral and raw recordings and a scenario skeleton written to {}\n",
        file.display(),
        neutral.skeleton.wire,
        out.display()
    );
    for skipped in &neutral.skipped {
        summary.push_str(&format!("  skipped {skipped}\n"));
    }
    for failed in &neutral.failed {
        summary.push_str(&format!("  {failed}\n"));
    }
    Ok(summary)
}
