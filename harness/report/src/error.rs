//! What can go wrong reading reports: always names the file.

use std::path::PathBuf;

/// A report could not be read or does not have the shape reloop writes.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file or directory could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not Parquet, or not readable as Arrow.
    #[error("{}: not a readable Parquet file: {message}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The reader's message.
        message: String,
    },
    /// A column every report has is missing or has the wrong type.
    #[error("{}: column `{column}` {problem}", path.display())]
    Column {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Shards that cannot be merged into one report.
    #[error("{0}")]
    Merge(String),
}
