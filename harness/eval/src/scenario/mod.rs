//! Scenarios (`docs/scenario-format.md`): a file as written ([`spec`]),
//! loaded with its recording and checked ([`ScenarioFile`]), and one run of
//! it for one wire format and variant ([`Scenario`]).

pub use reloop_files::scenario::{agent, spec};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use reloop_agent::{LoopSettings, WireFormat};
use reloop_recording::Recording;

pub use spec::{
    ApprovalAnswer, Bounds, DoomLoopExpectation, Ending, Expectations, FixtureResult, Interrupt, ScenarioSpec, Steering, SystemChange, ToolFixture, WireChoice,
};

use reloop_files::kind::{FileKind, Skipped, files_below};

use crate::yaml::{self, InputError};
use crate::{input_file, validate_settings};

/// The variant label of a plain run.
pub const DEFAULT_VARIANT: &str = "default";

/// A scenario ready to run: parsed, validated, with its recording loaded,
/// for one wire format and one variant. The bulk (fixtures, recording) is
/// shared by reference with the file's other wires and variants; a run owns
/// only its labels and its loop settings.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The unique name (`name@format` when the file names several formats).
    pub name: String,
    /// The wire format of this run.
    pub wire: WireFormat,
    /// The variant label of this run (`default` unless sweeping).
    pub variant: String,
    /// Where it came from.
    pub file: PathBuf,
    /// The spec as written, shared by every run of the file.
    pub spec: Arc<ScenarioSpec>,
    /// The loop settings of this run: the spec's, with the variant's overrides.
    pub loop_settings: LoopSettings,
    /// The loaded recording.
    pub recording: Arc<Recording>,
    /// Where calls that go live are sent (`run --upstream`); `None` replays only.
    pub live: Option<Arc<LiveSettings>>,
}

/// Where a batch's live calls go and where its re-recordings are written.
/// A scenario carries it, and [`crate::live_run`] (above the scenario, which
/// it reads) acts on it once the run ends.
#[derive(Debug, Clone)]
pub struct LiveSettings {
    /// The upstream, when calls go live, and what is redacted.
    pub upstream: reloop_mock::live::Upstream,
    /// The re-recording's path (a batch of one run only); by default
    /// [`crate::live_run::rerecording_path`].
    pub rerecord_to: Option<PathBuf>,
}

impl Scenario {
    /// Loads, validates and resolves `file`: one scenario per wire format.
    pub fn load_all(file: &Path) -> Result<Vec<Self>, InputError> {
        Ok(ScenarioFile::load(file)?.runs())
    }

    /// Loads, validates and resolves `file`, for its first wire format.
    pub fn load(file: &Path) -> Result<Self, InputError> {
        let loaded = ScenarioFile::load(file)?;
        let wire = loaded.run_names().first().map_or(WireFormat::OpenaiChat, |(_, wire)| *wire);
        Ok(loaded.run(loaded.name.clone(), wire))
    }

    /// The system prompt in force at `step`.
    pub fn system_prompt_at(&self, step: u32) -> &str {
        self.spec
            .system_changes
            .iter()
            .filter(|change| change.from_step <= step)
            .max_by_key(|change| change.from_step)
            .map_or(self.spec.system.as_str(), |change| change.system.as_str())
    }
}

/// One scenario file, parsed and validated, with its recording: what its
/// runs (one per wire format, times the variants) share by reference.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    /// Where it came from.
    pub file: PathBuf,
    /// The name of its runs (before any `@format`).
    pub name: String,
    /// The spec as written.
    pub spec: Arc<ScenarioSpec>,
    /// The loaded recording.
    pub recording: Arc<Recording>,
}

/// The recording a batch read last, with its path: the files of a batch
/// often name one recording (a generated suite, a scenario's variants), and
/// each reading of a scenario file parsed and checked it again. Holding only
/// the last keeps a batch of distinct recordings to one in memory.
#[derive(Debug, Default)]
pub struct LastRecording(Mutex<Option<(PathBuf, Arc<Recording>)>>);

impl LastRecording {
    fn load(&self, path: &Path) -> Result<Arc<Recording>, InputError> {
        let last = || self.0.lock().expect("last recording poisoned");
        if let Some((_, recording)) = last().as_ref().filter(|(kept, _)| kept == path) {
            return Ok(Arc::clone(recording));
        }
        let recording = Arc::new(yaml::load_checked(path, validate_settings::check_recording)?);
        *last() = Some((path.to_owned(), Arc::clone(&recording)));
        Ok(recording)
    }
}

impl ScenarioFile {
    /// Loads and validates `file` and the recording it names.
    pub fn load(file: &Path) -> Result<Self, InputError> {
        Self::load_sharing(file, &LastRecording::default())
    }

    /// [`ScenarioFile::load`], taking the recording from `last` when it is
    /// the one `file` names.
    pub fn load_sharing(file: &Path, last: &LastRecording) -> Result<Self, InputError> {
        let text = input_file::read_text(file, input_file::max_input_bytes())?;
        let mut spec: ScenarioSpec = yaml::parse(file, &text)?;
        spec.agent = spec.agent.as_ref().map(agent::AgentSpec::resolved);
        validate(file, &spec)?;
        if matches!(&spec.wire, WireChoice::Many(wires) if wires.is_empty()) {
            return Err(InputError::field(file, "wire", "names no wire format"));
        }
        let recording_path = file.parent().unwrap_or(Path::new(".")).join(&spec.recording);
        let recording = last.load(&recording_path)?;
        if let Some(agent) = &spec.agent {
            check_mcp(file, agent, &recording)?;
        }
        validate_settings::check_scenario(&spec, &recording).map_err(|e| yaml::range_error(file, &text, e))?;
        validate_settings::check_plugin_file(&spec.loop_settings.strategy, file.parent().unwrap_or(Path::new(".")))
            .map_err(|e| yaml::range_error(file, &text, e))?;
        if let Some(agent) = spec.agent.as_ref().filter(|a| a.preset.is_some()) {
            check_calls_fit(&recording_path, agent, &recording)?;
        }
        spec.loop_settings.context_window = spec.context_window;
        let name = spec.name.clone().unwrap_or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
        Ok(Self { file: file.to_owned(), name, spec: Arc::new(spec), recording })
    }

    /// Its runs' names and wire formats: `name@format` when it names several.
    pub fn run_names(&self) -> Vec<(String, WireFormat)> {
        match &self.spec.wire {
            _ if let Some(wire) = self.spec.agent.as_ref().and_then(|a| a.wire) => vec![(self.name.clone(), wire)],
            WireChoice::One(wire) => vec![(self.name.clone(), *wire)],
            WireChoice::Many(wires) => wires.iter().map(|wire| (format!("{}@{}", self.name, wire.as_str()), *wire)).collect(),
        }
    }

    /// One scenario per wire format, with the spec's own settings.
    pub fn runs(&self) -> Vec<Scenario> {
        self.run_names().into_iter().map(|(name, wire)| self.run(name, wire)).collect()
    }

    /// The run named `name` over `wire`, sharing this file's bulk.
    pub fn run(&self, name: String, wire: WireFormat) -> Scenario {
        Scenario {
            name,
            wire,
            variant: DEFAULT_VARIANT.to_owned(),
            file: self.file.clone(),
            spec: Arc::clone(&self.spec),
            loop_settings: self.spec.loop_settings.clone(),
            recording: Arc::clone(&self.recording),
            live: None,
        }
    }
}

/// Checks what serde cannot: exactly one of `output`/`error` (ranges are
/// checked by `validate_settings` once the recording is loaded).
fn validate(file: &Path, spec: &ScenarioSpec) -> Result<(), InputError> {
    if let Some(agent) = &spec.agent {
        if agent.command.is_empty() {
            return Err(InputError::field(file, "agent.command", "names no program (give a command, or a `preset`)"));
        }
        for path in agent.files.keys() {
            agent::check_file_path(path).map_err(|e| InputError::field(file, format!("agent.files.{path}"), e))?;
        }
        if let Some(pattern) = &agent.tool_error_pattern {
            regex::Regex::new(pattern).map_err(|e| InputError::field(file, "agent.tool_error_pattern", format!("is not a regex: {e}")))?;
        }
    }
    for (tool, fixture) in &spec.tools {
        if fixture.results.is_empty() {
            return Err(InputError::field(file, format!("tools.{tool}.results"), "needs at least one result"));
        }
        for (i, result) in fixture.results.iter().enumerate() {
            if result.output.is_some() == result.error.is_some() {
                return Err(InputError::field(file, format!("tools.{tool}.results[{i}]"), "needs exactly one of `output` or `error`"));
            }
        }
    }
    Ok(())
}

/// The agent's MCP servers, the placeholders naming them, and under
/// `tools: replay` the recording's frames of each ([`crate::black_box::mcp::check`]).
fn check_mcp(file: &Path, agent: &agent::AgentSpec, recording: &Recording) -> Result<(), InputError> {
    let texts: Vec<&str> = agent.command.iter().chain(agent.env.values()).chain(agent.files.values()).map(String::as_str).collect();
    let recorded: Vec<&str> = recording.mcp.iter().map(|server| server.name.as_str()).collect();
    crate::black_box::mcp::check(agent, &texts, &recorded).map_err(|(field, why)| InputError::field(file, field, why))
}

/// A preset agent's recording may only call the agent's own tools, with
/// their required arguments, or a tool of one of its MCP servers
/// (`agent.mcp`) as the agent names it, listed by the server when the
/// recording holds its `tools/list`: the agent would otherwise fail the
/// call or never make it, and the run would measure the recording's mistake.
fn check_calls_fit(recording_path: &Path, agent: &agent::AgentSpec, recording: &Recording) -> Result<(), InputError> {
    let Some(preset) = agent.preset else { return Ok(()) };
    let servers: Vec<&str> = agent.mcp.iter().map(|server| server.name.as_str()).collect();
    for (i, exchange) in recording.exchanges.iter().enumerate() {
        for (j, (part, call)) in crate::call_site::tool_call_parts(exchange).enumerate() {
            let arguments = match &call.arguments {
                reloop_recording::Arguments::Json(value) => value.clone(),
                reloop_recording::Arguments::Raw(text) => serde_json::from_str(text).unwrap_or_default(),
            };
            let misfit = match agent::mcp_tool(preset, &servers, &call.name) {
                Some((server, tool)) => unlisted_mcp_tool(recording, server, tool),
                None => agent::misfit(preset, &call.name, &arguments),
            };
            if let Some(why) = misfit {
                let text = std::fs::read_to_string(recording_path).unwrap_or_default();
                return Err(crate::call_site::call_error(recording_path, &text, (i, part, j), why));
            }
        }
    }
    Ok(())
}

/// Why a call of MCP tool `tool` cannot reach `server`: the recording's
/// frames of that server list its tools, and not this one. `None` when it
/// is listed, or when no `tools/list` of the server is recorded.
fn unlisted_mcp_tool(recording: &Recording, server: &str, tool: &str) -> Option<String> {
    let frames = recording.mcp.iter().find(|recorded| recorded.name == server)?;
    let listed: Vec<&str> = frames
        .messages
        .iter()
        .filter(|message| message.method == "tools/list")
        .filter_map(|message| message.result.as_ref()?.get("tools")?.as_array())
        .flatten()
        .filter_map(|listed| listed.get("name")?.as_str())
        .collect();
    (!listed.is_empty() && !listed.contains(&tool))
        .then(|| format!("MCP server `{server}`'s recorded tools/list has no tool `{tool}` (it lists: {})", listed.join(", ")))
}

/// The scenario files under `paths`, and the recordings left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    /// Scenario files: as given, then each directory's in sorted order.
    pub files: Vec<PathBuf>,
    /// Per directory, the recordings found below it and skipped.
    pub skipped: Vec<Skipped>,
}

/// Finds the scenario files under `paths`: files as given; directories
/// searched recursively for `*.yaml`/`*.yml` (so `scenarios/` holds its
/// `long/` and `imported/` suites), sorted for a stable order, skipping
/// the recordings kept beside or below the scenarios (told by their
/// `format:` tag, [`reloop_files::kind`]).
pub fn discover(paths: &[PathBuf]) -> Result<Discovered, InputError> {
    let mut discovered = Discovered::default();
    // Overlapping arguments (`scenarios/ scenarios/long/`) name a file once.
    let mut seen = std::collections::HashSet::new();
    let mut add = |files: &mut Vec<PathBuf>, file: PathBuf| {
        if seen.insert(std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone())) {
            files.push(file);
        }
    };
    for path in paths {
        if path.is_dir() {
            let (found, skipped) = files_below(path, FileKind::Scenario, true)?;
            found.into_iter().for_each(|file| add(&mut discovered.files, file));
            discovered.skipped.extend(skipped);
        } else if path.is_file() && FileKind::of(path) == FileKind::Recording {
            return Err(InputError::file(
                path,
                "is a recording (`format: reloop.recording/...`), not a scenario: name it in a scenario's `recording:`, or serve it (`reloop serve --recording FILE`)",
            ));
        } else if path.is_file() {
            add(&mut discovered.files, path.clone());
        } else if path.exists() {
            return Err(InputError::file(path, "is not a regular file or directory"));
        } else {
            return Err(InputError::file(path, "no such file or directory"));
        }
    }
    Ok(discovered)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files naming one recording share one parsed copy through the same
    /// [`LastRecording`]; a file naming another reads its own.
    #[test]
    fn files_naming_the_last_recording_share_it() {
        let dir = tempfile::tempdir().unwrap();
        for (recording, text) in [("one.yaml", "done"), ("two.yaml", "other")] {
            std::fs::write(dir.path().join(recording), format!("format: reloop.recording/v1\nexchanges:\n  - text: {text}\n")).unwrap();
        }
        let scenario = |name: &str, recording: &str| {
            let path = dir.path().join(format!("{name}.yaml"));
            std::fs::write(&path, format!("name: {name}\nwire: openai-chat\nmodel: gpt-4o\nsystem: s\ntask: t\nrecording: {recording}\n")).unwrap();
            path
        };
        let last = LastRecording::default();
        let [a, b, c] =
            [scenario("a", "one.yaml"), scenario("b", "one.yaml"), scenario("c", "two.yaml")].map(|path| ScenarioFile::load_sharing(&path, &last).unwrap());
        assert!(Arc::ptr_eq(&a.recording, &b.recording), "parsed once");
        assert!(!Arc::ptr_eq(&a.recording, &c.recording));
        assert_eq!(c.recording.exchanges.len(), 1);
        assert_eq!(*a.recording, *ScenarioFile::load(&a.file).unwrap().recording, "the same recording as read alone");
    }
}
