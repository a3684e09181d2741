//! Writing a file atomically: a temporary file in the same directory,
//! synced, then renamed over the target. A reader sees the old file or the
//! new one, never half of one, even if reloop dies mid-write. Every file
//! reloop writes goes through here: reports, recordings, skeletons, JUnit,
//! HTML (the mock is the one crate all writers depend on).

use std::fs::File;
use std::io::{self, Write as _};
use std::path::Path;

/// Replaces `path` with what `fill` writes, atomically; on an error the old
/// file stays and the temporary one is removed.
pub fn write_atomically(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let directory = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(directory)?;
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = directory.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = File::create(&temporary)
        .and_then(|mut file| {
            fill(&mut file)?;
            file.flush()?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
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
}
