//! `reloop import --agent` through the real binary on real Claude Code
//! transcripts (`harness/import/src/agent_world/claude_code.rs`): the Bash
//! calls become the recording's `tool_side:`, the files the session read
//! whole the workspace, and the paths Claude Code's own tools act on are
//! made relative. The replay against the real CLI is
//! `.ci/check_agent_import.py`'s.

use std::path::{Path, PathBuf};

use crate::util::{reloop, repo, stderr, stdout};

fn fixture(name: &str) -> PathBuf {
    repo().join("harness/import/tests/fixtures/sessions/claude-code").join(name)
}

fn yaml(path: &Path) -> serde_json::Value {
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

#[test]
fn a_claude_code_subagent_becomes_claude_code_on_its_recording_with_its_18_commands_and_28_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("spotter__6c2214d7__subagent-agent-afc096d.jsonl");
    let output = reloop(&repo(), &["import", file.to_str().unwrap(), "--agent", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let name = "spotter-6c2214d7-subagent-agent-afc096d-claude-code";
    let said = stdout(&output);
    assert!(
        said.contains(&format!("agent scenario {name} (claude-code): 18 shell commands in tool_side, 28 files in the workspace snapshot, 2 gaps")),
        "{said}"
    );
    assert!(said.contains("priv/static/assets/app.js: read only in part"), "{said}");

    let scenario = yaml(&dir.path().join(format!("{name}.yaml")));
    assert_eq!((&scenario["agent"]["preset"], &scenario["agent"]["tools"]), (&serde_json::json!("claude-code"), &serde_json::json!("replay")));
    assert_eq!((&scenario["wire"], &scenario["context_window"]), (&serde_json::json!("anthropic"), &serde_json::json!(200_000)));
    let files = scenario["agent"]["files"].as_object().unwrap();
    assert_eq!(files.len(), 28);
    assert_eq!(files["test/test_helper.exs"], "ExUnit.start()\n", "the listing's numbers and reminder taken off, the last line end kept");

    let recording = yaml(&dir.path().join(format!("{name}.recording.yaml")));
    let tool_side = recording["tool_side"].as_array().unwrap();
    assert_eq!(tool_side.len(), 18);
    let tree = tool_side.iter().find(|c| c["command"].as_str().unwrap().starts_with("tree ")).unwrap();
    assert_eq!(
        (&tree["stdout"], &tree["exit_code"], tree.get("cwd")),
        (&serde_json::json!("(eval):1: command not found: tree"), &serde_json::json!(127), None)
    );
    assert!(tool_side.iter().all(|c| c["after_exchange"].is_u64()), "each placed after the exchange that asked for it");
    // Claude Code reads and edits files itself: their paths are relative to the
    // root; the commands stay as the model wrote them, as the shim matches them.
    let text = std::fs::read_to_string(dir.path().join(format!("{name}.recording.yaml"))).unwrap();
    assert!(!text.contains("file_path: /home/USER/") && text.contains("file_path: mix.exs"), "file_path made relative");
    assert!(tool_side[0]["command"].as_str().unwrap().starts_with("find /home/USER/projects/spotter-worktrees/spotter-0rt -type f"));
}

#[test]
fn calls_the_pinned_claude_code_lacks_are_left_out_and_a_command_that_never_ran_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("spotter__8463c716__subagent-agent-a7be2f0.jsonl");
    let output = reloop(&repo(), &["import", file.to_str().unwrap(), "--agent", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stdout(&output);
    assert!(said.contains("(claude-code): 10 shell commands in tool_side"), "{said}");
    assert!(said.contains("never ran (Sibling tool call errored): not in tool_side"), "{said}");
    assert!(said.contains("Glob"), "Glob, deferred in 2.1.332, is left out: {said}");
}
