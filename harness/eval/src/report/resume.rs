//! `--resume`: the runs of a batch that was cut short, read back from what
//! it wrote, so the next batch into the same `OUT` runs only the rest and
//! publishes one report as if nothing had stopped it.
//!
//! Where the last batch's rows are: a batch killed mid-way (SIGKILL, a
//! preempted node, a lost machine) leaves its checkpoints in
//! `OUT.partial/part-*`; one that ended (Ctrl-C included) published them as
//! `OUT`. So the parts are the last batch's when there are any, and `OUT`
//! is otherwise (it may hold an older batch's report when parts exist, which
//! is left alone). A resume that was itself killed while carrying the rows
//! over left them in `OUT.resuming`, which then comes first.
//!
//! A run that was cancelled did not finish: its rows are dropped and it runs
//! again.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::TABLE_FILES;
use crate::Outcome;

/// A run's identity in the report: scenario (with its `@wire`), variant
/// and trial, the columns every table carries.
pub type RunKey = (String, String, u64);

/// What a finished run's row says of its verdict, for the batch's exit code
/// and its verdicts over trials.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedRun {
    /// The scenario file, as the row names it.
    pub scenario_file: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Whether every expectation held.
    pub passed: bool,
}

/// The report sets the last batch left: each a folder holding the three tables.
pub(super) fn sources(out: &Path, partial: &Path, resuming: &Path) -> io::Result<Vec<PathBuf>> {
    for folder in [resuming, partial] {
        let parts = parts_in(folder)?;
        if !parts.is_empty() {
            return Ok(parts);
        }
    }
    Ok(if TABLE_FILES.iter().all(|table| out.join(table).is_file()) { vec![out.to_path_buf()] } else { Vec::new() })
}

/// The complete `part-*` folders in `folder` (written under a temporary
/// name and renamed whole, so a `part-*` name means all three tables),
/// oldest first; none when `folder` is absent.
fn parts_in(folder: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut parts = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.file_name().and_then(|name| name.to_str()).is_some_and(|name| name.starts_with("part-")) {
            parts.push(path);
        }
    }
    parts.sort();
    Ok(parts)
}

/// The runs in `sources` that finished, by key, and whether any did not
/// (whose rows [`copy_finished`] then leaves out). A source written with
/// other columns than `schema` (by another version of reloop) is refused.
pub(super) fn finished_runs(sources: &[PathBuf], schema: &arrow_schema::SchemaRef) -> io::Result<(BTreeMap<RunKey, FinishedRun>, bool)> {
    let mut finished = BTreeMap::new();
    let mut unfinished = false;
    for source in sources {
        for batch in read(&source.join(TABLE_FILES[0]), schema)? {
            let batch = batch?;
            let keys = Keys::of(&batch)?;
            let (files, outcomes) = (strings(&batch, "scenario_file")?, strings(&batch, "outcome")?);
            let passed = batch
                .column_by_name("passed")
                .and_then(|column| column.as_any().downcast_ref::<BooleanArray>())
                .ok_or_else(|| io::Error::other("runs.parquet has no boolean `passed` column"))?;
            for row in 0..batch.num_rows() {
                let outcome: Outcome = serde_json::from_value(outcomes.value(row).into())
                    .map_err(|_| io::Error::other(format!("runs.parquet: outcome `{}` is not one reloop writes", outcomes.value(row))))?;
                if outcome == Outcome::Cancelled {
                    unfinished = true;
                    continue;
                }
                let run = FinishedRun { scenario_file: files.value(row).to_owned(), outcome, passed: passed.value(row) };
                finished.insert(keys.at(row), run);
            }
        }
    }
    Ok((finished, unfinished))
}

/// Reads `table` of every source in turn and hands `write` its rows of the
/// `finished` runs (all of them when `filter` is off: every run finished).
pub(super) fn copy_finished(
    sources: &[PathBuf],
    table: &str,
    schema: &arrow_schema::SchemaRef,
    finished: Option<&BTreeMap<RunKey, FinishedRun>>,
    write: &mut dyn FnMut(&RecordBatch) -> io::Result<()>,
) -> io::Result<()> {
    for source in sources {
        for batch in read(&source.join(table), schema)? {
            let batch = batch?;
            let kept = match finished {
                None => batch,
                Some(finished) => {
                    let keys = Keys::of(&batch)?;
                    let keep: BooleanArray = (0..batch.num_rows()).map(|row| Some(finished.contains_key(&keys.at(row)))).collect();
                    arrow_select::filter::filter_record_batch(&batch, &keep).map_err(io::Error::other)?
                }
            };
            if kept.num_rows() > 0 {
                write(&kept)?;
            }
        }
    }
    Ok(())
}

/// The batches of the table at `path`, refused when its columns are not
/// `schema`'s.
fn read(path: &Path, schema: &arrow_schema::SchemaRef) -> io::Result<impl Iterator<Item = io::Result<RecordBatch>>> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?)
        .map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
    if builder.schema().fields() != schema.fields() {
        return Err(io::Error::other(format!(
            "{}: written with other columns (another version of reloop?); it cannot be resumed: remove it or give another --out",
            path.display()
        )));
    }
    let reader = builder.build().map_err(|e| io::Error::other(format!("{}: {e}", path.display())))?;
    Ok(reader.map(|batch| batch.map_err(io::Error::other)))
}

/// The key columns of one batch.
struct Keys<'a> {
    scenario: &'a StringArray,
    variant: &'a StringArray,
    trial: &'a Int64Array,
}

impl<'a> Keys<'a> {
    fn of(batch: &'a RecordBatch) -> io::Result<Self> {
        let trial = batch
            .column_by_name("trial")
            .and_then(|column| column.as_any().downcast_ref::<Int64Array>())
            .ok_or_else(|| io::Error::other("a report table has no integer `trial` column"))?;
        Ok(Self { scenario: strings(batch, "scenario")?, variant: strings(batch, "variant")?, trial })
    }

    fn at(&self, row: usize) -> RunKey {
        (self.scenario.value(row).to_owned(), self.variant.value(row).to_owned(), self.trial.value(row) as u64)
    }
}

fn strings<'a>(batch: &'a RecordBatch, name: &str) -> io::Result<&'a StringArray> {
    batch
        .column_by_name(name)
        .and_then(|column| column.as_any().downcast_ref::<StringArray>())
        .filter(|column| column.null_count() == 0)
        .ok_or_else(|| io::Error::other(format!("a report table has no `{name}` text column")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::report::ReportStream;

    /// Each table with the key columns; runs with what a verdict reads.
    fn schemas() -> [arrow_schema::SchemaRef; 3] {
        let key =
            || vec![Field::new("scenario", DataType::Utf8, false), Field::new("variant", DataType::Utf8, false), Field::new("trial", DataType::Int64, false)];
        let mut runs = key();
        runs.extend([
            Field::new("scenario_file", DataType::Utf8, false),
            Field::new("outcome", DataType::Utf8, false),
            Field::new("passed", DataType::Boolean, false),
        ]);
        let mut steps = key();
        steps.push(Field::new("step", DataType::Int64, false));
        [Arc::new(Schema::new(runs)), Arc::new(Schema::new(steps.clone())), Arc::new(Schema::new(steps))]
    }

    /// One run's rows: its runs row and `steps` rows in each other table.
    fn run(scenario: &str, outcome: &str, steps: i64) -> [RecordBatch; 3] {
        let [runs, steps_schema, events_schema] = schemas();
        let text = |value: &str, n: usize| Arc::new(StringArray::from(vec![value; n])) as Arc<dyn Array>;
        let n = steps as usize;
        let table = |schema: arrow_schema::SchemaRef| {
            RecordBatch::try_new(
                schema,
                vec![
                    text(scenario, n),
                    text("default", n),
                    Arc::new(Int64Array::from(vec![0; n])),
                    Arc::new(Int64Array::from((1..=steps).collect::<Vec<_>>())),
                ],
            )
            .unwrap()
        };
        let columns: Vec<Arc<dyn Array>> = vec![
            text(scenario, 1),
            text("default", 1),
            Arc::new(Int64Array::from(vec![0])),
            text(&format!("{scenario}.yaml"), 1),
            text(outcome, 1),
            Arc::new(BooleanArray::from(vec![outcome == "final_answer"])),
        ];
        [RecordBatch::try_new(runs, columns).unwrap(), table(steps_schema), table(events_schema)]
    }

    fn scenarios_in(table: &Path) -> Vec<String> {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(table).unwrap()).unwrap().build().unwrap();
        reader
            .flat_map(|batch| {
                let batch = batch.unwrap();
                let column = strings(&batch, "scenario").unwrap().clone();
                (0..column.len()).map(move |row| column.value(row).to_owned()).collect::<Vec<_>>()
            })
            .collect()
    }

    /// A batch killed after a checkpoint holding a finished run and a
    /// cancelled one: the resume keeps the finished run's rows only, and
    /// an older report in `OUT` is not taken for the killed batch's.
    #[test]
    fn the_killed_batchs_parts_are_resumed_without_its_cancelled_runs() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut older = ReportStream::open(&out, schemas(), Duration::MAX).unwrap();
        older.append(&run("yesterday", "final_answer", 1)).unwrap();
        older.publish().unwrap();
        let mut killed = ReportStream::open(&out, schemas(), Duration::MAX).unwrap();
        killed.append(&run("done", "final_answer", 3)).unwrap();
        killed.append(&run("stopped", "cancelled", 2)).unwrap();
        killed.checkpoint().unwrap();
        killed.append(&run("never-checkpointed", "final_answer", 1)).unwrap();
        drop(killed);

        let (mut resumed, finished) = ReportStream::resume(&out, schemas(), Duration::MAX).unwrap();
        let key = ("done".to_owned(), "default".to_owned(), 0);
        assert_eq!(finished.keys().collect::<Vec<_>>(), [&key]);
        assert_eq!(finished[&key], FinishedRun { scenario_file: "done.yaml".into(), outcome: Outcome::FinalAnswer, passed: true });
        resumed.append(&run("stopped", "final_answer", 2)).unwrap();
        resumed.publish().unwrap();
        assert_eq!(scenarios_in(&out.join("runs.parquet")), ["done", "stopped"]);
        assert_eq!(scenarios_in(&out.join("steps.parquet")), ["done", "done", "done", "stopped", "stopped"]);
    }

    /// A batch that ended (Ctrl-C publishes what finished) is resumed from `OUT`.
    #[test]
    fn a_published_report_is_resumed_when_no_parts_are_left() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut ended = ReportStream::open(&out, schemas(), Duration::MAX).unwrap();
        ended.append(&run("a", "final_answer", 2)).unwrap();
        ended.append(&run("b", "fail", 1)).unwrap();
        ended.publish().unwrap();
        let (resumed, finished) = ReportStream::resume(&out, schemas(), Duration::MAX).unwrap();
        assert_eq!(finished.len(), 2);
        assert!(!finished[&("b".to_owned(), "default".to_owned(), 0)].passed);
        resumed.publish().unwrap();
        assert_eq!(scenarios_in(&out.join("events.parquet")), ["a", "a", "b"]);
    }

    #[test]
    fn a_report_of_other_columns_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut ended = ReportStream::open(&out, schemas(), Duration::MAX).unwrap();
        ended.append(&run("a", "final_answer", 1)).unwrap();
        ended.publish().unwrap();
        let mut other = schemas();
        other[0] = Arc::new(Schema::new(vec![Field::new("scenario", DataType::Utf8, false)]));
        let error = ReportStream::resume(&out, other, Duration::MAX).err().expect("refused");
        assert!(error.to_string().contains("runs.parquet: written with other columns"), "{error}");
    }
}
