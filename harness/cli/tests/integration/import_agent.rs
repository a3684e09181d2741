//! `reloop import --agent` through the real binary: real Codex rollouts
//! become black-box scenarios of Codex itself, one per user turn, their
//! recordings holding the session's shell commands as `tool_side:` and
//! their workspace the files the session read in full
//! (`harness/import/src/agent_world/`, docs/import.md). The replay against
//! the real CLI is `.ci/check_agent_import.py`'s.

use std::path::{Path, PathBuf};

use crate::util::{reloop, repo, stderr, stdout};

fn fixture(name: &str) -> PathBuf {
    repo().join("harness/import/tests/fixtures/sessions").join(name)
}

fn yaml(path: &Path) -> serde_json::Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn import(file: &Path, out: &Path) -> std::process::Output {
    reloop(&repo(), &["import", file.to_str().unwrap(), "--agent", "--out", out.to_str().unwrap()])
}

#[test]
fn a_unified_exec_rollout_becomes_codex_on_its_recording_one_scenario_per_user_turn() {
    let dir = tempfile::tempdir().unwrap();
    let output = import(&fixture("codex/codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"), dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let name = "codemie-code-rollout-2026-05-11t11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799";
    assert!(stdout(&output).contains(&format!("agent scenario {name}-turn-2-codex (codex): 42 shell commands in tool_side")), "{}", stdout(&output));
    // The first turn (a question, one command) and the task's turn.
    assert_eq!(yaml(&dir.path().join(format!("{name}-codex.recording.yaml")))["tool_side"].as_array().map(Vec::len), Some(1));
    let scenario = yaml(&dir.path().join(format!("{name}-turn-2-codex.yaml")));
    assert_eq!((&scenario["agent"]["preset"], &scenario["agent"]["tools"]), (&serde_json::json!("codex"), &serde_json::json!("replay")));
    assert_eq!(scenario["task"], "let's update the defailt context compart to 90 in env var");
    assert_eq!(scenario["expect"]["outcome"], "final_answer");
    let calls: Vec<&str> = scenario["expect"]["tool_calls"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(calls.iter().all(|c| *c == "exec_command" || *c == "write_stdin"), "apply_patch and update_plan, which 0.169 lacks, are left out: {calls:?}");
    let files = scenario["agent"]["files"].as_object().unwrap();
    assert_eq!(files.keys().collect::<Vec<_>>(), ["package.json"], "the one file read in full (`cat package.json`)");
    assert!(files["package.json"].as_str().unwrap().starts_with("{\n  \"name\": \"@codemieai/code\",\n"));

    let recording = yaml(&dir.path().join(format!("{name}-turn-2-codex.recording.yaml")));
    let tool_side = recording["tool_side"].as_array().unwrap();
    assert_eq!(tool_side.len(), 42);
    let entry = |prefix: &str| tool_side.iter().find(|c| c["command"].as_str().unwrap().starts_with(prefix)).unwrap_or_else(|| panic!("{prefix}"));
    // Every exec_command here was still running after its yield: its output is its write_stdin polls'.
    let git = entry("git status --short");
    assert_eq!((git.get("stdout"), git.get("exit_code"), &git["cwd"]), (None, None, &serde_json::json!(".")));
    let missing = entry("rg -n \"compact|compaction|compacting|summar|context\" node_modules/opencode-ai");
    assert_eq!(missing["exit_code"], 2);
    assert!(missing["stdout"].as_str().unwrap().starts_with("rg: node_modules/opencode-ai: No such file or directory (os error 2)\n"), "{missing}");
    // A refused write_stdin (Ctrl-C into closed stdin) is neither output nor input.
    let skill = &tool_side[0];
    assert!(skill["stdout"].as_str().unwrap().starts_with("---\nname: brainstorming\n"), "{skill}");
    assert_eq!(skill.get("stdin"), None);
    // Codex acts on workdir itself: made relative to the root, which the fresh workspace is.
    let text = std::fs::read_to_string(dir.path().join(format!("{name}-turn-2-codex.recording.yaml"))).unwrap();
    assert!(!text.contains("workdir: /Users/") && text.contains("workdir: '.'"), "workdir made relative");

    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join(format!("{name}.import.json"))).unwrap()).unwrap();
    let gaps: Vec<&str> = report["agent"][1]["gaps"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
    for gap in [
        "src/agents/plugins/codemie-code.plugin.ts: edited at line 279 but never read in full before",
        "Codex cut its output to the call's token budget",
        "3 calls left out of the agent's recording (the first at line 256): codex declares no tool `apply_patch`",
    ] {
        assert!(gaps.iter().any(|g| g.contains(gap)), "{gap} not in {gaps:#?}");
    }
}

#[test]
fn shell_argv_calls_are_their_bash_lc_scripts_and_sed_ranges_make_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let output = import(&fixture("codex/agentcmd__rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl"), dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let name = "agentcmd-rollout-2025-09-25t15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e-codex";
    let recording = yaml(&dir.path().join(format!("{name}.recording.yaml")));
    let tool_side = recording["tool_side"].as_array().unwrap();
    assert_eq!(tool_side.len(), 34);
    assert_eq!((&tool_side[0]["command"], &tool_side[0]["cwd"]), (&serde_json::json!("ls"), &serde_json::json!(".")));
    assert!(tool_side[0]["stdout"].as_str().unwrap().starts_with("CLAUDE.md\nREADME.md\napps\n"));
    let scenario = yaml(&dir.path().join(format!("{name}.yaml")));
    let files = scenario["agent"]["files"].as_object().unwrap();
    // `sed -n '1,200p'`, `'200,400p'`, `'400,800p'` of types.ts: the last came back short, so the file is whole.
    let types = files["packages/services/src/types.ts"].as_str().unwrap();
    assert!(types.starts_with("import { z } from \"zod\";\n") && types.contains("export interface PaginatedResult<T> {"), "{:.200}", types);
    assert!(files.contains_key("packages/services/package.json"), "`cat` reads the whole file");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join(name.replace("-codex", ".import.json"))).unwrap()).unwrap();
    let gaps = report["agent"][0]["gaps"].to_string();
    assert!(gaps.contains("34 calls left out of the agent's recording (the first at line 8): codex declares no tool `shell`"), "{gaps}");
}

#[test]
fn an_agent_without_a_tool_side_reader_is_refused_naming_the_file_and_the_agents_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("opencode/opencode-1-18-33-tools-against-reloop-mock.json");
    let output = import(&file, dir.path());
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    let error = stderr(&output);
    assert!(error.contains("opencode-1-18-33-tools-against-reloop-mock.json") && error.contains("--agent reads sessions of: codex, pi, gemini-cli"), "{error}");
    assert_eq!(std::fs::read_dir(dir.path()).map(|d| d.count()).unwrap_or(0), 0, "nothing written");
}

#[test]
fn a_real_pi_session_becomes_pi_on_its_recording_with_every_bash_call_in_tool_side() {
    let dir = tempfile::tempdir().unwrap();
    let output = import(&fixture("pi/pi-mono__compact-2638daee__first-65-lines.jsonl"), dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let name = "pi-mono-compact-2638daee-first-65-lines-pi";
    let scenario = yaml(&dir.path().join(format!("{name}.yaml")));
    assert_eq!((&scenario["agent"]["preset"], &scenario["agent"]["tools"]), (&serde_json::json!("pi"), &serde_json::json!("replay")));
    assert_eq!(scenario["context_window"], 200_000, "the built-in scenario's window, not none");
    let recording = yaml(&dir.path().join(format!("{name}.recording.yaml")));
    let tool_side = recording["tool_side"].as_array().unwrap();
    assert_eq!(tool_side.len(), 19, "every bash call of the session");
    // The command line is the model's, byte for byte; a failed one keeps pi's exit code, not its status line.
    assert!(tool_side[0]["command"].as_str().unwrap().starts_with("cd /Users/badlogic/workspaces/pi-mono && gh issue view 288"), "{}", tool_side[0]);
    let failed: Vec<&serde_json::Value> = tool_side.iter().filter(|c| c.get("exit_code").is_some()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!((failed[0]["exit_code"].as_i64(), failed[0].get("stdout")), (Some(1), None), "`(no output)` is no output");
    // pi's older edit form stays in the recording: the pinned pi still takes it.
    let text = std::fs::read_to_string(dir.path().join(format!("{name}.recording.yaml"))).unwrap();
    assert!(text.contains("oldText") && !text.contains("path: /Users/badlogic"), "edit paths made relative");
    let report = stdout(&output);
    assert!(report.contains("packages/coding-agent/src/core/sdk.ts: edited at line 56 but never read in full before"), "{report}");
}

#[test]
fn a_real_gemini_cli_session_becomes_gemini_cli_with_its_commands_as_its_shell_receives_them() {
    let dir = tempfile::tempdir().unwrap();
    let output = import(&fixture("gemini-cli/aim__control_pro.json"), dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let recording = yaml(&dir.path().join("aim-control-pro-gemini-cli.recording.yaml"));
    let tool_side = recording["tool_side"].as_array().unwrap();
    assert_eq!(tool_side.len(), 18, "every run_shell_command of the session");
    for command in tool_side {
        let line = command["command"].as_str().unwrap();
        assert_eq!(line, line.trim(), "Gemini CLI trims the command before its shell gets it");
    }
    let in_repo: Vec<&serde_json::Value> = tool_side.iter().filter(|c| c["cwd"] == "django_repo").collect();
    assert_eq!(in_repo.len(), 5, "its dir_path, relative to the root: {in_repo:?}");
    assert_eq!((tool_side[0]["exit_code"].as_i64(), tool_side[0]["stdout"].as_str()), (Some(127), Some("/usr/bin/bash: line 1: python: command not found")));
    assert!(
        tool_side.iter().all(|c| !c["stdout"].as_str().unwrap_or_default().contains("Process Group PGID")),
        "the trailer lines are Gemini CLI's, not output"
    );
}
