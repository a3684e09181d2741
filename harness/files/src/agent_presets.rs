//! Agent presets: how to launch a known agent CLI as a black box against
//! the run's mock (`agent: { preset: codex | pi | opencode | claude-code |
//! gemini-cli | mini-swe-agent }`). Each knows
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
#[serde(rename_all = "kebab-case")]
pub enum AgentPreset {
    /// `@openai/codex` (`codex exec`), OpenAI Responses.
    Codex,
    /// `@mariozechner/pi-coding-agent` (`pi -p`), Anthropic Messages.
    Pi,
    /// `opencode-ai` (`opencode run`), OpenAI Chat Completions.
    Opencode,
    /// `@anthropic-ai/claude-code` (`claude -p`), Anthropic Messages.
    ClaudeCode,
    /// `@google/gemini-cli` (`gemini -p`), the Gemini API.
    GeminiCli,
    /// `mini-swe-agent` on PyPI (`mini`), OpenAI Chat Completions through LiteLLM.
    MiniSweAgent,
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
    /// `(when, text)`: the agent's side requests (summaries, compaction),
    /// added to the recording's `auxiliary:` list so they never consume a
    /// recorded turn; `when` is a line of the agent's own prompt for them.
    pub auxiliary: &'static [(&'static str, &'static str)],
    /// How its requests' `user-agent` header starts, when it names the
    /// agent (pi and mini-swe-agent send their SDK's), so `record` can
    /// write an `agent:` scenario for it.
    pub user_agent: Option<&'static str>,
    /// Text in the arguments of the call the agent ends with (its
    /// submission) when it ends with a call rather than a text turn: that
    /// call's arguments are the run's final answer.
    pub submit_marker: Option<&'static str>,
    /// How the agent words a failed tool call in the result it sends back,
    /// when its wire has no error flag (Chat, Responses): a regex matched
    /// against the result's text. `None` for agents whose wire carries the
    /// flag (Anthropic's `is_error`, Gemini's `response.error`).
    pub tool_error_pattern: Option<&'static str>,
    /// How it starts its shell (docs/black-box.md's table of agents).
    pub shell: PresetShell,
    /// `(tool, fields)`: older argument forms the agent still takes for a
    /// tool beside the one it declares, rewriting them itself before the
    /// call (pi's `edit` of one `oldText`/`newText` pair, as sessions before
    /// its `edits` list wrote it): a recorded call holding every field of
    /// one is no misfit, so real sessions of older versions replay.
    pub older_arguments: &'static [(&'static str, &'static [&'static str])],
}

/// `agent.shell_interception`: where the agent finds the shell shims.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ShellInterception {
    /// First on the agent's `PATH` and as its `$SHELL`.
    #[default]
    Path,
    /// Also bound over `/bin/sh` and `/bin/bash` for the agent only (bubblewrap).
    Mount,
}

/// How an agent starts its shell, for `agent.tools: replay`: where the
/// shims must stand to reach it, how it wraps the model's command in the
/// `-c` line it gives the shell, and which lines its runtime runs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresetShell {
    /// Where the shims reach it: `mount` for an agent that starts its
    /// shell by absolute path.
    pub interception: ShellInterception,
    /// Regexes over a whole `-c` line, each with a `command` group: the
    /// model's command inside the agent's wrapper (a prologue, a trap, a
    /// trailer). The first that matches gives the command looked up in
    /// the recording; a line none matches is the command itself.
    pub unwrap: &'static [&'static str],
    /// Regexes over a whole `-c` line: lines the agent's runtime runs for
    /// itself, not for the model (probing its environment at start). They
    /// run for real, each logged by name as a passthrough.
    pub passthrough: &'static [&'static str],
}

impl PresetShell {
    /// A shell started from `PATH` with the model's command as its line.
    pub const PLAIN: PresetShell = PresetShell { interception: ShellInterception::Path, unwrap: &[], passthrough: &[] };
}

/// A command agent's failed call, unless its block says otherwise: a
/// result that starts with `error`, in any case, then `:`
/// (`Error: no such file`).
pub const DEFAULT_TOOL_ERROR_PATTERN: &str = r"(?i)^\s*error\s*:";

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
    // Its local compaction (a provider not named `OpenAI`): a summary turn
    // whose last user message is its checkpoint prompt.
    auxiliary: &[("CONTEXT CHECKPOINT COMPACTION", "Handoff summary of a replayed session: continue the user's task as first stated.")],
    user_agent: Some("codex_"),
    submit_marker: None,
    // Its answers to a call it could not run (codex-rs core `FunctionCallError::RespondToModel`).
    tool_error_pattern: Some(r"^(?:failed to parse function arguments|unsupported call)"),
    // `exec_command` starts the account's shell by absolute path (`/bin/bash`
    // from the password database), first to take a snapshot of its
    // environment, then per command a wrapper that restores it and execs
    // `/bin/bash -c COMMAND`: the snapshot's two lines and the wrapper run,
    // the command inside it is answered.
    shell: PresetShell {
        interception: ShellInterception::Mount,
        unwrap: &[],
        passthrough: &[
            r#"(?s)\Aif \[ -z "\$\{BASH_ENV-\}" \].*\n__codex_snapshot_command\(\) \{\n"#,
            r#"\Aset -e; \. "[^"]*/shell_snapshots/[^"]*"\z"#,
            r"(?s)\A__CODEX_SNAPSHOT_OVERRIDE_SET_0=.*\nexec '(?:/usr)?/bin/(?:ba)?sh' -l?c '",
        ],
    },
    older_arguments: &[],
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
    // Its compaction (past its reserve, or after a context overflow) and
    // its branch summaries: a request without tools whose system prompt is
    // `SUMMARIZATION_SYSTEM_PROMPT` (pi-coding-agent core/compaction/utils).
    auxiliary: &[(
        "You are a context summarization assistant.",
        "## Goal\nThe user's task as first stated.\n\n## Progress\nA replayed session: continue the task.",
    )],
    user_agent: None,
    submit_marker: None,
    tool_error_pattern: None,
    // Its `bash` tool starts `/bin/bash -c COMMAND` by absolute path
    // (pi-coding-agent utils/shell.ts `getShellConfig`).
    shell: PresetShell { interception: ShellInterception::Mount, unwrap: &[], passthrough: &[] },
    // pi-coding-agent core/tools/edit.ts `prepareEditArguments`.
    older_arguments: &[("edit", &["path", "oldText", "newText"])],
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
    auxiliary: &[],
    user_agent: Some("opencode/"),
    submit_marker: None,
    // A failed tool part's `error` is the thrown JS error's `toString()`.
    tool_error_pattern: Some(r"^(?:[A-Z][A-Za-z]*)?Error: "),
    // Its `bash` tool spawns the command with `$SHELL` as the shell (`-c`).
    shell: PresetShell::PLAIN,
    older_arguments: &[],
};

/// The summary Claude Code's compaction request gets: in the
/// `<analysis>`/`<summary>` form its prompt asks for.
const CLAUDE_CODE_SUMMARY: &str = "<analysis>A replayed session.</analysis>\n<summary>1. Primary Request and Intent: the user's task, as first stated.\n2. Pending Tasks: continue the task.</summary>";

/// Claude Code: print mode with stream-json output; as root it refuses
/// `--dangerously-skip-permissions`, so an allowlist of tools lets it run
/// them unattended. Its config folder is in the workspace
/// (`CLAUDE_CONFIG_DIR`), whose `settings.json` points it at the base URL
/// and turns off telemetry, error reports, updates and other traffic.
const CLAUDE_CODE: PresetLaunch = PresetLaunch {
    command: &[
        "claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "{model}",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash,Read,Edit,Write,Glob,Grep",
        "--",
        "{task}",
    ],
    wire: WireFormat::Anthropic,
    env: &[
        ("CLAUDE_CONFIG_DIR", "{workspace}/.claude"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ],
    pass_env: &[],
    files: &[(
        ".claude/settings.json",
        r#"{ "env": { "ANTHROPIC_BASE_URL": "{anthropic_base_url}", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1" } }
"#,
    )],
    tools: "claude-code-2.1",
    // A reminder of the tokens left, appended to every tool result.
    volatile_result_lines: &["<total_tokens>"],
    // Its compaction request: a system prompt of its own, all tools declared.
    auxiliary: &[
        ("tasked with summarizing conversations", CLAUDE_CODE_SUMMARY),
        ("Your task is to create a detailed summary of the conversation so far", CLAUDE_CODE_SUMMARY),
    ],
    user_agent: Some("claude-cli/"),
    submit_marker: None,
    tool_error_pattern: None,
    // Its Bash tool starts `$SHELL` (a bash or zsh) with `-c -l`: at start
    // `env` and a script that writes a snapshot of the shell's functions
    // and options, which run; then per command `source SNAPSHOT && … &&
    // eval WORD < /dev/null && pwd -P >| CWD_FILE`, whose WORD, once its
    // quoting is undone, is the command answered: a bare word (`eval ls`)
    // or single-quoted pieces with each `'` as `'"'"'` (its quoting
    // function, in 2.1.332); no `< /dev/null` after a heredoc.
    shell: PresetShell {
        interception: ShellInterception::Path,
        unwrap: &[
            r#"(?s)\Asource \S+ 2>/dev/null \|\| true && .*? && eval (?P<quoted>(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[^\s'"\\])+)(?: < /dev/null)? && pwd -P >\| \S+\z"#,
        ],
        passthrough: &[r"\Aenv\z", r"(?s)\ASNAPSHOT_FILE=\S+/shell-snapshots/snapshot-\S+\n"],
    },
    older_arguments: &[],
};

/// Gemini CLI: headless mode (`-p`), every tool approved (`yolo`), the
/// model named so it sends no routing request. Its `HOME` is the
/// workspace, whose `.gemini/settings.json` selects API-key auth and turns
/// off usage statistics, telemetry and update checks; the workspace is
/// trusted by variable.
const GEMINI_CLI: PresetLaunch = PresetLaunch {
    command: &["gemini", "-p", "{task}", "--model", "{model}", "--approval-mode", "yolo", "--output-format", "stream-json"],
    wire: WireFormat::Gemini,
    env: &[("GOOGLE_GEMINI_BASE_URL", "{anthropic_base_url}"), ("GEMINI_API_KEY", "sk-reloop-black-box"), ("GEMINI_CLI_TRUST_WORKSPACE", "true")],
    pass_env: &[],
    files: &[(
        ".gemini/settings.json",
        r#"{ "security": { "auth": { "selectedType": "gemini-api-key" } }, "privacy": { "usageStatisticsEnabled": false }, "telemetry": { "enabled": false }, "general": { "disableAutoUpdate": true, "disableUpdateNag": true } }
"#,
    )],
    tools: "gemini-cli",
    // `run_shell_command` ends each output with the process group it ran in.
    volatile_result_lines: &["Process Group PGID: "],
    // Its side requests, each answered in the JSON or XML it asks for
    // (packages/core services/loopDetectionService.ts after 30 turns of
    // one prompt, utils/nextSpeakerChecker.ts, core/prompts.ts's
    // compression prompt), so a long session's replay does not spend a
    // recorded turn on them.
    auxiliary: &[
        (
            "You are a diagnostic agent that determines whether a conversational AI assistant is stuck in an unproductive loop.",
            r#"{"unproductive_state_analysis": "A replayed session: the turns are the recorded ones.", "unproductive_state_confidence": 0}"#,
        ),
        (
            "determine who should logically speak next: the 'user' or the 'model' (you).",
            r#"{"reasoning": "A replayed session: the recorded turn has ended.", "next_speaker": "user"}"#,
        ),
        (
            "You are a specialized system component responsible for distilling chat history into a structured XML <state_snapshot>.",
            "<state_snapshot>\n<overall_goal>A replayed session: continue the user's task as first stated.</overall_goal>\n</state_snapshot>",
        ),
    ],
    user_agent: Some("GeminiCLI"),
    submit_marker: None,
    tool_error_pattern: None,
    // `run_shell_command` starts `bash -c` from PATH, the command wrapped so
    // that it can collect background jobs (packages/core tools/shell.ts
    // `wrapCommandForBackgroundPIDs`, behind shellExecutionService's
    // `shopt` guard); the command inside is answered.
    shell: PresetShell {
        interception: ShellInterception::Path,
        unwrap: &[
            r#"(?s)\A(?:shopt -u promptvars nullglob extglob nocaseglob dotglob; )?_bgpids_file=\S+\n\(\n  trap 'jobs -p > "\$_bgpids_file"' EXIT\n(?P<command>.*)\n\)\n__code=\$\?\nexit \$__code\z"#,
        ],
        passthrough: &[],
    },
    older_arguments: &[],
};

/// mini-swe-agent: `mini` in yolo mode, exiting when the model submits.
/// Its global config folder is in the workspace, whose `.env` marks it
/// configured (no first-run wizard), points LiteLLM at the base URL, keeps
/// LiteLLM's price table local (it fetches one from GitHub otherwise) and
/// ignores cost tracking for models it does not price. Its retries are
/// bounded: a divergence's 400 would otherwise be retried with growing
/// backoff for minutes.
const MINI_SWE_AGENT: PresetLaunch = PresetLaunch {
    command: &[
        "mini",
        "--yolo",
        "--exit-immediately",
        "--model",
        "openai/{model}",
        "--cost-limit",
        "0",
        "--output",
        "{workspace}/.mini/trajectory.json",
        "--task",
        "{task}",
    ],
    wire: WireFormat::OpenaiChat,
    env: &[
        ("MSWEA_GLOBAL_CONFIG_DIR", "{workspace}/.mini"),
        ("MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT", "3"),
        ("MSWEA_SILENT_STARTUP", "1"),
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
    ],
    pass_env: &[],
    files: &[(".mini/.env", "MSWEA_CONFIGURED=true\nMSWEA_COST_TRACKING=ignore_errors\nOPENAI_API_BASE={base_url}\n")],
    tools: "mini-swe-agent",
    volatile_result_lines: &[],
    auxiliary: &[],
    user_agent: None,
    submit_marker: Some("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    tool_error_pattern: Some(DEFAULT_TOOL_ERROR_PATTERN),
    // LocalEnvironment's `subprocess.Popen(command, shell=True)`: `/bin/sh -c`.
    shell: PresetShell { interception: ShellInterception::Mount, unwrap: &[], passthrough: &[] },
    older_arguments: &[],
};

impl AgentPreset {
    /// Every preset.
    pub const ALL: [AgentPreset; 6] = [Self::Codex, Self::Pi, Self::Opencode, Self::ClaudeCode, Self::GeminiCli, Self::MiniSweAgent];

    /// The name used in scenarios.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Codex => "codex",
            Self::Pi => "pi",
            Self::Opencode => "opencode",
            Self::ClaudeCode => "claude-code",
            Self::GeminiCli => "gemini-cli",
            Self::MiniSweAgent => "mini-swe-agent",
        }
    }

    /// How to launch it.
    pub fn launch(self) -> PresetLaunch {
        match self {
            Self::Codex => CODEX,
            Self::Pi => PI,
            Self::Opencode => OPENCODE,
            Self::ClaudeCode => CLAUDE_CODE,
            Self::GeminiCli => GEMINI_CLI,
            Self::MiniSweAgent => MINI_SWE_AGENT,
        }
    }

    /// The preset whose agent sends `user_agent`, if one does.
    pub fn of_user_agent(user_agent: &str) -> Option<AgentPreset> {
        Self::ALL.into_iter().find(|preset| preset.launch().user_agent.is_some_and(|start| user_agent.starts_with(start)))
    }

    /// The tool schemas it declares.
    pub fn tools(self) -> Preset {
        crate::presets::preset(self.launch().tools).expect("every agent preset names an embedded tool preset (unit test)")
    }
}

/// The MCP server and tool a call the model makes names, when `name` is
/// how the agent names tool `TOOL` of one of its MCP `servers` to the
/// model: Claude Code's `mcp__SERVER__TOOL` (its MCP client's prefix
/// `mcp__`, the server's name, `__`, the tool's name as the server lists
/// it). `None` for another name, and for agents whose spelling is not
/// checked yet (docs/black-box.md's MCP table).
pub fn mcp_tool<'a>(preset: AgentPreset, servers: &[&'a str], name: &'a str) -> Option<(&'a str, &'a str)> {
    let rest = match preset {
        AgentPreset::ClaudeCode => name.strip_prefix("mcp__")?,
        _ => return None,
    };
    // Server names are one word of letters, digits, `_` and `-`: the longest
    // named server that the rest starts with, then `__`, wins.
    let server = servers.iter().filter(|server| rest.strip_prefix(**server).is_some_and(|tail| tail.starts_with("__"))).max_by_key(|s| s.len())?;
    Some((server, &rest[server.len() + 2..]))
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
    let older_form = preset.launch().older_arguments.iter().any(|(tool, fields)| *tool == name && fields.iter().all(|field| arguments.get(field).is_some()));
    (!missing.is_empty() && !older_form).then(|| format!("{}'s `{name}` requires {}", preset.as_str(), missing.join(", ")))
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
            assert!(launch.command.contains(&"{task}"), "{preset:?}");
            assert!(!preset.tools().tools.is_empty(), "{preset:?}");
            assert_eq!(serde_json::to_value(preset).unwrap(), preset.as_str());
            let config: String = launch.files.iter().map(|(_, text)| *text).chain(launch.env.iter().map(|(_, value)| *value)).collect();
            assert!(config.contains("{base_url}") || config.contains("{anthropic_base_url}"), "{preset:?}");
        }
    }

    #[test]
    fn the_agents_that_name_themselves_are_known_by_their_user_agent() {
        assert_eq!(AgentPreset::of_user_agent("claude-cli/2.1.332 (external, sdk-cli)"), Some(AgentPreset::ClaudeCode));
        assert_eq!(AgentPreset::of_user_agent("GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64; terminal)"), Some(AgentPreset::GeminiCli));
        assert_eq!(AgentPreset::of_user_agent("OpenAI/Python 2.8.1"), None);
    }

    #[test]
    fn a_recorded_call_must_name_a_tool_of_the_agent_with_its_required_arguments() {
        assert_eq!(misfit(AgentPreset::Pi, "read", &serde_json::json!({ "path": "a" })), None);
        assert_eq!(misfit(AgentPreset::Pi, "read", &serde_json::json!({})).as_deref(), Some("pi's `read` requires path"));
        let older_edit = serde_json::json!({ "path": "a", "oldText": "x", "newText": "y" });
        assert_eq!(misfit(AgentPreset::Pi, "edit", &older_edit), None, "pi still takes the edit of one pair");
        assert_eq!(misfit(AgentPreset::Pi, "edit", &serde_json::json!({ "path": "a", "oldText": "x" })).as_deref(), Some("pi's `edit` requires edits"));
        let unknown = misfit(AgentPreset::Codex, "shell", &serde_json::json!({})).unwrap();
        assert!(unknown.starts_with("codex declares no tool `shell` (its tools: exec_command,"), "{unknown}");
        assert_eq!(misfit(AgentPreset::Opencode, "bash", &serde_json::json!({ "command": "ls" })), None);
    }

    #[test]
    fn claude_code_names_an_mcp_tool_by_its_server_and_its_name() {
        let servers = ["time", "time__zone"];
        assert_eq!(mcp_tool(AgentPreset::ClaudeCode, &servers, "mcp__time__get_current_time"), Some(("time", "get_current_time")));
        assert_eq!(mcp_tool(AgentPreset::ClaudeCode, &servers, "mcp__time__zone__list"), Some(("time__zone", "list")));
        assert_eq!(mcp_tool(AgentPreset::ClaudeCode, &servers, "mcp__clock__now"), None, "not a server of agent.mcp");
        assert_eq!(mcp_tool(AgentPreset::ClaudeCode, &servers, "Bash"), None);
        assert_eq!(mcp_tool(AgentPreset::Pi, &servers, "mcp__time__get_current_time"), None, "pi speaks no MCP");
    }
}
