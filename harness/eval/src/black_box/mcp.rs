//! The agent's stdio MCP servers (`agent.mcp`). The agent starts each
//! server itself from its own configuration, which names the server
//! through placeholders (`{mcp.NAME.command}`, `{mcp.NAME.args}`,
//! `{mcp.NAME.argv}`, each a JSON value, so they drop into the JSON and
//! TOML configs of the real agents alike). Under `tools: live` they expand
//! to the server's own command; under `tools: replay` to `reloop
//! mcp-replay`, which answers the agent's client from the recording's
//! `mcp:` ([`replay`]) and appends what it was asked to the run's log,
//! read after the agent ends: a request the recording lacks is a
//! `tool_side` divergence, or under `tools: replay-or-live` is asked of
//! the real server ([`live`]), logged as live. [`record`] writes those
//! frames from a real server (`reloop mcp-record`).

pub mod live;
pub mod record;
pub mod replay;

use std::path::Path;

use reloop_files::scenario::agent::{AgentSpec, ToolSideMode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How one MCP server of the run starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpLaunch {
    /// Its name in `agent.mcp`.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl McpLaunch {
    /// The servers of `agent` as they start in a run under its `tools`:
    /// their own command lines (`expand` applied) under `live`, else
    /// reloop's `mcp-replay` of the `recording` file, appending to `log`,
    /// with the server's own command line after `--` under
    /// `replay-or-live`.
    ///
    /// # Errors
    ///
    /// reloop cannot name its own binary.
    pub fn of(agent: &AgentSpec, expand: impl Fn(&str) -> String, recording: &Path, log: &Path) -> Result<Vec<Self>, String> {
        if agent.tools == ToolSideMode::Live || agent.mcp.is_empty() {
            let live = agent.mcp.iter().map(|server| Self {
                name: server.name.clone(),
                command: expand(&server.command),
                args: server.args.iter().map(|a| expand(a)).collect(),
            });
            return Ok(live.collect());
        }
        let binary = std::env::current_exe().map_err(|e| format!("cannot name reloop's own binary for `mcp-replay`: {e}"))?;
        let replayed = agent.mcp.iter().map(|server| {
            let mut args: Vec<String> =
                ["mcp-replay", "--recording", &recording.display().to_string(), "--server", &server.name, "--log", &log.display().to_string()]
                    .map(str::to_owned)
                    .to_vec();
            if agent.tools == ToolSideMode::ReplayOrLive {
                args.extend(["--".to_owned(), expand(&server.command)]);
                args.extend(server.args.iter().map(|a| expand(a)));
            }
            Self { name: server.name.clone(), command: binary.display().to_string(), args }
        });
        Ok(replayed.collect())
    }

    /// The value of placeholder `{KEY}` (`KEY` as `mcp.NAME.FIELD`) among
    /// `servers`, JSON-encoded: `command` a string, `args` an array,
    /// `argv` the array of both. `None`: not such a placeholder.
    pub fn placeholder(servers: &[Self], key: &str) -> Option<String> {
        let (name, field) = key.strip_prefix("mcp.")?.rsplit_once('.')?;
        let server = servers.iter().find(|server| server.name == name)?;
        let value = match field {
            "command" => Value::from(server.command.as_str()),
            "args" => Value::from(server.args.clone()),
            "argv" => Value::from(std::iter::once(server.command.clone()).chain(server.args.iter().cloned()).collect::<Vec<_>>()),
            _ => return None,
        };
        Some(value.to_string())
    }
}

/// Why the `agent.mcp` of a scenario is refused, if it is: the field and
/// the reason. A name is one word (it sits inside placeholders and config
/// keys), given once; every `{mcp.NAME.FIELD}` in `texts` names a server
/// and a field; under `tools: replay` and `replay-or-live` the recording
/// holds each server.
pub fn check(agent: &AgentSpec, texts: &[&str], recorded: &[&str]) -> Result<(), (String, String)> {
    for (i, server) in agent.mcp.iter().enumerate() {
        if server.name.is_empty() || !server.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err((format!("agent.mcp[{i}].name"), format!("`{}` must be letters, digits, `_` or `-`", server.name)));
        }
        if agent.mcp[..i].iter().any(|earlier| earlier.name == server.name) {
            return Err((format!("agent.mcp[{i}].name"), format!("`{}` is given twice", server.name)));
        }
        if agent.tools != ToolSideMode::Live && !recorded.contains(&server.name.as_str()) {
            return Err((
                format!("agent.mcp[{i}]"),
                format!("the recording's mcp: has no server `{}` to replay (record it with `reloop mcp-record`, docs/black-box.md)", server.name),
            ));
        }
    }
    let launches: Vec<McpLaunch> = agent.mcp.iter().map(|s| McpLaunch { name: s.name.clone(), command: String::new(), args: Vec::new() }).collect();
    for text in texts {
        for (start, _) in text.match_indices("{mcp.") {
            let key = text[start + 1..].split('}').next().unwrap_or_default();
            if McpLaunch::placeholder(&launches, key).is_none() {
                return Err(("agent".to_owned(), format!("`{{{key}}}` names no server of agent.mcp and field `command`, `args` or `argv`")));
            }
        }
    }
    Ok(())
}

/// One line of the run's MCP log: a request the agent's client sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    /// The server's name.
    pub server: String,
    /// The request's method.
    pub method: String,
    /// Its params.
    #[serde(default)]
    pub params: Option<Value>,
    /// The recorded message that answered it (its index in the server's `messages`).
    pub entry: Option<usize>,
    /// The recording lacked it and the real server did not answer it: it
    /// was answered with an error.
    pub diverged: bool,
    /// The recording lacked it and the real server answered it
    /// (`replay-or-live`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// Why the real server could not answer it (`replay-or-live`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_error: Option<String>,
}

/// The log's lines; a line that does not parse (a replayer killed
/// mid-write) is left out.
pub fn read_log(path: &Path) -> Vec<LogLine> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

/// The `tool_side` divergences of a run whose MCP clients sent `lines`.
pub fn divergences(lines: &[LogLine]) -> Vec<String> {
    lines.iter().filter(|line| line.diverged).map(divergence_message).collect()
}

/// What the report says of a request the recording lacks.
pub fn divergence_message(line: &LogLine) -> String {
    let params = line.params.as_ref().map_or_else(String::new, |params| format!(" {params}"));
    let live = line.live_error.as_ref().map_or_else(String::new, |why| format!(" (the live server could not answer: {why})"));
    format!(
        "tool_side divergence: the agent's MCP client sent `{}`{params} to server `{}`, which the recording's mcp: lacks; it was answered with an error{live}",
        line.method, line.server
    )
}

/// The report's event kind for one request.
pub const EVENT_KIND: &str = "tool_side_mcp";

/// The payload of the report's event for one request ([`EVENT_KIND`]).
/// The event itself is built by the run (`black_box`), which owns the
/// report's rows: this module is also the scenario loader's check.
pub fn event_payload(line: &LogLine) -> Value {
    serde_json::json!({
        "server": line.server, "method": line.method, "params": line.params, "entry": line.entry, "diverged": line.diverged, "live": line.live,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(value: serde_json::Value) -> AgentSpec {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn placeholders_are_json_values_of_the_servers_launch() {
        let servers = [McpLaunch { name: "time".into(), command: "/bin/reloop".into(), args: vec!["mcp-replay".into(), "a \"b\"".into()] }];
        assert_eq!(McpLaunch::placeholder(&servers, "mcp.time.command").as_deref(), Some(r#""/bin/reloop""#));
        assert_eq!(McpLaunch::placeholder(&servers, "mcp.time.args").as_deref(), Some(r#"["mcp-replay","a \"b\""]"#));
        assert_eq!(McpLaunch::placeholder(&servers, "mcp.time.argv").as_deref(), Some(r#"["/bin/reloop","mcp-replay","a \"b\""]"#));
        assert_eq!(McpLaunch::placeholder(&servers, "mcp.other.command"), None);
        assert_eq!(McpLaunch::placeholder(&servers, "mcp.time.env"), None);
    }

    #[test]
    fn live_keeps_the_servers_command_and_replay_starts_reloop() {
        let spec = agent(serde_json::json!({ "command": ["a"], "mcp": [{ "name": "time", "command": "uvx", "args": ["mcp-server-time", "{x}"] }] }));
        let live = McpLaunch::of(&spec, |text| text.replace("{x}", "X"), Path::new("r.yaml"), Path::new("log")).unwrap();
        assert_eq!(live, [McpLaunch { name: "time".into(), command: "uvx".into(), args: vec!["mcp-server-time".into(), "X".into()] }]);
        let spec = AgentSpec { tools: ToolSideMode::Replay, ..spec };
        let [replayed]: [McpLaunch; 1] = McpLaunch::of(&spec, str::to_owned, Path::new("/r.yaml"), Path::new("/log")).unwrap().try_into().unwrap();
        assert_eq!(replayed.args, ["mcp-replay", "--recording", "/r.yaml", "--server", "time", "--log", "/log"]);
        assert_eq!(Path::new(&replayed.command), std::env::current_exe().unwrap());
        let spec = AgentSpec { tools: ToolSideMode::ReplayOrLive, ..spec };
        let [both]: [McpLaunch; 1] =
            McpLaunch::of(&spec, |text| text.replace("{x}", "X"), Path::new("/r.yaml"), Path::new("/log")).unwrap().try_into().unwrap();
        assert_eq!(both.args[7..], ["--", "uvx", "mcp-server-time", "X"], "the server's own command line after the replay's");
    }

    #[test]
    fn bad_servers_and_placeholders_are_refused_naming_the_field() {
        let server = serde_json::json!({ "name": "time", "command": "uvx" });
        let spec = agent(serde_json::json!({ "command": ["a"], "mcp": [server, server] }));
        assert_eq!(check(&spec, &[], &[]).unwrap_err().0, "agent.mcp[1].name");
        let spec = agent(serde_json::json!({ "command": ["a"], "mcp": [{ "name": "a.b", "command": "x" }] }));
        assert_eq!(check(&spec, &[], &[]).unwrap_err().0, "agent.mcp[0].name");
        let spec = agent(serde_json::json!({ "command": ["a"], "tools": "replay", "mcp": [server] }));
        assert!(check(&spec, &[], &[]).unwrap_err().1.contains("no server `time`"));
        check(&spec, &["{mcp.time.argv} {task}"], &["time"]).unwrap();
        let (_, why) = check(&spec, &["{mcp.tme.command}"], &["time"]).unwrap_err();
        assert!(why.contains("`{mcp.tme.command}` names no server"), "{why}");
        let spec = agent(serde_json::json!({ "command": ["a"], "tools": "replay-or-live", "mcp": [server] }));
        check(&spec, &[], &["time"]).unwrap();
        assert!(check(&spec, &[], &[]).unwrap_err().1.contains("no server `time`"), "replay-or-live replays the recorded server first");
    }

    #[test]
    fn a_divergence_names_the_server_the_method_and_the_params() {
        let line = LogLine {
            server: "time".into(),
            method: "tools/call".into(),
            params: Some(serde_json::json!({ "name": "get_current_time", "arguments": { "timezone": "Asia/Tokyo" } })),
            diverged: true,
            ..LogLine::default()
        };
        let [message]: [String; 1] = divergences(&[line.clone(), LogLine { diverged: false, entry: Some(0), ..line }]).try_into().unwrap();
        // The params as sent; their keys' order is serde_json's (feature-dependent), so each is looked for alone.
        assert!(message.starts_with("tool_side divergence: the agent's MCP client sent `tools/call` {"), "{message}");
        assert!(message.contains("\"arguments\":{\"timezone\":\"Asia/Tokyo\"}") && message.contains("\"name\":\"get_current_time\""), "{message}");
        assert!(message.contains("to server `time`"), "{message}");
    }
}
