//! The reloop binary started as `bash` or `sh` through a shim link
//! ([`super::Shims`]), or bound over `/bin/sh` (`dash`) or `/bin/bash`
//! ([`super::mount`]): a command line (`-c COMMAND`) is answered with the
//! first recorded entry not yet used that has that line and folder, its
//! output written and its exit status returned, and nothing runs. Without
//! an entry, `replay` refuses the command (exit 127, as a shell does for a
//! command it cannot find) and `replay-or-live` runs it in the real shell.
//! A shell given no command line (a script, an interactive shell) is the
//! agent's interpreter rather than one of its commands: it runs for real,
//! logged. Shims of one run take turns on the log, under a file lock, so
//! parallel tool calls each get an entry of their own. The agent's own
//! wrapper around the model's command is taken off before the lookup
//! ([`Plan::unwrap`]), and a line of its runtime ([`Plan::passthrough`])
//! runs for real, logged; the shells it starts are answered again (Codex's
//! wrapper execs `/bin/bash -c COMMAND`). A shell started inside a command
//! that `replay-or-live` runs for real is part of it: it runs, unlogged
//! ([`NESTED_VARIABLE`]).

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;

use reloop_files::scenario::agent::ToolSideMode;

use super::{LogLine, PLAN_VARIABLE, Plan, SHELLS};

/// What a shell that cannot start its command exits with.
const NOT_RUN: i32 = 127;

/// Set in the environment of a command that runs for real: the shells it
/// starts itself run for real too.
const NESTED_VARIABLE: &str = "RELOOP_TOOL_SIDE_NESTED";

/// When this process was started through a shim, what it exits with: the
/// caller exits with it at once. `None`: reloop was started as itself.
pub fn called_as_shim() -> Option<i32> {
    let mut args = std::env::args_os();
    let invoked = args.next()?;
    // A login shell's `argv[0]` starts with `-` (`-bash`).
    let name = Path::new(&invoked).file_name()?.to_str()?.trim_start_matches('-').to_owned();
    let Some(plan_file) = std::env::var_os(PLAN_VARIABLE) else {
        // reloop's binary is never a shell but as a shim: the agent cleared
        // the plan's variable from its environment.
        if !SHELLS.contains(&name.as_str()) {
            return None;
        }
        eprintln!("reloop's `{name}` shim: started without {PLAN_VARIABLE} (the agent cleared its environment), so nothing was run");
        return Some(NOT_RUN);
    };
    let args: Vec<OsString> = args.collect();
    let plan: Plan = match std::fs::read(&plan_file).map_err(|e| e.to_string()).and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string())) {
        Ok(plan) => plan,
        Err(_) if !SHELLS.contains(&name.as_str()) => return None,
        Err(error) => {
            eprintln!("reloop's `{name}` shim: cannot read its plan {}: {error}", Path::new(&plan_file).display());
            return Some(NOT_RUN);
        }
    };
    let shell = if SHELLS.contains(&name.as_str()) { name } else { plan.aliases.iter().find(|(alias, _)| *alias == name)?.1.clone() };
    if std::env::var_os(NESTED_VARIABLE).is_some() {
        return Some(run_real(&plan, &shell, &args, Nested::Keep));
    }
    Some(answer(&plan, &shell, &invoked.to_string_lossy(), &args))
}

/// Answers one shell start (see the module doc); `invoked` is its `argv[0]`.
fn answer(plan: &Plan, shell: &str, invoked: &str, args: &[OsString]) -> i32 {
    let cwd = std::env::current_dir().map(|dir| relative_to(&dir, &plan.workspace)).unwrap_or_else(|_| ".".to_owned());
    // A script's own shells are the agent's commands, still answered.
    let Some(line) = command_line(args) else { return run_real(plan, shell, args, Nested::Keep) };
    if matches_any(&plan.passthrough, &line) {
        let logged = LogLine { command: line, cwd, entry: None, ran: true, invoked: invoked.to_owned(), passthrough: true };
        if let Err(error) = append_log(plan, |_| logged) {
            eprintln!("reloop's `{shell}` shim: {error}");
        }
        // Its shells are still answered: Codex's wrapper execs `/bin/bash -c COMMAND`.
        return run_real(plan, shell, args, Nested::Keep);
    }
    let command = unwrapped(&plan.unwrap, &line);
    match take_entry(plan, &command, &cwd, invoked) {
        Ok(Some(index)) => {
            let entry = &plan.commands[index];
            // A closed pipe on the agent's side is its business: what it read, it read.
            let _ = std::io::stdout().write_all(entry.stdout.as_bytes());
            let _ = std::io::stderr().write_all(entry.stderr.as_bytes());
            entry.exit_code
        }
        Ok(None) if plan.mode == ToolSideMode::ReplayOrLive => run_real(plan, shell, args, Nested::Mark),
        Ok(None) => {
            eprintln!("reloop: `{command}` is not in the recording's tool_side: (agent.tools: replay), so it was not run");
            NOT_RUN
        }
        Err(error) => {
            eprintln!("reloop's `{shell}` shim: {error}");
            NOT_RUN
        }
    }
}

/// Under the log's lock: the first unused entry that answers `command` in
/// `cwd`, and the log line saying what became of it.
fn take_entry(plan: &Plan, command: &str, cwd: &str, invoked: &str) -> Result<Option<usize>, String> {
    let line = append_log(plan, |used| {
        let entry = (0..plan.commands.len()).find(|i| !used.contains(i) && plan.commands[*i].answers(command, cwd));
        let ran = entry.is_none() && plan.mode == ToolSideMode::ReplayOrLive;
        LogLine { command: command.to_owned(), cwd: cwd.to_owned(), entry, ran, invoked: invoked.to_owned(), passthrough: false }
    })?;
    Ok(line.entry)
}

/// Appends the line `decide` makes from the entries used so far, under
/// the log's lock, and returns it.
fn append_log(plan: &Plan, decide: impl FnOnce(&[usize]) -> LogLine) -> Result<LogLine, String> {
    let mut file = OpenOptions::new().create(true).append(true).read(true).open(&plan.log).map_err(|e| format!("cannot open its log: {e}"))?;
    file.lock().map_err(|e| format!("cannot lock its log: {e}"))?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|e| format!("cannot read its log: {e}"))?;
    let used: Vec<usize> = text.lines().filter_map(|line| serde_json::from_str::<LogLine>(line).ok()?.entry).collect();
    let line = decide(&used);
    writeln!(file, "{}", serde_json::to_string(&line).expect("plain JSON")).map_err(|e| format!("cannot write its log: {e}"))?;
    Ok(line)
}

/// Whether `line` matches one of `patterns` (a pattern that does not
/// compile matches nothing: presets are checked by their tests).
pub fn matches_any(patterns: &[String], line: &str) -> bool {
    patterns.iter().any(|pattern| regex::Regex::new(pattern).is_ok_and(|re| re.is_match(line)))
}

/// The model's command inside `line`: the `command` group of the first
/// of `wrappers` that matches, or its `quoted` group (one shell word, as
/// in Claude Code's `eval WORD`) with its quoting undone; else the whole
/// line.
pub fn unwrapped(wrappers: &[String], line: &str) -> String {
    let inner = |pattern: &String| {
        let captures = regex::Regex::new(pattern).ok()?.captures(line)?;
        captures.name("command").map(|found| found.as_str().to_owned()).or_else(|| captures.name("quoted").map(|found| unquoted(found.as_str())))
    };
    wrappers.iter().find_map(inner).unwrap_or_else(|| line.to_owned())
}

/// One shell word as the shell passes it on: `'...'` kept as it stands,
/// `"..."` with its backslashes before `$`, `` ` ``, `"`, `\` and a line
/// end taken off, a backslash outside quotes taken off (`'it'"'"'s'` and
/// `'it'\''s'` are both `it's`).
fn unquoted(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => out.extend(chars.by_ref().take_while(|&c| c != '\'')),
            '"' => {
                while let Some(c) = chars.next() {
                    match (c, chars.peek()) {
                        ('"', _) => break,
                        ('\\', Some('$' | '`' | '"' | '\\' | '\n')) => out.extend(chars.next()),
                        (c, _) => out.push(c),
                    }
                }
            }
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Whether the shells a real run starts are marked as part of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nested {
    /// A command line that runs for real: its shells run for real too.
    Mark,
    /// A script, or a shell already marked: the environment as it is.
    Keep,
}

/// Replaces this process with the real shell of that name, given the same
/// arguments and its own name as `argv[0]`.
fn run_real(plan: &Plan, shell: &str, args: &[OsString], nested: Nested) -> i32 {
    let Some((_, real)) = plan.real.iter().find(|(name, _)| name == shell) else {
        eprintln!("reloop's `{shell}` shim: the agent's PATH has no real `{shell}` to run this with");
        return NOT_RUN;
    };
    let mut command = std::process::Command::new(real);
    command.arg0(shell).args(args);
    if nested == Nested::Mark {
        command.env(NESTED_VARIABLE, "1");
    }
    let error = command.exec();
    eprintln!("reloop's `{shell}` shim: cannot start {}: {error}", real.display());
    NOT_RUN
}

/// The `COMMAND` of `bash [OPTIONS] -c COMMAND [ARG0 [ARGS]]`: the first
/// operand after options among which a short-option cluster holds `c`
/// (`-c`, `-lc`, `-ec`); `-o NAME` and `+o NAME` take their operand, and
/// `--` ends the options. `None`: no `-c`, a script or an interactive shell.
pub fn command_line(args: &[OsString]) -> Option<String> {
    let mut asked = false;
    let mut args = args.iter().map(|arg| arg.to_string_lossy());
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg == "-o" || arg == "+o" || arg == "-O" || arg == "+O" {
            args.next();
            continue;
        }
        if arg.starts_with("--") {
            continue;
        }
        if let Some(cluster) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+')).filter(|cluster| !cluster.is_empty()) {
            asked |= arg.starts_with('-') && cluster.contains('c');
            continue;
        }
        return asked.then(|| arg.into_owned());
    }
    asked.then(|| args.next().map(|arg| arg.into_owned())).flatten()
}

/// `dir` relative to `workspace` (`.` at its root), or whole when outside.
fn relative_to(dir: &Path, workspace: &Path) -> String {
    let canonical = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let (dir, workspace) = (canonical(dir), canonical(workspace));
    match dir.strip_prefix(&workspace) {
        Ok(inside) if inside.as_os_str().is_empty() => ".".to_owned(),
        Ok(inside) => inside.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reloop_recording::tool_side::ShellCommand;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_command_line_is_the_operand_after_a_c_option() {
        assert_eq!(command_line(&args(&["-c", "ls -la"])).as_deref(), Some("ls -la"));
        assert_eq!(command_line(&args(&["-lc", "make"])).as_deref(), Some("make"));
        assert_eq!(command_line(&args(&["--login", "-e", "-o", "pipefail", "-c", "make", "arg0"])).as_deref(), Some("make"));
        assert_eq!(command_line(&args(&["-c", "--", "-x"])).as_deref(), Some("-x"), "`--` ends the options");
        assert_eq!(command_line(&args(&["script.sh", "-c"])), None, "a script");
        assert_eq!(command_line(&args(&["-l"])), None, "an interactive shell");
        assert_eq!(command_line(&args(&["-o", "c", "script.sh"])), None, "`c` as the operand of -o");
    }

    fn plan(dir: &Path, mode: ToolSideMode) -> Plan {
        let entry = |command: &str, stdout: &str| ShellCommand { command: command.into(), stdout: stdout.into(), ..ShellCommand::default() };
        Plan {
            mode,
            workspace: dir.to_owned(),
            commands: vec![entry("make", "first\n"), entry("make", "second\n")],
            real: Vec::new(),
            log: dir.join("log.jsonl"),
            aliases: Vec::new(),
            unwrap: Vec::new(),
            passthrough: Vec::new(),
        }
    }

    #[test]
    fn each_repeat_of_a_command_takes_the_next_entry_and_then_none_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), ToolSideMode::Replay);
        assert_eq!(take_entry(&plan, "make", ".", "bash").unwrap(), Some(0));
        assert_eq!(take_entry(&plan, "make", ".", "bash").unwrap(), Some(1));
        assert_eq!(take_entry(&plan, "make", ".", "bash").unwrap(), None);
        let lines = super::super::read_log(&plan.log);
        assert_eq!(lines.iter().map(|line| (line.entry, line.diverged())).collect::<Vec<_>>(), [(Some(0), false), (Some(1), false), (None, true)]);
    }

    #[test]
    fn replay_or_live_logs_an_unrecorded_command_as_run() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), ToolSideMode::ReplayOrLive);
        assert_eq!(take_entry(&plan, "make install", ".", "bash").unwrap(), None);
        let [line] = super::super::read_log(&plan.log).try_into().unwrap();
        assert!(line.ran && !line.diverged(), "{line:?}");
    }

    #[test]
    fn a_wrapper_gives_its_command_group_or_its_quoted_group_unquoted() {
        let wrappers = [r"(?s)^\(\n(?P<command>.*)\n\)$".to_owned(), r"(?s)^eval (?P<quoted>\S+(?: \S+)*?) < /dev/null$".to_owned()];
        assert_eq!(unwrapped(&wrappers, "(\nmake\n  test\n)"), "make\n  test");
        assert_eq!(unwrapped(&wrappers, r"eval 'echo '\''hi'\'' > out' < /dev/null"), "echo 'hi' > out");
        assert_eq!(unwrapped(&wrappers, r#"eval 'echo '"'"'hi'"'"' > out' < /dev/null"#), "echo 'hi' > out");
        assert_eq!(unwrapped(&wrappers, r#"eval "a \$b \"c\" \d" < /dev/null"#), r#"a $b "c" \d"#, "double quotes keep a backslash they do not escape");
        assert_eq!(unwrapped(&wrappers, "eval ls < /dev/null"), "ls");
        assert_eq!(unwrapped(&wrappers, "make"), "make", "no wrapper: the line itself");
    }

    #[test]
    fn a_folder_is_read_relative_to_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        assert_eq!(relative_to(dir.path(), dir.path()), ".");
        assert_eq!(relative_to(&dir.path().join("src"), dir.path()), "src");
        assert_eq!(relative_to(Path::new("/"), dir.path()), "/");
    }
}
