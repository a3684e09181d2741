//! `agent.tools: replay | replay-or-live` through the real binary (issue
//! 42): a command agent whose `shell` tool runs `bash -c`, `sh -c` or
//! `$SHELL -c` from PATH (`tests/data/shell-agent/shell_agent.py`). Its
//! command would make a canary file outside the workspace; under `replay`
//! the recorded output reaches the agent's next request and the canary is
//! never made.

use std::path::Path;

use crate::shell_agent::{run, scenario};
use crate::util::{stderr, stdout};

#[test]
fn a_replayed_command_reaches_the_next_request_as_recorded_and_never_runs() {
    for shell in ["bash", "sh", "$SHELL"] {
        let dir = tempfile::tempdir().unwrap();
        let canary = dir.path().join("canary");
        let command = format!("touch {} && echo real output", canary.display());
        let file = scenario(dir.path(), "replay", "path", shell, &command, Some(&command), "recorded: 3 targets built\n(exit 0)");
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
    let file = scenario(dir.path(), "replay", "path", "bash", &asked, Some(&recorded), "recorded: 3 targets built");
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
    let file = scenario(dir.path(), "replay-or-live", "path", "bash", &asked, None, "live output\n(exit 0)");
    let (output, run, shells) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(run["outcome"], "final_answer", "{run:?}");
    assert_eq!(
        (&shells[0]["command"], &shells[0]["ran"], &shells[0]["entry"]),
        (&serde_json::json!(asked), &serde_json::json!(true), &serde_json::Value::Null)
    );
    assert!(canary.exists(), "replay-or-live runs what the recording lacks");
}

/// `shell_interception: mount` without bubblewrap must not fall back to
/// the PATH shims (an absolute `/bin/sh` would run the command for real):
/// the run fails naming bubblewrap, and the agent never starts.
#[test]
fn mount_without_bubblewrap_fails_naming_it_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let command = format!("touch {} && echo real output", canary.display());
    let file = scenario(dir.path(), "replay", "mount", "shell=True", &command, Some(&command), "recorded: 3 targets built");
    // reloop's PATH holds python3 (the agent) and nothing else: no bwrap.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let real_python = std::process::Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().unwrap();
    std::os::unix::fs::symlink(String::from_utf8(real_python.stdout).unwrap().trim(), bin.join("python3")).unwrap();
    let out = dir.path().join("out");
    let output = crate::util::reloop_env(Path::new("."), &["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()], &[("PATH", bin.to_str().unwrap())]);
    let [run]: [crate::tables::Row; 1] = crate::tables::read_rows(&out.join("runs.parquet")).try_into().unwrap();
    assert_eq!(run["outcome"], "harness_error", "{run:?}\n{}{}", stdout(&output), stderr(&output));
    assert!(run["error"].contains("needs bubblewrap (`bwrap`), which is not on PATH"), "{}", run["error"]);
    assert!(!canary.exists(), "the agent ran its command for real");
}
