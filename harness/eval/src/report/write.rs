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

/// Cells (rows × columns) a writer holds before it writes them out as a
/// row group. The byte cap alone did not bound memory: Parquet estimates a
/// row group by its encoded bytes, and the writer holds several times that
/// (levels, dictionaries, buffers grown by doubling). Compacting the
/// 874,380 event rows of a 13,500-run sweep (3.4 MB encoded, under the byte
/// cap, so one row group) touched 21 MB more at the end of the sweep than
/// its runs had needed; with row groups of 2^20 cells, 16 MB; of 2^18, about
/// 10 MB (`benches/README.md`, "Peak memory against runs").
const ROW_GROUP_CELLS: usize = 1 << 18;

/// How every report file of a table of `columns` columns is written:
/// Snappy, tagged with the schema and reloop versions, row groups of at
/// most [`ROW_GROUP_BYTES`] and [`ROW_GROUP_CELLS`].
pub(super) fn writer_properties(columns: usize) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_max_row_group_row_count(Some(row_group_rows(columns)))
        .set_created_by(format!("reloop {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(vec![
            KeyValue::new("reloop.schema_version".into(), SCHEMA_VERSION.to_owned()),
            KeyValue::new("reloop.version".into(), env!("CARGO_PKG_VERSION").to_owned()),
        ]))
        .build()
}

/// The rows of a row group of a table of `columns` columns: [`ROW_GROUP_CELLS`]
/// of them, but at least 1,024 rows (a group per few rows would cost more
/// in its own metadata than it saves).
fn row_group_rows(columns: usize) -> usize {
    (ROW_GROUP_CELLS / columns.max(1)).max(1024)
}

/// Writes `batch` to `path` atomically, tagging the file with the schema
/// and reloop versions.
pub fn write_parquet(path: &Path, batch: &RecordBatch) -> io::Result<()> {
    write_atomically(path, |file| {
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(writer_properties(batch.num_columns()))).map_err(io::Error::other)?;
        writer.write(batch).map_err(io::Error::other)?;
        writer.close().map(drop).map_err(io::Error::other)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;

    /// Issue 44: a table under the byte cap was one row group however many
    /// rows it had, and its writer held all of them at once.
    #[test]
    fn a_long_table_is_written_in_row_groups_of_bounded_cells() {
        let columns = 8;
        let rows = 3 * row_group_rows(columns) + 1;
        let fields: Vec<(String, Arc<dyn arrow_array::Array>)> =
            (0..columns).map(|c| (format!("c{c}"), Arc::new(Int64Array::from_iter_values(0..rows as i64)) as _)).collect();
        let batch = RecordBatch::try_from_iter(fields).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write_parquet(&path, &batch).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let groups: Vec<i64> = reader.metadata().row_groups().iter().map(|group| group.num_rows()).collect();
        assert_eq!(groups.len(), 4, "{groups:?}");
        assert!(groups.iter().all(|&n| n as usize * columns <= ROW_GROUP_CELLS), "{groups:?}");
        assert_eq!(groups.iter().sum::<i64>(), rows as i64);
    }
}
