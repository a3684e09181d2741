//! `reloop import`: real agent sessions become scenarios and recordings
//! (`docs/import.md`; where it sits: `docs/architecture.md`).
//!
//! One module per source format ([`formats`]) reads a file into the neutral
//! [`ImportedSession`]; one writer ([`convert`]) turns that into a scenario,
//! a recording and an [`ImportReport`]. The agents' tool declarations live
//! in `reloop_files::presets`, shared with black-box scenarios. The field
//! mapping of every format is in `docs/import.md`.

pub mod agent_scenario;
pub mod agent_world;
pub mod capture_writer;
pub mod convert;
pub mod detect;
pub mod fixture_answers;
pub mod formats;
pub mod jsonl;
pub mod recorded_calls;
pub mod report;
pub mod session;
pub mod skeleton;
pub mod vcr;
pub mod workspace;
pub mod zip;

use std::path::{Path, PathBuf};

pub use convert::{ConvertOptions, Converted, convert};
pub use detect::{Format, detect};
pub use reloop_files::presets::{Preset, PresetTool, preset};
pub use report::ImportReport;
pub use session::ImportedSession;
pub use skeleton::{Skeleton, skeleton_of_request, skeleton_scenario};

/// Why an import failed: bad input, named by file (exit 2 in the CLI).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An input that is not a regular file, is too large or is not text.
    #[error("{path}: {message}")]
    Input {
        /// The file.
        path: PathBuf,
        /// Why it is refused.
        message: String,
    },
    /// `--format auto` found no format.
    #[error("{path}:1: is in none of the formats reloop imports ({}); if it is one of them, pass --format", detect::formats_read())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// Read as `format`, the file holds no model call, answered or failed:
    /// a scenario from it would pass on nothing.
    #[error("{path}: read as {format}, holds no model call{why}; reloop imports {}: if the file is another of them, pass --format", detect::formats_read())]
    NoModelCall {
        /// The file.
        path: PathBuf,
        /// The format it was read as.
        format: &'static str,
        /// What the reader made of its lines (`: all 12 lines skipped, the first: not JSON (…)`), or empty.
        why: String,
    },
    /// The `--tools` file is not a list of tool declarations.
    #[error("{path}:{line}: field `tools`: {message}")]
    ToolsFile {
        /// The file.
        path: PathBuf,
        /// Where.
        line: usize,
        /// What.
        message: String,
    },
    /// A cassette that cannot be read.
    #[error("{path}: {message}")]
    Cassette {
        /// The file.
        path: PathBuf,
        /// What and where.
        message: String,
    },
    /// Output could not be serialized.
    #[error("{path}: cannot write YAML: {message}")]
    Serialize {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// One session read from a file, and what names it among the file's
/// sessions when the file holds several (an Inspect AI log's sample and
/// epoch, `3-epoch-1`), which its scenario's name ends with.
#[derive(Debug)]
pub struct NamedSession {
    /// `None` for the one session of a file.
    pub part: Option<String>,
    /// The session.
    pub session: ImportedSession,
}

impl NamedSession {
    /// The one session of a file.
    fn whole(session: ImportedSession) -> Self {
        Self { part: None, session }
    }
}

/// Reads `path` as `format` (or detects it) into a session: a file that
/// holds several (an Inspect AI log of many samples) is refused here, with
/// [`read_sessions`] named.
pub fn read_session(path: &Path, format: Option<Format>) -> Result<ImportedSession, ImportError> {
    let mut sessions = read_sessions(path, format)?;
    match sessions.len() {
        1 => sessions.remove(0).map(|named| named.session),
        n => Err(ImportError::Input { path: path.to_owned(), message: format!("holds {n} sessions; read them with read_sessions") }),
    }
}

/// Reads `path` as `format` (or detects it) into its sessions: one, or one
/// per sample and epoch of an Inspect AI log, each refused on its own when
/// it holds no model call. `Err` when the file itself cannot be read.
pub fn read_sessions(path: &Path, format: Option<Format>) -> Result<Vec<Result<NamedSession, ImportError>>, ImportError> {
    let refuse = |message: String| ImportError::Input { path: path.to_owned(), message };
    if path.is_dir() {
        return match format {
            None | Some(Format::OpenaiMessages) => {
                Ok(vec![read_sdk_folder(path).and_then(|session| with_a_model_call(path, session)).map(NamedSession::whole)])
            }
            Some(other) => Err(refuse(format!(
                "a folder is read only as an OpenHands SDK conversation (format openai-messages), not as {}: name the session file instead",
                other.name()
            ))),
        };
    }
    let limit = reloop_files::input_file::max_input_bytes();
    let bytes = reloop_files::regular_file::read_bytes(path, limit).map_err(refuse)?;
    if zip::is_zip(&bytes) {
        if format.is_some_and(|format| format != Format::Inspect) {
            return Err(refuse(format!(
                "a zip archive is read only as an Inspect AI `.eval` log (format inspect), not as {}",
                format.map_or("", Format::name)
            )));
        }
        let mut archive = zip::Archive::open(&bytes, limit).map_err(refuse)?;
        if !formats::inspect::is_eval_archive(archive.names()) {
            return Err(refuse("a zip archive without `header.json`: not an Inspect AI `.eval` log, the one archive reloop imports".into()));
        }
        return formats::inspect::parse_archive(&mut archive).map(|samples| samples_of(path, samples)).map_err(refuse);
    }
    if formats::otlp::is_protobuf(&bytes) || (format == Some(Format::Otlp) && std::str::from_utf8(&bytes).is_err()) {
        if let Some(other) = format.filter(|format| *format != Format::Otlp) {
            return Err(refuse(format!("an OTLP protobuf trace file is read only as format otlp, not as {}", other.name())));
        }
        return Ok(traces_of(path, formats::otlp::parse_protobuf(&bytes)));
    }
    let text = String::from_utf8(bytes).map_err(|e| refuse(format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let format = format.or_else(|| detect(&name, &text)).ok_or_else(|| ImportError::UnknownFormat { path: path.to_owned() })?;
    let session = match format {
        Format::Pi => formats::pi::parse(&text),
        Format::Codex => formats::codex::parse(&text),
        Format::ClaudeCode => formats::claude_code::parse(&text),
        Format::OpenaiMessages => formats::openai_messages::parse(&text),
        Format::Atif => formats::atif::parse(&text),
        Format::GeminiCli => formats::gemini_cli::parse(&text),
        Format::OpenCode => formats::opencode::parse(&text),
        Format::Goose => formats::goose::parse(&text),
        Format::Otlp => return Ok(traces_of(path, formats::otlp::parse_text(&text))),
        Format::Inspect => {
            return Ok(match formats::inspect::parse_document(&text) {
                Ok(samples) => samples_of(path, samples),
                // Not an eval log at all: the reader's why, as the other formats give it.
                Err(why) => vec![Err(ImportError::NoModelCall { path: path.to_owned(), format: "inspect", why: format!(": {why}") })],
            });
        }
    };
    Ok(vec![with_a_model_call(path, session).map(NamedSession::whole)])
}

/// The sessions of an Inspect AI log's samples, each named by its sample
/// and epoch when there are several; a sample without a model call is
/// refused as `FILE (sample ID-epoch-N)`.
fn samples_of(path: &Path, samples: Vec<formats::inspect::Sample>) -> Vec<Result<NamedSession, ImportError>> {
    if samples.is_empty() {
        return vec![Err(ImportError::NoModelCall { path: path.to_owned(), format: "inspect", why: ": it holds no sample".into() })];
    }
    parts_of(path, "sample", samples.into_iter().map(|sample| (sample.part, sample.session)).collect())
}

/// The sessions of an OTLP file's traces, each named by its trace id when
/// there are several (refused as `FILE (trace ID)`).
pub fn traces_of(path: &Path, traces: Vec<formats::otlp::Trace>) -> Vec<Result<NamedSession, ImportError>> {
    parts_of(path, "trace", traces.into_iter().map(|trace| (trace.part, trace.session)).collect())
}

/// The sessions of the traces `reloop import --otlp-listen` received, each
/// named by its trace id (refused as `otlp-listen (trace ID)`).
pub fn received_traces(traces: Vec<formats::otlp::Trace>) -> Vec<Result<NamedSession, ImportError>> {
    traces
        .into_iter()
        .map(|trace| {
            let named = PathBuf::from(format!("otlp-listen (trace {})", trace.part));
            with_a_model_call(&named, trace.session).map(|session| NamedSession { part: Some(trace.part), session })
        })
        .collect()
}

/// The sessions of a file's parts (`what`: sample, trace), named by their
/// part when there are several.
fn parts_of(path: &Path, what: &str, parts: Vec<(String, ImportedSession)>) -> Vec<Result<NamedSession, ImportError>> {
    let several = parts.len() > 1;
    parts
        .into_iter()
        .map(|(part, session)| {
            let named = if several { PathBuf::from(format!("{} ({what} {part})", path.display())) } else { path.to_owned() };
            with_a_model_call(&named, session).map(|session| NamedSession { part: several.then_some(part), session })
        })
        .collect()
}

/// `session`, unless it holds no model call: neither a response nor a
/// failed call. Nothing is made up for it (a scenario whose only answer
/// reloop wrote would pass on nothing): it is refused, with what the
/// reader made of the file's lines, which says whether it was read in the
/// wrong format.
fn with_a_model_call(path: &Path, session: ImportedSession) -> Result<ImportedSession, ImportError> {
    let called = session.items.iter().any(|item| matches!(item, session::Item::Assistant(_) | session::Item::ProviderError(_)))
        || matches!(session.exit, Some(session::Exit::Failed(_)));
    if called {
        return Ok(session);
    }
    let lines = &session.lines;
    let why = match lines.skipped.first() {
        Some(first) if lines.read == 1 => format!(": its one record skipped: {}", first.reason),
        Some(first) if lines.skipped.len() == lines.read => format!(": all {} of its lines skipped, the first ({}): {}", lines.read, first.line, first.reason),
        Some(first) => format!(": {} of its {} lines skipped, the first ({}): {}", lines.skipped.len(), lines.read, first.line, first.reason),
        None => String::new(),
    };
    Err(ImportError::NoModelCall { path: path.to_owned(), format: session.format, why })
}

/// An OpenHands SDK conversation folder, as the SDK persists it:
/// `base_state.json` and `events/event-NNNNN-<id>.json`, one event per file,
/// in the order of their names.
fn read_sdk_folder(path: &Path) -> Result<ImportedSession, ImportError> {
    let refuse = |message: String| ImportError::Input { path: path.to_owned(), message };
    let json = |file: &Path| -> Result<serde_json::Value, ImportError> {
        serde_json::from_str(&read_input(file)?).map_err(|error| ImportError::Input { path: file.to_owned(), message: format!("not JSON: {error}") })
    };
    let events_dir = path.join("events");
    let listing = std::fs::read_dir(&events_dir)
        .map_err(|error| refuse(format!("a folder is read as an OpenHands SDK conversation, but {} cannot be listed: {error}", events_dir.display())))?;
    let mut files: Vec<PathBuf> = listing
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|file| file.file_name().is_some_and(|n| n.to_string_lossy().starts_with("event-")) && file.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let events = files.iter().map(|file| json(file)).collect::<Result<Vec<_>, _>>()?;
    let base_state = json(&path.join("base_state.json"))?;
    Ok(formats::openai_messages::parse_sdk(&events, &base_state))
}

/// Reads a `--tools` file: a JSON or YAML list of `{name, description,
/// parameters}`, or a preset file (`{agent, source, tools}`).
pub fn read_tools(path: &Path) -> Result<Vec<PresetTool>, ImportError> {
    let text = read_input(path)?;
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum ToolsFile {
        List(Vec<PresetTool>),
        Preset(Preset),
    }
    let parsed: ToolsFile = serde_saphyr::from_str(&text).map_err(|error| ImportError::ToolsFile {
        path: path.to_owned(),
        line: 1,
        message: format!("expected a list of {{name, description, parameters}} or a preset file: {error}"),
    })?;
    Ok(match parsed {
        ToolsFile::List(tools) => tools,
        ToolsFile::Preset(preset) => preset.tools,
    })
}

/// The text of an input file (a session, a cassette, `--system`,
/// `--tools`): a regular file within the input size limit, as for
/// scenarios ([`reloop_files::regular_file`]).
pub fn read_input(path: &Path) -> Result<String, ImportError> {
    let limit = reloop_files::input_file::max_input_bytes();
    reloop_files::regular_file::read_text(path, limit).map_err(|message| ImportError::Input { path: path.to_owned(), message })
}

/// The three files of one import, written beside each other in `dir`:
/// `NAME.yaml` (scenario), `NAME.recording.yaml`, `NAME.import.json`.
pub fn write_files(dir: &Path, converted: &Converted) -> Result<Vec<PathBuf>, ImportError> {
    let [scenario, recording, report] = import_file_names(&converted.name);
    let files = [
        (dir.join(scenario), yaml(&converted.scenario, dir)?),
        (dir.join(recording), reloop_files::recording_file::to_yaml(&converted.recording)),
        (dir.join(report), serde_json::to_string_pretty(&converted.report).expect("a report serializes") + "\n"),
    ];
    std::fs::create_dir_all(dir).map_err(|source| ImportError::Io { path: dir.to_owned(), source })?;
    for (path, text) in &files {
        write_atomically(path, text)?;
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

/// The two files of `--agent`'s black-box scenario, written beside the
/// import's: `NAME-PRESET.yaml` and its recording.
pub fn write_agent_files(dir: &Path, agent: &agent_world::scenario::AgentImport) -> Result<Vec<PathBuf>, ImportError> {
    let files = [
        (dir.join(format!("{}.yaml", agent.name)), yaml(&agent.scenario, dir)?),
        (dir.join(recording_file_name(&agent.name)), reloop_files::recording_file::to_yaml(&agent.recording)),
    ];
    for (path, text) in &files {
        write_atomically(path, text)?;
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

/// The names of the files [`write_files`] writes for scenario `name`:
/// scenario, recording, import report.
pub fn import_file_names(name: &str) -> [String; 3] {
    [format!("{name}.yaml"), recording_file_name(name), format!("{name}.import.json")]
}

/// The recording's file name for scenario `name`.
pub fn recording_file_name(name: &str) -> String {
    format!("{name}.recording.yaml")
}

/// Writes `value` (a scenario, a recording) as YAML to `path`, atomically:
/// what `record` and `serve --capture` use for the skeleton they write.
pub fn write_yaml<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), ImportError> {
    write_atomically(path, &yaml(value, path)?)
}

fn yaml<T: serde::Serialize>(value: &T, dir: &Path) -> Result<String, ImportError> {
    serde_saphyr::to_string(value).map_err(|error| ImportError::Serialize { path: dir.to_owned(), message: error.to_string() })
}

/// Writes through a synced temporary file and a rename: a crash leaves the old file or the new one.
fn write_atomically(path: &Path, text: &str) -> Result<(), ImportError> {
    use std::io::Write as _;
    reloop_files::atomic_file::write_atomically(path, |file| file.write_all(text.as_bytes()))
        .map_err(|source| ImportError::Io { path: path.to_owned(), source })
}

/// A scenario name from a file name: the stem, lowercased, with anything
/// but letters, digits and `-` turned into `-`.
pub fn scenario_name(path: &Path) -> String {
    name_of(&path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "session".into()))
}

/// `text` as (part of) a scenario name: lowercased, anything but letters,
/// digits and `-` turned into `-`, runs of `-` joined, none at the ends.
pub fn name_of(text: &str) -> String {
    let mut name: String = text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '-' }).collect();
    while name.contains("--") {
        name = name.replace("--", "-");
    }
    name.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_named_with_a_file_format_is_refused_not_read_as_another() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions/openhands/openhands-sdk-1-58-2-condensation-against-reloop-mock");
        let error = read_session(&folder, Some(Format::Pi)).unwrap_err().to_string();
        assert!(error.contains("openhands-sdk-1-58-2-condensation-against-reloop-mock") && error.contains("not as pi"), "{error}");
        assert_eq!(read_session(&folder, Some(Format::OpenaiMessages)).unwrap().items.len(), read_session(&folder, None).unwrap().items.len());
    }
}
