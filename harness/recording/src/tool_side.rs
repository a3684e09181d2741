//! The world side of a session: what the agent's own tools did between the
//! model's answers. A black-box agent runs its tools itself, so replaying
//! only the model's side would run every recorded command for real, with
//! real side effects and output the recording's next answer was not
//! written for. Each entry here answers one command instead
//! (`docs/recording-format.md`, `docs/black-box.md`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One command the agent's shell ran, and what it answered. Written by hand
/// ("`pytest -q` answers `2 failed`") or recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellCommand {
    /// The command line as the shell received it: `COMMAND` of `bash -c COMMAND`.
    pub command: String,
    /// What it wrote to standard output, byte for byte.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    /// What it wrote to standard error.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    /// Its exit status (0 when absent).
    #[serde(default, skip_serializing_if = "crate::is_default")]
    pub exit_code: i32,
    /// The directory it ran in, relative to the workspace; absent: anywhere.
    /// A command matches only in the directory it was recorded in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// What the agent gave it on standard input, where it gave any (for
    /// the reader: a replay does not match on it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// The exchange (0-based) served last before it ran, whose answer
    /// asked for it, for the reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_exchange: Option<usize>,
}

impl ShellCommand {
    /// Whether this entry answers `command` run in `cwd` (relative to the
    /// workspace, `.` at its root).
    pub fn answers(&self, command: &str, cwd: &str) -> bool {
        self.command == command && self.cwd.as_deref().is_none_or(|recorded| same_dir(recorded, cwd))
    }
}

/// `a` and `b` name the same folder below the workspace: `.`, `./x/` and
/// `x` are read alike.
fn same_dir(a: &str, b: &str) -> bool {
    let parts = |path: &str| path.split('/').filter(|part| !part.is_empty() && *part != ".").map(str::to_owned).collect::<Vec<_>>();
    parts(a) == parts(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_answers_its_own_line_in_its_own_folder() {
        let entry = ShellCommand { command: "pytest -q".into(), cwd: Some("./src/".into()), ..ShellCommand::default() };
        assert!(entry.answers("pytest -q", "src"));
        assert!(!entry.answers("pytest -q", "."), "another folder");
        assert!(!entry.answers("pytest  -q", "src"), "another command line");
        let anywhere = ShellCommand { command: "ls".into(), ..ShellCommand::default() };
        assert!(anywhere.answers("ls", "deep/down"));
    }

    #[test]
    fn a_misspelt_field_is_refused() {
        let error = serde_json::from_str::<ShellCommand>(r#"{"command": "ls", "exitcode": 1}"#).unwrap_err().to_string();
        assert!(error.contains("unknown field `exitcode`"), "{error}");
    }
}
