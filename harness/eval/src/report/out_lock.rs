//! One batch at a time per report directory: an advisory lock on
//! `OUT.lock`, held from the moment the batch claims `OUT` until its
//! report is published. A second batch to the same `OUT` would otherwise
//! clear the first's `OUT.partial/` under it and lose every run of both.
//!
//! The lock is `flock(2)`: the kernel drops it when the holder exits, however
//! it exits, so a killed batch never leaves a stale lock (only, at worst,
//! the file). The holder removes the file while still holding the lock, and
//! a taker checks that the file it locked is still the one at the name, so
//! two batches never hold locks on two files of one name. The file holds
//! the PID of the batch holding it, for the refusal message.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, Write as _};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

/// The held lock; released when dropped.
#[derive(Debug)]
pub struct OutLock {
    path: PathBuf,
    _file: File,
}

impl OutLock {
    /// Locks `lock_file` (created if missing) or fails at once with
    /// [`io::ErrorKind::WouldBlock`], naming the PID of the process that holds it.
    pub fn acquire(lock_file: &Path, out: &Path) -> io::Result<Self> {
        loop {
            let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(lock_file)?;
            if let Some(lock) = Self::take(file, lock_file, out)? {
                return Ok(lock);
            }
        }
    }

    /// The lock on `file`, or `None` when the holder removed it meanwhile
    /// (then the name must be opened again).
    fn take(mut file: File, lock_file: &Path, out: &Path) -> io::Result<Option<Self>> {
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
        let held = file.metadata()?;
        let named = std::fs::metadata(lock_file).ok();
        if named.is_none_or(|named| (named.dev(), named.ino()) != (held.dev(), held.ino())) {
            return Ok(None);
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        file.flush()?;
        Ok(Some(Self { path: lock_file.to_owned(), _file: file }))
    }
}

impl Drop for OutLock {
    fn drop(&mut self) {
        // Removed while still locked (the file closes after): a batch that
        // opened it meanwhile finds it gone from the name and opens anew.
        let _ = std::fs::remove_file(&self.path);
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
        assert!(!lock.exists(), "nothing is left beside the report");
        OutLock::acquire(&lock, &out).expect("free again once the holder let go");
    }
}
