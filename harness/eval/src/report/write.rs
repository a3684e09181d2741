//! Writing report files: Parquet with reloop's properties, each file
//! written atomically (`reloop_files::atomic_file`).

use std::io;
use std::path::Path;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// Version of the report schema; bump on any column change.
pub const SCHEMA_VERSION: &str = "1";

pub use reloop_files::atomic_file::write_atomically;

/// Bytes of rows a writer holds before it writes them out as a row group:
/// what bounds a report's memory, whatever the number of rows.
const ROW_GROUP_BYTES: usize = 16 << 20;

/// How every report file is written: Snappy, tagged with the schema and
/// reloop versions, row groups of at most [`ROW_GROUP_BYTES`].
pub(super) fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_created_by(format!("reloop {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![
            KeyValue::new("reloop.schema_version".into(), SCHEMA_VERSION.to_owned()),
            KeyValue::new("reloop.version".into(), env!("CARGO_PKG_VERSION").to_owned()),
        ]))
        .build()
}

/// Writes `batch` to `path` atomically, tagging the file with the schema
/// and reloop versions.
pub fn write_parquet(path: &Path, batch: &RecordBatch) -> io::Result<()> {
    write_atomically(path, |file| {
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(writer_properties())).map_err(io::Error::other)?;
        writer.write(batch).map_err(io::Error::other)?;
        writer.close().map(drop).map_err(io::Error::other)
    })
}
