//! Agent presets: how to launch a known agent CLI as a black box against
//! the run's mock (`agent: { preset: codex | pi | opencode }`). Each knows
//! the non-interactive command line, the config file that points the agent
//! at the base URL (written into the workspace, the agent's home kept there
//! too so the user's own config is neither read nor touched), the wire it
//! speaks, and the tool schemas it declares, shared with the importers
//! (`crate::presets::preset`) so recordings can be checked against them.
//! Versions: the ones pinned in `.ci/run` (docs/black-box.md).

use crate::presets::{Preset, PresetTool};
use reloop_agent::WireFormat;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A known agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentPreset {
    /// `@openai/codex` (`codex exec`), OpenAI Responses.
    Codex,
    /// `@mariozechner/pi-coding-agent` (`pi -p`), Anthropic Messages.
    Pi,
    /// `opencode-ai` (`opencode run`), OpenAI Chat Completions.
    Opencode,
}

/// What a preset puts into the `agent:` block (placeholders as there).
#[derive(Debug, Clone, Copy)]
pub struct PresetLaunch {
    /// The argv.
    pub command: &'static [&'static str],
    /// The API the agent is configured to speak.
    pub wire: WireFormat,
    /// Environment variables.
    pub env: &'static [(&'static str, &'static str)],
    /// Variables of reloop's environment the agent needs passed on.
    pub pass_env: &'static [&'static str],
    /// Files written into the workspace.
    pub files: &'static [(&'static str, &'static str)],
    /// The tool preset (`crate::presets::preset`) of this version.
    pub tools: &'static str,
    /// Prefixes of the lines the agent adds to a tool's result that change
    /// every time (ids, timings), left out when results are compared.
    pub volatile_result_lines: &'static [&'static str],
}

/// Codex: a custom Responses provider in `$CODEX_HOME/config.toml`; the
/// sandbox lets commands write in the workspace only.
const CODEX: PresetLaunch = PresetLaunch {
    command: &["codex", "exec", "--skip-git-repo-check", "--sandbox", "workspace-write", "{task}"],
    wire: WireFormat::OpenaiResponses,
    env: &[("CODEX_HOME", "{workspace}/.codex")],
    pass_env: &[],
    files: &[(
        ".codex/config.toml",
        "model = \"{model}\"\nmodel_provider = \"reloop\"\n\n[model_providers.reloop]\nname = \"reloop\"\nbase_url = \"{base_url}\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n",
    )],
    tools: "codex-cli",
    volatile_result_lines: &["Chunk ID: ", "Wall time: "],
};

/// pi: a custom Anthropic provider in `$PI_CODING_AGENT_DIR/models.json`;
/// print mode, no session file.
const PI: PresetLaunch = PresetLaunch {
    command: &["pi", "-p", "--no-session", "--provider", "reloop", "--model", "{model}", "{task}"],
    wire: WireFormat::Anthropic,
    env: &[("PI_CODING_AGENT_DIR", "{workspace}/.pi")],
    pass_env: &[],
    files: &[(
        ".pi/models.json",
        r#"{ "providers": { "reloop": { "baseUrl": "{anthropic_base_url}", "api": "anthropic-messages", "apiKey": "ANTHROPIC_API_KEY", "models": [{ "id": "{model}", "contextWindow": 200000, "maxTokens": 8192 }] } } }
"#,
    )],
    tools: "pi-0.73",
    volatile_result_lines: &[],
};

/// opencode: an OpenAI-compatible provider in the project's
/// `opencode.json`; its home and XDG folders inside the workspace.
const OPENCODE: PresetLaunch = PresetLaunch {
    command: &["opencode", "run", "--model", "reloop/{model}", "{task}"],
    wire: WireFormat::OpenaiChat,
    env: &[
        ("HOME", "{workspace}/.opencode/home"),
        ("XDG_CONFIG_HOME", "{workspace}/.opencode/config"),
        ("XDG_DATA_HOME", "{workspace}/.opencode/data"),
        ("XDG_CACHE_HOME", "{workspace}/.opencode/cache"),
        ("XDG_STATE_HOME", "{workspace}/.opencode/state"),
    ],
    pass_env: &[],
    files: &[(
        "opencode.json",
        r#"{ "$schema": "https://opencode.ai/config.json", "model": "reloop/{model}",
  "provider": { "reloop": { "npm": "@ai-sdk/openai-compatible", "name": "reloop", "options": { "baseURL": "{base_url}", "apiKey": "sk-reloop-black-box" }, "models": { "{model}": { "name": "{model}" } } } } }
"#,
    )],
    tools: "opencode",
    volatile_result_lines: &[],
};

impl AgentPreset {
    /// Every preset.
    pub const ALL: [AgentPreset; 3] = [Self::Codex, Self::Pi, Self::Opencode];

    /// The name used in scenarios.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Codex => "codex",
            Self::Pi => "pi",
            Self::Opencode => "opencode",
        }
    }

    /// How to launch it.
    pub fn launch(self) -> PresetLaunch {
        match self {
            Self::Codex => CODEX,
            Self::Pi => PI,
            Self::Opencode => OPENCODE,
        }
    }

    /// The tool schemas it declares.
    pub fn tools(self) -> Preset {
        crate::presets::preset(self.launch().tools).expect("every agent preset names an embedded tool preset (unit test)")
    }
}

/// Why a recorded call cannot be one the agent makes: a tool it does not
/// declare, or a required argument missing. `None` when it fits.
pub fn misfit(preset: AgentPreset, name: &str, arguments: &serde_json::Value) -> Option<String> {
    let tools = preset.tools();
    let Some(tool) = tools.tools.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
        return Some(format!("{} declares no tool `{name}` (its tools: {})", preset.as_str(), names.join(", ")));
    };
    let missing: Vec<&str> = required(tool).filter(|field| arguments.get(field).is_none()).collect();
    (!missing.is_empty()).then(|| format!("{}'s `{name}` requires {}", preset.as_str(), missing.join(", ")))
}

fn required(tool: &PresetTool) -> impl Iterator<Item = &str> {
    tool.parameters["required"].as_array().into_iter().flatten().filter_map(serde_json::Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_its_tools_and_a_config_that_points_at_the_base_url() {
        for preset in AgentPreset::ALL {
            let launch = preset.launch();
            assert_eq!(launch.command[0], preset.as_str());
            assert!(launch.command.contains(&"{task}"), "{preset:?}");
            assert!(!preset.tools().tools.is_empty(), "{preset:?}");
            let config: String = launch.files.iter().map(|(_, text)| *text).collect();
            assert!(config.contains("{base_url}") || config.contains("{anthropic_base_url}"), "{preset:?}");
        }
    }

    #[test]
    fn a_recorded_call_must_name_a_tool_of_the_agent_with_its_required_arguments() {
        assert_eq!(misfit(AgentPreset::Pi, "read", &serde_json::json!({ "path": "a" })), None);
        assert_eq!(misfit(AgentPreset::Pi, "read", &serde_json::json!({})).as_deref(), Some("pi's `read` requires path"));
        let unknown = misfit(AgentPreset::Codex, "shell", &serde_json::json!({})).unwrap();
        assert!(unknown.starts_with("codex declares no tool `shell` (its tools: exec_command,"), "{unknown}");
        assert_eq!(misfit(AgentPreset::Opencode, "bash", &serde_json::json!({ "command": "ls" })), None);
    }
}
