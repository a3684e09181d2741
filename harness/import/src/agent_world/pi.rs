//! pi's tool calls as its shell and workspace met them
//! (badlogic/pi-mono `packages/coding-agent/src/core/tools`).
//!
//! - `bash` (`command`, `timeout`): `/bin/bash -c COMMAND` (no wrapping, so
//!   the command line is the model's). The model sees stdout and stderr
//!   merged, `(no output)` for none; a command that fails ends
//!   `\n\nCommand exited with code N` (the result flagged as an error); one
//!   cut to pi's line or byte limit ends `\n\n[Showing lines A-B of N. Full
//!   output: PATH]`; a timed-out or aborted one ends `Command timed out
//!   after N seconds` or `Command aborted`.
//! - `read` (`path`, `offset`, `limit`), `edit`, `write` act in-process on
//!   the workspace: a read without a notice reached the file's end; one cut
//!   short ends `\n\n[Showing lines A-B of N. Use offset=…]` or `\n\n[K more
//!   lines in file. Use offset=…]`. Their `path` is made relative to the
//!   workspace root, since the replay runs in a fresh workspace.

use reloop_recording::tool_side::ShellCommand;
use serde_json::Value;

use super::{World, calls_with_results, relative_argument};
use crate::session::{Arguments, ImportedSession, ToolCall, ToolResult};

/// The in-process tools whose `path` pi resolves itself.
const FILE_TOOLS: [&str; 3] = ["read", "edit", "write"];

pub(super) fn world(session: &mut ImportedSession, root: Option<&str>) -> World {
    let cwd = session.cwd.clone();
    let root = root.or(cwd.as_deref()).map(str::to_owned);
    let mut world = World::default();
    calls_with_results(session, |call| relative_path(call, cwd.as_deref(), root.as_deref()), |call, result| answered(&mut world, call, result));
    world
}

/// What `call` met, as `result` tells it.
fn answered(world: &mut World, call: &ToolCall, result: &ToolResult) {
    let Arguments::Json(Value::Object(arguments)) = &call.arguments else { return };
    let path = arguments.get("path").and_then(Value::as_str);
    match (call.name.as_str(), path) {
        ("bash", _) => {
            let Some(command) = arguments.get("command").and_then(Value::as_str) else { return };
            match ran_of(&result.output, result.is_error) {
                Ran::Exited { output, exit_code, cut } => {
                    if cut {
                        world.gap(format!(
                            "line {}: `{command}`: pi cut its output to its limit: the replay serves the cut text, without pi's notice",
                            result.line
                        ));
                    }
                    world.command(&call.id, ShellCommand { command: command.to_owned(), stdout: output, exit_code, ..ShellCommand::default() });
                }
                Ran::Stopped(how) => {
                    world.gap(format!("line {}: `{command}` {how} in the session: not in tool_side (a replay cannot stop it the same way)", result.line));
                }
            }
        }
        ("read", Some(path)) if !result.is_error => read(world, path, arguments, &result.output, result.line),
        ("edit", Some(path)) => world.snapshot().edit(path, result.line),
        ("write", Some(path)) => world.snapshot().create(path, result.line),
        _ => {}
    }
}

/// What pi told the model of a `bash` call.
#[derive(Debug, PartialEq)]
enum Ran {
    /// It exited: the output (merged), the status, and whether pi cut it.
    Exited { output: String, exit_code: i32, cut: bool },
    /// It timed out or was aborted, as pi said it.
    Stopped(String),
}

fn ran_of(text: &str, is_error: bool) -> Ran {
    // Only a result pi flagged as an error ends with its status line.
    let (output, status) = match text.rsplit_once("\n\n") {
        Some((output, status)) if is_error && is_status(status) => (output, Some(status)),
        _ if is_error && is_status(text) => ("", Some(text)),
        _ => (text, None),
    };
    let exit_code = match status {
        Some(status) => match status.strip_prefix("Command exited with code ").and_then(|code| code.parse().ok()) {
            Some(code) => code,
            None => return Ran::Stopped(status.trim_start_matches("Command ").to_owned()),
        },
        _ => 0,
    };
    let (output, cut) = match output.rsplit_once("\n\n[Showing ") {
        Some((shown, notice)) if notice.contains("Full output: ") && notice.ends_with(']') => (shown, true),
        _ => (output, false),
    };
    let output = if output == "(no output)" { "" } else { output };
    Ran::Exited { output: output.to_owned(), exit_code, cut }
}

fn is_status(text: &str) -> bool {
    text.starts_with("Command exited with code ") || text.starts_with("Command timed out after ") || text == "Command aborted"
}

/// A `read`'s text: lines from `offset` (1-based) to the file's end, or to
/// where pi's notice says it stopped. An image, or a first line over pi's
/// byte limit, shows no text of the file.
fn read(world: &mut World, path: &str, arguments: &serde_json::Map<String, Value>, text: &str, line: usize) {
    if text.starts_with("Read image file [") || (text.starts_with("[Line ") && text.ends_with(']')) {
        world.gap(format!("line {line}: read of {path} shows no text of it: not in the snapshot"));
        return;
    }
    let first = arguments.get("offset").and_then(Value::as_u64).map_or(1, |offset| usize::try_from(offset.max(1)).unwrap_or(usize::MAX));
    match text.rsplit_once("\n\n[").filter(|(_, notice)| notice.contains("Use offset=")) {
        Some((shown, _)) => {
            // More lines follow, so the last one shown ended with a newline.
            let shown = format!("{shown}\n");
            let lines = shown.split_inclusive('\n').count();
            world.snapshot().read_lines(path, first, first + lines - 1, &shown, line);
        }
        None if first == 1 => world.snapshot().read_whole(path, text, line),
        None => {
            let lines = text.split_inclusive('\n').count();
            world.snapshot().read_lines(path, first, first + lines, text, line);
        }
    }
}

/// The call's `path` (absolute, or relative to the session's folder) made
/// relative to the workspace root, where the replay's pi starts.
fn relative_path(call: &mut ToolCall, cwd: Option<&str>, root: Option<&str>) {
    if !FILE_TOOLS.contains(&call.name.as_str()) {
        return;
    }
    let Arguments::Json(Value::Object(arguments)) = &mut call.arguments else { return };
    relative_argument(arguments, "path", cwd, root);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use crate::session::{AssistantTurn, Item};

    /// A pi session in /home/me/p of `steps`: each a call, its result text
    /// and whether pi flagged it an error.
    fn session(steps: Vec<(&str, Value, &str, bool)>) -> ImportedSession {
        let mut items = Vec::new();
        for (index, (name, arguments, output, is_error)) in steps.into_iter().enumerate() {
            let id = format!("call_{index}");
            let call = ToolCall { id: id.clone(), name: name.into(), arguments: Arguments::Json(arguments) };
            items.push(Item::Assistant(AssistantTurn { tool_calls: vec![call], line: 2 * index + 1, ..AssistantTurn::default() }));
            items.push(Item::ToolResult(ToolResult { call_id: id, output: output.into(), is_error, line: 2 * index + 2 }));
        }
        ImportedSession { format: "pi", agent: Some("pi"), cwd: Some("/home/me/p".into()), items, ..ImportedSession::default() }
    }

    #[test]
    fn bash_results_give_merged_output_and_the_exit_code_of_pi_s_status_line() {
        assert_eq!(ran_of("a\nb\n", false), Ran::Exited { output: "a\nb\n".into(), exit_code: 0, cut: false });
        assert_eq!(ran_of("(no output)", false), Ran::Exited { output: String::new(), exit_code: 0, cut: false });
        assert_eq!(ran_of("(no output)\n\nCommand exited with code 1", true), Ran::Exited { output: String::new(), exit_code: 1, cut: false });
        assert_eq!(ran_of("boom\n\n\nCommand exited with code 2", true), Ran::Exited { output: "boom\n".into(), exit_code: 2, cut: false });
        assert_eq!(ran_of("Command exited with code 127", true), Ran::Exited { output: String::new(), exit_code: 127, cut: false });
        assert_eq!(
            ran_of("tail\n\n[Showing lines 3-4 of 4. Full output: /tmp/pi-bash-1.log]", false),
            Ran::Exited { output: "tail".into(), exit_code: 0, cut: true }
        );
        assert_eq!(ran_of("so far\n\nCommand timed out after 5 seconds", true), Ran::Stopped("timed out after 5 seconds".into()));
        assert_eq!(
            ran_of("Command exited with code 3 said the test", false),
            Ran::Exited { output: "Command exited with code 3 said the test".into(), exit_code: 0, cut: false }
        );
    }

    #[test]
    fn reads_build_the_snapshot_and_file_paths_become_relative_to_the_root() {
        let mut session = session(vec![
            ("read", serde_json::json!({ "path": "/home/me/p/src/a.ts" }), "one\ntwo\n", false),
            ("read", serde_json::json!({ "path": "b.ts", "limit": 1 }), "first\n\n[1 more lines in file. Use offset=2 to continue.]", false),
            ("read", serde_json::json!({ "path": "b.ts", "offset": 2 }), "second", false),
            ("edit", serde_json::json!({ "path": "src/a.ts", "oldText": "one", "newText": "uno" }), "Successfully replaced text in src/a.ts.", false),
            ("edit", serde_json::json!({ "path": "blind.ts", "oldText": "x", "newText": "y" }), "Successfully replaced text in blind.ts.", false),
            ("read", serde_json::json!({ "path": "logo.png" }), "Read image file [image/png]", false),
            ("bash", serde_json::json!({ "command": "cd /home/me/p && make" }), "built\n", false),
        ]);
        let world = world(&mut session, Some("/home/me/p"));
        let Item::Assistant(first) = &session.items[0] else { unreachable!() };
        assert_eq!(first.tool_calls[0].arguments, Arguments::Json(serde_json::json!({ "path": "src/a.ts" })));
        let (files, gaps) = world.snapshot.finish();
        assert_eq!(files, BTreeMap::from([("b.ts".to_owned(), "first\nsecond".to_owned()), ("src/a.ts".to_owned(), "one\ntwo\n".to_owned())]));
        assert!(gaps.iter().any(|gap| gap.starts_with("blind.ts: edited")), "{gaps:?}");
        assert!(world.gaps.iter().any(|gap| gap.contains("read of logo.png shows no text")), "{:?}", world.gaps);
        let commands: Vec<&ShellCommand> = world.commands.iter().map(|(_, command)| command).collect();
        assert_eq!(commands, [&ShellCommand { command: "cd /home/me/p && make".into(), stdout: "built\n".into(), ..ShellCommand::default() }]);
    }
}
