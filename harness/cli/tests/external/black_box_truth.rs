//! What a black-box agent really did (issue 32): calls counted from the
//! results the agent sent back, faults and cut streams as failed rows of
//! the step they hit, a summary request after a context error answered
//! without consuming an exchange, the cause of a failure in `runs.error`,
//! and recorded usage in the report. Each drives the SDK agent of
//! `tests/data/black-box/` (or pi, when `RELOOP_AGENTS_BIN` has it) through
//! the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::prerequisite::{CLAUDE, OPENAI, PI, Test};
use crate::tables::{Row, read_rows};
use crate::util::{stderr, stdout, write};

/// This module's tests, in the order of the file.
pub fn tests() -> Vec<Test> {
    vec![
        crate::test!(OPENAI, a_refused_call_is_a_tool_error_and_fails_expect_tool_calls),
        crate::test!(OPENAI, a_result_worded_as_an_error_is_a_tool_error_as_the_agent_words_it),
        crate::test!(a_tool_error_pattern_that_is_not_a_regex_is_refused),
        crate::test!(OPENAI, a_call_the_agent_never_ran_is_not_counted_and_its_crash_reaches_the_error),
        crate::test!(OPENAI, a_summary_request_after_a_context_error_consumes_no_exchange),
        crate::test!(OPENAI, a_fault_is_a_failed_row_of_the_step_it_hit_and_the_retry_its_next_attempt),
        crate::test!(OPENAI, a_divergence_shows_the_results_it_got_and_the_agents_output_in_the_error),
        crate::test!(OPENAI, recorded_usage_reaches_a_black_box_report),
        crate::test!(PI, a_cut_stream_is_a_failed_row_and_the_agents_retry_makes_the_step),
        crate::test!(OPENAI, a_client_renaming_its_calls_replays_twice_to_the_same_report),
        crate::test!(CLAUDE, claude_codes_compaction_after_a_context_error_consumes_no_exchange),
    ]
}

/// The SDK agent's folder.
fn agent_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/black-box")
}

/// A finished run: the command's output, its runs row and its steps rows.
struct Finished {
    output: Output,
    run: Row,
    steps: Vec<Row>,
}

impl Finished {
    /// `(step, attempt, server_result, error)` of each steps row.
    fn rows(&self) -> Vec<(String, String, String, String)> {
        let cell = |row: &Row, name: &str| row[name].clone();
        self.steps.iter().map(|s| (cell(s, "step"), cell(s, "attempt"), cell(s, "server_result"), cell(s, "error"))).collect()
    }
}

/// Runs the SDK agent with `python` on `recording` with the scenario's
/// `extra` lines (faults, expect).
fn run_sdk_agent(python: &Path, recording: &str, extra: &str) -> Finished {
    run_sdk_agent_with(python, recording, extra, "")
}

/// As [`run_sdk_agent`], with `agent_lines` added to the `agent:` block.
fn run_sdk_agent_with(python: &Path, recording: &str, extra: &str, agent_lines: &str) -> Finished {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "agent.recording.yaml", &format!("format: reloop.recording/v1\n{recording}"));
    let agent = agent_dir().join("sdk_agent.py");
    let scenario = format!(
        "name: truth\nmodel: gpt-4.1\ntask: Which port?\nrecording: agent.recording.yaml\nagent:\n  command: [python3, {}, \"{{task}}\"]\n  files: {{ config.toml: \"[server]\\nport = 8080\\n\" }}\n  timeout_s: 60\n{agent_lines}{extra}",
        agent.display()
    );
    let file = write(dir.path(), "truth.yaml", &scenario);
    let bin = python.parent().filter(|d| !d.as_os_str().is_empty()).map(Path::to_owned);
    let path = std::env::join_paths(bin.into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let out = dir.path().join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_reloop"))
        .args(["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let run = read_rows(&out.join("runs.parquet")).remove(0);
    let mut steps = read_rows(&out.join("steps.parquet"));
    steps.sort_by_key(|s| s["call_index"].parse::<u64>().unwrap());
    Finished { output, run, steps }
}

/// The recording the agent answers from: read `config.toml`, then answer.
const READ_THEN_ANSWER: &str = "exchanges:\n  - tool_calls: [{ name: read_file, arguments: { path: config.toml } }]\n  - expect: { tool_result_contains: [\"port = 8080\"] }\n    text: \"Port 8080.\"\n";

/// Regression: Codex refused a recorded `shell` call ("unsupported call:
/// shell") and the run passed with `tool_errors=0` and the call counted.
fn a_refused_call_is_a_tool_error_and_fails_expect_tool_calls(python: &Path) {
    let recording = "exchanges:\n  - tool_calls: [{ name: read_file, arguments: { path: config.toml } }, { name: shell, arguments: { command: ls } }]\n  - text: \"Port 8080.\"\n";
    let done = run_sdk_agent(python, recording, "expect: { outcome: final_answer, tool_calls: [read_file, shell] }\n");
    assert_eq!(done.output.status.code(), Some(1), "{}{}", stdout(&done.output), stderr(&done.output));
    let cells = (done.run["outcome"].as_str(), done.run["tool_calls"].as_str(), done.run["tool_errors"].as_str());
    assert_eq!(cells, ("final_answer", "2", "1"), "{:#?}", done.run);
    assert_eq!(done.run["failed_expectations"], "[tool_calls: expected [read_file, shell], got [read_file]]");
}

/// Regression (issue 43): a command agent on the Chat wire, which has no
/// error flag, wrote `error: no such file in the workspace` as the result
/// of a read, and the run counted no tool error. The default pattern counts
/// it; the block's `tool_error_pattern` replaces the default, and `""`
/// turns it off.
fn a_result_worded_as_an_error_is_a_tool_error_as_the_agent_words_it(python: &Path) {
    let recording = "exchanges:\n  - tool_calls: [{ name: read_file, arguments: { path: missing.toml } }]\n  - text: \"No port.\"\n";
    for (agent_lines, errors) in
        [("", "1"), ("  tool_error_pattern: \"^error: no such\"\n", "1"), ("  tool_error_pattern: \"^FAILED\"\n", "0"), ("  tool_error_pattern: \"\"\n", "0")]
    {
        let done = run_sdk_agent_with(python, recording, "expect: { outcome: final_answer }\n", agent_lines);
        assert_eq!(done.output.status.code(), Some(0), "{}{}", stdout(&done.output), stderr(&done.output));
        assert_eq!((done.run["tool_calls"].as_str(), done.run["tool_errors"].as_str()), ("1", errors), "{agent_lines:?}: {:#?}", done.run);
    }
}

/// A `tool_error_pattern` that is not a regex is refused with the field named.
fn a_tool_error_pattern_that_is_not_a_regex_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "agent.recording.yaml", "format: reloop.recording/v1\nexchanges:\n  - text: hi\n");
    let file = write(
        dir.path(),
        "bad.yaml",
        "name: bad\nmodel: gpt-4.1\ntask: t\nrecording: agent.recording.yaml\nagent:\n  command: [true]\n  tool_error_pattern: \"(unclosed\"\n",
    );
    let output = Command::new(env!("CARGO_BIN_EXE_reloop")).args(["run", file.to_str().unwrap(), "--out", "out"]).current_dir(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let printed = stderr(&output);
    assert!(printed.contains("bad.yaml") && printed.contains("agent.tool_error_pattern") && printed.contains("is not a regex"), "{printed}");
}

/// Regression: a call the agent never ran (Claude Code ran only `Read` of
/// a recorded `Read, Bash`) was counted; and the agent's crash was only in
/// the events' payload.
fn a_call_the_agent_never_ran_is_not_counted_and_its_crash_reaches_the_error(python: &Path) {
    let recording = "exchanges:\n  - tool_calls: [{ name: read_file, arguments: { file: config.toml } }]\n  - text: \"Port 8080.\"\n";
    let done = run_sdk_agent(python, recording, "expect: { outcome: final_answer }\n");
    assert_eq!(done.output.status.code(), Some(1));
    assert_eq!((done.run["outcome"].as_str(), done.run["tool_calls"].as_str()), ("agent_error", "0"), "{:#?}", done.run);
    assert!(done.run["error"].starts_with("[stderr]\n") && done.run["error"].contains("KeyError: 'path'"), "{:#?}", done.run);
    let printed = stdout(&done.output);
    assert!(printed.contains("the agent's last output:") && printed.contains("KeyError: 'path'"), "{printed}");
}

/// Regression: after a context-window error, Claude Code's next request
/// (its summary request, tools declared) was answered with the next
/// recorded turn, and the resent request then found the recording exhausted.
fn a_summary_request_after_a_context_error_consumes_no_exchange(python: &Path) {
    let done = run_sdk_agent(
        python,
        READ_THEN_ANSWER,
        "faults: [{ exchange: 1, context_length_exceeded: true }]\nexpect: { outcome: final_answer, tool_calls: [read_file] }\n",
    );
    assert_eq!(done.output.status.code(), Some(0), "{}{}", stdout(&done.output), stderr(&done.output));
    let results: Vec<&str> = done.steps.iter().map(|s| s["server_result"].as_str()).collect();
    assert_eq!(results, ["ok", "fault:context_length_exceeded", "auxiliary", "ok"]);
    assert_eq!((done.run["steps_used"].as_str(), done.run["final_answer"].as_str()), ("2", "Port 8080."));
}

/// Regression: a faulted request carried the previous step's number and
/// its retry was attempt 0.
fn a_fault_is_a_failed_row_of_the_step_it_hit_and_the_retry_its_next_attempt(python: &Path) {
    let done = run_sdk_agent(python, READ_THEN_ANSWER, "faults: [{ exchange: 1, http: { status: 500 } }]\nexpect: { outcome: final_answer }\n");
    assert_eq!(done.output.status.code(), Some(0), "{}{}", stdout(&done.output), stderr(&done.output));
    let row = |step: &str, attempt: &str, result: &str, error: &str| (step.to_owned(), attempt.to_owned(), result.to_owned(), error.to_owned());
    assert_eq!(done.rows(), [row("0", "0", "ok", "null"), row("1", "0", "fault:http", "fault:http"), row("1", "1", "ok", "null")]);
}

/// Regression: a divergence on `tool_result_contains` did not show the
/// result, and `runs.error` was null for a `divergence`.
fn a_divergence_shows_the_results_it_got_and_the_agents_output_in_the_error(python: &Path) {
    let recording = READ_THEN_ANSWER.replace("port = 8080", "port = 9090");
    let done = run_sdk_agent(python, &recording, "expect: { outcome: final_answer }\n");
    assert_eq!(done.run["outcome"], "divergence");
    let error = &done.run["error"];
    assert!(error.starts_with("divergence at request 1 (expect.tool_result_contains):"), "{error}");
    assert!(error.contains(r#"none containing it: ["[server]\nport = 8080\n"]"#), "{error}");
    assert!(error.contains("[stderr]\n") && error.contains("openai.BadRequestError: Error code: 400"), "{error}");
    let printed = stdout(&done.output);
    assert!(printed.contains("the agent's last output:") && printed.contains("openai.BadRequestError"), "{printed}");
}

/// Regression: a black-box replay of a recording with the provider's usage
/// had null `*_recorded` columns, while the built-in replay had them.
fn recorded_usage_reaches_a_black_box_report(python: &Path) {
    let recording = READ_THEN_ANSWER
        .replace("arguments: { path: config.toml } }]\n", "arguments: { path: config.toml } }]\n    usage: { input_tokens: 1200, output_tokens: 30 }\n")
        .replace("text: \"Port 8080.\"\n", "text: \"Port 8080.\"\n    usage: { input_tokens: 1300, output_tokens: 12 }\n");
    let done = run_sdk_agent(python, &recording, "expect: { outcome: final_answer }\n");
    assert_eq!(done.output.status.code(), Some(0), "{}{}", stdout(&done.output), stderr(&done.output));
    let cells = (done.run["input_tokens_recorded_total"].as_str(), done.run["output_tokens_recorded_total"].as_str(), done.run["cost_source"].as_str());
    assert_eq!(cells, ("2500", "42", "recorded"), "{:#?}", done.run);
    assert_ne!(done.run["estimated_cost_usd_recorded"], "null");
}

/// Regression: a stream cut mid-turn was a row with no error and
/// `finish_reason=tool_calls`, and pi's retry of it was the step's second
/// attempt. Real pi (`RELOOP_AGENTS_BIN`), which retries a cut stream.
fn a_cut_stream_is_a_failed_row_and_the_agents_retry_makes_the_step(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let recording = crate::util::repo().join("recordings/agents/pi-read-config.yaml");
    let scenario = format!(
        "name: pi-cut\nmodel: claude-sonnet-4-5\ntask: Which port does the service in config.toml listen on?\nrecording: {}\nagent:\n  preset: pi\n  files: {{ config.toml: \"[server]\\nport = 8080\\n\" }}\nfaults: [{{ exchange: 0, cut_after_events: 2 }}]\nexpect: {{ outcome: final_answer, tool_calls: [read] }}\n",
        recording.display()
    );
    let file = write(dir.path(), "cut.yaml", &scenario);
    let path = std::env::join_paths(std::iter::once(bin.to_owned()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let out = dir.path().join("out");
    let output =
        Command::new(env!("CARGO_BIN_EXE_reloop")).args(["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]).env("PATH", path).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let mut steps = read_rows(&out.join("steps.parquet"));
    steps.sort_by_key(|s| s["call_index"].parse::<u64>().unwrap());
    let rows: Vec<[&str; 4]> = steps.iter().map(|s| [s["step"].as_str(), s["attempt"].as_str(), s["error"].as_str(), s["finish_reason"].as_str()]).collect();
    assert_eq!(rows, [["0", "0", "fault:stream", "null"], ["0", "1", "null", "tool_calls"], ["1", "0", "null", "stop"]]);
}

/// Tool-call ids the client makes up (new on every run) do not make a
/// replay diverge, nor change its counts: the server matches the calls by
/// content and counts them under the ids it served. Two runs, one report.
fn a_client_renaming_its_calls_replays_twice_to_the_same_report(python: &Path) {
    let extra = "faults: [{ exchange: 1, http: { status: 500 } }]\nexpect: { outcome: final_answer, tool_calls: [read_file, read_file] }\n";
    let recording = "exchanges:\n  - tool_calls: [{ name: read_file, arguments: { path: config.toml } }]\n  - tool_calls: [{ name: read_file, arguments: { path: config.toml } }]\n  - expect: { tool_result_contains: [\"port = 8080\"] }\n    text: \"Port 8080.\"\n";
    let [first, second] = [(), ()].map(|()| run_sdk_agent_with(python, recording, extra, "  env: { RENAME_CALLS: \"1\" }\n"));
    assert_eq!(first.output.status.code(), Some(0), "{}{}", stdout(&first.output), stderr(&first.output));
    let timeless =
        |row: &Row| -> Row { row.iter().filter(|(k, _)| !["wall_ms", "scenario_file"].contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect() };
    assert_eq!(timeless(&first.run), timeless(&second.run));
    let steps = |done: &Finished| done.steps.iter().map(timeless).collect::<Vec<_>>();
    assert_eq!(steps(&first), steps(&second));
    assert_eq!((first.run["tool_calls"].as_str(), first.run["llm_retries"].as_str()), ("2", "1"));
}

/// Regression, with real Claude Code: after a context-window error its
/// compaction request (its own summary prompt, all tools declared) was
/// answered with the next recorded turn. Now it gets a summary, and the
/// request it resends, its history summarized, gets the turn.
/// `RELOOP_MORE_AGENTS_BIN` names the folder with `claude` (CI sets it).
fn claude_codes_compaction_after_a_context_error_consumes_no_exchange(bin: &Path) {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "read.recording.yaml",
        "format: reloop.recording/v1\nexchanges:\n  - tool_calls: [{ name: Read, arguments: { file_path: config.toml } }]\n  - text: \"Port 8080.\"\n",
    );
    let scenario = "name: cc\nmodel: claude-sonnet-4-5\ntask: Which port does the service in config.toml listen on?\nrecording: read.recording.yaml\nagent:\n  preset: claude-code\n  files: { config.toml: \"[server]\\nport = 8080\\n\" }\nfaults: [{ exchange: 1, context_length_exceeded: true }]\nexpect: { outcome: final_answer, tool_calls: [Read] }\n";
    let file = write(dir.path(), "cc.yaml", scenario);
    let path = std::env::join_paths(std::iter::once(bin.to_owned()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let out = dir.path().join("out");
    let output =
        Command::new(env!("CARGO_BIN_EXE_reloop")).args(["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]).env("PATH", path).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    let mut steps = read_rows(&out.join("steps.parquet"));
    steps.sort_by_key(|s| s["call_index"].parse::<u64>().unwrap());
    let results: Vec<&str> = steps.iter().map(|s| s["server_result"].as_str()).collect();
    assert_eq!(results, ["ok", "fault:context_length_exceeded", "auxiliary", "ok"]);
    assert_eq!(read_rows(&out.join("runs.parquet"))[0]["final_answer"], "Port 8080.");
}
