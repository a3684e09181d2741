//! Standard output for every command's printed results.

use std::io::Write as _;

/// Prints to stdout; a closed pipe (`reloop run … | head`) is not an error.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
