//! The files an import writes, as serde types in the shapes of
//! `docs/scenario-format.md` and `docs/recording-format.md` (the loaders in
//! `reloop-eval` and `reloop-mock` read them back; the tests check that).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::session::RecordedUsage;

/// A scenario file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioFile {
    /// Unique name.
    pub name: String,
    /// What it is.
    pub description: String,
    /// The API the loop speaks.
    pub wire: &'static str,
    /// The model name sent.
    pub model: String,
    /// The context window.
    pub context_window: u64,
    /// Where the session came from (`format:file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The directory the session worked in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_root: Option<String>,
    /// The system prompt.
    pub system: String,
    /// The first user message.
    pub task: String,
    /// The recording, relative to the scenario.
    pub recording: String,
    /// Loop settings.
    #[serde(rename = "loop")]
    pub loop_settings: LoopOut,
    /// Fixture tools.
    pub tools: BTreeMap<String, ToolOut>,
    /// Later user messages given when the loop would stop.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub follow_ups: Vec<String>,
    /// Later user messages that arrived between tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steering: Vec<SteeringOut>,
    /// The failure of the session's last model call, replayed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultOut>,
    /// How the session ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<EndingOut>,
    /// What the replay must show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<ExpectOut>,
}

/// How the session ended, and after how many model calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndingOut {
    /// `final_answer`, `stopped`, `submitted`, `context_exceeded`, `llm_error`.
    pub outcome: &'static str,
    /// The model calls of the session, a failed last one included.
    pub steps: u64,
}

/// A provider fault on one exchange.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultOut {
    /// The exchange it hits.
    pub exchange: u64,
    /// The attempts it hits.
    pub times: u32,
    /// The provider's context-length error.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub context_length_exceeded: bool,
    /// Or an HTTP error reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpFaultOut>,
}

/// An HTTP error reply (the provider's own body for the status).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HttpFaultOut {
    /// The status.
    pub status: u16,
}

/// The loop settings an import sets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopOut {
    /// Enough for every recorded main exchange and the final answer.
    pub step_budget: u64,
}

/// A fixture tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOut {
    /// Description shown to the model.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
    /// Read-only tool.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub parallel_safe: bool,
    /// Declared risk (`write`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
    /// Recorded answers in session order, then a default.
    pub results: Vec<ResultOut>,
}

impl ToolOut {
    /// Adds the recorded answer to one call: matched by its exact
    /// arguments and used once, so a repeated call gets the next recorded
    /// answer. `result` is the output or error text (`true`: an error);
    /// `None` when nothing answered the call. Arguments that are not a JSON
    /// object cannot be matched, and add nothing.
    pub fn push_recorded(&mut self, arguments: &serde_json::Value, result: Option<(String, bool)>) {
        let serde_json::Value::Object(arguments) = arguments else { return };
        let (output, error) = match result {
            Some((text, false)) => (Some(text), None),
            Some((text, true)) => (None, Some(text)),
            None => (None, Some(NO_RESULT.to_owned())),
        };
        self.results.push(ResultOut { when: Some(arguments.clone()), output, error, once: true });
    }

    /// Closes the fixture list: a call that matches no recorded answer gets
    /// an error, not a made-up result.
    pub fn push_unmatched(&mut self) {
        self.results.push(ResultOut { when: None, output: None, error: Some("no recorded result matches these arguments".into()), once: false });
    }
}

/// The error of a call that the session never answered.
const NO_RESULT: &str = "no result was recorded for this call (the session ended or was interrupted)";

/// One fixture answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultOut {
    /// The exact recorded arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<serde_json::Map<String, serde_json::Value>>,
    /// The output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Or the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Used once, so a repeated call gets the next recorded answer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
}

/// A steering message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SteeringOut {
    /// Tool calls finished before it.
    pub after_tool_calls: u64,
    /// The message.
    pub message: String,
}

/// Expectations of an imported scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpectOut {
    /// The session ends with an answer.
    pub outcome: &'static str,
    /// The recorded tool calls, by name, in order.
    pub tool_calls: Vec<String>,
}

/// A recording file (format v1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordingFile {
    /// `reloop.recording/v1`.
    pub format: &'static str,
    /// The model named in responses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Exchanges in order.
    pub exchanges: Vec<ExchangeOut>,
}

/// One exchange.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ExchangeOut {
    /// `compaction` for summaries; absent for main.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purpose: Option<&'static str>,
    /// A summary that answers every later summary request.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reusable: bool,
    /// Text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<CallOut>,
    /// Usage as recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<RecordedUsage>,
}

/// A recorded call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallOut {
    /// The recorded id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// A mapping, or a string sent byte for byte.
    pub arguments: serde_json::Value,
}
