//! Tool presets: each agent's real tool declarations (name, description,
//! JSON Schema), kept as data files under `presets/tools/` and embedded in
//! the binary. Imported sessions declare them; black-box scenarios
//! (`agent: { preset: ... }`) and authors use the same ones.
//!
//! [`PresetTool`] is reloop's tool declaration wherever one is read or
//! written on its own (presets, `--tools` files, the tools a captured
//! request declared): what the model sees (`reloop_wire::ToolSpec`) plus
//! the traits the loop needs (parallel safety, risk). A scenario's
//! `ToolFixture` is the same declaration with its answers, keyed by name.

use serde::Deserialize;

/// One tool of a preset, as the agent declares it to the model.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetTool {
    /// The tool's name, exactly as the agent sends it.
    pub name: String,
    /// The description the model sees.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
    /// Read-only: may run beside other parallel-safe calls.
    #[serde(default)]
    pub parallel_safe: bool,
    /// `write` when the tool changes files (needs approval); `safe` when absent.
    #[serde(default)]
    pub risk: reloop_agent::DeclaredRisk,
}

impl From<&reloop_agent::ToolSpec> for PresetTool {
    /// A declaration as a request made it, without traits (not parallel-safe, risk `safe`).
    fn from(spec: &reloop_agent::ToolSpec) -> Self {
        Self { name: spec.name.clone(), description: spec.description.clone(), parameters: spec.parameters.clone(), ..Self::default() }
    }
}

/// An agent's preset: where the schemas come from and the tools.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// The agent's name (`pi`, `codex`, `claude-code`).
    pub agent: String,
    /// The upstream source the schemas were taken from.
    pub source: String,
    /// Another preset this one revises: its tools, each replaced by the
    /// tool of the same name here (so an unchanged schema has one copy).
    #[serde(default)]
    pub base: Option<String>,
    /// The tools, in the agent's order.
    pub tools: Vec<PresetTool>,
}

/// The embedded preset files, by agent name. `pi` and `codex` are the
/// versions of the bundled imported sessions; `pi-0.73`, `codex-cli`,
/// `opencode`, `claude-code-2.1`, `gemini-cli` and `mini-swe-agent` the
/// versions the black-box presets launch (captured from their requests to
/// `reloop serve`).
const PRESET_FILES: [(&str, &str); 9] = [
    ("pi", include_str!("../presets/tools/pi.json")),
    ("pi-0.73", include_str!("../presets/tools/pi-0.73.json")),
    ("codex", include_str!("../presets/tools/codex.json")),
    ("codex-cli", include_str!("../presets/tools/codex-cli.json")),
    ("opencode", include_str!("../presets/tools/opencode.json")),
    ("claude-code", include_str!("../presets/tools/claude-code.json")),
    ("claude-code-2.1", include_str!("../presets/tools/claude-code-2.1.json")),
    ("gemini-cli", include_str!("../presets/tools/gemini-cli.json")),
    ("mini-swe-agent", include_str!("../presets/tools/mini-swe-agent.json")),
];

/// The agents that have a preset.
pub fn preset_names() -> impl Iterator<Item = &'static str> {
    PRESET_FILES.iter().map(|(name, _)| *name)
}

/// The preset of `agent`, or `None` when there is none; a revision holds
/// its base's tools with its own replacing those of the same name.
pub fn preset(agent: &str) -> Option<Preset> {
    let (_, text) = PRESET_FILES.iter().find(|(name, _)| *name == agent)?;
    let revision: Preset = serde_json::from_str(text).expect("embedded presets are checked by the unit tests");
    let Some(base) = revision.base.as_deref() else { return Some(revision) };
    let mut tools = preset(base).expect("a preset's base is embedded (unit tests)").tools;
    for tool in &mut tools {
        if let Some(revised) = revision.tools.iter().find(|t| t.name == tool.name) {
            *tool = revised.clone();
        }
    }
    Some(Preset { tools, ..revision })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_with_object_schemas_and_its_agents_tools() {
        let expected: [(&str, &[&str]); 9] = [
            ("pi", &["read", "bash", "edit", "write"]),
            ("pi-0.73", &["read", "bash", "edit", "write"]),
            ("codex", &["shell", "apply_patch", "update_plan"]),
            ("codex-cli", &["exec_command", "write_stdin", "request_user_input", "view_image", "get_goal", "create_goal", "update_goal"]),
            ("opencode", &["bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch", "write"]),
            ("claude-code", &["Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "WebSearch", "Task", "TodoWrite"]),
            (
                "claude-code-2.1",
                &[
                    "Agent",
                    "Bash",
                    "Edit",
                    "ListAgents",
                    "Read",
                    "ReportFindings",
                    "ScheduleWakeup",
                    "Skill",
                    "ToolSearch",
                    "Workflow",
                    "DeferredToolPlaceholder",
                    "Write",
                ],
            ),
            (
                "gemini-cli",
                &[
                    "update_topic",
                    "list_directory",
                    "read_file",
                    "grep_search",
                    "glob",
                    "replace",
                    "write_file",
                    "web_fetch",
                    "run_shell_command",
                    "list_background_processes",
                    "read_background_output",
                    "google_web_search",
                    "write_todos",
                    "enter_plan_mode",
                    "invoke_agent",
                    "activate_skill",
                ],
            ),
            ("mini-swe-agent", &["bash"]),
        ];
        for (agent, tools) in expected {
            let preset = preset(agent).unwrap();
            assert_eq!(preset.agent, agent);
            let names: Vec<&str> = preset.tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, tools);
            for tool in &preset.tools {
                assert_eq!(tool.parameters["type"], "object", "{agent}/{}", tool.name);
                assert!(tool.parameters["required"].is_array(), "{agent}/{}", tool.name);
            }
        }
        assert_eq!(preset_names().count(), 9);
        assert!(preset("aider").is_none());
    }

    #[test]
    fn a_revision_replaces_only_its_own_tools_of_the_base() {
        let (base, revised) = (preset("pi").unwrap(), preset("pi-0.73").unwrap());
        assert_eq!(revised.tools[0], base.tools[0]);
        assert_ne!(revised.tools[2], base.tools[2]);
        assert_eq!(revised.tools[2].parameters["required"], serde_json::json!(["path", "edits"]));
    }
}
