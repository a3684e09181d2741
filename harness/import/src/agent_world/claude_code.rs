//! Claude Code's tool calls as its shell and its own tools met them, for
//! `reloop import --agent` (read from the 2.0 and 2.1 transcripts under
//! `tests/fixtures/sessions/claude-code/` and the pinned 2.1.332 CLI).
//!
//! - `Bash`: `command` runs as `$SHELL -c -l 'source SNAPSHOT && … && eval
//!   'COMMAND' < /dev/null && pwd -P >| CWD_FILE'`, which the preset's shim
//!   unwraps to the model's `command`, byte for byte but for one rewrite
//!   the CLI makes first ([`as_the_shell_gets`]). The model sees the
//!   output (stdout and stderr in one stream, leading blank lines and
//!   trailing white space taken off); a failure is marked `is_error` and
//!   names `Exit code N` (before the output up to 2.1.39, after it in
//!   2.1.332). A command that never ran (`<tool_use_error>`, the user
//!   refusing it), ran in the background or was interrupted shows no whole
//!   output: a gap. No folder is recorded: Claude Code follows the folder
//!   a command leaves through `pwd -P >| CWD_FILE`, which a replayed command
//!   does not write, so in the replay every command runs where the agent
//!   started.
//! - `Read`: a `cat -n` listing (`     1→line`; a tab before 2.0) of lines
//!   `offset` on (2000 at most, lines over 2000 characters cut), then a
//!   `<system-reminder>`: the lines it shows go into the snapshot.
//! - `Edit`, `MultiEdit` and `Write` act in-process on the workspace: an
//!   edited file must be in the snapshot, and must hold each `old_string`
//!   where the session found it, so each edit is followed on the text the
//!   session showed; a `Write` before any read makes the file.
//!
//! Claude Code's own tools act on the recorded absolute paths (`file_path`,
//! Glob's and Grep's `path`), so those under the workspace root are
//! rewritten relative (the replay runs in a fresh workspace, where Claude
//! Code resolves them against its folder); command lines are kept byte for
//! byte, as the shim matches them.

use std::collections::BTreeMap;

use reloop_recording::tool_side::ShellCommand;
use serde_json::Value;

use super::{World, relative_argument, relative_to_root};
use crate::session::{Arguments, ImportedSession, Item, ToolCall, ToolResult};

/// The lines a `Read` without `limit` shows at most (its description:
/// "reads up to 2000 lines").
const READ_LINE_LIMIT: usize = 2000;

/// The width past which a `Read` listing cuts a line.
const READ_LINE_WIDTH: usize = 2000;

/// What Claude Code lists for a file that exists but is empty.
const EMPTY_FILE_NOTE: &str = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>";

/// The arguments that name a path Claude Code's own tools act on.
const PATH_ARGUMENTS: [&str; 3] = ["file_path", "notebook_path", "path"];

pub(super) fn world(session: &mut ImportedSession, root: Option<&str>) -> World {
    let cwd = session.cwd.clone();
    let mut files = Files { world: World::default(), text: BTreeMap::new() };
    let mut calls: BTreeMap<String, ToolCall> = BTreeMap::new();
    for item in &mut session.items {
        match item {
            Item::Assistant(turn) => {
                for call in &mut turn.tool_calls {
                    // The result is read against the path as recorded.
                    calls.insert(call.id.clone(), call.clone());
                    relative_paths(call, cwd.as_deref(), root);
                }
            }
            Item::ToolResult(result) => {
                let Some(call) = calls.remove(&result.call_id) else { continue };
                match call.name.as_str() {
                    "Bash" => shell(&mut files.world, &call, result),
                    name @ ("Read" | "Write" | "Edit" | "MultiEdit") => {
                        let raw = string_argument(&call, "file_path");
                        match relative_to_root(&raw, cwd.as_deref(), root) {
                            Some(path) => files.took(name, &call, result, &path),
                            None => files.world.gap(format!("line {}: {name} of `{raw}`, outside the workspace root: not in the snapshot", result.line)),
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    for call in calls.values().filter(|call| call.name == "Bash") {
        files.world.gap(format!("Bash call {} `{}` has no result in the session: not in tool_side", call.id, clip(&string_argument(call, "command"))));
    }
    files.world
}

/// A `Bash` call: its `tool_side:` entry, or a gap when the result shows
/// no whole run.
fn shell(world: &mut World, call: &ToolCall, result: &ToolResult) {
    let command = as_the_shell_gets(&string_argument(call, "command"));
    let background = arguments(call).and_then(|a| a.get("run_in_background")).and_then(Value::as_bool) == Some(true);
    let outcome = if background { Err("ran in the background: its output is not in the result".to_owned()) } else { shell_outcome(result) };
    match outcome {
        Ok((stdout, exit_code)) => world.command(&call.id, ShellCommand { command, stdout, exit_code, ..ShellCommand::default() }),
        Err(why) => world.gap(format!("line {}: `{}` {why}: not in tool_side", result.line, clip(&command))),
    }
}

/// The command line Claude Code hands its shell for the model's
/// `command`: a redirection to `nul` (any case; Windows' null device)
/// becomes one to `/dev/null`, unless the line holds a `<`, `$` or
/// backtick (2.1.332: `/(\d?&?>+[ \t]*)[Nn][Uu][Ll](?=\s|$|[|&;)\n])/g`).
fn as_the_shell_gets(command: &str) -> String {
    if command.contains(['<', '$', '`']) {
        return command.to_owned();
    }
    let mut out = String::with_capacity(command.len());
    let mut kept = 0;
    // ASCII lowercasing keeps every byte offset.
    for (at, _) in command.to_ascii_lowercase().match_indices("nul") {
        let redirected = command[..at].trim_end_matches([' ', '\t']).ends_with('>');
        let ends = command[at + 3..].chars().next().is_none_or(|c| c.is_whitespace() || "|&;)".contains(c));
        if redirected && ends {
            out.push_str(&command[kept..at]);
            out.push_str("/dev/null");
            kept = at + 3;
        }
    }
    out.push_str(&command[kept..]);
    out
}

/// The snapshot, and each file's text as the session last showed it, for
/// the `old_string`s of its edits.
struct Files {
    world: World,
    /// `None`: the text is not known (read in part, or an edit it could not take).
    text: BTreeMap<String, Option<String>>,
}

impl Files {
    /// A call of Claude Code's file tools on `path` (relative to the root).
    fn took(&mut self, name: &str, call: &ToolCall, result: &ToolResult, path: &str) {
        match name {
            "Read" => self.read(call, result, path),
            _ if result.is_error => {}
            "Write" => {
                if !self.text.contains_key(path) {
                    self.world.snapshot().create(path, result.line);
                }
                self.text.insert(path.to_owned(), Some(string_argument(call, "content")));
            }
            "Edit" => self.edit(path, &[edit_of(arguments(call))], result.line),
            _ => {
                let edits = arguments(call).and_then(|a| a.get("edits")).and_then(Value::as_array);
                self.edit(path, &edits.into_iter().flatten().map(|e| edit_of(Some(e))).collect::<Vec<_>>(), result.line);
            }
        }
    }

    /// A `Read`: the lines it listed into the snapshot.
    fn read(&mut self, call: &ToolCall, result: &ToolResult, path: &str) {
        if result.is_error {
            // A file the session did not find is one the replay lacks too;
            // a folder is made by the files in it.
            if !result.output.contains("does not exist") && !result.output.contains("EISDIR") {
                self.world.gap(format!("line {}: {path}: its Read failed ({}): not in the snapshot", result.line, clip(&result.output)));
            }
            return;
        }
        let Some(listing) = listing(call, result) else {
            self.world.gap(format!("line {}: {path}: its Read is not a whole listing (a line cut, or not numbered): not in the snapshot", result.line));
            return;
        };
        let snapshot = self.world.snapshot();
        match listing.last {
            None => snapshot.read_whole(path, &listing.text, result.line),
            Some(last) => snapshot.read_lines(path, listing.first, last, &listing.text, result.line),
        }
        if listing.first == 1 && listing.last.is_none() {
            self.text.insert(path.to_owned(), Some(listing.text));
        } else {
            self.text.entry(path.to_owned()).or_insert(None);
        }
    }

    /// An `Edit` or `MultiEdit` of `path`, followed on its text: one whose
    /// `old_string` the text lacks is a gap (a command changed the file, or
    /// the session never showed it).
    fn edit(&mut self, path: &str, edits: &[Edit], line: usize) {
        let creates = edits.first().is_some_and(|e| e.old.is_empty()) && !self.text.contains_key(path);
        if creates {
            self.world.snapshot().create(path, line);
        } else {
            self.world.snapshot().edit(path, line);
        }
        let known = if creates { Some(String::new()) } else { self.text.get(path).cloned().flatten() };
        let Some(mut text) = known else {
            self.text.insert(path.to_owned(), None);
            return;
        };
        for edit in edits {
            if !text.contains(&edit.old) {
                self.world.gap(format!("line {line}: {path}: the edit's old_string is not in the text the session showed (a command changed the file?)"));
                self.text.insert(path.to_owned(), None);
                return;
            }
            text = if edit.all { text.replace(&edit.old, &edit.new) } else { text.replacen(&edit.old, &edit.new, 1) };
        }
        self.text.insert(path.to_owned(), Some(text));
    }
}

/// One `old_string` → `new_string` of an `Edit` or `MultiEdit`.
struct Edit {
    old: String,
    new: String,
    all: bool,
}

fn edit_of(arguments: Option<&Value>) -> Edit {
    let text = |key: &str| arguments.and_then(|a| a.get(key)).and_then(Value::as_str).unwrap_or_default().to_owned();
    Edit { old: text("old_string"), new: text("new_string"), all: arguments.and_then(|a| a.get("replace_all")).and_then(Value::as_bool) == Some(true) }
}

/// The output and exit status a `Bash` result shows, or why it shows none.
fn shell_outcome(result: &ToolResult) -> Result<(String, i32), String> {
    let output = result.output.as_str();
    if let Some(error) = output.strip_prefix("<tool_use_error>") {
        return Err(format!("never ran ({})", error.trim_end_matches("</tool_use_error>")));
    }
    if output.starts_with("The user doesn't want to proceed with this tool use") {
        return Err("was refused by the user and never ran".to_owned());
    }
    if output.contains("<error>Command was aborted before completion</error>") {
        return Err("was interrupted: its output is cut".to_owned());
    }
    if output.contains("Command running in background with ID:") {
        return Err("ran in the background: its output is not in the result".to_owned());
    }
    if !result.is_error {
        return Ok((output.to_owned(), 0));
    }
    let leading = output.strip_prefix("Exit code ").and_then(|rest| {
        let (code, rest) = rest.split_once('\n').unwrap_or((rest, ""));
        Some((rest.to_owned(), code.trim().parse().ok()?))
    });
    let trailing = || {
        let (rest, code) = output.rsplit_once("Exit code ")?;
        Some((rest.trim_end_matches('\n').to_owned(), code.trim().parse().ok()?))
    };
    leading.or_else(trailing).ok_or_else(|| format!("failed without an exit code ({})", clip(output)))
}

/// What a `Read` listing shows: the text of lines `first` on, and, when
/// the read may have stopped before the file's end, the last line it asked
/// for (`None`: the whole file).
#[derive(Debug, PartialEq)]
struct Listing {
    first: usize,
    last: Option<usize>,
    text: String,
}

/// The listing of a `Read` result, its `<system-reminder>` taken off;
/// `None` when a line is cut or the lines are not numbered on from `offset`.
fn listing(call: &ToolCall, result: &ToolResult) -> Option<Listing> {
    let number = |key: &str| arguments(call).and_then(|a| a.get(key)).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok());
    let first = number("offset").unwrap_or(1).max(1);
    let limit = number("limit").unwrap_or(READ_LINE_LIMIT);
    let listing = without_reminder(&result.output);
    if listing == EMPTY_FILE_NOTE && first == 1 {
        return Some(Listing { first, last: None, text: String::new() });
    }
    let mut lines = Vec::new();
    for (index, line) in listing.split('\n').enumerate() {
        let numbered = line.trim_start_matches(' ');
        let digits = numbered.len() - numbered.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (number, rest) = numbered.split_at(digits);
        let text = rest.strip_prefix('→').or_else(|| rest.strip_prefix('\t'))?;
        if number.parse::<usize>().ok()? != first + index || text.chars().count() >= READ_LINE_WIDTH {
            return None;
        }
        lines.push(text);
    }
    // Claude Code splits the file on line ends: a listing shorter than
    // asked ends where the file does (its last line empty after a final
    // line end); a full one goes on, each line ended.
    if lines.len() < limit {
        let whole = first == 1;
        return Some(Listing { first, last: (!whole).then_some(first + limit - 1), text: lines.join("\n") });
    }
    Some(Listing { first, last: Some(first + limit - 1), text: lines.iter().map(|line| format!("{line}\n")).collect() })
}

/// A `Read` result without the `<system-reminder>` blocks after the listing.
fn without_reminder(output: &str) -> &str {
    let mut text = output.trim_end_matches('\n');
    while text.ends_with("</system-reminder>") {
        match text.rfind("\n\n<system-reminder>") {
            Some(start) => text = &text[..start],
            None => break,
        }
    }
    text
}

/// Rewrites the paths Claude Code's own tools act on relative to the root.
fn relative_paths(call: &mut ToolCall, cwd: Option<&str>, root: Option<&str>) {
    let Arguments::Json(Value::Object(arguments)) = &mut call.arguments else { return };
    for key in PATH_ARGUMENTS {
        relative_argument(arguments, key, cwd, root);
    }
}

fn arguments(call: &ToolCall) -> Option<&Value> {
    match &call.arguments {
        Arguments::Json(value) => Some(value),
        Arguments::Raw(_) => None,
    }
}

fn string_argument(call: &ToolCall, key: &str) -> String {
    arguments(call).and_then(|a| a.get(key)).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// The first line of a text, cut to 80 characters, for a gap.
fn clip(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    if first.chars().count() > 80 || text.contains('\n') { format!("{}…", first.chars().take(80).collect::<String>()) } else { first.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_world::AgentWorld;
    use crate::formats::claude_code::parse;
    use crate::workspace::workspace_root;

    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!("../../tests/fixtures/sessions/claude-code/", $name))
        };
    }

    /// The world of a fixture at the root the importer computes, and that root.
    fn world_of(text: &str) -> (AgentWorld, String) {
        let mut session = parse(text);
        let calls = session.items.iter().filter_map(|item| if let Item::Assistant(turn) = item { Some(turn) } else { None }).flat_map(|t| &t.tool_calls);
        let root = workspace_root(session.cwd.as_deref(), calls).expect("a cwd");
        (world(&mut session, Some(&root)).placed(&reloop_recording::Recording::default()), root)
    }

    /// The world of `session` in `/w`.
    fn world_in_w(mut session: ImportedSession) -> AgentWorld {
        world(&mut session, Some("/w")).placed(&reloop_recording::Recording::default())
    }

    /// Claude Code's own record of each result (`toolUseResult`) by the
    /// call it answers, and the calls' inputs, from the raw transcript.
    fn recorded(text: &str) -> (Vec<(String, Value)>, std::collections::HashMap<String, Value>) {
        let (mut calls, mut records) = (Vec::new(), std::collections::HashMap::new());
        for value in text.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()) {
            for block in value.pointer("/message/content").and_then(Value::as_array).into_iter().flatten() {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => calls.push((block["name"].as_str().unwrap().to_owned(), block.clone())),
                    Some("tool_result") if value.get("toolUseResult").is_some() => {
                        records.insert(block["tool_use_id"].as_str().unwrap().to_owned(), value["toolUseResult"].clone());
                    }
                    _ => {}
                }
            }
        }
        (calls, records)
    }

    const WITH_RECORDS: [&str; 5] = [
        fixture!("spotter__subagent.jsonl"),
        fixture!("spotter__tool_heavy.jsonl"),
        fixture!("spotter__ae4a77f8__lines-1481-1531.jsonl"),
        fixture!("spotter__8463c716__lines-714-743.jsonl"),
        fixture!("codemie-code__4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"),
    ];

    #[test]
    fn each_command_answers_the_output_claude_code_recorded_for_it() {
        let mut compared = 0;
        for text in WITH_RECORDS {
            let (world, _) = world_of(text);
            let (calls, records) = recorded(text);
            let ran: Vec<(&str, &str)> = calls
                .iter()
                .filter(|(name, call)| {
                    name == "Bash"
                        && records.get(call["id"].as_str().unwrap()).is_some_and(|r| r.get("stdout").is_some() && r.get("backgroundTaskId").is_none())
                })
                .map(|(_, call)| {
                    let record = &records[call["id"].as_str().unwrap()];
                    (call["input"]["command"].as_str().unwrap(), record["stdout"].as_str().unwrap())
                })
                .collect();
            let entries: Vec<(&str, &str)> = world.tool_side.iter().map(|c| (c.command.as_str(), c.stdout.as_str())).collect();
            assert_eq!(entries, ran);
            assert!(world.tool_side.iter().all(|c| c.exit_code == 0 && c.cwd.is_none()));
            compared += ran.len();
        }
        assert_eq!(compared, 12, "commands compared with Claude Code's own record");
    }

    #[test]
    fn a_whole_read_is_the_file_claude_code_recorded_and_its_edits_find_their_text() {
        let mut compared = 0;
        // codemie's one Read is of a file the session wrote first: the run makes it.
        for text in &WITH_RECORDS[..4] {
            let (world, root) = world_of(text);
            let (_, records) = recorded(text);
            for record in records.values().filter(|r| r.get("type").and_then(Value::as_str) == Some("text")) {
                let file = &record["file"];
                let path = file["filePath"].as_str().unwrap().strip_prefix(&format!("{root}/")).unwrap();
                if file["startLine"] == 1 && file["numLines"] == file["totalLines"] {
                    assert_eq!(world.files.get(path).map(String::as_str), Some(file["content"].as_str().unwrap()), "{path}");
                    compared += 1;
                } else {
                    assert!(!world.files.contains_key(path) && world.gaps.iter().any(|g| g.contains(path)), "{path}: {:?}", world.gaps);
                }
            }
        }
        // tool_heavy's app.js, subagent's mix.exs; ae4a77f8's mix.exs was read in part.
        assert_eq!(compared, 2);
        let (codemie, _) = world_of(WITH_RECORDS[4]);
        assert!(codemie.files.is_empty() && codemie.gaps.is_empty(), "{codemie:?}");
    }

    #[test]
    fn a_subagents_18_commands_and_28_files_come_whole_and_its_unread_file_is_a_gap() {
        let (world, _) = world_of(fixture!("spotter__6c2214d7__subagent-agent-afc096d.jsonl"));
        assert_eq!(world.tool_side.len(), 18);
        let tree = world.tool_side.iter().find(|c| c.command.starts_with("tree ")).unwrap();
        assert_eq!((tree.exit_code, tree.stdout.as_str()), (127, "(eval):1: command not found: tree"));
        assert_eq!(world.files.len(), 28);
        assert_eq!(world.files["test/test_helper.exs"], "ExUnit.start()\n");
        assert!(world.files["mix.exs"].starts_with("defmodule Spotter.MixProject do\n  use Mix.Project\n"));
        // Too large to read, then read in part: not written.
        assert!(!world.files.contains_key("priv/static/assets/app.js"));
        assert_eq!(world.gaps.len(), 2, "{:?}", world.gaps);
        assert!(world.gaps.iter().all(|g| g.contains("priv/static/assets/app.js")));
    }

    #[test]
    fn commands_that_never_ran_or_ran_apart_are_gaps_not_entries() {
        let (sibling, _) = world_of(fixture!("spotter__8463c716__subagent-agent-a7be2f0.jsonl"));
        assert_eq!(sibling.tool_side.len(), 10);
        assert!(sibling.gaps.iter().any(|g| g.contains("never ran (Sibling tool call errored)")), "{:?}", sibling.gaps);
        assert!(!sibling.gaps.iter().any(|g| g.contains("EISDIR")), "a folder is not a file: {:?}", sibling.gaps);
        let (refused, _) = world_of(fixture!("spotter__short.jsonl"));
        assert!(refused.tool_side.is_empty() && refused.gaps[0].contains("refused by the user"), "{refused:?}");
        let (background, _) = world_of(fixture!("spotter__tool_heavy.jsonl"));
        assert!(background.gaps.iter().any(|g| g.contains("`mix phx.server`") && g.contains("background")), "{background:?}");
    }

    fn result(output: &str, is_error: bool) -> ToolResult {
        ToolResult { call_id: "c".into(), output: output.into(), is_error, line: 1 }
    }

    #[test]
    fn a_redirection_to_nul_is_to_dev_null_as_the_cli_sends_it() {
        assert_eq!(as_the_shell_gets("make 2>nul && ls >NUL"), "make 2>/dev/null && ls >/dev/null");
        assert_eq!(as_the_shell_gets("grep x f > nul| wc -l"), "grep x f > /dev/null| wc -l");
        assert_eq!(as_the_shell_gets("cat null.txt; echo nul >nullify"), "cat null.txt; echo nul >nullify");
        assert_eq!(as_the_shell_gets("echo $A 2>nul"), "echo $A 2>nul", "a `$` leaves the line as it is");
    }

    #[test]
    fn the_exit_status_is_read_where_either_version_puts_it() {
        assert_eq!(shell_outcome(&result("Exit code 2\nno such file", true)), Ok(("no such file".into(), 2)));
        assert_eq!(shell_outcome(&result("no such file\nExit code 2", true)), Ok(("no such file".into(), 2)));
        assert_eq!(shell_outcome(&result("Exit code 1", true)), Ok((String::new(), 1)));
        assert!(shell_outcome(&result("Command timed out after 2m", true)).unwrap_err().contains("without an exit code"));
        assert!(shell_outcome(&result("partial\n<error>Command was aborted before completion</error>", true)).unwrap_err().contains("interrupted"));
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall { id: format!("{name}-1"), name: name.into(), arguments: Arguments::Json(arguments) }
    }

    /// A session of `calls`, each answered `ok`, in `/w`.
    fn session_of(calls: Vec<(ToolCall, &str)>) -> ImportedSession {
        let mut items = Vec::new();
        for (call, output) in calls {
            let id = call.id.clone();
            items.push(Item::Assistant(crate::session::AssistantTurn { tool_calls: vec![call], ..Default::default() }));
            let line = items.len() + 1;
            items.push(Item::ToolResult(ToolResult { call_id: id, line, ..result(output, false) }));
        }
        ImportedSession { cwd: Some("/w".into()), items, ..Default::default() }
    }

    #[test]
    fn edits_are_followed_and_one_the_file_cannot_take_is_a_gap() {
        let read = call("Read", serde_json::json!({"file_path": "/w/a.txt"}));
        let listing = "     1→one\n     2→two\n     3→\n\n<system-reminder>\nWhenever you read a file...\n</system-reminder>\n";
        let edit = |old: &str| call("Edit", serde_json::json!({"file_path": "/w/a.txt", "old_string": old, "new_string": "TWO"}));
        let fine = world_in_w(session_of(vec![
            (read.clone(), listing),
            (edit("two"), "ok"),
            (call("MultiEdit", serde_json::json!({"file_path": "/w/a.txt", "edits": [{"old_string": "TWO", "new_string": "2"}]})), "ok"),
        ]));
        assert_eq!(fine.files["a.txt"], "one\ntwo\n");
        assert!(fine.gaps.is_empty(), "{:?}", fine.gaps);
        let stale = world_in_w(session_of(vec![(read, listing), (edit("three"), "ok")]));
        assert!(stale.gaps[0].contains("a.txt: the edit's old_string is not in the text the session showed"), "{:?}", stale.gaps);
        let unread = world_in_w(session_of(vec![(edit("two"), "ok")]));
        assert!(unread.files.is_empty() && unread.gaps[0].contains("a.txt: edited at line 2 but never read in full before"), "{:?}", unread.gaps);
        let outside = world_in_w(session_of(vec![(call("Read", serde_json::json!({"file_path": "/etc/hosts"})), "     1→x")]));
        assert!(outside.files.is_empty() && outside.gaps[0].contains("Read of `/etc/hosts`, outside the workspace root"), "{:?}", outside.gaps);
    }
}
