//! Reading input files (scenarios, recordings) safely: only regular files,
//! at most [`max_input_bytes`] of them, with the limit enforced while
//! reading, so `/dev/zero` cannot eat memory and a FIFO cannot hang a run.

use std::io::Read;
use std::path::Path;

use crate::input_error::InputError;

/// The size limit unless `RELOOP_MAX_INPUT_BYTES` says otherwise: 256 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// The environment variable that sets the size limit, in bytes.
pub const MAX_INPUT_BYTES_VAR: &str = "RELOOP_MAX_INPUT_BYTES";

/// The size limit on one input file: `RELOOP_MAX_INPUT_BYTES` when it is a
/// positive integer, else [`DEFAULT_MAX_INPUT_BYTES`].
pub fn max_input_bytes() -> u64 {
    std::env::var(MAX_INPUT_BYTES_VAR).ok().and_then(|v| v.trim().parse().ok()).filter(|n| *n > 0).unwrap_or(DEFAULT_MAX_INPUT_BYTES)
}

/// The text of `path`, which must be a regular file of at most `limit`
/// bytes in UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let cannot = |e: std::io::Error| InputError::file(path, format!("cannot read: {e}"));
    // Checked before opening: opening a FIFO for reading blocks until a
    // writer comes.
    let metadata = std::fs::metadata(path).map_err(cannot)?;
    if !metadata.is_file() {
        return Err(InputError::file(path, "is not a regular file (a device, FIFO or directory cannot be an input)"));
    }
    let too_big = || {
        InputError::file(path, format!("is larger than the input limit of {limit} bytes (set {MAX_INPUT_BYTES_VAR} to raise it)"))
    };
    if metadata.len() > limit {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    // The file may have been swapped or grown since the check.
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| InputError::file(path, format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to())))
}

/// The first 4 KiB of `path` as text, when it is a regular file: enough to
/// recognize a file by its header without reading it whole.
pub fn read_head(path: &Path) -> Option<String> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(4096).read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_without_reading() {
        for path in ["/dev/zero", "/dev/null", "/tmp"] {
            let error = read_text(Path::new(path), DEFAULT_MAX_INPUT_BYTES).unwrap_err();
            assert!(error.message.contains("not a regular file"), "{path}: {error}");
        }
    }

    #[test]
    fn a_fifo_is_refused_instead_of_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("recording.yaml");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let error = read_text(&fifo, DEFAULT_MAX_INPUT_BYTES).unwrap_err();
        assert!(error.message.contains("not a regular file"), "{error}");
    }

    #[test]
    fn the_size_limit_is_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big.yaml");
        std::fs::write(&file, "x".repeat(100)).unwrap();
        assert_eq!(read_text(&file, 100).unwrap().len(), 100);
        let error = read_text(&file, 99).unwrap_err();
        assert!(error.message.contains("larger than the input limit of 99 bytes"), "{error}");
    }
}
