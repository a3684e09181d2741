//! `reloop import --agent`: what a real agent's own tools met in the
//! recorded session, so that the agent itself (a black box, `agent:`
//! scenarios, `docs/black-box.md`) can replay it under `agent.tools:
//! replay`: the shell commands it ran with their outputs (the recording's
//! `tool_side:`, as the agent's shell receives them once the shim has
//! unwrapped the agent's own wrapping), and the first workspace snapshot
//! (`agent.files`: the files the session read in full, before any edit),
//! with what the session does not tell listed as gaps.
//!
//! One submodule per agent reads its tool calls; what they share (paths
//! relative to the workspace root, the snapshot of files read, the gaps, the
//! placing of each command after the exchange that asked for it) is here.
//! [`world`] dispatches on the preset.

mod claude_code;
mod codex;
mod gemini_cli;
mod pi;
pub mod scenario;
pub mod shell_words;
pub mod snapshot;

use std::collections::BTreeMap;

use reloop_files::agent_presets::AgentPreset;
use reloop_recording::tool_side::ShellCommand;
use reloop_recording::{Part, Recording};

use crate::session::{ImportedSession, Item, ToolCall, ToolResult};
pub use snapshot::Snapshot;

/// The agents whose sessions `--agent` reads the world of.
pub const SUPPORTED: [AgentPreset; 4] = [AgentPreset::Codex, AgentPreset::Pi, AgentPreset::GeminiCli, AgentPreset::ClaudeCode];

/// What the agent's tools met in the session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentWorld {
    /// The shell commands in the order the session ran them, each with its
    /// output, exit code and folder (relative to the workspace root).
    pub tool_side: Vec<ShellCommand>,
    /// The first workspace snapshot: each file the session read in full
    /// before any edit of it, by path relative to the workspace root.
    pub files: BTreeMap<String, String>,
    /// What the replay will lack, one sentence each, naming the source line.
    pub gaps: Vec<String>,
}

/// The import report's part for `--agent`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AgentReport {
    /// The black-box scenario's name.
    pub scenario: String,
    /// The agent.
    pub preset: &'static str,
    /// Shell commands put in `tool_side:`.
    pub tool_side: usize,
    /// Files put in `agent.files`, by path.
    pub files: Vec<String>,
    /// What the replay lacks.
    pub gaps: Vec<String>,
}

impl AgentReport {
    /// The report of `world`, written as scenario `scenario` for `preset`.
    pub fn of(scenario: &str, preset: AgentPreset, world: &AgentWorld) -> Self {
        Self {
            scenario: scenario.to_owned(),
            preset: preset.as_str(),
            tool_side: world.tool_side.len(),
            files: world.files.keys().cloned().collect(),
            gaps: world.gaps.clone(),
        }
    }

    /// The summary's lines: what was written, then each gap.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "  agent scenario {} ({}): {} shell commands in tool_side, {} files in the workspace snapshot, {} gaps\n",
            self.scenario,
            self.preset,
            self.tool_side,
            self.files.len(),
            self.gaps.len()
        );
        for gap in &self.gaps {
            out.push_str(&format!("  gap: {gap}\n"));
        }
        out
    }
}

/// The preset of the agent that wrote `session`, from the format's own
/// agent name; `Err` names the agents `--agent` reads.
pub fn preset_of(session: &ImportedSession) -> Result<AgentPreset, String> {
    let preset = session.agent.and_then(|name| serde_json::from_value::<AgentPreset>(serde_json::json!(name)).ok());
    match preset {
        Some(preset) if SUPPORTED.contains(&preset) => Ok(preset),
        Some(preset) => Err(format!("--agent: {} sessions are not read for their tool side yet; {}", preset.as_str(), supported())),
        None => Err(format!("--agent: a {} session names no agent reloop runs as a black box; {}", session.format, supported())),
    }
}

fn supported() -> String {
    let names: Vec<&str> = SUPPORTED.iter().map(|preset| preset.as_str()).collect();
    format!("--agent reads sessions of: {}", names.join(", "))
}

/// The world of `session`, written by `preset`'s agent, whose workspace
/// root is `root`. The agent's module may rewrite the session's calls where
/// the agent itself, not its shell, acts on a recorded absolute path (Codex's
/// `workdir`), so that the replay in a fresh workspace finds them: the
/// recording is then built from the rewritten session, and
/// [`World::placed`] places each command after its exchange.
pub fn world(preset: AgentPreset, session: &mut ImportedSession, root: Option<&str>) -> Result<World, String> {
    match preset {
        AgentPreset::Codex => Ok(codex::world(session, root)),
        AgentPreset::Pi => Ok(pi::world(session, root)),
        AgentPreset::GeminiCli => Ok(gemini_cli::world(session, root)),
        AgentPreset::ClaudeCode => Ok(claude_code::world(session, root)),
        other => Err(format!("--agent: {} sessions are not read for their tool side yet; {}", other.as_str(), supported())),
    }
}

/// A world as an agent's module reads it: the commands still keyed by the
/// call that ran them.
#[derive(Debug, Default)]
pub struct World {
    commands: Vec<(String, ShellCommand)>,
    snapshot: Snapshot,
    gaps: Vec<String>,
}

impl World {
    /// A command the call `call_id` ran.
    pub fn command(&mut self, call_id: &str, command: ShellCommand) {
        self.commands.push((call_id.to_owned(), command));
    }

    /// The files read and edited so far.
    pub fn snapshot(&mut self) -> &mut Snapshot {
        &mut self.snapshot
    }

    /// A gap.
    pub fn gap(&mut self, gap: String) {
        self.gaps.push(gap);
    }

    /// The world, each command's `after_exchange` the recording's exchange
    /// (0-based) whose answer holds its call.
    pub fn placed(self, recording: &Recording) -> AgentWorld {
        let mut exchange_of: BTreeMap<&str, usize> = BTreeMap::new();
        for (index, exchange) in recording.exchanges.iter().enumerate() {
            for part in &exchange.parts {
                if let Part::ToolCall(call) = part {
                    exchange_of.entry(call.id.as_deref().unwrap_or_default()).or_insert(index);
                }
            }
        }
        let tool_side = self
            .commands
            .into_iter()
            .map(|(call_id, command)| ShellCommand { after_exchange: exchange_of.get(call_id.as_str()).copied(), ..command })
            .collect();
        let (files, mut gaps) = self.snapshot.finish();
        gaps.extend(self.gaps);
        AgentWorld { tool_side, files, gaps }
    }
}

/// `path` (absolute, or relative to `cwd`, itself absolute or relative to
/// `root`) relative to `root`, `.` for the root itself; `None` outside it
/// or when `..` would climb out.
pub fn relative_to_root(path: &str, cwd: Option<&str>, root: Option<&str>) -> Option<String> {
    let root = root?;
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else {
        let cwd = cwd.unwrap_or(root);
        let cwd = if cwd.starts_with('/') { cwd.to_owned() } else { format!("{root}/{cwd}") };
        format!("{cwd}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    let root_parts: Vec<&str> = root.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if parts.len() < root_parts.len() || parts[..root_parts.len()] != root_parts[..] {
        return None;
    }
    let rest = &parts[root_parts.len()..];
    Some(if rest.is_empty() { ".".to_owned() } else { rest.join("/") })
}

/// Walks `session`'s tool calls and the results that answer them, in
/// order: `prepare` rewrites each call where it stands (the paths the agent
/// resolves itself), `answered` gets each call, as rewritten, with its
/// result. A call never answered is not given.
pub(super) fn calls_with_results(session: &mut ImportedSession, mut prepare: impl FnMut(&mut ToolCall), mut answered: impl FnMut(&ToolCall, &ToolResult)) {
    let mut calls: BTreeMap<String, ToolCall> = BTreeMap::new();
    for item in &mut session.items {
        match item {
            Item::Assistant(turn) => {
                for call in &mut turn.tool_calls {
                    prepare(call);
                    calls.insert(call.id.clone(), call.clone());
                }
            }
            Item::ToolResult(result) => {
                if let Some(call) = calls.remove(&result.call_id) {
                    answered(&call, result);
                }
            }
            _ => {}
        }
    }
}

/// The string argument `key` (a path, absolute or relative to `cwd`) made
/// relative to `root` when it lies under it: the replay's agent starts at
/// the root of a fresh workspace, where the recorded folders do not exist.
pub(super) fn relative_argument(arguments: &mut serde_json::Map<String, serde_json::Value>, key: &str, cwd: Option<&str>, root: Option<&str>) {
    if let Some(serde_json::Value::String(path)) = arguments.get_mut(key)
        && let Some(relative) = relative_to_root(path, cwd, root)
    {
        *path = relative;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_relative_to_the_root_or_refused_outside_it() {
        let root = Some("/home/me/p");
        assert_eq!(relative_to_root("/home/me/p/src/a.rs", None, root).as_deref(), Some("src/a.rs"));
        assert_eq!(relative_to_root("src/a.rs", Some("/home/me/p"), root).as_deref(), Some("src/a.rs"));
        assert_eq!(relative_to_root("a.rs", Some("src"), root).as_deref(), Some("src/a.rs"));
        assert_eq!(relative_to_root("../b.rs", Some("/home/me/p/src"), root).as_deref(), Some("b.rs"));
        assert_eq!(relative_to_root("/home/me/p", None, root).as_deref(), Some("."));
        assert_eq!(relative_to_root("/home/me/other/x", None, root), None);
        assert_eq!(relative_to_root("/home/me/pp/x", None, root), None, "a sibling whose name starts alike");
        assert_eq!(relative_to_root("../../x", Some("/home/me/p"), root), None);
        assert_eq!(relative_to_root("x", None, None), None);
    }

    #[test]
    fn an_agent_without_a_module_is_refused_naming_the_supported_ones() {
        let session = ImportedSession { format: "opencode", agent: Some("opencode"), ..ImportedSession::default() };
        let error = preset_of(&session).unwrap_err();
        assert!(error.contains("opencode sessions are not read") && error.contains("codex, pi, gemini-cli"), "{error}");
        let session = ImportedSession { format: "atif", agent: None, ..ImportedSession::default() };
        assert!(preset_of(&session).unwrap_err().contains("a atif session names no agent"));
        let mut session = ImportedSession { format: "opencode", agent: Some("opencode"), ..ImportedSession::default() };
        assert!(world(AgentPreset::Opencode, &mut session, None).unwrap_err().contains("--agent reads sessions of: codex, pi, gemini-cli, claude-code"));
    }
}
