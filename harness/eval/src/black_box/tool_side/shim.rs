//! The reloop binary started as `bash` or `sh` through a shim link
//! ([`super::Shims`]), or bound over `/bin/sh` (`dash`) or `/bin/bash`
//! ([`super::mount`]): a command line (`-c COMMAND`) is answered with the
//! first recorded entry not yet used that has that line and folder, its
//! output written and its exit status returned, and nothing runs. Without
//! an entry, `replay` refuses the command (exit 127, as a shell does for a
//! command it cannot find) and `replay-or-live` runs it in the real shell;
//! `record` runs every command so. A command that runs is watched
//! ([`run_watched`]): its output reaches the agent as it comes and is kept,
//! with its status and input, in the log. A shell given no command line (a script, an interactive shell) is the
//! agent's interpreter rather than one of its commands: it runs for real,
//! logged. Shims of one run take turns on the log, under a file lock, so
//! parallel tool calls each get an entry of their own. The agent's own
//! wrapper around the model's command is taken off before the lookup
//! ([`Plan::unwrap`]), and a line of its runtime ([`Plan::passthrough`])
//! runs for real, logged; the shells it starts are answered again (Codex's
//! wrapper execs `/bin/bash -c COMMAND`). A shell started inside a command
//! that runs for real is part of it: it runs, unlogged
//! ([`NESTED_VARIABLE`]).

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use reloop_files::scenario::agent::ToolSideMode;

use super::{LogLine, PLAN_VARIABLE, Plan, Ran, SHELLS};

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
        let logged = LogLine { ran: true, passthrough: true, ..LogLine::new(line, cwd, invoked, None) };
        if let Err(error) = append_log(plan, |_| Some(logged)) {
            eprintln!("reloop's `{shell}` shim: {error}");
        }
        // Its shells are still answered: Codex's wrapper execs `/bin/bash -c COMMAND`.
        return run_real(plan, shell, args, Nested::Keep);
    }
    let command = unwrapped(&plan.unwrap, &line);
    let asked = LogLine::new(command.clone(), cwd, invoked, super::served::ask(&plan.served));
    let taken = if plan.mode == ToolSideMode::Record { Ok(None) } else { take_entry(plan, asked.clone()) };
    match taken {
        Ok(Some(index)) => {
            let entry = &plan.commands[index];
            // A closed pipe on the agent's side is its business: what it read, it read.
            let _ = std::io::stdout().write_all(entry.stdout.as_bytes());
            let _ = std::io::stderr().write_all(entry.stderr.as_bytes());
            entry.exit_code
        }
        Ok(None) if plan.mode.runs_unanswered() => match run_watched(plan, shell, args) {
            Ok(ran) => {
                let exit_code = ran.exit_code;
                let line = LogLine { ran: true, output: Some(ran), ..asked };
                if let Err(error) = append_log(plan, |_| Some(line)) {
                    eprintln!("reloop's `{shell}` shim: {error}");
                }
                exit_code
            }
            Err(error) => {
                eprintln!("reloop's `{shell}` shim: {error}");
                NOT_RUN
            }
        },
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

/// Under the log's lock: the first unused entry that answers `line`'s
/// command in its folder. The line, with the entry, is logged, unless no
/// entry answers and the command is to run (it is logged once it ran,
/// with what it did).
fn take_entry(plan: &Plan, line: LogLine) -> Result<Option<usize>, String> {
    let mut entry = None;
    append_log(plan, |used| {
        entry = (0..plan.commands.len()).find(|i| !used.contains(i) && plan.commands[*i].answers(&line.command, &line.cwd));
        (entry.is_some() || !plan.mode.runs_unanswered()).then_some(LogLine { entry, ..line })
    })?;
    Ok(entry)
}

/// Appends the line `decide` makes from the entries used so far, if it
/// makes one, under the log's lock (a long output is more than one atomic
/// write).
fn append_log(plan: &Plan, decide: impl FnOnce(&[usize]) -> Option<LogLine>) -> Result<(), String> {
    let mut file = OpenOptions::new().create(true).append(true).read(true).open(&plan.log).map_err(|e| format!("cannot open its log: {e}"))?;
    file.lock().map_err(|e| format!("cannot lock its log: {e}"))?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|e| format!("cannot read its log: {e}"))?;
    let used: Vec<usize> = text.lines().filter_map(|line| serde_json::from_str::<LogLine>(line).ok()?.entry).collect();
    if let Some(line) = decide(&used) {
        writeln!(file, "{}", serde_json::to_string(&line).expect("plain JSON")).map_err(|e| format!("cannot write its log: {e}"))?;
    }
    Ok(())
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

/// The real shell of that name, found on the agent's `PATH` when the shims were made.
fn real_shell<'a>(plan: &'a Plan, shell: &str) -> Result<&'a PathBuf, String> {
    plan.real.iter().find(|(name, _)| name == shell).map(|(_, real)| real).ok_or_else(|| format!("the agent's PATH has no real `{shell}` to run this with"))
}

/// Replaces this process with the real shell of that name, given the same
/// arguments and its own name as `argv[0]`.
fn run_real(plan: &Plan, shell: &str, args: &[OsString], nested: Nested) -> i32 {
    let real = match real_shell(plan, shell) {
        Ok(real) => real,
        Err(error) => {
            eprintln!("reloop's `{shell}` shim: {error}");
            return NOT_RUN;
        }
    };
    let mut command = Command::new(real);
    command.arg0(shell).args(args);
    if nested == Nested::Mark {
        command.env(NESTED_VARIABLE, "1");
    }
    let error = command.exec();
    eprintln!("reloop's `{shell}` shim: cannot start {}: {error}", real.display());
    NOT_RUN
}

/// Runs the command in the real shell as this shim's child (its own
/// shells marked as part of it), its output copied to the agent as it
/// comes and kept, and its input passed on from the agent and kept: what
/// it did, for the log. The input is what came until the command ended (an
/// agent may never close a pipe it gave: waiting for its end would wait
/// for ever), so a command that ends without reading its input may leave
/// some of it unkept.
fn run_watched(plan: &Plan, shell: &str, args: &[OsString]) -> Result<Ran, String> {
    let real = real_shell(plan, shell)?;
    let mut child = Command::new(real)
        .arg0(shell)
        .args(args)
        .env(NESTED_VARIABLE, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", real.display()))?;
    let stdin = Arc::new(Mutex::new(Vec::new()));
    if let Some(pipe) = child.stdin.take() {
        let kept = Arc::clone(&stdin);
        // Not joined: it may wait on an input that never ends.
        std::thread::spawn(move || copy(std::io::stdin(), pipe, &kept));
    }
    let tee = |pipe: Option<Box<dyn Read + Send>>, to: Box<dyn Write + Send>| {
        std::thread::spawn(move || {
            let kept = Mutex::new(Vec::new());
            if let Some(pipe) = pipe {
                copy(pipe, to, &kept);
            }
            kept.into_inner().unwrap_or_default()
        })
    };
    let stdout = tee(child.stdout.take().map(|p| Box::new(p) as _), Box::new(std::io::stdout()));
    let stderr = tee(child.stderr.take().map(|p| Box::new(p) as _), Box::new(std::io::stderr()));
    let status = child.wait().map_err(|e| format!("cannot wait for {}: {e}", real.display()))?;
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
    let stdin = stdin.lock().map(|kept| kept.clone()).unwrap_or_default();
    Ok(Ran {
        stdout: text(stdout),
        stderr: text(stderr),
        exit_code: status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        stdin: (!stdin.is_empty()).then(|| text(stdin)),
    })
}

/// Copies `from` to `to` until either ends, keeping what passed in `kept`;
/// a reader that went away ends the copy (what it did not read stays kept).
fn copy(mut from: impl Read, mut to: impl Write, kept: &Mutex<Vec<u8>>) {
    let mut buffer = [0u8; 8192];
    while let Ok(read @ 1..) = from.read(&mut buffer) {
        if let Ok(mut kept) = kept.lock() {
            kept.extend_from_slice(&buffer[..read]);
        }
        if to.write_all(&buffer[..read]).and_then(|()| to.flush()).is_err() {
            break;
        }
    }
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
            served: dir.join("served.sock"),
            aliases: Vec::new(),
            unwrap: Vec::new(),
            passthrough: Vec::new(),
        }
    }

    fn line(command: &str) -> LogLine {
        LogLine::new(command.to_owned(), ".".to_owned(), "bash", None)
    }

    #[test]
    fn each_repeat_of_a_command_takes_the_next_entry_and_then_none_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), ToolSideMode::Replay);
        assert_eq!(take_entry(&plan, line("make")).unwrap(), Some(0));
        assert_eq!(take_entry(&plan, line("make")).unwrap(), Some(1));
        assert_eq!(take_entry(&plan, line("make")).unwrap(), None);
        let lines = super::super::read_log(&plan.log);
        assert_eq!(lines.iter().map(|line| (line.entry, line.diverged())).collect::<Vec<_>>(), [(Some(0), false), (Some(1), false), (None, true)]);
    }

    #[test]
    fn replay_or_live_leaves_an_unrecorded_command_to_be_logged_once_it_ran() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), ToolSideMode::ReplayOrLive);
        assert_eq!(take_entry(&plan, line("make install")).unwrap(), None);
        assert_eq!(take_entry(&plan, line("make")).unwrap(), Some(0));
        let [line] = super::super::read_log(&plan.log).try_into().unwrap();
        assert_eq!((line.command.as_str(), line.entry), ("make", Some(0)));
    }

    #[test]
    fn a_watched_command_passes_its_input_and_output_on_and_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let Some(sh) = super::super::on_path("sh", &[("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())]) else { return };
        let plan = Plan { real: vec![("sh".to_owned(), sh)], ..plan(dir.path(), ToolSideMode::Record) };
        let ran = run_watched(&plan, "sh", &args(&["-c", "echo out; echo err >&2; exit 3"])).unwrap();
        assert_eq!(ran, Ran { stdout: "out\n".into(), stderr: "err\n".into(), exit_code: 3, stdin: None });
        let killed = run_watched(&plan, "sh", &args(&["-c", "kill -9 $$"])).unwrap();
        assert_eq!(killed.exit_code, 137, "128 + SIGKILL, as a shell says");
        let nested = run_watched(&plan, "sh", &args(&["-c", "echo $RELOOP_TOOL_SIDE_NESTED"])).unwrap();
        assert_eq!(nested.stdout, "1\n", "its own shells run as part of it");
    }

    #[test]
    fn the_copy_keeps_what_passed_and_stops_when_the_reader_goes() {
        struct Gone;
        impl Write for Gone {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let kept = Mutex::new(Vec::new());
        copy(&b"line one\n"[..], Gone, &kept);
        assert_eq!(kept.into_inner().unwrap(), b"line one\n");
        let (kept, mut to) = (Mutex::new(Vec::new()), Vec::new());
        copy(&b"abc"[..], &mut to, &kept);
        assert_eq!((kept.into_inner().unwrap(), to), (b"abc".to_vec(), b"abc".to_vec()));
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
