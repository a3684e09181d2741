//! Strategies as plug-ins: a program in any language, in its own process,
//! speaking JSON lines on its stdin and stdout ([`protocol`],
//! `docs/strategies.md`). [`PluginStrategy`] is a [`ContextStrategy`] like
//! the built-in ones: its edits are carried out, reported and priced by the
//! same code, so no figure tells a plug-in from a built-in strategy.
//!
//! One process per run, started at the run's first plan and killed when the
//! run ends (the strategy is dropped with the loop). Anything but a valid
//! answer within the time bound (a crash, garbage, another protocol
//! version, silence, an edit of a message that does not exist) is a
//! [`StrategyError`] naming the step and what came back, and ends the run.

mod edits;
mod process;
pub mod protocol;

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use self::process::{PluginProcess, Silence};
use self::protocol::{FromPlugin, PROTOCOL_VERSION, PlanRequest, ToPlugin};
use super::{ContextStrategy, Planned, StrategyContext, StrategyError, StrategySpec, StrategyTuning};

/// How long a plug-in may take to answer one line, in seconds, unless its
/// `timeout_secs` says otherwise. Real time: the loop's clock is virtual.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;

/// Characters of a plug-in's answer or stderr quoted in an error.
const QUOTED_CHARS: usize = 300;

/// A plug-in as a scenario names it: `{ command: [python3, mine.py] }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginCommand {
    /// The program and its arguments, run in the scenario's folder.
    pub command: Vec<String>,
    /// How long it may take to answer one line, in seconds (real time).
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// Anything, sent to it as written in its hello.
    #[serde(default)]
    pub settings: serde_json::Value,
}

fn default_timeout_secs() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

impl PluginCommand {
    /// The command for a plug-in's file: `python3 FILE` for a `.py`, the
    /// file itself otherwise (an executable, or a script with a `#!` line).
    pub fn for_file(file: &Path) -> Self {
        let file = file.to_string_lossy().into_owned();
        let command = if file.ends_with(".py") { vec!["python3".to_owned(), file] } else { vec![file] };
        Self { command, timeout_secs: DEFAULT_TIMEOUT_SECS, settings: serde_json::Value::Null }
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }
}

/// The name a plug-in declares in its handshake: it is started in `dir`,
/// greeted, and stopped (a sweep names a variant after it).
pub fn declared_name(command: &PluginCommand, tuning: &StrategyTuning, dir: &Path) -> Result<String, StrategyError> {
    let mut strategy = PluginStrategy::new(command.clone(), tuning.clone(), dir.to_owned());
    strategy.running(None)?;
    Ok(strategy.name().to_owned())
}

/// A strategy served by a plug-in process.
pub struct PluginStrategy {
    command: PluginCommand,
    tuning: StrategyTuning,
    dir: PathBuf,
    /// The name until the plug-in declares its own.
    label: String,
    state: State,
}

/// The process's lifecycle.
enum State {
    /// Not started yet: it starts at the first plan.
    Idle,
    /// Greeted, answering.
    Running {
        process: PluginProcess,
        /// The name its hello declared.
        name: String,
        /// Transcript messages already sent.
        sent: usize,
    },
    /// Failed with this error; the run is ending.
    Failed(StrategyError),
}

impl PluginStrategy {
    /// The plug-in `command`, sent `tuning` in its hello, run in `dir`.
    pub fn new(command: PluginCommand, tuning: StrategyTuning, dir: PathBuf) -> Self {
        let label = StrategySpec::Command(Box::new(command.clone())).label().into_owned();
        Self { command, tuning, dir, label, state: State::Idle }
    }

    /// The running process, started and greeted if it was not; `step`
    /// names where in the run (none: before it).
    fn running(&mut self, step: Option<u32>) -> Result<(&mut PluginProcess, &mut usize), StrategyError> {
        if matches!(self.state, State::Idle) {
            self.state = match self.start() {
                Ok((process, name)) => State::Running { process, name, sent: 0 },
                Err((process, what)) => State::Failed(self.error(step, process, &what)),
            };
        }
        match &mut self.state {
            State::Running { process, sent, .. } => Ok((process, sent)),
            State::Failed(error) => Err(error.clone()),
            State::Idle => unreachable!("started above"),
        }
    }

    /// Starts the process and exchanges hellos; on failure, what went wrong
    /// (and the process, for its stderr).
    fn start(&self) -> Result<(PluginProcess, String), (Option<PluginProcess>, String)> {
        let mut process = PluginProcess::start(&self.command.command, &self.dir).map_err(|error| (None, format!("cannot start: {error}")))?;
        let hello = ToPlugin::Hello { protocol: PROTOCOL_VERSION, settings: &self.command.settings, strategies: &self.tuning };
        process.send(&serde_json::to_string(&hello).expect("a hello serializes"));
        match answer(&mut process, self.command.timeout()) {
            Ok(FromPlugin::Hello { protocol, name }) if protocol == PROTOCOL_VERSION => Ok((process, name)),
            Ok(FromPlugin::Hello { protocol, .. }) => {
                Err((Some(process), format!("its hello speaks protocol {protocol}; this reloop speaks {PROTOCOL_VERSION}")))
            }
            Ok(other) => Err((Some(process), format!("answered the hello with {}", quoted(&serde_json::to_string(&other).unwrap_or_default())))),
            Err(what) => Err((Some(process), format!("{what} to the hello"))),
        }
    }

    /// Asks for the next edit (`reactive`: after a context-window error).
    fn ask(&mut self, context: &StrategyContext<'_>, reactive: bool) -> Planned {
        let step = context.step;
        let timeout = self.command.timeout();
        let (process, sent) = self.running(Some(step))?;
        let request = ToPlugin::Plan(PlanRequest::of(context, *sent, reactive));
        process.send(&serde_json::to_string(&request).expect("a plan serializes"));
        *sent = context.transcript.len();
        let checked = match answer(process, timeout) {
            Ok(FromPlugin::Edit { edit: None }) => return Ok(None),
            Ok(FromPlugin::Edit { edit: Some(edit) }) => {
                let written = serde_json::to_string(&edit).unwrap_or_default();
                edits::checked(edit, context, reactive).map_err(|why| format!("asked for an edit that cannot be made: {why}; it answered {}", quoted(&written)))
            }
            Ok(FromPlugin::Hello { .. }) => Err("answered a plan with a hello".to_owned()),
            Err(what) => Err(what),
        };
        checked.map(Some).map_err(|what| self.fail(step, &what))
    }

    /// Ends the process after `what` went wrong at `step`; the error stays.
    fn fail(&mut self, step: u32, what: &str) -> StrategyError {
        let process = match std::mem::replace(&mut self.state, State::Idle) {
            State::Running { process, .. } => Some(process),
            _ => None,
        };
        let error = self.error(Some(step), process, what);
        self.state = State::Failed(error.clone());
        error
    }

    /// The error: which plug-in, where, what, and the tail of its stderr.
    fn error(&self, step: Option<u32>, process: Option<PluginProcess>, what: &str) -> StrategyError {
        let at = step.map_or_else(|| "before the run".to_owned(), |step| format!("at step {step}"));
        let mut message = format!("strategy plug-in `{}` {at}: {what}", self.command.command.join(" "));
        if let Some(stderr) = process.map(|mut process| process.stop()).filter(|tail| !tail.is_empty()) {
            message.push_str(&format!("; its stderr ends: {}", quoted_tail(&stderr)));
        }
        StrategyError(message)
    }
}

impl ContextStrategy for PluginStrategy {
    fn name(&self) -> &str {
        match &self.state {
            State::Running { name, .. } => name,
            State::Idle | State::Failed(_) => &self.label,
        }
    }

    fn plan(&mut self, context: &StrategyContext<'_>) -> Planned {
        self.ask(context, false)
    }

    fn plan_reactive(&mut self, context: &StrategyContext<'_>) -> Planned {
        self.ask(context, true)
    }
}

/// The next line, read as a protocol line; otherwise what went wrong.
fn answer(process: &mut PluginProcess, timeout: Duration) -> Result<FromPlugin, String> {
    match process.receive(timeout) {
        Ok(line) => serde_json::from_str(&line).map_err(|error| format!("answered {}, which is not a protocol line ({error})", quoted(&line))),
        Err(Silence::TimedOut) => Err(format!("did not answer within {} s", timeout.as_secs())),
        Err(Silence::Exited(status)) => Err(format!("exited ({status}) without answering")),
    }
}

/// `text` in backticks, cut after [`QUOTED_CHARS`] characters.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("`{}…` ({} bytes)", &text[..cut], text.len()),
        None => format!("`{text}`"),
    }
}

/// The last [`QUOTED_CHARS`] characters of `text`, on one line.
fn quoted_tail(text: &str) -> String {
    let chars = text.chars().count();
    let tail: String = text.chars().skip(chars.saturating_sub(QUOTED_CHARS)).collect();
    let tail = tail.replace('\n', " | ");
    if chars > QUOTED_CHARS { format!("…{tail}") } else { tail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_file_runs_with_python3_and_anything_else_itself() {
        assert_eq!(PluginCommand::for_file(Path::new("s/mine.py")).command, ["python3", "s/mine.py"]);
        assert_eq!(PluginCommand::for_file(Path::new("/opt/mine")).command, ["/opt/mine"]);
    }

    #[test]
    fn long_answers_and_stderr_are_cut_in_errors() {
        let long = "x".repeat(1_000);
        assert_eq!(quoted(&long), format!("`{}…` (1000 bytes)", "x".repeat(QUOTED_CHARS)));
        assert_eq!(quoted_tail("a\nb"), "a | b");
        assert!(quoted_tail(&long).starts_with('…'));
    }

    /// The handshake through a real process: the name it declares, and a
    /// refusal naming another protocol version.
    #[test]
    fn the_handshake_gives_the_declared_name_or_a_located_refusal() {
        let sh = |script: &str| PluginCommand { command: vec!["sh".into(), "-c".into(), script.into()], timeout_secs: 5, settings: serde_json::Value::Null };
        let tuning = StrategyTuning::default();
        let greeting = sh(r#"read hello; echo '{"type":"hello","protocol":1,"name":"mine"}'; read plan"#);
        assert_eq!(declared_name(&greeting, &tuning, Path::new(".")), Ok("mine".to_owned()));
        let missing = PluginCommand::for_file(Path::new("/nonexistent/strategy"));
        let error = declared_name(&missing, &tuning, Path::new(".")).unwrap_err();
        assert_eq!(error.0, "strategy plug-in `/nonexistent/strategy` before the run: cannot start: No such file or directory (os error 2)");
        let future = sh(r#"read hello; echo '{"type":"hello","protocol":9,"name":"mine"}'"#);
        let error = declared_name(&future, &tuning, Path::new(".")).unwrap_err();
        assert!(error.0.ends_with("before the run: its hello speaks protocol 9; this reloop speaks 1"), "{error}");
    }
}
