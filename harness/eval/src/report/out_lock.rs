//! One batch at a time per report directory: an advisory lock on
//! `OUT.lock`, held from the moment the batch claims `OUT` until its
//! report is published. A second batch to the same `OUT` would otherwise
//! clear the first's `OUT.partial/` under it and lose every run of both.
//!
//! The lock is `flock(2)`: the kernel drops it when the holder exits, however
//! it exits, so a killed batch never leaves a stale lock. The file itself
//! stays (removing it would let two batches lock two different files of one
//! name); it holds the PID of the batch holding it, for the refusal message.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, Write as _};
use std::path::Path;

use rustix::fs::{FlockOperation, flock};

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct OutLock {
    _file: File,
}

impl OutLock {
    /// Locks `lock_file` (created if missing) or fails at once with
    /// [`io::ErrorKind::WouldBlock`], naming the PID of the process that holds it.
    pub fn acquire(lock_file: &Path, out: &Path) -> io::Result<Self> {
        let mut file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(lock_file)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if holder.is_empty() { "another process".to_owned() } else { format!("reloop PID {holder}") };
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!("{} is being written by {holder} (lock {}); wait for it to end or choose another --out", out.display(), lock_file.display()),
                ));
            }
            Err(error) => return Err(error.into()),
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        file.flush()?;
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let (lock, out) = (dir.path().join("out.lock"), dir.path().join("out"));
        let held = OutLock::acquire(&lock, &out).unwrap();
        let refused = OutLock::acquire(&lock, &out).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::WouldBlock);
        assert!(refused.to_string().contains(&format!("reloop PID {}", std::process::id())), "{refused}");
        drop(held);
        OutLock::acquire(&lock, &out).expect("free again once the holder let go");
    }
}
