//! Scenario format v1 (`docs/scenario-format.md`): the task, the tools and
//! their fixtures, the loop settings and the expected behaviour of one run.
//! Unknown fields are rejected everywhere, so a typo is an error, not a
//! silently ignored setting.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use reloop_agent::{LoopSettings, Outcome, WireFormat};
use reloop_mock::Recording;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::yaml::{self, InputError};
use crate::{input_file, validate_settings};

/// A scenario as written.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Unique name; defaults to the file stem.
    #[serde(default)]
    pub name: Option<String>,
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub description: Option<String>,
    /// The API the loop speaks: `openai-chat` (default), `openai-responses`,
    /// `anthropic`, or a list of them: one run per format, named
    /// `name@format`.
    #[serde(default)]
    pub wire: WireChoice,
    /// The model name sent.
    pub model: String,
    /// The model's context window; requests above it get the provider's
    /// context-length error.
    #[serde(default = "default_context_window")]
    pub context_window: u64,
    /// The system prompt.
    pub system: String,
    /// Later system prompts, each from a step on (a prompt that drifts).
    #[serde(default)]
    pub system_changes: Vec<SystemChange>,
    /// The user's task.
    pub task: String,
    /// The recording, relative to this file.
    pub recording: PathBuf,
    /// Loop settings.
    #[serde(default, rename = "loop")]
    pub loop_settings: LoopSettings,
    /// Fixture tools by name, advertised in name order.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolFixture>,
    /// Replies to `ask_user`, used in order.
    #[serde(default)]
    pub user_replies: Vec<String>,
    /// Approval answers for calls that need one, by tool (default: approve).
    #[serde(default)]
    pub approvals: BTreeMap<String, ApprovalAnswer>,
    /// Steering messages, each queued once so many tool calls have finished.
    #[serde(default)]
    pub steering: Vec<Steering>,
    /// Follow-ups, each given when the loop would stop with an answer.
    #[serde(default)]
    pub follow_ups: Vec<String>,
    /// An interrupt of a running tool call; the run ends `cancelled`.
    #[serde(default)]
    pub interrupt: Option<Interrupt>,
    /// Faults the provider injects, per recorded exchange.
    #[serde(default)]
    pub faults: Vec<reloop_mock::FaultSpec>,
    /// What must hold at the end.
    #[serde(default)]
    pub expect: Expectations,
}

/// One wire format or several.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WireChoice {
    /// Run over this format.
    One(WireFormat),
    /// Run once over each.
    Many(Vec<WireFormat>),
}

impl Default for WireChoice {
    fn default() -> Self {
        Self::One(WireFormat::OpenaiChat)
    }
}

fn default_context_window() -> u64 {
    LoopSettings::default().context_window
}

/// A system prompt taking over from step `from_step` (0-based).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemChange {
    /// First step using `system`.
    pub from_step: u32,
    /// The new prompt.
    pub system: String,
}

/// What the user answers when a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Let it run.
    Approve,
    /// Refuse it; the model is told.
    Deny,
}

/// A steering message (pi-mono): queued after `after_tool_calls` tool calls.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Steering {
    /// Tool calls finished before the message arrives.
    pub after_tool_calls: u32,
    /// What the user says.
    pub message: String,
}

/// The user interrupts tool call `during_tool_call` (0-based over the run)
/// once it has run `after_ms` of virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interrupt {
    /// Which tool call.
    pub during_tool_call: u32,
    /// After how long, ms.
    #[serde(default)]
    pub after_ms: u64,
}

/// A tool whose answers come from the scenario.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolFixture {
    /// What the tool does, shown to the model.
    pub description: String,
    /// JSON Schema of the arguments.
    #[serde(default = "empty_object_schema")]
    pub parameters: serde_json::Value,
    /// Virtual time each call takes, ms.
    #[serde(default)]
    pub latency_ms: u64,
    /// May run alongside other parallel-safe tools.
    #[serde(default)]
    pub parallel_safe: bool,
    /// The declared risk: `safe` (default), `write` (needs approval) or `unknown`.
    #[serde(default)]
    pub risk: reloop_agent::DeclaredRisk,
    /// Answers, tried in order; the first whose `when` matches is used.
    #[schemars(length(min = 1))]
    pub results: Vec<FixtureResult>,
}

fn empty_object_schema() -> serde_json::Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

/// One possible answer of a fixture tool.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{ "required": ["output"] }, { "required": ["error"] }]))]
pub struct FixtureResult {
    /// Arguments that must be present with these values; absent = always.
    #[serde(default)]
    pub when: Option<serde_json::Map<String, serde_json::Value>>,
    /// The output to return.
    #[serde(default)]
    pub output: Option<String>,
    /// An error to return instead.
    #[serde(default)]
    pub error: Option<String>,
    /// Use this answer only once (later calls fall through to the next).
    #[serde(default)]
    pub once: bool,
    /// Overrides the tool's latency for this answer, ms.
    #[serde(default)]
    pub latency_ms: Option<u64>,
}

/// What must hold at the end of the run. Absent fields are not checked.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The outcome.
    #[serde(default)]
    pub outcome: Option<Outcome>,
    /// Bounds on `steps_used`.
    #[serde(default)]
    pub steps: Option<Bounds>,
    /// Substrings the final answer must contain.
    #[serde(default)]
    pub final_answer_contains: Vec<String>,
    /// The exact sequence of real tool calls, by name.
    #[serde(default)]
    pub tool_calls: Option<Vec<String>>,
    /// Whether a doom loop must (or must not) be detected.
    #[serde(default)]
    pub doom_loop: Option<DoomLoopExpectation>,
    /// Bounds on the loop's detected cache breaks.
    #[serde(default)]
    pub cache_breaks: Option<Bounds>,
    /// Bounds on retried model calls.
    #[serde(default)]
    pub llm_retries: Option<Bounds>,
}

/// Inclusive bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// Lowest allowed.
    #[serde(default)]
    pub min: Option<u64>,
    /// Highest allowed.
    #[serde(default)]
    pub max: Option<u64>,
}

/// The doom-loop expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoomLoopExpectation {
    /// Whether one must be detected.
    pub detected: bool,
}

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

impl ScenarioFile {
    /// Loads and validates `file` and the recording it names.
    pub fn load(file: &Path) -> Result<Self, InputError> {
        let text = input_file::read_text(file, input_file::max_input_bytes())?;
        let mut spec: ScenarioSpec = yaml::parse(file, &text)?;
        validate(file, &spec)?;
        if matches!(&spec.wire, WireChoice::Many(wires) if wires.is_empty()) {
            return Err(InputError::field(file, "wire", "names no wire format"));
        }
        let recording_path = file.parent().unwrap_or(Path::new(".")).join(&spec.recording);
        let recording: Recording = yaml::load_checked(&recording_path, validate_settings::check_recording)?;
        validate_settings::check_scenario(&spec, &recording).map_err(|e| yaml::range_error(file, &text, e))?;
        spec.loop_settings.context_window = spec.context_window;
        let name = spec.name.clone().unwrap_or_else(|| {
            file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
        });
        Ok(Self { file: file.to_owned(), name, spec: Arc::new(spec), recording: Arc::new(recording) })
    }

    /// Its runs' names and wire formats: `name@format` when it names several.
    pub fn run_names(&self) -> Vec<(String, WireFormat)> {
        match &self.spec.wire {
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
        }
    }
}

/// Checks what serde cannot: exactly one of `output`/`error` (ranges are
/// checked by `validate_settings` once the recording is loaded).
fn validate(file: &Path, spec: &ScenarioSpec) -> Result<(), InputError> {
    for (tool, fixture) in &spec.tools {
        if fixture.results.is_empty() {
            return Err(InputError::field(file, format!("tools.{tool}.results"), "needs at least one result"));
        }
        for (i, result) in fixture.results.iter().enumerate() {
            if result.output.is_some() == result.error.is_some() {
                return Err(InputError::field(
                    file,
                    format!("tools.{tool}.results[{i}]"),
                    "needs exactly one of `output` or `error`",
                ));
            }
        }
    }
    Ok(())
}

/// Whether `path` is a recording: its first field is the recording format tag.
pub fn is_recording(path: &Path) -> bool {
    input_file::read_head(path).is_some_and(|text| {
        text.lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#') && line != &"---")
            .is_some_and(|line| line.starts_with("format:") && line.contains(reloop_mock::recording::FORMAT_V1))
    })
}

/// Finds the scenario files under `paths`: files as given; directories
/// searched for `*.yaml`/`*.yml`, sorted for a stable order, skipping
/// recordings kept beside the scenarios (they declare their `format`).
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| InputError::file(path, format!("cannot list: {e}")))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|ext| ext == "yaml" || ext == "yml"))
                .filter(|p| !is_recording(p))
                .collect();
            found.sort();
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else if path.exists() {
            return Err(InputError::file(path, "is not a regular file or directory"));
        } else {
            return Err(InputError::file(path, "no such file or directory"));
        }
    }
    Ok(files)
}
