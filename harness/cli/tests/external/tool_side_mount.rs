//! `agent.shell_interception: mount` through the real binary (issue 42):
//! the shell agent (`tests/data/shell-agent/shell_agent.py`) starting its
//! shell by absolute path, as `subprocess.run(command, shell=True)` does
//! (`/bin/sh`), or as `/bin/bash`, or from PATH, under bubblewrap. Its
//! command would make a canary outside the workspace: replayed, the
//! recorded output reaches the next request and the canary is never made;
//! a changed command is a `tool_side` divergence that does not run either.

use std::path::Path;

use crate::prerequisite::{Needs, Test};
use crate::shell_agent::{run, scenario};
use crate::util::{stderr, stdout};

/// This module's tests.
pub fn tests() -> Vec<Test> {
    vec![
        crate::test!(Needs::Bwrap, a_shell_started_by_absolute_path_is_replayed_under_mount_and_never_runs),
        crate::test!(Needs::Bwrap, a_changed_command_of_an_absolute_shell_is_a_tool_side_divergence_and_does_not_run),
        crate::test!(Needs::Bwrap, replay_or_live_under_mount_runs_the_real_shell_from_the_scratch_folder),
    ]
}

fn a_shell_started_by_absolute_path_is_replayed_under_mount_and_never_runs(_: &Path) {
    for (shell, invoked) in [("shell=True", "/bin/sh"), ("/bin/bash", "/bin/bash"), ("/usr/bin/sh", "/usr/bin/sh"), ("bash", "bash")] {
        let dir = tempfile::tempdir().unwrap();
        let canary = dir.path().join("canary");
        let command = format!("touch {} && echo real output", canary.display());
        let file = scenario(dir.path(), "replay", "mount", shell, &command, Some(&command), "recorded: 3 targets built\n(exit 0)");
        let (output, run, shells) = run(&file, &dir.path().join("out"));
        assert_eq!(output.status.code(), Some(0), "{shell}: {}{}", stdout(&output), stderr(&output));
        assert_eq!((run["outcome"].as_str(), run["passed"].as_str()), ("final_answer", "true"), "{shell}: {run:?}");
        assert_eq!(shells.len(), 1, "{shell}: {shells:?}");
        let first = &shells[0];
        assert_eq!((&first["command"], &first["entry"], &first["ran"]), (&serde_json::json!(command), &serde_json::json!(0), &serde_json::json!(false)));
        // A PATH lookup finds the PATH shim (a path in the scratch folder) first.
        let started = first["invoked"].as_str().unwrap();
        assert!(started == invoked || (invoked == "bash" && started.ends_with("/shims/bash")), "{shell}: started as {started}");
        assert!(!canary.exists(), "{shell}: the recorded command ran for real");
    }
}

fn a_changed_command_of_an_absolute_shell_is_a_tool_side_divergence_and_does_not_run(_: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let recorded = format!("touch {} && make build", canary.display());
    let asked = format!("touch {} && make build -j8", canary.display());
    let file = scenario(dir.path(), "replay", "mount", "shell=True", &asked, Some(&recorded), "recorded: 3 targets built");
    let (output, run, shells) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["outcome"].as_str(), run["passed"].as_str()), ("divergence", "false"), "{run:?}");
    assert!(run["error"].starts_with(&format!("tool_side divergence: the agent's shell ran `{asked}` (in `.`)")), "{}", run["error"]);
    assert_eq!((&shells[0]["diverged"], &shells[0]["invoked"]), (&serde_json::json!(true), &serde_json::json!("/bin/sh")));
    assert!(!canary.exists(), "a command the recording lacks ran under replay");
}

/// The real shell the shim falls back on is the one bound into the
/// scratch folder, not `/bin/sh`, which is the shim itself there.
fn replay_or_live_under_mount_runs_the_real_shell_from_the_scratch_folder(_: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let asked = format!("touch {} && echo live from $0", canary.display());
    let file = scenario(dir.path(), "replay-or-live", "mount", "shell=True", &asked, None, "live from sh\n(exit 0)");
    let (output, run, shells) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(run["outcome"], "final_answer", "{run:?}");
    assert_eq!((&shells[0]["ran"], &shells[0]["entry"]), (&serde_json::json!(true), &serde_json::Value::Null));
    assert!(canary.exists(), "replay-or-live runs what the recording lacks");
}
