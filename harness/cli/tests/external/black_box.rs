//! Black-box runs (issue 12): a scenario's `agent:` process against the
//! run's mock. The official OpenAI SDK agent of `tests/data/black-box/`
//! (needs a Python with `openai`: `RELOOP_PYTHON`, else `python3`), and
//! shell agents for exit codes, timeouts and orphans.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::prerequisite::{CODEX, OPENAI, OPENCODE, PI, Test};
use crate::tables::{Row, read_rows};
use crate::util::{reloop, shell_scenario, stderr, stdout, write};

/// This module's tests, in the order of the file.
pub fn tests() -> Vec<Test> {
    vec![
        crate::test!(OPENAI, the_official_openai_sdk_agent_runs_as_a_black_box_with_its_expectations_checked),
        crate::test!(a_failing_agent_is_agent_error_with_its_exit_code_and_stderr_and_sees_the_base_urls_and_files),
        crate::test!(an_agent_past_its_timeout_is_killed_with_its_whole_process_group),
        crate::test!(interrupting_reloop_run_leaves_no_agent_process_behind),
        crate::test!(sigkilling_reloop_run_leaves_no_agent_process_nor_its_folder_behind),
        crate::test!(an_agent_that_kills_its_keeper_leaves_no_process_behind_and_nothing_else_is_touched),
        crate::test!(a_black_box_agent_sees_only_the_allowlisted_environment),
        crate::test!(a_preset_agent_that_is_not_installed_is_skipped_without_failing_the_run),
        crate::test!(a_preset_recording_calling_a_tool_the_agent_lacks_is_bad_input_naming_the_call),
        crate::test!(OPENCODE, interrupting_reloop_run_during_a_real_opencode_run_leaves_none_of_its_processes_behind),
        crate::test!(CODEX, codex_compacts_remotely_mid_task_against_the_mock_and_passes_with_each_compaction_in_its_steps),
        crate::test!(CODEX, codex_compacts_locally_mid_task_against_the_mock_and_passes),
        crate::test!(PI, real_pi_refused_for_the_context_window_writes_a_session_that_imports_as_a_context_overflow),
        crate::test!(PI, real_pi_compacts_when_the_window_refuses_and_its_retry_gets_the_recorded_answer),
    ]
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/black-box")
}

/// The runs table of `out`, by scenario.
fn runs(out: &Path) -> Vec<Row> {
    let mut rows = read_rows(&out.join("runs.parquet"));
    rows.sort_by(|a, b| a["scenario"].cmp(&b["scenario"]));
    rows
}

fn the_official_openai_sdk_agent_runs_as_a_black_box_with_its_expectations_checked(python: &Path) {
    let out = tempfile::tempdir().unwrap();
    let bin = python.parent().filter(|dir| !dir.as_os_str().is_empty()).map(Path::to_owned);
    let path = std::env::join_paths(bin.into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["run", data().to_str().unwrap(), "--out", out.path().to_str().unwrap()])
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let rows = runs(out.path());
    let summary: Vec<(&str, &str, &str, &str, &str, &str, &str)> = rows
        .iter()
        .map(|r| {
            let cell = |name: &str| r[name].as_str();
            (
                cell("scenario"),
                cell("system_under_test"),
                cell("outcome"),
                cell("agent_exit_code"),
                cell("tool_calls"),
                cell("llm_retries"),
                cell("doom_loop_detected"),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("sdk-agent", "python3", "final_answer", "0", "1", "0", "false"),
            ("sdk-agent-doom-loop", "python3", "final_answer", "0", "3", "0", "true"),
            ("sdk-agent-no-progress", "python3", "final_answer", "0", "4", "0", "true"),
            ("sdk-agent-rate-limit", "python3", "final_answer", "0", "1", "1", "false"),
        ]
    );
    assert!(rows.iter().all(|r| r["passed"] == "true"), "{rows:#?}");
    assert!(rows.iter().filter(|r| r["scenario"] != "sdk-agent-no-progress").all(|r| r["final_answer"].contains("8080")), "{rows:#?}");
    // Retention from the server's side alone (issue 40): the answer's port
    // came from the file the agent read, which its last request still held.
    let sdk = rows.iter().find(|r| r["scenario"] == "sdk-agent").unwrap();
    assert_eq!((sdk["references_needed"].as_str(), sdk["references_lost"].as_str(), sdk["retention"].as_str()), ("1", "0", "1.0"));
    // The results the agent sent back reach the detectors: four different
    // calls with one result are no progress, first seen at the fourth (step 3).
    let no_progress = rows.iter().find(|r| r["scenario"] == "sdk-agent-no-progress").unwrap();
    assert_eq!((no_progress["doom_loop_kind"].as_str(), no_progress["doom_loop_first_step_no_progress"].as_str()), ("no_progress", "3"));
    let steps = read_rows(&out.path().join("steps.parquet"));
    let rate_limited: Vec<&str> = steps.iter().filter(|s| s["scenario"] == "sdk-agent-rate-limit").map(|s| s["server_result"].as_str()).collect();
    assert_eq!(rate_limited, ["ok", "fault:http", "ok"]);
}

fn a_failing_agent_is_agent_error_with_its_exit_code_and_stderr_and_sees_the_base_urls_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"test "$OPENAI_BASE_URL" = "$RELOOP_BASE_URL" && test -n "$ANTHROPIC_BASE_URL" && test -n "$OPENAI_API_KEY" || exit 9; echo "$(cat notes/a.txt) at $OPENAI_BASE_URL" >&2; echo "{\"is_error\":true}"; exit 3"#;
    let file = shell_scenario(dir.path(), "fails", script, 30, "{ exit_code: 0 }");
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}{}", stdout(&output), stderr(&output));
    let row = &runs(&out)[0];
    assert_eq!((row["system_under_test"].as_str(), row["outcome"].as_str(), row["agent_exit_code"].as_str()), ("sh", "agent_error", "3"));
    assert_eq!(row["failed_expectations"], "[exit_code: expected 0, got 3]");
    let port = row["error"].split("http://127.0.0.1:").nth(1).and_then(|rest| rest.split('/').next()).unwrap_or_default().to_owned();
    // Both streams' ends: Claude Code, say, reports its errors on stdout.
    assert_eq!(row["error"], format!("[stderr]\nport {port} at http://127.0.0.1:{port}/s/run/v1\n[stdout]\n{{\"is_error\":true}}"), "{row:#?}");
}

/// Whether process `pid` is gone (or a zombie nobody waits for any more).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn wait_for_pids(file: &Path, count: usize) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(file).unwrap_or_default().split_whitespace().filter_map(|p| p.parse().ok()).collect();
        if pids.len() >= count {
            return pids;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the agent never wrote its pids to {}", file.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An agent that leaves a grandchild running, and one in a session of its
/// own (`setsid`: out of the agent's process group), and waits: its three
/// pids go to `pids`.
fn lingering_agent(pids: &Path) -> String {
    format!(
        "sleep 300 & setsid sh -c 'echo $$ > {0}.s; exec sleep 300' & while ! test -s {0}.s; do sleep 0.05; done; echo $$ $! $(cat {0}.s) > {0}.tmp && mv {0}.tmp {0}; wait",
        pids.display()
    )
}

fn an_agent_past_its_timeout_is_killed_with_its_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let file = shell_scenario(dir.path(), "hangs", &lingering_agent(&pids), 1, "{ outcome: agent_timeout }");
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let row = &runs(&out)[0];
    assert_eq!((row["outcome"].as_str(), row["agent_exit_code"].as_str()), ("agent_timeout", "null"));
    let agents = wait_for_pids(&pids, 3);
    let deadline = Instant::now() + Duration::from_secs(2);
    while agents.iter().any(|pid| !gone(*pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in agents {
        assert!(gone(pid), "agent process {pid} outlived the run");
    }
}

fn interrupting_reloop_run_leaves_no_agent_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let file = shell_scenario(dir.path(), "interrupted", &lingering_agent(&pids), 300, "{}");
    let out = dir.path().join("out");
    let child = spawn_run(&file, &out, None);
    let agents = wait_for_pids(&pids, 3);
    interrupt_and_check_none_survive(child, &agents, &out);
}

/// `reloop run SCENARIO --out OUT` in the background (with `path` as its
/// PATH when given), its output discarded.
fn spawn_run(scenario: &Path, out: &Path, path: Option<&std::ffi::OsStr>) -> std::process::Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_reloop"));
    command.args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.spawn().unwrap()
}

/// Sends SIGINT to a running `reloop run`, then checks its exit (130), that
/// none of `agents` survived it, and that its report says `cancelled`.
fn interrupt_and_check_none_survive(mut reloop: std::process::Child, agents: &[u32], out: &Path) {
    let interrupt = Command::new("kill").args(["-INT", &reloop.id().to_string()]).status().unwrap();
    assert!(interrupt.success());
    let status = reloop.wait().unwrap();
    assert_eq!(status.code(), Some(130), "reloop's exit after an interrupt");
    for pid in agents {
        assert!(gone(*pid), "agent process {pid} outlived the interrupted run");
    }
    assert_eq!(runs(out)[0]["outcome"], "cancelled");
}

/// Regression (issue 28): an agent, its children (one in a session of its
/// own) and its `/tmp/reloop-agent-*` folder survived a SIGKILL of
/// `reloop run`. Its keeper learns of the death from the kernel and ends
/// them all.
fn sigkilling_reloop_run_leaves_no_agent_process_nor_its_folder_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let folder = dir.path().join("folder");
    let script = format!("pwd > {}; {}", folder.display(), lingering_agent(&pids));
    let file = shell_scenario(dir.path(), "killed", &script, 300, "{}");
    let out = dir.path().join("out");
    let mut reloop = spawn_run(&file, &out, None);
    let agents = wait_for_pids(&pids, 3);
    let keeper: Vec<u32> = descendants(reloop.id()).into_iter().filter(|pid| !agents.contains(pid)).collect();
    reloop.kill().unwrap();
    reloop.wait().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    for pid in agents.iter().chain(&keeper) {
        assert!(gone(*pid), "process {pid} of the agent is alive 2 s after reloop was killed");
    }
    let workspace = PathBuf::from(std::fs::read_to_string(&folder).unwrap().trim());
    assert!(workspace.ends_with("workspace"), "{}", workspace.display());
    assert!(!workspace.parent().unwrap().exists(), "{} outlived the run", workspace.parent().unwrap().display());
}

/// Regression (issue 46): an agent that killed its keeper had its `setsid`
/// and double-forked children re-parented to PID 1, and they outlived
/// `run`. `run` is their subreaper now and ends them with the batch; a
/// process reloop did not start (a sleeper of the test's own) is untouched.
fn an_agent_that_kills_its_keeper_leaves_no_process_behind_and_nothing_else_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("escaped");
    let script = format!(
        "( setsid sh -c 'echo $$ > {0}.s; exec sleep 300' & ); while ! test -s {0}.s; do sleep 0.05; done; mv {0}.s {0}; kill -9 $PPID; sleep 1",
        pid_file.display()
    );
    let file = shell_scenario(dir.path(), "escapes", &script, 30, "{}");
    let mut bystander = Command::new("sleep").arg("30").spawn().unwrap();
    let out = dir.path().join("out");
    let output = reloop(dir.path(), &["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(output.status.code().is_some(), "{}{}", stdout(&output), stderr(&output));
    let escaped = wait_for_pids(&pid_file, 1)[0];
    let deadline = Instant::now() + Duration::from_secs(2);
    while !gone(escaped) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gone(escaped), "the sleeper {escaped} the agent started outlived the run");
    assert!(bystander.try_wait().unwrap().is_none(), "a process reloop did not start was touched");
    bystander.kill().unwrap();
    bystander.wait().unwrap();
}

/// Regression (issue 28): a black-box agent got the user's environment but
/// two API keys. Now an allowlist: planted secrets do not reach it, `HOME`
/// and the working directory are its workspace, and `pass_env` passes a
/// named variable on.
fn a_black_box_agent_sees_only_the_allowlisted_environment() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("env.txt");
    let script = format!("env > {}; echo \"cwd=$(pwd)\" >> {0}", seen.display());
    let file = shell_scenario(dir.path(), "env", &script, 30, "{ exit_code: 0 }");
    let text = std::fs::read_to_string(&file).unwrap().replace("  timeout_s:", "  pass_env: [RELOOP_TEST_PASSED]\n  timeout_s:");
    std::fs::write(&file, text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["run", file.to_str().unwrap(), "--out", dir.path().join("out").to_str().unwrap()])
        .env("GITHUB_TOKEN", "ghp_planted")
        .env("AWS_SECRET_ACCESS_KEY", "aws_planted")
        .env("GEMINI_API_KEY", "gemini_planted")
        .env("RELOOP_TEST_PASSED", "passed on")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let env = std::fs::read_to_string(&seen).unwrap();
    let value = |name: &str| env.lines().find_map(|line| line.strip_prefix(&format!("{name}=")).map(str::to_owned));
    for planted in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "GEMINI_API_KEY", "NO_COLOR"] {
        assert_eq!(value(planted), None, "{planted} reached the agent:\n{env}");
    }
    assert!(!env.contains("_planted"), "{env}");
    assert_eq!(value("RELOOP_TEST_PASSED").as_deref(), Some("passed on"));
    let home = value("HOME").unwrap();
    assert!(home.ends_with("/workspace") && home.contains("reloop-agent-"), "{home}");
    assert_eq!(value("cwd"), Some(home));
    assert!(value("PATH").is_some());
}

/// A scenario of `preset` in `dir` over a recording that calls `tool` with `arguments`.
fn preset_scenario(dir: &Path, preset: &str, tool: &str, arguments: &str) -> PathBuf {
    write(
        dir,
        "calls.recording.yaml",
        &format!("format: reloop.recording/v1\nexchanges:\n  - tool_calls: [{{ name: {tool}, arguments: {arguments} }}]\n  - text: done\n"),
    );
    write(
        dir,
        "preset.yaml",
        &format!(
            "name: preset\nmodel: gpt-4.1\ntask: t\nrecording: calls.recording.yaml\nagent: {{ preset: {preset} }}\nexpect: {{ outcome: final_answer }}\n"
        ),
    )
}

fn a_preset_agent_that_is_not_installed_is_skipped_without_failing_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = preset_scenario(dir.path(), "opencode", "read", "{ filePath: a }");
    let output = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["run", file.to_str().unwrap(), "--out", dir.path().join("out").to_str().unwrap(), "--junit", dir.path().join("junit.xml").to_str().unwrap()])
        .env("PATH", dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).contains("1 skipped (agent not installed, see docs/black-box.md): preset"), "{}", stdout(&output));
    let row = &runs(&dir.path().join("out"))[0];
    assert_eq!((row["outcome"].as_str(), row["system_under_test"].as_str(), row["wire"].as_str()), ("skipped", "opencode", "openai-chat"));
    assert!(row["error"].contains("`opencode` is not installed"), "{row:#?}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("<testcase name=\"preset\"") && junit.contains("<skipped message=\"agent not installed"), "{junit}");
    assert!(junit.contains("failures=\"0\""), "{junit}");
}

fn a_preset_recording_calling_a_tool_the_agent_lacks_is_bad_input_naming_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = preset_scenario(dir.path(), "codex", "shell", "{ command: [ls] }");
    let output = reloop(dir.path(), &["validate", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}{}", stdout(&output), stderr(&output));
    let text = format!("{}{}", stdout(&output), stderr(&output));
    assert!(text.contains("calls.recording.yaml:3:") && text.contains("exchanges[0].tool_calls[0].name"), "{text}");
    assert!(text.contains("codex declares no tool `shell` (its tools: exec_command,"), "{text}");
    let missing = preset_scenario(dir.path(), "pi", "read", "{ offset: 1 }");
    let output = reloop(dir.path(), &["run", missing.to_str().unwrap(), "--out", "out"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("pi's `read` requires path"), "{}", stderr(&output));
}

/// Every process below `pid` (children, their children, ...), from /proc.
pub fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|child| {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
            let parent = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            Some((child, parent))
        })
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parents.iter().filter(|(_, p)| *p == parent).map(|(child, _)| *child));
        i += 1;
    }
    found.split_off(1)
}

fn interrupting_reloop_run_during_a_real_opencode_run_leaves_none_of_its_processes_behind(bin: &Path) {
    let out = tempfile::tempdir().unwrap();
    let path = std::env::join_paths(std::iter::once(bin.to_owned()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let scenario = crate::util::repo().join("scenarios/agents/opencode-doom-loop.yaml");
    let child = spawn_run(&scenario, out.path(), Some(&path));
    // Once opencode runs, give it time to start what it starts (its package
    // installs, its tools), then take every process below reloop.
    let start = Instant::now();
    while descendants(child.id()).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "opencode never started under reloop");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(3));
    let agents = descendants(child.id());
    assert!(!agents.is_empty(), "opencode ended within 3 s; the interrupt would find nothing to kill");
    interrupt_and_check_none_survive(child, &agents, out.path());
}

/// Runs bundled scenario `name` with the installed agents on `PATH`
/// (after `wrappers`, a folder of programs standing in for them, if any);
/// its steps rows, once it passed. `None` when the agents are not installed.
fn run_bundled(name: &str, bin: &Path, wrappers: Option<&Path>) -> Vec<Row> {
    let out = tempfile::tempdir().unwrap();
    let first = wrappers.map(Path::to_path_buf).into_iter().chain([bin.to_owned()]);
    let path = std::env::join_paths(first.chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let scenario = crate::util::repo().join(format!("scenarios/agents/{name}.yaml"));
    let output = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["run", scenario.to_str().unwrap(), "--out", out.path().to_str().unwrap()])
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}{}", stdout(&output), stderr(&output));
    read_rows(&out.path().join("steps.parquet"))
}

/// Codex 0.169 compacts remotely when its provider is named `OpenAI`
/// ("remote compaction v2": a `compaction_trigger` item ending an ordinary
/// `/v1/responses` input), and by a summary turn of its own otherwise. The
/// scenario names it so and sets a low limit: the mock answers each
/// compaction with its item without consuming an exchange, reads the item
/// back as the summary, matches the replay against the history it replaced,
/// and the break that reading makes is in `steps.parquet`, named.
fn codex_compacts_remotely_mid_task_against_the_mock_and_passes_with_each_compaction_in_its_steps(bin: &Path) {
    let steps = run_bundled("codex-compaction", bin, None);
    let purposes: Vec<&str> = steps.iter().map(|row| row["purpose"].as_str()).collect();
    assert!(purposes.contains(&"compaction"), "Codex compacted remotely: {purposes:?}");
    let read_back = steps.iter().find(|row| row["purpose"] == "main" && row["cache_break_by"].starts_with("compaction item read"));
    assert!(read_back.is_some_and(|row| row["cache_break_simulated"] == "true"), "the compacted history breaks the cache, named: {steps:?}");
    assert!(steps.iter().all(|row| row["error"].is_empty() || row["error"] == "null"), "{steps:?}");
}

/// With its provider named otherwise, Codex compacts by a summary turn of
/// its own: answered as auxiliary (its preset's rule), never consuming an
/// exchange, and the replay goes on without the results it summarized.
fn codex_compacts_locally_mid_task_against_the_mock_and_passes(bin: &Path) {
    let steps = run_bundled("codex-compaction-local", bin, None);
    let rows: Vec<(&str, &str)> = steps.iter().map(|row| (row["purpose"].as_str(), row["server_result"].as_str())).collect();
    assert_eq!(rows, [("main", "ok"), ("auxiliary", "auxiliary"), ("main", "ok"), ("auxiliary", "auxiliary"), ("main", "ok")]);
}

/// Real pi, keeping its session file, against the mock's 1150-token window
/// (`pi-context-overflow`): refused on its second request with Anthropic's
/// 400 "prompt is too long", it exits 1, and the file it wrote ends on that
/// error and imports as a context overflow. This is how the bundled
/// `pi-context-overflow-against-reloop-mock` was made: a `pi` first on
/// `PATH` runs the real one, then copies its sessions out of the workspace
/// (the run removes it).
fn real_pi_refused_for_the_context_window_writes_a_session_that_imports_as_a_context_overflow(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let (steps, session) = run_pi_keeping_its_session("pi-context-overflow", bin, dir.path());
    let results: Vec<&str> = steps.iter().map(|row| row["server_result"].as_str()).collect();
    assert_eq!(results, ["ok", "context_length_exceeded"]);
    let text = std::fs::read_to_string(&session).unwrap();
    // The count moves by a token with the workspace's random name in pi's system prompt.
    let last = text.lines().last().unwrap();
    assert!(last.contains(r#""stopReason":"error""#) && last.contains("prompt is too long: ") && last.contains(" tokens > 1150 maximum"), "{text}");
    let imported = dir.path().join("imported");
    let output = reloop(dir.path(), &["import", session.to_str().unwrap(), "--out", imported.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = std::fs::read_dir(&imported).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().ends_with(".import.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    assert_eq!(report["ending"], "context_exceeded", "{report}");
}

/// Runs bundled scenario `name` with a `pi` first on `PATH` that runs the
/// real one from `bin`, then copies its sessions out of the workspace (the
/// run removes it) into `dir`: the steps rows and the one session file.
fn run_pi_keeping_its_session(name: &str, bin: &Path, dir: &Path) -> (Vec<Row>, PathBuf) {
    let kept = dir.join("kept");
    let script =
        format!("#!/bin/sh\n\"{}\" \"$@\"\ncode=$?\ncp -r \"$PI_CODING_AGENT_DIR/sessions\" \"{}\"\nexit $code\n", bin.join("pi").display(), kept.display());
    let wrapper = write(dir, "bin/pi", &script);
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let steps = run_bundled(name, bin, wrapper.parent());
    // pi keeps one session per working directory: `kept/--<cwd>--/<file>.jsonl`.
    let only = |folder: &Path| std::fs::read_dir(folder).unwrap().next().expect("one entry").unwrap().path();
    (steps, only(&only(&kept)))
}

/// Real pi with its auto-compaction on (`pi-compaction-on-overflow`): the
/// mock's window refuses its third request, pi summarizes the long log it
/// read (its summary request, by its preset's rule, answered as auxiliary
/// without consuming an exchange), and its retry, now under the window,
/// gets the recorded answer. Its session file holds the compaction, with
/// pi's own count of the prompt before it.
fn real_pi_compacts_when_the_window_refuses_and_its_retry_gets_the_recorded_answer(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let (steps, session) = run_pi_keeping_its_session("pi-compaction-on-overflow", bin, dir.path());
    let rows: Vec<(&str, &str)> = steps.iter().map(|row| (row["purpose"].as_str(), row["server_result"].as_str())).collect();
    assert_eq!(rows, [("main", "ok"), ("main", "ok"), ("main", "context_length_exceeded"), ("auxiliary", "auxiliary"), ("main", "ok")]);
    let tokens: Vec<u64> = steps.iter().map(|row| row["input_tokens"].parse().unwrap()).collect();
    assert!(tokens[4] < 3550 && tokens[2] > 3550 && tokens[4] * 2 < tokens[2], "the retry fits after the log is summarized: {tokens:?}");
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.lines().any(|line| line.contains(r#""type":"compaction""#) && line.contains(r#""tokensBefore":"#)), "{text}");
}
