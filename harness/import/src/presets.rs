//! Tool presets: each agent's real tool declarations (name, description,
//! JSON Schema), kept as data files under `presets/tools/` and embedded in
//! the binary. Imported sessions declare them; black-box scenarios
//! (`agent: { preset: ... }`) and authors use the same ones.

use serde::Deserialize;

/// One tool of a preset, as the agent declares it to the model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
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
    /// `write` when the tool changes files (needs approval), else absent.
    #[serde(default)]
    pub risk: Option<String>,
}

/// An agent's preset: where the schemas come from and the tools.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// The agent's name (`pi`, `codex`, `claude-code`).
    pub agent: String,
    /// The upstream source the schemas were taken from.
    pub source: String,
    /// The tools, in the agent's order.
    pub tools: Vec<PresetTool>,
}

/// The embedded preset files, by agent name.
const PRESET_FILES: [(&str, &str); 3] = [
    ("pi", include_str!("../presets/tools/pi.json")),
    ("codex", include_str!("../presets/tools/codex.json")),
    ("claude-code", include_str!("../presets/tools/claude-code.json")),
];

/// The agents that have a preset.
pub fn preset_names() -> impl Iterator<Item = &'static str> {
    PRESET_FILES.iter().map(|(name, _)| *name)
}

/// The preset of `agent`, or `None` when there is none.
pub fn preset(agent: &str) -> Option<Preset> {
    let (_, text) = PRESET_FILES.iter().find(|(name, _)| *name == agent)?;
    Some(serde_json::from_str(text).expect("embedded presets are checked by the unit tests"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_with_object_schemas_and_its_agents_tools() {
        let expected: [(&str, &[&str]); 3] = [
            ("pi", &["read", "bash", "edit", "write"]),
            ("codex", &["shell", "apply_patch", "update_plan"]),
            ("claude-code", &["Bash", "Read", "Edit", "Write", "Glob", "Grep", "WebFetch", "WebSearch", "Task", "TodoWrite"]),
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
        assert_eq!(preset_names().count(), 3);
        assert!(preset("aider").is_none());
    }
}
