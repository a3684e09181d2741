//! `agent.tools: replay | replay-or-live` through the real binary (issue
//! 42): a command agent whose `shell` tool runs `bash -c`, `sh -c` or
//! `$SHELL -c` from PATH (`tests/data/shell-agent/shell_agent.py`). Its
//! command would make a canary file outside the workspace; under `replay`
//! the recorded output reaches the agent's next request and the canary is
//! never made.

use std::path::{Path, PathBuf};

use crate::shell_agent::{run, scenario};
use crate::tables::{Row, read_rows};
use crate::util::{MINIMAL_SCENARIO, ONE_TEXT_RECORDING, reloop, stderr, stdout, write};

/// The run's `(tool_side_replayed, tool_side_divergences, commands_run_live)` cells.
fn counts(run: &Row) -> [&str; 3] {
    ["tool_side_replayed", "tool_side_divergences", "commands_run_live"].map(|column| run[column].as_str())
}

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
        assert_eq!(counts(&run), ["1", "0", "0"], "{shell}");
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
    assert_eq!(counts(&run), ["0", "1", "0"]);
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
    assert_eq!(counts(&run), ["0", "0", "1"]);
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

/// No shims watched these runs, so the counts are unknown, not 0: the
/// built-in loop runs no shell, and `tools: live` (the default) installs none.
#[test]
fn the_tool_side_counts_are_null_where_no_shims_watched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "recording.yaml", ONE_TEXT_RECORDING);
    let built_in = write(dir.path(), "scenario.yaml", MINIMAL_SCENARIO);
    let output = reloop(Path::new("."), &["run", built_in.to_str().unwrap(), "--out", dir.path().join("built-in").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let [row]: [Row; 1] = read_rows(&dir.path().join("built-in/runs.parquet")).try_into().unwrap();
    assert_eq!((counts(&row), diverged_at(&row)), (["null"; 3], "null"));

    let live = scenario(dir.path(), "live", "path", "bash", "echo live output", None, "live output\n(exit 0)");
    let (output, run, shells) = run(&live, &dir.path().join("live"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((counts(&run), shells.len(), diverged_at(&run)), (["null"; 3], 0, "null"));
}

/// A recording whose exchanges call `shell` with each of `commands`, in
/// turn, each next exchange expecting what the last one printed, then
/// answer.
fn calls(commands: &[(&str, &str)]) -> String {
    let mut exchanges = String::new();
    let mut expected: Option<&str> = None;
    for (command, prints) in commands {
        let expect = expected.map_or_else(String::new, |text| format!("expect: {{ tool_result_contains: [{}] }}\n    ", serde_json::json!(text)));
        exchanges.push_str(&format!(
            "  - {expect}text: Running.\n    tool_calls:\n      - {{ name: shell, arguments: {{ command: {} }} }}\n",
            serde_json::json!(command)
        ));
        expected = Some(prints);
    }
    let expect = expected.map_or_else(String::new, |text| format!("expect: {{ tool_result_contains: [{}] }}\n    ", serde_json::json!(text)));
    format!("format: reloop.recording/v1\nexchanges:\n{exchanges}  - {expect}text: The build passes.\n")
}

/// The shell agent's scenario `build.yaml` over `recording` under `tools`,
/// with `env` for the agent and `files` (a YAML mapping's inside) in its workspace.
fn agent_scenario(dir: &Path, recording: &str, tools: &str, env: &str, files: &str) -> PathBuf {
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shell-agent/shell_agent.py");
    write(
        dir,
        "build.yaml",
        &format!(
            "name: build\nmodel: gpt-4.1\ntask: Build it.\nrecording: {recording}\nagent:\n  command: [python3, {}, \"{{task}}\"]\n  wire: openai-chat\n  tools: {tools}\n  env: {{ {env} }}\n  files: {{ {files} }}\n  timeout_s: 60\nexpect:\n  outcome: final_answer\n",
            agent.display()
        ),
    )
}

/// The workspace file of most scenarios here.
const KEEP: &str = "sub/keep.txt: kept";

/// The `tool_side:` list of the recording at `path`.
fn tool_side_of(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let recording: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    recording["tool_side"].as_array().cloned().unwrap_or_default()
}

/// The `workspace:` of the recording at `path` (null when it has none).
fn workspace_of(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str::<serde_json::Value>(&text).unwrap()["workspace"].clone()
}

/// Each snapshot of `workspace` as `(after_exchange, its files' paths)`.
fn listings(workspace: &serde_json::Value) -> Vec<(serde_json::Value, Vec<String>)> {
    let snapshots = workspace["snapshots"].as_array().cloned().unwrap_or_default();
    snapshots.iter().map(|s| (s["after_exchange"].clone(), s["files"].as_object().map(|files| files.keys().cloned().collect()).unwrap_or_default())).collect()
}

/// The run's `workspace_diverged_at` cell.
fn diverged_at(run: &Row) -> &str {
    run["workspace_diverged_at"].as_str()
}

/// `--record-mode all` against a local upstream: the agent's command runs
/// for real (its output reaches the upstream, the canary is made), and the
/// re-recording holds it redacted; replayed under `tools: replay`, the
/// same agent passes and nothing runs.
#[test]
fn record_mode_all_records_the_shell_and_the_rerecording_replays_it_without_running() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    // The secret is in what it prints, not in its line (a redacted line would not replay).
    let command = format!("touch {} && echo real output && printf 'token sk-live-%s\\n' 12345 >&2", canary.display());
    let upstream_recording = write(dir.path(), "upstream.yaml", &calls(&[(&command, "real output")]));
    write(dir.path(), "stale.recording.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: Stale.\n");
    let file = agent_scenario(dir.path(), "stale.recording.yaml", "replay", "SHELL_NAME: bash", KEEP);
    let upstream = crate::util::Serve::start_with(&upstream_recording, &[], std::process::Stdio::null());
    let out = dir.path().join("out");
    let args = ["run", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--upstream", &upstream.addr, "--record-mode", "all"];
    let output = reloop(Path::new("."), &[&args[..], &["--redact-body", "sk-live-[0-9]+"]].concat());
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(canary.exists(), "recording runs the command for real");
    let [run]: [Row; 1] = read_rows(&out.join("runs.parquet")).try_into().unwrap();
    assert_eq!((run["live_steps"].as_str(), counts(&run)), ("2", ["0", "0", "1"]), "{run:?}");

    let rerecording = dir.path().join("stale.rerecorded.yaml");
    let recorded = tool_side_of(&rerecording);
    let expected = serde_json::json!([{ "command": command, "stdout": "real output\n", "stderr": "token [REDACTED]\n", "cwd": ".", "after_exchange": 0 }]);
    assert_eq!(serde_json::Value::Array(recorded), expected);
    assert!(!std::fs::read_to_string(&rerecording).unwrap().contains("sk-live-12345"));
    let keep = vec!["sub/keep.txt".to_owned()];
    let turns = listings(&workspace_of(&rerecording));
    assert_eq!(turns, [(serde_json::Value::Null, keep.clone()), (serde_json::json!(0), keep.clone()), (serde_json::json!(1), keep)], "start and each turn");

    std::fs::remove_file(&canary).unwrap();
    let file = agent_scenario(dir.path(), "stale.rerecorded.yaml", "replay", "SHELL_NAME: bash", KEEP);
    let (output, run, shells) = crate::shell_agent::run(&file, &dir.path().join("replayed"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["outcome"].as_str(), run["passed"].as_str(), counts(&run)), ("final_answer", "true", ["1", "0", "0"]), "{run:?}");
    assert_eq!((&shells[0]["entry"], &shells[0]["stdout"]), (&serde_json::json!(0), &serde_json::json!("real output\n")));
    assert!(!canary.exists(), "the replay ran the recorded command");
    assert_eq!(diverged_at(&run), "null", "the command left the workspace as it was");
}

/// `agent.tools: record` with the model's side replayed: each command's
/// folder, input, status and the exchange that asked for it are recorded
/// in order, beside the replayed exchanges.
#[test]
fn tools_record_keeps_each_commands_folder_input_status_and_exchange() {
    let dir = tempfile::tempdir().unwrap();
    let first = "read line; echo got $line; exit 4";
    // Each reads its input: what a command that never reads it was given
    // is kept only as far as it came before the command ended.
    let second = "cat >/dev/null; ls";
    write(dir.path(), "build.recording.yaml", &calls(&[(first, "got hello\n(exit 4)"), (second, "keep.txt")]));
    let file = agent_scenario(dir.path(), "build.recording.yaml", "record", "SHELL_NAME: sh, SHELL_CWD: sub, SHELL_STDIN: \"hello\\n\"", KEEP);
    let (output, run, shells) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["passed"].as_str(), run["live_steps"].as_str(), counts(&run)), ("true", "0", ["0", "0", "2"]), "{run:?}");
    assert_eq!(shells.iter().map(|shell| shell["after_exchange"].clone()).collect::<Vec<_>>(), [serde_json::json!(0), serde_json::json!(1)]);
    let recorded = tool_side_of(&dir.path().join("build.rerecorded.yaml"));
    let expected = serde_json::json!([
        { "command": first, "stdout": "got hello\n", "exit_code": 4, "cwd": "sub", "stdin": "hello\n", "after_exchange": 0 },
        { "command": second, "stdout": "keep.txt\n", "cwd": "sub", "stdin": "hello\n", "after_exchange": 1 },
    ]);
    assert_eq!(serde_json::Value::Array(recorded), expected);
}

/// `tools: record` snapshots the workspace at the start and after each
/// turn, each content once; replayed with a scenario that no longer writes
/// `seed.txt`, the run starts from the recorded snapshot (the agent's
/// `cat` is answered, its file is there), no turn differs, and the column
/// is null, not absent.
#[test]
fn a_recorded_workspace_is_where_the_replay_starts_and_an_unchanged_one_does_not_diverge() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "build.recording.yaml", &calls(&[("cat seed.txt", "seeded"), ("ls", "seed.txt")]));
    let file = agent_scenario(dir.path(), "build.recording.yaml", "record", "SHELL_NAME: bash", "seed.txt: seeded, copy.txt: seeded");
    let (output, run, _) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!(diverged_at(&run), "null", "a record run compares nothing");
    let rerecording = dir.path().join("build.rerecorded.yaml");
    let workspace = workspace_of(&rerecording);
    let files = vec!["copy.txt".to_owned(), "seed.txt".to_owned()];
    let expected =
        [(serde_json::Value::Null, files.clone()), (serde_json::json!(0), files.clone()), (serde_json::json!(1), files.clone()), (serde_json::json!(2), files)];
    assert_eq!(listings(&workspace), expected);
    assert_eq!(workspace["blobs"].as_object().map(serde_json::Map::len), Some(1), "two files, one content: {workspace}");
    let trees: Vec<&serde_json::Value> = workspace["snapshots"].as_array().unwrap().iter().map(|s| &s["tree"]).collect();
    assert!(trees.windows(2).all(|pair| pair[0] == pair[1]), "nothing changed, so one tree: {trees:?}");

    let replay = agent_scenario(dir.path(), "build.rerecorded.yaml", "replay", "SHELL_NAME: bash", "copy.txt: seeded");
    let (output, run, shells) = crate::shell_agent::run(&replay, &dir.path().join("replayed"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["outcome"].as_str(), counts(&run), diverged_at(&run)), ("final_answer", ["2", "0", "0"], "null"), "{run:?}");
    assert_eq!(shells.len(), 2);
    let events = read_rows(&dir.path().join("replayed/events.parquet"));
    assert!(!events.iter().any(|e| e["kind"] == "workspace_diverged"), "{events:?}");
}

/// A command that wrote files ran under `record` but is only answered
/// under `replay`: after that turn the replay's workspace lacks them, and
/// the run names the first (`big.bin`, over the size cap: listed with its
/// size, not stored) in `workspace_diverged_at` and a `workspace_diverged`
/// event at the turn's step. The run itself still passes: the model's side
/// matched.
#[test]
fn a_workspace_that_went_another_way_names_the_turn_and_the_first_file() {
    let dir = tempfile::tempdir().unwrap();
    let command = "echo built > out.txt && head -c 1100000 /dev/zero > big.bin && echo done";
    write(dir.path(), "build.recording.yaml", &calls(&[(command, "done")]));
    let file = agent_scenario(dir.path(), "build.recording.yaml", "record", "SHELL_NAME: bash", KEEP);
    let (output, _, _) = run(&file, &dir.path().join("out"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let rerecording = dir.path().join("build.rerecorded.yaml");
    let workspace = workspace_of(&rerecording);
    let after = &workspace["snapshots"][1];
    assert_eq!((&after["after_exchange"], &after["skipped"]), (&serde_json::json!(0), &serde_json::json!({ "big.bin": 1100000 })), "{workspace}");
    assert_eq!(after["files"].as_object().unwrap().keys().collect::<Vec<_>>(), ["out.txt", "sub/keep.txt"]);
    assert!(std::fs::metadata(&rerecording).unwrap().len() < 100_000, "the big file is not stored");

    let replay = agent_scenario(dir.path(), "build.rerecorded.yaml", "replay", "SHELL_NAME: bash", KEEP);
    let (output, run, _) = crate::shell_agent::run(&replay, &dir.path().join("replayed"));
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert_eq!((run["passed"].as_str(), counts(&run), diverged_at(&run)), ("true", ["1", "0", "0"], "big.bin"), "{run:?}");
    let events = read_rows(&dir.path().join("replayed/events.parquet"));
    let diverged: Vec<serde_json::Value> =
        events.iter().filter(|e| e["kind"] == "workspace_diverged").map(|e| serde_json::from_str(&e["payload"]).unwrap()).collect();
    assert_eq!(diverged.len(), 2, "both turns after the command: {diverged:?}");
    assert_eq!(
        (&diverged[0]["after_exchange"], &diverged[0]["path"], &diverged[0]["replayed"]),
        (&serde_json::json!(0), &serde_json::json!("big.bin"), &serde_json::Value::Null)
    );
    let step = events.iter().find(|e| e["kind"] == "workspace_diverged").unwrap()["step"].clone();
    assert_eq!(step, "0", "the step (0-based) whose answer asked for the command");
}

/// A hand-edited `workspace:` whose path leaves the workspace is refused
/// when the recording is read, naming the file and the field; nothing runs.
#[test]
fn a_workspace_path_out_of_the_workspace_is_refused_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let hash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    let recording = format!(
        "{}workspace:\n  max_file_bytes: 1024\n  snapshots:\n    - tree: x\n      files: {{ ../escape.txt: {hash} }}\n  blobs:\n    {hash}: \"\"\n",
        calls(&[])
    );
    write(dir.path(), "build.recording.yaml", &recording);
    let file = agent_scenario(dir.path(), "build.recording.yaml", "replay", "SHELL_NAME: bash", KEEP);
    let output = reloop(Path::new("."), &["run", file.to_str().unwrap(), "--out", dir.path().join("out").to_str().unwrap()]);
    let error = stderr(&output);
    assert_ne!(output.status.code(), Some(0), "{error}");
    assert!(error.contains("build.recording.yaml") && error.contains("workspace.snapshots[0].files.../escape.txt"), "{error}");
    assert!(!dir.path().join("escape.txt").exists());
}
