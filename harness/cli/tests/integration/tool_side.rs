//! `agent.tools: replay | replay-or-live` through the real binary (issue
//! 42): a command agent whose `shell` tool runs `bash -c`, `sh -c` or
//! `$SHELL -c` from PATH (`tests/data/shell-agent/shell_agent.py`). Its
//! command would make a canary file outside the workspace; under `replay`
//! the recorded output reaches the agent's next request and the canary is
//! never made.

use std::path::{Path, PathBuf};

use crate::tables::{Row, read_rows};
use crate::util::{reloop, stderr, stdout, write};

/// A scenario of the shell agent under `tools`, whose recording asks for
/// `asked` and whose `tool_side:` answers `recorded` (none when `None`),
/// the next exchange expecting `expected` in the tool result.
fn scenario(dir: &Path, tools: &str, shell: &str, asked: &str, recorded: Option<&str>, expected: &str) -> PathBuf {
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
            "name: build\nmodel: gpt-4.1\ntask: Build it.\nrecording: build.recording.yaml\nagent:\n  command: [python3, {}, \"{{task}}\"]\n  wire: openai-chat\n  tools: {tools}\n  env: {{ SHELL_NAME: \"{shell}\" }}\n  timeout_s: 60\nexpect:\n  outcome: final_answer\n",
            agent.display()
        ),
    )
}

/// The one run of `scenario` and its `tool_side_command` events' payloads.
fn run(scenario: &Path, out: &Path) -> (std::process::Output, Row, Vec<serde_json::Value>) {
    let output = reloop(Path::new("."), &["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let [run]: [Row; 1] = read_rows(&out.join("runs.parquet")).try_into().unwrap();
    let events = read_rows(&out.join("events.parquet"));
    let shells = events.iter().filter(|e| e["kind"] == "tool_side_command").map(|e| serde_json::from_str(&e["payload"]).unwrap()).collect();
    (output, run, shells)
}

#[test]
fn a_replayed_command_reaches_the_next_request_as_recorded_and_never_runs() {
    for shell in ["bash", "sh", "$SHELL"] {
        let dir = tempfile::tempdir().unwrap();
        let canary = dir.path().join("canary");
        let command = format!("touch {} && echo real output", canary.display());
        let file = scenario(dir.path(), "replay", shell, &command, Some(&command), "recorded: 3 targets built\n(exit 0)");
        let (output, run, shells) = run(&file, &dir.path().join("out"));
        assert_eq!(output.status.code(), Some(0), "{shell}: {}{}", stdout(&output), stderr(&output));
        assert_eq!((run["outcome"].as_str(), run["passed"].as_str()), ("final_answer", "true"), "{shell}: {run:?}");
        assert_eq!(shells.len(), 1, "{shell}: {shells:?}");
        assert_eq!(
            (&shells[0]["command"], &shells[0]["entry"], &shells[0]["ran"]),
            (&serde_json::json!(command), &serde_json::json!(0), &serde_json::json!(false))
        );
        assert!(!canary.exists(), "{shell}: the recorded command ran for real");
    }
}

#[test]
fn a_changed_command_fails_the_run_as_a_tool_side_divergence_and_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let recorded = format!("touch {} && make build", canary.display());
    let asked = format!("touch {} && make build -j8", canary.display());
    let file = scenario(dir.path(), "replay", "bash", &asked, Some(&recorded), "recorded: 3 targets built");
    let (output, run, shells) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["outcome"].as_str(), run["passed"].as_str()), ("divergence", "false"), "{run:?}");
    let error = &run["error"];
    assert!(error.starts_with(&format!("tool_side divergence: the agent's shell ran `{asked}` (in `.`)")), "{error}");
    assert!(error.contains(&format!("the recording's unused commands: `{recorded}`")), "{error}");
    assert_eq!(shells[0]["diverged"], true);
    assert!(!canary.exists(), "a command the recording lacks ran under replay");
}

#[test]
fn replay_or_live_runs_a_command_the_recording_lacks_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let asked = format!("touch {} && echo live output", canary.display());
    let file = scenario(dir.path(), "replay-or-live", "bash", &asked, None, "live output\n(exit 0)");
    let (output, run, shells) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(run["outcome"], "final_answer", "{run:?}");
    assert_eq!(
        (&shells[0]["command"], &shells[0]["ran"], &shells[0]["entry"]),
        (&serde_json::json!(asked), &serde_json::json!(true), &serde_json::Value::Null)
    );
    assert!(canary.exists(), "replay-or-live runs what the recording lacks");
}
