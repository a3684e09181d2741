//! Streamed reports: a finished run's rows are appended to the three tables
//! as it finishes and then dropped, so memory does not grow with the batch.
//!
//! While a batch runs, its rows go to `OUT.partial/`, one folder per
//! checkpoint, each holding the runs finished since the one before:
//! `OUT.partial/part-00001/{runs,steps,events}.parquet`. A part is written
//! under a temporary name and renamed into place once its three tables are
//! complete, so every `part-*` folder is a consistent set; older parts are
//! never rewritten. [`ReportStream::publish`] then compacts the parts into
//! one file per table in a fresh directory and swaps it in for `OUT` with one
//! rename: a reader of `OUT` sees the previous complete set or the new one.
//!
//! A write that fails (a full disk, a file-size limit) names the file and
//! the table it was writing; a stream that failed is [`abandoned`]
//! (`OUT.partial/` and any half-published set removed, `OUT` untouched).
//!
//! [`abandoned`]: ReportStream::abandon

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::TABLE_FILES;
use super::out_lock::OutLock;
use super::publish::swap_in;
use super::resume::{self, FinishedRun, RunKey};
use super::write::writer_properties;

/// The three tables' rows of one or more runs, in [`TABLE_FILES`] order.
pub type TableBatches = [RecordBatch; 3];

/// The report of a batch under way: parts on disk, one part open.
pub struct ReportStream {
    out: PathBuf,
    partial: PathBuf,
    schemas: [arrow_schema::SchemaRef; 3],
    open: Option<OpenPart>,
    parts: u32,
    last_checkpoint: Instant,
    every: Duration,
    /// `OUT.lock`, held until the report is published or dropped.
    _lock: OutLock,
}

/// The part being written: its temporary folder and a writer per table,
/// with the file each writes.
struct OpenPart {
    folder: PathBuf,
    writers: Vec<(ArrowWriter<File>, PathBuf)>,
}

impl ReportStream {
    /// Makes sure `out` can be written (creating it), locks it for this
    /// batch (`OUT.lock`: a batch writing there already makes this fail at
    /// once, [`io::ErrorKind::WouldBlock`], naming its PID), clears what an
    /// interrupted batch left in `OUT.partial/`, and starts a report whose
    /// tables have `schemas`; a checkpoint happens at most every `every`.
    pub fn open(out: &Path, schemas: [arrow_schema::SchemaRef; 3], every: Duration) -> io::Result<Self> {
        let (out, lock) = claim(out)?;
        let partial = sibling(&out, "partial")?;
        discard(&partial, &out)?;
        std::fs::create_dir(&partial)?;
        Ok(Self { out, partial, schemas, open: None, parts: 0, last_checkpoint: Instant::now(), every, _lock: lock })
    }

    /// As [`Self::open`], keeping the runs the last batch into `out`
    /// finished ([`resume`](super::resume) says where they are): their rows
    /// become the stream's first part, and they are returned, so the batch
    /// runs only the others.
    pub fn resume(out: &Path, schemas: [arrow_schema::SchemaRef; 3], every: Duration) -> io::Result<(Self, BTreeMap<RunKey, FinishedRun>)> {
        let (out, lock) = claim(out)?;
        let (partial, resuming) = (sibling(&out, "partial")?, sibling(&out, "resuming")?);
        // The killed batch's parts are set aside before anything is written,
        // so a kill while they are carried over loses none of them.
        if resume::sources(&out, &partial, &resuming)?.first().is_some_and(|first| first.starts_with(&partial)) {
            discard(&resuming, &out)?;
            std::fs::rename(&partial, &resuming)?;
        }
        discard(&partial, &out)?;
        let sources = resume::sources(&out, &partial, &resuming)?;
        let (finished, unfinished) = resume::finished_runs(&sources, &schemas[0])?;
        std::fs::create_dir(&partial)?;
        let mut stream = Self { out, partial, schemas, open: None, parts: 0, last_checkpoint: Instant::now(), every, _lock: lock };
        if !finished.is_empty() {
            let mut part = stream.start_part()?;
            for ((table, schema), (writer, file)) in TABLE_FILES.iter().zip(&stream.schemas).zip(&mut part.writers) {
                let mut write = |batch: &RecordBatch| writer.write(batch).map_err(|e| failed(file, "the rows of the runs resumed", e));
                resume::copy_finished(&sources, table, schema, unfinished.then_some(&finished), &mut write)?;
            }
            stream.open = Some(part);
            stream.checkpoint()?;
        }
        discard(&resuming, &stream.out)?;
        Ok((stream, finished))
    }

    /// Appends one run's rows; makes a checkpoint when the last is old enough.
    pub fn append(&mut self, batches: &TableBatches) -> io::Result<()> {
        let part = match &mut self.open {
            Some(part) => part,
            None => self.open.insert(self.start_part()?),
        };
        for ((writer, file), batch) in part.writers.iter_mut().zip(batches) {
            writer.write(batch).map_err(|e| failed(file, "a finished run's rows", e))?;
        }
        if self.last_checkpoint.elapsed() >= self.every {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Makes the rows appended since the last checkpoint readable as a new
    /// part; writes nothing when there are none.
    pub fn checkpoint(&mut self) -> io::Result<()> {
        self.last_checkpoint = Instant::now();
        let Some(part) = self.open.take() else { return Ok(()) };
        finish(part.writers)?;
        self.parts += 1;
        let folder = self.part_folder(self.parts);
        std::fs::rename(&part.folder, &folder).map_err(|e| failed(&folder, "a checkpoint", e))
    }

    /// The folders of the parts checkpointed so far, oldest first.
    pub fn parts(&self) -> Vec<PathBuf> {
        (1..=self.parts).map(|n| self.part_folder(n)).collect()
    }

    /// Checkpoints, compacts every part into one file per table and swaps
    /// the set in for `out`; `OUT.partial/` is removed. A batch that never
    /// checkpointed (most do not: one lasting under `every`) has one part,
    /// still open: its files are finished and it becomes the set as it is,
    /// instead of being written, read back and written again (which was
    /// most of a one-run `reloop run`'s instructions, and its fsyncs).
    /// On an error nothing is left but `OUT` as it was ([`Self::abandon`]).
    pub fn publish(mut self) -> io::Result<()> {
        let published = self.publish_set();
        if published.is_err() {
            self.abandon();
        }
        published
    }

    /// Removes what this batch wrote beside `OUT` (`OUT.partial/`, a set
    /// being published), for a batch whose report cannot be written; `OUT`
    /// keeps the previous report.
    pub fn abandon(mut self) {
        drop(self.open.take());
        let _ = discard(&self.partial, &self.out);
        if let Ok(fresh) = sibling(&self.out, "publishing") {
            let _ = std::fs::remove_dir_all(fresh);
        }
    }

    fn publish_set(&mut self) -> io::Result<()> {
        let fresh = sibling(&self.out, "publishing")?;
        if fresh.exists() {
            std::fs::remove_dir_all(&fresh)?;
        }
        if self.parts == 0 {
            let part = match self.open.take() {
                Some(part) => part,
                None => self.start_part()?,
            };
            finish(part.writers)?;
            std::fs::rename(&part.folder, &fresh).map_err(|e| failed(&fresh, "the report", e))?;
        } else {
            self.checkpoint()?;
            std::fs::create_dir(&fresh).map_err(|e| failed(&fresh, "the report", e))?;
            for (table, schema) in TABLE_FILES.iter().zip(&self.schemas) {
                let parts: Vec<PathBuf> = self.parts().iter().map(|part| part.join(table)).collect();
                compact(&parts, schema, &fresh.join(table))?;
            }
        }
        File::open(&fresh).and_then(|folder| folder.sync_all()).map_err(|e| failed(&fresh, "the report", e))?;
        swap_in(&fresh, &self.out).map_err(|e| failed(&self.out, "the report", e))?;
        discard(&self.partial, &self.out)
    }

    fn start_part(&self) -> io::Result<OpenPart> {
        let folder = self.partial.join(format!(".part-{:05}.tmp", self.parts + 1));
        std::fs::create_dir(&folder).map_err(|e| failed(&folder, "a checkpoint", e))?;
        let writers = TABLE_FILES
            .iter()
            .zip(&self.schemas)
            .map(|(table, schema)| {
                let path = folder.join(table);
                let file = File::create(&path).map_err(|e| failed(&path, "the table", e))?;
                let writer =
                    ArrowWriter::try_new(file, schema.clone(), Some(writer_properties(schema.fields().len()))).map_err(|e| failed(&path, "the table", e))?;
                Ok((writer, path))
            })
            .collect::<io::Result<_>>()?;
        Ok(OpenPart { folder, writers })
    }

    fn part_folder(&self, n: u32) -> PathBuf {
        self.partial.join(format!("part-{n:05}"))
    }
}

/// Creates `out` and locks it for this batch (`OUT.lock`: a batch writing
/// there already makes this fail at once, [`io::ErrorKind::WouldBlock`],
/// naming its PID), after checking it can be written; `out` canonical.
fn claim(out: &Path) -> io::Result<(PathBuf, OutLock)> {
    std::fs::create_dir_all(out)?;
    let out = out.canonicalize()?;
    let lock = OutLock::acquire(&sibling(&out, "lock")?, &out)?;
    // Created exclusively: a link planted at the name is not written through.
    let probe = out.join(format!(".reloop-probe-{}", std::process::id()));
    std::fs::OpenOptions::new().write(true).create_new(true).open(&probe)?.write_all(b"reloop checks it can write here")?;
    std::fs::remove_file(&probe)?;
    Ok((out, lock))
}

/// `OUT.suffix` beside `out` (`out` is canonical, so it has a name).
fn sibling(out: &Path, suffix: &str) -> io::Result<PathBuf> {
    let name = out.file_name().ok_or_else(|| io::Error::other(format!("{} cannot hold reports", out.display())))?;
    Ok(out.with_file_name(format!("{}.{suffix}", name.to_string_lossy())))
}

/// Removes `dir` (and what an earlier removal left) if present: renamed
/// aside to `OUT.discarded` first, so a kill mid-removal never leaves a
/// part with some of its tables in `OUT.partial/`.
fn discard(dir: &Path, out: &Path) -> io::Result<()> {
    let aside = sibling(out, "discarded")?;
    if aside.exists() {
        std::fs::remove_dir_all(&aside)?;
    }
    if dir.exists() {
        std::fs::rename(dir, &aside)?;
        std::fs::remove_dir_all(&aside)?;
    }
    Ok(())
}

/// Finishes each table's file (its last row group and footer) and syncs it,
/// each on a thread of its own: the batch's last step, which no other core
/// shares, so three files finished and synced in turn were start-to-end
/// time that a second job could not shorten.
fn finish(writers: Vec<(ArrowWriter<File>, PathBuf)>) -> io::Result<()> {
    std::thread::scope(|scope| {
        let finishing: Vec<_> = writers
            .into_iter()
            .map(|(writer, path)| {
                scope.spawn(move || {
                    let what = "the table's last rows and footer";
                    writer.into_inner().map_err(|e| failed(&path, what, e))?.sync_all().map_err(|e| failed(&path, what, e))
                })
            })
            .collect();
        finishing.into_iter().try_for_each(|thread| thread.join().unwrap_or_else(|_| Err(io::Error::other("a report writer panicked"))))
    })
}

/// Copies the rows of `parts`, in order, into one file at `target`, a row
/// group at a time.
fn compact(parts: &[PathBuf], schema: &arrow_schema::SchemaRef, target: &Path) -> io::Result<()> {
    let what = "the table compacted from the checkpoints";
    let file = File::create(target).map_err(|e| failed(target, what, e))?;
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(writer_properties(schema.fields().len()))).map_err(|e| failed(target, what, e))?;
    for part in parts {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(part)?)?.build()?;
        for batch in reader {
            writer.write(&batch.map_err(io::Error::other)?).map_err(|e| failed(target, what, e))?;
        }
    }
    writer.into_inner().map_err(|e| failed(target, what, e))?.sync_all().map_err(|e| failed(target, what, e))
}

/// The error of writing `what` to `path`, naming both; an I/O error keeps
/// its kind (a full disk stays [`io::ErrorKind::StorageFull`]).
fn failed(path: &Path, what: &str, error: impl Into<Failure>) -> io::Error {
    let (kind, message) = match error.into() {
        Failure::Io(error) => (error.kind(), error.to_string()),
        Failure::Parquet(error) => (io::ErrorKind::Other, error.to_string()),
    };
    io::Error::new(kind, format!("{}: writing {what}: {message}", path.display()))
}

/// What a write of the report can fail with.
enum Failure {
    Io(io::Error),
    Parquet(parquet::errors::ParquetError),
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

impl From<parquet::errors::ParquetError> for Failure {
    fn from(error: parquet::errors::ParquetError) -> Self {
        Self::Parquet(error)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, Int64Array};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn schema() -> arrow_schema::SchemaRef {
        Arc::new(Schema::new(vec![Field::new("run", DataType::Int64, false)]))
    }

    /// The same rows in each of the three tables.
    fn rows(ids: &[i64]) -> TableBatches {
        let batch = RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(ids.to_vec()))]).unwrap();
        [batch.clone(), batch.clone(), batch]
    }

    fn read(file: &Path) -> Vec<i64> {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(file).unwrap()).unwrap().build().unwrap();
        reader
            .flat_map(|batch| {
                let batch = batch.unwrap();
                let column = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap().clone();
                (0..column.len()).map(move |i| column.value(i)).collect::<Vec<_>>()
            })
            .collect()
    }

    fn open(out: &Path) -> ReportStream {
        ReportStream::open(out, [schema(), schema(), schema()], Duration::from_secs(3600)).unwrap()
    }

    #[test]
    fn a_checkpoint_writes_only_the_rows_finished_since_the_previous_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut report = open(&dir.path().join("out"));
        report.append(&rows(&[1])).unwrap();
        report.append(&rows(&[2])).unwrap();
        report.checkpoint().unwrap();
        let first = report.parts()[0].clone();
        let first_bytes: Vec<Vec<u8>> = TABLE_FILES.iter().map(|t| std::fs::read(first.join(t)).unwrap()).collect();

        report.append(&rows(&[3])).unwrap();
        report.checkpoint().unwrap();
        report.checkpoint().unwrap();
        let parts = report.parts();
        assert_eq!(parts.len(), 2, "an empty checkpoint writes no part");
        for (table, bytes) in TABLE_FILES.iter().zip(&first_bytes) {
            assert_eq!(read(&parts[0].join(table)), [1, 2]);
            assert_eq!(read(&parts[1].join(table)), [3], "the second part holds only the new run");
            assert_eq!(&std::fs::read(parts[0].join(table)).unwrap(), bytes, "the first part is not rewritten");
        }
    }

    #[test]
    fn publishing_compacts_the_parts_into_one_file_per_table_and_clears_them() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("runs.parquet"), b"the previous set").unwrap();
        let mut report = open(&out);
        report.append(&rows(&[1, 2])).unwrap();
        report.checkpoint().unwrap();
        report.append(&rows(&[3])).unwrap();
        let partial = report.partial.clone();
        report.publish().unwrap();
        for table in TABLE_FILES {
            assert_eq!(read(&out.join(table)), [1, 2, 3], "{table}");
        }
        assert!(!partial.exists(), "the parts are gone once published");
        let names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["out"], "nothing is left beside the report");
    }

    #[test]
    fn a_batch_that_never_checkpointed_publishes_its_open_part_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut report = open(&out);
        report.append(&rows(&[1, 2])).unwrap();
        report.append(&rows(&[3])).unwrap();
        assert!(report.parts().is_empty());
        report.publish().unwrap();
        for table in TABLE_FILES {
            assert_eq!(read(&out.join(table)), [1, 2, 3], "{table}");
        }
        let names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["out"], "nothing is left beside the report");
    }

    #[test]
    fn an_empty_batch_publishes_empty_tables() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        open(&out).publish().unwrap();
        for table in TABLE_FILES {
            assert_eq!(read(&out.join(table)), Vec::<i64>::new(), "{table}");
        }
    }

    #[test]
    fn an_unwritable_out_is_refused_when_the_report_opens() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        assert!(ReportStream::open(&file.join("out"), [schema(), schema(), schema()], Duration::ZERO).is_err());
    }
}
