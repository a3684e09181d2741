//! The presets' shell patterns ([`reloop_files::scenario::agent::PresetShell`])
//! against the lines the real agents gave their shells
//! (`harness/eval/tests/data/agent-shell-lines/`, captured from the pinned
//! versions): each wrapper yields the model's command, each line of the
//! runtime's own passes through, and no line holding the model's command
//! passes through (it would run for real).

use reloop_files::scenario::agent::AgentPreset;

use super::shim::{matches_any, unwrapped};

/// The model's command in every captured line.
const COMMAND: &str = "touch ../canary && echo built";

macro_rules! line {
    ($name:literal) => {
        include_str!(concat!("../../../tests/data/agent-shell-lines/", $name, ".txt"))
    };
}

fn patterns(preset: AgentPreset) -> (Vec<String>, Vec<String>) {
    let shell = preset.launch().shell;
    let owned = |patterns: &[&str]| patterns.iter().map(|p| (*p).to_owned()).collect();
    (owned(shell.unwrap), owned(shell.passthrough))
}

#[test]
fn every_preset_pattern_compiles_and_each_wrapper_names_its_command() {
    for preset in AgentPreset::ALL {
        let (unwrap, passthrough) = patterns(preset);
        for pattern in unwrap.iter().chain(&passthrough) {
            assert!(regex::Regex::new(pattern).is_ok(), "{preset:?}: {pattern}");
        }
        for pattern in &unwrap {
            let names: Vec<_> = regex::Regex::new(pattern).unwrap().capture_names().flatten().map(str::to_owned).collect();
            assert!(names.iter().any(|name| name == "command" || name == "quoted"), "{preset:?}: {pattern}");
        }
    }
}

#[test]
fn codex_runs_its_snapshot_lines_and_its_wrapper_whose_inner_shell_is_answered() {
    let (unwrap, passthrough) = patterns(AgentPreset::Codex);
    for line in [line!("codex-0.169.0-snapshot"), line!("codex-0.169.0-snapshot-check"), line!("codex-0.169.0-command")] {
        assert!(matches_any(&passthrough, line), "{line:.200}");
    }
    // The wrapper ends by `exec '/bin/bash' -c 'COMMAND'`: that shell is the shim again.
    assert!(line!("codex-0.169.0-command").ends_with(&format!("exec '/bin/bash' -c '{COMMAND}'")));
    assert!(!matches_any(&passthrough, COMMAND));
    assert_eq!(unwrapped(&unwrap, COMMAND), COMMAND);
}

#[test]
fn claude_codes_command_is_the_quoted_eval_and_its_start_lines_pass() {
    let (unwrap, passthrough) = patterns(AgentPreset::ClaudeCode);
    assert_eq!(unwrapped(&unwrap, line!("claude-code-2.1.332-command")), COMMAND);
    assert!(matches_any(&passthrough, line!("claude-code-2.1.332-env")));
    assert!(matches_any(&passthrough, line!("claude-code-2.1.332-snapshot")));
    assert!(!matches_any(&passthrough, line!("claude-code-2.1.332-command")), "the command's wrapper must not run");
    let quoting = line!("claude-code-2.1.332-command").replace(COMMAND, r"echo '\''it'\''s'\'' built");
    assert_eq!(unwrapped(&unwrap, &quoting), "echo 'it's' built");
}

#[test]
fn claude_codes_quoting_is_undone_for_every_form_it_gives_a_command() {
    let (unwrap, passthrough) = patterns(AgentPreset::ClaudeCode);
    // The commands the model asked for; 2.1.332 turned `2>nul` into `2>/dev/null` itself.
    let cases = [
        (line!("claude-code-2.1.332-command-bare-word"), "ls"),
        (line!("claude-code-2.1.332-command-quote"), r#"echo "it's" 'a' \$HOME"#),
        (line!("claude-code-2.1.332-command-pipe-newline-nul"), "printf 'x\ny' | grep -E '^\\s*y' > out.txt 2>/dev/null"),
        (line!("claude-code-2.1.332-command-heredoc"), "cat <<'EOF'\nhi 'there'\nEOF"),
    ];
    for (line, command) in cases {
        assert_eq!(unwrapped(&unwrap, line), command);
        assert!(!matches_any(&passthrough, line), "{line}");
    }
}

#[test]
fn gemini_clis_command_is_inside_its_background_jobs_trap() {
    let (unwrap, passthrough) = patterns(AgentPreset::GeminiCli);
    assert_eq!(unwrapped(&unwrap, line!("gemini-cli-0.61.0-command")), COMMAND);
    let two_lines = line!("gemini-cli-0.61.0-command").replace(COMMAND, "make\nmake test");
    assert_eq!(unwrapped(&unwrap, &two_lines), "make\nmake test");
    assert!(passthrough.is_empty());
}
