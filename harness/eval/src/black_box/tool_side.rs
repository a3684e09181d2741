//! The agent's shell under `agent.tools: replay | replay-or-live | record`:
//! a folder of shims put first on the agent's `PATH` (and as its `$SHELL`),
//! each a link named `bash` or `sh` to the reloop binary, which answers a
//! command line from the recording's `tool_side:` instead of running it,
//! or runs it watched ([`shim`]). The shims share one plan, written before
//! the agent starts, and one log, read after it ends: which commands were
//! answered, which the recording lacked, and which ran for real with what
//! they did, which a `record` run writes into its re-recording
//! ([`recorded`]).
//!
//! What this reaches: a shell the agent finds on `PATH` or in `$SHELL`
//! (`subprocess.run(["bash", "-c", ...])`, Node's `spawn("bash", ...)`,
//! `execvp("sh")`); under `agent.shell_interception: mount` also one it
//! starts by absolute path (`/bin/sh`, as Python's `shell=True` does),
//! the shims bound there in a mount namespace ([`mount`]).

pub mod mount;
#[cfg(test)]
mod preset_shells;
pub mod served;
pub mod shim;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reloop_files::scenario::agent::{PresetShell, ShellInterception, ToolSideMode};
use reloop_mock::live::RecordMode;
use reloop_mock::{RequestRecord, Session};
use reloop_recording::tool_side::ShellCommand;
use serde::{Deserialize, Serialize};

use super::process::{agent_path, on_path};
use crate::result::{EventRow, StepRow};
use crate::scenario::LiveSettings;
use served::ServedCounter;

/// The variable that hands a shim its plan; a `bash` or `sh` started
/// without it is not a shim ([`shim::called_as_shim`]).
pub const PLAN_VARIABLE: &str = "RELOOP_TOOL_SIDE";

/// The shells whose names the shims take.
pub const SHELLS: [&str; 2] = ["bash", "sh"];

/// What every shim of a run reads: how to answer, from what, and where to
/// say what it did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// `agent.tools`: what a command the recording lacks gets.
    pub mode: ToolSideMode,
    /// The agent's workspace: a command's folder is read relative to it.
    pub workspace: PathBuf,
    /// The recorded commands, in order.
    pub commands: Vec<ShellCommand>,
    /// The real shells by name (found on the agent's own `PATH`), for a
    /// command that runs for real and for a shell that runs a script.
    pub real: Vec<(String, PathBuf)>,
    /// The log every shim appends a line to.
    pub log: PathBuf,
    /// The socket that says how many requests the mock has handled ([`served`]).
    pub served: PathBuf,
    /// Other names a shim may be started as, each with the shell it is
    /// (`dash` for `sh`, under `mount`).
    #[serde(default)]
    pub aliases: Vec<(String, String)>,
    /// The agent's wrappers of the model's command ([`PresetShell::unwrap`]).
    #[serde(default)]
    pub unwrap: Vec<String>,
    /// The lines its runtime runs for itself ([`PresetShell::passthrough`]).
    #[serde(default)]
    pub passthrough: Vec<String>,
}

/// One line of the log: a command line the agent's shell was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    /// The command line (`-c`).
    pub command: String,
    /// Its folder, relative to the workspace (absolute when outside it).
    pub cwd: String,
    /// The recorded entry that answered it.
    pub entry: Option<usize>,
    /// It ran for real (`replay-or-live`, the recording lacking it;
    /// `record`; or a passthrough).
    pub ran: bool,
    /// How the shell was started (`argv[0]`: `bash`, `/bin/sh`, a path).
    #[serde(default)]
    pub invoked: String,
    /// A line of the agent's runtime ([`Plan::passthrough`]), run for real.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub passthrough: bool,
    /// How many requests the mock had handled when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<usize>,
    /// What it did, when it ran watched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Ran>,
}

/// What a command that ran for real did, as the shim that ran it saw.
/// Bytes that are not UTF-8 are kept as U+FFFD (the agent got them whole).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ran {
    /// What it wrote to standard output.
    pub stdout: String,
    /// What it wrote to standard error.
    pub stderr: String,
    /// Its status, or 128 plus the signal that ended it, as a shell says.
    pub exit_code: i32,
    /// What the agent gave it on standard input until it ended; `None`: nothing.
    pub stdin: Option<String>,
}

impl LogLine {
    /// The line of `command` started in `cwd` as `invoked` after
    /// `requests`, before anything answered it.
    pub fn new(command: String, cwd: String, invoked: &str, requests: Option<usize>) -> Self {
        Self { command, cwd, invoked: invoked.to_owned(), requests, ..Self::default() }
    }

    /// The recording lacked it and it did not run: a `tool_side` divergence.
    pub fn diverged(&self) -> bool {
        self.entry.is_none() && !self.ran
    }
}

/// The shims' mode for a run: the scenario's `agent.tools`, or `record`
/// when the run sends every model call live (`--record-mode all`): a fresh
/// recording of the model's side needs the world's side it answered.
pub fn mode_of(tools: ToolSideMode, live: Option<&LiveSettings>) -> ToolSideMode {
    if live.is_some_and(|live| live.upstream.trigger().mode == RecordMode::All) { ToolSideMode::Record } else { tools }
}

/// The environment a run's agent gets for `mode`, the shells bound
/// over under `mount`, and the log to read after it: `None` under `live`.
pub struct Shims {
    /// `PATH` (the shims first), `SHELL` and the plan's variable.
    pub env: Vec<(String, String)>,
    log: PathBuf,
    /// reloop's binary, the shim itself.
    binary: PathBuf,
    /// Under `mount`, the shell files the shim covers.
    covered: Option<Vec<mount::Covered>>,
    /// Answers the shims for as long as the run lasts.
    _served: ServedCounter,
}

/// Makes the folders the recorded commands ran in, inside `workspace`:
/// they existed when the session ran, and an agent that starts a command in
/// a folder that does not exist fails to spawn its shell (Node's `spawn`
/// says ENOENT) before the shim can answer. A folder that would leave the
/// workspace is not made.
///
/// # Errors
///
/// A folder cannot be made.
pub fn make_recorded_folders(workspace: &Path, commands: &[ShellCommand]) -> Result<(), String> {
    for folder in commands.iter().filter_map(|command| command.cwd.as_deref()) {
        if reloop_files::scenario::agent::check_file_path(folder).is_ok() {
            let path = workspace.join(folder);
            std::fs::create_dir_all(&path).map_err(|e| format!("cannot make {}, where a recorded command ran: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// How the agent reaches its shell ([`Shims::install`]).
#[derive(Debug, Clone, Copy)]
pub struct ShellSetup {
    /// `agent.shell_interception`.
    pub interception: ShellInterception,
    /// The agent runtime's wrappers and passthrough lines.
    pub shell: PresetShell,
}

impl Shims {
    /// Writes the shims and their plan into `scratch` (outside the
    /// workspace, so the agent's tools do not see them) for an agent started
    /// with `env`.
    ///
    /// # Errors
    ///
    /// The folder, the links, the plan or the request counter cannot be
    /// made, or reloop cannot name its own binary.
    pub fn install(
        (mode, setup): (ToolSideMode, ShellSetup),
        commands: &[ShellCommand],
        (scratch, workspace): (&Path, &Path),
        env: &[(String, String)],
        session: &Arc<Session>,
    ) -> Result<Option<Self>, String> {
        if mode == ToolSideMode::Live {
            return Ok(None);
        }
        let dir = scratch.join("shims");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make the shell shims' folder: {e}"))?;
        let binary = std::env::current_exe().map_err(|e| format!("cannot name reloop's own binary for the shell shims: {e}"))?;
        for shell in SHELLS {
            std::os::unix::fs::symlink(&binary, dir.join(shell)).map_err(|e| format!("cannot link the `{shell}` shim: {e}"))?;
        }
        let covered = (setup.interception == ShellInterception::Mount).then(|| mount::covered(&scratch.join("real-shells")));
        let real = SHELLS.iter().filter_map(|shell| on_path(shell, env).map(|path| ((*shell).to_owned(), reachable(path, covered.as_deref())))).collect();
        let log = scratch.join("tool-side.jsonl");
        let served = scratch.join("tool-side.sock");
        let counter = ServedCounter::start(&served, Arc::clone(session))?;
        let owned = |patterns: &[&str]| patterns.iter().map(|p| (*p).to_owned()).collect();
        let plan = Plan {
            mode,
            workspace: workspace.to_owned(),
            commands: commands.to_vec(),
            real,
            log: log.clone(),
            served,
            aliases: covered.as_deref().map(mount::aliases).unwrap_or_default(),
            unwrap: owned(setup.shell.unwrap),
            passthrough: owned(setup.shell.passthrough),
        };
        let plan_file = scratch.join("tool-side.plan.json");
        std::fs::write(&plan_file, serde_json::to_vec(&plan).expect("plain JSON")).map_err(|e| format!("cannot write the shell shims' plan: {e}"))?;
        let path = std::env::join_paths(std::iter::once(dir.clone()).chain(agent_path(env).iter().flat_map(std::env::split_paths)))
            .map_err(|e| format!("cannot put the shell shims on the agent's PATH: {e}"))?;
        let env = vec![
            ("PATH".to_owned(), path.to_string_lossy().into_owned()),
            ("SHELL".to_owned(), dir.join("bash").display().to_string()),
            (PLAN_VARIABLE.to_owned(), plan_file.display().to_string()),
        ];
        Ok(Some(Self { env, log, binary, covered, _served: counter }))
    }

    /// The argv that starts the agent: under `mount`, inside bwrap.
    ///
    /// # Errors
    ///
    /// bubblewrap is not installed ([`mount::wrap`]).
    pub fn launch_argv(&self, argv: Vec<String>) -> Result<Vec<String>, String> {
        match &self.covered {
            Some(covered) => mount::wrap(&argv, &self.binary, covered),
            None => Ok(argv),
        }
    }

    /// What the agent's shells did, in order.
    pub fn read_log(&self) -> Vec<LogLine> {
        read_log(&self.log)
    }
}

/// The real shell at `path`, as the agent reaches it: under `mount` a
/// file the shim covers is reached at its real program's place.
fn reachable(path: PathBuf, covered: Option<&[mount::Covered]>) -> PathBuf {
    let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    covered.and_then(|covered| covered.iter().find(|c| c.file == canonical)).map_or(path, |c| c.real.clone())
}

/// The log's lines; a line that does not parse (a shim killed mid-write)
/// is left out.
pub fn read_log(path: &Path) -> Vec<LogLine> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

/// What the shims saw of a run, for its report's `tool_side_replayed`,
/// `tool_side_divergences` and `commands_run_live`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolSideCounts {
    /// Commands answered from the recording.
    pub replayed: u64,
    /// Commands the recording lacked that did not run.
    pub divergences: u64,
    /// The model's commands that ran for real (the runtime's passthrough lines not counted).
    pub run_live: u64,
}

impl ToolSideCounts {
    /// The counts of a run whose shells did `lines`.
    pub fn of(lines: &[LogLine]) -> Self {
        let count = |keep: fn(&LogLine) -> bool| lines.iter().filter(|line| keep(line)).count() as u64;
        Self { replayed: count(|line| line.entry.is_some()), divergences: count(LogLine::diverged), run_live: count(|line| line.ran && !line.passthrough) }
    }

    /// These counts with the MCP requests the replayer answered (`replayed`)
    /// or lacked (`divergences`) added: the tool side is shells and servers.
    pub fn with_mcp(self, lines: &[super::mcp::LogLine]) -> Self {
        let answered = lines.iter().filter(|line| line.entry.is_some()).count() as u64;
        let diverged = lines.iter().filter(|line| line.diverged).count() as u64;
        Self { replayed: self.replayed + answered, divergences: self.divergences + diverged, ..self }
    }
}

/// The `tool_side` divergences of a run whose shells did `lines`, in order.
pub fn divergences(lines: &[LogLine], commands: &[ShellCommand]) -> Vec<String> {
    let mut used = Vec::new();
    let mut found = Vec::new();
    for line in lines {
        used.extend(line.entry);
        if line.diverged() {
            found.push(divergence_message(line, commands, &used));
        }
    }
    found
}

/// The world side a `record` run leaves: each command that ran watched,
/// in the order they ended, with the exchange served last before it
/// started as the re-recording numbers it (not yet redacted:
/// `crate::live_run` does).
pub fn recorded(lines: &[LogLine], session: &Session) -> Vec<ShellCommand> {
    let log = session.log();
    let entry = |line: &LogLine, ran: &Ran| ShellCommand {
        command: line.command.clone(),
        stdout: ran.stdout.clone(),
        stderr: ran.stderr.clone(),
        exit_code: ran.exit_code,
        cwd: Some(line.cwd.clone()),
        stdin: ran.stdin.clone(),
        after_exchange: after_exchange(line, &log).and_then(|exchange| session.rerecorded_index(exchange)),
    };
    lines.iter().filter_map(|line| line.output.as_ref().map(|ran| entry(line, ran))).collect()
}

/// The exchange (numbered as in the log) served last before `line`'s
/// command started: what asked for it.
pub fn after_exchange(line: &LogLine, log: &[RequestRecord]) -> Option<usize> {
    let before = &log[..line.requests?.min(log.len())];
    before.iter().rev().find(|record| record.status == 200 && record.exchange.is_some())?.exchange
}

/// The report's step whose answer was `exchange` (0 when none): where an
/// event of the world side that followed it sits.
pub fn step_of(exchange: Option<usize>, steps: &[StepRow]) -> u64 {
    steps.iter().find(|row| row.purpose == "main" && exchange.is_some_and(|e| row.exchange == Some(e as u64))).map_or(0, |row| row.step)
}

/// The report's event for one shell the agent started (`tool_side_command`),
/// at the step whose answer asked for it: the command, what answered it
/// (the recorded entry's output, or what it did when it ran watched) and
/// the exchange served before it.
pub fn event(line: &LogLine, commands: &[ShellCommand], (log, steps): (&[RequestRecord], &[StepRow]), at_ms: u64) -> EventRow {
    let after = after_exchange(line, log);
    let step = step_of(after, steps);
    let served = line.entry.and_then(|entry| commands.get(entry));
    let (stdout, stderr, exit_code) = match (served, &line.output) {
        (Some(entry), _) => (Some(&entry.stdout), Some(&entry.stderr), Some(entry.exit_code)),
        (None, Some(ran)) => (Some(&ran.stdout), Some(&ran.stderr), Some(ran.exit_code)),
        (None, None) => (None, None, None),
    };
    let payload = serde_json::json!({
        "command": line.command,
        "cwd": line.cwd,
        "entry": line.entry,
        "ran": line.ran,
        "diverged": line.diverged(),
        "invoked": line.invoked,
        "passthrough": line.passthrough,
        "after_exchange": after,
        "stdout": stdout,
        "stderr": stderr,
        "exit_code": exit_code,
    });
    EventRow { seq: 0, step, at_ms, kind: "tool_side_command".to_owned(), payload: payload.to_string(), ..EventRow::default() }
}

/// The `tool_side` divergence of a run whose agent ran `line`, which the
/// recording lacks: what came, and what the recording still held.
fn divergence_message(line: &LogLine, commands: &[ShellCommand], used: &[usize]) -> String {
    let unused: Vec<String> = commands.iter().enumerate().filter(|(i, _)| !used.contains(i)).map(|(_, c)| format!("`{}`", c.command)).collect();
    let expected =
        if unused.is_empty() { "no command is left in the recording".to_owned() } else { format!("the recording's unused commands: {}", unused.join(", ")) };
    format!(
        "tool_side divergence: the agent's shell ran `{}` (in `{}`), which the recording's tool_side: lacks ({expected}); it was not run",
        line.command, line.cwd
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_divergence_names_the_command_and_what_was_left() {
        let commands =
            [ShellCommand { command: "make".into(), ..ShellCommand::default() }, ShellCommand { command: "make test".into(), ..ShellCommand::default() }];
        let line = LogLine { command: "make install".into(), cwd: ".".into(), entry: None, ran: false, ..LogLine::default() };
        assert!(line.diverged());
        let message = divergence_message(&line, &commands, &[0]);
        assert!(message.contains("`make install` (in `.`)") && message.contains("unused commands: `make test`") && !message.contains("`make`,"), "{message}");
    }

    #[test]
    fn the_folders_commands_ran_in_are_made_inside_the_workspace_only() {
        let scratch = tempfile::tempdir().unwrap();
        let workspace = scratch.path().join("workspace");
        let ran_in = |cwd: &str| ShellCommand { command: "make".into(), cwd: Some(cwd.into()), ..ShellCommand::default() };
        let commands = [ran_in("django_repo/tests"), ran_in("."), ran_in("../outside"), ShellCommand { command: "ls".into(), ..ShellCommand::default() }];
        make_recorded_folders(&workspace, &commands).unwrap();
        assert!(workspace.join("django_repo/tests").is_dir());
        assert!(!scratch.path().join("outside").exists(), "a folder outside the workspace is not made");
    }

    #[test]
    fn live_installs_nothing() {
        let scratch = tempfile::tempdir().unwrap();
        let setup = ShellSetup { interception: ShellInterception::Mount, shell: PresetShell::PLAIN };
        let config = reloop_mock::SessionConfig {
            recording: Arc::default(),
            context_window: None,
            pacer: Arc::new(reloop_mock::NoPacer),
            faults: Vec::new(),
            provider_tokens: None,
        };
        let session = Arc::new(Session::new(config).unwrap());
        assert!(Shims::install((ToolSideMode::Live, setup), &[], (scratch.path(), scratch.path()), &[], &session).unwrap().is_none());
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    }
}
