//! The scenario file as written (format v1, `docs/scenario-format.md`):
//! plain serde types that read it and write it, with the JSON Schema
//! derived from them. Unknown fields are rejected everywhere, so a typo is
//! an error, not a silently ignored setting; a written scenario leaves out
//! what is at its default, so it says only what it sets. Loading and
//! checking live in `reloop_eval::scenario` and
//! `reloop_eval::validate_settings`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use reloop_agent::{LoopSettings, Outcome, WireFormat};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};

/// A scenario as written. The default is an empty one, for building a
/// scenario field by field (`reloop import`, capture skeletons).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Unique name; defaults to the file stem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the scenario exercises, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    /// Count in the provider's tokens: `per_o200k` × the server's o200k
    /// count + `hidden_per_call` (the provider-token fit of a replayed
    /// recording; docs/import.md). Absent: o200k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_tokens: Option<reloop_recording::provider_tokens::ProviderTokens>,
    /// The system prompt (unused by an `agent:` scenario, which brings its own).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub system: String,
    /// Later system prompts, each from a step on (a prompt that drifts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system_changes: Vec<SystemChange>,
    /// The user's task.
    pub task: String,
    /// The recording, relative to this file.
    pub recording: PathBuf,
    /// Loop settings.
    #[serde(default, rename = "loop", skip_serializing_if = "is_default", serialize_with = "changed_from_default")]
    #[schemars(extend("default" = LoopSettings::default()))]
    pub loop_settings: LoopSettings,
    /// Fixture tools by name, advertised in name order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolFixture>,
    /// Replies to `ask_user`, used in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_replies: Vec<String>,
    /// Approval answers for calls that need one, by tool (default: approve).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub approvals: BTreeMap<String, ApprovalAnswer>,
    /// Steering messages, each queued once so many tool calls have finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steering: Vec<Steering>,
    /// Follow-ups, each given when the loop would stop with an answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<String>,
    /// An interrupt of a running tool call; the run ends `cancelled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt: Option<Interrupt>,
    /// How the recorded session ended (imported sessions): the replay ends
    /// the same way, where the recording ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    /// The compactions the recorded agent itself did (imported sessions),
    /// in order: the report shows them as `agent_compaction` events and
    /// their savings as `tokens_saved_recorded`, beside what the run's
    /// strategy saved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recorded_compactions: Vec<RecordedCompaction>,
    /// Faults the provider injects, per recorded exchange.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<reloop_recording::fault::FaultSpec>,
    /// An outside agent to run instead of the built-in loop (a black box).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<super::agent::AgentSpec>,
    /// What must hold at the end.
    #[serde(default, skip_serializing_if = "is_default")]
    pub expect: Expectations,
    /// The absolute directory a recorded session worked in (imported
    /// sessions): absolute tool paths under it count as inside the
    /// workspace and are made relative, in calls and in `when`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<PathBuf>,
    /// Where the scenario came from (`format:file` for imported sessions);
    /// the `source` column of runs.parquet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// Whether `value` is its type's default: a written scenario leaves it out.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Writes only the loop settings that differ from the defaults (nested
/// settings field by field), so a written scenario says what it changes.
fn changed_from_default<S: Serializer>(settings: &LoopSettings, serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::Error;
    let value = serde_json::to_value(settings).map_err(S::Error::custom)?;
    let defaults = serde_json::to_value(LoopSettings::default()).map_err(S::Error::custom)?;
    changes(value, &defaults).serialize(serializer)
}

/// The parts of `value` that differ from `defaults`.
fn changes(value: serde_json::Value, defaults: &serde_json::Value) -> serde_json::Value {
    match (value, defaults) {
        (serde_json::Value::Object(fields), serde_json::Value::Object(defaults)) => {
            let changed = fields.into_iter().filter_map(|(key, value)| match defaults.get(&key) {
                Some(default) if *default == value => None,
                Some(default) => Some((key, changes(value, default))),
                None => Some((key, value)),
            });
            serde_json::Value::Object(changed.collect())
        }
        (value, _) => value,
    }
}

/// One wire format or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemChange {
    /// First step using `system`.
    pub from_step: u32,
    /// The new prompt.
    pub system: String,
}

/// What the user answers when a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Let it run.
    Approve,
    /// Refuse it; the model is told.
    Deny,
}

/// A steering message (pi-mono): queued after `after_tool_calls` tool calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Steering {
    /// Tool calls finished before the message arrives.
    pub after_tool_calls: u32,
    /// What the user says.
    pub message: String,
}

/// The user interrupts tool call `during_tool_call` (0-based over the run)
/// once it has run `after_ms` of virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interrupt {
    /// Which tool call.
    pub during_tool_call: u32,
    /// After how long, ms.
    #[serde(default, skip_serializing_if = "is_default")]
    pub after_ms: u64,
}

/// How a recorded session ended, and after how many model calls. A replay
/// ends the same way, where its recording ends: `final_answer` by the
/// model's answer at step `steps`; `stopped` (the user stopped the agent
/// after a tool round, or the log stops there) and `submitted` (the harness
/// took the agent's submission: SWE-agent's `submit`, OpenHands' `finish`)
/// by the scripted user's side once `steps` steps are done;
/// `context_exceeded` and `llm_error` by a fault on the last exchange, the
/// call that failed. So a replay never asks for a call the session did not
/// make, and never gets an "answer now" turn it did not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ending {
    /// `final_answer`, `stopped`, `submitted`, `context_exceeded` or `llm_error`.
    pub outcome: Outcome,
    /// The model calls the session made, a failed last one included.
    pub steps: u32,
}

/// How the importer opens the compaction summary it writes when the session
/// kept none readable: such a summary is reloop's, not the agent's, so
/// retention does not read it as what the agent kept.
pub const MECHANICAL_SUMMARY_PREFIX: &str = "[reloop import: mechanical summary]";

/// A compaction the recorded agent did: after which model call, and the
/// prompt tokens it took the context from and to, as the source states
/// them or, where it does not, as the calls either side were billed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordedCompaction {
    /// The model calls the session made before it.
    pub after_calls: u32,
    /// Prompt tokens before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
    /// Prompt tokens after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<u64>,
    /// What started it (`auto`, `manual`), where the source says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Its line (or event) in the source.
    pub line: u64,
}

impl RecordedCompaction {
    /// The prompt tokens it took off, when both sizes are known.
    pub fn saved(&self) -> Option<i64> {
        Some(i64::try_from(self.tokens_before?).ok()? - i64::try_from(self.tokens_after?).ok()?)
    }

    /// The tokens the agent's compactions saved over a session of `calls`
    /// model calls, counted as reloop counts a strategy's
    /// `tokens_saved_total`: each call after a compaction sent that much
    /// less. `None` when no compaction has both sizes.
    pub fn saved_over(compactions: &[Self], calls: u32) -> Option<i64> {
        let known: Vec<(i64, u32)> = compactions.iter().filter_map(|c| Some((c.saved()?, calls.saturating_sub(c.after_calls)))).collect();
        (!known.is_empty()).then(|| known.iter().map(|(saved, after)| saved * i64::from(*after)).sum())
    }
}

impl Ending {
    /// The outcomes a recorded session can end with.
    pub const OUTCOMES: [Outcome; 5] = [Outcome::FinalAnswer, Outcome::Stopped, Outcome::Submitted, Outcome::ContextExceeded, Outcome::LlmError];
    /// The endings the user's side brings about after the last step.
    pub const ENDED_BY_USER: [Outcome; 2] = [Outcome::Stopped, Outcome::Submitted];
}

/// A tool whose answers come from the scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolFixture {
    /// What the tool does, shown to the model.
    pub description: String,
    /// JSON Schema of the arguments.
    #[serde(default = "empty_object_schema")]
    pub parameters: serde_json::Value,
    /// Virtual time each call takes, ms.
    #[serde(default, skip_serializing_if = "is_default")]
    pub latency_ms: u64,
    /// May run alongside other parallel-safe tools.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parallel_safe: bool,
    /// The declared risk: `safe` (default), `write` (needs approval) or `unknown`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub risk: reloop_agent::DeclaredRisk,
    /// Answers, tried in order; the first whose `when` matches is used.
    #[schemars(length(min = 1))]
    pub results: Vec<FixtureResult>,
}

fn empty_object_schema() -> serde_json::Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

/// One possible answer of a fixture tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{ "required": ["output"] }, { "required": ["error"] }]))]
pub struct FixtureResult {
    /// Arguments that must be present with these values; absent = always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<serde_json::Map<String, serde_json::Value>>,
    /// The output to return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// An error to return instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Use this answer only once (later calls fall through to the next).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
    /// Overrides the tool's latency for this answer, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
}

/// What must hold at the end of the run. Absent fields are not checked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// The outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Bounds on `steps_used`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Bounds>,
    /// Substrings the final answer must contain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub final_answer_contains: Vec<String>,
    /// The exact sequence of real tool calls, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<String>>,
    /// Whether a doom loop must (or must not) be detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doom_loop: Option<DoomLoopExpectation>,
    /// Bounds on the loop's detected cache breaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_breaks: Option<Bounds>,
    /// Bounds on retried model calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_retries: Option<Bounds>,
    /// Bounds on the prompt tokens the provider's cache served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<Bounds>,
    /// Bounds on the prompt tokens written to the provider's cache
    /// (Anthropic; OpenAI reports none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<Bounds>,
    /// The exit code of an `agent:` process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Over repeated trials (`run --repeat N`), the lowest share of trials
    /// that must pass (0 to 1); without it every trial must (pass^N).
    /// `--min-pass-rate` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_pass_rate: Option<f64>,
}

/// Inclusive bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bounds {
    /// Lowest allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// Highest allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

/// The doom-loop expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoomLoopExpectation {
    /// Whether one must be detected.
    pub detected: bool,
    /// The detector that must fire: the scenario's label in a labelled
    /// suite (`reloop detectors` scores each detector against it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<reloop_agent::DoomLoopKind>,
    /// The step (0-based) at which the loop begins, for detection delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onset_step: Option<u32>,
}
