//! The `agent:` block of a scenario: an outside agent process run as the
//! system under test against the run's mock server (a black box). Its
//! placeholders expand per run (`reloop_eval::black_box::placeholders`),
//! and its workspace files may not leave the workspace. `preset:` fills the
//! block from a known agent's launch ([`crate::agent_presets`]); what the
//! block says itself wins.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use reloop_agent::WireFormat;

pub use crate::agent_presets::{AgentPreset, DEFAULT_TOOL_ERROR_PATTERN, PresetLaunch, PresetShell, ShellInterception, mcp_tool, misfit};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An agent command line and how to launch it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// A known agent (`codex`, `pi`, `opencode`, `claude-code`,
    /// `gemini-cli`, `mini-swe-agent`): its command line, base-URL wiring,
    /// config file and wire; the fields below add to it or replace it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<AgentPreset>,
    /// The argv; `{task}`, `{workspace}`, `{scenario_dir}`, `{base_url}`,
    /// `{anthropic_base_url}`, `{port}` and `{model}` expand. Required
    /// without a preset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The API the agent speaks (overrides the scenario's `wire`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<WireFormat>,
    /// Extra environment variables; values expand as in `command`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Variables of reloop's environment passed on to the agent (when
    /// set); nothing else of it is, beyond `PATH`, the locale and `TERM`
    /// (docs/black-box.md).
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Files written into the fresh workspace before the start, by
    /// relative path; contents expand as in `command`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Real seconds the agent may run before its process group is killed
    /// (outcome `agent_timeout`).
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// A regex: a tool result the agent sends back whose text matches is a
    /// failed call (`tool_errors`), beside results flagged as errors.
    /// Replaces the preset's own ([`PresetLaunch::tool_error_pattern`]) or,
    /// without a preset, [`DEFAULT_TOOL_ERROR_PATTERN`]; `""` matches none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_error_pattern: Option<String>,
    /// Where the agent's shell commands are answered from: `live` (the
    /// default) runs them; `replay` answers each from the recording's
    /// `tool_side:` and runs none, a command it lacks failing the run as a
    /// `tool_side` divergence; `replay-or-live` runs those it lacks, each
    /// one counted and named; `record` runs every one and writes what each
    /// did into the run's re-recording (docs/black-box.md).
    #[serde(default, skip_serializing_if = "super::spec::is_default")]
    pub tools: ToolSideMode,
    /// How the shell shims reach the agent under `replay`: `path` (first on
    /// `PATH` and as `$SHELL`) or `mount` (also at `/bin/sh` and `/bin/bash`,
    /// in a mount namespace of the agent's own, for agents that start their
    /// shell by absolute path; needs bubblewrap). Default: the preset's
    /// ([`PresetShell::interception`]), else `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_interception: Option<ShellInterception>,
    /// The stdio MCP servers the agent is told of, by name: its command
    /// line or config file names them through `{mcp.NAME.command}`,
    /// `{mcp.NAME.args}` and `{mcp.NAME.argv}`, which expand to the
    /// server's own command under `tools: live` and to `reloop mcp-replay`
    /// answering from the recording's `mcp:` under `tools: replay` (under
    /// `replay-or-live` the real server answers what the recording lacks,
    /// each request named `live`; docs/black-box.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<McpServerSpec>,
}

/// One stdio MCP server of `agent.mcp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerSpec {
    /// The name the agent's configuration and the recording's `mcp:` give it
    /// (letters, digits, `_` and `-`).
    pub name: String,
    /// The server's program, run under `tools: live` (need not be installed
    /// under `tools: replay`); placeholders expand as in `command`.
    pub command: String,
    /// Its arguments; placeholders expand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

/// `agent.tools`: whether the agent's shell commands run or are answered
/// from the recording.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ToolSideMode {
    /// Every command runs for real.
    #[default]
    Live,
    /// Every command is answered from the recording; none runs.
    Replay,
    /// Recorded commands are answered from the recording; the others run.
    ReplayOrLive,
    /// Every command runs for real, watched: its output, status, folder and
    /// input go into the re-recording's `tool_side:` (as under `reloop run
    /// --upstream URL --record-mode all`).
    Record,
}

impl ToolSideMode {
    /// Whether a command the recording does not answer runs for real.
    pub fn runs_unanswered(self) -> bool {
        matches!(self, Self::ReplayOrLive | Self::Record)
    }
}

fn default_timeout_s() -> u64 {
    120
}

impl AgentSpec {
    /// The spec with its preset's launch filled in: the preset's command
    /// and wire unless given, its variables and files unless overridden.
    pub fn resolved(&self) -> AgentSpec {
        let Some(preset) = self.preset else { return self.clone() };
        let launch = preset.launch();
        let owned = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect::<BTreeMap<_, _>>();
        let mut env = owned(launch.env);
        env.extend(self.env.clone());
        let mut files = owned(launch.files);
        files.extend(self.files.clone());
        let mut pass_env: Vec<String> = launch.pass_env.iter().map(|name| (*name).to_owned()).collect();
        pass_env.extend(self.pass_env.iter().filter(|name| !launch.pass_env.contains(&name.as_str())).cloned());
        AgentSpec {
            preset: self.preset,
            command: if self.command.is_empty() { launch.command.iter().map(|arg| (*arg).to_owned()).collect() } else { self.command.clone() },
            wire: self.wire.or(Some(launch.wire)),
            env,
            pass_env,
            files,
            timeout_s: self.timeout_s,
            tool_error_pattern: self.tool_error_pattern.clone(),
            tools: self.tools,
            shell_interception: self.shell_interception.or(Some(launch.shell.interception)),
            mcp: self.mcp.clone(),
        }
    }

    /// Where the shell shims reach the agent: the block's choice, else the
    /// preset's, else `path`.
    pub fn shell_interception(&self) -> ShellInterception {
        self.shell_interception.or_else(|| self.preset.map(|preset| preset.launch().shell.interception)).unwrap_or_default()
    }

    /// The agent runtime's own ways with its shell: how it wraps the
    /// model's command, and what it runs itself ([`PresetShell`]); a
    /// command agent without a preset neither wraps nor runs any.
    pub fn shell(&self) -> PresetShell {
        self.preset.map_or(PresetShell::PLAIN, |preset| preset.launch().shell)
    }

    /// The regex a failed call's result matches: the block's own, else the
    /// preset's, else [`DEFAULT_TOOL_ERROR_PATTERN`]; `None`: results are
    /// errors only when flagged.
    pub fn tool_error_pattern(&self) -> Option<&str> {
        match (&self.tool_error_pattern, self.preset) {
            (Some(own), _) => Some(own.as_str()).filter(|pattern| !pattern.is_empty()),
            (None, Some(preset)) => preset.launch().tool_error_pattern,
            (None, None) => Some(DEFAULT_TOOL_ERROR_PATTERN),
        }
    }
}

/// Why a workspace file path is refused, if it is: it must be relative and
/// stay inside the workspace.
pub fn check_file_path(path: &str) -> Result<(), &'static str> {
    let path = Path::new(path);
    if path.as_os_str().is_empty() {
        return Err("is empty");
    }
    if path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        Ok(())
    } else {
        Err("must be a relative path inside the workspace (no `..`, no leading `/`)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_fills_what_the_block_leaves_out_and_the_block_wins() {
        let spec: AgentSpec = serde_json::from_value(serde_json::json!({
            "preset": "pi", "env": { "PI_CODING_AGENT_DIR": "/elsewhere", "EXTRA": "1" }, "timeout_s": 9
        }))
        .unwrap();
        let resolved = spec.resolved();
        assert_eq!(resolved.command.first().map(String::as_str), Some("pi"));
        assert_eq!(resolved.wire, Some(WireFormat::Anthropic));
        assert_eq!(resolved.env["PI_CODING_AGENT_DIR"], "/elsewhere");
        assert_eq!(resolved.env["EXTRA"], "1");
        assert!(resolved.files.contains_key(".pi/models.json"));
        assert_eq!(resolved.timeout_s, 9);
        let own: AgentSpec =
            serde_json::from_value(serde_json::json!({ "preset": "codex", "command": ["my-codex", "{task}"], "wire": "openai-chat" })).unwrap();
        assert_eq!((own.resolved().command[0].as_str(), own.resolved().wire), ("my-codex", Some(WireFormat::OpenaiChat)));
    }

    #[test]
    fn the_shell_interception_is_the_blocks_else_the_presets_else_path() {
        let spec = |value| serde_json::from_value::<AgentSpec>(value).unwrap();
        assert_eq!(spec(serde_json::json!({ "preset": "pi" })).shell_interception(), ShellInterception::Mount, "pi starts /bin/bash");
        assert_eq!(spec(serde_json::json!({ "preset": "opencode" })).shell_interception(), ShellInterception::Path);
        assert_eq!(spec(serde_json::json!({ "preset": "pi", "shell_interception": "path" })).shell_interception(), ShellInterception::Path);
        assert_eq!(spec(serde_json::json!({ "command": ["a"] })).shell_interception(), ShellInterception::Path);
        let resolved = spec(serde_json::json!({ "preset": "mini-swe-agent" })).resolved();
        assert_eq!((resolved.shell_interception, resolved.shell_interception()), (Some(ShellInterception::Mount), ShellInterception::Mount));
    }

    #[test]
    fn the_blocks_tool_error_pattern_wins_over_the_presets_and_the_default() {
        let spec = |value: serde_json::Value| serde_json::from_value::<AgentSpec>(value).unwrap();
        assert_eq!(spec(serde_json::json!({ "command": ["a"] })).tool_error_pattern(), Some(DEFAULT_TOOL_ERROR_PATTERN));
        assert_eq!(spec(serde_json::json!({ "preset": "claude-code" })).tool_error_pattern(), None, "is_error says it");
        assert!(spec(serde_json::json!({ "preset": "codex" })).tool_error_pattern().is_some_and(|p| p.contains("failed to parse")));
        assert_eq!(spec(serde_json::json!({ "preset": "pi", "tool_error_pattern": "^FAIL" })).tool_error_pattern(), Some("^FAIL"));
        assert_eq!(spec(serde_json::json!({ "command": ["a"], "tool_error_pattern": "" })).tool_error_pattern(), None);
    }

    #[test]
    fn workspace_files_cannot_escape() {
        assert!(check_file_path(".codex/config.toml").is_ok());
        for bad in ["", "/etc/passwd", "../x", "a/../../x"] {
            assert!(check_file_path(bad).is_err(), "{bad}");
        }
    }
}
