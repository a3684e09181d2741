//! The shell agent of `tests/data/shell-agent/shell_agent.py` as a
//! black box under `agent.tools` (issue 42): its scenario and one run of
//! it, shared by the tests of `tool_side.rs` and those of
//! `tests/external/tool_side_mount.rs` that need bubblewrap.

use std::path::{Path, PathBuf};

use crate::tables::{Row, read_rows};
use crate::util::{reloop, write};

/// A scenario of the shell agent under `tools` and `shell_interception:
/// interception`, starting its shell as `shell` (`SHELL_NAME`), whose
/// recording asks for `asked` and whose `tool_side:` answers `recorded`
/// (none when `None`), the next exchange expecting `expected` in the tool
/// result.
pub fn scenario(dir: &Path, tools: &str, interception: &str, shell: &str, asked: &str, recorded: Option<&str>, expected: &str) -> PathBuf {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shell-agent/shell_agent.py");
    let tool_side = recorded.map_or_else(String::new, |command| {
        format!("tool_side:\n  - command: {}\n    stdout: \"recorded: 3 targets built\\n\"\n    after_exchange: 0\n", serde_json::json!(command))
    });
    write(
        dir,
        "build.recording.yaml",
        &format!(
            "format: reloop.recording/v1\nexchanges:\n  - text: Building first.\n    tool_calls:\n      - {{ name: shell, arguments: {{ command: {} }} }}\n  - expect: {{ tool_result_contains: [{}] }}\n    text: The build passes.\n{tool_side}",
            serde_json::json!(asked),
            serde_json::json!(expected)
        ),
    );
    write(
        dir,
        "build.yaml",
        &format!(
            "name: build\nmodel: gpt-4.1\ntask: Build it.\nrecording: build.recording.yaml\nagent:\n  command: [python3, {}, \"{{task}}\"]\n  wire: openai-chat\n  tools: {tools}\n  shell_interception: {interception}\n  env: {{ SHELL_NAME: \"{shell}\" }}\n  timeout_s: 60\nexpect:\n  outcome: final_answer\n",
            agent.display()
        ),
    )
}

/// The one run of `scenario` and its `tool_side_command` events' payloads.
pub fn run(scenario: &Path, out: &Path) -> (std::process::Output, Row, Vec<serde_json::Value>) {
    let output = reloop(Path::new("."), &["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let [run]: [Row; 1] = read_rows(&out.join("runs.parquet")).try_into().unwrap();
    let events = read_rows(&out.join("events.parquet"));
    let shells = events.iter().filter(|e| e["kind"] == "tool_side_command").map(|e| serde_json::from_str(&e["payload"]).unwrap()).collect();
    (output, run, shells)
}
