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
    let file = fixture("pi/agent-history__pi-session-01.redacted.jsonl");
    let output = import(&file, dir.path());
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    let error = stderr(&output);
    assert!(error.contains("agent-history__pi-session-01.redacted.jsonl") && error.contains("--agent reads sessions of: codex"), "{error}");
    assert_eq!(std::fs::read_dir(dir.path()).map(|d| d.count()).unwrap_or(0), 0, "nothing written");
}
