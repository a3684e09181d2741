//! Tools as the loop sees them: declarations, the runtime that executes
//! them, and the pseudo-tools the loop answers itself.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::clock::{BoxFuture, SharedClock};

/// A tool the model may call: the wire crate's declaration, so the frozen
/// schema is sent without conversion.
pub use reloop_wire::ToolSpec;

/// What a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text given back to the model.
    pub content: String,
    /// Whether this is an error the model should see as such.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self { content: content.into(), is_error: false }
    }

    /// A failed result.
    pub fn error(content: impl Into<String>) -> Self {
        Self { content: content.into(), is_error: true }
    }
}

/// One invocation handed to a [`ToolRuntime`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInvocation {
    /// The tool's name.
    pub name: String,
    /// The parsed arguments (an object; `{}` if the model sent none).
    pub arguments: serde_json::Value,
}

/// What a tool call runs with besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The clock to wait on: tools running side by side get forks of the
    /// run's clock, so their waits overlap in virtual time.
    pub clock: SharedClock,
}

/// How a tool may be scheduled and gated, declared by its runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolTraits {
    /// May run alongside other parallel-safe tools (Codex's read lock).
    pub parallel_safe: bool,
    /// The declared risk (Roku's catalog `risk:` tag).
    pub risk: DeclaredRisk,
}

/// A tool's declared risk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeclaredRisk {
    /// Reads only; never needs approval.
    #[default]
    Safe,
    /// Changes the workspace; needs approval.
    Write,
    /// Nothing declared; treated as needing approval.
    Unknown,
}

/// Executes real (non-pseudo) tools. The harness plugs fixture tools in here;
/// an embedding application would plug its own.
pub trait ToolRuntime: Send + Sync {
    /// The tools to advertise, in a stable order.
    fn specs(&self) -> Vec<ToolSpec>;
    /// How `tool` may be scheduled and gated.
    fn traits(&self, tool: &str) -> ToolTraits;
    /// Runs one tool call. Unknown tools must return an error output rather
    /// than fail, so the model can recover.
    fn execute(&self, invocation: ToolInvocation, context: ToolContext) -> BoxFuture<'_, ToolOutput>;
    /// Where the tools' paths may reach; grounding and the shell policy
    /// resolve paths against it. Fixture tools have no files: virtual.
    fn workspace(&self) -> &crate::grounding::Workspace {
        &crate::grounding::VIRTUAL_WORKSPACE
    }
}

/// Names of the pseudo-tools the loop handles itself.
pub mod pseudo {
    /// Ends the run with an answer.
    pub const FINAL_ANSWER: &str = "final_answer";
    /// Ends the run (or waits for a scripted reply) with a question.
    pub const ASK_USER: &str = "ask_user";
    /// Ends the run as a failure.
    pub const FAIL: &str = "fail";

    /// Whether `name` is a pseudo-tool.
    pub fn is_pseudo(name: &str) -> bool {
        matches!(name, FINAL_ANSWER | ASK_USER | FAIL)
    }
}

/// The declarations of the pseudo-tools, appended after the runtime's tools.
pub fn pseudo_tool_specs() -> Vec<ToolSpec> {
    let one_string = |field: &str, what: &str| {
        serde_json::json!({
            "type": "object",
            "properties": { field: { "type": "string", "description": what } },
            "required": [field],
        })
    };
    vec![
        ToolSpec {
            name: pseudo::FINAL_ANSWER.into(),
            description: "Finish the task and give the final answer.".into(),
            parameters: one_string("answer", "The final answer for the user."),
        },
        ToolSpec {
            name: pseudo::ASK_USER.into(),
            description: "Ask the user a question when you cannot continue without them.".into(),
            parameters: one_string("question", "The question."),
        },
        ToolSpec {
            name: pseudo::FAIL.into(),
            description: "Give up on the task and say why.".into(),
            parameters: one_string("reason", "Why the task cannot be done."),
        },
    ]
}
