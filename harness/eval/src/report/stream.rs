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

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::TABLE_FILES;
use super::publish::swap_in;
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
}

/// The part being written: its temporary folder and a writer per table.
struct OpenPart {
    folder: PathBuf,
    writers: Vec<ArrowWriter<File>>,
}

impl ReportStream {
    /// Makes sure `out` can be written (creating it), clears what an
    /// interrupted batch left in `OUT.partial/`, and starts a report whose
    /// tables have `schemas`; a checkpoint happens at most every `every`.
    pub fn open(out: &Path, schemas: [arrow_schema::SchemaRef; 3], every: Duration) -> io::Result<Self> {
        std::fs::create_dir_all(out)?;
        let out = out.canonicalize()?;
        let probe = out.join(format!(".reloop-probe-{}", std::process::id()));
        std::fs::write(&probe, b"reloop checks it can write here")?;
        std::fs::remove_file(&probe)?;
        let partial = sibling(&out, "partial")?;
        if partial.exists() {
            std::fs::remove_dir_all(&partial)?;
        }
        std::fs::create_dir(&partial)?;
        Ok(Self { out, partial, schemas, open: None, parts: 0, last_checkpoint: Instant::now(), every })
    }

    /// Appends one run's rows; makes a checkpoint when the last is old enough.
    pub fn append(&mut self, batches: &TableBatches) -> io::Result<()> {
        let part = match &mut self.open {
            Some(part) => part,
            None => self.open.insert(self.start_part()?),
        };
        for (writer, batch) in part.writers.iter_mut().zip(batches) {
            writer.write(batch).map_err(io::Error::other)?;
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
        for writer in part.writers {
            writer.into_inner().map_err(io::Error::other)?.sync_all()?;
        }
        self.parts += 1;
        std::fs::rename(&part.folder, self.part_folder(self.parts))?;
        Ok(())
    }

    /// The folders of the parts checkpointed so far, oldest first.
    pub fn parts(&self) -> Vec<PathBuf> {
        (1..=self.parts).map(|n| self.part_folder(n)).collect()
    }

    /// Checkpoints, compacts every part into one file per table and swaps
    /// the set in for `out`; `OUT.partial/` is removed.
    pub fn publish(mut self) -> io::Result<()> {
        self.checkpoint()?;
        let fresh = sibling(&self.out, "publishing")?;
        if fresh.exists() {
            std::fs::remove_dir_all(&fresh)?;
        }
        std::fs::create_dir(&fresh)?;
        for (table, schema) in TABLE_FILES.iter().zip(&self.schemas) {
            let parts: Vec<PathBuf> = self.parts().iter().map(|part| part.join(table)).collect();
            compact(&parts, schema, &fresh.join(table))?;
        }
        File::open(&fresh)?.sync_all()?;
        swap_in(&fresh, &self.out)?;
        std::fs::remove_dir_all(&self.partial)
    }

    fn start_part(&self) -> io::Result<OpenPart> {
        let folder = self.partial.join(format!(".part-{:05}.tmp", self.parts + 1));
        std::fs::create_dir(&folder)?;
        let writers = TABLE_FILES
            .iter()
            .zip(&self.schemas)
            .map(|(table, schema)| {
                let file = File::create(folder.join(table))?;
                ArrowWriter::try_new(file, schema.clone(), Some(writer_properties())).map_err(io::Error::other)
            })
            .collect::<io::Result<_>>()?;
        Ok(OpenPart { folder, writers })
    }

    fn part_folder(&self, n: u32) -> PathBuf {
        self.partial.join(format!("part-{n:05}"))
    }
}

/// `OUT.suffix` beside `out` (`out` is canonical, so it has a name).
fn sibling(out: &Path, suffix: &str) -> io::Result<PathBuf> {
    let name = out.file_name().ok_or_else(|| io::Error::other(format!("{} cannot hold reports", out.display())))?;
    Ok(out.with_file_name(format!("{}.{suffix}", name.to_string_lossy())))
}

/// Copies the rows of `parts`, in order, into one file at `target`, a row
/// group at a time.
fn compact(parts: &[PathBuf], schema: &arrow_schema::SchemaRef, target: &Path) -> io::Result<()> {
    let mut writer = ArrowWriter::try_new(File::create(target)?, schema.clone(), Some(writer_properties())).map_err(io::Error::other)?;
    for part in parts {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(part)?)?.build()?;
        for batch in reader {
            writer.write(&batch.map_err(io::Error::other)?).map_err(io::Error::other)?;
        }
    }
    writer.into_inner().map_err(io::Error::other)?.sync_all()
}
