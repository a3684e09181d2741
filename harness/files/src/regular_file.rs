//! Reading input files safely, for every command and crate (scenarios,
//! recordings, gate files, `import`'s sessions and cassettes, `--system`,
//! `--tools`): only regular files, at most [`max_input_bytes`] of them,
//! with the limit enforced while reading, so `/dev/zero` cannot eat memory
//! and a FIFO cannot hang a command. Errors are the reason alone: each
//! caller names the file in its own error type ([`crate::input_file`]).

use std::io::Read;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

/// The size limit unless `RELOOP_MAX_INPUT_BYTES` says otherwise: 256 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// The environment variable that sets the size limit, in bytes.
pub const MAX_INPUT_BYTES_VAR: &str = "RELOOP_MAX_INPUT_BYTES";

/// The size limit on one input file: `RELOOP_MAX_INPUT_BYTES` when it is a
/// positive integer, else [`DEFAULT_MAX_INPUT_BYTES`].
pub fn max_input_bytes() -> u64 {
    std::env::var(MAX_INPUT_BYTES_VAR).ok().and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0).unwrap_or(DEFAULT_MAX_INPUT_BYTES)
}

/// The bytes of `path`, which must be a regular file of at most `limit`
/// bytes; `Err` is why not, without the path (the caller names it).
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let cannot = |e: std::io::Error| format!("cannot read: {e}");
    let (file, metadata) = open_regular(path)?;
    let too_big = || format!("is larger than the input limit of {limit} bytes (set {MAX_INPUT_BYTES_VAR} to raise it)");
    if metadata.len() > limit {
        return Err(too_big());
    }
    // The file may grow while it is read.
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// `path` opened for reading, with its metadata, when it is a regular
/// file. Checked before opening (opening some devices acts), then again on
/// what was opened: the name may have been swapped for a FIFO since, and
/// opening without blocking keeps that from hanging.
fn open_regular(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), String> {
    let cannot = |e: std::io::Error| format!("cannot read: {e}");
    let not_regular = || "is not a regular file (a device, FIFO or directory cannot be an input)".to_owned();
    if !std::fs::metadata(path).map_err(cannot)?.is_file() {
        return Err(not_regular());
    }
    let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty()).map_err(|e| cannot(e.into()))?;
    let file = std::fs::File::from(fd);
    let metadata = file.metadata().map_err(cannot)?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    Ok((file, metadata))
}

/// The text of `path` (see [`read_bytes`]), which must be UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    String::from_utf8(read_bytes(path, limit)?).map_err(|e| format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// The first 4 KiB of `path` as text, when it is a regular file: enough to
/// recognize a file by its header without reading it whole.
pub fn read_head(path: &Path) -> Option<String> {
    let (file, _) = open_regular(path).ok()?;
    let mut head = Vec::new();
    file.take(4096).read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_without_reading() {
        for path in ["/dev/zero", "/dev/null", "/tmp"] {
            let error = read_text(Path::new(path), DEFAULT_MAX_INPUT_BYTES).unwrap_err();
            assert!(error.contains("not a regular file"), "{path}: {error}");
        }
    }

    #[test]
    fn a_fifo_is_refused_instead_of_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("recording.yaml");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let error = read_text(&fifo, DEFAULT_MAX_INPUT_BYTES).unwrap_err();
        assert!(error.contains("not a regular file"), "{error}");
        assert_eq!(read_head(&fifo), None);
    }

    #[test]
    fn the_size_limit_is_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big.yaml");
        std::fs::write(&file, "x".repeat(100)).unwrap();
        assert_eq!(read_text(&file, 100).unwrap().len(), 100);
        let error = read_text(&file, 99).unwrap_err();
        assert!(error.contains("larger than the input limit of 99 bytes"), "{error}");
    }
}
