//! Risk classification and the approval gate (Roku's `classify_tool_risk`
//! and `ToolApprovalGate`). Pseudo-tools are safe; a shell tool is judged by
//! its command (the shell policy, `crate::shell`); other tools by their
//! declared risk; the unknown needs approval.

use serde::{Deserialize, Serialize};

use crate::grounding::Workspace;
use crate::shell;
use crate::tools::{DeclaredRisk, ToolTraits, pseudo};

/// What a call may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Runs without asking.
    Safe,
    /// Runs only if approved.
    RequiresApproval,
    /// Never runs.
    Denied,
}

/// Tool names whose `command` argument is a shell command.
pub const SHELL_TOOLS: [&str; 3] = ["bash", "shell", "run_command"];

/// Classifies one call; shell commands are judged in `workspace`.
pub fn classify_tool_risk(tool: &str, arguments: &serde_json::Value, traits: ToolTraits, workspace: &Workspace) -> Risk {
    if pseudo::is_pseudo(tool) {
        return Risk::Safe;
    }
    if SHELL_TOOLS.contains(&tool)
        && let Some(command) = arguments.get("command").and_then(|c| c.as_str())
    {
        return shell::assess(command, workspace).risk;
    }
    match traits.risk {
        DeclaredRisk::Safe => Risk::Safe,
        DeclaredRisk::Write | DeclaredRisk::Unknown => Risk::RequiresApproval,
    }
}

/// The answer of an approval gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run it.
    Approved,
    /// Do not run it; the reason goes back to the model.
    Denied(String),
}

/// Decides calls that need approval (Roku's `ToolApprovalGate`).
pub trait ApprovalGate: Send {
    /// The decision for `tool` called with `arguments`.
    fn check(&mut self, tool: &str, arguments: &serde_json::Value) -> Approval;
}

/// Approves everything: unattended runs (Roku's `AutoApproveGate`).
#[derive(Debug, Default)]
pub struct AutoApprove;

impl ApprovalGate for AutoApprove {
    fn check(&mut self, _: &str, _: &serde_json::Value) -> Approval {
        Approval::Approved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declared_risk_and_pseudo_tools() {
        let write = ToolTraits { risk: DeclaredRisk::Write, ..Default::default() };
        assert_eq!(classify_tool_risk("edit_file", &json!({}), write, &Workspace::Virtual), Risk::RequiresApproval);
        assert_eq!(classify_tool_risk("final_answer", &json!({}), write, &Workspace::Virtual), Risk::Safe);
        assert_eq!(classify_tool_risk("read_file", &json!({}), ToolTraits::default(), &Workspace::Virtual), Risk::Safe);
        let unknown = ToolTraits { risk: DeclaredRisk::Unknown, ..Default::default() };
        assert_eq!(classify_tool_risk("x", &json!({}), unknown, &Workspace::Virtual), Risk::RequiresApproval);
        assert_eq!(classify_tool_risk("bash", &json!({"command": "grep -r foo"}), unknown, &Workspace::Virtual), Risk::Safe);
    }
}
