//! Risk classification and the approval gate (Roku's `classify_tool_risk`
//! and `ToolApprovalGate`). Pseudo-tools are safe; a shell tool is judged by
//! its command; other tools by their declared risk; the unknown needs
//! approval.

use serde::{Deserialize, Serialize};

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

/// Commands refused outright: destructive or remote-code patterns.
const DENIED_COMMAND_PATTERNS: [&str; 9] =
    ["rm -rf /", "rm -rf ~", "rm -rf *", "mkfs", "dd if=", ":(){", "| sh", "| bash", "> /dev/sd"];

/// First words of commands that only read.
const SAFE_COMMANDS: [&str; 16] = [
    "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "pwd", "echo", "stat", "file", "tree", "which",
    "diff", "du",
];

/// Read-only `git` subcommands.
const SAFE_GIT: [&str; 5] = ["status", "diff", "log", "show", "blame"];

/// Characters that chain, pipe or redirect: anything may follow them.
const SHELL_OPERATORS: [&str; 8] = [";", "&&", "||", "|", "`", "$(", ">", "<"];

/// Classifies one call.
pub fn classify_tool_risk(tool: &str, arguments: &serde_json::Value, traits: ToolTraits) -> Risk {
    if pseudo::is_pseudo(tool) {
        return Risk::Safe;
    }
    if SHELL_TOOLS.contains(&tool)
        && let Some(command) = arguments.get("command").and_then(|c| c.as_str()) {
            return classify_command(command);
        }
    match traits.risk {
        DeclaredRisk::Safe => Risk::Safe,
        DeclaredRisk::Write | DeclaredRisk::Unknown => Risk::RequiresApproval,
    }
}

/// Classifies a shell command: denied patterns first, then operators (which
/// hide further commands), then a read-only first word.
pub fn classify_command(command: &str) -> Risk {
    let squeezed = command.split_whitespace().collect::<Vec<_>>().join(" ");
    if DENIED_COMMAND_PATTERNS.iter().any(|p| squeezed.contains(p)) {
        return Risk::Denied;
    }
    if SHELL_OPERATORS.iter().any(|op| squeezed.contains(op)) {
        return Risk::RequiresApproval;
    }
    let mut words = squeezed.split(' ');
    match (words.next(), words.next()) {
        (Some("git"), Some(sub)) if SAFE_GIT.contains(&sub) => Risk::Safe,
        (Some(first), _) if SAFE_COMMANDS.contains(&first) => Risk::Safe,
        _ => Risk::RequiresApproval,
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
    fn commands_are_judged_by_content() {
        assert_eq!(classify_command("ls -la src"), Risk::Safe);
        assert_eq!(classify_command("git  diff HEAD~1"), Risk::Safe);
        assert_eq!(classify_command("git push --force"), Risk::RequiresApproval);
        assert_eq!(classify_command("cat a.txt | sh"), Risk::Denied);
        assert_eq!(classify_command("rm  -rf /"), Risk::Denied);
        assert_eq!(classify_command("ls && rm -r build"), Risk::RequiresApproval);
        assert_eq!(classify_command("cargo test"), Risk::RequiresApproval);
    }

    #[test]
    fn declared_risk_and_pseudo_tools() {
        let write = ToolTraits { risk: DeclaredRisk::Write, ..Default::default() };
        assert_eq!(classify_tool_risk("edit_file", &json!({}), write), Risk::RequiresApproval);
        assert_eq!(classify_tool_risk("final_answer", &json!({}), write), Risk::Safe);
        assert_eq!(classify_tool_risk("read_file", &json!({}), ToolTraits::default()), Risk::Safe);
        let unknown = ToolTraits { risk: DeclaredRisk::Unknown, ..Default::default() };
        assert_eq!(classify_tool_risk("x", &json!({}), unknown), Risk::RequiresApproval);
        assert_eq!(classify_tool_risk("bash", &json!({"command": "grep -r foo"}), unknown), Risk::Safe);
    }
}
