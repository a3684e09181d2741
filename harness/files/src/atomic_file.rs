//! Writing a file atomically: a temporary file in the same directory,
//! synced, then renamed over the target. A reader sees the old file or the
//! new one, never half of one, even if reloop dies mid-write. Every file
//! reloop writes goes through here: reports, recordings, skeletons, JUnit,
//! HTML (the mock is the one crate all writers depend on).
//!
//! The temporary file is created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`)
//! under a random name: a link or file planted at a guessable name (the
//! old `.NAME.PID.tmp`) cannot redirect the write outside the target's
//! directory, and two writers of one target never share a temporary file.

use std::fs::File;
use std::hash::{BuildHasher as _, RandomState};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use rustix::fs::{CWD, Mode, OFlags};

/// Names tried before giving up when each is taken (by chance or by a
/// planted file).
const ATTEMPTS: u32 = 16;

/// Replaces `path` with what `fill` writes, atomically; on an error the old
/// file stays and the temporary one is removed.
pub fn write_atomically(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let directory = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(directory)?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (mut file, temporary) = create_exclusive(directory, &file_name)?;
    let result = fill(&mut file).and_then(|()| file.flush()).and_then(|()| file.sync_all()).and_then(|()| std::fs::rename(&temporary, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// A new file `.NAME.RANDOM.tmp` in `directory`, created by this call and
/// no one else: an existing name (a file, or a link, dangling or not) is
/// never opened, another random name is tried instead.
fn create_exclusive(directory: &Path, file_name: &str) -> io::Result<(File, PathBuf)> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    // Each `RandomState` is seeded afresh from the OS's randomness.
    let random = RandomState::new();
    let mut last = None;
    for attempt in 0..ATTEMPTS {
        let temporary = directory.join(format!(".{file_name}.{:016x}.tmp", random.hash_one((std::process::id(), attempt))));
        match rustix::fs::openat(CWD, &temporary, flags, Mode::from_raw_mode(0o666)) {
            Ok(fd) => return Ok((File::from(fd), temporary)),
            Err(rustix::io::Errno::EXIST) => last = Some(temporary),
            Err(error) => return Err(error.into()),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("no free temporary name in {} (last tried {:?})", directory.display(), last)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report.txt");
        write_atomically(&target, |f| f.write_all(b"old")).unwrap();
        let failed = write_atomically(&target, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("disk on fire"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the temporary file is gone");
    }

    /// Regression (issue 28): the temporary file was `.NAME.PID.tmp`,
    /// opened following links, so a link planted at that name made the
    /// write land outside the target's directory.
    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, b"precious").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let target = out.join("report.txt");
        std::os::unix::fs::symlink(&outside, out.join(format!(".report.txt.{}.tmp", std::process::id()))).unwrap();
        write_atomically(&target, |f| f.write_all(b"report")).unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"precious", "the planted link was followed");
        assert_eq!(std::fs::read(&target).unwrap(), b"report");
    }

    #[test]
    fn an_existing_name_is_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let taken = dir.path().join("taken");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &taken).unwrap();
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let error = rustix::fs::openat(CWD, &taken, flags, Mode::from_raw_mode(0o666)).unwrap_err();
        assert_eq!(error, rustix::io::Errno::EXIST, "a dangling link is not created through");
        assert!(!dir.path().join("nowhere").exists());
        let (_, first) = create_exclusive(dir.path(), "r").unwrap();
        let (_, second) = create_exclusive(dir.path(), "r").unwrap();
        assert_ne!(first, second, "two writers of one target get two temporary files");
    }
}
