//! Gemini CLI's tool calls as its shell and workspace met them
//! (google-gemini/gemini-cli `packages/core/src/tools`).
//!
//! - `run_shell_command` (`command`, `dir_path`, older `directory`): `bash
//!   -c` from PATH, the command wrapped for background jobs (the preset's
//!   shim unwraps it, so the command line is the model's). The model sees
//!   `Output: …` then, a line each, `Error: …`, `Exit Code: N`, `Signal: …`,
//!   `Background PIDs: …` and `Process Group PGID: …` (0.61 leaves out the
//!   empty ones; older versions start with `Command:` and `Directory:` and
//!   write `(none)`), the whole inside `<untrusted_context>` since 0.5x.
//!   Stdout and stderr come merged and trimmed; `(empty)` is none.
//! - `read_file`, `write_file`, `replace` act in-process on the workspace.
//!   A cut read starts `IMPORTANT: The file content has been truncated.`
//!   with `Status: Showing lines A-B of N total lines.`; their paths are made
//!   relative to the workspace root, since the replay runs in a fresh one.

use reloop_recording::tool_side::ShellCommand;
use serde_json::Value;

use super::{World, calls_with_results, relative_argument, relative_to_root};
use crate::session::{Arguments, ImportedSession, ToolCall, ToolResult};

/// The argument names Gemini CLI's file tools give a path, newest first.
const PATH_KEYS: [&str; 3] = ["file_path", "absolute_path", "path"];

/// The lines `run_shell_command` puts after the output, in its order.
const TRAILERS: [&str; 5] = ["Error: ", "Exit Code: ", "Signal: ", "Background PIDs: ", "Process Group PGID: "];

pub(super) fn world(session: &mut ImportedSession, root: Option<&str>) -> World {
    let cwd = session.cwd.clone();
    let root = root.or(cwd.as_deref()).map(str::to_owned);
    let mut world = World::default();
    calls_with_results(
        session,
        |call| relative_paths(call, cwd.as_deref(), root.as_deref()),
        |call, result| answered(&mut world, call, result, cwd.as_deref(), root.as_deref()),
    );
    world
}

/// What `call` met, as `result` tells it.
fn answered(world: &mut World, call: &ToolCall, result: &ToolResult, cwd: Option<&str>, root: Option<&str>) {
    let Arguments::Json(Value::Object(arguments)) = &call.arguments else { return };
    let path = PATH_KEYS.iter().find_map(|key| arguments.get(*key).and_then(Value::as_str));
    let text = untrusted_content(&result.output);
    match (call.name.as_str(), path) {
        ("run_shell_command", _) => {
            let Some(command) = arguments.get("command").and_then(Value::as_str) else { return };
            let Some((stdout, exit_code)) = ran_of(&text) else {
                world.gap(format!(
                    "line {}: `{command}` did not run to its end in the session (cancelled or sent to the background): not in tool_side",
                    result.line
                ));
                return;
            };
            let dir = arguments.get("dir_path").or_else(|| arguments.get("directory")).and_then(Value::as_str);
            let folder = dir.and_then(|dir| relative_to_root(dir, cwd, root));
            world.command(&call.id, ShellCommand { command: as_run(command), stdout, exit_code, cwd: folder, ..ShellCommand::default() });
        }
        ("read_file", Some(path)) if !result.is_error => read(world, path, &text, result.line),
        ("replace", Some(path)) => world.snapshot().edit(path, result.line),
        ("write_file", Some(path)) => world.snapshot().create(path, result.line),
        _ => {}
    }
}

/// The command line Gemini CLI hands its shell for the model's `command`:
/// a leading `bash -c` (or `sh`, `zsh`) and the quotes around its script
/// taken off, then trimmed, a trailing backslash given a space
/// (`stripShellWrapper`, `wrapCommandForBackgroundPIDs`); the shim unwraps
/// the background-job wrapper around it.
fn as_run(command: &str) -> String {
    let stripped = strip_shell_wrapper(command).unwrap_or(command);
    let mut run = stripped.trim().to_owned();
    if run.ends_with('\\') {
        run.push(' ');
    }
    run
}

/// The script of `bash -c SCRIPT` (or `sh`, `zsh`, any folder), its
/// quotes taken off; `None` for a command that is no such call.
fn strip_shell_wrapper(command: &str) -> Option<&str> {
    let rest = command.trim_start();
    let (program, rest) = rest.split_once(char::is_whitespace)?;
    if !matches!(program.rsplit('/').next(), Some("sh" | "bash" | "zsh")) {
        return None;
    }
    let script = rest.trim_start().strip_prefix("-c")?;
    if !script.starts_with(char::is_whitespace) {
        return None;
    }
    let script = script.trim();
    let quoted = script.len() >= 2 && [b'"', b'\''].into_iter().any(|quote| script.as_bytes()[0] == quote && script.as_bytes()[script.len() - 1] == quote);
    Some(if quoted { &script[1..script.len() - 1] } else { script })
}

/// `text` without the `<untrusted_context>` wrapper Gemini CLI puts around
/// a tool's output, its escaped closing tag restored.
fn untrusted_content(text: &str) -> String {
    match text.strip_prefix("<untrusted_context>\n").and_then(|rest| rest.strip_suffix("\n</untrusted_context>")) {
        Some(inner) => inner.replace("&lt;/untrusted_context&gt;", "</untrusted_context>"),
        None => text.to_owned(),
    }
}

/// The output and exit code of a command that ran to its end; `None` for
/// one cancelled or sent to the background.
fn ran_of(text: &str) -> Option<(String, i32)> {
    let start = if text.starts_with("Output: ") { 0 } else { text.find("\nOutput: ")? + 1 };
    let mut body = &text[start + "Output: ".len()..];
    let mut exit_code = 0;
    while let Some((rest, last)) = body.rsplit_once('\n') {
        let Some(trailer) = TRAILERS.iter().find(|trailer| last.starts_with(**trailer)) else { break };
        if *trailer == "Exit Code: " {
            exit_code = last[trailer.len()..].trim().parse().unwrap_or(0);
        }
        body = rest;
    }
    let stdout = if body == "(empty)" { "" } else { body };
    Some((stdout.to_owned(), exit_code))
}

/// A `read_file`'s text: the whole file, or the lines its truncation
/// notice names.
fn read(world: &mut World, path: &str, text: &str, line: usize) {
    if !text.starts_with("\nIMPORTANT: The file content has been truncated.") {
        world.snapshot().read_whole(path, text, line);
        return;
    }
    let range = text.split_once("Status: Showing lines ").and_then(|(_, rest)| {
        let (range, rest) = rest.split_once(" of ")?;
        let (first, last) = range.split_once('-')?;
        let total: usize = rest.split_once(' ')?.0.parse().ok()?;
        Some((first.parse::<usize>().ok()?, last.parse::<usize>().ok()?, total))
    });
    let shown = text.split_once("--- FILE CONTENT (truncated) ---\n").map(|(_, shown)| shown);
    match (range, shown) {
        (Some((first, last, total)), Some(shown)) if first >= 1 && last >= first => {
            // Lines follow the last one shown, so it ended with a newline.
            let shown = if last < total && !shown.ends_with('\n') { format!("{shown}\n") } else { shown.to_owned() };
            world.snapshot().read_lines(path, first, if last < total { last } else { last + 1 }, &shown, line);
        }
        _ => world.gap(format!("line {line}: a cut read of {path} whose notice reloop cannot read: not in the snapshot")),
    }
}

/// The call's path and folder arguments (absolute, or relative to the
/// session's folder) made relative to the workspace root, where the
/// replay's Gemini CLI starts.
fn relative_paths(call: &mut ToolCall, cwd: Option<&str>, root: Option<&str>) {
    let Arguments::Json(Value::Object(arguments)) = &mut call.arguments else { return };
    for key in PATH_KEYS.iter().chain(&["dir_path", "directory"]) {
        relative_argument(arguments, key, cwd, root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::session::{AssistantTurn, Item};

    fn session(steps: Vec<(&str, Value, &str)>) -> ImportedSession {
        let mut items = Vec::new();
        for (index, (name, arguments, output)) in steps.into_iter().enumerate() {
            let id = format!("{name}__call_{index}");
            let call = ToolCall { id: id.clone(), name: name.into(), arguments: Arguments::Json(arguments) };
            items.push(Item::Assistant(AssistantTurn { tool_calls: vec![call], line: 2 * index + 1, ..AssistantTurn::default() }));
            items.push(Item::ToolResult(ToolResult { call_id: id, output: output.into(), is_error: false, line: 2 * index + 2 }));
        }
        ImportedSession { format: "gemini-cli", agent: Some("gemini-cli"), cwd: Some("/w".into()), items, ..ImportedSession::default() }
    }

    #[test]
    fn shell_results_of_every_version_give_output_and_exit_code() {
        // 0.61, as the fixture gemini-cli-0-61-0-doom-loop-against-reloop-mock.jsonl holds it.
        let current = untrusted_content("<untrusted_context>\nOutput: [server]\nport = 8080\nProcess Group PGID: 4414\n</untrusted_context>");
        assert_eq!(ran_of(&current), Some(("[server]\nport = 8080".into(), 0)));
        let failed = "Output: no such file\nExit Code: 1\nProcess Group PGID: 7";
        assert_eq!(ran_of(failed), Some(("no such file".into(), 1)));
        let older = "Command: ls\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: (none)\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 12";
        assert_eq!(ran_of(older), Some((String::new(), 0)));
        let output_with_a_trailer_like_line = "Output: Error: shown by the program\nok\nProcess Group PGID: 9";
        assert_eq!(ran_of(output_with_a_trailer_like_line), Some(("Error: shown by the program\nok".into(), 0)));
        assert_eq!(ran_of("Command moved to background (PID: 5). Output hidden. Press Ctrl+B to view."), None);
    }

    #[test]
    fn the_command_is_the_line_gemini_cli_hands_its_shell() {
        assert_eq!(as_run("cat <<'EOF' > a.py\nprint(1)\nEOF\npython3 a.py\n"), "cat <<'EOF' > a.py\nprint(1)\nEOF\npython3 a.py");
        assert_eq!(as_run("  ls \\"), "ls \\ ");
        assert_eq!(as_run("bash -c 'make test'"), "make test");
        assert_eq!(as_run("/bin/sh -c \"echo hi\""), "echo hi");
        assert_eq!(as_run("bashful -c x"), "bashful -c x");
        assert_eq!(as_run("bash -cx y"), "bash -cx y");
    }

    #[test]
    fn commands_keep_their_folder_and_reads_build_the_snapshot() {
        let truncated = "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-2 of 3 total lines.\nAction: To read more...\n\n--- FILE CONTENT (truncated) ---\nl1\nl2";
        let mut session = session(vec![
            (
                "run_shell_command",
                serde_json::json!({ "command": "make", "dir_path": "/w/sub" }),
                "<untrusted_context>\nOutput: built\nProcess Group PGID: 3\n</untrusted_context>",
            ),
            ("read_file", serde_json::json!({ "file_path": "/w/a.txt" }), "whole\n"),
            ("read_file", serde_json::json!({ "file_path": "/w/long.txt" }), truncated),
            (
                "replace",
                serde_json::json!({ "file_path": "/w/a.txt", "old_string": "whole", "new_string": "part" }),
                "Successfully modified file: /w/a.txt (1 replacements).",
            ),
        ]);
        let world = world(&mut session, Some("/w"));
        let Item::Assistant(first) = &session.items[0] else { unreachable!() };
        assert_eq!(first.tool_calls[0].arguments, Arguments::Json(serde_json::json!({ "command": "make", "dir_path": "sub" })));
        let commands: Vec<&ShellCommand> = world.commands.iter().map(|(_, command)| command).collect();
        assert_eq!(commands, [&ShellCommand { command: "make".into(), stdout: "built".into(), cwd: Some("sub".into()), ..ShellCommand::default() }]);
        let (files, gaps) = world.snapshot.finish();
        assert_eq!(files, BTreeMap::from([("a.txt".to_owned(), "whole\n".to_owned())]));
        assert_eq!(gaps, ["long.txt: read only in part (from line 6): not in the snapshot"]);
    }
}
