//! The reloop binary started as `bash` or `sh` through a shim link
//! ([`super::Shims`]): a command line (`-c COMMAND`) is answered with the
//! first recorded entry not yet used that has that line and folder, its
//! output written and its exit status returned, and nothing runs. Without
//! an entry, `replay` refuses the command (exit 127, as a shell does for a
//! command it cannot find) and `replay-or-live` runs it in the real shell.
//! A shell given no command line (a script, an interactive shell) is the
//! agent's interpreter rather than one of its commands: it runs for real,
//! logged. Shims of one run take turns on the log, under a file lock, so
//! parallel tool calls each get an entry of their own.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;

use reloop_files::scenario::agent::ToolSideMode;

use super::{LogLine, PLAN_VARIABLE, Plan, SHELLS};

/// What a shell that cannot start its command exits with.
const NOT_RUN: i32 = 127;

/// When this process was started through a shim, what it exits with: the
/// caller exits with it at once. `None`: reloop was started as itself.
pub fn called_as_shim() -> Option<i32> {
    let mut args = std::env::args_os();
    let invoked = args.next()?;
    let name = Path::new(&invoked).file_name()?.to_str()?.to_owned();
    if !SHELLS.contains(&name.as_str()) {
        return None;
    }
    let plan_file = std::env::var_os(PLAN_VARIABLE)?;
    let args: Vec<OsString> = args.collect();
    let plan: Plan = match std::fs::read(&plan_file).map_err(|e| e.to_string()).and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string())) {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("reloop's `{name}` shim: cannot read its plan {}: {error}", Path::new(&plan_file).display());
            return Some(NOT_RUN);
        }
    };
    Some(answer(&plan, &name, &args))
}

/// Answers one shell start (see the module doc).
fn answer(plan: &Plan, shell: &str, args: &[OsString]) -> i32 {
    let cwd = std::env::current_dir().map(|dir| relative_to(&dir, &plan.workspace)).unwrap_or_else(|_| ".".to_owned());
    let Some(command) = command_line(args) else { return run_real(plan, shell, args) };
    match take_entry(plan, &command, &cwd) {
        Ok(Some(index)) => {
            let entry = &plan.commands[index];
            // A closed pipe on the agent's side is its business: what it read, it read.
            let _ = std::io::stdout().write_all(entry.stdout.as_bytes());
            let _ = std::io::stderr().write_all(entry.stderr.as_bytes());
            entry.exit_code
        }
        Ok(None) if plan.mode == ToolSideMode::ReplayOrLive => run_real(plan, shell, args),
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
fn take_entry(plan: &Plan, command: &str, cwd: &str) -> Result<Option<usize>, String> {
    let mut file = OpenOptions::new().create(true).append(true).read(true).open(&plan.log).map_err(|e| format!("cannot open its log: {e}"))?;
    file.lock().map_err(|e| format!("cannot lock its log: {e}"))?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|e| format!("cannot read its log: {e}"))?;
    let used: Vec<usize> = text.lines().filter_map(|line| serde_json::from_str::<LogLine>(line).ok()?.entry).collect();
    let entry = (0..plan.commands.len()).find(|i| !used.contains(i) && plan.commands[*i].answers(command, cwd));
    let line = LogLine { command: command.to_owned(), cwd: cwd.to_owned(), entry, ran: entry.is_none() && plan.mode == ToolSideMode::ReplayOrLive };
    writeln!(file, "{}", serde_json::to_string(&line).expect("plain JSON")).map_err(|e| format!("cannot write its log: {e}"))?;
    Ok(entry)
}

/// Replaces this process with the real shell of that name, given the same
/// arguments and its own name as `argv[0]`.
fn run_real(plan: &Plan, shell: &str, args: &[OsString]) -> i32 {
    let Some((_, real)) = plan.real.iter().find(|(name, _)| name == shell) else {
        eprintln!("reloop's `{shell}` shim: the agent's PATH has no real `{shell}` to run this with");
        return NOT_RUN;
    };
    let error = std::process::Command::new(real).arg0(shell).args(args).exec();
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
        }
    }

    #[test]
    fn each_repeat_of_a_command_takes_the_next_entry_and_then_none_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), ToolSideMode::Replay);
        assert_eq!(take_entry(&plan, "make", ".").unwrap(), Some(0));
        assert_eq!(take_entry(&plan, "make", ".").unwrap(), Some(1));
        assert_eq!(take_entry(&plan, "make", ".").unwrap(), None);
        let lines = super::super::read_log(&plan.log);
        assert_eq!(lines.iter().map(|line| (line.entry, line.diverged())).collect::<Vec<_>>(), [(Some(0), false), (Some(1), false), (None, true)]);
    }

    #[test]
    fn replay_or_live_logs_an_unrecorded_command_as_run() {
        let dir = tempfile::tempdir().unwrap();
        let plan = plan(dir.path(), ToolSideMode::ReplayOrLive);
        assert_eq!(take_entry(&plan, "make install", ".").unwrap(), None);
        let [line] = super::super::read_log(&plan.log).try_into().unwrap();
        assert!(line.ran && !line.diverged(), "{line:?}");
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
