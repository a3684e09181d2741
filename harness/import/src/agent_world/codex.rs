//! Codex's tool calls as its shell met them (openai/codex `codex-rs/core`).
//!
//! - `exec_command` (unified exec, 0.1xx): `cmd` runs as `SHELL -lc CMD`
//!   (the snapshot wrapper ends in `exec '/bin/bash' -c 'CMD'`, which the
//!   preset's shim unwraps), in `workdir` (default: the turn's cwd). The
//!   model sees `Chunk ID … / Wall time … / Process exited with code N /
//!   Original token count … / Output:` then stdout and stderr merged; a
//!   process still running after `yield_time_ms` says `Process running with
//!   session ID S`, and `write_stdin` calls on S give the rest, the last
//!   with the exit code: the command's output is their concatenation.
//! - `shell` (0.40 to 0.77, argv) and `shell_command` (a string): the
//!   command inside `bash -lc`; output `{"output", "metadata": {"exit_code"}}`
//!   or `Exit code: N / Wall time … / Output:`.
//! - `apply_patch` (a custom tool, or `apply_patch <<EOF` inside a shell
//!   command, which Codex intercepts): acts in-process on the workspace,
//!   never reaching the shell, so the files it updates must be in the
//!   snapshot.
//!
//! Codex acts on `workdir` and on the patch's file names itself, so a
//! recorded absolute path under the workspace root is rewritten relative
//! (the replay runs in a fresh workspace); the command line is the model's
//! and is kept byte for byte, as the shim matches it.

use std::collections::BTreeMap;

use reloop_recording::tool_side::ShellCommand;
use serde_json::Value;

use super::shell_words::read_of;
use super::{World, relative_to_root};
use crate::session::{Arguments, ImportedSession, Item, ToolCall};

/// What Codex told the model of a command's run.
#[derive(Debug, Default, PartialEq)]
struct Ran {
    output: String,
    exit_code: Option<i32>,
    /// Still running: the session id `write_stdin` continues.
    running: Option<u64>,
    /// Codex cut the output to the call's token budget.
    truncated: bool,
}

/// A command started, waiting for the `write_stdin` calls that finish it.
struct Pending {
    call_id: String,
    command: ShellCommand,
    /// Where it is read from, for the snapshot: its source line and read.
    line: usize,
    tty: bool,
}

pub(super) fn world(session: &mut ImportedSession, root: Option<&str>) -> World {
    let cwd = session.cwd.clone();
    let mut world = World::default();
    let mut calls: BTreeMap<String, (ToolCall, usize)> = BTreeMap::new();
    let mut running: BTreeMap<u64, Pending> = BTreeMap::new();
    for item in &mut session.items {
        match item {
            Item::Assistant(turn) => {
                for call in &mut turn.tool_calls {
                    relative_paths(call, cwd.as_deref(), root);
                    calls.insert(call.id.clone(), (call.clone(), turn.line));
                }
            }
            Item::ToolResult(result) => {
                let Some((call, line)) = calls.remove(&result.call_id) else { continue };
                let ran = ran_of(&result.output);
                let context = Context { cwd: cwd.as_deref(), root, line: result.line };
                match (call.name.as_str(), arguments(&call)) {
                    ("write_stdin", Some(arguments)) => continue_session(&mut world, &mut running, arguments, ran, &context),
                    ("apply_patch", Some(arguments)) => {
                        if let Some(patch) = arguments.get("input").and_then(Value::as_str) {
                            patched(&mut world, patch, arguments.get("workdir").and_then(Value::as_str), &context);
                        }
                    }
                    (name @ ("exec_command" | "shell" | "shell_command"), Some(arguments)) => {
                        let Some(command) = command_of(name, arguments) else {
                            let argv = arguments.get("command").map(Value::to_string).unwrap_or_default();
                            world.gap(format!("line {line}: {name} call {} runs no shell (argv {argv}): not in tool_side", call.id));
                            continue;
                        };
                        let workdir = arguments.get("workdir").and_then(Value::as_str);
                        if let Some(patch) = command.strip_prefix("apply_patch").filter(|rest| rest.trim_start().starts_with("<<")) {
                            patched(&mut world, patch, workdir, &context);
                            continue;
                        }
                        let folder = match workdir {
                            None => Some(".".to_owned()),
                            Some(dir) => relative_to_root(dir, None, root.or(cwd.as_deref())),
                        };
                        if folder.is_none() {
                            world
                                .gap(format!("line {line}: `{command}` ran in {}, outside the workspace: Codex cannot start it there", workdir.unwrap_or(".")));
                        }
                        let tty = arguments.get("tty").and_then(Value::as_bool) == Some(true);
                        let entry = ShellCommand { command, cwd: folder, ..ShellCommand::default() };
                        let pending = Pending { call_id: call.id.clone(), command: entry, line: result.line, tty };
                        match ran.running {
                            Some(id) => {
                                let mut pending = pending;
                                pending.command.stdout = ran.output;
                                note_truncation(&mut world, &pending.command.command, ran.truncated, &context);
                                running.insert(id, pending);
                            }
                            None => {
                                note_truncation(&mut world, &pending.command.command, ran.truncated, &context);
                                finish(&mut world, pending, ran, &context);
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    for (id, pending) in running {
        world.gap(format!(
            "line {}: `{}` (session {id}) had not exited when the session ended: served with the output it had given, exit code 0",
            pending.line, pending.command.command
        ));
        world.command(&pending.call_id, pending.command);
    }
    world
}

/// Where a result stands: the session's folders and the source line.
struct Context<'a> {
    cwd: Option<&'a str>,
    root: Option<&'a str>,
    line: usize,
}

fn arguments(call: &ToolCall) -> Option<&serde_json::Map<String, Value>> {
    match &call.arguments {
        Arguments::Json(Value::Object(arguments)) => Some(arguments),
        _ => None,
    }
}

/// The command line the shell receives for a call of `name`.
fn command_of(name: &str, arguments: &serde_json::Map<String, Value>) -> Option<String> {
    match name {
        "exec_command" => arguments.get("cmd").and_then(Value::as_str).map(str::to_owned),
        "shell_command" => arguments.get("command").and_then(Value::as_str).map(str::to_owned),
        _ => {
            let argv: Vec<&str> = arguments.get("command")?.as_array()?.iter().map(Value::as_str).collect::<Option<_>>()?;
            match argv[..] {
                [shell, flag, script] if is_shell(shell) && flag.starts_with('-') && flag.ends_with('c') => Some(script.to_owned()),
                _ => None,
            }
        }
    }
}

fn is_shell(program: &str) -> bool {
    matches!(program.rsplit('/').next(), Some("bash" | "sh" | "zsh" | "dash"))
}

/// The command's run as Codex reported it: the unified-exec header, the
/// `shell` tool's JSON, or the `Exit code:` header.
fn ran_of(text: &str) -> Ran {
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text) {
        let output = object.get("output").and_then(Value::as_str).unwrap_or_default().to_owned();
        let exit_code = object.get("metadata").and_then(|m| m.get("exit_code")).and_then(Value::as_i64).and_then(|code| i32::try_from(code).ok());
        return Ran { truncated: output.starts_with("Total output lines: "), output, exit_code, running: None };
    }
    let Some((header, output)) = text.split_once("\nOutput:\n").or_else(|| text.strip_prefix("Output:\n").map(|output| ("", output))) else {
        return Ran { output: text.to_owned(), ..Ran::default() };
    };
    let mut ran = Ran { truncated: output.starts_with("Total output lines: "), output: output.to_owned(), ..Ran::default() };
    for line in header.lines() {
        if let Some(code) = line.strip_prefix("Process exited with code ").or_else(|| line.strip_prefix("Exit code: ")) {
            ran.exit_code = code.trim().parse().ok();
        } else if let Some(id) = line.strip_prefix("Process running with session ID ") {
            ran.running = id.trim().parse().ok();
        }
    }
    ran
}

/// A `write_stdin` result: more of a running command's output, maybe its end.
fn continue_session(world: &mut World, running: &mut BTreeMap<u64, Pending>, arguments: &serde_json::Map<String, Value>, ran: Ran, context: &Context<'_>) {
    let Some(id) = arguments.get("session_id").and_then(Value::as_u64) else { return };
    let Some(mut pending) = running.remove(&id) else { return };
    if ran.exit_code.is_none() && ran.running.is_none() {
        // Codex refused the call (`write_stdin failed: stdin is closed …`):
        // nothing reached the process, which a later call goes on with.
        running.insert(id, pending);
        return;
    }
    if let Some(chars) = arguments.get("chars").and_then(Value::as_str).filter(|chars| !chars.is_empty()) {
        pending.command.stdin.get_or_insert_with(String::new).push_str(chars);
    }
    note_truncation(world, &pending.command.command, ran.truncated, context);
    let output = std::mem::take(&mut pending.command.stdout) + &ran.output;
    let ran = Ran { output, ..ran };
    match ran.running {
        Some(still) => {
            pending.command.stdout = ran.output;
            running.insert(still, pending);
        }
        None => finish(world, pending, ran, context),
    }
}

fn note_truncation(world: &mut World, command: &str, truncated: bool, context: &Context<'_>) {
    if truncated {
        world.gap(format!("line {}: `{command}`: Codex cut its output to the call's token budget: the replay serves the cut text the model saw", context.line));
    }
}

/// A command that exited: its entry, and what it read for the snapshot.
fn finish(world: &mut World, mut pending: Pending, ran: Ran, context: &Context<'_>) {
    pending.command.stdout = ran.output;
    pending.command.exit_code = ran.exit_code.unwrap_or_else(|| {
        world.gap(format!("line {}: `{}`: no exit code recorded: served as 0", context.line, pending.command.command));
        0
    });
    if pending.command.exit_code == 0 && !ran.truncated && !pending.tty {
        if let Some(read) = read_of(&pending.command.command) {
            let folder = pending.command.cwd.as_deref().unwrap_or(".");
            if let Some(path) = relative_to_root(&read.path, Some(folder), context.root.or(context.cwd)) {
                let text = &pending.command.stdout;
                match read.lines {
                    None => world.snapshot().read_whole(&path, text, pending.line),
                    Some((first, last)) => world.snapshot().read_lines(&path, first, last, text, pending.line),
                }
            }
        }
    }
    world.command(&pending.call_id, pending.command);
}

/// The files an `apply_patch` touches: updated and deleted files must be in
/// the snapshot, added ones not.
fn patched(world: &mut World, patch: &str, workdir: Option<&str>, context: &Context<'_>) {
    let root = context.root.or(context.cwd);
    let folder = workdir.and_then(|dir| relative_to_root(dir, None, root));
    for line in patch.lines() {
        let (path, edits) = if let Some(path) = line.strip_prefix("*** Update File: ").or_else(|| line.strip_prefix("*** Delete File: ")) {
            (path, true)
        } else if let Some(path) = line.strip_prefix("*** Add File: ").or_else(|| line.strip_prefix("*** Move to: ")) {
            (path, false)
        } else {
            continue;
        };
        match relative_to_root(path.trim(), Some(folder.as_deref().unwrap_or(".")), root) {
            Some(relative) if edits => world.snapshot().edit(&relative, context.line),
            Some(relative) => world.snapshot().create(&relative, context.line),
            None => world.gap(format!("line {}: apply_patch edits {path}, outside the workspace: the replay's patch of it fails", context.line)),
        }
    }
}

/// The call's `workdir` and the patch's file names that Codex resolves
/// itself, made relative to the workspace root when under it.
fn relative_paths(call: &mut ToolCall, cwd: Option<&str>, root: Option<&str>) {
    let Arguments::Json(Value::Object(arguments)) = &mut call.arguments else { return };
    let root = root.or(cwd);
    if let Some(Value::String(dir)) = arguments.get_mut("workdir") {
        if let Some(relative) = dir.starts_with('/').then(|| relative_to_root(dir, None, root)).flatten() {
            *dir = relative;
        }
    }
    if call.name == "apply_patch" {
        if let Some(Value::String(patch)) = arguments.get_mut("input") {
            *patch = patch
                .split_inclusive('\n')
                .map(|line| {
                    let header = ["*** Update File: ", "*** Delete File: ", "*** Add File: ", "*** Move to: "].into_iter().find(|h| line.starts_with(h));
                    let relative = header.and_then(|h| {
                        let path = line[h.len()..].trim_end();
                        path.starts_with('/').then(|| relative_to_root(path, None, root)).flatten().map(|p| format!("{h}{p}{}", &line[h.len() + path.len()..]))
                    });
                    relative.unwrap_or_else(|| line.to_owned())
                })
                .collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{AssistantTurn, ToolResult};

    fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: Arguments::Json(arguments) }
    }

    fn session(steps: Vec<(ToolCall, &str)>) -> ImportedSession {
        let mut items = Vec::new();
        for (line, (call, output)) in steps.into_iter().enumerate() {
            let id = call.id.clone();
            items.push(Item::Assistant(AssistantTurn { tool_calls: vec![call], line: 2 * line + 1, ..AssistantTurn::default() }));
            items.push(Item::ToolResult(ToolResult { call_id: id, output: output.into(), is_error: false, line: 2 * line + 2 }));
        }
        ImportedSession { format: "codex", agent: Some("codex"), cwd: Some("/home/me/p".into()), items, ..ImportedSession::default() }
    }

    fn commands(world: World) -> Vec<ShellCommand> {
        world.commands.into_iter().map(|(_, command)| command).collect()
    }

    #[test]
    fn the_unified_exec_header_gives_output_and_exit_code() {
        let ran = ran_of("Chunk ID: 46d351\nWall time: 0.0000 seconds\nProcess exited with code 2\nOriginal token count: 18\nOutput:\nno such file\n");
        assert_eq!(ran, Ran { output: "no such file\n".into(), exit_code: Some(2), running: None, truncated: false });
        let running = ran_of("Chunk ID: 244941\nWall time: 1.0021 seconds\nProcess running with session ID 78859\nOriginal token count: 0\nOutput:\n");
        assert_eq!((running.running, running.output.as_str()), (Some(78859), ""));
        let cut = ran_of("Chunk ID: a\nWall time: 0 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\nTotal output lines: 734\n\n---");
        assert!(cut.truncated);
        let shell = ran_of(r#"{"output":"CLAUDE.md\n","metadata":{"exit_code":0,"duration_seconds":0.0}}"#);
        assert_eq!((shell.output.as_str(), shell.exit_code), ("CLAUDE.md\n", Some(0)));
        let old = ran_of("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nboom\n");
        assert_eq!((old.output.as_str(), old.exit_code), ("boom\n", Some(1)));
    }

    #[test]
    fn a_running_command_takes_the_output_of_its_write_stdin_calls() {
        let mut session = session(vec![
            (call("c1", "exec_command", serde_json::json!({"cmd": "rg -n x .", "workdir": "/home/me/p"})), "Process running with session ID 7\nOutput:\na:1\n"),
            (call("c2", "write_stdin", serde_json::json!({"session_id": 7, "chars": ""})), "Process running with session ID 7\nOutput:\nb:2\n"),
            (call("c3", "write_stdin", serde_json::json!({"session_id": 7, "chars": ""})), "Process exited with code 1\nOutput:\n"),
        ]);
        let world = world(&mut session, Some("/home/me/p"));
        let expected =
            ShellCommand { command: "rg -n x .".into(), stdout: "a:1\nb:2\n".into(), exit_code: 1, cwd: Some(".".into()), ..ShellCommand::default() };
        assert_eq!(commands(world), [expected]);
        let Item::Assistant(turn) = &session.items[0] else { unreachable!() };
        assert_eq!(turn.tool_calls[0].arguments, Arguments::Json(serde_json::json!({"cmd": "rg -n x .", "workdir": "."})), "workdir made relative");
    }

    #[test]
    fn a_refused_write_stdin_neither_ends_the_command_nor_types_into_it() {
        let mut session = session(vec![
            (call("c1", "exec_command", serde_json::json!({"cmd": "sed -n '1,9p' a"})), "Process running with session ID 3\nOutput:\n"),
            (call("c2", "write_stdin", serde_json::json!({"session_id": 3, "chars": "\u{3}"})), "write_stdin failed: stdin is closed for this session"),
            (call("c3", "write_stdin", serde_json::json!({"session_id": 3, "chars": ""})), "Process exited with code 0\nOutput:\nall\n"),
        ]);
        let expected = ShellCommand { command: "sed -n '1,9p' a".into(), stdout: "all\n".into(), cwd: Some(".".into()), ..ShellCommand::default() };
        assert_eq!(commands(world(&mut session, Some("/home/me/p"))), [expected]);
    }

    #[test]
    fn shell_argv_is_the_script_inside_bash_lc_and_reads_build_the_snapshot() {
        let mut session = session(vec![
            (
                call("c1", "shell", serde_json::json!({"command": ["bash", "-lc", "sed -n '1,2p' src/a.ts"], "workdir": "."})),
                r#"{"output":"one\ntwo\n","metadata":{"exit_code":0}}"#,
            ),
            (
                call("c2", "shell", serde_json::json!({"command": ["bash", "-lc", "sed -n '2,4p' src/a.ts"], "workdir": "."})),
                r#"{"output":"two\n","metadata":{"exit_code":0}}"#,
            ),
            (call("c3", "shell", serde_json::json!({"command": ["ls", "-la"]})), r#"{"output":"x","metadata":{"exit_code":0}}"#),
        ]);
        let world = world(&mut session, Some("/home/me/p"));
        let placed = world.placed(&reloop_recording::Recording::default());
        assert_eq!(placed.tool_side.iter().map(|c| c.command.as_str()).collect::<Vec<_>>(), ["sed -n '1,2p' src/a.ts", "sed -n '2,4p' src/a.ts"]);
        assert_eq!(placed.files.get("src/a.ts").map(String::as_str), Some("one\ntwo\n"));
        assert!(placed.gaps.iter().any(|gap| gap.contains("runs no shell")), "{:?}", placed.gaps);
    }

    #[test]
    fn apply_patch_needs_its_files_read_in_full_first_and_its_paths_are_made_relative() {
        let patch = "*** Begin Patch\n*** Update File: /home/me/p/src/a.ts\n@@\n-x\n+y\n*** Update File: src/b.ts\n@@\n-x\n+y\n*** Add File: src/c.ts\n+new\n*** End Patch";
        let mut session = session(vec![
            (call("c1", "exec_command", serde_json::json!({"cmd": "cat src/a.ts"})), "Process exited with code 0\nOutput:\nx\n"),
            (call("c2", "apply_patch", serde_json::json!({"input": patch})), r#"{"output":"Success.","metadata":{"exit_code":0}}"#),
            (call("c3", "exec_command", serde_json::json!({"cmd": "cat src/a.ts"})), "Process exited with code 0\nOutput:\ny\n"),
        ]);
        let placed = world(&mut session, Some("/home/me/p")).placed(&reloop_recording::Recording::default());
        assert_eq!(placed.files, BTreeMap::from([("src/a.ts".to_owned(), "x\n".to_owned())]), "the first snapshot, before the patch");
        assert_eq!(placed.gaps, ["src/b.ts: edited at line 4 but never read in full before: not in the snapshot, so the replay's edit of it fails"]);
        let Item::Assistant(turn) = &session.items[2] else { unreachable!() };
        let Arguments::Json(arguments) = &turn.tool_calls[0].arguments else { unreachable!() };
        assert!(arguments["input"].as_str().unwrap().contains("*** Update File: src/a.ts\n"), "{arguments}");
    }
}
