//! The conversation as the loop keeps it, independent of any provider.
//!
//! The transcript only grows (as in Roku's `LoopState::history`); what is sent
//! to the provider is a *view* of it built each step, so compaction never loses
//! the original and the harness can price the uncompacted counterfactual.

use reloop_wire::ToolCall;
use serde::{Deserialize, Serialize};

/// One entry of the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// A user turn: the task, a scripted reply, a steering or harness notice.
    User {
        /// What the user said.
        text: String,
    },
    /// A model turn.
    Assistant {
        /// Text the model produced (may be empty when it only called tools).
        text: String,
        /// Tool calls in the order the model made them.
        tool_calls: Vec<ToolCall>,
    },
    /// The answer to one tool call.
    ToolResult {
        /// The id of the call this answers.
        call_id: String,
        /// The tool's name, kept for reports and doom-loop analysis.
        tool_name: String,
        /// What the tool returned, or its error text.
        content: String,
        /// Whether the tool failed.
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User { text: text.into() }
    }
}
