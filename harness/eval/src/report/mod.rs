//! Parquet reports: `runs.parquet`, `steps.parquet`, `events.parquet` in one
//! directory, published as one set. The runner knows nothing of this
//! module; the binary hands it finished [`RunReport`]s, one at a time
//! ([`ReportStream`]) or all at once ([`write_reports`]).

mod out_lock;
mod publish;
mod resume;
mod stream;
mod table;
mod tables;
mod write;

pub use resume::{FinishedRun, RunKey};
pub use stream::{ReportStream, TableBatches};
pub use tables::{events_batch, runs_batch, steps_batch};
pub use write::{SCHEMA_VERSION, write_atomically, write_parquet};

use std::path::Path;

use crate::result::RunReport;

/// The file names of the three tables.
pub const TABLE_FILES: [&str; 3] = ["runs.parquet", "steps.parquet", "events.parquet"];

/// The rows of `runs` in the three tables.
pub fn table_batches(runs: &[RunReport]) -> Result<TableBatches, arrow_schema::ArrowError> {
    Ok([runs_batch(runs)?, steps_batch(runs)?, events_batch(runs)?])
}

/// The schemas of the three tables.
pub fn table_schemas() -> [arrow_schema::SchemaRef; 3] {
    table_batches(&[]).expect("the empty tables build").map(|batch| batch.schema())
}

/// Writes the three tables for `runs` into `directory` as one set, through
/// the same stream and publication a batch uses.
pub fn write_reports(directory: &Path, runs: &[RunReport]) -> std::io::Result<()> {
    let mut stream = ReportStream::open(directory, table_schemas(), std::time::Duration::MAX)?;
    stream.append(&table_batches(runs).map_err(std::io::Error::other)?)?;
    stream.publish()
}
