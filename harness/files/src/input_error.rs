//! What is wrong with an input file, said so a user can act on it: the
//! file, the line and column, the field path, and the problem. A
//! [`RangeError`] is a setting out of its documented range, found after
//! parsing; `yaml::range_error` gives it its position in the file.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with an input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// Dotted field path, e.g. `tools.read_file.results[0].when`.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl InputError {
    /// An error about the whole file.
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        Self { file: file.to_owned(), line: None, column: None, field: None, message: message.into() }
    }

    /// An error about one field, without a position.
    pub fn field(file: &Path, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: Some(field.into()), ..Self::file(file, message) }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// A setting out of its range: the dotted field path and the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeError {
    /// E.g. `loop.strategies.roku.keep_recent_rounds`.
    pub field: String,
    /// What the range is.
    pub message: String,
}
