//! A real stdio MCP server recorded once and replayed with its program
//! absent (issue 42): `mcp-server-time` from PyPI and the official `mcp`
//! SDK's client, in the venv `RELOOP_MCP_BIN` names (`.ci/run` installs
//! both, pinned). The command agent `tests/data/mcp/mcp_agent.py` runs with
//! `MCP_CLIENT=sdk`; `reloop mcp-record` sits between it and the real
//! server, then `reloop mcp-replay` answers it from what was written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::prerequisite::{MCP_TIME, Test};
use crate::tables::{Row, read_rows};
use crate::util::{stderr, stdout, write};

/// This module's tests.
pub fn tests() -> Vec<Test> {
    vec![crate::test!(MCP_TIME, the_real_time_server_recorded_once_answers_the_sdk_client_on_replay_without_its_program)]
}

const RECORDING: &str = "format: reloop.recording/v1
exchanges:
  - text: Asking the time server.
    tool_calls:
      - { name: get_current_time, arguments: { timezone: Europe/Warsaw } }
      - { name: convert_time, arguments: { source_timezone: America/New_York, time: \"16:30\", target_timezone: Asia/Tokyo } }
  - expect: { tool_result_contains: ['\"timezone\": \"Europe/Warsaw\"', '\"time_difference\"'] }
    text: Done.
";

/// The scenario of the SDK agent with the server `time` started as
/// `command args` under `tools`.
fn scenario(dir: &Path, bin: &Path, tools: &str, command: &str, args: &[&str]) -> PathBuf {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mcp/mcp_agent.py");
    let yaml = serde_json::json!({
        "name": "mcp-time",
        "model": "gpt-4.1",
        "task": "What time is it in Warsaw?",
        "recording": "time.recording.yaml",
        "agent": {
            "command": [bin.join("python"), agent, "{task}"],
            "wire": "openai-chat",
            "tools": tools,
            "env": { "MCP_CLIENT": "sdk" },
            "mcp": [{ "name": "time", "command": command, "args": args }],
            "files": { "mcp.json": "{\"mcpServers\": {\"time\": {\"command\": {mcp.time.command}, \"args\": {mcp.time.args}}}}" },
            "timeout_s": 120
        },
        "expect": { "outcome": "final_answer" }
    });
    write(dir, "time.yaml", &yaml.to_string())
}

/// `reloop run` of `scenario` on `path`: the output, the run, its
/// `tool_side_mcp` events.
fn run(scenario: &Path, path: &str) -> (Output, Row, Vec<Value>) {
    let out = scenario.parent().unwrap().join("out");
    let _ = std::fs::remove_dir_all(&out);
    let output = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let [run]: [Row; 1] = read_rows(&out.join("runs.parquet")).try_into().unwrap();
    let events = read_rows(&out.join("events.parquet"));
    let requests = events.iter().filter(|e| e["kind"] == "tool_side_mcp").map(|e| serde_json::from_str(&e["payload"]).unwrap()).collect();
    (output, run, requests)
}

/// Rewrites the recording at `path` (as JSON, which its loader reads) after `change`.
fn edit(path: &Path, change: impl FnOnce(&mut Value)) {
    let mut recording: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    change(&mut recording);
    std::fs::write(path, recording.to_string()).unwrap();
}

fn the_real_time_server_recorded_once_answers_the_sdk_client_on_replay_without_its_program(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let recording = write(dir.path(), "time.recording.yaml", RECORDING);
    let system_path = std::env::var("PATH").unwrap_or_default();
    // Recorded: the real server behind `reloop mcp-record`, the model's side replayed.
    let server = bin.join("mcp-server-time");
    let record_args = ["mcp-record", "--out", recording.to_str().unwrap(), "--server", "time", "--", server.to_str().unwrap(), "--local-timezone", "UTC"];
    let recorder = scenario(dir.path(), bin, "live", env!("CARGO_BIN_EXE_reloop"), &record_args);
    let (output, row, _) = run(&recorder, &system_path);
    assert_eq!((output.status.code(), row["outcome"].as_str()), (Some(0), "final_answer"), "{}{}{row:?}", stdout(&output), stderr(&output));
    let written: Value = serde_saphyr::from_str(&std::fs::read_to_string(&recording).unwrap()).unwrap();
    let messages = written["mcp"][0]["messages"].as_array().unwrap();
    let calls: Vec<&Value> = messages.iter().filter(|m| m["method"] == "tools/call").collect();
    assert_eq!(calls.len(), 2, "{messages:?}");
    let warsaw = calls.iter().find(|m| m["params"]["name"] == "get_current_time").unwrap();
    let text = warsaw["result"]["content"][0]["text"].as_str().unwrap();
    let answer: Value = serde_json::from_str(text).unwrap();
    assert_eq!(answer["timezone"], "Europe/Warsaw", "the real server's answer: {text}");

    // Replayed: the server's program is nowhere on the agent's PATH, and
    // the model's second exchange now expects the recorded datetime.
    edit(&recording, |written| written["exchanges"][1]["expect"]["tool_result_contains"][1] = answer["datetime"].clone());
    let path: Vec<PathBuf> = std::env::split_paths(&system_path).filter(|d| !d.join("mcp-server-time").exists()).collect();
    let path = std::env::join_paths(path).unwrap().to_string_lossy().into_owned();
    let replayer = scenario(dir.path(), bin, "replay", "mcp-server-time", &["--local-timezone", "UTC"]);
    let (output, row, requests) = run(&replayer, &path);
    assert_eq!((output.status.code(), row["outcome"].as_str()), (Some(0), "final_answer"), "{}{}{row:?}", stdout(&output), stderr(&output));
    assert!(requests.iter().all(|r| r["diverged"] == false), "{requests:?}");
    assert_eq!(requests.iter().filter(|r| r["method"] == "tools/call").count(), 2, "{requests:?}");

    // A changed call is a divergence.
    edit(&recording, |written| {
        let parts = written["exchanges"][0]["parts"].as_array_mut().unwrap();
        parts.iter_mut().find(|part| part["name"] == "get_current_time").unwrap()["arguments"]["timezone"] = "Asia/Kolkata".into();
    });
    let (output, row, _) = run(&replayer, &path);
    assert_eq!((output.status.code(), row["outcome"].as_str()), (Some(1), "divergence"), "{}{}{row:?}", stdout(&output), stderr(&output));
    assert!(row["error"].contains("`tools/call`") && row["error"].contains("Asia/Kolkata"), "{}", row["error"]);
}
