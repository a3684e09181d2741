//! The agent's keeper: a small process of reloop's own binary
//! (`reloop __agent-keeper PARENT SCRATCH -- ARGV…`) between `reloop run`
//! and the agent, so that nothing the agent starts outlives the run, even
//! when `run` is SIGKILLed and can do nothing itself.
//!
//! Why a process and not just the agent's process group: a group is left
//! by any child that calls `setsid`, and a killed `run` cannot kill a group
//! anyway. The keeper is:
//! - told of `run`'s death by the kernel (`PR_SET_PDEATHSIG`: SIGTERM when
//!   its parent dies, for any reason);
//! - a child subreaper (`PR_SET_CHILD_SUBREAPER`): whatever the agent
//!   started and orphaned, `setsid` or not, becomes the keeper's child
//!   instead of init's, so it can still be found;
//! - the one who ends them: when the agent exits, or on SIGTERM, SIGHUP or
//!   SIGINT (from `run`'s cancel or timeout, or the death signal), it kills
//!   every process below it (found in `/proc` by parent pid) until none is
//!   left, and after its parent's death removes the run's scratch folder.
//!
//! An agent can kill its keeper, though: its orphans would then go to init
//! and outlive the run. So `reloop run` and `sweep` are subreapers too
//! ([`adopt_orphans`]): what a dead keeper leaves becomes `run`'s child,
//! and once the batch is done [`end_adopted`] ends every process still
//! below `run`. Nothing reloop did not start can be there: `run` starts
//! no other process, and a subreaper only adopts its own descendants.
//!
//! Both `prctl`s work unprivileged, unlike a cgroup, which needs a
//! delegated hierarchy that CI runners and containers rarely give. It is
//! Linux only; elsewhere (and for a library user whose binary does not
//! enter [`enter_if_asked`]) the agent runs in its own process group only.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::process::{Pid, Signal};

/// The first argument that makes reloop's binary a keeper.
pub const KEEPER_ARG: &str = "__agent-keeper";

/// The keeper's program (reloop's own binary), once it said it can be one.
static KEEPER_PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Whether this process adopts what its agents orphan ([`adopt_orphans`]).
static ADOPTING: AtomicBool = AtomicBool::new(false);

/// How often the keeper looks at the agent.
const POLL: Duration = Duration::from_millis(20);

/// For reloop's `main`, first thing: when this process was started as a
/// keeper, keeps the agent and returns the exit code; otherwise records
/// that this binary can keep agents and returns `None`.
pub fn enter_if_asked() -> Option<i32> {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == KEEPER_ARG) {
        return Some(keep(&args[2..]));
    }
    if cfg!(target_os = "linux")
        && let Ok(program) = std::env::current_exe()
    {
        let _ = KEEPER_PROGRAM.set(program);
    }
    None
}

/// For `reloop run` and `sweep`, before the first run: makes this process
/// the subreaper of everything its agents start, so that what an agent
/// orphans by killing its keeper comes here instead of to init. A failure
/// is said, and leaves the keepers as the only guard.
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    match rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        Ok(()) => ADOPTING.store(true, Ordering::SeqCst),
        Err(error) => eprintln!("warning: reloop is not a subreaper ({error}): an agent that kills its keeper may leave processes behind"),
    }
}

/// For the end of a batch, when no agent runs any more: ends every process
/// still below this one (what agents orphaned, [`adopt_orphans`]). Does
/// nothing unless this process adopts orphans.
pub fn end_adopted() {
    if ADOPTING.load(Ordering::SeqCst) {
        kill_descendants();
    }
}

/// The command that starts `argv` under a keeper, or `None` when this
/// binary cannot be one (the agent is then started directly).
pub fn command(argv: &[String], scratch: &Path) -> Option<Command> {
    let program = KEEPER_PROGRAM.get()?;
    let mut command = Command::new(program);
    command.arg(KEEPER_ARG).arg(std::process::id().to_string()).arg(scratch).arg("--").args(argv);
    Some(command)
}

/// The keeper's life; `args` are `PARENT SCRATCH -- ARGV…`.
fn keep(args: &[OsString]) -> i32 {
    let (Some(parent), Some(scratch), Some(argv)) = (args.first(), args.get(1), args.get(3..).filter(|argv| !argv.is_empty())) else {
        eprintln!("reloop {KEEPER_ARG}: expected PARENT SCRATCH -- PROGRAM [ARGS…]");
        return 2;
    };
    let parent: Option<i32> = parent.to_str().and_then(|p| p.parse().ok());
    let scratch = PathBuf::from(scratch);
    #[cfg(target_os = "linux")]
    {
        // Failures leave the keeper as good as a process group: say so.
        if let Err(error) = rustix::process::set_parent_process_death_signal(Some(Signal::TERM)) {
            eprintln!("reloop {KEEPER_ARG}: no parent death signal: {error}");
        }
        if let Err(error) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
            eprintln!("reloop {KEEPER_ARG}: not a subreaper: {error}");
        }
    }
    let orphaned = || rustix::process::getppid().map(Pid::as_raw_nonzero).map(|p| p.get()) != parent;
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build() else { return 3 };
    let ended = runtime.block_on(watch(&argv[0], &argv[1..], &orphaned));
    kill_descendants();
    if orphaned() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    match ended {
        Ok(Some(status)) => exit_like(status),
        // Stopped by a signal: the run ends it (cancel, timeout, death).
        Ok(None) => 130,
        Err(error) => {
            eprintln!("cannot start `{}`: {error}", argv[0].to_string_lossy());
            // 127: as a shell says for a program it cannot run.
            127
        }
    }
}

/// Runs the agent until it exits (`Some`) or a signal asks the keeper to
/// stop (`None`); `Err` when it cannot start.
async fn watch(program: &OsString, args: &[OsString], orphaned: &dyn Fn() -> bool) -> std::io::Result<Option<ExitStatus>> {
    use tokio::signal::unix::{SignalKind, signal};
    let (mut term, mut hup, mut int) = (signal(SignalKind::terminate())?, signal(SignalKind::hangup())?, signal(SignalKind::interrupt())?);
    // Checked once the signals are caught: the parent may have died
    // before the death signal was asked for.
    if orphaned() {
        return Ok(None);
    }
    let mut child = Command::new(program).args(args).spawn()?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        tokio::select! {
            _ = term.recv() => return Ok(None),
            _ = hup.recv() => return Ok(None),
            _ = int.recv() => return Ok(None),
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Kills every process below this one and reaps them, until none is left
/// (a process may fork while the list is read: the loop sees its child next).
fn kill_descendants() {
    let me = std::process::id();
    loop {
        let alive = descendants(me);
        for pid in &alive {
            if let Some(pid) = i32::try_from(*pid).ok().and_then(Pid::from_raw) {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            }
        }
        while let Ok(Some(_)) = rustix::process::wait(rustix::process::WaitOptions::NOHANG) {}
        if alive.is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every live (not zombie) process below `root`, from `/proc`.
fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let processes: Vec<(u32, u32, bool)> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
            let zombie = fields.next()? == "Z";
            Some((pid, fields.next()?.parse().ok()?, zombie))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(processes.iter().filter(|(_, p, _)| *p == parent).map(|(pid, _, _)| *pid));
        i += 1;
    }
    let below = &found[1..];
    below.iter().copied().filter(|pid| processes.iter().any(|(p, _, zombie)| p == pid && !zombie)).collect()
}

/// Exits as the agent did: its code, or (killed by a signal) by SIGKILL,
/// so reloop sees a death by signal as before.
fn exit_like(status: ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    let _ = rustix::process::kill_process(rustix::process::getpid(), Signal::KILL);
    137
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_are_found_through_every_generation() {
        let mut child = Command::new("sh").args(["-c", "sleep 30 & sleep 30 & wait"]).spawn().unwrap();
        let start = std::time::Instant::now();
        while descendants(child.id()).len() < 2 {
            assert!(start.elapsed() < Duration::from_secs(10), "sh's two sleeps never showed");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(descendants(std::process::id()).contains(&child.id()));
        for pid in descendants(child.id()) {
            let _ = rustix::process::kill_process(Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(), Signal::KILL);
        }
        child.wait().unwrap();
        assert!(!descendants(std::process::id()).contains(&child.id()), "a reaped child is gone");
    }
}
