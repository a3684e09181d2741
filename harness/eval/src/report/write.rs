//! Writing report files atomically: a temporary file in the same
//! directory, synced, then renamed over the target. A reader sees the old
//! file or the new one, never half of one, even if reloop dies mid-write.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// Version of the report schema; bump on any column change.
pub const SCHEMA_VERSION: &str = "1";

/// Replaces `path` with what `fill` writes, atomically.
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
