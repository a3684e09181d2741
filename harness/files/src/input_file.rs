//! Reading input files (scenarios, recordings) safely: only regular files,
//! at most [`max_input_bytes`] of them ([`crate::regular_file`], which
//! every command's reader shares), named in an [`InputError`].

use std::path::Path;

pub use crate::regular_file::{DEFAULT_MAX_INPUT_BYTES, MAX_INPUT_BYTES_VAR, max_input_bytes, read_head};

use crate::input_error::InputError;

/// The text of `path`, which must be a regular file of at most `limit`
/// bytes in UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    crate::regular_file::read_text(path, limit).map_err(|message| InputError::file(path, message))
}
