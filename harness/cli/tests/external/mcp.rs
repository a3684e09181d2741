//! A real stdio MCP server recorded once and replayed with its program
//! absent (issue 42): `mcp-server-time` from PyPI and the official `mcp`
//! SDK's client, in the venv `RELOOP_MCP_BIN` names (`.ci/run` installs
//! both, pinned). The command agent `tests/data/mcp/mcp_agent.py` runs with
//! `MCP_CLIENT=sdk`; `reloop mcp-record` sits between it and the real
//! server, then `reloop mcp-replay` answers it from what was written; under
//! `tools: replay-or-live` it asks the real server what the recording lacks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::prerequisite::{CLAUDE, MCP_TIME, Test};
use crate::tables::{Row, read_rows};
use crate::util::{stderr, stdout, write};

/// This module's tests.
pub fn tests() -> Vec<Test> {
    vec![
        crate::test!(MCP_TIME, the_real_time_server_recorded_once_answers_the_sdk_client_on_replay_without_its_program),
        crate::test!(MCP_TIME, under_replay_or_live_a_call_the_recording_lacks_is_answered_by_the_real_time_server_and_named),
        crate::test!(CLAUDE, real_claude_code_gets_the_recorded_time_through_mcp_replay_with_the_servers_program_absent),
    ]
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
    run_in(scenario, &scenario.parent().unwrap().join("out"), path)
}

/// [`run`], the report written to `out`.
fn run_in(scenario: &Path, out: &Path, path: &str) -> (Output, Row, Vec<Value>) {
    let _ = std::fs::remove_dir_all(out);
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

/// RECORDING in `dir` with the real server's frames recorded into it:
/// the server behind `reloop mcp-record`, the model's side replayed.
fn record_live(dir: &Path, bin: &Path) -> PathBuf {
    let recording = write(dir, "time.recording.yaml", RECORDING);
    let server = bin.join("mcp-server-time");
    let record_args = ["mcp-record", "--out", recording.to_str().unwrap(), "--server", "time", "--", server.to_str().unwrap(), "--local-timezone", "UTC"];
    let recorder = scenario(dir, bin, "live", env!("CARGO_BIN_EXE_reloop"), &record_args);
    let (output, row, _) = run(&recorder, &std::env::var("PATH").unwrap_or_default());
    assert_eq!((output.status.code(), row["outcome"].as_str()), (Some(0), "final_answer"), "{}{}{row:?}", stdout(&output), stderr(&output));
    recording
}

fn the_real_time_server_recorded_once_answers_the_sdk_client_on_replay_without_its_program(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let system_path = std::env::var("PATH").unwrap_or_default();
    let recording = record_live(dir.path(), bin);
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

/// The model asks for Kolkata's time, which the recording lacks: under
/// `replay-or-live` the real server (started then, greeted with the
/// client's own handshake) answers it, the event says `live`, the other
/// call is still the recording's; with the server's program absent the
/// same request fails the run as a divergence saying why.
fn under_replay_or_live_a_call_the_recording_lacks_is_answered_by_the_real_time_server_and_named(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let recording = record_live(dir.path(), bin);
    edit(&recording, |written| {
        let parts = written["exchanges"][0]["parts"].as_array_mut().unwrap();
        parts.iter_mut().find(|part| part["name"] == "get_current_time").unwrap()["arguments"]["timezone"] = "Asia/Kolkata".into();
        written["exchanges"][1]["expect"]["tool_result_contains"] = serde_json::json!(["\"timezone\": \"Asia/Kolkata\"", "\"time_difference\""]);
    });
    let server = bin.join("mcp-server-time");
    let both = scenario(dir.path(), bin, "replay-or-live", server.to_str().unwrap(), &["--local-timezone", "UTC"]);
    let (output, row, requests) = run(&both, &std::env::var("PATH").unwrap_or_default());
    assert_eq!((output.status.code(), row["outcome"].as_str()), (Some(0), "final_answer"), "{}{}{row:?}", stdout(&output), stderr(&output));
    let call = |tool: &str| requests.iter().find(|r| r["method"] == "tools/call" && r["params"]["name"] == tool).unwrap_or_else(|| panic!("{requests:?}"));
    let kolkata = call("get_current_time");
    assert_eq!((kolkata["live"].as_bool(), kolkata["entry"].is_null(), kolkata["diverged"].as_bool()), (Some(true), true, Some(false)), "{kolkata}");
    let tokyo = call("convert_time");
    assert_eq!((tokyo["live"].as_bool(), tokyo["entry"].is_u64()), (Some(false), true), "the recorded call still replayed: {tokyo}");
    assert_eq!(requests.iter().filter(|r| r["live"] == true).count(), 1, "only the call the recording lacks is live: {requests:?}");

    let absent = scenario(dir.path(), bin, "replay-or-live", "/nonexistent/reloop-test/mcp-server-time", &[]);
    let (output, row, _) = run(&absent, &std::env::var("PATH").unwrap_or_default());
    assert_eq!((output.status.code(), row["outcome"].as_str()), (Some(1), "divergence"), "{}{}{row:?}", stdout(&output), stderr(&output));
    assert!(row["error"].contains("Asia/Kolkata") && row["error"].contains("cannot start the live server"), "{}", row["error"]);
}

/// The bundled `scenarios/agents/claude-code-mcp-replay.yaml` (its server
/// a program that exists nowhere) with the real Claude Code: every request
/// of its MCP client is answered from the recording, the call among them,
/// and the recorded time reaches the model (the recording's expectation).
/// Then the model asking for another timezone: a `tool_side` divergence
/// naming the call.
fn real_claude_code_gets_the_recorded_time_through_mcp_replay_with_the_servers_program_absent(bin: &Path) {
    let repo = crate::util::repo();
    let path = std::env::join_paths([bin.to_owned()].into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let path = path.to_string_lossy().into_owned();
    let first = tempfile::tempdir().unwrap();
    let (output, row, requests) = run_in(&repo.join("scenarios/agents/claude-code-mcp-replay.yaml"), &first.path().join("out"), &path);
    assert_eq!(
        (output.status.code(), row["outcome"].as_str(), row["passed"].as_str()),
        (Some(0), "final_answer", "true"),
        "{}{}{row:?}",
        stdout(&output),
        stderr(&output)
    );
    assert!(requests.iter().all(|r| r["entry"].is_u64() && r["diverged"] == false && r["live"] == false), "{requests:?}");
    let call = requests.iter().find(|r| r["method"] == "tools/call").unwrap_or_else(|| panic!("no tools/call: {requests:?}"));
    assert_eq!(call["params"]["name"], "get_current_time", "{call}");

    let dir = tempfile::tempdir().unwrap();
    for folder in ["scenarios/agents", "recordings/agents"] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
    }
    std::fs::copy(repo.join("scenarios/agents/claude-code-mcp-replay.yaml"), dir.path().join("scenarios/agents/claude-code-mcp-replay.yaml")).unwrap();
    let recording = std::fs::read_to_string(repo.join("recordings/agents/claude-code-mcp-replay.yaml")).unwrap();
    let (exchanges, frames) = recording.split_once("\nmcp:\n").unwrap();
    assert!(exchanges.contains("timezone: Asia/Tokyo"), "{exchanges}");
    let changed = format!("{}\nmcp:\n{frames}", exchanges.replacen("timezone: Asia/Tokyo", "timezone: Europe/Paris", 1));
    write(&dir.path().join("recordings/agents"), "claude-code-mcp-replay.yaml", &changed);
    let (output, row, _) = run_in(&dir.path().join("scenarios/agents/claude-code-mcp-replay.yaml"), &dir.path().join("out"), &path);
    assert_eq!((output.status.code(), row["outcome"].as_str()), (Some(1), "divergence"), "{}{}{row:?}", stdout(&output), stderr(&output));
    assert!(row["error"].contains("`tools/call`") && row["error"].contains("Europe/Paris"), "{}", row["error"]);
}
