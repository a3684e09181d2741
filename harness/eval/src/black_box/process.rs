//! The agent process: started under its keeper ([`super::keeper`]) in its
//! own process group in the run's workspace, with only the environment it
//! is given, its output to files, watched until it exits, its timeout
//! passes or the batch is cancelled. Whatever happens, everything it
//! started is ended: by the keeper (which outlives even a SIGKILLed
//! `run`), and the group killed after it; the agents alive are registered
//! so a second Ctrl-C (which exits at once) can end them too
//! ([`kill_live_agents`]).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the watcher looks at the child; the mock server runs on the
/// same thread in between.
const POLL: Duration = Duration::from_millis(10);

/// The bytes of each stream kept in the report.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Process groups of agents running now, each with whether a keeper
/// leads it.
static LIVE_GROUPS: Mutex<BTreeMap<u32, bool>> = Mutex::new(BTreeMap::new());

/// How long a keeper told to stop may take to end what the agent started
/// before its group is killed.
const KEEPER_GRACE: Duration = Duration::from_secs(2);

/// What to start.
#[derive(Debug)]
pub struct Launch<'a> {
    /// The argv, expanded.
    pub argv: &'a [String],
    /// The whole environment (nothing of reloop's is inherited).
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub workspace: &'a Path,
    /// The run's temporary folder (the workspace is inside), removed by
    /// the keeper when `run` dies before it could remove it.
    pub scratch: &'a Path,
    /// Where stdout and stderr go (`stdout`, `stderr` inside).
    pub output_dir: &'a Path,
    /// Real time allowed.
    pub timeout: Duration,
}

/// How the process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself (`None`: killed by a signal it did not get from us).
    Exited(Option<i32>),
    /// Its timeout passed; the group was killed.
    TimedOut,
    /// The batch was cancelled; the group was killed.
    Cancelled,
}

/// What the process left.
#[derive(Debug, Clone)]
pub struct Finished {
    /// How it ended.
    pub ending: Ending,
    /// Its standard output (the first [`OUTPUT_LIMIT`] bytes, lossy UTF-8).
    pub stdout: String,
    /// Its standard error, likewise.
    pub stderr: String,
}

/// The program of `argv` when it is a bare name found as an executable
/// file on no absolute directory of the agent's `PATH` (its `env:` value,
/// else reloop's): the agent is not installed. Empty and relative entries
/// are not searched, so a stray file in reloop's working directory does not
/// count as an installed agent. A path (with a `/`) is left to the start to
/// judge.
pub fn missing_program(argv: &[String], env: &[(String, String)]) -> Option<String> {
    let program = argv.first()?;
    if program.contains('/') {
        return None;
    }
    on_path(program, env).is_none().then(|| program.clone())
}

/// The agent's `PATH`: its `env:` value, else reloop's.
pub fn agent_path(env: &[(String, String)]) -> Option<OsString> {
    env.iter().rev().find(|(key, _)| key == "PATH").map(|(_, value)| value.into()).or_else(|| std::env::var_os("PATH"))
}

/// The executable file `program` names on an absolute directory of the
/// agent's `PATH` ([`agent_path`]), the first in its order.
pub fn on_path(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    let path = agent_path(env)?;
    std::env::split_paths(&path).filter(|dir| dir.is_absolute()).map(|dir| dir.join(program)).find(|file| is_executable(file))
}

/// Starts the agent; `Err` says why it could not start.
pub fn spawn(launch: &Launch<'_>) -> Result<Running, String> {
    let program = launch.argv.first().ok_or("the agent command is empty")?;
    if program.contains('/') && !is_executable(&launch.workspace.join(program)) {
        return Err(format!("cannot start `{program}`: not an executable file"));
    }
    let stdout = std::fs::File::create(launch.output_dir.join("stdout")).map_err(|e| format!("cannot create the stdout file: {e}"))?;
    let stderr = std::fs::File::create(launch.output_dir.join("stderr")).map_err(|e| format!("cannot create the stderr file: {e}"))?;
    let kept = super::keeper::command(launch.argv, launch.scratch);
    let is_kept = kept.is_some();
    let mut command = kept.unwrap_or_else(|| {
        let mut direct = Command::new(program);
        direct.args(&launch.argv[1..]);
        direct
    });
    let child = command
        .env_clear()
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(launch.workspace)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    LIVE_GROUPS.lock().expect("live groups poisoned").insert(child.id(), is_kept);
    Ok(Running { child, kept: is_kept, deadline: Instant::now() + launch.timeout })
}

fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    file.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A started agent.
#[derive(Debug)]
pub struct Running {
    child: Child,
    /// A keeper leads the group (else the agent itself).
    kept: bool,
    deadline: Instant,
}

impl Running {
    /// Waits for the end (yielding to the runtime between looks), then
    /// kills the process group and reads the output from `output_dir`.
    pub async fn finish(mut self, cancel: &AtomicBool, output_dir: &Path) -> Finished {
        let ending = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Ending::Exited(status.code()),
                Ok(None) => {}
                Err(_) => break Ending::Exited(None),
            }
            if cancel.load(Ordering::SeqCst) {
                break Ending::Cancelled;
            }
            if Instant::now() >= self.deadline {
                break Ending::TimedOut;
            }
            tokio::time::sleep(POLL).await;
        };
        self.end_group();
        Finished { ending, stdout: read_limited(&output_dir.join("stdout")), stderr: read_limited(&output_dir.join("stderr")) }
    }

    /// Ends everything the agent started and reaps the child: a keeper is
    /// told to stop and given [`KEEPER_GRACE`] (it has ended the agent's
    /// processes already when the agent exited by itself), then the whole
    /// group is killed in any case.
    fn end_group(&mut self) {
        let group = self.child.id();
        if self.kept && matches!(self.child.try_wait(), Ok(None)) {
            signal_process(group, rustix::process::Signal::TERM);
            let deadline = Instant::now() + KEEPER_GRACE;
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(POLL);
            }
        }
        kill_group(group);
        let _ = self.child.wait();
        LIVE_GROUPS.lock().expect("live groups poisoned").remove(&group);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if LIVE_GROUPS.lock().is_ok_and(|live| live.contains_key(&self.child.id())) {
            self.end_group();
        }
    }
}

/// Ends every agent still running: for an exit that cannot wait for the
/// runs in flight (a second Ctrl-C). A keeper gets SIGTERM (it ends what
/// the agent started, `setsid` or not; reloop's exit would tell it too),
/// a group without one is killed.
pub fn kill_live_agents() {
    let groups: Vec<(u32, bool)> = LIVE_GROUPS.lock().map(|live| live.iter().map(|(g, k)| (*g, *k)).collect()).unwrap_or_default();
    for (group, kept) in groups {
        if kept { signal_process(group, rustix::process::Signal::TERM) } else { kill_group(group) }
    }
}

fn kill_group(group: u32) {
    // The group may be gone already (ESRCH); nothing else can fail here.
    if let Some(pid) = i32::try_from(group).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

fn signal_process(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

fn read_limited(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(&bytes[..bytes.len().min(OUTPUT_LIMIT)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_program_on_no_path_directory_is_missing_and_a_path_is_left_to_the_start() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("agent"), "").unwrap();
        std::fs::set_permissions(dir.path().join("agent"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = vec![("PATH".to_owned(), dir.path().display().to_string())];
        let argv = |program: &str| vec![program.to_owned(), "task".to_owned()];
        assert_eq!(missing_program(&argv("agent"), &env), None);
        assert_eq!(missing_program(&argv("codex"), &env).as_deref(), Some("codex"));
        assert_eq!(missing_program(&argv("./codex"), &env), None);
    }

    #[test]
    fn a_file_that_cannot_run_or_sits_on_a_relative_path_entry_is_not_an_installed_agent() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes"), "").unwrap();
        let argv = |program: &str| vec![program.to_owned()];
        let env = vec![("PATH".to_owned(), dir.path().display().to_string())];
        assert_eq!(missing_program(&argv("notes"), &env).as_deref(), Some("notes"), "not executable");
        // An empty `PATH` names the working directory to some shells; the
        // crate's own sources are there, none of them an agent.
        let cwd_relative = vec![("PATH".to_owned(), String::new())];
        assert_eq!(missing_program(&argv("Cargo.toml"), &cwd_relative).as_deref(), Some("Cargo.toml"));
    }
}
