//! The agent process: started in its own process group in the run's
//! workspace, its output to files, watched until it exits, its timeout
//! passes or the batch is cancelled. Whatever happens, the whole group is
//! killed at the end, so no grandchild outlives the run; the groups alive
//! are registered so a second Ctrl-C (which exits at once) can kill them
//! too ([`kill_live_agents`]).

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the watcher looks at the child; the mock server runs on the
/// same thread in between.
const POLL: Duration = Duration::from_millis(10);

/// The bytes of each stream kept in the report.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Process groups of agents running now.
static LIVE_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// What to start.
#[derive(Debug)]
pub struct Launch<'a> {
    /// The argv, expanded.
    pub argv: &'a [String],
    /// Variables added to reloop's own environment.
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub workspace: &'a Path,
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
    use std::os::unix::fs::PermissionsExt as _;
    let program = argv.first()?;
    if program.contains('/') {
        return None;
    }
    let path = env.iter().rev().find(|(key, _)| key == "PATH").map(|(_, value)| value.into()).or_else(|| std::env::var_os("PATH"))?;
    let executable = |file: std::path::PathBuf| file.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    let found = std::env::split_paths(&path).filter(|dir| dir.is_absolute()).any(|dir| executable(dir.join(program)));
    (!found).then(|| program.clone())
}

/// Starts the agent; `Err` says why it could not start.
pub fn spawn(launch: &Launch<'_>) -> Result<Running, String> {
    let (program, args) = launch.argv.split_first().ok_or("the agent command is empty")?;
    let stdout = std::fs::File::create(launch.output_dir.join("stdout")).map_err(|e| format!("cannot create the stdout file: {e}"))?;
    let stderr = std::fs::File::create(launch.output_dir.join("stderr")).map_err(|e| format!("cannot create the stderr file: {e}"))?;
    let child = Command::new(program)
        .args(args)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(launch.workspace)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    LIVE_GROUPS.lock().expect("live groups poisoned").insert(child.id());
    Ok(Running { child, deadline: Instant::now() + launch.timeout })
}

/// A started agent.
#[derive(Debug)]
pub struct Running {
    child: Child,
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

    /// Kills the whole group (the child and anything it left running) and
    /// reaps the child.
    fn end_group(&mut self) {
        let group = self.child.id();
        kill_group(group);
        let _ = self.child.wait();
        LIVE_GROUPS.lock().expect("live groups poisoned").remove(&group);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if LIVE_GROUPS.lock().is_ok_and(|live| live.contains(&self.child.id())) {
            self.end_group();
        }
    }
}

/// Kills every agent process group still running: for an exit that cannot
/// wait for the runs in flight (a second Ctrl-C).
pub fn kill_live_agents() {
    let groups: Vec<u32> = LIVE_GROUPS.lock().map(|live| live.iter().copied().collect()).unwrap_or_default();
    for group in groups {
        kill_group(group);
    }
}

fn kill_group(group: u32) {
    // The group may be gone already (ESRCH); nothing else can fail here.
    if let Some(pid) = i32::try_from(group).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
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
