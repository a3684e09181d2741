//! The `agent:` block of a scenario: an outside agent process run as the
//! system under test against the run's mock server (a black box). Its
//! placeholders expand per run, and its workspace files may not leave the
//! workspace. `preset:` fills the block from a known agent's launch
//! ([`crate::black_box::presets`]); what the block says itself wins.

use std::collections::BTreeMap;
use std::path::{Component, Path};

use reloop_agent::WireFormat;

pub use crate::black_box::presets::{AgentPreset, misfit};
use schemars::JsonSchema;
use serde::Deserialize;

/// An agent command line and how to launch it.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// A known agent (`codex`, `pi`, `opencode`): its command line, base-URL
    /// wiring, config file and wire; the fields below add to it or replace it.
    #[serde(default)]
    pub preset: Option<AgentPreset>,
    /// The argv; `{task}`, `{workspace}`, `{scenario_dir}`, `{base_url}`,
    /// `{anthropic_base_url}`, `{port}` and `{model}` expand. Required
    /// without a preset.
    #[serde(default)]
    pub command: Vec<String>,
    /// The API the agent speaks (overrides the scenario's `wire`).
    #[serde(default)]
    pub wire: Option<WireFormat>,
    /// Extra environment variables; values expand as in `command`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of reloop's environment passed on to the agent (when
    /// set); nothing else of it is, beyond `PATH`, the locale and `TERM`
    /// (docs/black-box.md).
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Files written into the fresh workspace before the start, by
    /// relative path; contents expand as in `command`.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Real seconds the agent may run before its process group is killed
    /// (outcome `agent_timeout`).
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
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
        }
    }
}

/// The values the placeholders of one run expand to.
#[derive(Debug, Clone)]
pub struct Placeholders<'a> {
    /// The scenario's task.
    pub task: &'a str,
    /// The run's workspace directory.
    pub workspace: &'a str,
    /// The directory of the scenario file, for scripts kept beside it.
    pub scenario_dir: &'a str,
    /// The mock's OpenAI base URL for the run (up to `/v1`).
    pub base_url: &'a str,
    /// The mock's port.
    pub port: u16,
    /// The scenario's model.
    pub model: &'a str,
}

impl Placeholders<'_> {
    /// The Anthropic base URL: the OpenAI one without its `/v1`.
    pub fn anthropic_base_url(&self) -> &str {
        self.base_url.trim_end_matches("/v1")
    }

    /// `text` with every placeholder replaced, in one pass (an expanded
    /// value is never expanded again: a task may contain `{workspace}`).
    pub fn expand(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let tail = &rest[open..];
            let port = self.port.to_string();
            let found = [
                ("{task}", self.task),
                ("{workspace}", self.workspace),
                ("{scenario_dir}", self.scenario_dir),
                ("{base_url}", self.base_url),
                ("{anthropic_base_url}", self.anthropic_base_url()),
                ("{port}", &port),
                ("{model}", self.model),
            ]
            .into_iter()
                .find(|(key, _)| tail.starts_with(key));
            match found {
                Some((key, value)) => {
                    out.push_str(value);
                    rest = &tail[key.len()..];
                }
                None => {
                    out.push('{');
                    rest = &tail[1..];
                }
            }
        }
        out.push_str(rest);
        out
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

    fn placeholders() -> Placeholders<'static> {
        Placeholders { task: "fix {workspace}", workspace: "/tmp/w", scenario_dir: "/s", base_url: "http://127.0.0.1:9/v1", port: 9, model: "m" }
    }

    #[test]
    fn placeholders_expand_once_and_unknown_braces_stay() {
        let p = placeholders();
        assert_eq!(
            p.expand("{task} at {base_url} port {port} in {workspace} from {scenario_dir}"),
            "fix {workspace} at http://127.0.0.1:9/v1 port 9 in /tmp/w from /s"
        );
        assert_eq!(p.expand("{model} at {anthropic_base_url}"), "m at http://127.0.0.1:9");
        assert_eq!(p.expand("{ \"json\": {other}} {"), "{ \"json\": {other}} {");
    }

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
        let own: AgentSpec = serde_json::from_value(serde_json::json!({ "preset": "codex", "command": ["my-codex", "{task}"], "wire": "openai-chat" })).unwrap();
        assert_eq!((own.resolved().command[0].as_str(), own.resolved().wire), ("my-codex", Some(WireFormat::OpenaiChat)));
    }

    #[test]
    fn workspace_files_cannot_escape() {
        assert!(check_file_path(".codex/config.toml").is_ok());
        for bad in ["", "/etc/passwd", "../x", "a/../../x"] {
            assert!(check_file_path(bad).is_err(), "{bad}");
        }
    }
}
