//! MCP servers of a black-box agent, replayed and recorded through the real
//! binary (issue 42). `tests/data/mcp/time.recording.yaml` holds what the
//! real stdio server `mcp-server-time` (PyPI) answered, recorded once with
//! `reloop mcp-record`; the command agent `tests/data/mcp/mcp_agent.py`
//! (its MCP client on the standard library) starts the server its
//! `mcp.json` names, which under `tools: replay` is `reloop mcp-replay`,
//! on a PATH where the server's program is not.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::tables::{Row, read_rows};
use crate::util::{reloop, stderr, stdout, write};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mcp")
}

/// reloop's PATH without any folder holding `mcp-server-time`: the
/// replay must not need it.
fn path_without_the_server() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path).filter(|dir| !dir.join("mcp-server-time").exists()).collect();
    std::env::join_paths(kept).unwrap().to_string_lossy().into_owned()
}

/// Runs `scenario` with the server's program off PATH: the output, the
/// run's row and its `tool_side_mcp` events' payloads.
fn run(scenario: &Path, out: &Path) -> (std::process::Output, Row, Vec<Value>) {
    let output = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("PATH", path_without_the_server())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let [run]: [Row; 1] = read_rows(&out.join("runs.parquet")).try_into().unwrap();
    let events = read_rows(&out.join("events.parquet"));
    let requests = events.iter().filter(|e| e["kind"] == "tool_side_mcp").map(|e| serde_json::from_str(&e["payload"]).unwrap()).collect();
    (output, run, requests)
}

/// The fixture's recording as JSON.
fn recording() -> Value {
    serde_saphyr::from_str(&std::fs::read_to_string(data().join("time.recording.yaml")).unwrap()).unwrap()
}

/// The fixture's scenario and agent copied into `dir` with `recording`.
fn copy_with(dir: &Path, recording: &Value) -> PathBuf {
    std::fs::copy(data().join("mcp_agent.py"), dir.join("mcp_agent.py")).unwrap();
    write(dir, "time.recording.yaml", &recording.to_string());
    write(dir, "time.yaml", &std::fs::read_to_string(data().join("time.yaml")).unwrap())
}

/// The recorded answer's text of the server's `tools/call` of `tool`.
fn recorded_text(recording: &Value, tool: &str) -> String {
    let messages = recording["mcp"][0]["messages"].as_array().unwrap();
    let call = messages.iter().find(|m| m["method"] == "tools/call" && m["params"]["name"] == tool).unwrap();
    call["result"]["content"][0]["text"].as_str().unwrap().to_owned()
}

#[test]
fn the_recorded_mcp_server_answers_the_agent_with_its_program_absent() {
    let out = tempfile::tempdir().unwrap();
    let (output, run, requests) = run(&data().join("time.yaml"), out.path());
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["outcome"].as_str(), run["passed"].as_str()), ("final_answer", "true"), "{run:?}");
    let methods: Vec<(&str, bool)> = requests.iter().map(|r| (r["method"].as_str().unwrap(), r["diverged"].as_bool().unwrap())).collect();
    assert_eq!(methods, [("initialize", false), ("tools/list", false), ("tools/call", false), ("tools/call", false)]);
    assert!(requests.iter().all(|r| r["server"] == "time" && r["entry"].is_u64()), "{requests:?}");
    // The recorded answers reached the model: the second exchange expects the recorded datetime.
    let recording = recording();
    let datetime: Value = serde_json::from_str(&recorded_text(&recording, "get_current_time")).unwrap();
    let expected = recording["exchanges"][1]["expect"]["tool_result_contains"].to_string();
    assert!(expected.contains(datetime["datetime"].as_str().unwrap()), "{expected}");
}

#[test]
fn a_changed_mcp_call_fails_the_run_as_a_tool_side_divergence_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut changed = recording();
    let parts = changed["exchanges"][0]["parts"].as_array_mut().unwrap();
    let call = parts.iter_mut().find(|p| p["name"] == "get_current_time").unwrap();
    call["arguments"]["timezone"] = json!("Asia/Kolkata");
    let scenario = copy_with(dir.path(), &changed);
    let (output, run, requests) = run(&scenario, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["outcome"].as_str(), run["passed"].as_str()), ("divergence", "false"), "{run:?}");
    let error = &run["error"];
    assert!(error.starts_with("tool_side divergence: the agent's MCP client sent `tools/call`"), "{error}");
    assert!(error.contains("Asia/Kolkata") && error.contains("to server `time`"), "{error}");
    let diverged: Vec<&Value> = requests.iter().filter(|r| r["diverged"] == true).collect();
    assert_eq!(diverged.len(), 1, "{requests:?}");
    assert_eq!(diverged[0]["params"]["arguments"]["timezone"], "Asia/Kolkata");
}

#[test]
fn a_placeholder_naming_no_server_and_a_replay_without_its_frames_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = copy_with(dir.path(), &recording());
    let text = std::fs::read_to_string(&scenario).unwrap();
    std::fs::write(&scenario, text.replace("{mcp.time.args}", "{mcp.tmie.args}")).unwrap();
    let output = reloop(dir.path(), &["run", scenario.to_str().unwrap(), "--out", "out"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("`{mcp.tmie.args}` names no server of agent.mcp"), "{}", stderr(&output));
    let mut without = recording();
    without.as_object_mut().unwrap().remove("mcp");
    let scenario = copy_with(dir.path(), &without);
    let output = reloop(dir.path(), &["validate", scenario.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("agent.mcp[0]") && stderr(&output).contains("no server `time`"), "{}", stderr(&output));
}

/// `reloop mcp-replay` on its own, fed `lines`: the answers and the exit code.
fn replay_alone(lines: &[Value]) -> (Vec<Value>, Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["mcp-replay", "--recording", data().join("time.recording.yaml").to_str().unwrap(), "--server", "time"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let answers = stdout(&output).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    (answers, output.status.code(), stderr(&output))
}

#[test]
fn mcp_replay_answers_any_client_under_its_own_ids_and_exits_1_on_a_request_it_lacks() {
    let recording = recording();
    let call = |id: Value, timezone: &str| json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "get_current_time", "arguments": { "timezone": timezone } } });
    let init = json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "another", "version": "0" } } });
    let (answers, code, _) = replay_alone(&[init, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), call(json!(41), "Europe/Warsaw")]);
    assert_eq!(code, Some(0));
    assert_eq!(answers.len(), 2, "the notification gets no answer: {answers:?}");
    assert_eq!((&answers[0]["id"], answers[0]["result"]["serverInfo"].is_object()), (&json!("init"), true));
    assert_eq!(answers[1]["id"], 41);
    assert_eq!(answers[1]["result"]["content"][0]["text"], recorded_text(&recording, "get_current_time"));
    let (answers, code, stderr) = replay_alone(&[call(json!(1), "Europe/Paris")]);
    assert_eq!((code, answers[0]["id"].clone(), answers[0]["error"]["code"].clone()), (Some(1), json!(1), json!(-32000)));
    assert!(stderr.contains("Europe/Paris"), "{stderr}");
}

#[test]
fn mcp_record_between_a_client_and_a_server_writes_what_passed_and_passes_it_unchanged() {
    // The server recorded here is the replayer of the fixture: a real stdio
    // MCP server reloop builds, so this needs nothing outside the workspace.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("copy.recording.yaml");
    write(dir.path(), "copy.recording.yaml", "format: reloop.recording/v2\nexchanges:\n  - parts: [{ type: text, text: hi }]\n");
    let recording = recording();
    let messages = recording["mcp"][0]["messages"].as_array().unwrap();
    let lines: Vec<Value> = messages
        .iter()
        .enumerate()
        .map(|(id, m)| match m["method"].as_str().unwrap().starts_with("notifications/") {
            true => json!({ "jsonrpc": "2.0", "method": m["method"] }),
            false => json!({ "jsonrpc": "2.0", "id": id, "method": m["method"], "params": m["params"] }),
        })
        .collect();
    let fixture = data().join("time.recording.yaml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["mcp-record", "--out", target.to_str().unwrap(), "--server", "copy", "--"])
        .args([env!("CARGO_BIN_EXE_reloop"), "mcp-replay", "--recording", fixture.to_str().unwrap(), "--server", "time"])
        .env("MY_SERVICE_TOKEN", "tok-secret-123456")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in &lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let answers: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(answers.len(), messages.iter().filter(|m| m.get("result").is_some() || m.get("error").is_some()).count());
    let written: Value = serde_saphyr::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    let copy = &written["mcp"][0];
    assert_eq!(copy["name"], "copy");
    let strip = |list: &Value| list.as_array().unwrap().iter().map(|m| (m["method"].clone(), m["params"].clone(), m["result"].clone())).collect::<Vec<_>>();
    assert_eq!(strip(&copy["messages"]), strip(&recording["mcp"][0]["messages"]), "the frames that passed are the frames written");
    assert!(written["redacted"].as_array().unwrap().iter().any(|r| r.as_str().unwrap().starts_with("body:#")), "{:?}", written["redacted"]);
    // A recording that does not exist is refused before the server starts.
    let missing = reloop(dir.path(), &["mcp-record", "--out", "nowhere.recording.yaml", "--server", "x", "--", "true"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("record or write the model's side first"), "{}", stderr(&missing));
}

/// A copy of the bundled `claude-code-mcp-replay` scenario in `dir` (as
/// `scenarios/agents/` and `recordings/agents/`), its recorded call named
/// `tool`.
fn claude_code_scenario_calling(dir: &Path, tool: &str) -> PathBuf {
    let repo = crate::util::repo();
    let recording = std::fs::read_to_string(repo.join("recordings/agents/claude-code-mcp-replay.yaml")).unwrap();
    assert!(recording.contains("name: mcp__time__get_current_time"), "{recording}");
    write(&dir.join("recordings/agents"), "claude-code-mcp-replay.yaml", &recording.replace("name: mcp__time__get_current_time", &format!("name: {tool}")));
    let scenario = std::fs::read_to_string(repo.join("scenarios/agents/claude-code-mcp-replay.yaml")).unwrap();
    write(&dir.join("scenarios/agents"), "claude-code-mcp-replay.yaml", &scenario)
}

#[test]
fn a_claude_code_recording_calls_mcp_tools_by_claude_codes_names_and_only_those_its_server_lists() {
    let dir = tempfile::tempdir().unwrap();
    let output = reloop(dir.path(), &["validate", claude_code_scenario_calling(dir.path(), "mcp__time__get_current_time").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let output = reloop(dir.path(), &["validate", claude_code_scenario_calling(dir.path(), "mcp__time__get_time").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert!(error.contains("claude-code-mcp-replay.yaml") && error.contains("MCP server `time`'s recorded tools/list has no tool `get_time`"), "{error}");
    assert!(error.contains("it lists: get_current_time, convert_time"), "{error}");
    let output = reloop(dir.path(), &["validate", claude_code_scenario_calling(dir.path(), "mcp__clock__now").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("claude-code declares no tool `mcp__clock__now`"), "not a server of agent.mcp: {}", stderr(&output));
}
