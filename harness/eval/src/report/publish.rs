//! Publishing a report directory as one set: the fresh directory takes the
//! old one's place in a single atomic rename, so no reader ever sees a mix
//! of two batches' tables.

use std::io;
use std::path::Path;

/// Puts the directory `fresh` at `out`, atomically, and removes what was at
/// `out` (left at `fresh` by the exchange).
pub fn swap_in(fresh: &Path, out: &Path) -> io::Result<()> {
    if out.exists() {
        exchange(fresh, out)?;
        std::fs::remove_dir_all(fresh)
    } else {
        std::fs::rename(fresh, out)
    }
}

/// Exchanges two directories in one step (`renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(()),
        // A file system without exchange: fall back to two renames.
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => exchange_by_renames(a, b),
        Err(error) => Err(error.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    exchange_by_renames(a, b)
}

/// Two renames through a third name: a reader may find `b` missing for an
/// instant, never holding a mix.
fn exchange_by_renames(a: &Path, b: &Path) -> io::Result<()> {
    let aside = a.with_extension("old");
    std::fs::rename(b, &aside)?;
    std::fs::rename(a, b)?;
    std::fs::rename(&aside, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fresh_directory_replaces_the_old_one_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (fresh, out) = (dir.path().join("fresh"), dir.path().join("out"));
        std::fs::create_dir(&fresh).unwrap();
        std::fs::write(fresh.join("runs.parquet"), b"new").unwrap();
        swap_in(&fresh, &out).unwrap();
        assert_eq!(std::fs::read(out.join("runs.parquet")).unwrap(), b"new");

        std::fs::create_dir(&fresh).unwrap();
        std::fs::write(fresh.join("steps.parquet"), b"newer").unwrap();
        swap_in(&fresh, &out).unwrap();
        assert!(!out.join("runs.parquet").exists(), "nothing of the old set is left");
        assert_eq!(std::fs::read(out.join("steps.parquet")).unwrap(), b"newer");
        assert!(!fresh.exists());
    }
}
